/* libFuzzer target for the frontend's kernel frames
 * (frontend/kernel_frames.h): the first byte picks the parser, the rest is
 * the message. A gavel:kout message is the executor's (trusted grammar,
 * still checked), a client's message is anyone's. Beyond "does not crash":
 * an accepted kout message's payload lies exactly at the end of the input
 * behind a header of at most FE_KOUT_HEADER_MAX bytes and re-serializes to
 * the same header; a text payload is UTF-8; an accepted v1 message's
 * channel part is one of the client's channels; an accepted legacy text
 * message is UTF-8; UTF-8 validity agrees with a second, naive decoder. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/kernel_frames.h"
#include "common/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Code points by the rules of RFC 3629 section 3, decoded one by one. */
static bool naive_utf8(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint32_t cp;
		size_t len;
		if (p[i] < 0x80) {
			i++;
			continue;
		} else if ((p[i] & 0xe0) == 0xc0) {
			cp = p[i] & 0x1f, len = 2;
		} else if ((p[i] & 0xf0) == 0xe0) {
			cp = p[i] & 0x0f, len = 3;
		} else if ((p[i] & 0xf8) == 0xf0) {
			cp = p[i] & 0x07, len = 4;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
		if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static void check_kout(const uint8_t *p, size_t n)
{
	struct fe_kout m;
	if (fe_kout_parse(p, n, &m) < 0)
		return;
	const uint8_t *nl = memchr(p, '\n', n);
	if (!nl || (size_t)(nl - p) + 1 > FE_KOUT_HEADER_MAX)
		abort();
	size_t hlen = (size_t)(nl - p) + 1;
	char h[FE_KOUT_HEADER_MAX + 64];
	int k;
	switch (m.kind) {
	case FE_KOUT_MSG:
		if (m.off != hlen || m.off + m.len != n || m.len > FE_KOUT_PAYLOAD_MAX)
			abort();
		if (!m.binary && !gv_utf8_valid(p + m.off, m.len))
			abort();
		k = snprintf(h, sizeof(h), "msg %llu %s %s %s %zu\n", (unsigned long long)m.conn,
			     fe_kframing_name(m.framing), m.binary ? "binary" : "text", fe_kchannel_name(m.channel), m.len);
		break;
	case FE_KOUT_STATE: k = snprintf(h, sizeof(h), "state %s\n", m.word); break;
	case FE_KOUT_RESTARTED: k = snprintf(h, sizeof(h), "restarted\n"); break;
	case FE_KOUT_GONE: k = snprintf(h, sizeof(h), "gone %s\n", m.word); break;
	default: abort();
	}
	if (k < 0 || (size_t)k != hlen || memcmp(h, p, hlen))
		abort(); /* what was accepted is exactly the grammar's form */
	if (m.kind != FE_KOUT_MSG && hlen != n)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 20))
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	enum fe_kchannel ch;
	switch (data[0] % 5) {
	case 0: check_kout(p, n); break;
	case 1:
		if (fe_kmsg_v1_check(p, n, &ch) == 0 && ch != FE_KCH_SHELL && ch != FE_KCH_CONTROL && ch != FE_KCH_STDIN)
			abort();
		break;
	case 2:
		if (fe_kmsg_json_check(p, n, false, &ch) == 0 && (ch == FE_KCH_IOPUB || !gv_utf8_valid(p, n)))
			abort();
		break;
	case 3:
		if (fe_kmsg_json_check(p, n, true, &ch) == 0 && ch == FE_KCH_IOPUB)
			abort();
		break;
	case 4:
		if (gv_utf8_valid(p, n) != naive_utf8(p, n))
			abort();
		break;
	}
	return 0;
}
