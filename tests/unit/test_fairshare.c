/* Unit tests of weighted fair share (scheduler/fairshare.c): tables of
 * tenants and free slots with the expected split, plus the order of picks. */
#include "scheduler/fairshare.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define MAXT 4

struct plan_case {
	const char *name;
	size_t n;
	struct sched_fs_tenant t[MAXT];
	size_t slots;
	unsigned want[MAXT];
};

static void run_plan_cases(const struct plan_case *cases, size_t ncases)
{
	for (size_t c = 0; c < ncases; c++) {
		struct sched_fs_tenant t[MAXT];
		unsigned given[MAXT];
		memcpy(t, cases[c].t, sizeof(t));
		sched_fairshare_plan(t, cases[c].n, cases[c].slots, given);
		for (size_t i = 0; i < cases[c].n; i++) {
			if (given[i] != cases[c].want[i])
				fail_msg("%s: tenant %zu got %u, want %u", cases[c].name, i, given[i], cases[c].want[i]);
		}
	}
}

static void fairshare__equal_weights__alternates(void **state)
{
	(void)state;
	struct sched_fs_tenant t[2] = { { .weight = 1, .queued = 10 }, { .weight = 1, .queued = 10 } };
	int order[6];
	for (int k = 0; k < 6; k++) {
		order[k] = sched_fairshare_pick(t, 2);
		t[order[k]].running++;
		t[order[k]].queued--;
	}
	int want[6] = { 0, 1, 0, 1, 0, 1 };
	assert_memory_equal(order, want, sizeof(want));
}

static void fairshare__weight_two__gets_twice(void **state)
{
	(void)state;
	static const struct plan_case cases[] = {
		{ "2:1 over 6", 2, { { .weight = 2, .queued = 100 }, { .weight = 1, .queued = 100 } }, 6, { 4, 2 } },
		{ "2:1 over 30", 2, { { .weight = 1, .queued = 100 }, { .weight = 2, .queued = 100 } }, 30, { 10, 20 } },
		{ "3:1 over 8", 2, { { .weight = 3, .queued = 100 }, { .weight = 1, .queued = 100 } }, 8, { 6, 2 } },
		{ "already running counts", 2,
		  { { .weight = 1, .running = 4, .queued = 100 }, { .weight = 1, .queued = 100 } }, 6, { 1, 5 } },
	};
	run_plan_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void fairshare__caps__respected_and_excess_shared(void **state)
{
	(void)state;
	static const struct plan_case cases[] = {
		{ "cap 2", 2, { { .weight = 1, .max_running = 2, .queued = 100 }, { .weight = 1, .queued = 100 } }, 8,
		  { 2, 6 } },
		{ "both capped, slots left", 2,
		  { { .weight = 5, .max_running = 1, .queued = 100 }, { .weight = 1, .max_running = 2, .queued = 100 } },
		  8, { 1, 2 } },
		{ "at cap already", 2,
		  { { .weight = 1, .running = 3, .max_running = 3, .queued = 5 }, { .weight = 1, .queued = 1 } }, 4,
		  { 0, 1 } },
	};
	run_plan_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void fairshare__idle_tenant__share_goes_to_busy(void **state)
{
	(void)state;
	static const struct plan_case cases[] = {
		{ "idle weight 10", 3,
		  { { .weight = 10, .queued = 0 }, { .weight = 1, .queued = 100 }, { .weight = 1, .queued = 100 } }, 10,
		  { 0, 5, 5 } },
		{ "short queue", 2, { { .weight = 1, .queued = 1 }, { .weight = 1, .queued = 100 } }, 6, { 1, 5 } },
		{ "blocked head", 2, { { .weight = 1, .queued = 9, .blocked = true }, { .weight = 1, .queued = 9 } }, 4,
		  { 0, 4 } },
	};
	run_plan_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void fairshare__nothing_eligible__minus_one(void **state)
{
	(void)state;
	struct sched_fs_tenant t[2] = { { .weight = 1 }, { .weight = 1, .running = 1, .max_running = 1, .queued = 3 } };
	assert_int_equal(sched_fairshare_pick(t, 2), -1);
	assert_int_equal(sched_fairshare_pick(NULL, 0), -1);
	unsigned given[2];
	assert_int_equal(sched_fairshare_plan(t, 2, 5, given), 0);
}

static void fairshare__zero_weight__treated_as_one(void **state)
{
	(void)state;
	static const struct plan_case cases[] = {
		{ "weight 0", 2, { { .weight = 0, .queued = 10 }, { .weight = 1, .queued = 10 } }, 4, { 2, 2 } },
	};
	run_plan_cases(cases, 1);
}

/* ---- burst slots ---- */

static void fairshare__below_share__by_weight_among_active(void **state)
{
	(void)state;
	/* 4 regular slots, A (w1) runs 4, B (w1) newly queued: B's share is
	 * 2, A's too; only B is below it. */
	struct sched_fs_tenant t[3] = { { .weight = 1, .running = 4, .queued = 2000 },
					{ .weight = 1, .queued = 1 },
					{ .weight = 5 } /* idle: not counted */ };
	assert_false(sched_fairshare_below_share(t, 3, 0, 4));
	assert_true(sched_fairshare_below_share(t, 3, 1, 4));
	assert_int_equal(sched_fairshare_pick_burst(t, 3, 4), 1);
	/* Alone, A's share is every regular slot: never a burst one. */
	struct sched_fs_tenant alone[1] = { { .weight = 1, .running = 4, .queued = 2000 } };
	assert_false(sched_fairshare_below_share(alone, 1, 0, 4));
	assert_int_equal(sched_fairshare_pick_burst(alone, 1, 4), -1);
	alone[0].running = 3;
	assert_int_equal(sched_fairshare_pick_burst(alone, 1, 4), 0);
	/* Weight 2 of 3 over 6 slots: share 4; running 3 is below, 4 not. */
	struct sched_fs_tenant w[2] = { { .weight = 2, .running = 3, .queued = 9 }, { .weight = 1, .running = 2, .queued = 9 } };
	assert_true(sched_fairshare_below_share(w, 2, 0, 6));
	assert_false(sched_fairshare_below_share(w, 2, 1, 6));
	w[0].running = 4;
	assert_false(sched_fairshare_below_share(w, 2, 0, 6));
	assert_int_equal(sched_fairshare_pick_burst(w, 2, 6), -1);
}

static void fairshare__burst__respects_cap_and_blocked(void **state)
{
	(void)state;
	struct sched_fs_tenant t[2] = { { .weight = 1, .running = 4, .queued = 100 },
					{ .weight = 1, .running = 1, .max_running = 1, .queued = 3 } };
	assert_int_equal(sched_fairshare_pick_burst(t, 2, 4), -1);
	t[1].max_running = 0;
	t[1].blocked = true;
	assert_int_equal(sched_fairshare_pick_burst(t, 2, 4), -1);
	t[1].blocked = false;
	assert_int_equal(sched_fairshare_pick_burst(t, 2, 4), 1);
}

/* A node simulated over time as sched.c's place() uses the two picks:
 * regular slots while any is free, then burst slots to tenants below
 * their share; every job takes `dur` ticks. */
struct sim {
	size_t n;
	struct sched_fs_tenant t[MAXT];
	unsigned cap, burst;
	unsigned ends[MAXT][64]; /* tick at which each running job ends */
	unsigned done[MAXT];
	unsigned max_used, max_running[MAXT];
};

static int sim_start(struct sim *s, unsigned now, unsigned dur)
{
	unsigned used = 0;
	for (size_t i = 0; i < s->n; i++)
		used += s->t[i].running;
	int i;
	if (used < s->cap)
		i = sched_fairshare_pick(s->t, s->n);
	else if (used < s->cap + s->burst)
		i = sched_fairshare_pick_burst(s->t, s->n, s->cap);
	else
		return -1;
	if (i < 0)
		return -1;
	s->ends[i][s->t[i].running++] = now + dur;
	s->t[i].queued--;
	used++;
	if (used > s->max_used)
		s->max_used = used;
	if (s->t[i].running > s->max_running[i])
		s->max_running[i] = s->t[i].running;
	return i;
}

static void sim_finish(struct sim *s, unsigned now)
{
	for (size_t i = 0; i < s->n; i++)
		for (unsigned k = 0; k < s->t[i].running;) {
			if (s->ends[i][k] <= now) {
				s->ends[i][k] = s->ends[i][--s->t[i].running];
				s->done[i]++;
			} else {
				k++;
			}
		}
}

static void fairshare__burst__newcomer_starts_at_once(void **state)
{
	(void)state;
	struct sim s = { .n = 2, .cap = 4, .burst = 1 };
	s.t[0] = (struct sched_fs_tenant){ .weight = 1, .queued = 2000 };
	s.t[1] = (struct sched_fs_tenant){ .weight = 1 };
	unsigned waits[10], nb = 0, submitted_at = 0;
	for (unsigned now = 0; now < 4000 && nb < 10; now++) {
		sim_finish(&s, now);
		/* B submits its next job as soon as the previous one ended. */
		if (now >= 100 && s.t[1].queued == 0 && s.t[1].running == 0) {
			s.t[1].queued = 1;
			submitted_at = now;
		}
		while (sim_start(&s, now, 10 + now % 7) >= 0)
			if (s.t[1].running && submitted_at != UINT32_MAX) {
				waits[nb++] = now - submitted_at;
				submitted_at = UINT32_MAX;
			}
		if (now < 100)
			assert_int_equal(s.max_used, 4); /* alone, A never bursts */
	}
	assert_int_equal(nb, 10);
	for (unsigned k = 0; k < nb; k++)
		assert_int_equal(waits[k], 0);
	assert_true(s.max_used <= 5);
}

static void fairshare__burst__weights_hold_when_both_backlogged(void **state)
{
	(void)state;
	struct sim s = { .n = 2, .cap = 6, .burst = 1 };
	s.t[0] = (struct sched_fs_tenant){ .weight = 2, .queued = 100000 };
	s.t[1] = (struct sched_fs_tenant){ .weight = 1, .queued = 100000 };
	for (unsigned now = 0; now < 20000; now++) {
		sim_finish(&s, now);
		while (sim_start(&s, now, 10 + (now * 7919) % 13) >= 0)
			;
	}
	double ratio = (double)s.done[0] / (double)s.done[1];
	if (ratio < 1.8 || ratio > 2.2)
		fail_msg("weight 2:1 finished %u:%u (ratio %.2f)", s.done[0], s.done[1], ratio);
	assert_true(s.max_used <= 7);
}

static void fairshare__burst__cap_never_exceeded(void **state)
{
	(void)state;
	struct sim s = { .n = 2, .cap = 4, .burst = 2 };
	s.t[0] = (struct sched_fs_tenant){ .weight = 1, .queued = 100000 };
	s.t[1] = (struct sched_fs_tenant){ .weight = 4, .max_running = 2, .queued = 100000 };
	for (unsigned now = 0; now < 5000; now++) {
		sim_finish(&s, now);
		while (sim_start(&s, now, 5 + now % 11) >= 0)
			;
	}
	assert_int_equal(s.max_running[1], 2);
	assert_true(s.max_used <= 6);
	assert_true(s.done[0] > 0 && s.done[1] > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fairshare__equal_weights__alternates),
		cmocka_unit_test(fairshare__weight_two__gets_twice),
		cmocka_unit_test(fairshare__caps__respected_and_excess_shared),
		cmocka_unit_test(fairshare__idle_tenant__share_goes_to_busy),
		cmocka_unit_test(fairshare__nothing_eligible__minus_one),
		cmocka_unit_test(fairshare__zero_weight__treated_as_one),
		cmocka_unit_test(fairshare__below_share__by_weight_among_active),
		cmocka_unit_test(fairshare__burst__respects_cap_and_blocked),
		cmocka_unit_test(fairshare__burst__newcomer_starts_at_once),
		cmocka_unit_test(fairshare__burst__weights_hold_when_both_backlogged),
		cmocka_unit_test(fairshare__burst__cap_never_exceeded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
