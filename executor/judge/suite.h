/* Judging against an instructor test suite (executor/suite/README.md).
 *
 * One sandbox per submission, as always. Its job files are the student's
 * files under their own names, the suite's support files (which replace a
 * student file of the same name) and gavel-suite. The compile phase is
 * `gavel-suite build FRAMEWORK` (the student's build: a failure is CE).
 * Then one test phase per group: the group's test file (and, for the c
 * framework, gavel_check.h) is placed for that phase only (a `file` frame,
 * wiped with /tmp after it: a hidden test is in the sandbox only while its
 * own group runs, and never while another group's code does), the plan is
 * the phase's stdin, and the summary comes back as the feedback file
 * `summary`. A group's summary counts only when gavel-suite exited 0 (it
 * wrote it after every other process of the run was dead); otherwise each
 * of its tests fails with what ended the phase. Of a hidden group only
 * each test's outcome is taken: its message is the verdict's, its output
 * none, its time the phase's as gavel-init and the host measured it,
 * shared among the tests and coarse (the student's code can rewrite the
 * framework's report after reading the hidden file). */
#pragma once

#include "executor/judge/judge.h"

/* Verdicts per test: pass AC, fail WA (skipped too), timeout TLE, error
 * and crash RE; a test's score is its points when it passed; a group
 * with group points scores them only when every test of it passed. The
 * submission's verdict is its first test's that did not pass, in plan
 * order (AC when all did), its score the sum. Arguments as
 * exec_judge_problem's; opts->source_name names the first file. */
int exec_judge_suite(struct exec_engine *e, const struct exec_problem *p, const struct lang_def *lang,
		     const void *source, size_t len, const struct exec_judge_opts *opts, struct exec_judgement *out,
		     struct gv_err *err) GV_MUST_CHECK;
