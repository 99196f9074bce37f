/* Verdict aggregation: from per-test-case results over a problem's group
 * tree (executor/judge/problem.h) to the submission's verdict and score. Pure:
 * no I/O, no allocation.
 *
 * Rules (the Kattis legacy default grader, problem.h for the settings):
 * - a case's score is the score the validator reported (custom score
 *   validation), else the group's accept_score when AC and reject_score
 *   otherwise; a case that was not run (SKIPPED, after a first_error
 *   rejection) scores reject_score;
 * - on_reject break (EXEC_PROBLEM_FIRST_ERROR): what follows a group's
 *   first rejected child counts for nothing, neither verdict nor score,
 *   as if it had not been judged (scoring problems judge it anyway);
 * - a group is AC when all its children are AC (with accept_if_any_accepted:
 *   when any is; with always_accept: always); otherwise its verdict is the
 *   first non-AC child in order (first_error, grade) or the most severe one
 *   in Kattis' order, IE > RE > MLE > TLE > OLE > WA > PE (worst_error); a
 *   SKIPPED child never hides a real rejection;
 * - a group's score aggregates its children's scores: sum (default), avg,
 *   min or max, or 2023-07 pass-fail (its max_score when all its children
 *   are AC, else 0); an empty group is AC with score 0;
 * - at the root, data/sample never counts towards the score of a scoring
 *   problem (nor breaks its judging), and with the root's ignore_sample it
 *   does not count towards the verdict either.
 * The submission's verdict is the root's; its score is the root's score for
 * scoring problems and 0 for pass-fail ones (1 when accepted). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "executor/judge/problem.h"

/* Roughly least to most severe; worst_error ranks them as Kattis does (verdict.c). */
enum exec_verdict {
	EXEC_VERDICT_AC = 0,
	EXEC_VERDICT_SKIPPED, /* not run */
	EXEC_VERDICT_PE,      /* testlib-style presentation error */
	EXEC_VERDICT_WA,
	EXEC_VERDICT_OLE,
	EXEC_VERDICT_RE,
	EXEC_VERDICT_MLE,
	EXEC_VERDICT_TLE,
	EXEC_VERDICT_CE,
	EXEC_VERDICT_IE,
	EXEC_VERDICT_COUNT_
};

struct exec_case_result {
	enum exec_verdict verdict;
	bool has_score; /* the validator reported a score */
	double score;
};

struct exec_verdict_outcome {
	enum exec_verdict verdict;
	double score;
	size_t first_failed; /* index of the case that decided a rejection; SIZE_MAX when AC */
};

/* "AC", "WA", ..., "SKIPPED"; "??" for an out-of-range value. */
const char *exec_verdict_name(enum exec_verdict v);
/* Inverse of exec_verdict_name; -1 when unknown. */
int exec_verdict_parse(const char *name);

/* Aggregates results[i] (for p->cases[i], n == p->ncases) over p's tree. */
int exec_verdict_aggregate(const struct exec_problem *p, const struct exec_case_result *results, size_t n,
			   struct exec_verdict_outcome *out, struct gv_err *err) GV_MUST_CHECK;

/* Whether judging may stop after case `index` was rejected: true when its
 * group and every enclosing group use first_error (and no
 * accept_if_any_accepted), so that nothing later can change the verdict
 * of a pass-fail problem. Scoring problems never stop early. */
bool exec_verdict_can_stop_after(const struct exec_problem *p, size_t index);
