/* Unit tests of the built-in checkers (executor/judge/checker.c) and their
 * flags (common/checker_flags.c): tables of (flags, answer, output) → verdict
 * and message, the flag parser, and every case of the Kattis default
 * validator's conformance data under
 * $GAVEL_CONFORMANCE/kattis-default-validator (GAVEL_CONFORMANCE defaults to
 * tests/conformance, relative to the repository root where tests/run.sh
 * runs). A missing conformance folder is a failure, never a skip. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "executor/judge/checker.h"

/* ---- compare table ----------------------------------------------------- */

struct cmp_case {
	const char *name;
	const char *flags;
	const char *ans;
	const char *out;
	int verdict;
	const char *msg_has; /* substring of the message; NULL: only non-empty when WA */
};

static const struct cmp_case cmp_cases[] = {
	{"checker__tokens__identical__accepts", "", "1 2 3\n", "1 2 3\n", 42, NULL},
	{"checker__tokens__whitespace_differs__accepts", "", "1 2\n3\n", "  1\t2 3", 42, NULL},
	{"checker__tokens__both_empty__accepts", "", "", "", 42, NULL},
	{"checker__tokens__crlf__accepts", "", "a b\n", "a b\r\n", 42, NULL},
	{"checker__tokens__case_differs_by_default__accepts", "", "Yes\n", "YES\n", 42, NULL},
	{"checker__tokens__case_sensitive__rejects_case", "case_sensitive", "Yes\n", "yes\n", 43, "expected 'Yes', got 'yes'"},
	{"checker__tokens__wrong_token__names_line_and_token", "", "1\n2 7\n", "1\n2 8\n", 43,
	 "line 2, token 3: expected '7', got '8'"},
	{"checker__tokens__missing_token__rejects", "", "1 2\n", "1\n", 43, "output ended early, expected '2'"},
	{"checker__tokens__extra_token__rejects", "", "1\n", "1 2\n", 43, "extra output '2'"},
	{"checker__tokens__empty_output__rejects", "", "1\n", "", 43, "output is empty"},
	{"checker__tokens__whitespace_output__rejects", "", "1\n", " \n \n", 43, "only whitespace"},
	{"checker__tokens__prefix_token__rejects", "", "abc\n", "ab\n", 43, "expected 'abc', got 'ab'"},
	{"checker__tokens__numbers_as_strings_without_tolerance__rejects", "", "1.0\n", "1\n", 43, NULL},
	{"checker__tokens__nul_byte_in_output__rejects", "", "a\n", "a\0\n", 43, NULL},
	{"checker__message__escapes_control_bytes", "", "a\n", "\x01\x1b[2J\n", 43, "\\x01\\x1b[2J"},
	{"checker__message__truncates_long_tokens", "",
	 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxa\n",
	 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxb\n", 43,
	 "got '...xxxxxxxxb' (first difference at byte 85)"},
	{"checker__float_abs_tol__accepts_within", "float_absolute_tolerance 0.5", "1\n", "1.4\n", 42, NULL},
	{"checker__float_abs_tol__accepts_at_bound", "float_absolute_tolerance 0.5", "1\n", "1.5\n", 42, NULL},
	{"checker__float_abs_tol__rejects_outside", "float_absolute_tolerance 0.1", "1\n", "1.4\n", 43,
	 "absolute error 0.4"},
	{"checker__float_rel_tol__accepts_within", "float_relative_tolerance 0.1", "100\n", "105\n", 42, NULL},
	{"checker__float_rel_tol__rejects_outside", "float_relative_tolerance 0.01", "100\n", "105\n", 43, NULL},
	{"checker__float_rel_tol__zero_judge_rejects_nonzero", "float_relative_tolerance 0.01", "0\n", "1e-300\n", 43,
	 NULL},
	{"checker__float_rel_tol__zero_judge_accepts_zero", "float_relative_tolerance 0.01", "0\n", "-0.0\n", 42, NULL},
	{"checker__float_tolerance__sets_both", "float_tolerance 1e-6", "1000000\n", "1000000.9\n", 42, NULL},
	{"checker__float_tolerance__rejects_outside_both", "float_tolerance 1e-6", "1\n", "1.00001\n", 43, NULL},
	{"checker__float__exponent_forms__accept", "float_tolerance 1e-9", "1e3 .5 -2.\n", "1000.0 5E-1 -2\n", 42, NULL},
	{"checker__float__user_not_a_number__rejects", "float_tolerance 1", "1\n", "one\n", 43,
	 "expected a number like '1', got 'one'"},
	{"checker__float__user_hex__rejects", "float_tolerance 1", "16\n", "0x10\n", 43, "expected a number"},
	{"checker__float__user_nan__rejects", "float_tolerance 1", "1\n", "nan\n", 43, NULL},
	{"checker__float__user_overflow__rejects", "float_tolerance 1", "1\n", "1e999\n", 43, NULL},
	{"checker__float__judge_inf_is_a_string__accepts_same", "float_tolerance 1", "inf\n", "INF\n", 42, NULL},
	{"checker__float__judge_inf_is_a_string__rejects_number", "float_tolerance 1", "inf\n", "1e999\n", 43, NULL},
	{"checker__float__judge_word_is_a_string", "float_tolerance 1", "abc 2\n", "abc 2.5\n", 42, NULL},
	{"checker__float__long_user_token__parses",
	 "float_absolute_tolerance 1e-9", "0.5\n",
	 "0.50000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001\n", 42,
	 NULL},
	{"checker__float__many_leading_zeros__parses", "float_absolute_tolerance 1e-9", "1e-5\n",
	 "0.0000100000000000000000000000000000000000000000000000000000000000000000000000\n", 42, NULL},
	{"checker__space_change__same__accepts", "space_change_sensitive", "a  b\n c\n", "a  b\n c\n", 42, NULL},
	{"checker__space_change__extra_space__rejects", "space_change_sensitive", "a b\n", "a  b\n", 43,
	 "line 1: whitespace differs"},
	{"checker__space_change__missing_final_newline__rejects", "space_change_sensitive", "a\n", "a", 43,
	 "end of output"},
	{"checker__space_change__case_still_insensitive", "space_change_sensitive", "A b\n", "a B\n", 42, NULL},
	{"checker__exact__identical__accepts", "exact", "a b\n", "a b\n", 42, NULL},
	{"checker__exact__missing_final_newline__rejects", "exact", "a b\n", "a b", 43, "output ended early"},
	{"checker__exact__inner_space__rejects", "exact", "a b\nc\n", "a b\nc \n", 43, "line 2, column 2"},
	{"checker__exact__case__rejects", "exact", "Yes\n", "yes\n", 43, "expected 'Yes', got 'yes'"},
	{"checker__exact__extra_output__rejects", "exact", "a\n", "a\nb\n", 43, "extra output 'b'"},
	{"checker__exact_ignore_trailing_ws__missing_newline__accepts", "exact ignore_trailing_whitespace", "a b\n\n",
	 "a b", 42, NULL},
	{"checker__exact_ignore_trailing_ws__inner_space__rejects", "exact ignore_trailing_whitespace", "a b\n",
	 "a  b\n", 43, NULL},
};

static size_t case_len(const char *s, const char *name)
{
	/* The NUL-byte case stores its bytes literally; its length is fixed. */
	if (!strcmp(name, "checker__tokens__nul_byte_in_output__rejects") && !strcmp(s, "a"))
		return 3;
	return strlen(s);
}

static void run_cmp_case(void **state)
{
	const struct cmp_case *c = *state;
	struct gv_checker_opts o;
	struct gv_err err;
	gv_checker_opts_default(&o);
	if (gv_checker_parse_flags(c->flags, &o, &err) < 0)
		fail_msg("flags \"%s\": %s", c->flags, err.msg);
	char msg[EXEC_CHECKER_MSG_MAX];
	memset(msg, 'Z', sizeof(msg));
	enum exec_checker_verdict v =
		exec_checker_compare(&o, c->ans, strlen(c->ans), c->out, case_len(c->out, c->name), msg, sizeof(msg));
	if ((int)v != c->verdict)
		fail_msg("verdict %d, want %d (message: %s)", (int)v, c->verdict, msg);
	assert_true(strlen(msg) < sizeof(msg));
	if (v == EXEC_CHECKER_AC) {
		assert_string_equal(msg, "");
	} else {
		assert_true(msg[0] != '\0');
		if (c->msg_has && !strstr(msg, c->msg_has))
			fail_msg("message \"%s\" lacks \"%s\"", msg, c->msg_has);
	}
}

/* ---- flag parser table ------------------------------------------------- */

struct flag_case {
	const char *name;
	const char *flags;
	int ok;
	int mode, case_sensitive, space, trailing;
	double abs_tol, rel_tol;
};

static const struct flag_case flag_cases[] = {
	{"checker__flags__empty__defaults", "", 1, GV_CHECKER_TOKENS, 0, 0, 0, -1, -1},
	{"checker__flags__null__defaults", NULL, 1, GV_CHECKER_TOKENS, 0, 0, 0, -1, -1},
	{"checker__flags__float_tolerance__sets_both", "float_tolerance 1e-6", 1, 0, 0, 0, 0, 1e-6, 1e-6},
	{"checker__flags__abs_then_rel__sets_each", "float_absolute_tolerance 0.5  float_relative_tolerance\t0.25", 1,
	 0, 0, 0, 0, 0.5, 0.25},
	{"checker__flags__later_flag_wins", "float_tolerance 1 float_absolute_tolerance 2", 1, 0, 0, 0, 0, 2, 1},
	{"checker__flags__all_booleans", " case_sensitive space_change_sensitive\n", 1, 0, 1, 1, 0, -1, -1},
	{"checker__flags__exact_with_trailing", "exact ignore_trailing_whitespace", 1, GV_CHECKER_EXACT, 0, 0, 1, -1,
	 -1},
	{"checker__flags__unknown__fails", "case_sensitive bogus", 0, 0, 0, 0, 0, 0, 0},
	{"checker__flags__missing_value__fails", "float_tolerance", 0, 0, 0, 0, 0, 0, 0},
	{"checker__flags__negative_value__fails", "float_tolerance -1", 0, 0, 0, 0, 0, 0, 0},
	{"checker__flags__word_value__fails", "float_relative_tolerance abc", 0, 0, 0, 0, 0, 0, 0},
	{"checker__flags__nan_value__fails", "float_absolute_tolerance nan", 0, 0, 0, 0, 0, 0, 0},
	{"checker__flags__inf_value__fails", "float_absolute_tolerance inf", 0, 0, 0, 0, 0, 0, 0},
	{"checker__flags__prefix_of_flag__fails", "case_sensitiv", 0, 0, 0, 0, 0, 0, 0},
};

static void run_flag_case(void **state)
{
	const struct flag_case *c = *state;
	struct gv_checker_opts o;
	struct gv_err err;
	gv_checker_opts_default(&o);
	int rc = gv_checker_parse_flags(c->flags, &o, &err);
	if (!c->ok) {
		assert_int_equal(rc, -1);
		assert_true(err.msg[0] != '\0');
		return;
	}
	if (rc < 0)
		fail_msg("unexpected error: %s", err.msg);
	assert_int_equal(o.mode, c->mode);
	assert_int_equal(o.case_sensitive, c->case_sensitive);
	assert_int_equal(o.space_change_sensitive, c->space);
	assert_int_equal(o.ignore_trailing_ws, c->trailing);
	assert_true(o.float_abs_tol == c->abs_tol);
	assert_true(o.float_rel_tol == c->rel_tol);
}

static void checker__flags__too_long__fails(void **state)
{
	(void)state;
	char *big = malloc(GV_CHECKER_FLAGS_MAX + 100);
	assert_non_null(big);
	memset(big, ' ', GV_CHECKER_FLAGS_MAX + 99);
	big[GV_CHECKER_FLAGS_MAX + 99] = '\0';
	struct gv_checker_opts o;
	struct gv_err err;
	gv_checker_opts_default(&o);
	assert_int_equal(gv_checker_parse_flags(big, &o, &err), -1);
	free(big);
}

static void checker__large_input__linear_and_bounded_message(void **state)
{
	(void)state;
	size_t n = 8u << 20;
	char *a = malloc(n), *b = malloc(n);
	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] = (i % 8 == 7) ? '\n' : '9';
	b[n - 2] = '8';
	struct gv_checker_opts o;
	gv_checker_opts_default(&o);
	char msg[EXEC_CHECKER_MSG_MAX];
	assert_int_equal(exec_checker_compare(&o, a, n, a, n, msg, sizeof(msg)), EXEC_CHECKER_AC);
	assert_int_equal(exec_checker_compare(&o, a, n, b, n, msg, sizeof(msg)), EXEC_CHECKER_WA);
	assert_non_null(strstr(msg, "line 1048576, token 1048576"));
	o.float_abs_tol = 0.5;
	assert_int_equal(exec_checker_compare(&o, a, n, b, n, msg, sizeof(msg)), EXEC_CHECKER_WA);
	o.mode = GV_CHECKER_EXACT;
	assert_int_equal(exec_checker_compare(&o, a, n, b, n, msg, sizeof(msg)), EXEC_CHECKER_WA);
	assert_non_null(strstr(msg, "line 1048576, column 7"));
	free(a);
	free(b);
}

static void checker__null_message_buffer__still_judges(void **state)
{
	(void)state;
	struct gv_checker_opts o;
	gv_checker_opts_default(&o);
	assert_int_equal(exec_checker_compare(&o, "1", 1, "2", 1, NULL, 0), EXEC_CHECKER_WA);
	assert_int_equal(exec_checker_compare(&o, "1", 1, "1", 1, NULL, 0), EXEC_CHECKER_AC);
	char small[4];
	assert_int_equal(exec_checker_compare(&o, "1", 1, "2", 1, small, sizeof(small)), EXEC_CHECKER_WA);
	assert_int_equal(strlen(small), 3);
}

/* ---- Kattis conformance ------------------------------------------------ */

#define CONF_FILE_MAX (64u << 20)

struct conf_case {
	char dir[2048];
	char name[256];
};

static char conf_root[1024];
static char conf_problem[2048]; /* why the conformance folder cannot be used */

static int read_file(const char *dir, const char *name, char **out, size_t *len, int required)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (!required && errno == ENOENT) {
			*out = calloc(1, 1);
			*len = 0;
			return *out ? 0 : -1;
		}
		print_error("cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	char *buf = malloc(CONF_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		return -1;
	}
	size_t n = fread(buf, 1, CONF_FILE_MAX + 1, f);
	fclose(f);
	if (n > CONF_FILE_MAX) {
		free(buf);
		print_error("%s is too large\n", path);
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static void run_conf_case(void **state)
{
	const struct conf_case *c = *state;
	char *args, *ans, *out, *code;
	size_t alen, anslen, outlen, clen;
	assert_int_equal(read_file(c->dir, "args.txt", &args, &alen, 0), 0);
	assert_int_equal(read_file(c->dir, "judge.ans", &ans, &anslen, 1), 0);
	assert_int_equal(read_file(c->dir, "user.out", &out, &outlen, 1), 0);
	assert_int_equal(read_file(c->dir, "expected_exit_code.txt", &code, &clen, 1), 0);
	int want = atoi(code);
	if (want != 42 && want != 43)
		fail_msg("%s: expected_exit_code.txt holds \"%s\"", c->name, code);
	struct gv_checker_opts o;
	struct gv_err err;
	gv_checker_opts_default(&o);
	if (gv_checker_parse_flags(args, &o, &err) < 0)
		fail_msg("%s: flags \"%s\": %s", c->name, args, err.msg);
	char msg[EXEC_CHECKER_MSG_MAX];
	int got = (int)exec_checker_compare(&o, ans, anslen, out, outlen, msg, sizeof(msg));
	if (got != want)
		fail_msg("%s: exit %d, want %d (message: %s)", c->name, got, want, msg);
	if (got == 43)
		assert_true(msg[0] != '\0');
	print_message("# %s: %d %s\n", c->name, got, msg);
	free(args);
	free(ans);
	free(out);
	free(code);
}

static void checker__kattis_conformance__folder_present(void **state)
{
	(void)state;
	if (conf_problem[0])
		fail_msg("%s", conf_problem);
}

static int cmp_conf(const void *a, const void *b)
{
	return strcmp(((const struct conf_case *)a)->name, ((const struct conf_case *)b)->name);
}

/* Finds the case folders; on any problem records why in conf_problem so that
 * a dedicated test fails with that message. */
static struct conf_case *find_conf_cases(size_t *n)
{
	const char *base = getenv("GAVEL_CONFORMANCE");
	if (!base || !*base)
		base = "tests/conformance";
	snprintf(conf_root, sizeof(conf_root), "%s/kattis-default-validator", base);
	*n = 0;
	DIR *d = opendir(conf_root);
	if (!d) {
		snprintf(conf_problem, sizeof(conf_problem),
			 "conformance data missing: cannot open %s (%s); run from the repository root or set GAVEL_CONFORMANCE",
			 conf_root, strerror(errno));
		return NULL;
	}
	struct conf_case *cases = NULL;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char dir[2048];
		snprintf(dir, sizeof(dir), "%s/%s", conf_root, e->d_name);
		struct stat st;
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			cases = realloc(cases, cap * sizeof(*cases));
			if (!cases)
				abort();
		}
		snprintf(cases[*n].dir, sizeof(cases[*n].dir), "%s", dir);
		snprintf(cases[*n].name, sizeof(cases[*n].name), "checker__kattis_conformance__%.200s", e->d_name);
		(*n)++;
	}
	closedir(d);
	if (*n < 10)
		snprintf(conf_problem, sizeof(conf_problem), "conformance data incomplete: %zu case folders in %s", *n,
			 conf_root);
	if (*n)
		qsort(cases, *n, sizeof(*cases), cmp_conf);
	return cases;
}

int main(void)
{
	size_t ncmp = sizeof(cmp_cases) / sizeof(cmp_cases[0]);
	size_t nflag = sizeof(flag_cases) / sizeof(flag_cases[0]);
	size_t nconf;
	struct conf_case *conf = find_conf_cases(&nconf);
	size_t total = ncmp + nflag + 3 + 1 + nconf;
	struct CMUnitTest *tests = calloc(total, sizeof(*tests));
	if (!tests)
		return 1;
	size_t t = 0;
	for (size_t i = 0; i < ncmp; i++)
		tests[t++] = (struct CMUnitTest){cmp_cases[i].name, run_cmp_case, NULL, NULL, (void *)&cmp_cases[i]};
	for (size_t i = 0; i < nflag; i++)
		tests[t++] = (struct CMUnitTest){flag_cases[i].name, run_flag_case, NULL, NULL, (void *)&flag_cases[i]};
	tests[t++] = (struct CMUnitTest){"checker__flags__too_long__fails", checker__flags__too_long__fails, NULL, NULL, NULL};
	tests[t++] = (struct CMUnitTest){"checker__large_input__linear_and_bounded_message",
					 checker__large_input__linear_and_bounded_message, NULL, NULL, NULL};
	tests[t++] = (struct CMUnitTest){"checker__null_message_buffer__still_judges",
					 checker__null_message_buffer__still_judges, NULL, NULL, NULL};
	tests[t++] = (struct CMUnitTest){"checker__kattis_conformance__folder_present",
					 checker__kattis_conformance__folder_present, NULL, NULL, NULL};
	for (size_t i = 0; i < nconf; i++)
		tests[t++] = (struct CMUnitTest){conf[i].name, run_conf_case, NULL, NULL, &conf[i]};
	int rc = _cmocka_run_group_tests("checker", tests, t, NULL, NULL);
	free(tests);
	free(conf);
	return rc;
}
