/* Unit tests of executor/judge/suite_summary.c: the summary an instructor
 * test suite's group writes (exec_suite_summary_parse), a table of
 * malformed summaries that must all be GV_EPROTO, the bounds on values,
 * tests and the whole input, and the escape / parse round trip over every
 * byte value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/judge/suite_summary.h"

/* Parses a NUL-terminated summary; the caller frees s. */
static int parse_str(const char *text, struct exec_suite_summary *s, struct gv_err *err)
{
	return exec_suite_summary_parse(text, strlen(text), s, err);
}

/* A growing buffer for the generated summaries. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_fill(struct sbuf *b, char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_add(b, &c, 1);
}

/* ---- a well-formed summary --------------------------------------------- */

static void summary__two_tests__every_key_parsed(void **state)
{
	(void)state;
	static const char text[] = "suite:1\n"
				   "build:ok\n"
				   "test:test_add\n"
				   "outcome:pass\n"
				   "time_ms:12\n"
				   "wall_ms:40\n"
				   "test:TestCalc::test_sub[2-3]\n"
				   "outcome:fail\n"
				   "time_ms:0\n"
				   "wall_ms:7\n"
				   "message:line one\\nback\\\\slash\\x01: a:b\n"
				   "output:a\\x00b\\nc\n"
				   "end:2\n";
	struct exec_suite_summary s;
	struct gv_err err;
	if (parse_str(text, &s, &err) != 0)
		fail_msg("parse: %s", err.msg);
	assert_true(s.build_ok);
	assert_string_equal(s.build_message, "");
	assert_int_equal(s.ntests, 2);

	assert_string_equal(s.tests[0].name, "test_add");
	assert_int_equal(s.tests[0].outcome, EXEC_SUITE_PASS);
	assert_int_equal(s.tests[0].time_ms, 12);
	assert_int_equal(s.tests[0].wall_ms, 40);
	assert_string_equal(s.tests[0].message, "");
	assert_null(s.tests[0].output);
	assert_int_equal(s.tests[0].output_len, 0);

	assert_string_equal(s.tests[1].name, "TestCalc::test_sub[2-3]");
	assert_int_equal(s.tests[1].outcome, EXEC_SUITE_FAIL);
	assert_int_equal(s.tests[1].time_ms, 0);
	assert_int_equal(s.tests[1].wall_ms, 7);
	assert_string_equal(s.tests[1].message, "line one\nback\\slash\x01: a:b");
	assert_non_null(s.tests[1].output);
	assert_int_equal(s.tests[1].output_len, 5);
	assert_memory_equal(s.tests[1].output, "a\0b\nc", 5);
	assert_int_equal(s.tests[1].output[5], '\0');
	exec_suite_summary_free(&s);
	exec_suite_summary_free(&s); /* idempotent */
	exec_suite_summary_free(NULL);
}

static void summary__nul_in_message__shown_as_question_mark(void **state)
{
	(void)state;
	static const char text[] = "suite:1\nbuild:ok\ntest:t\noutcome:error\n"
				   "message:a\\x00b\noutput:a\\x00b\nend:1\n";
	struct exec_suite_summary s;
	struct gv_err err;
	if (parse_str(text, &s, &err) != 0)
		fail_msg("parse: %s", err.msg);
	assert_string_equal(s.tests[0].message, "a?b");
	assert_int_equal(s.tests[0].output_len, 3);
	assert_memory_equal(s.tests[0].output, "a\0b", 3);
	exec_suite_summary_free(&s);
}

static void summary__every_outcome__parsed_by_name(void **state)
{
	(void)state;
	static const struct {
		const char *word;
		enum exec_suite_outcome o;
	} t[] = {
		{ "pass", EXEC_SUITE_PASS },
		{ "fail", EXEC_SUITE_FAIL },
		{ "error", EXEC_SUITE_ERROR },
		{ "skipped", EXEC_SUITE_SKIPPED },
		{ "timeout", EXEC_SUITE_TIMEOUT },
		{ "crash", EXEC_SUITE_CRASH },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char text[128];
		snprintf(text, sizeof(text), "suite:1\nbuild:ok\ntest:x\noutcome:%s\nend:1\n", t[i].word);
		struct exec_suite_summary s;
		struct gv_err err;
		if (parse_str(text, &s, &err) != 0)
			fail_msg("%s: %s", t[i].word, err.msg);
		assert_int_equal(s.tests[0].outcome, t[i].o);
		assert_string_equal(exec_suite_outcome_name(t[i].o), t[i].word);
		exec_suite_summary_free(&s);
	}
	assert_int_equal(exec_suite_outcome_of("unset", 5), EXEC_SUITE_UNSET);
	assert_int_equal(exec_suite_outcome_of("pas", 3), EXEC_SUITE_UNSET);
	assert_int_equal(exec_suite_outcome_of("passed", 6), EXEC_SUITE_UNSET);
}

static void summary__build_fail__message_and_no_tests(void **state)
{
	(void)state;
	static const char text[] = "suite:1\nbuild:fail\n"
				   "build_message:calc.c:3: error: expected ';'\\n  3 | int x\n"
				   "end:0\n";
	struct exec_suite_summary s;
	struct gv_err err;
	if (parse_str(text, &s, &err) != 0)
		fail_msg("parse: %s", err.msg);
	assert_false(s.build_ok);
	assert_string_equal(s.build_message, "calc.c:3: error: expected ';'\n  3 | int x");
	assert_int_equal(s.ntests, 0);
	exec_suite_summary_free(&s);
}

/* ---- malformed summaries ----------------------------------------------- */

static const struct {
	const char *name;
	const char *text;
} bad_cases[] = {
	{ "empty", "" },
	{ "missing suite:1", "build:ok\ntest:t\noutcome:pass\nend:1\n" },
	{ "suite:2", "suite:2\nbuild:ok\nend:0\n" },
	{ "suite:01", "suite:01\nbuild:ok\nend:0\n" },
	{ "missing build line", "suite:1\ntest:t\noutcome:pass\nend:1\n" },
	{ "only suite line", "suite:1\n" },
	{ "build neither ok nor fail", "suite:1\nbuild:maybe\nend:0\n" },
	{ "no end line", "suite:1\nbuild:ok\ntest:t\noutcome:pass\n" },
	{ "no final newline", "suite:1\nbuild:ok\nend:0" },
	{ "unknown outcome", "suite:1\nbuild:ok\ntest:t\noutcome:passed\nend:1\n" },
	{ "empty outcome", "suite:1\nbuild:ok\ntest:t\noutcome:\nend:1\n" },
	{ "two outcomes", "suite:1\nbuild:ok\ntest:t\noutcome:pass\noutcome:fail\nend:1\n" },
	{ "two outputs", "suite:1\nbuild:ok\ntest:t\noutcome:pass\noutput:a\noutput:b\nend:1\n" },
	{ "no outcome before the next test", "suite:1\nbuild:ok\ntest:a\ntest:b\noutcome:pass\nend:2\n" },
	{ "no outcome before end", "suite:1\nbuild:ok\ntest:a\noutcome:pass\ntest:b\ntime_ms:1\nend:2\n" },
	{ "end counts too many", "suite:1\nbuild:ok\ntest:a\noutcome:pass\nend:2\n" },
	{ "end counts too few", "suite:1\nbuild:ok\ntest:a\noutcome:pass\nend:0\n" },
	{ "end not a number", "suite:1\nbuild:ok\nend:x\n" },
	{ "end with leading zero", "suite:1\nbuild:ok\ntest:a\noutcome:pass\nend:01\n" },
	{ "end over the test cap", "suite:1\nbuild:ok\nend:65\n" },
	{ "bytes after end", "suite:1\nbuild:ok\nend:0\ntest:a\n" },
	{ "a partial line after end", "suite:1\nbuild:ok\nend:0\nx" },
	{ "unknown key in a test", "suite:1\nbuild:ok\ntest:t\noutcome:pass\nmemory_kb:1\nend:1\n" },
	{ "a key before any test", "suite:1\nbuild:ok\noutcome:pass\ntest:t\noutcome:pass\nend:1\n" },
	{ "message before any test", "suite:1\nbuild:ok\nmessage:x\nend:0\n" },
	{ "build_message after a test", "suite:1\nbuild:fail\ntest:t\noutcome:error\nbuild_message:x\nend:1\n" },
	{ "bad escape \\q", "suite:1\nbuild:ok\ntest:t\noutcome:fail\nmessage:a\\qb\nend:1\n" },
	{ "lone trailing backslash", "suite:1\nbuild:ok\ntest:t\noutcome:fail\nmessage:ab\\\nend:1\n" },
	{ "\\x with bad hex", "suite:1\nbuild:ok\ntest:t\noutcome:fail\nmessage:\\xzz\nend:1\n" },
	{ "\\x with upper-case hex", "suite:1\nbuild:ok\ntest:t\noutcome:fail\nmessage:\\x1F\nend:1\n" },
	{ "\\x with one digit at the end", "suite:1\nbuild:ok\ntest:t\noutcome:fail\nmessage:\\x1\nend:1\n" },
	{ "\\x at the end", "suite:1\nbuild:ok\ntest:t\noutcome:fail\noutput:\\x\nend:1\n" },
	{ "bad escape in build_message", "suite:1\nbuild:fail\nbuild_message:\\t\nend:0\n" },
	{ "raw tab in a message", "suite:1\nbuild:ok\ntest:t\noutcome:fail\nmessage:a\tb\nend:1\n" },
	{ "raw CR in an output", "suite:1\nbuild:ok\ntest:t\noutcome:fail\noutput:a\rb\nend:1\n" },
	{ "raw DEL in a build_message", "suite:1\nbuild:fail\nbuild_message:a\x7f\nend:0\n" },
	{ "time_ms not a number", "suite:1\nbuild:ok\ntest:t\noutcome:pass\ntime_ms:-1\nend:1\n" },
	{ "wall_ms over its max", "suite:1\nbuild:ok\ntest:t\noutcome:pass\nwall_ms:8640000001\nend:1\n" },
	{ "empty test name", "suite:1\nbuild:ok\ntest:\noutcome:pass\nend:1\n" },
	{ "test name with a backslash", "suite:1\nbuild:ok\ntest:a\\b\noutcome:pass\nend:1\n" },
	{ "test name with a leading space", "suite:1\nbuild:ok\ntest: a\noutcome:pass\nend:1\n" },
	{ "test name with a trailing space", "suite:1\nbuild:ok\ntest:a \noutcome:pass\nend:1\n" },
	{ "test name with a tab", "suite:1\nbuild:ok\ntest:a\tb\noutcome:pass\nend:1\n" },
	{ "test name with UTF-8", "suite:1\nbuild:ok\ntest:caf\xc3\xa9\noutcome:pass\nend:1\n" },
	{ "upper-case key", "suite:1\nbuild:ok\nTEST:a\noutcome:pass\nend:1\n" },
	{ "empty line", "suite:1\nbuild:ok\n\nend:0\n" },
};

static void summary__malformed_table__all_eproto(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct exec_suite_summary s;
		struct gv_err err = { 0 };
		if (parse_str(bad_cases[i].text, &s, &err) == 0)
			fail_msg("%s: accepted", bad_cases[i].name);
		if (err.code != GV_EPROTO)
			fail_msg("%s: code %d (%s), not GV_EPROTO", bad_cases[i].name, err.code, err.msg);
		assert_null(s.tests);
		assert_int_equal(s.ntests, 0);
		exec_suite_summary_free(&s);
	}
}

static void summary__nul_byte__eproto(void **state)
{
	(void)state;
	static const char text[] = "suite:1\nbuild:ok\ntest:t\noutcome:pass\nmessage:a\0b\nend:1\n";
	struct exec_suite_summary s;
	struct gv_err err = { 0 };
	assert_int_equal(exec_suite_summary_parse(text, sizeof(text) - 1, &s, &err), -1);
	assert_int_equal(err.code, GV_EPROTO);
	exec_suite_summary_free(&s);
}

/* ---- bounds ------------------------------------------------------------ */

/* "suite:1 .. message:<n bytes of c>" for a message (key "message") or an
 * output; escaped says each byte is written as "\xHH" */
static void value_of_len(struct sbuf *b, const char *key, size_t n, bool escaped)
{
	sb_str(b, "suite:1\nbuild:ok\ntest:t\noutcome:fail\n");
	sb_str(b, key);
	sb_str(b, ":");
	for (size_t i = 0; i < n; i++)
		sb_str(b, escaped ? "\\x41" : "a");
	sb_str(b, "\nend:1\n");
}

static void summary__values_at_their_cap__accepted_one_more_refused(void **state)
{
	(void)state;
	static const struct {
		const char *key;
		size_t max;
	} t[] = { { "message", EXEC_SUITE_MESSAGE_MAX }, { "output", EXEC_SUITE_OUTPUT_MAX } };
	for (size_t i = 0; i < 2; i++) {
		for (int escaped = 0; escaped <= 1; escaped++) {
			struct sbuf b = { 0 };
			struct exec_suite_summary s;
			struct gv_err err = { 0 };
			value_of_len(&b, t[i].key, t[i].max, escaped);
			if (exec_suite_summary_parse(b.p, b.len, &s, &err) != 0)
				fail_msg("%s of %zu: %s", t[i].key, t[i].max, err.msg);
			if (i == 0)
				assert_int_equal(strlen(s.tests[0].message), t[i].max);
			else
				assert_int_equal(s.tests[0].output_len, t[i].max);
			exec_suite_summary_free(&s);
			free(b.p);

			b = (struct sbuf){ 0 };
			value_of_len(&b, t[i].key, t[i].max + 1, escaped);
			assert_int_equal(exec_suite_summary_parse(b.p, b.len, &s, &err), -1);
			assert_int_equal(err.code, GV_EPROTO);
			exec_suite_summary_free(&s);
			free(b.p);
		}
	}
	/* build_message has the message's cap. */
	struct sbuf b = { 0 };
	struct exec_suite_summary s;
	struct gv_err err = { 0 };
	sb_str(&b, "suite:1\nbuild:fail\nbuild_message:");
	sb_fill(&b, 'm', EXEC_SUITE_MESSAGE_MAX + 1);
	sb_str(&b, "\nend:0\n");
	assert_int_equal(exec_suite_summary_parse(b.p, b.len, &s, &err), -1);
	assert_int_equal(err.code, GV_EPROTO);
	exec_suite_summary_free(&s);
	free(b.p);
}

static void summary_of_tests(struct sbuf *b, size_t n)
{
	sb_str(b, "suite:1\nbuild:ok\n");
	for (size_t i = 0; i < n; i++) {
		char line[64];
		snprintf(line, sizeof(line), "test:t%zu\noutcome:pass\n", i);
		sb_str(b, line);
	}
	char end[32];
	snprintf(end, sizeof(end), "end:%zu\n", n);
	sb_str(b, end);
}

static void summary__tests_over_the_cap__refused(void **state)
{
	(void)state;
	struct sbuf b = { 0 };
	struct exec_suite_summary s;
	struct gv_err err = { 0 };
	summary_of_tests(&b, EXEC_SUITE_TESTS_MAX);
	if (exec_suite_summary_parse(b.p, b.len, &s, &err) != 0)
		fail_msg("%d tests: %s", EXEC_SUITE_TESTS_MAX, err.msg);
	assert_int_equal(s.ntests, EXEC_SUITE_TESTS_MAX);
	assert_string_equal(s.tests[EXEC_SUITE_TESTS_MAX - 1].name, "t63");
	exec_suite_summary_free(&s);
	free(b.p);

	b = (struct sbuf){ 0 };
	summary_of_tests(&b, EXEC_SUITE_TESTS_MAX + 1);
	assert_int_equal(exec_suite_summary_parse(b.p, b.len, &s, &err), -1);
	assert_int_equal(err.code, GV_EPROTO);
	exec_suite_summary_free(&s);
	free(b.p);
}

static void summary__name_at_its_cap__accepted_one_more_refused(void **state)
{
	(void)state;
	for (size_t extra = 0; extra <= 1; extra++) {
		struct sbuf b = { 0 };
		struct exec_suite_summary s;
		struct gv_err err = { 0 };
		sb_str(&b, "suite:1\nbuild:ok\ntest:");
		sb_fill(&b, 'n', EXEC_SUITE_NAME_MAX + extra);
		sb_str(&b, "\noutcome:pass\nend:1\n");
		int rc = exec_suite_summary_parse(b.p, b.len, &s, &err);
		if (extra == 0) {
			if (rc != 0)
				fail_msg("name of %d bytes: %s", EXEC_SUITE_NAME_MAX, err.msg);
			assert_int_equal(strlen(s.tests[0].name), EXEC_SUITE_NAME_MAX);
		} else {
			assert_int_equal(rc, -1);
			assert_int_equal(err.code, GV_EPROTO);
		}
		exec_suite_summary_free(&s);
		free(b.p);
	}
}

/* A well-formed summary of exactly len bytes (len >= 200): one test whose
 * time_ms line repeats (the last one counts) and a message that takes up
 * the rest. */
static void summary_of_len(struct sbuf *b, size_t len)
{
	static const char end[] = "\nend:1\n";
	sb_str(b, "suite:1\nbuild:ok\ntest:t\noutcome:pass\n");
	while (b->len + 10 + strlen("message:") + 100 + strlen(end) <= len)
		sb_str(b, "time_ms:0\n");
	sb_str(b, "message:");
	sb_fill(b, 'm', len - b->len - strlen(end));
	sb_str(b, end);
	assert_int_equal(b->len, len);
}

static void summary__input_over_the_cap__refused_for_its_length(void **state)
{
	(void)state;
	struct sbuf b = { 0 };
	struct exec_suite_summary s;
	struct gv_err err = { 0 };
	summary_of_len(&b, EXEC_SUITE_SUMMARY_MAX);
	if (exec_suite_summary_parse(b.p, b.len, &s, &err) != 0)
		fail_msg("%d bytes: %s", EXEC_SUITE_SUMMARY_MAX, err.msg);
	assert_int_equal(s.ntests, 1);
	exec_suite_summary_free(&s);
	free(b.p);

	b = (struct sbuf){ 0 };
	summary_of_len(&b, EXEC_SUITE_SUMMARY_MAX + 1);
	assert_int_equal(exec_suite_summary_parse(b.p, b.len, &s, &err), -1);
	assert_int_equal(err.code, GV_EPROTO);
	assert_non_null(strstr(err.msg, "longer than"));
	assert_null(s.tests);
	exec_suite_summary_free(&s);
	free(b.p);
}

/* ---- escaping ---------------------------------------------------------- */

static void escape__every_byte__round_trips_through_output(void **state)
{
	(void)state;
	char in[256];
	for (int i = 0; i < 256; i++)
		in[i] = (char)i;
	char esc[4 * 256 + 1];
	assert_int_equal(exec_suite_escape(in, sizeof(in), esc, sizeof(esc)), 256);
	/* One line of printable ASCII. */
	for (size_t i = 0; esc[i]; i++)
		assert_true(esc[i] != '\n' && (unsigned char)esc[i] >= 0x20 && (unsigned char)esc[i] != 0x7f);
	struct sbuf b = { 0 };
	sb_str(&b, "suite:1\nbuild:ok\ntest:t\noutcome:fail\noutput:");
	sb_str(&b, esc);
	sb_str(&b, "\nmessage:");
	sb_str(&b, esc);
	sb_str(&b, "\nend:1\n");
	struct exec_suite_summary s;
	struct gv_err err = { 0 };
	if (exec_suite_summary_parse(b.p, b.len, &s, &err) != 0)
		fail_msg("parse: %s", err.msg);
	assert_int_equal(s.tests[0].output_len, 256);
	assert_memory_equal(s.tests[0].output, in, 256);
	/* The message is a C string: its NUL became '?'. */
	assert_int_equal(strlen(s.tests[0].message), 256);
	assert_int_equal(s.tests[0].message[0], '?');
	assert_memory_equal(s.tests[0].message + 1, in + 1, 255);
	exec_suite_summary_free(&s);
	free(b.p);
}

static void escape__forms__backslash_newline_hex(void **state)
{
	(void)state;
	char out[64];
	assert_int_equal(exec_suite_escape("a\\b\nc\x01\x7f\x1f~", 9, out, sizeof(out)), 9);
	assert_string_equal(out, "a\\\\b\\nc\\x01\\x7f\\x1f~");
	/* Bytes >= 0x80 pass as they are. */
	assert_int_equal(exec_suite_escape("\xc3\xa9", 2, out, sizeof(out)), 2);
	assert_string_equal(out, "\xc3\xa9");
	assert_int_equal(exec_suite_escape("", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

static void escape__cap__stops_before_an_escape_that_does_not_fit(void **state)
{
	(void)state;
	char out[16];
	/* cap 0: nothing written, nothing consumed. */
	out[0] = 'Z';
	assert_int_equal(exec_suite_escape("abc", 3, out, 0), 0);
	assert_int_equal(out[0], 'Z');
	/* cap 1: room for the NUL only. */
	assert_int_equal(exec_suite_escape("abc", 3, out, 1), 0);
	assert_string_equal(out, "");
	/* "ab" then "\x01" needs 4 more: with cap 6, 2 + 4 = 6 leaves no
	 * room for the NUL, so it stops after "ab". */
	assert_int_equal(exec_suite_escape("ab\x01z", 4, out, 6), 2);
	assert_string_equal(out, "ab");
	/* cap 7: the escape fits, then 'z' does not. */
	assert_int_equal(exec_suite_escape("ab\x01z", 4, out, 7), 3);
	assert_string_equal(out, "ab\\x01");
	assert_int_equal(exec_suite_escape("ab\x01z", 4, out, 8), 4);
	assert_string_equal(out, "ab\\x01z");
	/* A two-byte escape is never split. */
	assert_int_equal(exec_suite_escape("a\n", 2, out, 3), 1);
	assert_string_equal(out, "a");
	assert_int_equal(exec_suite_escape("a\\", 2, out, 4), 2);
	assert_string_equal(out, "a\\\\");
	/* Escaping a long input in pieces gives the same text as at once. */
	char in[100];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7);
	char whole[4 * sizeof(in) + 1], piece[11], joined[4 * sizeof(in) + 1] = "";
	assert_int_equal(exec_suite_escape(in, sizeof(in), whole, sizeof(whole)), sizeof(in));
	size_t done = 0;
	while (done < sizeof(in)) {
		size_t n = exec_suite_escape(in + done, sizeof(in) - done, piece, sizeof(piece));
		assert_true(n > 0);
		assert_true(strlen(piece) < sizeof(piece));
		strcat(joined, piece);
		done += n;
	}
	assert_string_equal(joined, whole);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(summary__two_tests__every_key_parsed),
		cmocka_unit_test(summary__nul_in_message__shown_as_question_mark),
		cmocka_unit_test(summary__every_outcome__parsed_by_name),
		cmocka_unit_test(summary__build_fail__message_and_no_tests),
		cmocka_unit_test(summary__malformed_table__all_eproto),
		cmocka_unit_test(summary__nul_byte__eproto),
		cmocka_unit_test(summary__values_at_their_cap__accepted_one_more_refused),
		cmocka_unit_test(summary__tests_over_the_cap__refused),
		cmocka_unit_test(summary__name_at_its_cap__accepted_one_more_refused),
		cmocka_unit_test(summary__input_over_the_cap__refused_for_its_length),
		cmocka_unit_test(escape__every_byte__round_trips_through_output),
		cmocka_unit_test(escape__forms__backslash_newline_hex),
		cmocka_unit_test(escape__cap__stops_before_an_escape_that_does_not_fit),
	};
	return cmocka_run_group_tests_name("suite_summary", tests, NULL, NULL);
}
