/* How gavel-init turns one run's measurements into a status. Pure. */
#include "executor/init/verdict.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

uint64_t init_as_margin_kb(uint64_t memory_kb)
{
	uint64_t m = memory_kb / 8;
	return m < 1024 ? 1024 : m;
}

uint64_t init_as_limit_kb(const struct init_limits *lim)
{
	uint64_t stack = lim->stack_kb < INIT_STACK_RESERVE_MAX_KB ? lim->stack_kb : INIT_STACK_RESERVE_MAX_KB;
	/* The address space gets room over the memory limit (as much again,
	 * at least 64 MiB): a program growing its heap step by step then
	 * reaches the resident-memory limit, which the sampler and ru_maxrss
	 * see (MLE), instead of a failed allocation that it reports its own way
	 * (RE). RLIMIT_AS stays the backstop against huge reservations. */
	uint64_t room = lim->memory_kb > 64u * 1024 ? lim->memory_kb : 64u * 1024;
	return lim->memory_kb + room + stack;
}

void init_idle_start(struct init_idle *s)
{
	s->cpu[0] = s->cpu[1] = -1;
	s->at_ns = 0;
	s->idle_ms = 0;
}

void init_idle_sample(struct init_idle *s, int64_t cpu_ms, int runnable, uint64_t now_ns, int window)
{
	if (cpu_ms < 0)
		return;
	int64_t before = window >= 2 ? s->cpu[1] : s->cpu[0];
	if (before >= 0 && !runnable && cpu_ms == before && now_ns > s->at_ns)
		s->idle_ms += (now_ns - s->at_ns) / 1000000ull;
	s->cpu[1] = s->cpu[0];
	s->cpu[0] = cpu_ms;
	s->at_ns = now_ns;
}

static void set(struct exec_record *rec, enum exec_status s, enum exec_limit l, const char *msg)
{
	rec->status = s;
	rec->limit = l;
	size_t n = strlen(msg); /* our own short literals and buffers */
	if (n > sizeof(rec->message) - 1)
		n = sizeof(rec->message) - 1;
	memcpy(rec->message, msg, n);
	rec->message[n] = '\0';
}

void init_decide(const struct init_outcome *o, const struct init_limits *lim,
		 struct exec_record *rec)
{
	rec->time_ms = o->cpu_ms;
	rec->wall_ms = o->wall_ms;
	rec->wall_us = o->wall_us;
	rec->present |= EXEC_REC_WALL_US;
	rec->memory_kb = o->maxrss_kb > o->hwm_kb ? o->maxrss_kb : o->hwm_kb;
	if (o->tree_rss_kb > rec->memory_kb)
		rec->memory_kb = o->tree_rss_kb;
	rec->stdout_bytes = o->stdout_bytes;
	rec->stderr_bytes = o->stderr_bytes;
	memcpy(rec->order, o->order, sizeof(rec->order));
	rec->present &= ~(unsigned)(EXEC_REC_EXIT_CODE | EXEC_REC_SIGNAL);
	rec->exit_code = 0;
	rec->signal = 0;
	if (o->exited) {
		rec->exit_code = o->exit_code;
		rec->present |= EXEC_REC_EXIT_CODE;
	} else {
		rec->signal = o->term_signal;
		rec->present |= EXEC_REC_SIGNAL;
	}
	int abnormal = !o->exited || o->exit_code != 0;

	if (o->killed_output) {
		set(rec, EXEC_STATUS_OLE, EXEC_LIMIT_OUTPUT, "output limit exceeded");
		return;
	}
	if (o->killed_memory) {
		set(rec, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY, "memory limit exceeded");
		return;
	}
	/* RLIMIT_CPU's soft limit sends SIGXCPU, its hard limit SIGKILL; both
	 * sit above cpu_ms, so the CPU figure alone decides, SIGXCPU as backup. */
	if (o->killed_cpu || o->cpu_ms >= lim->cpu_ms || (!o->exited && o->term_signal == SIGXCPU)) {
		set(rec, EXEC_STATUS_TLE, EXEC_LIMIT_CPU, "time limit exceeded");
		return;
	}
	/* Idle past the time limit: TLE, as DOMjudge and Kattis judge a
	 * program that sleeps past its limit, not its output. */
	if (o->killed_idle) {
		char msg[96];
		snprintf(msg, sizeof(msg), "time limit exceeded (idle %" PRIu64 " ms: %" PRIu64 " ms wall, %" PRIu64 " ms CPU)",
			 o->idle_ms, o->wall_ms, o->cpu_ms);
		set(rec, EXEC_STATUS_TLE, EXEC_LIMIT_WALL, msg);
		return;
	}
	if (o->killed_wall) {
		set(rec, EXEC_STATUS_WLE, EXEC_LIMIT_WALL, "wall time limit exceeded");
		return;
	}
	if (rec->memory_kb >= lim->memory_kb) {
		set(rec, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY, "memory limit exceeded");
		return;
	}
	if (o->as_limit_kb) {
		/* Under RLIMIT_AS a failed allocation is invisible from outside: the
		 * program sees ENOMEM / bad_alloc / MemoryError and dies its own way.
		 * We call it MLE when it ended abnormally while its address space had
		 * come within the margin of the limit, when execve itself ran out of
		 * address space, or when it was SIGKILLed by nobody we know of (the
		 * loader's way to fail an over-sized image after the point of no
		 * return; RLIMIT_CPU's SIGKILL is already TLE above). */
		if (o->exec_enomem ||
		    (abnormal && o->vmpeak_kb + init_as_margin_kb(lim->memory_kb) >= o->as_limit_kb) ||
		    (!o->exited && o->term_signal == SIGKILL)) {
			set(rec, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY,
			    "memory limit exceeded (address space)");
			return;
		}
	}
	if (!o->exited) {
		char msg[64];
		if (o->term_signal == SIGSYS)
			snprintf(msg, sizeof(msg), "forbidden system call (signal %d)", o->term_signal);
		else
			snprintf(msg, sizeof(msg), "killed by signal %d (%s)", o->term_signal,
				 sigabbrev_np(o->term_signal) ? sigabbrev_np(o->term_signal) : "?");
		set(rec, EXEC_STATUS_SG, EXEC_LIMIT_NONE, msg);
		return;
	}
	if (o->exit_code != 0) {
		char msg[48];
		snprintf(msg, sizeof(msg), "exit code %d", o->exit_code);
		set(rec, EXEC_STATUS_RE, EXEC_LIMIT_NONE, msg);
		return;
	}
	set(rec, EXEC_STATUS_OK, EXEC_LIMIT_NONE, "");
}
