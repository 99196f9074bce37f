/* Bounded exponential backoff for reconnect loops (PostgreSQL, Redis):
 * the delay doubles from an initial value up to a cap, and each wait is
 * jittered so that many clients that lost a server together do not
 * reconnect in lockstep. */
#pragma once

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
