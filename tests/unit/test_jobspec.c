/* Unit tests of the job message format (common/jobspec.c): a table of
 * refused requests with the field each error names, accepted requests with
 * their parsed values, the canonical round trip, the size bounds, and the
 * result builders. */
#include "common/jobspec.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void jobspec__refused__names_the_field(void **state)
{
	(void)state;
	static const struct {
		const char *json, *want;
	} cases[] = {
		{ "[]", "expected object" },
		{ "{\"files\":[{\"name\":\"a.c\",\"content\":\"\"}]}", "language" },
		{ "{\"language\":\"C!\",\"files\":[{\"name\":\"a.c\",\"content\":\"\"}]}", "language" },
		{ "{\"language\":\"c\"}", "files" },
		{ "{\"language\":\"c\",\"files\":[]}", "files" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"../x\",\"content\":\"\"}]}", "files[0].name" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"job\",\"content\":\"\"}]}", "files[0].name" },
		{ "{\"language\":\"c\",\"files\":[{\"content\":\"\"}]}", "'name': required" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":null,\"content\":\"\"}]}", "name" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"},{\"name\":\".gavel-unpack\","
		  "\"content\":\"\"}]}",
		  "files[1].name" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"additional_files_b64\":\"UE*=\"}",
		  "additional_files_b64" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"additional_files_b64\":[]}",
		  "additional_files_b64" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"},{\"name\":\"a\",\"content\":\"\"}]}",
		  "twice" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":1}]}", "content" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\",\"x\":1}]}", "x" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"bogus\":1}", "bogus" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"tests\":[]}", "tests" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"tests\":[{\"input\":\"1\"}]}",
		  "expected" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"checker\":{\"mode\":\"fuzzy\"}}",
		  "checker.mode" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"limits\":{\"time_ms\":-1}}",
		  "time_ms" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"limits\":{\"cpu\":1}}", "cpu" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"gpus\":99}", "gpus" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"return_output\":1}",
		  "return_output" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"args\":\"1 2\"}", "args" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"args\":[1]}", "args[0]" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"args\":[\"a\\nb\"]}", "args[0]" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"compile_options\":[\"-O0\",2]}",
		  "compile_options[1]" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"stderr_to_stdout\":\"yes\"}",
		  "stderr_to_stdout" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"problem_id\":\"p\",\"args\":[\"1\"]}",
		  "problem_id" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"stdin\":\"\",\"stdin_b64\":\"AA==\"}",
		  "not both" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"stdin_b64\":\"A!==\"}",
		  "stdin_b64" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],\"stdin_b64\":7}", "stdin_b64" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],"
		  "\"tests\":[{\"input_b64\":\"AA==\"}]}",
		  "expected" },
		{ "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],"
		  "\"tests\":[{\"expected\":\"1\",\"expected_b64\":\"MQ==\"}]}",
		  "tests[0].expected" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gv_jobspec s;
		struct gv_err err;
		gv_err_clear(&err);
		int rc = gv_jobspec_parse(cases[i].json, strlen(cases[i].json), &s, &err);
		gv_jobspec_free(&s);
		if (rc != -1)
			fail_msg("case %zu accepted: %s", i, cases[i].json);
		if (!strstr(err.msg, cases[i].want))
			fail_msg("case %zu: message '%s' does not name '%s'", i, err.msg, cases[i].want);
	}
}

static void jobspec__full_request__parsed(void **state)
{
	(void)state;
	const char *j = "{\"language\":\"cpp\",\"files\":[{\"name\":\"main.cpp\",\"content\":\"int main(){}\"},"
			"{\"name\":\"util.h\",\"content\":\"//\"}],\"stdin\":null,"
			"\"tests\":[{\"input\":\"1 2\\n\",\"expected\":\"3\\n\"},{\"expected\":\"x\"}],"
			"\"checker\":{\"mode\":\"exact\",\"flags\":\"ignore_trailing_whitespace\"},"
			"\"limits\":{\"time_ms\":1500,\"memory_mb\":0},\"return_output\":true,\"gpus\":0,"
			"\"callback_url\":\"https://example.com/cb\",\"problem_id\":null}";
	struct gv_jobspec s;
	struct gv_err err;
	assert_int_equal(gv_jobspec_parse(j, strlen(j), &s, &err), 0);
	assert_string_equal(s.language, "cpp");
	assert_int_equal(s.n_files, 2);
	assert_string_equal(s.files[1].name, "util.h");
	assert_int_equal(s.files[0].len, 12);
	assert_true(s.has_tests);
	assert_int_equal(s.n_tests, 2);
	assert_string_equal(s.tests[0].input, "1 2\n");
	assert_string_equal(s.tests[1].input, "");
	assert_int_equal(s.checker_mode, GV_CHECKER_EXACT);
	assert_string_equal(s.checker_flags, "ignore_trailing_whitespace");
	assert_int_equal(s.time_ms, 1500);
	assert_int_equal(s.memory_mb, 0);
	assert_true(s.return_output);
	assert_string_equal(s.callback_url, "https://example.com/cb");
	assert_null(s.problem_id);
	assert_string_equal(s.stdin_data, "");

	/* Canonical form round-trips to the same spec and the same text. */
	size_t len1 = 0, len2 = 0;
	char *t1 = gv_jobspec_to_text(&s, &len1, &err);
	assert_non_null(t1);
	struct gv_jobspec s2;
	assert_int_equal(gv_jobspec_parse(t1, len1, &s2, &err), 0);
	char *t2 = gv_jobspec_to_text(&s2, &len2, &err);
	assert_non_null(t2);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	gv_jobspec_free(&s2);
	gv_jobspec_free(&s);
	gv_jobspec_free(&s); /* idempotent */
}

static void jobspec__plain_run__no_tests(void **state)
{
	(void)state;
	const char *j = "{\"language\":\"python3\",\"files\":[{\"name\":\"a.py\",\"content\":\"print(1)\"}],"
			"\"stdin\":\"5\\n\"}";
	struct gv_jobspec s;
	struct gv_err err;
	assert_int_equal(gv_jobspec_parse(j, strlen(j), &s, &err), 0);
	assert_false(s.has_tests);
	assert_int_equal(s.stdin_len, 2);
	assert_int_equal(s.checker_mode, GV_CHECKER_TOKENS);
	assert_null(s.checker_flags);
	assert_int_equal(s.n_args, 0);
	gv_jobspec_free(&s);
}

/* args, compile_options, stderr_to_stdout and stack_kb survive the
 * canonical form. */
static void jobspec__commands__round_trip(void **state)
{
	(void)state;
	const char *j = "{\"language\":\"c\",\"files\":[{\"name\":\"a.c\",\"content\":\"\"}],"
			"\"args\":[\"1\",\"two words\",\"\"],\"compile_options\":[\"-O0\"],\"stderr_to_stdout\":true,"
			"\"limits\":{\"stack_kb\":8192}}";
	struct gv_jobspec s, t;
	struct gv_err err;
	assert_int_equal(gv_jobspec_parse(j, strlen(j), &s, &err), 0);
	size_t len;
	char *text = gv_jobspec_to_text(&s, &len, &err);
	assert_non_null(text);
	assert_int_equal(gv_jobspec_parse(text, len, &t, &err), 0);
	assert_int_equal(t.n_args, 3);
	assert_string_equal(t.args[1], "two words");
	assert_string_equal(t.args[2], "");
	assert_int_equal(t.n_compile_options, 1);
	assert_string_equal(t.compile_options[0], "-O0");
	assert_true(t.stderr_to_stdout);
	assert_int_equal(t.stack_kb, 8192);
	free(text);
	gv_jobspec_free(&s);
	gv_jobspec_free(&t);
}

static char *big_request(size_t source_len, size_t stdin_len)
{
	char *buf = malloc(source_len + stdin_len + 256);
	size_t n = (size_t)sprintf(buf, "{\"language\":\"c\",\"files\":[{\"name\":\"a.c\",\"content\":\"");
	memset(buf + n, 'a', source_len);
	n += source_len;
	n += (size_t)sprintf(buf + n, "\"}],\"stdin\":\"");
	memset(buf + n, 'b', stdin_len);
	n += stdin_len;
	strcpy(buf + n, "\"}");
	return buf;
}

static void jobspec__sizes__bounded(void **state)
{
	(void)state;
	struct gv_jobspec s;
	struct gv_err err;
	char *ok = big_request(GV_JOBSPEC_SOURCE_MAX, GV_JOBSPEC_DATA_MAX);
	assert_int_equal(gv_jobspec_parse(ok, strlen(ok), &s, &err), 0);
	gv_jobspec_free(&s);
	free(ok);
	char *src = big_request(GV_JOBSPEC_SOURCE_MAX + 1, 0);
	assert_int_equal(gv_jobspec_parse(src, strlen(src), &s, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	gv_jobspec_free(&s);
	free(src);
	char *data = big_request(1, GV_JOBSPEC_DATA_MAX + 1);
	assert_int_equal(gv_jobspec_parse(data, strlen(data), &s, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	gv_jobspec_free(&s);
	free(data);
}

/* Any bytes in stdin, inputs and answers: taken from the _b64 forms,
 * written back as strings where they are text and as _b64 where not, and
 * the decoded size counts against the same 16 MiB. */
static void jobspec__b64_bytes__round_trip_exactly(void **state)
{
	(void)state;
	static const char req[] = "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"x\"}],"
				  "\"stdin_b64\":\"AP8KYQ==\",\"tests\":[{\"input_b64\":\"aGk=\",\"expected_b64\":\"AP/+\"},"
				  "{\"input\":\"t\",\"expected\":\"u\"}]}";
	struct gv_jobspec s;
	struct gv_err err;
	assert_int_equal(gv_jobspec_parse(req, strlen(req), &s, &err), 0);
	assert_int_equal(s.stdin_len, 4);
	assert_memory_equal(s.stdin_data, "\0\xff\na", 4);
	assert_int_equal(s.tests[0].input_len, 2);
	assert_string_equal(s.tests[0].input, "hi");
	assert_int_equal(s.tests[0].expected_len, 3);
	assert_memory_equal(s.tests[0].expected, "\0\xff\xfe", 3);
	json_t *j = gv_jobspec_to_json(&s);
	assert_non_null(j);
	assert_null(json_object_get(j, "stdin"));
	assert_string_equal(json_string_value(json_object_get(j, "stdin_b64")), "AP8KYQ==");
	json_t *t0 = json_array_get(json_object_get(j, "tests"), 0);
	assert_string_equal(json_string_value(json_object_get(t0, "input")), "hi");
	assert_null(json_object_get(t0, "input_b64"));
	assert_string_equal(json_string_value(json_object_get(t0, "expected_b64")), "AP/+");
	struct gv_jobspec back;
	assert_int_equal(gv_jobspec_from_json(j, &back, &err), 0);
	assert_int_equal(back.stdin_len, 4);
	assert_memory_equal(back.stdin_data, s.stdin_data, 4);
	assert_memory_equal(back.tests[0].expected, s.tests[0].expected, 3);
	assert_string_equal(back.tests[1].expected, "u");
	gv_jobspec_free(&back);
	json_decref(j);
	gv_jobspec_free(&s);

	/* 16 MiB + 1 decoded bytes: refused like the string form. */
	size_t n = GV_JOBSPEC_DATA_MAX + 1, enc = (n + 2) / 3 * 4;
	char *big = malloc(enc + 200);
	assert_non_null(big);
	int k = snprintf(big, 200, "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"x\"}],\"stdin_b64\":\"");
	memset(big + k, 'A', enc);
	strcpy(big + k + enc, "\"}");
	assert_int_equal(gv_jobspec_parse(big, strlen(big), &s, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	gv_jobspec_free(&s);
	free(big);
}

/* The archive of additional files: decoded (never opened), bounded by its
 * own 10 MiB and by the data budget it shares with stdin and the tests,
 * written back in base64; "" is absent. */
static void jobspec__additional_files__bounded_and_round_trip(void **state)
{
	(void)state;
	static const char req[] = "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"x\"}],"
				  "\"additional_files_b64\":\"UEsFBgAA\"}";
	struct gv_jobspec s;
	struct gv_err err;
	assert_int_equal(gv_jobspec_parse(req, strlen(req), &s, &err), 0);
	assert_int_equal(s.additional_files_len, 6);
	assert_memory_equal(s.additional_files, "PK\x05\x06\0\0", 6);
	json_t *j = gv_jobspec_to_json(&s);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "additional_files_b64")), "UEsFBgAA");
	struct gv_jobspec back;
	assert_int_equal(gv_jobspec_from_json(j, &back, &err), 0);
	assert_int_equal(back.additional_files_len, 6);
	assert_memory_equal(back.additional_files, s.additional_files, 6);
	gv_jobspec_free(&back);
	json_decref(j);
	gv_jobspec_free(&s);

	static const char empty[] = "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"x\"}],"
				    "\"additional_files_b64\":\"\"}";
	assert_int_equal(gv_jobspec_parse(empty, strlen(empty), &s, &err), 0);
	assert_null(s.additional_files);
	j = gv_jobspec_to_json(&s);
	assert_true(json_is_null(json_object_get(j, "additional_files_b64")));
	json_decref(j);
	gv_jobspec_free(&s);

	/* 10 MiB + 1 decoded: over the archive's own cap. */
	size_t n = GV_JOBSPEC_ADDITIONAL_FILES_MAX + 1, enc = (n + 2) / 3 * 4;
	char *big = malloc(enc + 400);
	assert_non_null(big);
	int k = snprintf(big, 200, "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"x\"}],"
			 "\"additional_files_b64\":\"");
	memset(big + k, 'A', enc);
	strcpy(big + k + enc, "\"}");
	assert_int_equal(gv_jobspec_parse(big, strlen(big), &s, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	assert_non_null(strstr(err.msg, "additional_files_b64"));
	gv_jobspec_free(&s);
	/* Exactly 10 MiB fits alone ... */
	n = GV_JOBSPEC_ADDITIONAL_FILES_MAX;
	enc = (n + 2) / 3 * 4;
	memset(big + k, 'A', enc);
	strcpy(big + k + enc, "\"}");
	/* (n is not a multiple of 3: the last group is padded) */
	if (n % 3 == 1)
		memcpy(big + k + enc - 2, "==", 2);
	else if (n % 3 == 2)
		big[k + enc - 1] = '=';
	assert_int_equal(gv_jobspec_parse(big, strlen(big), &s, &err), 0);
	assert_int_equal(s.additional_files_len, n);
	gv_jobspec_free(&s);
	free(big);
	/* ... but not beside 8 MiB of stdin: one data budget. */
	size_t sn = 8u * 1024 * 1024, senc = (sn + 2) / 3 * 4;
	big = malloc(enc + senc + 400);
	assert_non_null(big);
	k = snprintf(big, 200, "{\"language\":\"c\",\"files\":[{\"name\":\"a\",\"content\":\"x\"}],\"stdin_b64\":\"");
	memset(big + k, 'A', senc);
	if (sn % 3 == 1)
		memcpy(big + k + senc - 2, "==", 2);
	else if (sn % 3 == 2)
		big[k + senc - 1] = '=';
	k += (int)senc;
	k += sprintf(big + k, "\",\"additional_files_b64\":\"");
	memset(big + k, 'A', enc);
	if (n % 3 == 1)
		memcpy(big + k + enc - 2, "==", 2);
	else if (n % 3 == 2)
		big[k + enc - 1] = '=';
	strcpy(big + k + enc, "\"}");
	assert_int_equal(gv_jobspec_parse(big, strlen(big), &s, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	assert_non_null(strstr(err.msg, "16 MiB"));
	gv_jobspec_free(&s);
	free(big);
}

static void result__judge__has_tests_and_lossy_output(void **state)
{
	(void)state;
	struct gv_result_test t[2] = {
		{ .verdict = "AC", .time_ms = 5, .out = "ok\n", .out_len = 3 },
		{ .verdict = "WA", .message = "line 1", .out = "\xff", .out_len = 1 },
	};
	struct gv_result r = { .kind = "judge", .verdict = "WA", .status = "OK", .tests = t, .n_tests = 2 };
	json_t *j = gv_result_to_json(&r);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "WA");
	json_t *tests = json_object_get(j, "tests");
	assert_int_equal(json_array_size(tests), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(tests, 1), "stdout")), "\xef\xbf\xbd");
	assert_null(json_object_get(j, "stdout"));
	/* Text output has no twin; invalid UTF-8 has one. */
	assert_null(json_object_get(json_array_get(tests, 0), "stdout_b64"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(tests, 1), "stdout_b64")), "/w==");
	json_decref(j);

	/* NUL bytes in output: jsonb refuses \u0000, so they never reach the
	 * result text. */
	struct gv_result_test tn = { .verdict = "AC", .out = "a\0b\0", .out_len = 4 };
	struct gv_result rn = { .kind = "judge", .verdict = "AC", .status = "OK", .tests = &tn, .n_tests = 1,
				.has_output = true, .out = "\0x\xff", .out_len = 3, .err_out = "\0", .err_len = 1,
				.compile_output = "w\0", .compile_output_len = 2 };
	j = gv_result_to_json(&rn);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "tests"), 0), "stdout")),
			    "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(j, "stdout")), "\xef\xbf\xbdx\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(j, "stderr")), "\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(j, "compile_output")), "w\xef\xbf\xbd");
	char *text = json_dumps(j, JSON_COMPACT);
	assert_non_null(text);
	assert_null(strstr(text, "\\u0000"));
	free(text);
	/* ... but their exact bytes are kept in the _b64 twins. */
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "tests"), 0), "stdout_b64")),
			    "YQBiAA==");
	assert_string_equal(json_string_value(json_object_get(j, "stdout_b64")), "AHj/");
	assert_string_equal(json_string_value(json_object_get(j, "stderr_b64")), "AA==");
	assert_string_equal(json_string_value(json_object_get(j, "compile_output_b64")), "dwA=");
	/* Too large to store with them: the twins go, the text stays. */
	gv_result_drop_twins(j);
	assert_null(json_object_get(j, "stdout_b64"));
	assert_null(json_object_get(j, "stderr_b64"));
	assert_null(json_object_get(j, "compile_output_b64"));
	assert_null(json_object_get(json_array_get(json_object_get(j, "tests"), 0), "stdout_b64"));
	assert_string_equal(json_string_value(json_object_get(j, "stderr")), "\xef\xbf\xbd");
	json_decref(j);

	j = gv_result_internal_error(NULL, "boom");
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "IE");
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "run");
	assert_string_equal(json_string_value(json_object_get(j, "message")), "boom");
	json_decref(j);
	assert_true(gv_result_verdict_ok("AC"));
	assert_false(gv_result_verdict_ok("OK"));
	assert_false(gv_result_verdict_ok(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jobspec__refused__names_the_field),
		cmocka_unit_test(jobspec__full_request__parsed),
		cmocka_unit_test(jobspec__plain_run__no_tests),
		cmocka_unit_test(jobspec__commands__round_trip),
		cmocka_unit_test(jobspec__sizes__bounded),
		cmocka_unit_test(jobspec__b64_bytes__round_trip_exactly),
		cmocka_unit_test(jobspec__additional_files__bounded_and_round_trip),
		cmocka_unit_test(result__judge__has_tests_and_lossy_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
