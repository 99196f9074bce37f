/* The pure decision "what happened to this run": from the wait status, the
 * measurements and what the supervisor itself did, to a result record's
 * status, limit and message. No I/O; table-tested in
 * tests/unit/test_init_verdict.c. */
#pragma once

#include <stdint.h>

#include "executor/init/job.h"
#include "executor/sandbox/record.h"

/* What the supervisor observed about one run. */
struct init_outcome {
	int exited;            /* 1: exited with exit_code; 0: killed by term_signal */
	int exit_code;
	int term_signal;
	uint64_t cpu_ms;       /* utime + stime from wait4 */
	uint64_t wall_ms;
	uint64_t wall_us;   /* the same, finer: what a trivial run costs */
	uint64_t maxrss_kb;    /* ru_maxrss */
	uint64_t tree_rss_kb;  /* largest sampled sum of the resident sizes of all processes (procs > 1; 0: none) */
	uint64_t hwm_kb;       /* largest VmHWM sampled from /proc (0: none) */
	uint64_t vmpeak_kb;    /* largest VmPeak sampled from /proc (0: none) */
	uint64_t stdout_bytes;
	uint64_t stderr_bytes;
	char order[EXEC_RECORD_ORDER_MAX]; /* the record's `order`; "" when one stream kept nothing */
	int killed_output;     /* we killed it: output cap */
	int killed_memory;     /* we killed it: sampled VmHWM >= limit */
	int killed_wall;       /* we killed it: wall clock */
	int killed_cpu;        /* we killed it: sampled CPU time (of the whole tree) >= limit */
	int killed_idle;       /* we killed it: idle (no process runnable, CPU still) reached idle_ms (tests) */
	uint64_t idle_ms;      /* idle time counted so far */
	uint64_t as_limit_kb;  /* RLIMIT_AS it ran under; 0: none (tests) */
	int exec_enomem;       /* execve failed with ENOMEM/E2BIG under RLIMIT_AS */
};

/* gVisor (20221219) reserves the whole initial stack mapping, up to
 * 128 MiB, at execve and counts it in the address space (measured: with
 * memory 512 MiB and stack 512 MiB only 380 MiB could be malloc-ed). So
 * RLIMIT_AS = memory_kb + max(memory_kb, 64 MiB) + min(stack_kb, 128 MiB):
 * the room over the limit lets a growing heap reach the resident limit,
 * which ru_maxrss / VmHWM catch against memory_kb (MLE). */
#define INIT_STACK_RESERVE_MAX_KB (128u * 1024)
uint64_t init_as_limit_kb(const struct init_limits *lim);

/* Idle time of a run (PROTOCOL.md, "How init decides", rule 4): the sum
 * of sample intervals in which no process was runnable and the CPU time
 * did not move over the last `window` samples (2 for the program's own
 * /proc/<pid>/stat every 5 ms, so that the window spans a 10 ms clock
 * tick; 1 for tree walks every 20 ms). */
struct init_idle {
	int64_t cpu[2];    /* CPU time (ms) one and two samples ago; -1: none */
	uint64_t at_ns;    /* time of the last sample */
	uint64_t idle_ms;
};
void init_idle_start(struct init_idle *s);
/* cpu_ms < 0: unreadable this time (nothing counted, nothing kept). */
void init_idle_sample(struct init_idle *s, int64_t cpu_ms, int runnable, uint64_t now_ns, int window);

/* The margin below the RLIMIT_AS limit within which an abnormal end counts
 * as a memory limit: limit/8, at least 1 MiB. */
uint64_t init_as_margin_kb(uint64_t memory_kb);

/* Fills status, limit, exit_code/signal, the measurements and a message of
 * rec (phase and index are left alone). Precedence: output, memory sampled,
 * CPU, idle, wall, peak RSS, RLIMIT_AS rule (only when it ran under one),
 * signal, exit code. The rules are
 * documented in executor/PROTOCOL.md ("How init decides"). */
void init_decide(const struct init_outcome *o, const struct init_limits *lim,
		 struct exec_record *rec);
