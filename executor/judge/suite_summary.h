/* The summary of one group of an instructor test suite: what gavel-suite
 * writes inside the sandbox (/tmp/gv-feedback/summary, after every other
 * process of the run is dead) and the host parses, bounded, with the
 * record lexer of the gavel-init protocol (executor/sandbox/record.h).
 * Pure; linked into gavel-suite and the judge. Fuzzed by
 * tests/fuzz/fuzz_suite_summary.c.
 *
 *   suite:1
 *   build:ok                 or build:fail, then build_message:<text>
 *   test:<name>              one block per test of the plan, in its order
 *   outcome:pass             pass | fail | error | skipped | timeout | crash
 *   time_ms:12               CPU time of the test's process tree (for
 *                            tests run together: the report's; the host
 *                            uses neither for a hidden group)
 *   wall_ms:40
 *   message:<text>           optional: the framework's failure message
 *   output:<text>            optional: what the test printed (cut)
 *   end:<tests>
 *
 * <text> is escaped (exec_suite_escape): a backslash as "\\", a newline as
 * "\n", other control bytes and DEL as "\xHH", so that a value is one
 * line. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define EXEC_SUITE_SUMMARY_MAX 65536 /* bytes: one feedback file */
#define EXEC_SUITE_TESTS_MAX 64      /* tests of one group */
#define EXEC_SUITE_NAME_MAX 200      /* bytes of a test's name */
#define EXEC_SUITE_MESSAGE_MAX 1024  /* bytes of a message, unescaped */
#define EXEC_SUITE_OUTPUT_MAX 2048   /* bytes of a test's output, unescaped */

enum exec_suite_outcome {
	EXEC_SUITE_UNSET = 0,
	EXEC_SUITE_PASS,
	EXEC_SUITE_FAIL,    /* an assertion of the test failed */
	EXEC_SUITE_ERROR,   /* an exception, a build failure, no report */
	EXEC_SUITE_SKIPPED, /* the framework skipped it: not a pass */
	EXEC_SUITE_TIMEOUT,
	EXEC_SUITE_CRASH,   /* killed by a signal */
};

/* A test's name: 1 to EXEC_SUITE_NAME_MAX bytes of printable ASCII but
 * a backslash, no space at either end. */
bool exec_suite_name_ok(const char *s, size_t len);

const char *exec_suite_outcome_name(enum exec_suite_outcome o);
/* EXEC_SUITE_UNSET for an unknown name. */
enum exec_suite_outcome exec_suite_outcome_of(const char *s, size_t len);

struct exec_suite_test_result {
	char name[EXEC_SUITE_NAME_MAX + 1];
	enum exec_suite_outcome outcome;
	uint64_t time_ms, wall_ms;
	char message[EXEC_SUITE_MESSAGE_MAX + 1]; /* NUL bytes shown as '?' */
	char *output; /* owned, NUL-terminated; NULL when none */
	size_t output_len;
};

struct exec_suite_summary {
	bool build_ok;
	char build_message[EXEC_SUITE_MESSAGE_MAX + 1];
	struct exec_suite_test_result *tests; /* owned */
	size_t ntests;
};

/* Escapes in[0..len) into out (cap bytes, NUL-terminated), stopping before
 * an escape that would not fit; returns the bytes of in consumed. */
size_t exec_suite_escape(const char *in, size_t len, char *out, size_t cap);

/* Parses a summary; every value is checked (names, counts, numbers,
 * escapes), anything else is GV_EPROTO. Release with
 * exec_suite_summary_free (also after a failure). */
int exec_suite_summary_parse(const char *buf, size_t len, struct exec_suite_summary *out,
			     struct gv_err *err) GV_MUST_CHECK;
void exec_suite_summary_free(struct exec_suite_summary *s);
