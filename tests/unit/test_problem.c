/* Unit tests of the problem package loader (executor/problem.c): the fixture
 * packages under tests/problems, and small packages written into a temporary
 * folder per test for the error, warning and symlink rules. Paths are taken
 * relative to GAVEL_ROOT (the repository root; the cwd when unset). */
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

#include "executor/problem.h"
#include "executor/verdict.h"
#include "languages/lang.h"
#include "tests/support/testutil.h"

static const char *root_dir(void)
{
	const char *r = getenv("GAVEL_ROOT");
	return r && *r ? r : ".";
}

static void fixture(char *buf, size_t sz, const char *name)
{
	snprintf(buf, sz, "%s/tests/problems/%s", root_dir(), name);
}

static void load_ok(struct exec_problem *p, const char *dir, const struct exec_problem_opts *o)
{
	struct gv_err err;
	if (exec_problem_load(p, dir, o, &err) < 0)
		fail_msg("load %s: %s", dir, err.msg);
}

/* ---- fixtures ---------------------------------------------------------- */

static void problem__sum_fixture__loads_cases_in_order(void **state)
{
	(void)state;
	char dir[PATH_MAX];
	fixture(dir, sizeof(dir), "sum");
	struct exec_problem p;
	load_ok(&p, dir, NULL);
	assert_string_equal(p.name, "Sum");
	assert_int_equal(p.type, EXEC_PROBLEM_PASS_FAIL);
	assert_false(p.custom_validation);
	assert_int_equal(p.time_limit_ms, 1000);
	assert_int_equal(p.time_source, EXEC_PROBLEM_TIME_PROBLEM_YAML);
	assert_int_equal(p.memory_mb, 256);
	assert_int_equal(p.output_mb, EXEC_PROBLEM_DEFAULT_OUTPUT_MB);
	assert_int_equal(p.ncases, 6);
	static const char *const names[] = {"sample/1", "sample/2", "secret/01-zero", "secret/02-negative",
					    "secret/03-large", "secret/04-huge"};
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(p.cases[i]->name, names[i]);
		assert_int_equal(p.cases[i]->index, i);
		assert_int_equal(p.cases[i]->is_sample, i < 2);
	}
	assert_string_equal(p.cases[2]->in_path, "data/secret/01-zero.in");
	assert_string_equal(p.cases[2]->ans_path, "data/secret/01-zero.ans");
	assert_string_equal(exec_problem_case_group(p.cases[0])->name, "sample");
	char *text;
	size_t len;
	struct gv_err err;
	assert_int_equal(exec_problem_read(&p, p.cases[0]->ans_path, 100, &text, &len, &err), 0);
	assert_string_equal(text, "3\n");
	free(text);
	assert_int_equal(p.nwarnings, 0);
	exec_problem_free(&p);
	exec_problem_free(&p); /* idempotent */
}

static void problem__floats_fixture__flags_reach_cases(void **state)
{
	(void)state;
	char dir[PATH_MAX];
	fixture(dir, sizeof(dir), "floats");
	struct exec_problem p;
	load_ok(&p, dir, NULL);
	assert_string_equal(p.validator_flags, "float_tolerance 1e-6");
	assert_string_equal(exec_problem_case_group(p.cases[3])->grading.output_validator_flags, "float_tolerance 1e-6");
	assert_int_equal(p.time_source, EXEC_PROBLEM_TIME_DEFAULT);
	assert_int_equal(p.time_limit_ms, EXEC_PROBLEM_DEFAULT_TIME_MS);
	exec_problem_free(&p);
}

static void problem__hello_fixture__timelimit_file_and_empty_input(void **state)
{
	(void)state;
	char dir[PATH_MAX];
	fixture(dir, sizeof(dir), "hello");
	struct exec_problem p;
	load_ok(&p, dir, NULL);
	assert_int_equal(p.time_source, EXEC_PROBLEM_TIME_TIMELIMIT_FILE);
	assert_int_equal(p.time_limit_ms, 1000);
	assert_int_equal(p.ncases, 2);
	exec_problem_free(&p);
	struct exec_problem_opts o = {.time_override_ms = 2500};
	load_ok(&p, dir, &o);
	assert_int_equal(p.time_source, EXEC_PROBLEM_TIME_OVERRIDE);
	assert_int_equal(p.time_limit_ms, 2500);
	exec_problem_free(&p);
}

static void problem__scoring_fixture__groups_and_scores(void **state)
{
	(void)state;
	char dir[PATH_MAX];
	fixture(dir, sizeof(dir), "scoring");
	struct exec_problem p;
	load_ok(&p, dir, NULL);
	assert_int_equal(p.type, EXEC_PROBLEM_SCORING);
	assert_int_equal(p.ncases, 5);
	assert_string_equal(p.cases[1]->name, "secret/group1/1");
	const struct exec_problem_node *g1 = exec_problem_case_group(p.cases[1]);
	const struct exec_problem_node *g2 = exec_problem_case_group(p.cases[4]);
	assert_string_equal(g1->name, "secret/group1");
	assert_int_equal(g1->grading.aggregation, EXEC_PROBLEM_AGG_MIN);
	assert_true(g1->grading.accept_score == 40);
	assert_true(g2->grading.accept_score == 60);
	assert_int_equal(g1->grading.on_reject, EXEC_PROBLEM_GRADE);
	/* The loader's tree drives the aggregation end to end. */
	struct exec_case_result res[5] = {{EXEC_VERDICT_AC, false, 0}, {EXEC_VERDICT_AC, false, 0},
					  {EXEC_VERDICT_AC, false, 0}, {EXEC_VERDICT_AC, false, 0},
					  {EXEC_VERDICT_WA, false, 0}};
	struct exec_verdict_outcome out;
	struct gv_err err;
	assert_int_equal(exec_verdict_aggregate(&p, res, 5, &out, &err), 0);
	assert_int_equal(out.verdict, EXEC_VERDICT_WA);
	assert_true(out.score == 40);
	res[4].verdict = EXEC_VERDICT_AC;
	assert_int_equal(exec_verdict_aggregate(&p, res, 5, &out, &err), 0);
	assert_true(out.score == 100);
	exec_problem_free(&p);
}

/* ---- temporary packages ------------------------------------------------ */

static char tmp_root[256];

static void put(const char *rel, const char *text)
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
	fputs(text, f);
	fclose(f);
}

static void link_to(const char *rel, const char *target)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
	assert_int_equal(symlink(target, path), 0);
}

static int rm_rf(const char *path)
{
	return test_rm_rf(path);
}

static int setup_tmp(void **state)
{
	(void)state;
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/gavel-test-problem.XXXXXX");
	if (!mkdtemp(tmp_root))
		return -1;
	put("data/sample/1.in", "1\n");
	put("data/sample/1.ans", "1\n");
	put("data/secret/a.in", "2\n");
	put("data/secret/a.ans", "2\n");
	return 0;
}

static int teardown_tmp(void **state)
{
	(void)state;
	return rm_rf(tmp_root) == 0 ? 0 : -1;
}

static int load_tmp(struct exec_problem *p, struct gv_err *err)
{
	return exec_problem_load(p, tmp_root, NULL, err);
}

static bool has_warning(const struct exec_problem *p, const char *needle)
{
	for (size_t i = 0; i < p->nwarnings; i++)
		if (strstr(p->warnings[i], needle))
			return true;
	return false;
}

static void problem__no_problem_yaml__defaults_with_warning(void **state)
{
	(void)state;
	struct exec_problem p;
	struct gv_err err;
	assert_int_equal(load_tmp(&p, &err), 0);
	assert_true(has_warning(&p, "problem.yaml: missing"));
	assert_string_equal(p.name, strrchr(tmp_root, '/') + 1);
	assert_int_equal(p.memory_mb, EXEC_PROBLEM_DEFAULT_MEMORY_MB);
	assert_int_equal(p.ncases, 2);
	exec_problem_free(&p);
}

static void problem__unknown_keys__warn_with_line(void **state)
{
	(void)state;
	put("problem.yaml", "name: X\nfrobnicate: 1\nlimits:\n  memory: 512\n  bogus: 2\n");
	put("data/secret/testdata.yaml", "grader_flags: min zap\nwhatever: 3\n");
	struct exec_problem p;
	struct gv_err err;
	if (load_tmp(&p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(has_warning(&p, "problem.yaml:2: unknown key 'frobnicate'"));
	assert_true(has_warning(&p, "problem.yaml:5: unknown key 'limits.bogus'"));
	assert_true(has_warning(&p, "data/secret/testdata.yaml:2: unknown key 'whatever'"));
	assert_true(has_warning(&p, "unknown flag 'zap'"));
	assert_int_equal(p.memory_mb, 512);
	assert_int_equal(exec_problem_case_group(p.cases[1])->grading.aggregation, EXEC_PROBLEM_AGG_MIN);
	exec_problem_free(&p);
}

struct bad_yaml {
	const char *file;
	const char *text;
	const char *msg_has;
};

static const struct bad_yaml bad_yamls[] = {
	{"problem.yaml", "type: sometimes\n", "problem.yaml:1: type: unsupported"},
	{"problem.yaml", "name: X\nlimits:\n  memory: lots\n", "problem.yaml:3: limits.memory"},
	{"problem.yaml", "limits:\n  time_limit: -1\n", "limits.time_limit"},
	{"problem.yaml", "validation: magic\n", "validation: unsupported"},
	{"problem.yaml", "name: [unclosed\n", "problem.yaml:"},
	{"problem.yaml", "- a list\n", "expected a mapping"},
	{"data/secret/testdata.yaml", "on_reject: sometimes\n", "testdata.yaml:1: on_reject"},
	{"data/secret/testdata.yaml", "accept_score: many\n", "accept_score"},
	{"problem.yaml", "validation: custom\nvalidator_protocol: polygon\n", "validator_protocol"},
	{".timelimit", "fast\n", ".timelimit"},
	{".timelimit", "0\n", ".timelimit"},
};

static void problem__bad_values__fail_with_file_line(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_yamls) / sizeof(bad_yamls[0]); i++) {
		put(bad_yamls[i].file, bad_yamls[i].text);
		struct exec_problem p;
		struct gv_err err;
		if (load_tmp(&p, &err) == 0)
			fail_msg("%s \"%s\" loaded", bad_yamls[i].file, bad_yamls[i].text);
		if (!strstr(err.msg, bad_yamls[i].msg_has))
			fail_msg("message \"%s\" lacks \"%s\"", err.msg, bad_yamls[i].msg_has);
		exec_problem_free(&p);
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", tmp_root, bad_yamls[i].file);
		unlink(path);
	}
}

static void problem__time_sources__override_yaml_file_default(void **state)
{
	(void)state;
	struct exec_problem p;
	struct gv_err err;
	put(".timelimit", "3\n");
	assert_int_equal(load_tmp(&p, &err), 0);
	assert_int_equal(p.time_limit_ms, 3000);
	assert_int_equal(p.time_source, EXEC_PROBLEM_TIME_TIMELIMIT_FILE);
	exec_problem_free(&p);
	put("problem.yaml", "limits:\n  time_limit: 0.5\n");
	assert_int_equal(load_tmp(&p, &err), 0);
	assert_int_equal(p.time_limit_ms, 500);
	assert_int_equal(p.time_source, EXEC_PROBLEM_TIME_PROBLEM_YAML);
	exec_problem_free(&p);
	struct exec_problem_opts o = {.time_override_ms = 7000};
	assert_int_equal(exec_problem_load(&p, tmp_root, &o, &err), 0);
	assert_int_equal(p.time_limit_ms, 7000);
	exec_problem_free(&p);
}

static void problem__nested_groups__inherit_and_sort(void **state)
{
	(void)state;
	put("data/secret/testdata.yaml", "grader_flags: min\naccept_score: 5\noutput_validator_flags: case_sensitive\n");
	put("data/secret/g2/b.in", "x");
	put("data/secret/g2/b.ans", "x");
	put("data/secret/g1/z.in", "x");
	put("data/secret/g1/z.ans", "x");
	put("data/secret/g1/deeper/q.in", "x");
	put("data/secret/g1/deeper/q.ans", "x");
	put("data/secret/g2/testdata.yaml", "accept_score: 9\n");
	put("problem.yaml", "validator_flags: float_tolerance 1e-3\n");
	struct exec_problem p;
	struct gv_err err;
	if (load_tmp(&p, &err) < 0)
		fail_msg("%s", err.msg);
	static const char *const order[] = {"sample/1", "secret/a", "secret/g1/deeper/q", "secret/g1/z",
					    "secret/g2/b"};
	assert_int_equal(p.ncases, 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(p.cases[i]->name, order[i]);
	const struct exec_problem_node *deeper = exec_problem_case_group(p.cases[2]);
	assert_true(deeper->grading.accept_score == 5); /* inherited twice */
	assert_int_equal(deeper->grading.aggregation, EXEC_PROBLEM_AGG_MIN);
	assert_string_equal(deeper->grading.output_validator_flags, "float_tolerance 1e-3 case_sensitive");
	const struct exec_problem_node *g2 = exec_problem_case_group(p.cases[4]);
	assert_true(g2->grading.accept_score == 9);
	assert_int_equal(g2->grading.aggregation, EXEC_PROBLEM_AGG_SUM); /* own file replaces */
	assert_string_equal(g2->grading.output_validator_flags, "float_tolerance 1e-3");
	exec_problem_free(&p);
}

static void problem__unpaired_and_stray_files__warn(void **state)
{
	(void)state;
	put("data/secret/lonely.in", "x");
	put("data/secret/orphan.ans", "x");
	put("data/secret/notes.md", "x");
	put("data/top.in", "x");
	put("data/extra/1.in", "x");
	struct exec_problem p;
	struct gv_err err;
	assert_int_equal(load_tmp(&p, &err), 0);
	assert_int_equal(p.ncases, 2);
	assert_true(has_warning(&p, "lonely.in: no matching .ans"));
	assert_true(has_warning(&p, "orphan.ans: answer without input"));
	assert_true(has_warning(&p, "data/top.in"));
	assert_true(has_warning(&p, "data/extra"));
	assert_false(has_warning(&p, "notes.md"));
	exec_problem_free(&p);
}

static void problem__no_cases__fails(void **state)
{
	(void)state;
	char path[PATH_MAX];
	rm_rf(tmp_root);
	assert_non_null(mkdtemp(strcpy(tmp_root, "/tmp/gavel-test-problem.XXXXXX")));
	struct exec_problem p;
	struct gv_err err;
	assert_int_equal(load_tmp(&p, &err), -1); /* no data/ */
	exec_problem_free(&p);
	snprintf(path, sizeof(path), "%s/data", tmp_root);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(load_tmp(&p, &err), -1);
	assert_non_null(strstr(err.msg, "no test cases"));
	exec_problem_free(&p);
}

static void problem__symlink_inside__resolved(void **state)
{
	(void)state;
	link_to("data/secret/b.in", "../sample/1.in");
	link_to("data/secret/b.ans", "./../sample/1.ans");
	struct exec_problem p;
	struct gv_err err;
	if (load_tmp(&p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p.ncases, 3);
	assert_string_equal(p.cases[3 - 1]->name, "secret/b");
	assert_string_equal(p.cases[2]->in_path, "data/sample/1.in");
	assert_string_equal(p.cases[2]->ans_path, "data/sample/1.ans");
	exec_problem_free(&p);
}

struct bad_link {
	const char *target;
	const char *msg_has;
};

static const struct bad_link bad_links[] = {
	{"/etc/passwd", "must be relative"},
	{"../../../outside", "outside the package"},
	{"../../../../../../../../etc/passwd", "outside the package"},
	{"../sample", "not a regular file"},
	{"missing.in", "symlink target"},
};

static void problem__symlink_escaping__fails(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_links) / sizeof(bad_links[0]); i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/data/secret/evil.in", tmp_root);
		unlink(path);
		link_to("data/secret/evil.in", bad_links[i].target);
		put("data/secret/evil.ans", "x");
		struct exec_problem p;
		struct gv_err err;
		if (load_tmp(&p, &err) == 0)
			fail_msg("link to %s loaded", bad_links[i].target);
		if (!strstr(err.msg, bad_links[i].msg_has))
			fail_msg("message \"%s\" lacks \"%s\"", err.msg, bad_links[i].msg_has);
		exec_problem_free(&p);
	}
}

static void problem__symlinked_folder__not_followed(void **state)
{
	(void)state;
	link_to("data/secret/linked", "/usr/share");
	link_to("problem.yaml", "/etc/hostname");
	struct exec_problem p;
	struct gv_err err;
	assert_int_equal(load_tmp(&p, &err), -1); /* problem.yaml is a symlink */
	exec_problem_free(&p);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/problem.yaml", tmp_root);
	unlink(path);
	assert_int_equal(load_tmp(&p, &err), 0);
	assert_int_equal(p.ncases, 2); /* the linked folder is not a group */
	int fd = exec_problem_open(&p, "data/secret/linked/dict", &err);
	assert_int_equal(fd, -1);
	exec_problem_free(&p);
}

static void problem__custom_validator__found_with_language(void **state)
{
	(void)state;
	put("problem.yaml", "validation: custom interactive\n");
	struct exec_problem p;
	struct gv_err err;
	assert_int_equal(load_tmp(&p, &err), -1);
	assert_non_null(strstr(err.msg, "no output_validators"));
	exec_problem_free(&p);
	put("output_validators/checker/validate.cpp", "int main() { return 42; }\n");
	put("output_validators/checker/validate.h", "\n");
	char langdir[PATH_MAX];
	snprintf(langdir, sizeof(langdir), "%s/languages", root_dir());
	struct lang_registry reg;
	if (lang_registry_load(&reg, langdir, &err) < 0)
		fail_msg("%s", err.msg);
	struct exec_problem_opts o = {.langs = &reg};
	if (exec_problem_load(&p, tmp_root, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(p.custom_validation);
	assert_true(p.interactive);
	assert_int_equal(p.validator_protocol, EXEC_PROBLEM_VALIDATOR_KATTIS);
	assert_int_equal(p.nvalidators, 1);
	assert_string_equal(p.validators[0].name, "checker");
	assert_string_equal(p.validators[0].dir, "output_validators/checker");
	assert_string_equal(p.validators[0].files[0], "validate.cpp");
	assert_string_equal(p.validators[0].files[1], "validate.h");
	assert_null(p.validators[0].files[2]);
	assert_string_equal(p.validators[0].lang_id, "cpp");
	exec_problem_free(&p);
	/* testlib checkers: a plain custom validation with the protocol key;
	 * they cannot drive interactive problems. */
	put("problem.yaml", "validation: custom\nvalidator_protocol: testlib\n");
	if (exec_problem_load(&p, tmp_root, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p.validator_protocol, EXEC_PROBLEM_VALIDATOR_TESTLIB);
	assert_int_equal(p.nwarnings, 0);
	exec_problem_free(&p);
	put("problem.yaml", "validation: custom interactive\nvalidator_protocol: testlib\n");
	assert_int_equal(exec_problem_load(&p, tmp_root, &o, &err), -1);
	assert_non_null(strstr(err.msg, "testlib"));
	exec_problem_free(&p);
	lang_registry_free(&reg);
}

static void problem__scoring_type_list_and_name_map(void **state)
{
	(void)state;
	put("problem.yaml", "name:\n  sv: Summa\n  en: Sum\ntype: [scoring]\nlimits:\n  output: 2\n"
			    "  time_multipliers:\n    ac_to_time_limit: 3\n");
	struct exec_problem p;
	struct gv_err err;
	if (load_tmp(&p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(p.name, "Sum");
	assert_int_equal(p.type, EXEC_PROBLEM_SCORING);
	assert_int_equal(p.output_mb, 2);
	assert_true(p.time_multiplier == 3);
	exec_problem_free(&p);
}

static void problem__open__refuses_dotdot_and_links(void **state)
{
	(void)state;
	struct exec_problem p;
	struct gv_err err;
	assert_int_equal(load_tmp(&p, &err), 0);
	assert_int_equal(exec_problem_open(&p, "data/../data/sample/1.in", &err), -1);
	assert_int_equal(exec_problem_open(&p, "data/sample", &err), -1);
	link_to("data/sample/l.in", "1.in");
	assert_int_equal(exec_problem_open(&p, "data/sample/l.in", &err), -1);
	int fd = exec_problem_open(&p, "data/sample/1.in", &err);
	assert_true(fd >= 0);
	close(fd);
	exec_problem_free(&p);
}

#define T(f) cmocka_unit_test(f)
#define TT(f) cmocka_unit_test_setup_teardown(f, setup_tmp, teardown_tmp)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(problem__sum_fixture__loads_cases_in_order),
		T(problem__floats_fixture__flags_reach_cases),
		T(problem__hello_fixture__timelimit_file_and_empty_input),
		T(problem__scoring_fixture__groups_and_scores),
		TT(problem__no_problem_yaml__defaults_with_warning),
		TT(problem__unknown_keys__warn_with_line),
		TT(problem__bad_values__fail_with_file_line),
		TT(problem__time_sources__override_yaml_file_default),
		TT(problem__nested_groups__inherit_and_sort),
		TT(problem__unpaired_and_stray_files__warn),
		TT(problem__no_cases__fails),
		TT(problem__symlink_inside__resolved),
		TT(problem__symlink_escaping__fails),
		TT(problem__symlinked_folder__not_followed),
		TT(problem__custom_validator__found_with_language),
		TT(problem__scoring_type_list_and_name_map),
		TT(problem__open__refuses_dotdot_and_links),
	};
	return cmocka_run_group_tests_name("problem", tests, NULL, NULL);
}
