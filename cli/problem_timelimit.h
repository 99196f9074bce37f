/* `gavel problem push` for a package without a time limit: judges the
 * package's own accepted submissions locally (the real engine, sandboxed,
 * as `gavel judge` does) and sets the limit from the slowest of them the
 * way problemtools does (exec_problem_time_rule: legacy
 * limits.time_multiplier and time_safety_margin, 2023-07
 * limits.time_multipliers and time_resolution). */
#pragma once

#include <stdio.h>

#include "common/err.h"

struct cli_time_limit {
	double limit_s;  /* 0: the package has a limit of its own, nothing computed */
	double margin_s; /* problemtools' safety margin, reported */
	double slowest_s; /* slowest test of the slowest accepted submission, in the problem's seconds */
	char slowest_sub[256];
};

/* For the package in dir: when problem.yaml has no limits.time_limit and
 * there is no .timelimit, judges every submissions/accepted/ file with a
 * cap of cap_ms per test, prints a line per submission and the rule it
 * applied to out, and fills *tl. A language's time factor is divided out
 * of its measured time (Gavel multiplies the limit by it when judging).
 * A package that does not load is left to the server to reject (0, nothing
 * computed). -1 with err when it has no accepted submission
 * in a known language, one of them is not accepted, or the sandbox cannot
 * run (root, runsc). */
int cli_problem_time_limit(const char *dir, unsigned cap_ms, FILE *out, struct cli_time_limit *tl,
			   struct gv_err *err) GV_MUST_CHECK;
