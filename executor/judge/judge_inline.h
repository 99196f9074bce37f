/* Running one service job (common/jobspec.h) with the sandbox engine: a
 * plain run on stdin, or a judged run against the request's inline tests
 * with the built-in checker applied outside the sandbox. Builds the result
 * document (gv_result_to_json). The same two channels as the engine: what
 * the program did is the verdict; a failure of our machinery is IE with a
 * message, never WA. */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include "common/err.h"
#include "common/jobspec.h"
#include "executor/sandbox/session.h"
#include "languages/lang.h"

/* Progress: event "compiling" (test = of = 0) or "running" (test 1-based of
 * n tests; plain runs: 1 of 1). */
typedef void (*exec_inline_progress_fn)(const char *event, size_t test, size_t of, void *arg);

struct exec_inline_opts {
	const char *tenant; /* cgroup name: [A-Za-z0-9_-]{1,64} */
	const char *node;   /* written into the result; may be NULL */
	exec_inline_progress_fn progress;
	void *progress_arg;
	/* Called after each sandbox of the job is open (its compile phase
	 * done), before it runs anything of the tenant's input: its id and
	 * the run limits it applies. May be NULL. */
	void (*sandbox_started)(const char *sandbox_id, const struct exec_limits *run_limits, void *arg);
	void *sandbox_arg;
	/* GPUs assigned to the job (executor/sandbox/gpu.h), for the
	 * submission's sandboxes only (never a checker's): NULL for none. */
	const char *gpu_visible;
	const struct exec_gpu_node *gpu_nodes;
	size_t n_gpu_nodes;
	/* The tenant's current egress policy (tenants/egress.h), loaded by the
	 * executor, for the submission's sandboxes: NULL for no network. */
	const struct tenant_egress_policy *egress;
};

/* What the daemon needs beyond the result document. */
struct exec_inline_summary {
	char verdict[8];       /* the result's "verdict" */
	uint64_t cpu_ms;       /* CPU time of every run, for usage accounting */
	uint64_t max_time_ms, max_memory_kb;
	unsigned sandboxes;
	char limit[16];        /* the limit hit by the deciding run, "" if none */
};

/* Runs spec in lang. Returns a new result object (caller json_decrefs) with
 * *sum filled; NULL only when out of memory (err filled). Bad arguments
 * (limits over the language's maximum, bad checker flags, file names that
 * clash with the language's source name) give an IE result with the reason:
 * the frontend is expected to refuse them first. */
json_t *exec_inline_run(struct exec_engine *e, const struct lang_def *lang, const struct gv_jobspec *spec,
			const struct exec_inline_opts *opts, struct exec_inline_summary *sum,
			struct gv_err *err) GV_MUST_CHECK;
