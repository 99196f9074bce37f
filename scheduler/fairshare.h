/* Weighted fair share across tenants: the pure core of the scheduler. Given
 * each tenant's weight, jobs running (assigned or running), cap and queued
 * count, it says who gets the next free slot. No I/O, no globals.
 *
 * Rule: among tenants with queued work and running < cap, the one with the
 * smallest running/weight gets the slot (the deficit order of weighted
 * fair queueing, over concurrent slots); ties go to the larger weight, then
 * to the tenant with more queued work, then to the lower index. An idle
 * tenant (nothing queued) takes no part, so its share goes to the busy
 * ones; a tenant at its cap takes no part, so its excess goes to others. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct sched_fs_tenant {
	unsigned weight;      /* >= 1 (0 is treated as 1) */
	unsigned running;     /* jobs assigned or running now */
	unsigned max_running; /* 0: no cap */
	unsigned queued;      /* jobs waiting */
	bool blocked;         /* no executor can take its head job this round */
};

/* Index of the tenant that gets the next slot, or -1 when none is eligible. */
int sched_fairshare_pick(const struct sched_fs_tenant *t, size_t n);

/* Hands out up to slots slots one at a time with sched_fairshare_pick,
 * updating running and queued as if each was assigned; given[i] (n entries,
 * zeroed first) counts the slots tenant i got. Returns the slots handed out. */
size_t sched_fairshare_plan(struct sched_fs_tenant *t, size_t n, size_t slots, unsigned *given);
