/* Bounded exponential backoff with jitter; see backoff.h. */
#include "common/backoff.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

long gv_backoff_delay_ms(unsigned attempt, long initial_ms, long max_ms)
{
	if (initial_ms <= 0 || max_ms <= 0)
		return 0;
	if (initial_ms >= max_ms)
		return max_ms;
	long d = initial_ms;
	for (unsigned i = 0; i < attempt; i++) {
		if (d > max_ms / 2)
			return max_ms;
		d *= 2;
	}
	return d;
}

long gv_backoff_jitter_ms(long delay_ms, unsigned *seed)
{
	if (delay_ms <= 1)
		return delay_ms < 0 ? 0 : delay_ms;
	long half = delay_ms / 2;
	long span = delay_ms - half + 1;
	return half + (long)(rand_r(seed) % (int)(span > 0x7fffffff ? 0x7fffffff : span));
}

void gv_backoff_sleep_ms(long ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

unsigned gv_backoff_seed(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned)ts.tv_nsec ^ ((unsigned)getpid() << 16) ^ (unsigned)ts.tv_sec;
}

uint64_t gv_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void gv_backoff_window_start(struct gv_backoff_window *w, uint64_t window_ms, long initial_ms, long max_ms)
{
	*w = (struct gv_backoff_window){ .start_ms = gv_mono_ms(), .window_ms = window_ms, .initial_ms = initial_ms,
					 .max_ms = max_ms };
}

bool gv_backoff_window_next(struct gv_backoff_window *w)
{
	if (gv_mono_ms() - w->start_ms >= w->window_ms)
		return false;
	gv_backoff_sleep_ms(gv_backoff_delay_ms(w->attempt++, w->initial_ms, w->max_ms));
	return true;
}
