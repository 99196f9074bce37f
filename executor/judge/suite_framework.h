/* The test frameworks of instructor test suites and the facts about them
 * that both sides need: the judge (suite.yaml's check, a phase's limits)
 * and gavel-suite inside the sandbox (the deadlines it keeps). Pure;
 * linked into gavel-suite like suite_summary.c. The commands themselves
 * are gavel-suite's (executor/suite/framework.h). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum suite_framework {
	SUITE_PYTEST,
	SUITE_JUNIT5,
	SUITE_GTEST,
	SUITE_C,
};

/* -1 for an unknown name. */
int suite_framework_of(const char *name);
const char *suite_framework_name(enum suite_framework f);
/* CPU time a test's process needs before the test itself (an interpreter
 * or a JVM starting, the framework collecting), added to its limit. */
uint32_t suite_startup_ms(enum suite_framework f);
/* Native code (gtest, c): the student's build is objects to link. */
bool suite_native(enum suite_framework f);
/* Whether a group's test file is compiled in its phase (all but pytest). */
bool suite_builds_tests(enum suite_framework f);
/* RLIMIT_AS of a test's process for memory_mb, so that a test that
 * allocates without end fails alone instead of taking the group's phase
 * over its memory limit: memory_mb plus 64 MiB for native code, plus 256
 * MiB for Python (the interpreter and pytest); 0 for a JVM, which sizes
 * its heap with -Xmx. */
uint64_t suite_as_bytes(enum suite_framework f, uint64_t memory_mb);
/* Memory a phase needs beyond the tests' own (compilers, a JVM, pytest),
 * in MiB: above suite_as_bytes' margin, so that the limit a test hits is
 * its own. */
uint32_t suite_overhead_mb(enum suite_framework f);
