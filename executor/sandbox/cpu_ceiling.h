/* One CPU ceiling over a group of sandboxes: the cgroup every notebook
 * kernel of a kernel node lives under (executor.kernel_memory_mb). Its
 * CFS quota caps what all of them use together (pct of one CPU), and its
 * weight makes them yield to the judging sandboxes beside it, which keep
 * their CPU slots and honest timing while a class's kernels run. runsc
 * creates each sandbox's own cgroup below it, with its own quota, which
 * must not exceed the ceiling (cgroup v1 refuses a child's larger quota):
 * exec_cpu_ceiling_clamp says what a sandbox may ask for. */
#pragma once

#include "common/err.h"
#include "executor/sandbox/cgroup.h"

#define EXEC_CPU_CEILING_PERIOD_US 100000u

/* Creates rel (e.g. "gavel/node1") in the CPU controller's hierarchy of
 * cg, and sets its quota to pct percent of one CPU per period and its
 * weight to weight_pct percent of a sibling's default; reads both back.
 * -1 with err when any part cannot be set: the caller does not start
 * kernels without it (fail closed). */
int exec_cpu_ceiling_apply(const struct exec_cgroup *cg, const char *rel, unsigned pct, unsigned weight_pct,
			   struct gv_err *err) GV_MUST_CHECK;

/* A sandbox's CPU quota (percent of one CPU, 0: none) under a ceiling of
 * ceiling_pct: never above it, and never "none". Pure. */
unsigned exec_cpu_ceiling_clamp(unsigned quota_pct, unsigned ceiling_pct);
