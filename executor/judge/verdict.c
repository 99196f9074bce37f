/* Verdict and score aggregation over a problem's group tree; the rules are in
 * verdict.h. */
#include "executor/judge/verdict.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

static const char *const names[EXEC_VERDICT_COUNT_] = {
	[EXEC_VERDICT_AC] = "AC",   [EXEC_VERDICT_SKIPPED] = "SKIPPED", [EXEC_VERDICT_PE] = "PE",
	[EXEC_VERDICT_WA] = "WA",   [EXEC_VERDICT_OLE] = "OLE",         [EXEC_VERDICT_RE] = "RE",
	[EXEC_VERDICT_MLE] = "MLE", [EXEC_VERDICT_TLE] = "TLE",         [EXEC_VERDICT_CE] = "CE",
	[EXEC_VERDICT_IE] = "IE",
};

const char *exec_verdict_name(enum exec_verdict v)
{
	return (unsigned)v < EXEC_VERDICT_COUNT_ ? names[v] : "??";
}

int exec_verdict_parse(const char *name)
{
	for (int i = 0; name && i < EXEC_VERDICT_COUNT_; i++)
		if (!strcasecmp(name, names[i]))
			return i;
	return -1;
}

/* worst_error's order, Kattis' default grader: JE (IE) before RTE, MLE, TLE,
 * OLE, WA; CE never occurs inside a group; PE is the mildest rejection. */
static int severity(enum exec_verdict v)
{
	static const int rank[EXEC_VERDICT_COUNT_] = {
		[EXEC_VERDICT_AC] = 0,  [EXEC_VERDICT_SKIPPED] = 1, [EXEC_VERDICT_PE] = 2, [EXEC_VERDICT_WA] = 3,
		[EXEC_VERDICT_OLE] = 4, [EXEC_VERDICT_TLE] = 5,     [EXEC_VERDICT_MLE] = 6, [EXEC_VERDICT_RE] = 7,
		[EXEC_VERDICT_CE] = 8,  [EXEC_VERDICT_IE] = 9,
	};
	return (unsigned)v < EXEC_VERDICT_COUNT_ ? rank[v] : 0;
}

struct agg {
	enum exec_verdict verdict;
	double score;
	size_t first_failed;
};

static int group(const struct exec_problem_node *g, const struct exec_case_result *res, size_t n, bool root,
		 bool scoring, struct agg *out, struct gv_err *err)
{
	const struct exec_problem_grading *gr = &g->grading;
	bool any_ac = false, all_ac = true;
	struct agg first = {EXEC_VERDICT_AC, 0, SIZE_MAX}, worst = first, skipped = first;
	double sum = 0, mn = 0, mx = 0;
	size_t counted = 0;
	bool broken = false; /* on_reject break: what follows a rejection was never judged */
	for (size_t i = 0; i < g->nchildren && !broken; i++) {
		const struct exec_problem_node *c = &g->children[i];
		struct agg a;
		if (c->kind == EXEC_PROBLEM_CASE) {
			if (c->index >= n)
				return gv_err_set(err, GV_EINVAL, "no result for case %zu (%s)", c->index, c->name);
			const struct exec_case_result *r = &res[c->index];
			if ((unsigned)r->verdict >= EXEC_VERDICT_COUNT_)
				return gv_err_set(err, GV_EINVAL, "case %zu: bad verdict %d", c->index, (int)r->verdict);
			a.verdict = r->verdict;
			a.score = r->has_score && r->verdict != EXEC_VERDICT_SKIPPED ? r->score :
				  r->verdict == EXEC_VERDICT_AC ? gr->accept_score : gr->reject_score;
			a.first_failed = r->verdict == EXEC_VERDICT_AC ? SIZE_MAX : c->index;
		} else if (group(c, res, n, false, scoring, &a, err) < 0) {
			return -1;
		}
		bool sample = root && c->is_sample;
		/* A sample that counts for nothing does not break either. */
		if (gr->on_reject == EXEC_PROBLEM_FIRST_ERROR && a.verdict != EXEC_VERDICT_AC &&
		    a.verdict != EXEC_VERDICT_SKIPPED && !(sample && (scoring || gr->ignore_sample)))
			broken = true;
		if (!(sample && gr->ignore_sample)) {
			if (a.verdict == EXEC_VERDICT_AC) {
				any_ac = true;
			} else {
				all_ac = false;
				if (a.verdict == EXEC_VERDICT_SKIPPED) {
					if (skipped.verdict == EXEC_VERDICT_AC)
						skipped = a;
				} else {
					if (first.verdict == EXEC_VERDICT_AC)
						first = a;
					if (severity(a.verdict) > severity(worst.verdict))
						worst = a;
				}
			}
		}
		/* The sample scores nothing at the root of a scoring problem. */
		if (sample && (scoring || gr->ignore_sample))
			continue;
		sum += a.score;
		mn = counted == 0 || a.score < mn ? a.score : mn;
		mx = counted == 0 || a.score > mx ? a.score : mx;
		counted++;
	}
	if (all_ac || (gr->accept_if_any_accepted && any_ac) || gr->always_accept)
		*out = (struct agg){EXEC_VERDICT_AC, 0, SIZE_MAX};
	else if (first.verdict == EXEC_VERDICT_AC)
		*out = skipped; /* only skipped cases: the rejection happened elsewhere */
	else
		*out = gr->on_reject == EXEC_PROBLEM_WORST_ERROR ? worst : first;
	switch (gr->aggregation) {
	case EXEC_PROBLEM_AGG_SUM:
		out->score = sum;
		break;
	case EXEC_PROBLEM_AGG_AVG:
		out->score = counted ? sum / (double)counted : 0;
		break;
	case EXEC_PROBLEM_AGG_MIN:
		out->score = mn;
		break;
	case EXEC_PROBLEM_AGG_MAX:
		out->score = mx;
		break;
	case EXEC_PROBLEM_AGG_PASS_FAIL:
		out->score = all_ac && isfinite(gr->max_score) ? gr->max_score : 0;
		break;
	}
	return 0;
}

int exec_verdict_aggregate(const struct exec_problem *p, const struct exec_case_result *results, size_t n,
			   struct exec_verdict_outcome *out, struct gv_err *err)
{
	if (n != p->ncases)
		return gv_err_set(err, GV_EINVAL, "%zu results for %zu cases", n, p->ncases);
	struct agg a;
	bool scoring = p->type == EXEC_PROBLEM_SCORING;
	if (group(&p->root, results, n, true, scoring, &a, err) < 0)
		return -1;
	out->verdict = a.verdict;
	out->first_failed = a.verdict == EXEC_VERDICT_AC ? SIZE_MAX : a.first_failed;
	out->score = scoring ? a.score : (a.verdict == EXEC_VERDICT_AC ? 1 : 0);
	return 0;
}

bool exec_verdict_can_stop_after(const struct exec_problem *p, size_t index)
{
	if (p->type == EXEC_PROBLEM_SCORING || index >= p->ncases)
		return false;
	for (const struct exec_problem_node *g = p->cases[index]->parent; g; g = g->parent) {
		if (g->grading.on_reject != EXEC_PROBLEM_FIRST_ERROR || g->grading.accept_if_any_accepted ||
		    g->grading.always_accept)
			return false;
		if (!g->parent && g->grading.ignore_sample && p->cases[index]->name &&
		    !strncmp(p->cases[index]->name, "sample/", 7))
			return false;
	}
	return true;
}
