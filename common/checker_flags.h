/* The built-in checkers' options and the grammar of their flags (the
 * validator_flags of problem.yaml, the "checker" field of a native job).
 * Shared by the frontend, which refuses bad flags with a 400 before a job
 * is queued, and the executor, which parses them again before it compares
 * (executor/judge/checker.h holds the comparison). Pure: no I/O, no
 * globals. */
#pragma once

#include <stdbool.h>

#include "common/err.h"

#define GV_CHECKER_FLAGS_MAX 1024 /* bytes of a flags string */

enum gv_checker_mode {
	GV_CHECKER_TOKENS = 0,
	GV_CHECKER_EXACT,
};

struct gv_checker_opts {
	enum gv_checker_mode mode;
	bool case_sensitive;         /* tokens */
	bool space_change_sensitive; /* tokens */
	bool ignore_trailing_ws;     /* exact */
	double float_abs_tol;        /* tokens; < 0: not set */
	double float_rel_tol;        /* tokens; < 0: not set */
};

/* Tokens, case-insensitive, whitespace-insensitive, no float tolerance. */
void gv_checker_opts_default(struct gv_checker_opts *o);

/* Parses validator flags (space separated, as in problem.yaml's
 * validator_flags) on top of *o: case_sensitive, space_change_sensitive,
 * float_tolerance E (sets both tolerances), float_absolute_tolerance E,
 * float_relative_tolerance E, and Gavel's own exact and
 * ignore_trailing_whitespace. Unknown flags, missing or bad numbers (negative,
 * not finite) are errors. flags may be NULL or empty. */
int gv_checker_parse_flags(const char *flags, struct gv_checker_opts *o, struct gv_err *err) GV_MUST_CHECK;
