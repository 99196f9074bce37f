/* The set-up the sandbox integration tests share: checking that the engine
 * can run here (root, runsc, a built gavel-init), naming a test's private
 * runsc root, work root and cgroup parent, and removing what an engine
 * leaves of them. Linked into every test binary with the rest of
 * tests/support. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "executor/sandbox/session.h"

/* A test engine's own roots, all carrying the same name (the test's tag and
 * pid), so that a test never touches another executor's sandboxes. */
struct test_engine_roots {
	char runsc_root[128]; /* /run/<name> */
	char work_root[128];  /* /var/tmp/<name> */
	char parent[64];      /* the cgroup parent <name> */
};

/* True when sandbox tests can run: root, /usr/bin/runsc, every program of
 * tools (NULL-terminated absolute paths; NULL for none) and a built
 * gavel-init (GAVEL_INIT, else $BUILD/gavel-init, else build/gavel-init),
 * whose real path goes into init_path. Otherwise false with the reason in
 * why. */
bool test_engine_can_run(const char *const *tools, char init_path[PATH_MAX], char *why, size_t why_size);

/* Names roots after the formatted name (e.g. "gavel-test-%d", pid). */
void test_engine_roots_name(struct test_engine_roots *roots, const char *fmt, ...) GV_PRINTF(2, 3);

/* An engine configuration on roots with /usr/bin/runsc and init_path; the
 * other fields are zero (the engine's defaults). It borrows the strings of
 * roots and init_path, which must outlive the engine. */
struct exec_engine_config test_engine_config(const struct test_engine_roots *roots, const char *init_path);

/* Finishes e (exec_engine_fini) and removes what it leaves of roots: the
 * cgroup parent (after parent/tenant when tenant is not NULL) and the work
 * and runsc roots, which are empty by then unless something leaked; a
 * leak is left in place for the test to find. */
void test_engine_remove(struct exec_engine *e, const struct test_engine_roots *roots, const char *tenant);

/* Called first in each test of a suite whose set-up may not have made its
 * engine: ready passes; otherwise the test is skipped when
 * GAVEL_ALLOW_SKIP=1 and fails naming the suite (what) when not. */
void test_engine_require_ready(bool ready, const char *what);
