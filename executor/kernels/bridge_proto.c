/* The kernel frame grammars (executor/kernels/bridge_proto.h). */
#include "executor/kernels/bridge_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/kernel_wire.h"
#include "common/utf8.h"

#define WORDS_MAX 7

/* Splits a header line (without its \n) at single spaces into at most
 * max words; false on an empty word, a byte outside printable ASCII or
 * too many words. */
static bool split_words(char *line, char **w, size_t max, size_t *nw)
{
	size_t n = 0;
	char *p = line;
	for (;;) {
		if (n == max || !*p || *p == ' ')
			return false;
		w[n++] = p;
		while (*p && *p != ' ') {
			if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
				return false;
			p++;
		}
		if (!*p)
			break;
		*p++ = '\0';
	}
	*nw = n;
	return true;
}

/* Decimal without sign or leading zero ("0" itself when zero_ok), at most
 * digits digits, value <= max. */
static bool parse_dec(const char *s, size_t digits, bool zero_ok, uint64_t max, uint64_t *out)
{
	size_t n = strlen(s);
	if (n == 0 || n > digits || (s[0] == '0' && (n > 1 || !zero_ok)))
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_conn(const char *s, bool zero_ok, uint64_t *out)
{
	return parse_dec(s, KERNEL_CONN_DIGITS, zero_ok, UINT64_MAX, out);
}

static bool parse_framing(const char *s, enum kernel_framing *f)
{
	if (!strcmp(s, "v1"))
		*f = KERNEL_FRAMING_V1;
	else if (!strcmp(s, "json"))
		*f = KERNEL_FRAMING_JSON;
	else
		return false;
	return true;
}

bool kernel_channel_ok(const char *ch, bool inbound)
{
	return !strcmp(ch, "shell") || !strcmp(ch, "control") || !strcmp(ch, "stdin") ||
	       (!inbound && !strcmp(ch, "iopub"));
}

void kernel_out_decoder_init(struct kernel_out_decoder *d)
{
	memset(d, 0, sizeof(*d));
}

void kernel_out_decoder_free(struct kernel_out_decoder *d)
{
	free(d->buf);
	memset(d, 0, sizeof(*d));
}

static int out_fail(struct kernel_out_decoder *d, struct gv_err *err, const char *why)
{
	d->failed = true;
	return gv_err_set(err, GV_EPROTO, "kernel bridge: %s", why);
}

/* Parses the complete header line in d->buf (header_len bytes with its
 * \n) into f; sets d->want. */
static int out_header(struct kernel_out_decoder *d, struct kernel_out_frame *f, struct gv_err *err)
{
	char line[KERNEL_HEADER_MAX];
	memcpy(line, d->buf, d->header_len - 1);
	line[d->header_len - 1] = '\0';
	char *w[WORDS_MAX];
	size_t nw = 0;
	memset(f, 0, sizeof(*f));
	if (!split_words(line, w, WORDS_MAX, &nw))
		return out_fail(d, err, "bad header line");
	if (nw == 1 && !strcmp(w[0], "ready")) {
		f->kind = KERNEL_OUT_READY;
		d->want = d->header_len;
		return 0;
	}
	if (nw == 2 && !strcmp(w[0], "state")) {
		if (strcmp(w[1], "starting") && strcmp(w[1], "idle") && strcmp(w[1], "busy"))
			return out_fail(d, err, "unknown state");
		f->kind = KERNEL_OUT_STATE;
		strcpy(f->state, w[1]);
		d->want = d->header_len;
		return 0;
	}
	uint64_t len = 0;
	if (nw != 6 || strcmp(w[0], "msg"))
		return out_fail(d, err, "unknown frame");
	if (!parse_conn(w[1], true, &f->conn) || !parse_framing(w[2], &f->framing) ||
	    (strcmp(w[3], "text") && strcmp(w[3], "binary")) || strlen(w[4]) >= sizeof(f->channel) ||
	    !kernel_channel_ok(w[4], false) || !parse_dec(w[5], 9, true, KERNEL_OUT_PAYLOAD_MAX, &len))
		return out_fail(d, err, "bad msg header");
	f->kind = KERNEL_OUT_MSG;
	f->binary = w[3][0] == 'b';
	strcpy(f->channel, w[4]);
	f->len = (size_t)len;
	d->want = d->header_len + f->len;
	return 0;
}

/* The payload of a complete msg frame, checked as its framing says. */
static int out_payload(struct kernel_out_decoder *d, struct kernel_out_frame *f, struct gv_err *err)
{
	f->payload = d->buf + d->header_len;
	if (!f->binary)
		return gv_utf8_valid((const uint8_t *)f->payload, f->len) ? 0 : out_fail(d, err, "text message not UTF-8");
	size_t off, len;
	if (f->framing == KERNEL_FRAMING_V1 &&
	    (!gv_kernel_v1_channel((const uint8_t *)f->payload, f->len, &off, &len) || len != strlen(f->channel) ||
	     memcmp(f->payload + off, f->channel, len)))
		return out_fail(d, err, "v1 message malformed or on another channel");
	if (f->len == 0)
		return out_fail(d, err, "empty binary message");
	return 0;
}

static int out_grow(struct kernel_out_decoder *d, size_t need, struct gv_err *err)
{
	if (need <= d->cap)
		return 0;
	size_t cap = d->cap ? d->cap : 4096;
	while (cap < need)
		cap *= 2;
	char *b = realloc(d->buf, cap);
	if (!b) {
		d->failed = true;
		return gv_err_set(err, ENOMEM, "kernel bridge: out of memory");
	}
	d->buf = b;
	d->cap = cap;
	return 0;
}

int kernel_out_feed(struct kernel_out_decoder *d, const char *in, size_t n, size_t *used,
		    struct kernel_out_frame *f, struct gv_err *err)
{
	*used = 0;
	if (d->failed)
		return gv_err_set(err, GV_EPROTO, "kernel bridge: stream already broken");
	if (d->want && d->len == d->want)
		d->len = d->header_len = d->want = 0; /* the previous frame was handed out */
	while (*used < n) {
		if (!d->header_len) {
			const char *nl = memchr(in + *used, '\n', n - *used);
			size_t take = nl ? (size_t)(nl - (in + *used)) + 1 : n - *used;
			if (d->len + take > KERNEL_HEADER_MAX)
				return out_fail(d, err, "header line too long");
			if (out_grow(d, d->len + take, err) != 0)
				return -1;
			memcpy(d->buf + d->len, in + *used, take);
			d->len += take;
			*used += take;
			if (!nl)
				return 0;
			d->header_len = d->len;
			if (out_header(d, &d->cur, err) != 0)
				return -1;
			if (out_grow(d, d->want, err) != 0)
				return -1;
		} else {
			size_t take = d->want - d->len < n - *used ? d->want - d->len : n - *used;
			memcpy(d->buf + d->len, in + *used, take);
			d->len += take;
			*used += take;
		}
		if (d->len == d->want) {
			if (d->cur.kind == KERNEL_OUT_MSG && out_payload(d, &d->cur, err) != 0)
				return -1;
			d->cur.raw = d->buf;
			d->cur.raw_len = d->len;
			*f = d->cur;
			return 1;
		}
	}
	return 0;
}

int kernel_cmd_parse(const char *el, size_t n, struct kernel_cmd *c, struct gv_err *err)
{
	memset(c, 0, sizeof(*c));
	const char *nl = memchr(el, '\n', n < KERNEL_HEADER_MAX ? n : KERNEL_HEADER_MAX);
	if (!nl)
		return gv_err_set(err, GV_EPROTO, "kernel command: no header line");
	char line[KERNEL_HEADER_MAX];
	size_t hl = (size_t)(nl - el);
	memcpy(line, el, hl);
	line[hl] = '\0';
	size_t rest = n - hl - 1;
	char *w[WORDS_MAX];
	size_t nw = 0;
	if (!split_words(line, w, WORDS_MAX, &nw))
		return gv_err_set(err, GV_EPROTO, "kernel command: bad header line");
	uint64_t len = 0;
	bool ok = false;
	if (!strcmp(w[0], "open") && nw == 3) {
		c->kind = KERNEL_CMD_OPEN;
		ok = parse_conn(w[1], false, &c->conn) && parse_framing(w[2], &c->framing) && rest == 0;
	} else if ((!strcmp(w[0], "close") || !strcmp(w[0], "ping")) && nw == 2) {
		c->kind = w[0][0] == 'c' ? KERNEL_CMD_CLOSE : KERNEL_CMD_PING;
		ok = parse_conn(w[1], false, &c->conn) && rest == 0;
	} else if (!strcmp(w[0], "msg") && nw == 3) {
		c->kind = KERNEL_CMD_MSG;
		ok = parse_conn(w[1], false, &c->conn) && parse_dec(w[2], 9, true, KERNEL_IN_PAYLOAD_MAX, &len) &&
		     len == rest && len > 0;
		c->payload = nl + 1;
		c->len = rest;
	} else if ((!strcmp(w[0], "interrupt") || !strcmp(w[0], "restart")) && nw == 1) {
		c->kind = w[0][0] == 'i' ? KERNEL_CMD_INTERRUPT : KERNEL_CMD_RESTART;
		ok = rest == 0;
	} else if (!strcmp(w[0], "stop") && nw == 2) {
		c->kind = KERNEL_CMD_STOP;
		size_t rl = strlen(w[1]);
		ok = rest == 0 && rl < sizeof(c->reason) && strspn(w[1], "abcdefghijklmnopqrstuvwxyz_") == rl;
		if (ok)
			memcpy(c->reason, w[1], rl + 1);
	}
	if (!ok)
		return gv_err_set(err, GV_EPROTO, "kernel command: bad %s", w[0]);
	return 0;
}
