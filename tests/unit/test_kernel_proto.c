/* Unit tests of executor/kernels/bridge_proto.c: the bridge's output
 * decoder fed whole and byte by byte, hostile headers and payloads, the
 * frontend's commands, UTF-8 and v1 message checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kernel_wire.h"
#include "executor/kernels/bridge_proto.h"

/* A v1 message: channel, then four JSON parts. */
static size_t v1_message(char *out, const char *channel)
{
	const char *parts[] = {channel, "{}", "{}", "{}", "{\"a\":1}"};
	size_t count = 6, off = 8 + 8 * count, n = 0;
	uint64_t v = count;
	memcpy(out, &v, 8);
	for (size_t i = 0; i < count; i++) {
		v = off;
		memcpy(out + 8 + 8 * i, &v, 8);
		if (i < 5)
			off += strlen(parts[i]);
	}
	n = 8 + 8 * count;
	for (size_t i = 0; i < 5; i++) {
		memcpy(out + n, parts[i], strlen(parts[i]));
		n += strlen(parts[i]);
	}
	return n;
}

/* Feeds all of in (in pieces of step bytes); the frames' kinds go to kinds. */
static int feed_all(const char *in, size_t n, size_t step, char *kinds, size_t kcap)
{
	struct kernel_out_decoder d;
	kernel_out_decoder_init(&d);
	size_t nk = 0, off = 0;
	int rc = 0;
	while (off < n && rc == 0) {
		size_t piece = n - off < step ? n - off : step, pos = 0;
		while (pos < piece) {
			struct kernel_out_frame f;
			struct gv_err err;
			size_t used = 0;
			int r = kernel_out_feed(&d, in + off + pos, piece - pos, &used, &f, &err);
			if (r < 0) {
				rc = -1;
				break;
			}
			pos += used;
			if (r == 1 && nk + 1 < kcap)
				kinds[nk++] = f.kind == KERNEL_OUT_MSG ? (f.binary ? 'b' : 't') : f.kind == KERNEL_OUT_STATE ? 's' : 'r';
		}
		off += piece;
	}
	kinds[nk] = '\0';
	kernel_out_decoder_free(&d);
	return rc;
}

static void test_out_stream_any_split(void **state)
{
	(void)state;
	char v1[256];
	size_t vl = v1_message(v1, "iopub");
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "state starting\nready\nmsg 0 json text iopub 7\n{\"x\":1}msg 42 v1 binary iopub %zu\n",
			 vl);
	memcpy(buf + n, v1, vl);
	n += (int)vl;
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "state idle\n");
	for (size_t step = 1; step <= (size_t)n; step++) {
		char kinds[16];
		assert_int_equal(feed_all(buf, (size_t)n, step, kinds, sizeof(kinds)), 0);
		assert_string_equal(kinds, "srtbs");
	}
}

static void test_out_refuses(void **state)
{
	(void)state;
	char v1[256];
	size_t vl = v1_message(v1, "shell");
	char big[300];
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	const struct {
		const char *what;
		const char *text;
		size_t len;
	} bad[] = {
		{"unknown frame", "hello\n", 6},
		{"unknown state", "state sleeping\n", 15},
		{"channel outside the allowlist", "msg 0 json text hb 2\n{}", 23},
		{"unknown framing", "msg 0 xml text iopub 2\n{}", 25},
		{"unknown opcode", "msg 0 json ping iopub 2\n{}", 26},
		{"leading zero", "msg 01 json text iopub 2\n{}", 27},
		{"too long", "msg 0 json text iopub 99999999\n", 31},
		{"two spaces", "msg  0 json text iopub 2\n{}", 27},
		{"control byte", "state\tidle\n", 11},
		{"text not UTF-8", "msg 0 json text iopub 2\n\xc3\x28", 26},
		{"overlong UTF-8", "msg 0 json text iopub 2\n\xc0\xaf", 26},
		{"surrogate", "msg 0 json text iopub 3\n\xed\xa0\x80", 27},
		{"header line too long", big, sizeof(big)},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char kinds[4];
		if (feed_all(bad[i].text, bad[i].len, bad[i].len, kinds, sizeof(kinds)) != -1)
			fail_msg("accepted: %s", bad[i].what);
	}
	/* A v1 message whose channel is not the header's. */
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "msg 0 v1 binary iopub %zu\n", vl);
	memcpy(buf + n, v1, vl);
	char kinds[4];
	assert_int_equal(feed_all(buf, (size_t)n + vl, 4096, kinds, sizeof(kinds)), -1);
}

static void test_v1_channel(void **state)
{
	(void)state;
	char m[256];
	size_t n = v1_message(m, "control"), off = 0, len = 0;
	const uint8_t *u = (const uint8_t *)m;
	assert_true(gv_kernel_v1_channel(u, n, &off, &len));
	assert_true(len == 7 && !memcmp(m + off, "control", 7));
	/* Offsets out of order, past the end, a huge count, truncation, the
	 * last offset short of the end. */
	char bad[256];
	memcpy(bad, m, n);
	uint64_t v = 1000;
	memcpy(bad + 16, &v, 8);
	assert_false(gv_kernel_v1_channel((const uint8_t *)bad, n, &off, &len));
	memcpy(bad, m, n);
	v = UINT64_MAX / 4;
	memcpy(bad, &v, 8);
	assert_false(gv_kernel_v1_channel((const uint8_t *)bad, n, &off, &len));
	assert_false(gv_kernel_v1_channel(u, 7, &off, &len));
	memcpy(bad, m, n);
	v = 3;
	memcpy(bad + 8, &v, 8); /* the first offset must be the end of the table */
	assert_false(gv_kernel_v1_channel((const uint8_t *)bad, n, &off, &len));
	assert_false(gv_kernel_v1_channel(u, n + 1, &off, &len));
}

static void test_kernel_ids(void **state)
{
	(void)state;
	assert_true(gv_kernel_id_valid("0f8fad5b-d9cb-469f-a165-70867728950e"));
	assert_false(gv_kernel_id_valid("0F8FAD5B-d9cb-469f-a165-70867728950e"));
	assert_false(gv_kernel_id_valid("0f8fad5b-d9cb-469f-a165-70867728950"));
	assert_false(gv_kernel_id_valid("0f8fad5b-d9cb-469f-a165-70867728950e0"));
	assert_false(gv_kernel_id_valid("0f8fad5bxd9cb-469f-a165-70867728950e"));
}

static void test_commands(void **state)
{
	(void)state;
	struct kernel_cmd c;
	struct gv_err err;
	assert_int_equal(kernel_cmd_parse("open 17 v1\n", 11, &c, &err), 0);
	assert_int_equal(c.kind, KERNEL_CMD_OPEN);
	assert_true(c.conn == 17 && c.framing == KERNEL_FRAMING_V1);
	assert_int_equal(kernel_cmd_parse("msg 5 3\nabc", 11, &c, &err), 0);
	assert_true(c.kind == KERNEL_CMD_MSG && c.len == 3 && !memcmp(c.payload, "abc", 3));
	assert_int_equal(kernel_cmd_parse("stop client\n", 12, &c, &err), 0);
	assert_string_equal(c.reason, "client");
	assert_int_equal(kernel_cmd_parse("interrupt\n", 10, &c, &err), 0);
	assert_int_equal(kernel_cmd_parse("restart\n", 8, &c, &err), 0);
	const char *bad[] = {"open 0 v1\n", "open 1 xml\n", "msg 5 4\nabc", "msg 5 0\n", "stop Client\n",
			     "interrupt now\n", "close 1", "ping 1234567890123456789\n", "open 1 v1\nextra"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (kernel_cmd_parse(bad[i], strlen(bad[i]), &c, &err) == 0)
			fail_msg("accepted: %s", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_stream_any_split),
		cmocka_unit_test(test_out_refuses),
		cmocka_unit_test(test_v1_channel),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_kernel_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
