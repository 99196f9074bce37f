/* The record and frame grammar of executor/PROTOCOL.md: one lexer for
 * "key:value" records, the typed result-record parser and formatter, and an
 * incremental frame decoder. Pure and bounded; shared by the host and
 * gavel-init. */
#include "executor/sandbox/record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- records ------------------------------------------------------------ */

static int is_key_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

int exec_record_next(const char *buf, size_t len, size_t *pos,
		     struct exec_record_field *field, struct gv_err *err)
{
	size_t p = *pos;
	if (p >= len)
		return 0;
	const char *line = buf + p;
	size_t rest = len - p;
	const char *nl = memchr(line, '\n', rest);
	if (!nl)
		return gv_err_set(err, GV_EPROTO, "record: line at offset %zu has no final newline", p);
	size_t line_len = (size_t)(nl - line);
	if (memchr(line, '\0', line_len))
		return gv_err_set(err, GV_EPROTO, "record: NUL byte in line at offset %zu", p);
	const char *colon = memchr(line, ':', line_len);
	if (!colon)
		return gv_err_set(err, GV_EPROTO, "record: line at offset %zu has no ':'", p);
	size_t key_len = (size_t)(colon - line);
	if (key_len == 0 || key_len > EXEC_RECORD_KEY_MAX)
		return gv_err_set(err, GV_EPROTO, "record: bad key length %zu at offset %zu", key_len, p);
	for (size_t i = 0; i < key_len; i++)
		if (!is_key_char((unsigned char)line[i]))
			return gv_err_set(err, GV_EPROTO, "record: bad character in key at offset %zu", p + i);
	field->key = line;
	field->key_len = key_len;
	field->value = colon + 1;
	field->value_len = line_len - key_len - 1;
	*pos = p + line_len + 1;
	return 1;
}

int exec_record_key_is(const struct exec_record_field *field, const char *name)
{
	size_t n = strlen(name);
	return field->key_len == n && memcmp(field->key, name, n) == 0;
}

int exec_record_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out,
			  struct gv_err *err)
{
	if (len == 0)
		return gv_err_set(err, GV_EPROTO, "empty number");
	if (len > 1 && s[0] == '0')
		return gv_err_set(err, GV_EPROTO, "number with a leading zero");
	if (len > 20)
		return gv_err_set(err, GV_EPROTO, "number too long");
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < '0' || c > '9')
			return gv_err_set(err, GV_EPROTO, "not a decimal number");
		uint64_t d = (uint64_t)(c - '0');
		if (v > (UINT64_MAX - d) / 10)
			return gv_err_set(err, GV_EPROTO, "number overflows");
		v = v * 10 + d;
	}
	if (v > max)
		return gv_err_set(err, GV_EPROTO, "number %llu above its maximum %llu",
				  (unsigned long long)v, (unsigned long long)max);
	*out = v;
	return 0;
}

static const char *const status_names[] = {
	[EXEC_STATUS_OK] = "OK",   [EXEC_STATUS_RE] = "RE",   [EXEC_STATUS_SG] = "SG",
	[EXEC_STATUS_TLE] = "TLE", [EXEC_STATUS_WLE] = "WLE", [EXEC_STATUS_MLE] = "MLE",
	[EXEC_STATUS_OLE] = "OLE", [EXEC_STATUS_IE] = "IE",
};
static const char *const limit_names[] = {
	[EXEC_LIMIT_NONE] = "none",     [EXEC_LIMIT_CPU] = "cpu",
	[EXEC_LIMIT_WALL] = "wall",     [EXEC_LIMIT_MEMORY] = "memory",
	[EXEC_LIMIT_OUTPUT] = "output",
};
static const char *const phase_names[] = {
	[EXEC_PHASE_COMPILE] = "compile", [EXEC_PHASE_TEST] = "test",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const *names, size_t n, unsigned v)
{
	return v < n && names[v] ? names[v] : "?";
}

const char *exec_status_name(enum exec_status s) { return name_of(status_names, NELEM(status_names), s); }
const char *exec_limit_name(enum exec_limit l) { return name_of(limit_names, NELEM(limit_names), l); }
const char *exec_phase_name(enum exec_phase p) { return name_of(phase_names, NELEM(phase_names), p); }

/* Index of value in names[1..n), or -1. */
static int word_index(const char *const *names, size_t n, const char *v, size_t vlen)
{
	for (size_t i = 1; i < n; i++)
		if (names[i] && strlen(names[i]) == vlen && memcmp(names[i], v, vlen) == 0)
			return (int)i;
	return -1;
}

struct num_key {
	const char *key;
	unsigned bit;
	uint64_t max;
	size_t offset; /* of a uint64_t in struct exec_record, or SIZE_MAX for ints */
};

#define U64_FIELD(name) offsetof(struct exec_record, name)
static const struct num_key num_keys[] = {
	{ "time_ms", EXEC_REC_TIME_MS, EXEC_RECORD_MS_MAX, U64_FIELD(time_ms) },
	{ "wall_ms", EXEC_REC_WALL_MS, EXEC_RECORD_MS_MAX, U64_FIELD(wall_ms) },
	{ "wall_us", EXEC_REC_WALL_US, EXEC_RECORD_MS_MAX * 1000, U64_FIELD(wall_us) },
	{ "memory_kb", EXEC_REC_MEMORY_KB, EXEC_RECORD_KB_MAX, U64_FIELD(memory_kb) },
	{ "stdout_bytes", EXEC_REC_STDOUT_BYTES, EXEC_RECORD_BYTES_MAX, U64_FIELD(stdout_bytes) },
	{ "stderr_bytes", EXEC_REC_STDERR_BYTES, EXEC_RECORD_BYTES_MAX, U64_FIELD(stderr_bytes) },
};

static int parse_field(const struct exec_record_field *f, struct exec_record *out,
		       struct gv_err *err)
{
	uint64_t v;
	int w;
	if (exec_record_key_is(f, "phase")) {
		if ((w = word_index(phase_names, NELEM(phase_names), f->value, f->value_len)) < 0)
			return gv_err_set(err, GV_EPROTO, "unknown phase");
		out->phase = (enum exec_phase)w;
		out->present |= EXEC_REC_PHASE;
	} else if (exec_record_key_is(f, "status")) {
		if ((w = word_index(status_names, NELEM(status_names), f->value, f->value_len)) < 0)
			return gv_err_set(err, GV_EPROTO, "unknown status");
		out->status = (enum exec_status)w;
		out->present |= EXEC_REC_STATUS;
	} else if (exec_record_key_is(f, "limit")) {
		if ((w = word_index(limit_names, NELEM(limit_names), f->value, f->value_len)) < 0)
			return gv_err_set(err, GV_EPROTO, "unknown limit");
		out->limit = (enum exec_limit)w;
		out->present |= EXEC_REC_LIMIT;
	} else if (exec_record_key_is(f, "index")) {
		if (exec_record_parse_u64(f->value, f->value_len, EXEC_RECORD_INDEX_MAX, &v, err) < 0)
			return -1;
		if (v == 0)
			return gv_err_set(err, GV_EPROTO, "index 0 (indices are 1-based)");
		out->index = (uint32_t)v;
		out->present |= EXEC_REC_INDEX;
	} else if (exec_record_key_is(f, "exit_code")) {
		if (exec_record_parse_u64(f->value, f->value_len, 255, &v, err) < 0)
			return -1;
		out->exit_code = (int)v;
		out->present |= EXEC_REC_EXIT_CODE;
	} else if (exec_record_key_is(f, "signal")) {
		if (exec_record_parse_u64(f->value, f->value_len, 64, &v, err) < 0)
			return -1;
		if (v == 0)
			return gv_err_set(err, GV_EPROTO, "signal 0");
		out->signal = (int)v;
		out->present |= EXEC_REC_SIGNAL;
	} else if (exec_record_key_is(f, "order")) {
		if (!exec_record_order_ok(f->value, f->value_len) || f->value_len >= sizeof(out->order))
			return gv_err_set(err, GV_EPROTO, "bad order");
		memcpy(out->order, f->value, f->value_len);
		out->order[f->value_len] = '\0';
		out->present |= EXEC_REC_ORDER;
	} else if (exec_record_key_is(f, "message")) {
		size_t n = f->value_len < sizeof(out->message) - 1 ? f->value_len : sizeof(out->message) - 1;
		memcpy(out->message, f->value, n);
		out->message[n] = '\0';
		out->present |= EXEC_REC_MESSAGE;
	} else {
		for (size_t i = 0; i < NELEM(num_keys); i++) {
			if (!exec_record_key_is(f, num_keys[i].key))
				continue;
			if (exec_record_parse_u64(f->value, f->value_len, num_keys[i].max, &v, err) < 0)
				return -1;
			memcpy((char *)out + num_keys[i].offset, &v, sizeof(v));
			out->present |= num_keys[i].bit;
			return 0;
		}
		/* unknown key: ignored (forward compatible) */
	}
	return 0;
}

bool exec_record_order_ok(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		if ((s[i] != 'o' && s[i] != 'e') || i + 1 >= len || s[i + 1] < '1' || s[i + 1] > '9')
			return false;
		size_t digits = 0;
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
		if (digits > 10 || (i < len && (s[i] != ',' || i + 1 == len)))
			return false;
		if (i < len)
			i++;
	}
	return len > 0;
}

int exec_record_parse(const char *buf, size_t len, struct exec_record *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (len > EXEC_RECORD_MAX_BYTES)
		return gv_err_set(err, GV_ELIMIT, "result record of %zu bytes (max %d)", len,
				  EXEC_RECORD_MAX_BYTES);
	size_t pos = 0;
	struct exec_record_field f;
	int r;
	while ((r = exec_record_next(buf, len, &pos, &f, err)) > 0) {
		if (parse_field(&f, out, err) < 0) {
			char key[EXEC_RECORD_KEY_MAX + 1];
			memcpy(key, f.key, f.key_len);
			key[f.key_len] = '\0';
			gv_err_prefix(err, "result record: key %s", key);
			return -1;
		}
	}
	if (r < 0)
		return -1;
	if (!(out->present & EXEC_REC_PHASE))
		return gv_err_set(err, GV_EPROTO, "result record: no phase");
	if (!(out->present & EXEC_REC_STATUS))
		return gv_err_set(err, GV_EPROTO, "result record: no status");
	if (out->phase == EXEC_PHASE_TEST && !(out->present & EXEC_REC_INDEX))
		return gv_err_set(err, GV_EPROTO, "result record: test without index");
	if (out->status == EXEC_STATUS_RE && !(out->present & EXEC_REC_EXIT_CODE))
		return gv_err_set(err, GV_EPROTO, "result record: RE without exit_code");
	if (out->status == EXEC_STATUS_SG && !(out->present & EXEC_REC_SIGNAL))
		return gv_err_set(err, GV_EPROTO, "result record: SG without signal");
	return 0;
}

struct out_buf {
	char *p;
	size_t cap;
	size_t used;
	int overflow;
};

static void put_mem(struct out_buf *o, const char *s, size_t n)
{
	if (o->overflow || n > o->cap - o->used) {
		o->overflow = 1;
		return;
	}
	memcpy(o->p + o->used, s, n);
	o->used += n;
}

static void put_kv(struct out_buf *o, const char *key, const char *value)
{
	put_mem(o, key, strlen(key));
	put_mem(o, ":", 1);
	put_mem(o, value, strlen(value));
	put_mem(o, "\n", 1);
}

static void put_num(struct out_buf *o, const char *key, unsigned long long v)
{
	char num[24];
	snprintf(num, sizeof(num), "%llu", v);
	put_kv(o, key, num);
}

int exec_record_format(const struct exec_record *r, char *buf, size_t bufsz, struct gv_err *err)
{
	struct out_buf o = { .p = buf, .cap = bufsz, .used = 0, .overflow = 0 };
	if (r->phase != EXEC_PHASE_UNSET)
		put_kv(&o, "phase", exec_phase_name(r->phase));
	if (r->phase == EXEC_PHASE_TEST || (r->present & EXEC_REC_INDEX))
		put_num(&o, "index", r->index);
	if (r->status != EXEC_STATUS_UNSET)
		put_kv(&o, "status", exec_status_name(r->status));
	if (r->status == EXEC_STATUS_RE || (r->present & EXEC_REC_EXIT_CODE))
		put_num(&o, "exit_code", (unsigned)r->exit_code);
	if (r->status == EXEC_STATUS_SG || (r->present & EXEC_REC_SIGNAL))
		put_num(&o, "signal", (unsigned)r->signal);
	put_num(&o, "time_ms", r->time_ms);
	put_num(&o, "wall_ms", r->wall_ms);
	if (r->present & EXEC_REC_WALL_US)
		put_num(&o, "wall_us", r->wall_us);
	put_num(&o, "memory_kb", r->memory_kb);
	put_num(&o, "stdout_bytes", r->stdout_bytes);
	put_num(&o, "stderr_bytes", r->stderr_bytes);
	if (r->limit != EXEC_LIMIT_UNSET)
		put_kv(&o, "limit", exec_limit_name(r->limit));
	if (r->message[0]) {
		char msg[EXEC_RECORD_MESSAGE_MAX];
		size_t n = strnlen(r->message, sizeof(msg) - 1);
		for (size_t i = 0; i < n; i++)
			msg[i] = r->message[i] == '\n' ? ' ' : r->message[i];
		msg[n] = '\0';
		put_kv(&o, "message", msg);
	}
	if (r->order[0] && exec_record_order_ok(r->order, strlen(r->order)))
		put_kv(&o, "order", r->order);
	if (o.overflow)
		return gv_err_set(err, GV_ELIMIT, "result record does not fit in %zu bytes", bufsz);
	return (int)o.used;
}

/* ---- frames ------------------------------------------------------------- */

enum { DEC_HEADER = 0, DEC_PAYLOAD, DEC_END };

void exec_frame_decoder_init(struct exec_frame_decoder *d, const struct exec_frame_cap *caps,
			     size_t ncaps)
{
	memset(d, 0, sizeof(*d));
	d->caps = caps;
	d->ncaps = ncaps;
	d->state = DEC_HEADER;
}

void exec_frame_decoder_free(struct exec_frame_decoder *d)
{
	if (!d)
		return;
	free(d->buf);
	d->buf = NULL;
}

int exec_frame_decoder_idle(const struct exec_frame_decoder *d)
{
	return !d->failed && d->state == DEC_HEADER && d->header_len == 0;
}

static int fail(struct exec_frame_decoder *d)
{
	d->failed = 1;
	return -1;
}

/* Parses d->header (complete, ending in '\n') into kind and len. */
static int parse_header(struct exec_frame_decoder *d, struct gv_err *err)
{
	const char *h = d->header;
	size_t n = d->header_len - 1; /* without '\n' */
	const char *sp = memchr(h, ' ', n);
	if (!sp)
		return gv_err_set(err, GV_EPROTO, "frame header without a space");
	size_t klen = (size_t)(sp - h);
	if (klen == 0 || klen > EXEC_FRAME_KIND_MAX)
		return gv_err_set(err, GV_EPROTO, "frame kind of bad length %zu", klen);
	for (size_t i = 0; i < klen; i++)
		if (!((h[i] >= 'a' && h[i] <= 'z') || h[i] == '_'))
			return gv_err_set(err, GV_EPROTO, "bad character in frame kind");
	uint64_t len;
	if (exec_record_parse_u64(sp + 1, n - klen - 1, EXEC_FRAME_LEN_MAX, &len, err) < 0) {
		gv_err_prefix(err, "frame length");
		return -1;
	}
	memcpy(d->kind, h, klen);
	d->kind[klen] = '\0';
	for (size_t i = 0; i < d->ncaps; i++) {
		if (strcmp(d->caps[i].kind, d->kind) != 0)
			continue;
		if (len > d->caps[i].max_len)
			return gv_err_set(err, GV_EPROTO, "frame %s of %llu bytes over its cap %zu",
					  d->kind, (unsigned long long)len, d->caps[i].max_len);
		d->len = (size_t)len;
		d->got = 0;
		return 0;
	}
	return gv_err_set(err, GV_EPROTO, "unexpected frame kind %s", d->kind);
}

int exec_frame_decoder_step(struct exec_frame_decoder *d, const char *in, size_t in_len,
			    size_t *used, struct exec_frame_event *ev, struct gv_err *err)
{
	memset(ev, 0, sizeof(*ev));
	if (d->failed)
		return gv_err_set(err, GV_EPROTO, "frame decoder already failed");
	ev->kind = d->kind;
	ev->len = d->len;
	switch (d->state) {
	case DEC_HEADER: {
		size_t i = 0;
		while (i < in_len) {
			char c = in[i++];
			if (d->header_len == sizeof(d->header)) {
				*used += i;
				gv_err_set(err, GV_EPROTO, "frame header longer than %zu bytes",
					   sizeof(d->header));
				return fail(d);
			}
			d->header[d->header_len++] = c;
			if (c == '\n')
				break;
		}
		*used += i;
		if (d->header_len == 0 || d->header[d->header_len - 1] != '\n')
			return 0; /* need more */
		if (parse_header(d, err) < 0)
			return fail(d);
		d->header_len = 0;
		d->state = d->len ? DEC_PAYLOAD : DEC_END;
		ev->type = EXEC_FRAME_EV_BEGIN;
		ev->len = d->len;
		return 0;
	}
	case DEC_PAYLOAD: {
		size_t want = d->len - d->got;
		size_t n = in_len < want ? in_len : want;
		if (n == 0)
			return 0;
		*used += n;
		d->got += n;
		if (d->got == d->len)
			d->state = DEC_END;
		ev->type = EXEC_FRAME_EV_DATA;
		ev->data = in;
		ev->data_len = n;
		return 0;
	}
	case DEC_END:
	default:
		d->state = DEC_HEADER;
		ev->type = EXEC_FRAME_EV_END;
		return 0;
	}
}

int exec_frame_decoder_feed(struct exec_frame_decoder *d, const char *in, size_t in_len,
			    size_t *used, struct exec_frame *out, struct gv_err *err)
{
	*used = 0;
	for (;;) {
		struct exec_frame_event ev;
		if (exec_frame_decoder_step(d, in + *used, in_len - *used, used, &ev, err) < 0)
			return -1;
		switch (ev.type) {
		case EXEC_FRAME_EV_NONE:
			return 0;
		case EXEC_FRAME_EV_BEGIN:
			free(d->buf);
			/* len was checked against the kind's cap in the header */
			d->buf = malloc(ev.len + 1);
			if (!d->buf) {
				gv_err_set(err, ENOMEM, "frame %s: cannot allocate %zu bytes", ev.kind, ev.len);
				return fail(d);
			}
			break;
		case EXEC_FRAME_EV_DATA:
			memcpy(d->buf + (d->got - ev.data_len), ev.data, ev.data_len);
			break;
		case EXEC_FRAME_EV_END:
			d->buf[d->len] = '\0';
			out->kind = d->kind;
			out->payload = d->buf;
			out->len = d->len;
			return 1;
		}
	}
}

int exec_frame_header(char *out, size_t outsz, const char *kind, size_t len, struct gv_err *err)
{
	size_t klen = strlen(kind);
	if (klen == 0 || klen > EXEC_FRAME_KIND_MAX || strspn(kind, "abcdefghijklmnopqrstuvwxyz_") != klen)
		return gv_err_set(err, GV_EINVAL, "bad frame kind");
	if (len > EXEC_FRAME_LEN_MAX)
		return gv_err_set(err, GV_EINVAL, "frame of %zu bytes over %u", len, EXEC_FRAME_LEN_MAX);
	int n = snprintf(out, outsz, "%s %zu\n", kind, len);
	if (n < 0 || (size_t)n >= outsz)
		return gv_err_set(err, GV_EINVAL, "frame header buffer too small");
	return n;
}

/* ---- named payloads ------------------------------------------------------ */

int exec_file_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > EXEC_FILE_NAME_MAX)
		return 0;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

int exec_named_payload_split(const char *payload, size_t len, const char **name, size_t *name_len,
			     const char **data, size_t *data_len, struct gv_err *err)
{
	size_t scan = len < EXEC_FILE_NAME_MAX + 1 ? len : EXEC_FILE_NAME_MAX + 1;
	const char *nl = memchr(payload, '\n', scan);
	if (!nl)
		return gv_err_set(err, GV_EPROTO, "named payload: no name line");
	size_t nlen = (size_t)(nl - payload);
	if (!exec_file_name_ok(payload, nlen))
		return gv_err_set(err, GV_EPROTO, "named payload: name not allowed");
	*name = payload;
	*name_len = nlen;
	*data = nl + 1;
	*data_len = len - nlen - 1;
	return 0;
}
