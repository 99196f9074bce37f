/* A bound on the PostgreSQL connections of a kernel node's workers
 * (daemon_internal.h, exec_pg_gate_*). Each worker's place is a flag in
 * its shared slot, so that a worker that dies gives its place back when
 * the supervisor clears its slot for the new one. */
#include "executor/daemon/daemon_internal.h"

#include "common/backoff.h"

#define GATE_WAIT_MS 30000
#define GATE_POLL_MS 20

static int places_held(const struct daemon *d)
{
	int n = 0;
	for (int k = 0; k < d->workers; k++)
		n += __atomic_load_n(&d->slots[k].pg_held, __ATOMIC_ACQUIRE) != 0;
	return n;
}

bool exec_pg_gate_take(void *worker)
{
	struct worker *w = worker;
	struct daemon *d = w->d;
	int *mine = &d->slots[w->index].pg_held;
	uint64_t deadline = exec_daemon_mono_ms() + GATE_WAIT_MS;
	for (;;) {
		/* Optimistic: take a place, and give it back when that made one
		 * too many (two workers may take the last place at once: both
		 * step back, and try again after a jittered pause). */
		if (places_held(d) < EXEC_PG_GATE_MAX) {
			__atomic_store_n(mine, 1, __ATOMIC_SEQ_CST);
			if (places_held(d) <= EXEC_PG_GATE_MAX)
				return true;
			__atomic_store_n(mine, 0, __ATOMIC_SEQ_CST);
		}
		if (exec_daemon_mono_ms() >= deadline)
			return false;
		gv_backoff_sleep_ms(GATE_POLL_MS + (long)(w->index % 7) * 3);
	}
}

void exec_pg_gate_give(void *worker)
{
	struct worker *w = worker;
	__atomic_store_n(&w->d->slots[w->index].pg_held, 0, __ATOMIC_SEQ_CST);
}
