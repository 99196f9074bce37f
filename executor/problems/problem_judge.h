/* Judging a submission against a stored problem (issue 6): the version's
 * package folder is built from the test-data cache (executor/
 * problem_store.h), loaded like `gavel judge` loads a folder, and judged by
 * the same exec_judge_problem. The result document (common/jobspec.h) gets,
 * beyond the inline judge's fields:
 *
 *   "problem": {"id", "version", "name", "type"}, "score",
 *   "samples_only", "run_all",
 *   "tests": [{"name": "secret/group1/03", "group": "secret/group1",
 *              "sample": bool, "verdict", "time_ms", "wall_ms", "memory_kb",
 *              "exit_code", "signal", "message", "score" (validator scores),
 *              "feedback": {"input", "expected", "output",
 *                           "diff": {"line", "expected", "output"}}}],
 *   "groups": [{"name", "verdict", "score"}]   every group below data/
 *
 * "feedback" holds bounded previews (EXEC_FEEDBACK_FIELD_MAX bytes each,
 * EXEC_FEEDBACK_TOTAL_MAX per submission) and is never shown as stored: the
 * frontend filters it, and "message" (which may quote the answer), per the
 * problem's feedback policy before any GET answers. */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include "common/err.h"
#include "common/jobspec.h"
#include "executor/judge/judge_inline.h"
#include "executor/problems/problem_store.h"
#include "languages/lang.h"

#define EXEC_FEEDBACK_FIELD_MAX 4096u
#define EXEC_FEEDBACK_DIFF_MAX 256u
#define EXEC_FEEDBACK_TOTAL_MAX (1024u * 1024u)

struct exec_problem_judge_opts {
	const char *tenant; /* the tenant uuid: cgroup name, cache and query scope */
	const char *sid;    /* names the package folder */
	const char *node;   /* written into the result; may be NULL */
	exec_inline_progress_fn progress;
	void *progress_arg;
};

/* Judges spec (spec->problem_id set) in lang. Returns a new result object
 * (caller json_decrefs) with *sum filled; a problem that is not ready, a
 * package that cannot be built or loaded is an IE result saying so. NULL
 * only when out of memory. */
json_t *exec_problem_judge_run(const struct exec_problem_env *env, const struct lang_def *lang,
			       const struct gv_jobspec *spec, const struct exec_problem_judge_opts *opts,
			       struct exec_inline_summary *sum, struct gv_err *err) GV_MUST_CHECK;
