/* Unit tests of a problem package's instructor test suite
 * (executor/judge/problem_suite.c): small packages written into a temporary
 * folder per test (problem.yaml, suite/suite.yaml and the suite's files, no
 * data/), loaded with exec_problem_load: what a good suite gives, group
 * points, exec_suite_test_at over groups, and a table of broken suites that
 * must fail with a message naming suite/suite.yaml (and the line, where
 * there is one). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor/judge/problem.h"
#include "executor/judge/suite_summary.h"
#include "tests/support/testutil.h"

/* ---- temporary packages ------------------------------------------------ */

static char tmp_root[256];

static void put_bytes(const char *rel, const char *text, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
	for (char *s = path + strlen(tmp_root) + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				fail_msg("mkdir %s: %s", path, strerror(errno));
			*s = '/';
		}
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void put(const char *rel, const char *text)
{
	put_bytes(rel, text, strlen(text));
}

static void link_to(const char *rel, const char *target)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
	assert_int_equal(symlink(target, path), 0);
}

static void put_sized(const char *rel, size_t n)
{
	char *buf = malloc(n);
	assert_non_null(buf);
	memset(buf, '#', n);
	put_bytes(rel, buf, n);
	free(buf);
}

static int setup_tmp(void **state)
{
	(void)state;
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/gavel-test-problem-suite.XXXXXX");
	if (!mkdtemp(tmp_root))
		return -1;
	put("problem.yaml", "name: Calc\n");
	put("suite/test_calc.py", "def test_add():\n    pass\n");
	put("suite/test_hidden.py", "def test_big():\n    pass\n");
	put("suite/helper.py", "X = 1\n");
	return 0;
}

static int teardown_tmp(void **state)
{
	(void)state;
	return test_rm_rf(tmp_root) == 0 ? 0 : -1;
}

static int load_tmp(struct exec_problem *p, struct gv_err *err)
{
	return exec_problem_load(p, tmp_root, NULL, err);
}

static void load_ok(struct exec_problem *p)
{
	struct gv_err err;
	if (load_tmp(p, &err) < 0)
		fail_msg("load %s: %s", tmp_root, err.msg);
}

/* ---- good suites ------------------------------------------------------- */

static const char good_suite[] = "framework: pytest\n"
				 "language: python3\n"
				 "time_ms: 1500\n"
				 "memory_mb: 256\n"
				 "support: [helper.py]\n"
				 "groups:\n"
				 "  - file: test_calc.py\n"
				 "    tests:\n"
				 "      - name: test_add\n"
				 "        points: 2\n"
				 "      - name: TestCalc::test_sub[2-3]\n"
				 "  - file: test_hidden.py\n"
				 "    hidden: true\n"
				 "    points: 3\n"
				 "    tests:\n"
				 "      - name: test_big\n"
				 "      - name: test_other\n";

static void suite__good_package__loads_every_field(void **state)
{
	(void)state;
	put("suite/suite.yaml", good_suite);
	struct exec_problem p;
	load_ok(&p);
	const struct exec_suite *s = p.suite;
	assert_non_null(s);
	assert_int_equal(p.type, EXEC_PROBLEM_SCORING);
	assert_int_equal(p.ncases, 0);
	assert_string_equal(s->framework, "pytest");
	assert_string_equal(s->language, "python3");
	assert_int_equal(s->time_ms, 1500);
	assert_int_equal(s->memory_mb, 256);
	assert_int_equal(s->nsupport, 1);
	assert_string_equal(s->support[0], "helper.py");
	assert_int_equal(s->ngroups, 2);
	assert_int_equal(s->ntests, 4);
	assert_true(s->max_score == 6);

	const struct exec_suite_group *g = &s->groups[0];
	assert_string_equal(g->file, "test_calc.py");
	assert_false(g->hidden);
	assert_false(g->has_points);
	assert_int_equal(g->ntests, 2);
	assert_string_equal(g->tests[0].name, "test_add");
	assert_true(g->tests[0].points == 2);
	assert_string_equal(g->tests[1].name, "TestCalc::test_sub[2-3]");
	assert_true(g->tests[1].points == 1); /* the default */

	g = &s->groups[1];
	assert_string_equal(g->file, "test_hidden.py");
	assert_true(g->hidden);
	assert_true(g->has_points);
	assert_true(g->points == 3);
	assert_int_equal(g->ntests, 2);
	assert_string_equal(g->tests[0].name, "test_big");
	assert_true(g->tests[0].points == 0); /* the group's points are all or nothing */
	assert_string_equal(g->tests[1].name, "test_other");
	assert_true(g->tests[1].points == 0);
	exec_problem_free(&p);
	assert_null(p.suite);
}

static void suite__defaults__time_memory_and_no_support(void **state)
{
	(void)state;
	put("suite/suite.yaml", "framework: c\n"
				"language: c\n"
				"groups:\n"
				"  - file: test_calc.py\n"
				"    tests: [{name: adds}]\n");
	struct exec_problem p;
	load_ok(&p);
	assert_non_null(p.suite);
	assert_string_equal(p.suite->framework, "c");
	assert_int_equal(p.suite->time_ms, 2000);
	assert_int_equal(p.suite->memory_mb, 512);
	assert_int_equal(p.suite->nsupport, 0);
	assert_true(p.suite->max_score == 1);
	exec_problem_free(&p);
}

static void suite__every_framework__accepted(void **state)
{
	(void)state;
	static const char *const fw[] = { "pytest", "junit5", "gtest", "c" };
	for (size_t i = 0; i < 4; i++) {
		char yaml[256];
		snprintf(yaml, sizeof(yaml),
			 "framework: %s\nlanguage: x\ngroups:\n  - file: test_calc.py\n    tests: [{name: t}]\n", fw[i]);
		put("suite/suite.yaml", yaml);
		struct exec_problem p;
		load_ok(&p);
		assert_string_equal(p.suite->framework, fw[i]);
		exec_problem_free(&p);
	}
}

static void suite__file_at_its_size_cap__accepted(void **state)
{
	(void)state;
	put_sized("suite/big.py", EXEC_SUITE_FILE_MAX);
	put("suite/suite.yaml", "framework: pytest\nlanguage: python3\nsupport: [big.py]\n"
				"groups:\n  - file: test_calc.py\n    tests: [{name: t}]\n");
	struct exec_problem p;
	load_ok(&p);
	assert_string_equal(p.suite->support[0], "big.py");
	exec_problem_free(&p);
}

static void suite__no_suite_yaml__no_suite(void **state)
{
	(void)state;
	put("data/sample/1.in", "1\n");
	put("data/sample/1.ans", "1\n");
	struct exec_problem p;
	load_ok(&p);
	assert_null(p.suite);
	assert_int_equal(p.ncases, 1);
	exec_problem_free(&p);
}

static void suite__test_at__walks_groups_in_plan_order(void **state)
{
	(void)state;
	put("suite/suite.yaml", good_suite);
	struct exec_problem p;
	load_ok(&p);
	static const struct {
		const char *test, *file;
	} want[] = {
		{ "test_add", "test_calc.py" },
		{ "TestCalc::test_sub[2-3]", "test_calc.py" },
		{ "test_big", "test_hidden.py" },
		{ "test_other", "test_hidden.py" },
	};
	for (size_t i = 0; i < 4; i++) {
		const struct exec_suite_group *g = NULL;
		const struct exec_suite_test *t = exec_suite_test_at(p.suite, i, &g);
		assert_non_null(t);
		assert_non_null(g);
		assert_string_equal(t->name, want[i].test);
		assert_string_equal(g->file, want[i].file);
	}
	const struct exec_suite_group *g = &p.suite->groups[0];
	assert_null(exec_suite_test_at(p.suite, 4, &g));
	assert_null(g);
	g = &p.suite->groups[0];
	assert_null(exec_suite_test_at(p.suite, SIZE_MAX, &g));
	assert_null(g);
	g = &p.suite->groups[0];
	assert_null(exec_suite_test_at(NULL, 0, &g));
	assert_null(g);
	exec_problem_free(&p);
}

/* ---- broken suites ----------------------------------------------------- */

#define HEAD "framework: pytest\nlanguage: python3\n"
#define ONE_GROUP "groups:\n  - file: test_calc.py\n    tests: [{name: t}]\n"

struct bad_case {
	const char *name;
	const char *yaml;
	const char *want; /* a part of the message */
};

static const struct bad_case bad_cases[] = {
	{ "unknown framework", "framework: nose\nlanguage: python3\n" ONE_GROUP,
	  "suite/suite.yaml: framework: pytest, junit5, gtest or c" },
	{ "no framework", "language: python3\n" ONE_GROUP, "suite/suite.yaml: framework:" },
	{ "missing language", "framework: pytest\n" ONE_GROUP, "suite/suite.yaml: language:" },
	{ "empty language", "framework: pytest\nlanguage: ''\n" ONE_GROUP, "suite/suite.yaml: language:" },
	{ "unknown key at the top", HEAD "colour: red\n" ONE_GROUP, "suite/suite.yaml:3: unknown key 'colour'" },
	{ "unknown key in a group", HEAD "groups:\n  - file: test_calc.py\n    hiden: true\n    tests: [{name: t}]\n",
	  "suite/suite.yaml:5: unknown key 'hiden' in a group" },
	{ "unknown key in a test",
	  HEAD "groups:\n  - file: test_calc.py\n    tests:\n      - name: t\n        point: 2\n",
	  "suite/suite.yaml:7: unknown key 'point' in a test" },
	{ "a group without file", HEAD "groups:\n  - tests: [{name: t}]\n", "suite/suite.yaml:4: a group needs a file" },
	{ "a group without tests", HEAD "groups:\n  - file: test_calc.py\n",
	  "suite/suite.yaml:4: group test_calc.py needs a list of tests" },
	{ "a group with an empty list of tests", HEAD "groups:\n  - file: test_calc.py\n    tests: []\n",
	  "suite/suite.yaml:4: group test_calc.py needs a list of tests" },
	{ "a file that does not exist", HEAD "groups:\n  - file: test_nope.py\n    tests: [{name: t}]\n",
	  "suite/suite.yaml:4: suite/test_nope.py" },
	{ "a file name with a slash", HEAD "groups:\n  - file: sub/test_calc.py\n    tests: [{name: t}]\n",
	  "suite/suite.yaml:4: 'sub/test_calc.py' is not a file name" },
	{ "a file name going up", HEAD "groups:\n  - file: ../problem.yaml\n    tests: [{name: t}]\n",
	  "suite/suite.yaml:4: '../problem.yaml' is not a file name" },
	{ "a file name starting with a dot", HEAD "support: [.hidden]\n" ONE_GROUP,
	  "suite/suite.yaml:3: '.hidden' is not a file name" },
	{ "a support file that is a symlink", HEAD "support: [link.py]\n" ONE_GROUP, "suite/suite.yaml:3: suite/link.py" },
	{ "a support file that is a folder", HEAD "support: [folder]\n" ONE_GROUP,
	  "suite/suite.yaml:3: suite/folder" },
	{ "a file over the size cap", HEAD "support: [huge.py]\n" ONE_GROUP,
	  "suite/suite.yaml:3: suite/huge.py is not a regular file of at most" },
	{ "support not a list", HEAD "support: helper.py\n" ONE_GROUP, "suite/suite.yaml:3: support is a list" },
	{ "a test name twice in a group",
	  HEAD "groups:\n  - file: test_calc.py\n    tests:\n      - name: t\n      - name: u\n      - name: t\n",
	  "suite/suite.yaml:8: test t twice in test_calc.py" },
	{ "a test without a name", HEAD "groups:\n  - file: test_calc.py\n    tests:\n      - points: 1\n",
	  "suite/suite.yaml:6: a test needs a name" },
	{ "a test name with a backslash", HEAD "groups:\n  - file: test_calc.py\n    tests:\n      - name: 'a\\b'\n",
	  "suite/suite.yaml:6: a test needs a name" },
	{ "a group file twice",
	  HEAD "groups:\n  - file: test_calc.py\n    tests: [{name: t}]\n  - file: test_calc.py\n    tests: [{name: u}]\n",
	  "suite/suite.yaml:6: test_calc.py is two groups" },
	{ "a support file that is also a test file", HEAD "support: [test_calc.py]\n" ONE_GROUP,
	  "suite/suite.yaml: test_calc.py is both a test file and a support file" },
	{ "a test with points in a group with points",
	  HEAD "groups:\n  - file: test_calc.py\n    points: 2\n    tests:\n      - name: t\n        points: 1\n",
	  "suite/suite.yaml:8: a test of a group with points has none of its own" },
	{ "no points at all",
	  HEAD "groups:\n  - file: test_calc.py\n    tests:\n      - name: t\n        points: 0\n  - file: test_hidden.py\n"
	       "    points: 0\n    tests: [{name: u}]\n",
	  "suite/suite.yaml: the tests carry no points" },
	{ "no groups", HEAD "groups: []\n", "suite/suite.yaml: 1 to 32 groups" },
	{ "groups not a list", HEAD "groups: {file: test_calc.py}\n", "suite/suite.yaml: groups: a list" },
	{ "time_ms below its range", HEAD "time_ms: 99\n" ONE_GROUP, "suite/suite.yaml:3" },
	{ "memory_mb above its range", HEAD "memory_mb: 4097\n" ONE_GROUP, "suite/suite.yaml:3" },
	{ "negative test points", HEAD "groups:\n  - file: test_calc.py\n    tests:\n      - name: t\n        points: -1\n",
	  "suite/suite.yaml:7" },
	{ "hidden not a bool", HEAD "groups:\n  - file: test_calc.py\n    hidden: maybe\n    tests: [{name: t}]\n",
	  "suite/suite.yaml:5" },
	{ "not a map", "- pytest\n", "suite/suite.yaml: not a map" },
};

static void suite__broken_table__fails_naming_file_and_line(void **state)
{
	(void)state;
	link_to("suite/link.py", "helper.py");
	put("suite/folder/x", "x\n");
	put_sized("suite/huge.py", EXEC_SUITE_FILE_MAX + 1);
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		put("suite/suite.yaml", bad_cases[i].yaml);
		struct exec_problem p;
		struct gv_err err = { 0 };
		int rc = load_tmp(&p, &err);
		if (rc == 0)
			fail_msg("%s: loaded", bad_cases[i].name);
		if (!strstr(err.msg, bad_cases[i].want))
			fail_msg("%s: message '%s' lacks '%s'", bad_cases[i].name, err.msg, bad_cases[i].want);
		exec_problem_free(&p);
		assert_null(p.suite);
	}
}

static void suite__groups_over_the_cap__refused(void **state)
{
	(void)state;
	char *yaml = malloc(64 * (EXEC_SUITE_GROUPS_MAX + 1) + 64);
	assert_non_null(yaml);
	for (int n = EXEC_SUITE_GROUPS_MAX; n <= EXEC_SUITE_GROUPS_MAX + 1; n++) {
		size_t o = (size_t)sprintf(yaml, HEAD "groups:\n");
		for (int i = 0; i < n; i++) {
			char file[32];
			snprintf(file, sizeof(file), "suite/test_%02d.py", i);
			put(file, "\n");
			o += (size_t)sprintf(yaml + o, "  - file: test_%02d.py\n    tests: [{name: t}]\n", i);
		}
		put("suite/suite.yaml", yaml);
		struct exec_problem p;
		struct gv_err err = { 0 };
		int rc = load_tmp(&p, &err);
		if (n == EXEC_SUITE_GROUPS_MAX) {
			if (rc != 0)
				fail_msg("%d groups: %s", n, err.msg);
			assert_int_equal(p.suite->ngroups, EXEC_SUITE_GROUPS_MAX);
			assert_true(p.suite->max_score == EXEC_SUITE_GROUPS_MAX);
		} else {
			assert_int_equal(rc, -1);
			assert_int_equal(err.code, GV_ELIMIT);
			assert_non_null(strstr(err.msg, "suite/suite.yaml: 1 to 32 groups"));
		}
		exec_problem_free(&p);
	}
	free(yaml);
}

static void suite__tests_over_the_group_cap__refused(void **state)
{
	(void)state;
	char *yaml = malloc(32 * (EXEC_SUITE_TESTS_MAX + 1) + 128);
	assert_non_null(yaml);
	for (int n = EXEC_SUITE_TESTS_MAX; n <= EXEC_SUITE_TESTS_MAX + 1; n++) {
		size_t o = (size_t)sprintf(yaml, HEAD "groups:\n  - file: test_calc.py\n    tests:\n");
		for (int i = 0; i < n; i++)
			o += (size_t)sprintf(yaml + o, "      - name: t%d\n", i);
		put("suite/suite.yaml", yaml);
		struct exec_problem p;
		struct gv_err err = { 0 };
		int rc = load_tmp(&p, &err);
		if (n == EXEC_SUITE_TESTS_MAX) {
			if (rc != 0)
				fail_msg("%d tests: %s", n, err.msg);
			assert_int_equal(p.suite->ntests, EXEC_SUITE_TESTS_MAX);
		} else {
			assert_int_equal(rc, -1);
			assert_non_null(strstr(err.msg, "suite/suite.yaml:"));
			assert_non_null(strstr(err.msg, "more than 64 tests"));
		}
		exec_problem_free(&p);
	}
	free(yaml);
}

#define TT(f) cmocka_unit_test_setup_teardown(f, setup_tmp, teardown_tmp)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TT(suite__good_package__loads_every_field),
		TT(suite__defaults__time_memory_and_no_support),
		TT(suite__every_framework__accepted),
		TT(suite__file_at_its_size_cap__accepted),
		TT(suite__no_suite_yaml__no_suite),
		TT(suite__test_at__walks_groups_in_plan_order),
		TT(suite__broken_table__fails_naming_file_and_line),
		TT(suite__groups_over_the_cap__refused),
		TT(suite__tests_over_the_group_cap__refused),
	};
	return cmocka_run_group_tests_name("problem_suite", tests, NULL, NULL);
}
