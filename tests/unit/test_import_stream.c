/* Unit tests of the package stream parser and the entry path rule
 * (executor/problems/import_stream.c): the host's only view of what the unpack
 * sandbox returns. Tables of paths; streams fed whole and one byte at a
 * time give the same events; every grammar or limit breach is an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "executor/problems/import_stream.h"

static void import_path__good_paths__accepted(void **state)
{
	(void)state;
	static const char *const good[] = {
		"a", "problem.yaml", "data/secret/group1/01.in", "a b/c", "x+y=z,@~.-_", ".timelimit", "..a", "a..",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char why[128] = "";
		if (exec_import_path_check(good[i], strlen(good[i]), 255, 16, why, sizeof(why)) != 0)
			fail_msg("'%s' refused: %s", good[i], why);
	}
}

static void import_path__bad_paths__refused_with_the_reason(void **state)
{
	(void)state;
	char long_path[300], deep[200];
	memset(long_path, 'a', 256);
	long_path[256] = '\0';
	deep[0] = '\0';
	for (int i = 0; i < 17; i++)
		strcat(deep, i ? "/d" : "d");
	static const struct {
		const char *path;
		const char *why;
	} bad[] = {
		{ "", "empty" },
		{ "/etc/passwd", "absolute" },
		{ "..", "leaves" },
		{ "../x", "leaves" },
		{ "data/../../x", "leaves" },
		{ "a/..", "leaves" },
		{ "a//b", "empty path component" },
		{ "a/", "empty path component" },
		{ "./a", "'.'" },
		{ "a/./b", "'.'" },
		{ "caf\xc3\xa9", "character" },
		{ "a\nb", "character" },
		{ "a\\b", "character" },
		{ "a:b", "character" },
		{ " a", "space" },
		{ "a /b", "space" },
	};
	char why[128];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (exec_import_path_check(bad[i].path, strlen(bad[i].path), 255, 16, why, sizeof(why)) == 0)
			fail_msg("'%s' accepted", bad[i].path);
		if (!strstr(why, bad[i].why))
			fail_msg("'%s': reason '%s' lacks '%s'", bad[i].path, why, bad[i].why);
	}
	assert_int_equal(exec_import_path_check(long_path, 256, 255, 16, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "longer than 255"));
	assert_int_equal(exec_import_path_check(long_path, 255, 255, 16, why, sizeof(why)), 0);
	assert_int_equal(exec_import_path_check(deep, strlen(deep), 255, 16, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "deeper than 16"));
	assert_int_equal(exec_import_path_check(deep, strlen(deep), 255, 17, why, sizeof(why)), 0);
	/* A NUL inside the given length is not a name character either. */
	assert_int_equal(exec_import_path_check("a\0b", 3, 255, 16, why, sizeof(why)), -1);
}

static void import_shown__control_bytes_and_length__made_safe(void **state)
{
	(void)state;
	char out[8];
	exec_import_shown(out, sizeof(out), "a\nb\x01", 4);
	assert_string_equal(out, "a?b?");
	exec_import_shown(out, sizeof(out), "abcdefghij", 10);
	assert_string_equal(out, "abcd...");
}

static const struct exec_import_stream_limits lim = {
	.max_bytes = 100, .max_files = 3, .max_dirs = 2, .max_path = 64, .max_depth = 4,
};

/* Parses s[0..len) fed chunk bytes at a time; writes a text trace of the
 * events into trace. Returns 0, or -1 with the error in why. */
static int run(const char *s, size_t len, size_t chunk, char *trace, size_t tsz, char *why, size_t wsz)
{
	struct exec_import_stream ps;
	exec_import_stream_init(&ps, &lim);
	size_t tl = 0;
	trace[0] = '\0';
	size_t pos = 0;
	struct gv_err err;
	for (;;) {
		size_t avail = len - pos < chunk ? len - pos : chunk;
		size_t used = 0;
		struct exec_import_event ev;
		int r = exec_import_stream_next(&ps, s + pos, avail, &used, &ev, &err);
		assert_true(used <= avail);
		pos += used;
		if (r < 0) {
			snprintf(why, wsz, "%.200s", err.msg);
			return -1;
		}
		if (r == 0) {
			if (pos == len)
				break;
			continue;
		}
		int n = 0;
		switch (ev.kind) {
		case EXEC_IMPORT_EV_DIR: n = snprintf(trace + tl, tsz - tl, "D(%s)", ev.path); break;
		case EXEC_IMPORT_EV_FILE:
			n = snprintf(trace + tl, tsz - tl, "F(%s,%llu)", ev.path, (unsigned long long)ev.size);
			break;
		case EXEC_IMPORT_EV_DATA: n = snprintf(trace + tl, tsz - tl, "%.*s", (int)ev.len, ev.data); break;
		case EXEC_IMPORT_EV_FILE_END: n = snprintf(trace + tl, tsz - tl, "|"); break;
		case EXEC_IMPORT_EV_END: n = snprintf(trace + tl, tsz - tl, "E"); break;
		}
		assert_true(n >= 0 && (size_t)n < tsz - tl);
		tl += (size_t)n;
	}
	if (!exec_import_stream_done(&ps)) {
		snprintf(why, wsz, "not done");
		return -1;
	}
	return 0;
}

static void import_stream__valid_stream__same_events_whole_or_bytewise(void **state)
{
	(void)state;
	static const char s[] = "d data\nf 5 data/a.in\nhello"
				"f 0 data/empty\n"
				"d data/sample\nf 3 problem.yaml\nx\ny"
				"e 3 8\n";
	char t1[512], t2[512], t3[512], why[256];
	assert_int_equal(run(s, sizeof(s) - 1, sizeof(s), t1, sizeof(t1), why, sizeof(why)), 0);
	assert_string_equal(t1, "D(data)F(data/a.in,5)hello|F(data/empty,0)|D(data/sample)F(problem.yaml,3)x\ny|E");
	assert_int_equal(run(s, sizeof(s) - 1, 1, t2, sizeof(t2), why, sizeof(why)), 0);
	/* Byte by byte, data comes in pieces: compare without the pieces. */
	assert_int_equal(run(s, sizeof(s) - 1, 7, t3, sizeof(t3), why, sizeof(why)), 0);
	assert_string_equal(t1, t2);
	assert_string_equal(t1, t3);
}

static void import_stream__breaches__are_errors(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		const char *why;
	} bad[] = {
		{ "x a\ne 0 0\n", "unknown record kind" },
		{ "d\ne 0 0\n", "bad record header" },
		{ "f 05 a\nhelloe 1 5\n", "bad file size" },
		{ "f -1 a\ne 0 0\n", "bad file size" },
		{ "f 99999999999999999999999 a\n", "bad file size" },
		{ "f 101 a\n", "more than 100 bytes" },
		{ "f 60 a\n", "" }, /* ends early: not done */
		{ "f 1 a\nxf 1 b\nxf 1 c\nxf 1 d\nx", "more than 3 files" },
		{ "d a\nd b\nd c\n", "more than 2 folders" },
		{ "f 1 ../x\nx", "leaves the package" },
		{ "f 1 /etc/x\nx", "absolute" },
		{ "d a/b/c/d/e\n", "deeper than 4" },
		{ "f 1 a\nxe 1 2\n", "counts do not match" },
		{ "f 1 a\nxe 1 1\nd b\n", "after the end" },
		{ "e 0 0 \n", "bad end record" },
		{ "d a\0b\n", "bad or overlong" },
		{ "f 1 a\nx", "" }, /* no end record */
	};
	char trace[512], why[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = strlen(bad[i].s);
		if (strstr(bad[i].why, "overlong"))
			len = 6; /* "d a\0b\n": the NUL is inside */
		for (size_t chunk = 1; chunk <= 64; chunk *= 64) {
			why[0] = '\0';
			if (run(bad[i].s, len, chunk, trace, sizeof(trace), why, sizeof(why)) == 0)
				fail_msg("stream %zu accepted", i);
			if (!strstr(why, bad[i].why))
				fail_msg("stream %zu: '%s' lacks '%s'", i, why, bad[i].why);
		}
	}
	/* A header line longer than any legal one never ends. */
	char *big = malloc(EXEC_IMPORT_HEADER_MAX + 10);
	assert_non_null(big);
	memset(big, 'a', EXEC_IMPORT_HEADER_MAX + 10);
	big[0] = 'd';
	big[1] = ' ';
	assert_int_equal(run(big, EXEC_IMPORT_HEADER_MAX + 10, 4096, trace, sizeof(trace), why, sizeof(why)), -1);
	assert_non_null(strstr(why, "overlong"));
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(import_path__good_paths__accepted),
		cmocka_unit_test(import_path__bad_paths__refused_with_the_reason),
		cmocka_unit_test(import_shown__control_bytes_and_length__made_safe),
		cmocka_unit_test(import_stream__valid_stream__same_events_whole_or_bytewise),
		cmocka_unit_test(import_stream__breaches__are_errors),
	};
	return cmocka_run_group_tests_name("import_stream", tests, NULL, NULL);
}
