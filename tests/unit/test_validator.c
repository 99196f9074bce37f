/* Unit tests of executor/judge/validator.c's pure part: how a Kattis output
 * validator's or a testlib checker's run becomes a case verdict (tables of
 * exit codes, statuses and feedback files), the first-number scan for
 * testlib points and the message sanitiser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/judge/validator.h"

struct outcome_case {
	const char *label;
	enum exec_problem_validator_protocol proto;
	bool scoring;
	const char *status;
	int exit_code, signal;
	const char *out;          /* validator stdout */
	const char *err;          /* validator stderr */
	const char *judgemessage; /* feedback file, NULL: absent */
	const char *score_txt;    /* feedback file, NULL: absent */
	enum exec_verdict verdict;
	bool has_score;
	double score;
	const char *message;      /* NULL: not checked */
};

#define K EXEC_PROBLEM_VALIDATOR_KATTIS
#define T EXEC_PROBLEM_VALIDATOR_TESTLIB

static const struct outcome_case cases[] = {
	/* Kattis: 42 / 43, anything else is our (the package's) error. */
	{ "kattis 42 accepts", K, false, "RE", 42, 0, "", "", "fine\n", NULL, EXEC_VERDICT_AC, false, 0, "fine" },
	{ "kattis 43 rejects", K, false, "RE", 43, 0, "", "", "1 + 2 != 4\n", NULL, EXEC_VERDICT_WA, false, 0,
	  "1 + 2 != 4" },
	{ "kattis 43 without message", K, false, "RE", 43, 0, "", "", NULL, NULL, EXEC_VERDICT_WA, false, 0, "" },
	{ "kattis exit 0 is a judge error", K, false, "OK", 0, 0, "", "", NULL, NULL, EXEC_VERDICT_IE, false, 0,
	  NULL },
	{ "kattis exit 1 is a judge error", K, false, "RE", 1, 0, "", "", NULL, NULL, EXEC_VERDICT_IE, false, 0,
	  NULL },
	{ "kattis crash is a judge error", K, false, "SG", 0, 11, "", "", NULL, NULL, EXEC_VERDICT_IE, false, 0,
	  NULL },
	{ "kattis validator TLE is a judge error", K, false, "TLE", 0, 0, "", "", NULL, NULL, EXEC_VERDICT_IE, false,
	  0, NULL },
	{ "kattis validator MLE is a judge error", K, false, "MLE", 0, 0, "", "", NULL, NULL, EXEC_VERDICT_IE, false,
	  0, NULL },
	{ "kattis score on AC", K, true, "RE", 42, 0, "", "", NULL, "17.5\n", EXEC_VERDICT_AC, true, 17.5, NULL },
	{ "kattis no score.txt: no score", K, true, "RE", 42, 0, "", "", NULL, NULL, EXEC_VERDICT_AC, false, 0, NULL },
	{ "kattis score ignored on WA", K, true, "RE", 43, 0, "", "", NULL, "5", EXEC_VERDICT_WA, false, 0, NULL },
	{ "kattis score ignored when not scoring", K, false, "RE", 42, 0, "", "", NULL, "5", EXEC_VERDICT_AC, false,
	  0, NULL },
	{ "kattis bad score.txt", K, true, "RE", 42, 0, "", "", NULL, "lots", EXEC_VERDICT_IE, false, 0, NULL },
	{ "kattis negative score", K, true, "RE", 42, 0, "", "", NULL, "-1", EXEC_VERDICT_IE, false, 0, NULL },
	{ "kattis two numbers in score.txt", K, true, "RE", 42, 0, "", "", NULL, "1 2", EXEC_VERDICT_IE, false, 0,
	  NULL },
	{ "kattis message: first line, control bytes replaced", K, false, "RE", 43, 0, "", "", "a\tb\x01" "c\nsecond",
	  NULL, EXEC_VERDICT_WA, false, 0, "a b?c" },
	/* testlib: 0 / 1 / 2 / 7. */
	{ "testlib 0 accepts", T, false, "OK", 0, 0, "", "ok 3 numbers\n", NULL, NULL, EXEC_VERDICT_AC, false, 0,
	  "ok 3 numbers" },
	{ "testlib 1 wrong answer", T, false, "RE", 1, 0, "", "wrong answer expected 3\n", NULL, NULL,
	  EXEC_VERDICT_WA, false, 0, "wrong answer expected 3" },
	{ "testlib 2 presentation error", T, false, "RE", 2, 0, "", "wrong output format\n", NULL, NULL,
	  EXEC_VERDICT_PE, false, 0, NULL },
	{ "testlib 3 (fail) is a judge error", T, false, "RE", 3, 0, "", "FAIL bad answer\n", NULL, NULL,
	  EXEC_VERDICT_IE, false, 0, NULL },
	{ "testlib 7 points from stdout", T, true, "RE", 7, 0, "0.25\n", "points 9\n", NULL, NULL, EXEC_VERDICT_AC,
	  true, 0.25, NULL },
	{ "testlib 7 points from stderr", T, true, "RE", 7, 0, "", "points 12 partly right\n", NULL, NULL,
	  EXEC_VERDICT_AC, true, 12, NULL },
	{ "testlib 7 on pass-fail is WA", T, false, "RE", 7, 0, "0.5", "", NULL, NULL, EXEC_VERDICT_WA, false, 0,
	  "partial points 0.5" },
	{ "testlib 7 without a number", T, true, "RE", 7, 0, "none", "points", NULL, NULL, EXEC_VERDICT_IE, false, 0,
	  NULL },
	{ "testlib crash", T, false, "SG", 0, 6, "", "", NULL, NULL, EXEC_VERDICT_IE, false, 0, NULL },
	{ "testlib output limit", T, false, "OLE", 0, 0, "", "", NULL, NULL, EXEC_VERDICT_IE, false, 0, NULL },
	/* A feedback dir is Kattis only: testlib ignores it. */
	{ "testlib ignores feedback files", T, true, "OK", 0, 0, "", "ok\n", "x", "99", EXEC_VERDICT_AC, false, 0,
	  "ok" },
};

static void add_fb(struct exec_phase_result *r, const char *name, const char *data)
{
	struct exec_feedback_file *f = &r->feedback[r->n_feedback++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->data = strdup(data);
	f->len = strlen(data);
}

static void validator__outcome_table__maps_exit_codes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct outcome_case *c = &cases[i];
		struct exec_phase_result r;
		memset(&r, 0, sizeof(r));
		snprintf(r.status, sizeof(r.status), "%s", c->status);
		r.exit_code = c->exit_code;
		r.signal = c->signal;
		r.out = strdup(c->out);
		r.out_len = strlen(c->out);
		r.err_out = strdup(c->err);
		r.err_len = strlen(c->err);
		if (c->judgemessage)
			add_fb(&r, "judgemessage.txt", c->judgemessage);
		if (c->score_txt)
			add_fb(&r, "score.txt", c->score_txt);
		struct exec_validator_outcome o;
		exec_validator_outcome_of(c->proto, c->scoring, &r, &o);
		if (o.verdict != c->verdict)
			fail_msg("case '%s': verdict %s, expected %s (%s)", c->label, exec_verdict_name(o.verdict),
				 exec_verdict_name(c->verdict), o.message);
		if (o.has_score != c->has_score || (c->has_score && o.score != c->score))
			fail_msg("case '%s': score %d/%g, expected %d/%g", c->label, o.has_score, o.score,
				 c->has_score, c->score);
		if (c->message && strcmp(o.message, c->message) != 0)
			fail_msg("case '%s': message '%s', expected '%s'", c->label, o.message, c->message);
		if (o.verdict == EXEC_VERDICT_IE && !o.message[0])
			fail_msg("case '%s': a judge error needs a message", c->label);
		exec_phase_result_free(&r);
	}
}

/* Interactive verdicts (Kattis rules): who ended first and how. */
struct interactive_case {
	const char *label;
	const char *sub_status;  /* the submission's engine status */
	int sub_exit;
	const char *itr_status;  /* the interactor's */
	int itr_exit, itr_signal;
	bool interactor_first;
	const char *judgemessage;
	enum exec_verdict verdict;
	const char *message;     /* NULL: not checked */
	uint32_t sub_wall_ms, itr_time_ms; /* how long the submission waited, the interactor's CPU */
};

static const struct interactive_case icases[] = {
	{ "42 after a clean exit", "OK", 0, "RE", 42, 0, false, "found\n", EXEC_VERDICT_AC, "found", 0, 0 },
	{ "42 first, then a clean exit", "OK", 0, "RE", 42, 0, true, NULL, EXEC_VERDICT_AC, NULL, 0, 0 },
	{ "43 first, submission crashes after", "RE", 1, "RE", 43, 0, true, "too many\n", EXEC_VERDICT_WA,
	  "too many", 0, 0 },
	{ "43 first, submission killed after", "SG", 0, "RE", 43, 0, true, NULL, EXEC_VERDICT_WA, NULL, 0, 0 },
	{ "43 first, submission stalls after", "WLE", 0, "RE", 43, 0, true, NULL, EXEC_VERDICT_WA, NULL, 0, 0 },
	{ "43 after a clean exit", "OK", 0, "RE", 43, 0, false, "wrong\n", EXEC_VERDICT_WA, "wrong", 0, 0 },
	{ "submission TLE first, then 43", "TLE", 0, "RE", 43, 0, false, "no answer\n", EXEC_VERDICT_TLE, NULL, 0, 0 },
	{ "submission wall first, then 43", "WLE", 0, "RE", 43, 0, false, NULL, EXEC_VERDICT_TLE, NULL, 0, 0 },
	{ "submission RE first, then 43", "RE", 3, "RE", 43, 0, false, NULL, EXEC_VERDICT_RE, NULL, 0, 0 },
	{ "submission signal first, then 43", "SG", 0, "RE", 43, 0, false, NULL, EXEC_VERDICT_RE, NULL, 0, 0 },
	{ "submission MLE first, then 43", "MLE", 0, "RE", 43, 0, false, NULL, EXEC_VERDICT_MLE, NULL, 0, 0 },
	{ "submission OLE first, then 43", "OLE", 0, "RE", 43, 0, false, NULL, EXEC_VERDICT_OLE, NULL, 0, 0 },
	{ "42 first, submission then TLE", "TLE", 0, "RE", 42, 0, true, NULL, EXEC_VERDICT_TLE, NULL, 0, 0 },
	{ "42 first, submission then RE", "RE", 1, "RE", 42, 0, true, NULL, EXEC_VERDICT_RE, NULL, 0, 0 },
	{ "interactor exit 0 is a judge error", "OK", 0, "OK", 0, 0, false, NULL, EXEC_VERDICT_IE, NULL, 0, 0 },
	{ "interactor exit 1 is a judge error", "RE", 1, "RE", 1, 0, true, NULL, EXEC_VERDICT_IE, NULL, 0, 0 },
	{ "interactor crash is a judge error", "OK", 0, "SG", 0, 11, false, NULL, EXEC_VERDICT_IE, NULL, 0, 0 },
	{ "interactor TLE is a judge error", "WLE", 0, "TLE", 0, 0, false, NULL, EXEC_VERDICT_IE, NULL, 2000, 1500 },
	{ "interactor TLE first is a judge error", "TLE", 0, "TLE", 0, 0, true, NULL, EXEC_VERDICT_IE, NULL, 0, 0 },
	/* DOMjudge's boolfind test-loop: the submission spins to its CPU
	 * limit while the interactor waits for it, and is then killed. */
	{ "submission TLE first, interactor killed waiting", "TLE", 0, "SG", 0, 9, false, NULL, EXEC_VERDICT_TLE,
	  "sub says", 0, 0 },
	{ "submission TLE first, interactor over its wall", "TLE", 0, "WLE", 0, 0, false, NULL, EXEC_VERDICT_TLE,
	  NULL, 0, 0 },
	{ "submission MLE first, interactor crashes", "MLE", 0, "SG", 0, 11, false, NULL, EXEC_VERDICT_MLE, NULL, 0, 0 },
	{ "submission RE first, interactor exits 1", "RE", 1, "RE", 1, 0, false, NULL, EXEC_VERDICT_RE, NULL, 0, 0 },
	{ "submission signal first, interactor killed", "SG", 0, "SG", 0, 9, false, NULL, EXEC_VERDICT_RE, NULL, 0, 0 },
	{ "submission silent to its wall, interactor killed waiting", "WLE", 0, "SG", 0, 9, false, NULL,
	  EXEC_VERDICT_TLE, NULL, 2000, 10 },
	{ "interactor wall is a judge error", "OK", 0, "WLE", 0, 0, false, NULL, EXEC_VERDICT_IE, NULL, 0, 0 },
	{ "interactor OLE is a judge error", "OK", 0, "OLE", 0, 0, false, NULL, EXEC_VERDICT_IE, NULL, 0, 0 },
	{ "interactor's init failed", "OK", 0, "IE", 0, 0, false, NULL, EXEC_VERDICT_IE, NULL, 0, 0 },
	{ "submission's init failed", "IE", 0, "RE", 42, 0, false, NULL, EXEC_VERDICT_IE, NULL, 0, 0 },
	{ "submission's init failed, 43 first", "IE", 0, "RE", 43, 0, true, NULL, EXEC_VERDICT_IE, NULL, 0, 0 },
};

static void validator__interactive_table__kattis_rules(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(icases) / sizeof(icases[0]); i++) {
		const struct interactive_case *c = &icases[i];
		struct exec_phase_result sub, itr;
		memset(&sub, 0, sizeof(sub));
		memset(&itr, 0, sizeof(itr));
		snprintf(sub.status, sizeof(sub.status), "%s", c->sub_status);
		sub.exit_code = c->sub_exit;
		sub.wall_ms = c->sub_wall_ms;
		itr.time_ms = c->itr_time_ms;
		snprintf(sub.message, sizeof(sub.message), "sub says");
		snprintf(itr.status, sizeof(itr.status), "%s", c->itr_status);
		itr.exit_code = c->itr_exit;
		itr.signal = c->itr_signal;
		if (c->judgemessage)
			add_fb(&itr, "judgemessage.txt", c->judgemessage);
		struct exec_validator_outcome o;
		exec_interactive_outcome(&sub, &itr, c->interactor_first, &o);
		if (o.verdict != c->verdict)
			fail_msg("%s: verdict %s, want %s", c->label, exec_verdict_name(o.verdict),
				 exec_verdict_name(c->verdict));
		if (c->message && strcmp(o.message, c->message) != 0)
			fail_msg("%s: message '%s', want '%s'", c->label, o.message, c->message);
		assert_false(o.has_score);
		exec_phase_result_free(&itr);
	}
}

static void validator__first_number__skips_words(void **state)
{
	(void)state;
	double v = -1;
	assert_int_equal(exec_validator_first_number("points 0.5 ok", 13, &v), 0);
	assert_true(v == 0.5);
	assert_int_equal(exec_validator_first_number("  -3e2\n", 7, &v), 0);
	assert_true(v == -300);
	assert_int_equal(exec_validator_first_number("inf nan 0x10 1.2.3", 18, &v), -1);
	assert_int_equal(exec_validator_first_number("", 0, &v), -1);
	assert_int_equal(exec_validator_first_number(NULL, 0, &v), -1);
	/* Bounded by len, not by a NUL. */
	assert_int_equal(exec_validator_first_number("ab 12", 2, &v), -1);
}

static void validator__message__is_one_bounded_line(void **state)
{
	(void)state;
	char m[8];
	exec_validator_message(m, sizeof(m), "abcdefghijkl", 12);
	assert_string_equal(m, "abcdefg");
	exec_validator_message(m, sizeof(m), "ab  \nzz", 7);
	assert_string_equal(m, "ab");
	exec_validator_message(m, sizeof(m), NULL, 0);
	assert_string_equal(m, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(validator__outcome_table__maps_exit_codes),
		cmocka_unit_test(validator__interactive_table__kattis_rules),
		cmocka_unit_test(validator__first_number__skips_words),
		cmocka_unit_test(validator__message__is_one_bounded_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
