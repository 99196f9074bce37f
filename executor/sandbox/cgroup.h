/* Host cgroups of the sandboxes: detection of the hierarchy in use (v1 with
 * memory, pids, cpu and cpuacct, or the v2 unified tree), reading the
 * counters that matter after a sandbox ends (OOM kills, peak memory, CPU),
 * and removal. runsc creates each sandbox's cgroups itself from
 * linux.cgroupsPath; this module only checks, reads and cleans them.
 *
 * Paths are relative to each controller's mount: "gavel/<tenant>/<sandbox>".
 * Backends sit behind struct exec_cgroup_ops; the mount root is a parameter
 * so tests can point it at a fake tree. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct exec_cgroup;

struct exec_cgroup_ops {
	const char *name; /* "v1" or "v2" */
	/* Fails when a controller Gavel relies on is missing. */
	int (*check)(const struct exec_cgroup *cg, struct gv_err *err);
	/* Number of OOM kills in the cgroup at rel (v1 memory.oom_control,
	 * v2 memory.events "oom_kill"). */
	int (*oom_kills)(const struct exec_cgroup *cg, const char *rel, uint64_t *out,
			 struct gv_err *err);
	/* Peak memory in bytes (v1 memory.max_usage_in_bytes, v2 memory.peak). */
	int (*peak_memory)(const struct exec_cgroup *cg, const char *rel, uint64_t *out,
			   struct gv_err *err);
	/* CPU time in nanoseconds (v1 cpuacct.usage, v2 cpu.stat usage_usec). */
	int (*cpu_usage)(const struct exec_cgroup *cg, const char *rel, uint64_t *out,
			 struct gv_err *err);
	/* Removes rel (and its sub-cgroups) in every hierarchy, bottom-up,
	 * retrying briefly while the last tasks leave. Missing is success. */
	int (*remove)(const struct exec_cgroup *cg, const char *rel, struct gv_err *err);
};

struct exec_cgroup {
	const struct exec_cgroup_ops *ops;
	char root[PATH_MAX]; /* e.g. /sys/fs/cgroup */
};

extern const struct exec_cgroup_ops exec_cgroup_v1_ops;
extern const struct exec_cgroup_ops exec_cgroup_v2_ops;

/* Detects the backend under root (NULL: /sys/fs/cgroup) and checks its
 * controllers. v2 when root itself is a cgroup2 tree with memory, pids and
 * cpu enabled; v1 when root holds memory, pids, cpu and cpuacct
 * hierarchies. Anything else fails closed. */
int exec_cgroup_detect(struct exec_cgroup *cg, const char *root, struct gv_err *err) GV_MUST_CHECK;

/* Builds "<parent>/<tenant>/<sandbox>" into out. parent is a relative path
 * of safe components (e.g. "gavel"); tenant and sandbox must be single
 * components of [A-Za-z0-9_-], 1..64 bytes. Pure. */
int exec_cgroup_path(char *out, size_t outsz, const char *parent, const char *tenant,
		     const char *sandbox, struct gv_err *err) GV_MUST_CHECK;

/* True when s is 1..64 bytes of [A-Za-z0-9_-]: a safe single path
 * component for cgroup and sandbox names. */
bool exec_cgroup_name_ok(const char *s);

/* Removes every cgroup under parent (e.g. "gavel") in every hierarchy,
 * SIGKILLing tasks still listed in them first: used at executor start, when
 * every sandbox under parent is a leftover of an earlier run. *removed
 * counts the directories removed. */
int exec_cgroup_sweep(const struct exec_cgroup *cg, const char *parent, unsigned *removed,
		      struct gv_err *err) GV_MUST_CHECK;

/* Removes rel/.. (the tenant cgroup) if it became empty; busy is fine. */
void exec_cgroup_remove_parent_if_empty(const struct exec_cgroup *cg, const char *rel);
