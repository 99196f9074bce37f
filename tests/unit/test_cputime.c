/* Unit tests of the host-side CPU accounting's rules
 * (executor/sandbox/cputime.c): a table of (init's status, init's figure, the
 * host's figure, the real limit) -> reported time and outcome, and the limits
 * sent to init and used for the host's kill. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "executor/sandbox/cputime.h"

struct settle_case {
	const char *name;
	const char *status, *limit;
	uint64_t guest_ms, host_us, limit_ms;
	uint64_t want_time;
	enum exec_cpu_outcome want;
};

static const struct settle_case settle_cases[] = {
	/* Quiet node: the host figure carries the sandbox's overhead, the
	 * guest one is the smaller and is reported. */
	{"quiet ok", "OK", "none", 710, 728000, 1000, 710, EXEC_CPU_KEEP},
	/* Loaded node: the guest clock counted the wait for a CPU. */
	{"loaded ok, guest over the limit", "OK", "none", 1420, 731500, 1000, 731, EXEC_CPU_KEEP},
	{"loaded re keeps re", "RE", "none", 1300, 650000, 1000, 650, EXEC_CPU_KEEP},
	/* Both figures at or past the limit: TLE, whatever init said. */
	{"ok past the limit is tle", "OK", "none", 1010, 1030000, 1000, 1010, EXEC_CPU_TLE},
	{"exactly the limit is tle", "OK", "none", 1000, 1000000, 1000, 1000, EXEC_CPU_TLE},
	{"re past the limit is tle", "RE", "none", 1200, 1250000, 1000, 1200, EXEC_CPU_TLE},
	{"signal past the limit is tle", "SG", "none", 1500, 1400000, 1000, 1400, EXEC_CPU_TLE},
	{"wle past the cpu limit is tle", "WLE", "wall", 5000, 1300000, 1000, 1300, EXEC_CPU_TLE},
	{"init's tle stays tle", "TLE", "cpu", 5000, 4900000, 1000, 4900, EXEC_CPU_TLE},
	/* One figure alone past the limit is not enough. */
	{"host alone past the limit", "OK", "none", 990, 1040000, 1000, 990, EXEC_CPU_KEEP},
	{"guest alone past the limit", "OK", "none", 2900, 990000, 1000, 990, EXEC_CPU_KEEP},
	/* init killed it for CPU (its loose limit) before the host saw the
	 * real limit used: no verdict from this run. */
	{"init's cpu kill under the host limit is starved", "TLE", "cpu", 5000, 800000, 1000, 800,
	 EXEC_CPU_STARVED},
	/* Wall limit with little CPU used (a sleeper): stays WLE. */
	{"sleeper stays wle", "WLE", "wall", 10, 30000, 1000, 10, EXEC_CPU_KEEP},
	/* Statuses init ranks above CPU, and init's failure, are kept. */
	{"ole kept", "OLE", "output", 1500, 1500000, 1000, 1500, EXEC_CPU_KEEP},
	{"mle kept", "MLE", "memory", 1500, 1500000, 1000, 1500, EXEC_CPU_KEEP},
	{"ie kept", "IE", "none", 1500, 1500000, 1000, 1500, EXEC_CPU_KEEP},
	/* Sub-millisecond host figures round down; zero is zero. */
	{"trivial program", "OK", "none", 0, 999, 1000, 0, EXEC_CPU_KEEP},
	{"host rounds down", "OK", "none", 20, 12999, 1000, 12, EXEC_CPU_KEEP},
};

static void cputime__settle__table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(settle_cases) / sizeof(settle_cases[0]); i++) {
		const struct settle_case *c = &settle_cases[i];
		uint64_t t = 12345;
		enum exec_cpu_outcome o = exec_cpu_settle(c->status, c->limit, c->guest_ms, c->host_us,
							  c->limit_ms, &t);
		if (o != c->want || t != c->want_time)
			fail_msg("%s: outcome %d time %llu, want %d time %llu", c->name, (int)o,
				 (unsigned long long)t, (int)c->want, (unsigned long long)c->want_time);
	}
}

static void cputime__guest_limit__is_the_wall_limit(void **state)
{
	(void)state;
	assert_int_equal(exec_cpu_guest_limit(1000, 5000), 5000);
	assert_int_equal(exec_cpu_guest_limit(2000, 8000), 8000);
	/* Never below the real limit, never above init's own bound. */
	assert_int_equal(exec_cpu_guest_limit(1000, 1000), 1000);
	assert_int_equal(exec_cpu_guest_limit(1000, 500), 1000);
	assert_int_equal(exec_cpu_guest_limit(1000, 99999999), 43200000);
}

static void cputime__host_kill__past_the_limit_by_a_margin(void **state)
{
	(void)state;
	assert_int_equal(exec_cpu_host_kill_ns(1000), 2200ull * 1000000);
	assert_int_equal(exec_cpu_host_kill_ns(100), 400ull * 1000000);
	assert_int_equal(exec_cpu_host_kill_ns(10000), 20200ull * 1000000);
	/* Always past the limit itself, so a host kill is a TLE that
	 * min(guest, host) would give too. */
	for (uint64_t l = 1; l < 100000; l = l * 3 + 1)
		assert_true(exec_cpu_host_kill_ns(l) > l * 1000000 + 50ull * 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cputime__settle__table),
		cmocka_unit_test(cputime__guest_limit__is_the_wall_limit),
		cmocka_unit_test(cputime__host_kill__past_the_limit_by_a_margin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
