/* Unit tests of the frontend's kernel frames (frontend/kernel_frames.c),
 * UTF-8 check (frontend/utf8.c), SHA-1 (frontend/sha1.c) and the pure
 * parts of the WebSocket handshake (frontend/ws.c): tables of messages as
 * Jupyter's clients and the executor write them, and the malformed ones
 * around each rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kernel_wire.h"
#include "common/utf8.h"
#include "frontend/kernel_frames.h"
#include "frontend/sha1.h"
#include "frontend/ws.h"

#define B(s) (const uint8_t *)(s), sizeof(s) - 1

/* ---------------------------------------------------- SHA-1, handshake */

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void sha1__fips_vectors__match(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		const char *want;
	} cases[] = {
		{ "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
		{ "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
		/* 64 bytes: the padding takes a second block */
		{ "0123456789012345678901234567890123456789012345678901234567890123",
		  "cf0800f7644ace3cb4c3fa33388d3ba0ea3c8b6e" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t d[FE_SHA1_LEN];
		char h[41];
		fe_sha1(cases[i].in, strlen(cases[i].in), d);
		hex(d, sizeof(d), h);
		assert_string_equal(h, cases[i].want);
	}
	/* A million 'a' (FIPS 180 appendix A.3). */
	char *m = malloc(1000000);
	assert_non_null(m);
	memset(m, 'a', 1000000);
	uint8_t d[FE_SHA1_LEN];
	char h[41];
	fe_sha1(m, 1000000, d);
	hex(d, sizeof(d), h);
	assert_string_equal(h, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	free(m);
}

static void ws_accept__rfc6455_example__matches(void **state)
{
	(void)state;
	char out[FE_WS_ACCEPT_BUF];
	const char *key = "dGhlIHNhbXBsZSBub25jZQ==";
	fe_ws_accept_value(key, strlen(key), out);
	assert_string_equal(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

static void ws_key__only_16_bytes_of_base64(void **state)
{
	(void)state;
	assert_true(fe_ws_key_valid("dGhlIHNhbXBsZSBub25jZQ=="));
	assert_false(fe_ws_key_valid(NULL));
	assert_false(fe_ws_key_valid(""));
	assert_false(fe_ws_key_valid("dGhlIHNhbXBsZSBub25jZQ="));     /* 23 */
	assert_false(fe_ws_key_valid("dGhlIHNhbXBsZSBub25jZQ=!"));    /* not base64 */
	assert_false(fe_ws_key_valid("dGhlIHNhbXBsZSBub25jZXg="));    /* 17 bytes */
}

static void ws_token__comma_lists_any_case(void **state)
{
	(void)state;
	assert_true(fe_ws_token_in("Upgrade", "upgrade"));
	assert_true(fe_ws_token_in("keep-alive, Upgrade", "upgrade"));
	assert_true(fe_ws_token_in("v1.kernel.websocket.jupyter.org,other", "v1.kernel.websocket.jupyter.org"));
	assert_false(fe_ws_token_in("upgraded", "upgrade"));
	assert_false(fe_ws_token_in("", "upgrade"));
	assert_false(fe_ws_token_in("keep-alive", "upgrade"));
}

/* ---------------------------------------------------------------- UTF-8 */

static void utf8__rfc3629_table(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t n;
		bool ok;
	} cases[] = {
		{ "", 0, true },
		{ "plain", 5, true },
		{ "a\0b", 3, true },                 /* NUL is a character */
		{ "\xc3\xa9", 2, true },             /* é */
		{ "\xe2\x82\xac", 3, true },         /* € */
		{ "\xf0\x9f\x98\x80", 4, true },     /* U+1F600 */
		{ "\xf4\x8f\xbf\xbf", 4, true },     /* U+10FFFF */
		{ "\xc3", 1, false },                /* cut */
		{ "\xe2\x82", 2, false },
		{ "\xc0\xaf", 2, false },            /* overlong */
		{ "\xe0\x80\xaf", 3, false },
		{ "\xf0\x80\x80\xaf", 4, false },
		{ "\xed\xa0\x80", 3, false },        /* surrogate */
		{ "\xf4\x90\x80\x80", 4, false },    /* above U+10FFFF */
		{ "\xff", 1, false },
		{ "\x80", 1, false },                /* lone continuation */
		{ "\xe2\x28\xa1", 3, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(gv_utf8_valid((const uint8_t *)cases[i].s, cases[i].n), cases[i].ok);
}

/* ------------------------------------------------------------------ ids */

static void kernel_id__uuid_v4_lower_case(void **state)
{
	(void)state;
	uint8_t b[16];
	char id[FE_KERNEL_ID_BUF];
	memset(b, 0xff, sizeof(b));
	fe_kernel_id_format(b, id);
	assert_string_equal(id, "ffffffff-ffff-4fff-bfff-ffffffffffff");
	assert_true(gv_kernel_id_valid(id));
	memset(b, 0, sizeof(b));
	fe_kernel_id_format(b, id);
	assert_string_equal(id, "00000000-0000-4000-8000-000000000000");
	assert_false(gv_kernel_id_valid("FFFFFFFF-ffff-4fff-bfff-ffffffffffff"));
	assert_false(gv_kernel_id_valid("ffffffff-ffff-4fff-bfff-fffffffffff"));
	assert_false(gv_kernel_id_valid("ffffffff-ffff-4fff-bfff-ffffffffffff0"));
	assert_false(gv_kernel_id_valid("ffffffffffff-4fff-bfff-ffffffffffff-"));
	assert_false(gv_kernel_id_valid(NULL));
}

static void kconn__grammar(void **state)
{
	(void)state;
	uint64_t v;
	assert_true(fe_kconn_parse("1", 1, false, &v) && v == 1);
	assert_true(fe_kconn_parse("999999999999999999", 18, false, &v) && v == 999999999999999999ull);
	assert_false(fe_kconn_parse("1000000000000000000", 19, false, &v));
	assert_false(fe_kconn_parse("0", 1, false, &v));
	assert_true(fe_kconn_parse("0", 1, true, &v) && v == 0);
	assert_false(fe_kconn_parse("01", 2, true, &v));
	assert_false(fe_kconn_parse("", 0, true, &v));
	assert_false(fe_kconn_parse("1a", 2, true, &v));
	assert_int_equal(fe_kconn_from_random(0), 1);
	assert_int_equal(fe_kconn_from_random(UINT64_MAX) >= 1, 1);
	assert_true(fe_kconn_from_random(UINT64_MAX) <= 999999999999999999ull);
	assert_true(fe_kconn_from_random(999999999999999998ull) == 999999999999999999ull);
}

/* --------------------------------------------------- client messages */

/* A v1 message as @jupyterlab/services writes it: the channel, then the
 * parts; into buf, returns its length. */
static size_t v1_msg(uint8_t *buf, const char *channel, const char *const *parts, size_t nparts)
{
	uint64_t k = nparts + 2, off = 8 * (k + 1);
	size_t o = 8 * (size_t)(k + 1);
	uint64_t offs[16];
	offs[0] = off;
	memcpy(buf + o, channel, strlen(channel));
	o += strlen(channel);
	offs[1] = o;
	for (size_t i = 0; i < nparts; i++) {
		memcpy(buf + o, parts[i], strlen(parts[i]));
		o += strlen(parts[i]);
		offs[i + 2] = o;
	}
	for (int b = 0; b < 8; b++)
		buf[b] = (uint8_t)(k >> (8 * b));
	for (uint64_t i = 0; i < k; i++)
		for (int b = 0; b < 8; b++)
			buf[8 * (i + 1) + (uint64_t)b] = (uint8_t)(offs[i] >> (8 * b));
	return o;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int b = 0; b < 8; b++)
		p[b] = (uint8_t)(v >> (8 * b));
}

static void kmsg_v1__offsets_and_channel(void **state)
{
	(void)state;
	static const char *const parts[] = { "{\"msg_id\":\"a\"}", "{}", "{}", "{\"code\":\"1\"}" };
	uint8_t buf[512];
	enum fe_kchannel ch;
	size_t n = v1_msg(buf, "shell", parts, 4);
	assert_int_equal(fe_kmsg_v1_check(buf, n, &ch), 0);
	assert_int_equal(ch, FE_KCH_SHELL);
	n = v1_msg(buf, "control", parts, 4);
	assert_int_equal(fe_kmsg_v1_check(buf, n, &ch), 0);
	assert_int_equal(ch, FE_KCH_CONTROL);
	n = v1_msg(buf, "stdin", parts, 0);
	assert_int_equal(fe_kmsg_v1_check(buf, n, &ch), 0);
	assert_int_equal(ch, FE_KCH_STDIN);
	/* iopub is the kernel's, never the client's */
	n = v1_msg(buf, "iopub", parts, 4);
	assert_int_equal(fe_kmsg_v1_check(buf, n, &ch), -1);
	n = v1_msg(buf, "shellx", parts, 4);
	assert_int_equal(fe_kmsg_v1_check(buf, n, &ch), -1);
	/* trailing bytes: the last offset is not the end */
	n = v1_msg(buf, "shell", parts, 4);
	assert_int_equal(fe_kmsg_v1_check(buf, n + 1, &ch), -1);
	assert_int_equal(fe_kmsg_v1_check(buf, n - 1, &ch), -1);
	/* a decreasing offset */
	uint8_t bad[512];
	memcpy(bad, buf, n);
	put_le64(bad + 8 * 3, 60);
	assert_int_equal(fe_kmsg_v1_check(bad, n, &ch), -1);
	/* the first offset not right after the table */
	memcpy(bad, buf, n);
	put_le64(bad + 8, 8 * 7 + 1);
	assert_int_equal(fe_kmsg_v1_check(bad, n, &ch), -1);
	/* a huge count, an offset past the end, too short */
	memcpy(bad, buf, n);
	put_le64(bad, UINT64_MAX);
	assert_int_equal(fe_kmsg_v1_check(bad, n, &ch), -1);
	memcpy(bad, buf, n);
	put_le64(bad, 1);
	assert_int_equal(fe_kmsg_v1_check(bad, n, &ch), -1);
	memcpy(bad, buf, n);
	put_le64(bad + 16, UINT64_MAX);
	assert_int_equal(fe_kmsg_v1_check(bad, n, &ch), -1);
	assert_int_equal(fe_kmsg_v1_check(buf, 7, &ch), -1);
	assert_int_equal(fe_kmsg_v1_check(buf, 0, &ch), -1);
}

static void kmsg_json__text_and_legacy_binary(void **state)
{
	(void)state;
	enum fe_kchannel ch;
	assert_int_equal(fe_kmsg_json_check(B("{\"channel\":\"shell\",\"header\":{}}"), false, &ch), 0);
	assert_int_equal(ch, FE_KCH_SHELL);
	assert_int_equal(fe_kmsg_json_check(B("{\"channel\":\"stdin\",\"content\":{\"value\":\"a\\u0000b\"}}"), false,
					    &ch),
			 0);
	assert_int_equal(ch, FE_KCH_STDIN);
	assert_int_equal(fe_kmsg_json_check(B("{\"channel\":\"iopub\"}"), false, &ch), -1);
	/* No channel at all is shell (nbclient through jupyter_server). */
	ch = FE_KCH_STDIN;
	assert_int_equal(fe_kmsg_json_check(B("{\"header\":{}}"), false, &ch), 0);
	assert_int_equal(ch, FE_KCH_SHELL);
	assert_int_equal(fe_kmsg_json_check(B("{\"channel\":null}"), false, &ch), -1);
	assert_int_equal(fe_kmsg_json_check(B("{\"channel\":1}"), false, &ch), -1);
	assert_int_equal(fe_kmsg_json_check(B("[\"shell\"]"), false, &ch), -1);
	assert_int_equal(fe_kmsg_json_check(B("{\"channel\":\"shell\",\"channel\":\"iopub\"}"), false, &ch), -1);
	assert_int_equal(fe_kmsg_json_check(B("{\"channel\":\"shell\""), false, &ch), -1);
	assert_int_equal(fe_kmsg_json_check(B(""), false, &ch), -1);
	/* too deep */
	char deep[2 * FE_KMSG_JSON_DEPTH + 64];
	size_t o = (size_t)sprintf(deep, "{\"channel\":\"shell\",\"x\":");
	for (int i = 0; i < FE_KMSG_JSON_DEPTH; i++)
		deep[o++] = '[';
	for (int i = 0; i < FE_KMSG_JSON_DEPTH; i++)
		deep[o++] = ']';
	deep[o++] = '}';
	assert_int_equal(fe_kmsg_json_check((const uint8_t *)deep, o, false, &ch), -1);

	/* serialize_binary_message: nbufs, offsets (big-endian u32), JSON,
	 * buffers. */
	static const char json[] = "{\"channel\":\"control\"}";
	uint8_t bin[128];
	size_t jl = sizeof(json) - 1;
	uint32_t offs[2] = { 12, (uint32_t)(12 + jl) };
	bin[0] = 0, bin[1] = 0, bin[2] = 0, bin[3] = 2;
	for (int i = 0; i < 2; i++) {
		bin[4 + 4 * i] = (uint8_t)(offs[i] >> 24);
		bin[5 + 4 * i] = (uint8_t)(offs[i] >> 16);
		bin[6 + 4 * i] = (uint8_t)(offs[i] >> 8);
		bin[7 + 4 * i] = (uint8_t)offs[i];
	}
	memcpy(bin + 12, json, jl);
	memcpy(bin + 12 + jl, "\x01\x02\x03", 3);
	assert_int_equal(fe_kmsg_json_check(bin, 12 + jl + 3, true, &ch), 0);
	assert_int_equal(ch, FE_KCH_CONTROL);
	/* one part: the JSON runs to the end */
	uint8_t one[64];
	one[0] = 0, one[1] = 0, one[2] = 0, one[3] = 1;
	one[4] = 0, one[5] = 0, one[6] = 0, one[7] = 8;
	memcpy(one + 8, json, jl);
	assert_int_equal(fe_kmsg_json_check(one, 8 + jl, true, &ch), 0);
	/* bad counts and offsets */
	uint8_t bad[128];
	memcpy(bad, bin, sizeof(bin));
	bad[3] = 0;
	assert_int_equal(fe_kmsg_json_check(bad, 12 + jl + 3, true, &ch), -1);
	memcpy(bad, bin, sizeof(bin));
	bad[0] = 0x80;
	assert_int_equal(fe_kmsg_json_check(bad, 12 + jl + 3, true, &ch), -1);
	memcpy(bad, bin, sizeof(bin));
	bad[7] = 13;
	assert_int_equal(fe_kmsg_json_check(bad, 12 + jl + 3, true, &ch), -1);
	memcpy(bad, bin, sizeof(bin));
	bad[11] = 0xff;
	assert_int_equal(fe_kmsg_json_check(bad, 12 + jl + 3, true, &ch), -1);
	assert_int_equal(fe_kmsg_json_check(bin, 3, true, &ch), -1);
}

/* -------------------------------------------------------- kin, kout */

static void kin__headers(void **state)
{
	(void)state;
	char b[FE_KIN_HEADER_MAX];
	assert_int_equal(fe_kin_open(b, sizeof(b), 42, FE_KFRAMING_V1), 11);
	assert_string_equal(b, "open 42 v1\n");
	fe_kin_open(b, sizeof(b), 7, FE_KFRAMING_JSON);
	assert_string_equal(b, "open 7 json\n");
	fe_kin_close(b, sizeof(b), 999999999999999999ull);
	assert_string_equal(b, "close 999999999999999999\n");
	fe_kin_ping(b, sizeof(b), 3);
	assert_string_equal(b, "ping 3\n");
	assert_int_equal(fe_kin_msg(b, sizeof(b), 5, 10485760), strlen("msg 5 10485760\n"));
	assert_string_equal(b, "msg 5 10485760\n");
	assert_int_equal(fe_kin_msg(b, 4, 5, 1), 0); /* does not fit */
}

struct kout_case {
	const char *buf;
	size_t n;
	int rc;
	enum fe_kout_kind kind;
	uint64_t conn;
	enum fe_kframing framing;
	bool binary;
	enum fe_kchannel channel;
	size_t off, len;
	const char *word;
};

#define K(s) s, sizeof(s) - 1

static const struct kout_case kout_cases[] = {
	{ K("msg 0 v1 binary iopub 3\nabc"), 0, FE_KOUT_MSG, 0, FE_KFRAMING_V1, true, FE_KCH_IOPUB, 24, 3, "" },
	{ K("msg 12 json text shell 2\n{}"), 0, FE_KOUT_MSG, 12, FE_KFRAMING_JSON, false, FE_KCH_SHELL, 25, 2, "" },
	{ K("msg 1 json binary stdin 0\n"), 0, FE_KOUT_MSG, 1, FE_KFRAMING_JSON, true, FE_KCH_STDIN, 26, 0, "" },
	{ K("msg 0 v1 binary control 1\n\xff"), 0, FE_KOUT_MSG, 0, FE_KFRAMING_V1, true, FE_KCH_CONTROL, 26, 1, "" },
	{ K("state idle\n"), 0, FE_KOUT_STATE, 0, 0, false, 0, 0, 0, "idle" },
	{ K("state restarting\n"), 0, FE_KOUT_STATE, 0, 0, false, 0, 0, 0, "restarting" },
	{ K("restarted\n"), 0, FE_KOUT_RESTARTED, 0, 0, false, 0, 0, 0, "" },
	{ K("gone client\n"), 0, FE_KOUT_GONE, 0, 0, false, 0, 0, 0, "client" },
	{ K("gone node_lost\n"), 0, FE_KOUT_GONE, 0, 0, false, 0, 0, 0, "node_lost" },
	/* malformed */
	{ K("msg 0 v1 binary iopub 3\nab"), -1, 0, 0, 0, false, 0, 0, 0, NULL },       /* short */
	{ K("msg 0 v1 binary iopub 3\nabcd"), -1, 0, 0, 0, false, 0, 0, 0, NULL },     /* long */
	{ K("msg 0 v1 text iopub 1\n\xff"), -1, 0, 0, 0, false, 0, 0, 0, NULL },       /* text not UTF-8 */
	{ K("msg 00 v1 binary iopub 0\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("msg 0 v1 binary iopub 03\nabc"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("msg 0 v2 binary iopub 0\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("msg 0 v1 blob iopub 0\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("msg 0 v1 binary hb 0\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("msg 0  v1 binary iopub 0\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },       /* two spaces */
	{ K("msg 0 v1 binary iopub 0 \n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },       /* trailing space */
	{ K("msg 0 v1 binary iopub 0 x\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("msg 0 v1 binary iopub\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("msg 1000000000000000000 v1 binary iopub 0\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("msg 0 v1 binary iopub 16777217\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("msg 0 v1 binary iopub 3"), -1, 0, 0, 0, false, 0, 0, 0, NULL },           /* no newline */
	{ K("state idle"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("state idle\nx"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("state sleepy\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("state\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("restarted now\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("gone Client\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("gone\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("gone a b\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("gone aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL }, /* 33 */
	{ K("bye\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K(""), -1, 0, 0, 0, false, 0, 0, 0, NULL },
	{ K("gone cli\x01nt\n"), -1, 0, 0, 0, false, 0, 0, 0, NULL },
};

static void kout__grammar_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(kout_cases) / sizeof(kout_cases[0]); i++) {
		const struct kout_case *c = &kout_cases[i];
		struct fe_kout m;
		int rc = fe_kout_parse((const uint8_t *)c->buf, c->n, &m);
		if (rc != c->rc)
			fail_msg("case %zu (%.40s): rc %d, want %d", i, c->buf, rc, c->rc);
		if (rc < 0)
			continue;
		assert_int_equal(m.kind, c->kind);
		if (m.kind == FE_KOUT_MSG) {
			assert_int_equal(m.conn, c->conn);
			assert_int_equal(m.framing, c->framing);
			assert_int_equal(m.binary, c->binary);
			assert_int_equal(m.channel, c->channel);
			assert_int_equal(m.off, c->off);
			assert_int_equal(m.len, c->len);
		} else {
			assert_string_equal(m.word, c->word);
		}
	}
	/* A header longer than the cap. */
	char big[256];
	memset(big, 'x', sizeof(big));
	memcpy(big, "gone ", 5);
	big[200] = '\n';
	struct fe_kout m;
	assert_int_equal(fe_kout_parse((const uint8_t *)big, 201, &m), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sha1__fips_vectors__match),
		cmocka_unit_test(ws_accept__rfc6455_example__matches),
		cmocka_unit_test(ws_key__only_16_bytes_of_base64),
		cmocka_unit_test(ws_token__comma_lists_any_case),
		cmocka_unit_test(utf8__rfc3629_table),
		cmocka_unit_test(kernel_id__uuid_v4_lower_case),
		cmocka_unit_test(kconn__grammar),
		cmocka_unit_test(kmsg_v1__offsets_and_channel),
		cmocka_unit_test(kmsg_json__text_and_legacy_binary),
		cmocka_unit_test(kin__headers),
		cmocka_unit_test(kout__grammar_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
