/* Unit tests of the pure parts of stored problems (issue 6) and of the
 * test-data cache on a real temporary folder: stored-path rules, the
 * cache's hash check, atomic store, hard-link hit and LRU eviction, and the
 * feedback policy the frontend applies before any GET shows a result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/feedback.h"
#include "executor/problems/problem_store.h"
#include "executor/problems/testdata_cache.h"
#include "frontend/api_problems.h"
#include "tests/support/testutil.h"

static void problems__path_rules__table(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		bool ok;
	} t[] = {
		{ "problem.yaml", true },
		{ "data/secret/group1/01.in", true },
		{ "output_validators/v/validate.cpp", true },
		{ "a+b/x-y_z.ans", true },
		{ "", false },
		{ "/etc/passwd", false },
		{ "data/../../x", false },
		{ "..", false },
		{ "./problem.yaml", false },
		{ "data//x", false },
		{ "data/", false },
		{ "data/with space", false },
		{ "data/new\nline", false },
		{ "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/A/B/C/D/E/F/G", false }, /* 33 deep */
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (exec_problem_path_ok(t[i].path) != t[i].ok)
			fail_msg("path '%s': expected %s", t[i].path, t[i].ok ? "ok" : "refused");
	}
}

static void hex_of(const char *data, size_t len, char out[EXEC_SHA256_HEX])
{
	unsigned char h[EXEC_SHA256_LEN];
	crypto_hash_sha256(h, (const unsigned char *)data, len);
	exec_sha256_hex(h, out);
}

static char tmpdir[64];

static int cache_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gavel-problems-unit.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int cache_teardown(void **state)
{
	(void)state;
	test_rm_rf(tmpdir);
	return 0;
}

static const char *TENANT = "00000000-0000-4000-8000-000000000001";

static void cache__put_then_link__hit_with_same_bytes(void **state)
{
	(void)state;
	char dir[128], pkg[128], hex[EXEC_SHA256_HEX];
	snprintf(dir, sizeof(dir), "%s/cache", tmpdir);
	snprintf(pkg, sizeof(pkg), "%s/pkg", tmpdir);
	assert_int_equal(mkdir(pkg, 0700), 0);
	struct exec_testdata_cache c;
	struct gv_err err;
	assert_int_equal(exec_testdata_cache_init(&c, dir, 1 << 20, &err), 0);
	const char *data = "1 2\n";
	hex_of(data, 4, hex);
	int pfd = open(pkg, O_RDONLY | O_DIRECTORY);
	assert_true(pfd >= 0);
	assert_int_equal(exec_testdata_cache_link(&c, TENANT, hex, pfd, "a.in", &err), 0); /* miss */
	assert_int_equal(exec_testdata_cache_put(&c, TENANT, hex, data, 4, &err), 0);
	assert_int_equal(exec_testdata_cache_link(&c, TENANT, hex, pfd, "a.in", &err), 1); /* hit */
	char buf[16] = "";
	int fd = openat(pfd, "a.in", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 4);
	close(fd);
	assert_memory_equal(buf, data, 4);
	assert_int_equal(c.hits, 1);
	assert_int_equal(c.misses, 1);
	/* A tenant is a folder of its own: another tenant misses. */
	assert_int_equal(exec_testdata_cache_link(&c, "00000000-0000-4000-8000-000000000002", hex, pfd, "b.in", &err), 0);
	close(pfd);
	exec_testdata_cache_fini(&c);
}

static void cache__wrong_content__refused(void **state)
{
	(void)state;
	char dir[128], hex[EXEC_SHA256_HEX];
	snprintf(dir, sizeof(dir), "%s/cache2", tmpdir);
	struct exec_testdata_cache c;
	struct gv_err err;
	assert_int_equal(exec_testdata_cache_init(&c, dir, 1 << 20, &err), 0);
	hex_of("right", 5, hex);
	assert_int_equal(exec_testdata_cache_put(&c, TENANT, hex, "wrong", 5, &err), -1);
	assert_int_equal(err.code, GV_EPROTO);
	char path[256];
	snprintf(path, sizeof(path), "%s/%s/%s", dir, TENANT, hex);
	assert_int_not_equal(access(path, F_OK), 0);
	/* Names that could leave the cache are refused. */
	assert_int_equal(exec_testdata_cache_put(&c, "../x", hex, "right", 5, &err), -1);
	assert_int_equal(exec_testdata_cache_put(&c, TENANT, "../../etc", "right", 5, &err), -1);
	exec_testdata_cache_fini(&c);
}

static void cache__over_cap__evicts_least_recently_used(void **state)
{
	(void)state;
	char dir[128], pkg[128];
	snprintf(dir, sizeof(dir), "%s/cache3", tmpdir);
	snprintf(pkg, sizeof(pkg), "%s/pkg3", tmpdir);
	assert_int_equal(mkdir(pkg, 0700), 0);
	struct exec_testdata_cache c;
	struct gv_err err;
	/* Room for two 100-byte files. */
	assert_int_equal(exec_testdata_cache_init(&c, dir, 250, &err), 0);
	char data[3][100], hex[3][EXEC_SHA256_HEX];
	for (int i = 0; i < 3; i++) {
		memset(data[i], 'a' + i, sizeof(data[i]));
		hex_of(data[i], sizeof(data[i]), hex[i]);
	}
	assert_int_equal(exec_testdata_cache_put(&c, TENANT, hex[0], data[0], 100, &err), 0);
	assert_int_equal(exec_testdata_cache_put(&c, TENANT, hex[1], data[1], 100, &err), 0);
	/* Make 0 older than 1, then use 0: 1 becomes the least recent. */
	char p0[256], p1[256];
	snprintf(p0, sizeof(p0), "%s/%s/%s", dir, TENANT, hex[0]);
	snprintf(p1, sizeof(p1), "%s/%s/%s", dir, TENANT, hex[1]);
	struct timespec old[2] = { { time(NULL) - 100, 0 }, { time(NULL) - 100, 0 } };
	struct timespec older[2] = { { time(NULL) - 200, 0 }, { time(NULL) - 200, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, p0, older, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, p1, old, 0), 0);
	int pfd = open(pkg, O_RDONLY | O_DIRECTORY);
	assert_int_equal(exec_testdata_cache_link(&c, TENANT, hex[0], pfd, "x", &err), 1);
	close(pfd);
	assert_int_equal(exec_testdata_cache_put(&c, TENANT, hex[2], data[2], 100, &err), 0);
	assert_int_equal(access(p0, F_OK), 0);
	assert_int_not_equal(access(p1, F_OK), 0);
	assert_int_equal(c.evicted, 1);
	assert_int_equal(exec_testdata_cache_trim(&c, &err), 200);
	exec_testdata_cache_fini(&c);
}

static json_t *result_fixture(void)
{
	return json_pack("{s:{s:s},s:[{s:b,s:s,s:{s:s,s:s,s:s,s:{s:i}}},{s:b,s:s,s:{s:s,s:s,s:s}}]}", "problem", "id",
			 "p", "tests", "sample", 1, "message", "expected 3", "feedback", "input", "1 2", "expected",
			 "3", "output", "4", "diff", "line", 1, "sample", 0, "message", "expected 7", "feedback",
			 "input", "3 4", "expected", "7", "output", "8");
}

static void feedback__default_policy__samples_only(void **state)
{
	(void)state;
	json_t *r = result_fixture();
	gv_feedback_filter(r, NULL);
	json_t *t0 = json_array_get(json_object_get(r, "tests"), 0), *t1 = json_array_get(json_object_get(r, "tests"), 1);
	assert_non_null(json_object_get(json_object_get(t0, "feedback"), "input"));
	assert_non_null(json_object_get(json_object_get(t0, "feedback"), "diff"));
	assert_string_equal(json_string_value(json_object_get(t0, "message")), "expected 3");
	/* Secret: nothing, and the checker message (it quotes the answer) blanked. */
	assert_null(json_object_get(t1, "feedback"));
	assert_string_equal(json_string_value(json_object_get(t1, "message")), "");
	json_decref(r);
}

static void feedback__policy_from_query__applied(void **state)
{
	(void)state;
	json_t *pol;
	struct fe_apierr e;
	assert_int_equal(fe_problem_policy_from_query("none", "output,diff", &pol, &e), 0);
	char *text = json_dumps(pol, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(pol);
	assert_string_equal(text, "{\"sample\":[],\"secret\":[\"output\",\"diff\"]}");
	json_t *r = result_fixture();
	gv_feedback_filter(r, text);
	free(text);
	json_t *t0 = json_array_get(json_object_get(r, "tests"), 0), *t1 = json_array_get(json_object_get(r, "tests"), 1);
	assert_null(json_object_get(t0, "feedback"));
	json_t *fb1 = json_object_get(t1, "feedback");
	assert_non_null(json_object_get(fb1, "output"));
	assert_null(json_object_get(fb1, "input"));
	assert_null(json_object_get(fb1, "expected"));
	assert_string_equal(json_string_value(json_object_get(t1, "message")), "expected 7");
	json_decref(r);
	assert_int_equal(fe_problem_policy_from_query("input,secrets", NULL, &pol, &e), -1);
	assert_int_equal(e.status, 400);
}

static void feedback__not_a_problem_result__untouched(void **state)
{
	(void)state;
	json_t *r = json_pack("{s:[{s:s}]}", "tests", "message", "kept");
	gv_feedback_filter(r, NULL);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(r, "tests"), 0), "message")),
			    "kept");
	json_decref(r);
	/* A malformed policy is the default one. */
	r = result_fixture();
	gv_feedback_filter(r, "{\"sample\": 3}");
	assert_null(json_object_get(json_array_get(json_object_get(r, "tests"), 1), "feedback"));
	json_decref(r);
}

/* A secret test's exit code and signal are a channel for its input (exit
 * with the first input byte): hidden with the output, per test and in the
 * result's own figures when that test decided the verdict. */
static json_t *exit_fixture(const char *second_verdict)
{
	return json_pack("{s:{s:s},s:s,s:i,s:i,s:s,s:[{s:b,s:s,s:i,s:i,s:s},{s:b,s:s,s:i,s:i,s:s}]}", "problem", "id",
			 "p", "verdict", second_verdict, "exit_code", 48, "signal", 0, "message",
			 "test 2: expected 7, got 8", "tests", "sample", 1, "verdict", "AC", "exit_code", 0, "signal",
			 0, "message", "", "sample", 0, "verdict", second_verdict, "exit_code", 48, "signal", 6,
			 "message", "expected 7, got 8");
}

static void feedback__secret_exit_code__hidden_everywhere(void **state)
{
	(void)state;
	json_t *r = exit_fixture("WA");
	gv_feedback_filter(r, NULL);
	json_t *t0 = json_array_get(json_object_get(r, "tests"), 0), *t1 = json_array_get(json_object_get(r, "tests"), 1);
	assert_true(json_is_integer(json_object_get(t0, "exit_code")));
	assert_true(json_is_null(json_object_get(t1, "exit_code")));
	assert_true(json_is_null(json_object_get(t1, "signal")));
	assert_string_equal(json_string_value(json_object_get(t1, "verdict")), "WA");
	/* The secret test decided the verdict: the result's own figures too. */
	assert_true(json_is_null(json_object_get(r, "exit_code")));
	assert_true(json_is_null(json_object_get(r, "signal")));
	assert_string_equal(json_string_value(json_object_get(r, "message")), "");
	json_decref(r);

	/* Granted "output" for secret tests: the exit code is the program's
	 * own saying, shown with its output. */
	r = exit_fixture("RE");
	gv_feedback_filter(r, "{\"sample\":[],\"secret\":[\"output\"]}");
	t1 = json_array_get(json_object_get(r, "tests"), 1);
	assert_int_equal(json_integer_value(json_object_get(t1, "exit_code")), 48);
	assert_int_equal(json_integer_value(json_object_get(r, "exit_code")), 48);
	assert_string_equal(json_string_value(json_object_get(r, "message")), "");
	json_decref(r);

	/* Keys the policy does not know are dropped even where everything is
	 * granted, and a test without a readable verdict hides the result's
	 * own figures (which test decided cannot be told). */
	r = exit_fixture("WA");
	t0 = json_array_get(json_object_get(r, "tests"), 0);
	json_object_set_new(t0, "feedback", json_pack("{s:s,s:s}", "input", "1 2", "answer_file", "3"));
	json_object_del(json_array_get(json_object_get(r, "tests"), 1), "verdict");
	json_object_set_new(t0, "verdict", json_string("AC"));
	gv_feedback_filter(r, NULL);
	assert_non_null(json_object_get(json_object_get(t0, "feedback"), "input"));
	assert_null(json_object_get(json_object_get(t0, "feedback"), "answer_file"));
	assert_true(json_is_null(json_object_get(r, "exit_code")));
	json_decref(r);

	/* Every test passed: the last one decided, here the secret one. */
	r = exit_fixture("AC");
	gv_feedback_filter(r, NULL);
	assert_true(json_is_null(json_object_get(r, "exit_code")));
	json_decref(r);

	/* A sample decided (the secret one was skipped): its figures show. */
	r = exit_fixture("SKIPPED");
	json_t *tests = json_object_get(r, "tests");
	json_object_set_new(json_array_get(tests, 0), "verdict", json_string("WA"));
	json_object_set_new(json_array_get(tests, 0), "exit_code", json_integer(3));
	json_object_set_new(r, "exit_code", json_integer(3));
	gv_feedback_filter(r, NULL);
	assert_int_equal(json_integer_value(json_object_get(r, "exit_code")), 3);
	assert_string_equal(json_string_value(json_object_get(r, "message")), "test 2: expected 7, got 8");
	json_decref(r);
}

/* A test's output and its exact-bytes twin go together: hidden for a
 * secret test, shown for a sample (the default policy). */
static void feedback__output_twins__follow_their_text(void **state)
{
	(void)state;
	json_t *r = exit_fixture("WA");
	json_t *tests = json_object_get(r, "tests");
	for (size_t i = 0; i < 2; i++) {
		json_object_set_new(json_array_get(tests, i), "stdout", json_string("\xef\xbf\xbd"));
		json_object_set_new(json_array_get(tests, i), "stdout_b64", json_string("/w=="));
	}
	json_object_set_new(r, "stdout", json_string("x"));
	json_object_set_new(r, "stdout_b64", json_string("AA=="));
	json_object_set_new(r, "stderr_b64", json_string("AA=="));
	gv_feedback_filter(r, NULL);
	json_t *t0 = json_array_get(tests, 0), *t1 = json_array_get(tests, 1);
	assert_string_equal(json_string_value(json_object_get(t0, "stdout_b64")), "/w==");
	assert_non_null(json_object_get(t0, "stdout"));
	assert_null(json_object_get(t1, "stdout"));
	assert_null(json_object_get(t1, "stdout_b64"));
	/* The secret test decided: the result's own output goes too. */
	assert_null(json_object_get(r, "stdout"));
	assert_null(json_object_get(r, "stdout_b64"));
	assert_null(json_object_get(r, "stderr_b64"));
	json_decref(r);
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(problems__path_rules__table),
		cmocka_unit_test(cache__put_then_link__hit_with_same_bytes),
		cmocka_unit_test(cache__wrong_content__refused),
		cmocka_unit_test(cache__over_cap__evicts_least_recently_used),
		cmocka_unit_test(feedback__default_policy__samples_only),
		cmocka_unit_test(feedback__policy_from_query__applied),
		cmocka_unit_test(feedback__not_a_problem_result__untouched),
		cmocka_unit_test(feedback__secret_exit_code__hidden_everywhere),
		cmocka_unit_test(feedback__output_twins__follow_their_text),
	};
	return cmocka_run_group_tests_name("problems", tests, cache_setup, cache_teardown);
}
