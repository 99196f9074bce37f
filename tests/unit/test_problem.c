/* Unit tests of the problem package loader (executor/judge/problem.c): the
 * fixture packages under tests/problems, and small packages written into a
 * temporary folder per test for the error, warning and symlink rules. Paths are
 * taken relative to GAVEL_ROOT (the repository root; the cwd when unset). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
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
#include "executor/judge/verdict.h"
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
	/* on_reject: continue with the default grader's worst_error. */
	assert_int_equal(g1->grading.on_reject, EXEC_PROBLEM_WORST_ERROR);
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
	put("data/secret/testdata.yaml", "grading: custom\ngrader_flags: min zap\nwhatever: 3\n");
	struct exec_problem p;
	struct gv_err err;
	if (load_tmp(&p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(has_warning(&p, "problem.yaml:2: unknown key 'frobnicate'"));
	assert_true(has_warning(&p, "problem.yaml:5: unknown key 'limits.bogus'"));
	assert_true(has_warning(&p, "data/secret/testdata.yaml:3: unknown key 'whatever'"));
	assert_true(has_warning(&p, "'zap' is for the custom grader"));
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
	{"data/secret/testdata.yaml", "grader_flags: min zap\n", "testdata.yaml:1: grader_flags: unknown flag 'zap'"},
	{"problem.yaml", "validation: custom\nvalidator_protocol: polygon\n", "validator_protocol"},
	{"problem.yaml", "validation: default multi-pass\n", "validation: unsupported"},
	{"problem.yaml", "limits:\n  validation_passes: 1\n", "limits.validation_passes"},
	{"problem.yaml", "input_file: ../secret.txt\n", "input_file: a plain file name"},
	{"problem.yaml", "output_file: a/b\n", "output_file: a plain file name"},
	{"problem.yaml", "output_only: maybe\n", "output_only"},
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
	/* Multi-pass: 2 passes unless limits.validation_passes says; the
	 * 2023-07 type word too; never interactive nor testlib. */
	put("problem.yaml", "validation: custom multi-pass\n");
	if (exec_problem_load(&p, tmp_root, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(p.multi_pass);
	assert_int_equal(p.validation_passes, 2);
	assert_int_equal(p.nwarnings, 0);
	exec_problem_free(&p);
	put("problem.yaml", "problem_format_version: 2023-07-draft\ntype: pass-fail multi-pass\n"
			    "limits:\n  validation_passes: 5\n");
	if (exec_problem_load(&p, tmp_root, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(p.multi_pass);
	assert_true(p.custom_validation);
	assert_int_equal(p.validation_passes, 5);
	exec_problem_free(&p);
	put("problem.yaml", "validation: custom interactive multi-pass\n");
	assert_int_equal(exec_problem_load(&p, tmp_root, &o, &err), -1);
	assert_non_null(strstr(err.msg, "interactive multi-pass"));
	exec_problem_free(&p);
	put("problem.yaml", "validation: custom multi-pass\nvalidator_protocol: testlib\n");
	assert_int_equal(exec_problem_load(&p, tmp_root, &o, &err), -1);
	assert_non_null(strstr(err.msg, "Kattis"));
	exec_problem_free(&p);
	/* File I/O and output-only tasks (Gavel's keys). */
	put("problem.yaml", "input_file: input.txt\noutput_file: output.txt\n");
	if (exec_problem_load(&p, tmp_root, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(p.input_file, "input.txt");
	assert_string_equal(p.output_file, "output.txt");
	assert_false(p.output_only);
	exec_problem_free(&p);
	put("problem.yaml", "output_only: true\n");
	if (exec_problem_load(&p, tmp_root, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(p.output_only);
	assert_null(p.input_file);
	exec_problem_free(&p);
	put("problem.yaml", "validation: custom interactive\ninput_file: input.txt\n");
	assert_int_equal(exec_problem_load(&p, tmp_root, &o, &err), -1);
	assert_non_null(strstr(err.msg, "input_file"));
	exec_problem_free(&p);
	lang_registry_free(&reg);
}

/* Output-only: each case's file is <base name>.out; two cases of one
 * base name are refused, naming both. */
static void problem__output_only__names_per_case_and_clash_refused(void **state)
{
	(void)state;
	put("problem.yaml", "output_only: true\n");
	struct exec_problem p;
	struct gv_err err;
	if (load_tmp(&p, &err) < 0)
		fail_msg("%s", err.msg);
	char name[EXEC_PROBLEM_OUTPUT_NAME_MAX];
	assert_int_equal(p.ncases, 2);
	assert_string_equal(exec_problem_output_name(p.cases[0], name, sizeof(name)), "1.out");
	assert_string_equal(exec_problem_output_name(p.cases[1], name, sizeof(name)), "a.out");
	exec_problem_free(&p);
	put("data/secret/g/1.in", "3\n");
	put("data/secret/g/1.ans", "3\n");
	assert_int_equal(load_tmp(&p, &err), -1);
	assert_non_null(strstr(err.msg, "sample/1 and secret/g/1 would both be 1.out"));
	exec_problem_free(&p);
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

/* ---- testdata.yaml, as a table ----------------------------------------- */

struct td_case {
	const char *name;
	enum exec_problem_type type;
	enum exec_problem_format format;
	const char *yaml;
	const char *error; /* NULL: parses; else a part of the message */
	enum exec_problem_on_reject on_reject;
	enum exec_problem_aggregation aggregation;
	bool always_accept, any_accepted, ignore_sample;
	double accept, reject, range_min, range_max;
	const char *ov_flags;
	double max_score; /* NAN: unset */
	const char *warning; /* NULL: none expected */
};

#define INF INFINITY
#define PF EXEC_PROBLEM_PASS_FAIL
#define SC EXEC_PROBLEM_SCORING
#define LEG EXEC_PROBLEM_FORMAT_LEGACY
#define V23 EXEC_PROBLEM_FORMAT_2023_07
#define BRK EXEC_PROBLEM_FIRST_ERROR
#define WORST EXEC_PROBLEM_WORST_ERROR
#define GRADE EXEC_PROBLEM_GRADE
#define SUM EXEC_PROBLEM_AGG_SUM

static const struct td_case td_cases[] = {
	{"empty file keeps the defaults", PF, LEG, "", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"on_reject break (problemtools' default)", PF, LEG, "on_reject: break\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"on_reject continue is worst_error", PF, LEG, "on_reject: continue\n", NULL, WORST, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"continue with first_error grades in order", PF, LEG, "on_reject: continue\ngrader_flags: first_error\n", NULL, GRADE, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"break with worst_error still stops", PF, LEG, "on_reject: break\ngrader_flags: worst_error\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"Gavel's older on_reject words", PF, LEG, "on_reject: grade\n", NULL, GRADE, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"always_accept", SC, LEG, "on_reject: continue\ngrader_flags: always_accept sum\n", NULL, WORST, SUM, true, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"all default grader flags", SC, LEG, "grader_flags: ignore_sample accept_if_any_accepted max\n", NULL, BRK, EXEC_PROBLEM_AGG_MAX, false, true, true, 1, 0, -INF, INF, "", NAN, NULL},
	{"scores and range", SC, LEG, "accept_score: 25\nreject_score: -1\nrange: 0 +inf\n", NULL, BRK, SUM, false, false, false, 25, -1, 0, INF, "", NAN, NULL},
	{"range with numbers", SC, LEG, "range: -inf 100\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, 100, "", NAN, NULL},
	{"scores on a pass-fail problem warn", PF, LEG, "accept_score: 3\n", NULL, BRK, SUM, false, false, false, 3, 0, -INF, INF, "", NAN, "scores are for scoring problems"},
	{"output_validator_flags as a string", PF, LEG, "output_validator_flags: float_tolerance 1e-6\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "float_tolerance 1e-6", NAN, NULL},
	{"output_validator_flags as a map", PF, LEG, "output_validator_flags:\n  name: checker\n  flags: strict\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "strict", NAN, "output_validator_flags.name"},
	{"input_validator_flags as a map", PF, LEG, "input_validator_flags:\n  bounds: --max_n 50\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"grading custom warns, flags free", PF, LEG, "grading: custom\ngrader_flags: --my-flag\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, "custom grader"},
	{"unknown key warns", PF, LEG, "on_reject: break\nfrobnicate: 2\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, "unknown key 'frobnicate'"},
	{"2023-07 output_validator_args list", PF, V23, "output_validator_args: [case_sensitive, space_change_sensitive]\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "case_sensitive space_change_sensitive", NAN, NULL},
	{"2023-07 scoring min", SC, V23, "scoring:\n  score: 30\n  aggregation: min\n", NULL, BRK, EXEC_PROBLEM_AGG_MIN, false, false, false, 1, 0, -INF, INF, "", 30, NULL},
	{"2023-07 scoring pass-fail unbounded", SC, V23, "scoring:\n  score: unbounded\n  aggregation: pass-fail\n", NULL, BRK, EXEC_PROBLEM_AGG_PASS_FAIL, false, false, false, 1, 0, -INF, INF, "", INF, NULL},
	{"2023-07 draft grading map", SC, V23, "grading:\n  score: 5\n  max_score: 50\n  aggregation: sum\n  verdict: accept_if_any_accepted\n", NULL, BRK, SUM, false, true, false, 5, 0, -INF, INF, "", 50, NULL},
	{"2023-07 full_feedback, hint, description", PF, V23, "full_feedback: true\nhint: think\ndescription: edge\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"2023-07 static_validation false", PF, V23, "static_validation: false\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, NULL},
	{"2023-07 static_validation map warns", SC, V23, "static_validation:\n  args: --strict\n  score: 10\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, "no static validators"},
	{"2023-07 require_pass warns", SC, V23, "scoring:\n  require_pass: [sample]\n", NULL, BRK, SUM, false, false, false, 1, 0, -INF, INF, "", NAN, "require_pass is not supported"},
	{"on_reject outside the spec", PF, LEG, "on_reject: sometimes\n", "t.yaml:1: on_reject: break or continue", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"unknown default grader flag", PF, LEG, "grader_flags: sum median\n", "t.yaml:1: grader_flags: unknown flag 'median'", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"grading neither default nor custom", PF, LEG, "grading: magic\n", "t.yaml:1: grading: default or custom", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"range with one number", SC, LEG, "range: 5\n", "t.yaml:1: range:", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"range reversed", SC, LEG, "range: 10 0\n", "t.yaml:1: range:", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"accept_score not a number", SC, LEG, "accept_score: lots\n", "t.yaml:1: accept_score", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"scoring aggregation outside the spec", SC, V23, "scoring:\n  aggregation: avg\n", "t.yaml:2: scoring.aggregation: pass-fail, sum or min", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"scoring score negative", SC, V23, "scoring:\n  score: -3\n", "t.yaml:2: scoring.score", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"full_feedback not a boolean", PF, V23, "full_feedback: sometimes\n", "t.yaml:1: full_feedback: expected true or false", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"static_validation not a boolean", PF, V23, "static_validation: 3\n", "t.yaml:1: static_validation", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"output_validator_args a map", PF, V23, "output_validator_args: {a: b}\n", "t.yaml:1: output_validator_args", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"output_validator_flags map with a stray key", PF, LEG, "output_validator_flags:\n  flagz: x\n", "t.yaml:2: output_validator_flags", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
	{"not a mapping", PF, LEG, "- a\n- b\n", "t.yaml:1: expected a mapping", BRK, SUM, false, false, false, 0, 0, 0, 0, "", 0, NULL},
};

static bool same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void testdata__table__values_and_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(td_cases) / sizeof(td_cases[0]); i++) {
		const struct td_case *c = &td_cases[i];
		struct exec_problem p;
		memset(&p, 0, sizeof(p));
		p.dirfd = -1;
		p.type = c->type;
		p.format = c->format;
		struct exec_problem_grading g;
		struct gv_err err;
		assert_int_equal(exec_problem_grading_default(&g, &err), 0);
		int rc = exec_problem_parse_testdata(&p, "t.yaml", c->yaml, strlen(c->yaml), &g, &err);
		if (c->error) {
			if (rc == 0)
				fail_msg("%s: parsed, expected \"%s\"", c->name, c->error);
			if (!strstr(err.msg, c->error))
				fail_msg("%s: message \"%s\" lacks \"%s\"", c->name, err.msg, c->error);
		} else {
			if (rc != 0)
				fail_msg("%s: %s", c->name, err.msg);
			if (g.on_reject != c->on_reject || g.aggregation != c->aggregation ||
			    g.always_accept != c->always_accept || g.accept_if_any_accepted != c->any_accepted ||
			    g.ignore_sample != c->ignore_sample)
				fail_msg("%s: on_reject %d aggregation %d always %d any %d ignore %d", c->name, g.on_reject,
					 g.aggregation, g.always_accept, g.accept_if_any_accepted, g.ignore_sample);
			if (!same(g.accept_score, c->accept) || !same(g.reject_score, c->reject) ||
			    !same(g.range_min, c->range_min) || !same(g.range_max, c->range_max) ||
			    !same(g.max_score, c->max_score))
				fail_msg("%s: accept %g reject %g range %g %g max %g", c->name, g.accept_score,
					 g.reject_score, g.range_min, g.range_max, g.max_score);
			if (strcmp(g.output_validator_flags, c->ov_flags))
				fail_msg("%s: flags \"%s\"", c->name, g.output_validator_flags);
			if (c->warning ? !has_warning(&p, c->warning) : p.nwarnings != 0)
				fail_msg("%s: warnings %zu, first \"%s\"", c->name, p.nwarnings,
					 p.nwarnings ? p.warnings[0] : "");
		}
		exec_problem_grading_free(&g);
		exec_problem_free(&p);
	}
}

/* ---- validator layouts and 2023-07 scores ------------------------------ */

static void problem__validator_layouts__all_found(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		const char *dir;
		const char *name;
	} layouts[] = {
		{"output_validators/checker/validate.cc", "output_validators/checker", "checker"},
		{"output_validators/validate.py", "output_validators", "validate"},
		{"output_validator/validate.cc", "output_validator", "output_validator"},
		{"output_validator/checker/validate.cc", "output_validator/checker", "checker"},
	};
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		put("problem.yaml", "validation: custom\n");
		put(layouts[i].file, "int main() { return 42; }\n");
		struct exec_problem p;
		struct gv_err err;
		if (load_tmp(&p, &err) < 0)
			fail_msg("%s: %s", layouts[i].file, err.msg);
		assert_int_equal(p.nvalidators, 1);
		assert_string_equal(p.validators[0].dir, layouts[i].dir);
		assert_string_equal(p.validators[0].name, layouts[i].name);
		assert_non_null(p.validators[0].files[0]);
		exec_problem_free(&p);
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", tmp_root, strncmp(layouts[i].file, "output_validators", 17)
									? "output_validator" : "output_validators");
		test_rm_rf(path);
	}
}

static void problem__v2023_scoring__inferred_scores(void **state)
{
	(void)state;
	put("problem.yaml", "problem_format_version: 2023-07\ntype: scoring\n");
	put("data/secret/g1/1.in", "1\n");
	put("data/secret/g1/1.ans", "1\n");
	put("data/secret/g1/testdata.yaml", "scoring:\n  score: 40\n");
	put("data/secret/g2/1.in", "1\n");
	put("data/secret/g2/1.ans", "1\n");
	put("data/secret/g2/2.in", "1\n");
	put("data/secret/g2/2.ans", "1\n");
	put("data/secret/g3/1.in", "1\n");
	put("data/secret/g3/1.ans", "1\n");
	put("data/secret/g3/testdata.yaml", "scoring:\n  aggregation: sum\n");
	struct exec_problem p;
	struct gv_err err;
	if (load_tmp(&p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(p.time_multiplier == 2 && p.time_safety_margin == 1.5);
	const struct exec_problem_node *secret = exec_problem_case_group(p.cases[p.ncases - 1])->parent;
	assert_string_equal(secret->name, "secret");
	assert_true(secret->grading.max_score == 100);
	/* setup_tmp's case secret/a is there too: g1 has 40; the case, g2 and g3
	 * share the other 60; g3 sums, so its one case is worth 20. */
	assert_int_equal(secret->nchildren, 4);
	const struct exec_problem_node *a = &secret->children[1], *b = &secret->children[2], *c = &secret->children[3];
	assert_string_equal(b->name, "secret/g2");
	assert_true(secret->grading.accept_score == 20);
	assert_true(a->grading.max_score == 40 && a->grading.aggregation == EXEC_PROBLEM_AGG_PASS_FAIL);
	assert_true(b->grading.max_score == 20 && b->grading.aggregation == EXEC_PROBLEM_AGG_PASS_FAIL);
	assert_true(c->grading.max_score == 20 && c->grading.accept_score == 20);
	/* One case of g2 fails: g1, secret/a and g3 score, g2 does not. */
	struct exec_case_result res[16];
	memset(res, 0, sizeof(res));
	for (size_t i = 0; i < p.ncases; i++)
		res[i].verdict = strcmp(p.cases[i]->name, "secret/g2/2") ? EXEC_VERDICT_AC : EXEC_VERDICT_WA;
	struct exec_verdict_outcome out;
	assert_int_equal(exec_verdict_aggregate(&p, res, p.ncases, &out, &err), 0);
	assert_true(out.score == 80);
	exec_problem_free(&p);
}

static void problem__time_rule__legacy_and_2023(void **state)
{
	(void)state;
	static const struct {
		enum exec_problem_format format;
		double mult, margin, res, slowest, limit, high;
	} t[] = {
		{EXEC_PROBLEM_FORMAT_LEGACY, 5, 2, 1, 0.01, 1, 2},   /* at least 1 s, margin at least limit + 1 */
		{EXEC_PROBLEM_FORMAT_LEGACY, 5, 2, 1, 0.29, 1, 3},   /* 1.45 rounds to 1; 2.9 to 3 */
		{EXEC_PROBLEM_FORMAT_LEGACY, 5, 2, 1, 0.31, 2, 3},   /* 1.55 rounds to 2 */
		{EXEC_PROBLEM_FORMAT_LEGACY, 3, 2, 1, 1.2, 4, 7},    /* 3.6 -> 4; 7.2 -> 7 */
		{EXEC_PROBLEM_FORMAT_2023_07, 2, 1.5, 1, 0.2, 1, 1.5}, /* ceil, at least one step */
		{EXEC_PROBLEM_FORMAT_2023_07, 2, 1.5, 1, 0.6, 2, 3},
		{EXEC_PROBLEM_FORMAT_2023_07, 2, 1.5, 0.1, 0.62, 1.3, 1.95},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct exec_problem p;
		memset(&p, 0, sizeof(p));
		p.format = t[i].format;
		p.time_multiplier = t[i].mult;
		p.time_safety_margin = t[i].margin;
		p.time_resolution = t[i].res;
		struct exec_problem_time_rule r;
		exec_problem_time_rule(&p, t[i].slowest, &r);
		if (fabs(r.limit_s - t[i].limit) > 1e-9 || fabs(r.margin_s - t[i].high) > 1e-9)
			fail_msg("case %zu: limit %g margin %g, expected %g %g", i, r.limit_s, r.margin_s, t[i].limit,
				 t[i].high);
	}
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
		TT(problem__output_only__names_per_case_and_clash_refused),
		TT(problem__scoring_type_list_and_name_map),
		TT(problem__open__refuses_dotdot_and_links),
		T(testdata__table__values_and_errors),
		TT(problem__validator_layouts__all_found),
		TT(problem__v2023_scoring__inferred_scores),
		T(problem__time_rule__legacy_and_2023),
	};
	return cmocka_run_group_tests_name("problem", tests, NULL, NULL);
}
