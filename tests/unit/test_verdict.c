/* Unit tests of verdict aggregation (executor/judge/verdict.c): hand-built
 * group trees and tables of per-case results → verdict, score, deciding
 * case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "executor/judge/verdict.h"

/* ---- tree building ----------------------------------------------------- */

enum shape {
	PASS_FAIL,    /* sample{0,1} secret{2,3,4} */
	SCORING,      /* sample{0} secret{group1 min 40 {1,2}, group2 min 60 {3,4}}, on_reject grade */
	WORST_ERROR,  /* like PASS_FAIL, secret worst_error */
	ANY_ACCEPTED, /* like PASS_FAIL, secret on_reject continue, accept_if_any_accepted */
	ANY_BREAK,    /* like ANY_ACCEPTED with on_reject break: judging stops at the first rejection */
	IGNORE_SAMPLE,/* like PASS_FAIL, root ignore_sample */
	SCORING_AVG,  /* like SCORING, secret avg over groups, each group sum */
};

static struct exec_problem_grading grading(enum exec_problem_on_reject r, enum exec_problem_aggregation a,
					   double accept)
{
	return (struct exec_problem_grading){.on_reject = r, .aggregation = a, .accept_score = accept,
					     .reject_score = 0, .grader_flags = "", .output_validator_flags = "",
					     .input_validator_flags = ""};
}

static void set_group(struct exec_problem_node *g, const char *name, struct exec_problem_node *parent,
		      size_t nchildren, struct exec_problem_grading gr)
{
	g->kind = EXEC_PROBLEM_GROUP;
	g->name = (char *)name;
	g->parent = parent;
	g->grading = gr;
	g->nchildren = nchildren;
	g->children = calloc(nchildren, sizeof(*g->children));
	assert_non_null(g->children);
}

static void set_case(struct exec_problem *p, struct exec_problem_node *c, struct exec_problem_node *parent,
		     const char *name)
{
	c->kind = EXEC_PROBLEM_CASE;
	c->name = (char *)name;
	c->parent = parent;
	c->is_sample = parent->is_sample;
	c->index = p->ncases;
	p->cases[p->ncases++] = c;
}

static void build(struct exec_problem *p, enum shape s)
{
	memset(p, 0, sizeof(*p));
	p->cases = calloc(8, sizeof(*p->cases));
	assert_non_null(p->cases);
	struct exec_problem_grading def = grading(EXEC_PROBLEM_FIRST_ERROR, EXEC_PROBLEM_AGG_SUM, 1);
	struct exec_problem_node *root = &p->root;
	if (s == SCORING || s == SCORING_AVG) {
		p->type = EXEC_PROBLEM_SCORING;
		struct exec_problem_grading gr = grading(EXEC_PROBLEM_GRADE, EXEC_PROBLEM_AGG_SUM, 1);
		set_group(root, "", NULL, 2, gr);
		struct exec_problem_node *sample = &root->children[0], *secret = &root->children[1];
		set_group(sample, "sample", root, 1, gr);
		sample->is_sample = true;
		set_case(p, &sample->children[0], sample, "sample/1");
		set_group(secret, "secret", root, 2,
			  grading(EXEC_PROBLEM_GRADE, s == SCORING_AVG ? EXEC_PROBLEM_AGG_AVG : EXEC_PROBLEM_AGG_SUM, 1));
		enum exec_problem_aggregation ga = s == SCORING_AVG ? EXEC_PROBLEM_AGG_SUM : EXEC_PROBLEM_AGG_MIN;
		set_group(&secret->children[0], "secret/group1", secret, 2, grading(EXEC_PROBLEM_GRADE, ga, 40));
		set_group(&secret->children[1], "secret/group2", secret, 2, grading(EXEC_PROBLEM_GRADE, ga, 60));
		set_case(p, &secret->children[0].children[0], &secret->children[0], "secret/group1/1");
		set_case(p, &secret->children[0].children[1], &secret->children[0], "secret/group1/2");
		set_case(p, &secret->children[1].children[0], &secret->children[1], "secret/group2/1");
		set_case(p, &secret->children[1].children[1], &secret->children[1], "secret/group2/2");
		return;
	}
	p->type = EXEC_PROBLEM_PASS_FAIL;
	struct exec_problem_grading rg = def;
	rg.ignore_sample = s == IGNORE_SAMPLE;
	set_group(root, "", NULL, 2, rg);
	struct exec_problem_node *sample = &root->children[0], *secret = &root->children[1];
	set_group(sample, "sample", root, 2, def);
	sample->is_sample = true;
	struct exec_problem_grading sg = def;
	if (s == WORST_ERROR)
		sg.on_reject = EXEC_PROBLEM_WORST_ERROR;
	if (s == ANY_ACCEPTED || s == ANY_BREAK)
		sg.accept_if_any_accepted = true;
	if (s == ANY_ACCEPTED)
		sg.on_reject = EXEC_PROBLEM_GRADE;
	set_group(secret, "secret", root, 3, sg);
	set_case(p, &sample->children[0], sample, "sample/1");
	set_case(p, &sample->children[1], sample, "sample/2");
	set_case(p, &secret->children[0], secret, "secret/1");
	set_case(p, &secret->children[1], secret, "secret/2");
	set_case(p, &secret->children[2], secret, "secret/3");
}

static void free_tree(struct exec_problem_node *g)
{
	for (size_t i = 0; i < g->nchildren; i++)
		if (g->children[i].kind == EXEC_PROBLEM_GROUP)
			free_tree(&g->children[i]);
	free(g->children);
}

static void teardown_problem(struct exec_problem *p)
{
	free_tree(&p->root);
	free(p->cases);
}

/* ---- table ------------------------------------------------------------- */

struct vcase {
	const char *name;
	enum shape shape;
	const char *results; /* space separated verdict names; "AC:12.5" gives a validator score */
	const char *verdict;
	double score;
	long first_failed; /* -1: none */
};

static const struct vcase cases[] = {
	{"verdict__pass_fail__all_ac__accepts", PASS_FAIL, "AC AC AC AC AC", "AC", 1, -1},
	{"verdict__pass_fail__one_wa__wa", PASS_FAIL, "AC AC AC WA AC", "WA", 0, 3},
	{"verdict__pass_fail__first_error_in_order__wins", PASS_FAIL, "AC AC TLE WA RE", "TLE", 0, 2},
	{"verdict__pass_fail__sample_failure__counts", PASS_FAIL, "WA AC AC AC AC", "WA", 0, 0},
	{"verdict__pass_fail__skipped_after_first_error__keeps_error", PASS_FAIL, "AC AC RE SKIPPED SKIPPED", "RE", 0, 2},
	{"verdict__pass_fail__skipped_does_not_hide_later_error", PASS_FAIL, "AC SKIPPED AC MLE AC", "MLE", 0, 3},
	{"verdict__pass_fail__only_skipped__skipped", PASS_FAIL, "AC AC AC SKIPPED AC", "SKIPPED", 0, 3},
	{"verdict__pass_fail__internal_error__reported", PASS_FAIL, "AC AC IE AC AC", "IE", 0, 2},
	{"verdict__worst_error__most_severe_wins", WORST_ERROR, "AC AC WA TLE RE", "RE", 0, 4},
	{"verdict__worst_error__kattis_order_tle_over_ole", WORST_ERROR, "AC AC OLE TLE WA", "TLE", 0, 3},
	{"verdict__worst_error__kattis_order_re_over_mle", WORST_ERROR, "AC AC MLE RE AC", "RE", 0, 3},
	{"verdict__worst_error__sample_first_error_still_first", WORST_ERROR, "WA AC TLE AC AC", "WA", 0, 0},
	{"verdict__accept_if_any__one_ac_accepts", ANY_ACCEPTED, "AC AC WA AC WA", "AC", 1, -1},
	{"verdict__accept_if_any__none_ac_rejects", ANY_ACCEPTED, "AC AC WA TLE WA", "WA", 0, 2},
	{"verdict__accept_if_any_break__ac_after_rejection_unseen", ANY_BREAK, "AC AC WA AC WA", "WA", 0, 2},
	{"verdict__accept_if_any_break__ac_before_rejection_accepts", ANY_BREAK, "AC AC AC WA WA", "AC", 1, -1},
	{"verdict__ignore_sample__sample_failure_ignored", IGNORE_SAMPLE, "WA RE AC AC AC", "AC", 1, -1},
	{"verdict__ignore_sample__secret_failure_counts", IGNORE_SAMPLE, "WA AC AC OLE AC", "OLE", 0, 3},
	{"verdict__scoring__all_ac__full_score", SCORING, "AC AC AC AC AC", "AC", 100, -1},
	{"verdict__scoring__group2_fails__group1_points", SCORING, "AC AC AC AC WA", "WA", 40, 4},
	{"verdict__scoring__group1_fails__group2_points", SCORING, "AC TLE AC AC AC", "TLE", 60, 1},
	{"verdict__scoring__sample_never_scores", SCORING, "WA AC AC AC AC", "WA", 100, 0},
	{"verdict__scoring__nothing_passes__zero", SCORING, "AC WA WA WA WA", "WA", 0, 1},
	{"verdict__scoring__validator_scores__used", SCORING, "AC AC:10 AC:20 AC:30 AC:60", "AC", 40, -1},
	{"verdict__scoring__avg_of_sums", SCORING_AVG, "AC AC AC AC WA", "WA", (80 + 60) / 2.0, 4},
};

static void run_case(void **state)
{
	const struct vcase *c = *state;
	struct exec_problem p;
	build(&p, c->shape);
	struct exec_case_result res[8];
	memset(res, 0, sizeof(res));
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", c->results);
	size_t n = 0;
	char *save = NULL;
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save), n++) {
		char *colon = strchr(w, ':');
		if (colon) {
			*colon = '\0';
			res[n].has_score = true;
			res[n].score = atof(colon + 1);
		}
		int v = exec_verdict_parse(w);
		assert_true(v >= 0);
		res[n].verdict = (enum exec_verdict)v;
	}
	assert_int_equal(n, p.ncases);
	struct exec_verdict_outcome out;
	struct gv_err err;
	if (exec_verdict_aggregate(&p, res, n, &out, &err) < 0)
		fail_msg("aggregate: %s", err.msg);
	assert_string_equal(exec_verdict_name(out.verdict), c->verdict);
	if (out.score != c->score)
		fail_msg("score %g, want %g", out.score, c->score);
	if (c->first_failed < 0)
		assert_true(out.first_failed == SIZE_MAX);
	else
		assert_int_equal(out.first_failed, (size_t)c->first_failed);
	teardown_problem(&p);
}

/* ---- other behaviour --------------------------------------------------- */

static void verdict__wrong_result_count__fails(void **state)
{
	(void)state;
	struct exec_problem p;
	build(&p, PASS_FAIL);
	struct exec_case_result res[5] = {{0}};
	struct exec_verdict_outcome out;
	struct gv_err err;
	assert_int_equal(exec_verdict_aggregate(&p, res, 4, &out, &err), -1);
	res[2].verdict = (enum exec_verdict)99;
	assert_int_equal(exec_verdict_aggregate(&p, res, 5, &out, &err), -1);
	teardown_problem(&p);
}

static void verdict__names__round_trip(void **state)
{
	(void)state;
	for (int v = 0; v < EXEC_VERDICT_COUNT_; v++)
		assert_int_equal(exec_verdict_parse(exec_verdict_name((enum exec_verdict)v)), v);
	assert_int_equal(exec_verdict_parse("tle"), EXEC_VERDICT_TLE);
	assert_int_equal(exec_verdict_parse("nope"), -1);
	assert_int_equal(exec_verdict_parse(NULL), -1);
	assert_string_equal(exec_verdict_name((enum exec_verdict)77), "??");
}

static void verdict__can_stop_after__follows_on_reject(void **state)
{
	(void)state;
	struct exec_problem p;
	build(&p, PASS_FAIL);
	assert_true(exec_verdict_can_stop_after(&p, 0));
	assert_true(exec_verdict_can_stop_after(&p, 3));
	assert_false(exec_verdict_can_stop_after(&p, 5));
	teardown_problem(&p);
	build(&p, WORST_ERROR);
	assert_true(exec_verdict_can_stop_after(&p, 0));
	assert_false(exec_verdict_can_stop_after(&p, 3));
	teardown_problem(&p);
	build(&p, ANY_ACCEPTED);
	assert_false(exec_verdict_can_stop_after(&p, 2));
	teardown_problem(&p);
	build(&p, IGNORE_SAMPLE);
	assert_false(exec_verdict_can_stop_after(&p, 0));
	assert_true(exec_verdict_can_stop_after(&p, 2));
	teardown_problem(&p);
	build(&p, SCORING);
	assert_false(exec_verdict_can_stop_after(&p, 1));
	teardown_problem(&p);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	struct CMUnitTest *tests = calloc(n + 3, sizeof(*tests));
	if (!tests)
		return 1;
	size_t t = 0;
	for (size_t i = 0; i < n; i++)
		tests[t++] = (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, (void *)&cases[i]};
	tests[t++] = (struct CMUnitTest){"verdict__wrong_result_count__fails", verdict__wrong_result_count__fails, NULL,
					 NULL, NULL};
	tests[t++] = (struct CMUnitTest){"verdict__names__round_trip", verdict__names__round_trip, NULL, NULL, NULL};
	tests[t++] = (struct CMUnitTest){"verdict__can_stop_after__follows_on_reject",
					 verdict__can_stop_after__follows_on_reject, NULL, NULL, NULL};
	int rc = _cmocka_run_group_tests("verdict", tests, t, NULL, NULL);
	free(tests);
	return rc;
}
