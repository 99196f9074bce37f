/* Unit tests of executor/sandbox/record.c: the result-record parser (tables of
 * valid and malformed records), the formatter round trip and the
 * incremental frame decoder fed in every possible split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/sandbox/record.h"

struct parse_case {
	const char *name;
	const char *text;
	int ok;
	enum exec_status status;
	uint64_t time_ms;
};

static const struct parse_case parse_cases[] = {
	{ "full test record", "phase:test\nindex:3\nstatus:OK\nexit_code:0\ntime_ms:15\nwall_ms:20\nmemory_kb:1024\nstdout_bytes:2\nstderr_bytes:0\nlimit:none\n", 1, EXEC_STATUS_OK, 15 },
	{ "compile without index", "phase:compile\nstatus:OK\n", 1, EXEC_STATUS_OK, 0 },
	{ "unknown key ignored", "phase:compile\nstatus:IE\nfuture_key:whatever\n", 1, EXEC_STATUS_IE, 0 },
	{ "last repeated key wins", "phase:compile\nstatus:OK\ntime_ms:1\ntime_ms:2\n", 1, EXEC_STATUS_OK, 2 },
	{ "message with colons", "phase:compile\nstatus:IE\nmessage:a: b: c\n", 1, EXEC_STATUS_IE, 0 },
	{ "signal record", "phase:test\nindex:1\nstatus:SG\nsignal:11\n", 1, EXEC_STATUS_SG, 0 },
	{ "empty buffer", "", 0, 0, 0 },
	{ "no final newline", "phase:compile\nstatus:OK", 0, 0, 0 },
	{ "no status", "phase:compile\n", 0, 0, 0 },
	{ "test without index", "phase:test\nstatus:OK\n", 0, 0, 0 },
	{ "index zero", "phase:test\nindex:0\nstatus:OK\n", 0, 0, 0 },
	{ "unknown status", "phase:compile\nstatus:WA\n", 0, 0, 0 },
	{ "negative number", "phase:compile\nstatus:OK\ntime_ms:-1\n", 0, 0, 0 },
	{ "leading zero", "phase:compile\nstatus:OK\ntime_ms:01\n", 0, 0, 0 },
	{ "plus sign", "phase:compile\nstatus:OK\ntime_ms:+1\n", 0, 0, 0 },
	{ "space in number", "phase:compile\nstatus:OK\ntime_ms: 1\n", 0, 0, 0 },
	{ "overflowing number", "phase:compile\nstatus:OK\nmemory_kb:99999999999999999999999\n", 0, 0, 0 },
	{ "above maximum", "phase:compile\nstatus:OK\ntime_ms:8640000000000\n", 0, 0, 0 },
	{ "exit code above 255", "phase:test\nindex:1\nstatus:RE\nexit_code:256\n", 0, 0, 0 },
	{ "RE without exit code", "phase:test\nindex:1\nstatus:RE\n", 0, 0, 0 },
	{ "signal 65", "phase:test\nindex:1\nstatus:SG\nsignal:65\n", 0, 0, 0 },
	{ "empty line", "phase:compile\n\nstatus:OK\n", 0, 0, 0 },
	{ "line without colon", "phase:compile\nstatus OK\n", 0, 0, 0 },
	{ "uppercase key", "phase:compile\nStatus:OK\n", 0, 0, 0 },
	{ "key too long", "phase:compile\nstatus:OK\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1\n", 0, 0, 0 },
	{ "wall_us", "phase:test\nindex:1\nstatus:OK\nwall_ms:4\nwall_us:4321\n", 1, EXEC_STATUS_OK, 0 },
	{ "wall_us above maximum", "phase:compile\nstatus:OK\nwall_us:8640000000000001\n", 0, 0, 0 },
	{ "wall_us negative", "phase:compile\nstatus:OK\nwall_us:-1\n", 0, 0, 0 },
};

static void record__parse_table__matches_expectations(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct exec_record r;
		struct gv_err err;
		gv_err_clear(&err);
		int rc = exec_record_parse(c->text, strlen(c->text), &r, &err);
		if (c->ok) {
			if (rc != 0)
				fail_msg("case '%s': unexpected error %s", c->name, err.msg);
			assert_int_equal(r.status, c->status);
			assert_int_equal(r.time_ms, c->time_ms);
		} else {
			if (rc != -1)
				fail_msg("case '%s': parsed but should fail", c->name);
			assert_true(err.code == GV_EPROTO || err.code == GV_ELIMIT);
		}
	}
}

static void record__nul_byte__is_rejected(void **state)
{
	(void)state;
	static const char text[] = "phase:compile\nstatus:OK\nmessage:a\0b\n";
	struct exec_record r;
	struct gv_err err;
	assert_int_equal(exec_record_parse(text, sizeof(text) - 1, &r, &err), -1);
}

static void record__long_message__is_truncated(void **state)
{
	(void)state;
	char text[1024];
	int n = snprintf(text, sizeof(text), "phase:compile\nstatus:IE\nmessage:");
	memset(text + n, 'x', 600);
	text[n + 600] = '\n';
	struct exec_record r;
	struct gv_err err;
	assert_int_equal(exec_record_parse(text, (size_t)n + 601, &r, &err), 0);
	assert_int_equal(strlen(r.message), EXEC_RECORD_MESSAGE_MAX - 1);
}

static void record__format_then_parse__round_trips(void **state)
{
	(void)state;
	struct exec_record a = { .phase = EXEC_PHASE_TEST, .index = 7, .status = EXEC_STATUS_SG,
				 .signal = 9, .time_ms = 1000, .wall_ms = 1200, .memory_kb = 4096,
				 .stdout_bytes = 5, .stderr_bytes = 6, .limit = EXEC_LIMIT_WALL };
	strcpy(a.message, "line\nbreak");
	char buf[1024];
	struct gv_err err;
	int n = exec_record_format(&a, buf, sizeof(buf), &err);
	assert_true(n > 0);
	struct exec_record b;
	assert_int_equal(exec_record_parse(buf, (size_t)n, &b, &err), 0);
	assert_int_equal(b.index, 7);
	assert_int_equal(b.signal, 9);
	assert_int_equal(b.wall_ms, 1200);
	assert_int_equal(b.limit, EXEC_LIMIT_WALL);
	assert_string_equal(b.message, "line break");
	assert_int_equal(exec_record_format(&a, buf, 10, &err), -1);
}

/* order: segments [oe]N joined by commas, anything else refused (it comes
 * from inside the sandbox); kept through format and parse. */
static void record__order__grammar_and_round_trip(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		bool ok;
	} cases[] = {
		{ "o1", true },	       { "o12,e5,o3", true }, { "e1234567890", true }, { "", false },
		{ "o", false },	       { "o0", false },	      { "o01", false },	       { "x1", false },
		{ "o1,", false },      { ",o1", false },      { "o1,,e1", false },     { "o12345678901", false },
		{ "o1 e1", false },    { "o-1", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (exec_record_order_ok(cases[i].s, strlen(cases[i].s)) != cases[i].ok)
			fail_msg("case '%s'", cases[i].s);
	struct exec_record a = { .phase = EXEC_PHASE_TEST, .index = 1, .status = EXEC_STATUS_OK };
	strcpy(a.order, "o3,e2,o4");
	char buf[1024];
	struct gv_err err;
	int n = exec_record_format(&a, buf, sizeof(buf), &err);
	assert_true(n > 0);
	struct exec_record b;
	assert_int_equal(exec_record_parse(buf, (size_t)n, &b, &err), 0);
	assert_string_equal(b.order, "o3,e2,o4");
	static const char bad[] = "phase:test\nindex:1\nstatus:OK\norder:o3;e2\n";
	assert_int_equal(exec_record_parse(bad, sizeof(bad) - 1, &b, &err), -1);
}

/* wall_us is optional: written only when set, absent (0) from an older
 * init's record, and kept exactly through format and parse. */
static void record__wall_us__optional_and_round_trips(void **state)
{
	(void)state;
	struct exec_record a = { .phase = EXEC_PHASE_TEST, .index = 2, .status = EXEC_STATUS_OK,
				 .wall_ms = 4, .limit = EXEC_LIMIT_NONE };
	char buf[1024];
	struct gv_err err;
	int n = exec_record_format(&a, buf, sizeof(buf), &err);
	assert_true(n > 0);
	assert_null(memmem(buf, (size_t)n, "wall_us", 7));
	struct exec_record b;
	assert_int_equal(exec_record_parse(buf, (size_t)n, &b, &err), 0);
	assert_false(b.present & EXEC_REC_WALL_US);
	assert_int_equal(b.wall_us, 0);

	a.wall_us = 4321;
	a.present |= EXEC_REC_WALL_US;
	n = exec_record_format(&a, buf, sizeof(buf), &err);
	assert_true(n > 0);
	assert_non_null(memmem(buf, (size_t)n, "\nwall_us:4321\n", 14));
	assert_int_equal(exec_record_parse(buf, (size_t)n, &b, &err), 0);
	assert_true(b.present & EXEC_REC_WALL_US);
	assert_int_equal(b.wall_us, 4321);
	assert_int_equal(b.wall_ms, 4);
}

static const struct exec_frame_cap caps[] = {
	{ "stdout", 100 },
	{ "result", 1000 },
	{ "end", 0 },
};

/* Feeds text in chunks of `chunk` bytes; returns the frames' kinds and
 * payloads joined as "kind=payload;" or "ERR". */
static void decode_chunked(const char *text, size_t len, size_t chunk, char *out, size_t outsz)
{
	struct exec_frame_decoder d;
	exec_frame_decoder_init(&d, caps, 3);
	out[0] = '\0';
	size_t pos = 0;
	struct gv_err err;
	while (pos < len) {
		size_t n = len - pos < chunk ? len - pos : chunk;
		size_t off = 0;
		while (off < n) {
			size_t used;
			struct exec_frame f;
			int r = exec_frame_decoder_feed(&d, text + pos + off, n - off, &used, &f, &err);
			if (r < 0) {
				snprintf(out, outsz, "ERR");
				exec_frame_decoder_free(&d);
				return;
			}
			off += used;
			if (r == 1) {
				size_t l = strlen(out);
				snprintf(out + l, outsz - l, "%s=%.*s;", f.kind, (int)f.len, f.payload);
			}
		}
		pos += n;
	}
	if (!exec_frame_decoder_idle(&d)) {
		size_t l = strlen(out);
		snprintf(out + l, outsz - l, "PARTIAL");
	}
	exec_frame_decoder_free(&d);
}

struct frame_case {
	const char *name;
	const char *text;
	const char *want;
};

static const struct frame_case frame_cases[] = {
	{ "two frames", "stdout 2\nhiend 0\n", "stdout=hi;end=;" },
	{ "empty payload", "stdout 0\n", "stdout=;" },
	{ "truncated payload", "stdout 5\nhi", "PARTIAL" },
	{ "truncated header", "stdo", "PARTIAL" },
	{ "over the kind's cap", "stdout 101\n", "ERR" },
	{ "end with payload", "end 1\nx", "ERR" },
	{ "unknown kind", "stdin 1\nx", "ERR" },
	{ "uppercase kind", "STDOUT 1\nx", "ERR" },
	{ "no space", "stdout\n", "ERR" },
	{ "two spaces", "stdout  1\nx", "ERR" },
	{ "leading zero length", "stdout 01\nx", "ERR" },
	{ "over 64 MiB", "result 67108865\n", "ERR" },
	{ "header too long", "stdoutstdoutstdoutstdout 1\n", "ERR" },
	{ "negative length", "stdout -1\n", "ERR" },
};

static void frame__decoder_table__any_split_gives_same_frames(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(frame_cases) / sizeof(frame_cases[0]); i++) {
		const struct frame_case *c = &frame_cases[i];
		size_t len = strlen(c->text);
		for (size_t chunk = 1; chunk <= len + 1; chunk++) {
			char got[256];
			decode_chunked(c->text, len, chunk, got, sizeof(got));
			if (strcmp(got, c->want) != 0)
				fail_msg("case '%s' chunk %zu: got '%s' want '%s'", c->name, chunk, got, c->want);
		}
	}
}

static void frame__after_error__decoder_stays_failed(void **state)
{
	(void)state;
	struct exec_frame_decoder d;
	exec_frame_decoder_init(&d, caps, 3);
	size_t used;
	struct exec_frame f;
	struct gv_err err;
	assert_int_equal(exec_frame_decoder_feed(&d, "bad!\n", 5, &used, &f, &err), -1);
	assert_int_equal(exec_frame_decoder_feed(&d, "end 0\n", 6, &used, &f, &err), -1);
	exec_frame_decoder_free(&d);
}

static void frame__header__rejects_bad_kind_and_length(void **state)
{
	(void)state;
	char buf[EXEC_FRAME_HEADER_MAX + 1];
	struct gv_err err;
	assert_int_equal(exec_frame_header(buf, sizeof(buf), "result", 12, &err), 10);
	assert_string_equal(buf, "result 12\n");
	assert_int_equal(exec_frame_header(buf, sizeof(buf), "Result", 1, &err), -1);
	assert_int_equal(exec_frame_header(buf, sizeof(buf), "result", EXEC_FRAME_LEN_MAX + 1u, &err), -1);
	assert_int_equal(exec_frame_header(buf, sizeof(buf), "", 1, &err), -1);
}

struct name_case {
	const char *name;
	int ok;
};

static const struct name_case name_cases[] = {
	{ "input", 1 },
	{ "judgemessage.txt", 1 },
	{ "a-b_c.D9", 1 },
	{ ".hidden", 1 },
	{ "", 0 },
	{ ".", 0 },
	{ "..", 0 },
	{ "a/b", 0 },
	{ "../x", 0 },
	{ "sp ace", 0 },
	{ "nl\n", 0 },
	{ "caf\xc3\xa9", 0 },
	{ "1234567890123456789012345678901234567890123456789012345678901234", 1 },
	{ "12345678901234567890123456789012345678901234567890123456789012345", 0 },
};

static void named__file_names__follow_the_grammar(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(name_cases) / sizeof(name_cases[0]); i++)
		if (exec_file_name_ok(name_cases[i].name, strlen(name_cases[i].name)) != name_cases[i].ok)
			fail_msg("name '%s': expected %d", name_cases[i].name, name_cases[i].ok);
}

struct split_case {
	const char *label;
	const char *payload;
	size_t len;
	int ok;
	const char *name;
	const char *data;
	size_t data_len;
};

static const struct split_case split_cases[] = {
	{ "name and bytes", "score.txt\n17\n", 13, 1, "score.txt", "17\n", 3 },
	{ "empty bytes", "answer\n", 7, 1, "answer", "", 0 },
	{ "binary bytes with newlines and NUL", "f\n\n\0x", 5, 1, "f", "\n\0x", 3 },
	{ "no newline", "answer", 6, 0, NULL, NULL, 0 },
	{ "empty name", "\nabc", 4, 0, NULL, NULL, 0 },
	{ "dot dot", "..\nabc", 6, 0, NULL, NULL, 0 },
	{ "slash", "a/b\nabc", 7, 0, NULL, NULL, 0 },
	{ "empty payload", "", 0, 0, NULL, NULL, 0 },
	{ "name line too long",
	  "12345678901234567890123456789012345678901234567890123456789012345\nx", 67, 0, NULL, NULL, 0 },
};

static void named__payload_split__table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
		const struct split_case *c = &split_cases[i];
		const char *name = NULL, *data = NULL;
		size_t nl = 0, dl = 0;
		struct gv_err err;
		gv_err_clear(&err);
		int rc = exec_named_payload_split(c->payload, c->len, &name, &nl, &data, &dl, &err);
		if (!c->ok) {
			if (rc == 0)
				fail_msg("case '%s': split but should fail", c->label);
			assert_int_equal(err.code, GV_EPROTO);
			continue;
		}
		if (rc != 0)
			fail_msg("case '%s': %s", c->label, err.msg);
		assert_int_equal(nl, strlen(c->name));
		assert_memory_equal(name, c->name, nl);
		assert_int_equal(dl, c->data_len);
		if (dl)
			assert_memory_equal(data, c->data, dl);
	}
}

static void frame__file_and_feedback__decode_with_caps(void **state)
{
	(void)state;
	static const struct exec_frame_cap fcaps[] = { { "file", 32 }, { "feedback", 8 }, { "test", 4 } };
	static const char in[] = "file 8\ninput\n12test 0\nfeedback 9\n";
	struct exec_frame_decoder d;
	exec_frame_decoder_init(&d, fcaps, 3);
	struct gv_err err;
	size_t pos = 0, used = 0;
	struct exec_frame f;
	assert_int_equal(exec_frame_decoder_feed(&d, in, sizeof(in) - 1, &used, &f, &err), 1);
	assert_string_equal(f.kind, "file");
	assert_int_equal(f.len, 8);
	pos += used;
	assert_int_equal(exec_frame_decoder_feed(&d, in + pos, sizeof(in) - 1 - pos, &used, &f, &err), 1);
	assert_string_equal(f.kind, "test");
	pos += used;
	/* A feedback frame over its cap is refused from the header alone. */
	assert_int_equal(exec_frame_decoder_feed(&d, in + pos, sizeof(in) - 1 - pos, &used, &f, &err), -1);
	assert_int_equal(err.code, GV_EPROTO);
	exec_frame_decoder_free(&d);
}

/* Interactive tests: init's command caps (an empty `test`, `data` up to
 * 64 KiB, the empty `data` that closes the program's stdin) and the
 * host's result caps with `data`, through the zero-copy streaming API. */
static void frame__interactive_data__stream_and_caps(void **state)
{
	(void)state;
	static const struct exec_frame_cap icaps[] = {
		{ "test", 0 }, { "file", 64 }, { "end", 0 }, { "data", 65536 } };
	static const char in[] = "test 0\ndata 3\nab\ndata 0\nend 0\n";
	struct exec_frame_decoder d;
	exec_frame_decoder_init(&d, icaps, 4);
	struct gv_err err;
	size_t used = 0;
	char kinds[64] = "";
	char data[16] = "";
	for (int guard = 0; guard < 64; guard++) {
		struct exec_frame_event ev;
		assert_int_equal(exec_frame_decoder_step(&d, in + used, sizeof(in) - 1 - used, &used, &ev, &err), 0);
		if (ev.type == EXEC_FRAME_EV_NONE)
			break;
		if (ev.type == EXEC_FRAME_EV_BEGIN) {
			strcat(kinds, ev.kind);
			strcat(kinds, ev.len ? "+" : "0");
		} else if (ev.type == EXEC_FRAME_EV_DATA) {
			strncat(data, ev.data, ev.data_len);
		} else {
			strcat(kinds, ".");
		}
	}
	/* Every frame ends, the empty ones too: that END closes stdin. */
	assert_string_equal(kinds, "test0.data+.data0.end0.");
	assert_string_equal(data, "ab\n");
	assert_int_equal(used, sizeof(in) - 1);
	assert_true(exec_frame_decoder_idle(&d));
	exec_frame_decoder_free(&d);

	/* An interactive `test` carries no input; `data` is capped. */
	static const char *const bad[] = { "test 1\nx", "data 65537\n", "stdout 0\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		exec_frame_decoder_init(&d, icaps, 4);
		struct exec_frame_event ev;
		used = 0;
		assert_int_equal(exec_frame_decoder_step(&d, bad[i], strlen(bad[i]), &used, &ev, &err), -1);
		assert_int_equal(err.code, GV_EPROTO);
		exec_frame_decoder_free(&d);
	}

	/* Host side: `data` among the phase's frames, a known kind only when
	 * the session is interactive. */
	static const struct exec_frame_cap hcaps[] = {
		{ "stdout", 16 }, { "stderr", 16 }, { "result", 64 }, { "data", 65536 } };
	static const char out[] = "data 2\n<\ndata 2\n=\nstdout 0\n";
	exec_frame_decoder_init(&d, hcaps, 4);
	struct exec_frame f;
	size_t pos = 0;
	assert_int_equal(exec_frame_decoder_feed(&d, out, sizeof(out) - 1, &used, &f, &err), 1);
	assert_string_equal(f.kind, "data");
	assert_memory_equal(f.payload, "<\n", 2);
	pos += used;
	assert_int_equal(exec_frame_decoder_feed(&d, out + pos, sizeof(out) - 1 - pos, &used, &f, &err), 1);
	assert_memory_equal(f.payload, "=\n", 2);
	exec_frame_decoder_free(&d);
	exec_frame_decoder_init(&d, hcaps, 3);
	assert_int_equal(exec_frame_decoder_feed(&d, out, sizeof(out) - 1, &used, &f, &err), -1);
	exec_frame_decoder_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record__parse_table__matches_expectations),
		cmocka_unit_test(record__nul_byte__is_rejected),
		cmocka_unit_test(record__long_message__is_truncated),
		cmocka_unit_test(record__format_then_parse__round_trips),
		cmocka_unit_test(record__wall_us__optional_and_round_trips),
		cmocka_unit_test(record__order__grammar_and_round_trip),
		cmocka_unit_test(frame__decoder_table__any_split_gives_same_frames),
		cmocka_unit_test(frame__after_error__decoder_stays_failed),
		cmocka_unit_test(frame__header__rejects_bad_kind_and_length),
		cmocka_unit_test(named__file_names__follow_the_grammar),
		cmocka_unit_test(named__payload_split__table),
		cmocka_unit_test(frame__file_and_feedback__decode_with_caps),
		cmocka_unit_test(frame__interactive_data__stream_and_caps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
