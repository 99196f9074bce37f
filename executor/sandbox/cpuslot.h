/* CPU slots: at most one running test per CPU of the node, whoever runs it.
 *
 * Under gVisor's ptrace platform a program's CPU time is counted by the
 * Sentry as the time between switching into the program and getting it
 * back, so time spent waiting for a host CPU is reported as CPU time, and
 * even the host cgroup's figure grows with the wall time a starved test
 * takes (the sandbox spends ~90 ms of CPU per second of a test around the
 * program: tests/bench/README.md). The only figure that does not move with
 * the node's load is one taken while the test had a CPU to itself. So each
 * test phase holds one of N slots, N = the CPUs this process may run on,
 * for as long as it runs: the executor's workers, `gavel run` and
 * `gavel judge` on the same node share the same slots (lock files under
 * one folder), and a test waits for a free slot before it starts instead
 * of running starved. Waiting is not counted in any of the test's limits.
 *
 * flock() locks belong to an open file description, so every acquisition
 * opens its own slot files: the executor's forked workers never share one,
 * and the kernel drops a slot when its holder dies, however it dies. */
#pragma once

#include <stdint.h>

#include "common/err.h"

/* Where the engines of a node keep their slots unless configured. */
#define EXEC_CPU_SLOT_DIR "/run/gavel/cpu-slots"

struct exec_cpuslot {
	int fd;      /* the held slot file, -1 when none */
	int index;
};

/* The number of slots: the CPUs in this process's affinity mask (at least
 * 1). */
unsigned exec_cpuslot_count(void);

/* The slot count a setting names: "off" (or "0": no slots), "auto" (one
 * per CPU, exec_cpuslot_count) or a number 1..1024. */
int exec_cpuslot_parse(const char *setting, uint32_t *n, struct gv_err *err) GV_MUST_CHECK;

/* Takes one of n slots under dir (created 0700 if missing; slot files
 * "slot-<i>", 0600, opened without following links). Blocks, polling,
 * until a slot is free or until deadline_ms (CLOCK_MONOTONIC ms): then
 * -1 with GV_ELIMIT. *slot is held until exec_cpuslot_release. */
int exec_cpuslot_acquire(const char *dir, unsigned n, int64_t deadline_ms, struct exec_cpuslot *slot,
			 struct gv_err *err) GV_MUST_CHECK;

/* Gives the slot back; safe on a slot never taken (fd -1). */
void exec_cpuslot_release(struct exec_cpuslot *slot);
