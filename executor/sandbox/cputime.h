/* CPU time of a phase that does not grow with the node's load.
 *
 * Under gVisor's ptrace platform the Sentry counts a task's user time as
 * the time between switching into the program and getting it back, so time
 * a program's thread spends waiting for a host CPU is counted as its CPU
 * time: on a node running more sandboxes than it has cores, gavel-init's
 * wait4 figure (the "guest" figure) grows with the load. The host kernel's
 * figure for the sandbox's cgroup (cpuacct.usage / cpu.stat usage_usec)
 * counts only CPU really consumed, by every thread of the sandbox: the
 * program, but also the Sentry, the gofer and init's own per-test work.
 *
 * So the engine (session_phase.c) reads the sandbox cgroup's CPU time before and
 * after each phase, reports min(guest, host delta), and decides TLE itself
 * against the real limit, killing the sandbox itself once the host figure
 * is past the limit by a margin (exec_cpu_host_kill_ns). Each figure bounds the program's CPU from above:
 * the guest one by the time its threads were scheduled in, the host one by
 * everything the sandbox did, so their minimum is never below what the
 * program used and a program cannot lower it. init is sent a looser CPU
 * limit (exec_cpu_guest_limit) so that its own kill, driven by the inflated
 * guest clock, does not fire before the program used its real limit: with
 * six CPU-bound sandboxes on two cores the guest clock was measured running
 * up to 4.6 times faster than the host's count (tests/bench/README.md), so
 * no fixed factor over the limit would do.
 * Pure: no I/O. */
#pragma once

#include <stdint.h>

/* The CPU limit sent to gavel-init for a phase whose real limit is
 * limit_ms and wall limit wall_ms: the wall limit (init refuses a CPU
 * limit above it), so that init's own CPU kill, driven by the guest clock,
 * never cuts a program short before the host's count says it used its
 * limit; the wall limit still stops everything. Never below limit_ms. */
uint64_t exec_cpu_guest_limit(uint64_t limit_ms, uint64_t wall_ms);

/* The host's own kill: once the sandbox cgroup has used this much CPU
 * (ns) in a phase whose real limit is limit_ms, the engine kills the
 * sandbox and the phase is TLE. 2 x limit + 200 ms: a backstop that bounds
 * what a program that never stops burns, not the judge of the limit (that
 * is min(guest, host) against the real limit when the run ends). It is
 * also where a spinning program's TLE comes from (init's own limit is the
 * loose one), so a 1 s spin reports ~2.2 s. It cannot be tighter: the
 * host figure carries what the Sentry spends for the program, which is
 * large for a program that faults memory in (~25 us a page under ptrace:
 * a C program filling 256 MiB under a 1 s limit was killed by the host at
 * 1.5 x limit + 200 ms, before its MLE, while init's figure was under the
 * limit; on a loaded node every time), so a tight margin turns such
 * programs' verdicts into TLE. */
uint64_t exec_cpu_host_kill_ns(uint64_t limit_ms);

enum exec_cpu_outcome {
	EXEC_CPU_KEEP,     /* init's status stands (time_ms corrected) */
	EXEC_CPU_TLE,      /* the corrected time reached the real limit: TLE */
	EXEC_CPU_STARVED,  /* init killed it for CPU at its loose limit while
			    * the host figure stayed below the real one: the
			    * guest clock ran that far ahead of the real one;
			    * no verdict can be given from this run */
};

/* What one phase's CPU figures mean. status and limit are init's (as in
 * the result record: "OK", "TLE", ...; "cpu", "wall", ...); guest_ms is
 * init's time_ms, host_us the sandbox cgroup's CPU over the phase,
 * limit_ms the real limit. *time_ms gets min(guest_ms, host_us / 1000).
 * Statuses init ranks above a CPU verdict (OLE, MLE) and init's own
 * failure (IE) are kept; otherwise a corrected time >= limit_ms is TLE,
 * as init's own rule would have said with the real limit. */
enum exec_cpu_outcome exec_cpu_settle(const char *status, const char *limit, uint64_t guest_ms,
				      uint64_t host_us, uint64_t limit_ms, uint64_t *time_ms);
