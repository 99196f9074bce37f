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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fairshare__equal_weights__alternates),
		cmocka_unit_test(fairshare__weight_two__gets_twice),
		cmocka_unit_test(fairshare__caps__respected_and_excess_shared),
		cmocka_unit_test(fairshare__idle_tenant__share_goes_to_busy),
		cmocka_unit_test(fairshare__nothing_eligible__minus_one),
		cmocka_unit_test(fairshare__zero_weight__treated_as_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
