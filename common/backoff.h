/* Bounded exponential backoff for reconnect loops (PostgreSQL, Redis):
 * the delay doubles from an initial value up to a cap, and each wait is
 * jittered so that many clients that lost a server together do not
 * reconnect in lockstep. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* The un-jittered delay before retry number `attempt` (0 = first retry):
 * initial_ms * 2^attempt, capped at max_ms. Non-positive inputs give 0.
 * Pure; never overflows. */
long gv_backoff_delay_ms(unsigned attempt, long initial_ms, long max_ms);

/* "Equal jitter": a delay in [delay/2, delay] drawn from `seed`, which is
 * advanced (any value is a valid seed). Pure apart from *seed. */
long gv_backoff_jitter_ms(long delay_ms, unsigned *seed);

/* Sleeps ms milliseconds, resuming after signals. */
void gv_backoff_sleep_ms(long ms);

/* A seed that differs between processes and calls (pid, time). */
unsigned gv_backoff_seed(void);

/* Milliseconds of CLOCK_MONOTONIC: what the windows below count in. */
uint64_t gv_mono_ms(void);

/* Tries of one step for a while: a server away for a failover costs a
 * wait, not the work. After each failed try, gv_backoff_window_next()
 * sleeps the next delay (initial_ms doubling up to max_ms) and returns
 * true, or returns false once window_ms have passed since start. */
struct gv_backoff_window {
	uint64_t start_ms;
	uint64_t window_ms;
	long initial_ms, max_ms;
	unsigned attempt;
};
void gv_backoff_window_start(struct gv_backoff_window *w, uint64_t window_ms, long initial_ms, long max_ms);
bool gv_backoff_window_next(struct gv_backoff_window *w);
