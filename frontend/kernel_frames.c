/* Kernel frames (see kernel_frames.h). Every length read from a message is
 * checked against what is left before it is used, with the arithmetic done
 * so that it cannot overflow (64-bit offsets are compared, never added). */
#include "frontend/kernel_frames.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/kernel_wire.h"
#include "common/utf8.h"

#define KCONN_MAX 999999999999999999ull /* [1-9][0-9]{0,17} */

const char *fe_kframing_name(enum fe_kframing f)
{
	return f == FE_KFRAMING_V1 ? "v1" : "json";
}

static const char *const channel_names[] = { "shell", "control", "stdin", "iopub" };

const char *fe_kchannel_name(enum fe_kchannel c)
{
	return (unsigned)c < 4 ? channel_names[c] : "?";
}

/* The channel named by p[0..n); all: iopub too. */
static int channel_of(const char *p, size_t n, bool all, enum fe_kchannel *ch)
{
	for (unsigned i = 0; i < (all ? 4u : 3u); i++) {
		if (strlen(channel_names[i]) == n && !memcmp(channel_names[i], p, n)) {
			*ch = (enum fe_kchannel)i;
			return 0;
		}
	}
	return -1;
}

/* ----------------------------------------------------------- ids */


void fe_kernel_id_format(const uint8_t b[16], char out[FE_KERNEL_ID_BUF])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t u[16];
	memcpy(u, b, 16);
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* variant RFC 4122 */
	size_t o = 0;
	for (size_t i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 15];
	}
	out[o] = '\0';
}

uint64_t fe_kconn_from_random(uint64_t r)
{
	return r % KCONN_MAX + 1;
}

/* Decimal s[0..n) without a leading zero (but "0" itself), at most
 * max_digits digits. */
static bool parse_dec(const char *s, size_t n, size_t max_digits, uint64_t *out)
{
	if (n == 0 || n > max_digits || (s[0] == '0' && n > 1))
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0'); /* <= 18 digits: no overflow */
	}
	*out = v;
	return true;
}

bool fe_kconn_parse(const char *s, size_t n, bool zero_ok, uint64_t *out)
{
	uint64_t v;
	if (!parse_dec(s, n, 18, &v) || (v == 0 && !zero_ok))
		return false;
	*out = v;
	return true;
}

/* ------------------------------------------- client -> kernel checks */

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int fe_kmsg_v1_check(const uint8_t *p, size_t n, enum fe_kchannel *ch)
{
	size_t off, len;
	if (!gv_kernel_v1_channel(p, n, &off, &len))
		return -1;
	return channel_of((const char *)p + off, len, false, ch);
}

/* The "channel" of a legacy message's JSON text. */
static int json_channel(const uint8_t *p, size_t n, enum fe_kchannel *ch)
{
	if (n == 0 || !gv_utf8_valid(p, n) || gv_json_depth((const char *)p, n, FE_KMSG_JSON_DEPTH) > FE_KMSG_JSON_DEPTH)
		return -1;
	json_error_t jerr;
	json_t *j = json_loadb((const char *)p, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!j)
		return -1;
	json_t *c = json_object_get(j, "channel");
	int rc = -1;
	/* No channel: shell, as Jupyter's own server relays it (nbclient's
	 * messages through a jupyter_server pointed here carry none). */
	if (json_is_object(j) && !c) {
		*ch = FE_KCH_SHELL;
		rc = 0;
	} else if (json_is_object(j) && json_is_string(c)) {
		rc = channel_of(json_string_value(c), json_string_length(c), false, ch);
	}
	json_decref(j);
	return rc;
}

int fe_kmsg_json_check(const uint8_t *p, size_t n, bool binary, enum fe_kchannel *ch)
{
	if (!binary)
		return json_channel(p, n, ch);
	if (n < 4)
		return -1;
	uint32_t k = be32(p);
	if (k < 1 || k > FE_KMSG_PARTS_MAX)
		return -1;
	uint64_t table = 4 * ((uint64_t)k + 1);
	if (table > n)
		return -1;
	uint64_t prev = 0, json_end = n;
	for (uint32_t i = 0; i < k; i++) {
		uint64_t off = be32(p + 4 * ((size_t)i + 1));
		if (i == 0 ? off != table : off < prev)
			return -1;
		if (off > n)
			return -1;
		if (i == 1)
			json_end = off;
		prev = off;
	}
	return json_channel(p + table, (size_t)(json_end - table), ch);
}

/* --------------------------------------------------- kin elements */

static size_t fmt_len(int r, size_t size)
{
	return r < 0 || (size_t)r >= size ? 0 : (size_t)r;
}

size_t fe_kin_open(char *buf, size_t size, uint64_t conn, enum fe_kframing f)
{
	return fmt_len(snprintf(buf, size, "open %llu %s\n", (unsigned long long)conn, fe_kframing_name(f)), size);
}

size_t fe_kin_close(char *buf, size_t size, uint64_t conn)
{
	return fmt_len(snprintf(buf, size, "close %llu\n", (unsigned long long)conn), size);
}

size_t fe_kin_ping(char *buf, size_t size, uint64_t conn)
{
	return fmt_len(snprintf(buf, size, "ping %llu\n", (unsigned long long)conn), size);
}

size_t fe_kin_msg(char *buf, size_t size, uint64_t conn, size_t len)
{
	return fmt_len(snprintf(buf, size, "msg %llu %zu\n", (unsigned long long)conn, len), size);
}

/* ------------------------------------------------- kout messages */

/* The next space-separated word of the header h[*pos..end): its start and
 * length; the separator must be one space, the last word ends at end. */
static bool word(const char *h, size_t end, size_t *pos, const char **w, size_t *wn)
{
	size_t s = *pos, e = s;
	while (e < end && h[e] != ' ')
		e++;
	if (e == s)
		return false;
	*w = h + s;
	*wn = e - s;
	*pos = e < end ? e + 1 : e;
	/* "a " at the very end: an empty last word. */
	return !(e < end && e + 1 == end);
}

static bool is(const char *w, size_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(w, lit, n);
}

int fe_kout_parse(const uint8_t *buf, size_t n, struct fe_kout *out)
{
	memset(out, 0, sizeof(*out));
	const uint8_t *nl = memchr(buf, '\n', n < FE_KOUT_HEADER_MAX ? n : FE_KOUT_HEADER_MAX);
	if (!nl)
		return -1;
	const char *h = (const char *)buf;
	size_t end = (size_t)(nl - buf), pos = 0, wn;
	const char *w;
	for (size_t i = 0; i < end; i++)
		if (h[i] < 0x20 || h[i] > 0x7e)
			return -1;
	if (!word(h, end, &pos, &w, &wn))
		return -1;
	if (is(w, wn, "msg")) {
		const char *c, *f, *o, *ch, *l;
		size_t cn, fn, on, chn, ln;
		uint64_t len;
		if (!word(h, end, &pos, &c, &cn) || !word(h, end, &pos, &f, &fn) || !word(h, end, &pos, &o, &on) ||
		    !word(h, end, &pos, &ch, &chn) || !word(h, end, &pos, &l, &ln) || pos != end)
			return -1;
		if (!fe_kconn_parse(c, cn, true, &out->conn))
			return -1;
		if (is(f, fn, "v1"))
			out->framing = FE_KFRAMING_V1;
		else if (is(f, fn, "json"))
			out->framing = FE_KFRAMING_JSON;
		else
			return -1;
		if (is(o, on, "binary"))
			out->binary = true;
		else if (!is(o, on, "text"))
			return -1;
		if (channel_of(ch, chn, true, &out->channel) < 0)
			return -1;
		if (!parse_dec(l, ln, 8, &len) || len > FE_KOUT_PAYLOAD_MAX || len != n - end - 1)
			return -1;
		out->kind = FE_KOUT_MSG;
		out->off = end + 1;
		out->len = (size_t)len;
		if (!out->binary && !gv_utf8_valid(buf + out->off, out->len))
			return -1;
		return 0;
	}
	if (end + 1 != n)
		return -1; /* only a msg has a payload */
	if (is(w, wn, "restarted")) {
		out->kind = FE_KOUT_RESTARTED;
		return pos == end ? 0 : -1;
	}
	bool state = is(w, wn, "state");
	if (!state && !is(w, wn, "gone"))
		return -1;
	if (!word(h, end, &pos, &w, &wn) || pos != end || wn >= sizeof(out->word))
		return -1;
	if (state) {
		if (!is(w, wn, "starting") && !is(w, wn, "idle") && !is(w, wn, "busy") && !is(w, wn, "restarting"))
			return -1;
		out->kind = FE_KOUT_STATE;
	} else {
		for (size_t i = 0; i < wn; i++)
			if (!((w[i] >= 'a' && w[i] <= 'z') || w[i] == '_'))
				return -1;
		out->kind = FE_KOUT_GONE;
	}
	memcpy(out->word, w, wn);
	out->word[wn] = '\0';
	return 0;
}
