/* The four test frameworks gavel-suite drives: how the student's files are
 * built (the compile phase), how a group's test file is built against them
 * and how one test is run so that it leaves a JUnit XML report. Every
 * command is an argv of absolute paths (no shell, no PATH search). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor/judge/suite_framework.h"
#include "executor/judge/suite_summary.h"


#define SUITE_ARGV_MAX 1100 /* words of one command: the sources of a build */
#define SUITE_SOURCES_MAX 1000
#define SUITE_DIR "/tmp/gv-suite"           /* gavel-suite's own scratch folder */
#define SUITE_FILES_DIR "/tmp/gv-files"     /* the group's test file (gavel-init) */
#define SUITE_FEEDBACK_DIR "/tmp/gv-feedback"
#define SUITE_REPORT SUITE_DIR "/report.xml"
#define SUITE_JUNIT_REPORT SUITE_DIR "/rep/TEST-junit-jupiter.xml"
#define SUITE_PROGRAM SUITE_DIR "/t"


/* The endings of the student's source files. */
const char *const *suite_source_endings(enum suite_framework f);

/* argv (at most SUITE_ARGV_MAX words, NULL-terminated) of the compile
 * phase: the student's sources (relative to /box, sorted) compiled in
 * /box. */
void suite_build_argv(enum suite_framework f, char **sources, size_t n, const char **argv);

/* argv of building the group's test file test_file (in SUITE_FILES_DIR)
 * against the student's objects (absolute paths); false when the
 * framework builds nothing (pytest). */
bool suite_test_build_argv(enum suite_framework f, const char *test_file, char **objects, size_t n,
			   const char **argv, char *buf, size_t bufsz);

/* argv of running test name of test_file (memory_mb for the JVM's heap);
 * buf holds the words built here. The report goes to
 * suite_report_path(f). */
void suite_test_argv(enum suite_framework f, const char *test_file, const char *name, uint32_t memory_mb,
		     const char **argv, char *buf, size_t bufsz);
/* argv of running every test of names[0..n) in one process, as the
 * framework runs a suite, each test's captured output in its report;
 * false when the framework runs one test per process only (c). */
bool suite_batch_argv(enum suite_framework f, const char *test_file, char names[][EXEC_SUITE_NAME_MAX + 1],
		      size_t n, uint32_t memory_mb, const char **argv, char *buf, size_t bufsz);
const char *suite_report_path(enum suite_framework f);
/* The folder a test runs in. */
const char *suite_test_cwd(enum suite_framework f);
/* Does the report's test case (name, classname) stand for the plan's test
 * name? */
bool suite_report_names(enum suite_framework f, const char *test_file, const char *plan_name, const char *name,
			const char *classname);
