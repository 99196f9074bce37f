/* Weighted fair share across tenants: the pure core of the scheduler. Given
 * each tenant's weight, jobs running (assigned or running), cap and queued
 * count, it says who gets the next free slot. No I/O, no globals.
 *
 * Rule: among tenants with queued work and running < cap, the one with the
 * smallest running/weight gets the slot (the deficit order of weighted
 * fair queueing, over concurrent slots); ties go to the larger weight, then
 * to the tenant with more queued work, then to the lower index. An idle
 * tenant (nothing queued) takes no part, so its share goes to the busy
 * ones; a tenant at its cap takes no part, so its excess goes to others.
 *
 * Burst slots. A backlogged tenant fills every regular slot, so a tenant
 * that arrives next would wait until one of those jobs ends, however fair
 * the order after that. Each executor therefore keeps a few burst slots
 * (executor.burst_slots) that only a tenant below its fair share may take:
 * a newcomer starts at once, while a tenant alone still has every regular
 * slot and never the burst ones. A tenant's fair share is its weight's part
 * of the regular slots among the active tenants (something queued or
 * running); caps are not redistributed here, which only makes the burst
 * test stricter. No slot is labelled: a node with used >= capacity offers
 * only burst slots, so when a regular job ends under a burst job, the
 * freed slot counts as burst and goes to the tenant below its share. */
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

/* True when tenant i runs fewer jobs than its fair share of capacity
 * regular slots: running * (sum of active weights) < capacity * weight.
 * Active: queued > 0 or running > 0 (tenant i counts as active). */
bool sched_fairshare_below_share(const struct sched_fs_tenant *t, size_t n, size_t i, size_t capacity);

/* The tenant that gets the next burst slot: like sched_fairshare_pick,
 * among the eligible tenants below their share; -1 when none. */
int sched_fairshare_pick_burst(const struct sched_fs_tenant *t, size_t n, size_t capacity);
