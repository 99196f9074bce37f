/* Bounds on what a kernel node's workers do at once (daemon_internal.h,
 * exec_gate_*). Each worker's place is a flag in its shared slot, so that
 * a worker that dies gives its place back when the supervisor clears its
 * slot for the new one. */
#include "executor/daemon/daemon_internal.h"

#include "common/backoff.h"

#define GATE_POLL_MS 20
#define PG_GATE_WAIT_MS 30000

static int places_held(const struct daemon *d, enum exec_gate g)
{
	int n = 0;
	for (int k = 0; k < d->workers; k++)
		n += __atomic_load_n(&d->slots[k].gate_held[g], __ATOMIC_ACQUIRE) != 0;
	return n;
}

bool exec_gate_take(struct worker *w, enum exec_gate g, int places, uint64_t wait_ms)
{
	struct daemon *d = w->d;
	int *mine = &d->slots[w->index].gate_held[g];
	uint64_t deadline = exec_daemon_mono_ms() + wait_ms;
	for (;;) {
		/* Optimistic: take a place, and give it back when that made one
		 * too many (two workers may take the last place at once: both
		 * step back, and try again after pauses of their own). */
		if (places_held(d, g) < places) {
			__atomic_store_n(mine, 1, __ATOMIC_SEQ_CST);
			if (places_held(d, g) <= places)
				return true;
			__atomic_store_n(mine, 0, __ATOMIC_SEQ_CST);
		}
		if (exec_daemon_mono_ms() >= deadline || (d->stop && *d->stop))
			return false;
		gv_backoff_sleep_ms(GATE_POLL_MS + (long)(w->index % 7) * 3);
	}
}

void exec_gate_give(struct worker *w, enum exec_gate g)
{
	__atomic_store_n(&w->d->slots[w->index].gate_held[g], 0, __ATOMIC_SEQ_CST);
}

bool exec_pg_gate_take(void *worker)
{
	return exec_gate_take(worker, EXEC_GATE_PG, EXEC_PG_GATE_MAX, PG_GATE_WAIT_MS);
}

void exec_pg_gate_give(void *worker)
{
	exec_gate_give(worker, EXEC_GATE_PG);
}
