/* Unit tests of the CPU slots (executor/sandbox/cpuslot.c): n holders at most,
 * a waiter times out while all are held and gets one once a holder lets
 * go, and a slot folder others could write or a link is refused. flock()
 * locks belong to an open file description, so two acquisitions in one
 * process contend exactly as two processes would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor/sandbox/cpuslot.h"

static char base[64];
static char dir[128];

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/gavel-cpuslot.XXXXXX");
	if (!mkdtemp(base))
		return -1;
	snprintf(dir, sizeof(dir), "%s/slots", base);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char path[192];
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/slot-%d", dir, i);
		unlink(path);
	}
	rmdir(dir);
	snprintf(path, sizeof(path), "%s/link", base);
	unlink(path);
	rmdir(base);
	return 0;
}

static void cpuslot__one_slot__second_waits_until_released(void **state)
{
	(void)state;
	struct exec_cpuslot a, b;
	struct gv_err err;
	assert_int_equal(exec_cpuslot_acquire(dir, 1, mono_ms() + 1000, &a, &err), 0);
	assert_int_equal(a.index, 0);
	int64_t t0 = mono_ms();
	assert_int_equal(exec_cpuslot_acquire(dir, 1, t0 + 60, &b, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	assert_true(mono_ms() - t0 >= 60);
	assert_int_equal(b.fd, -1);
	exec_cpuslot_release(&a);
	assert_int_equal(exec_cpuslot_acquire(dir, 1, mono_ms() + 1000, &b, &err), 0);
	exec_cpuslot_release(&b);
	exec_cpuslot_release(&b); /* twice is harmless */
}

static void cpuslot__two_slots__two_holders_third_waits(void **state)
{
	(void)state;
	struct exec_cpuslot a, b, c;
	struct gv_err err;
	assert_int_equal(exec_cpuslot_acquire(dir, 2, mono_ms() + 1000, &a, &err), 0);
	assert_int_equal(exec_cpuslot_acquire(dir, 2, mono_ms() + 1000, &b, &err), 0);
	assert_int_not_equal(a.index, b.index);
	assert_int_equal(exec_cpuslot_acquire(dir, 2, mono_ms() + 30, &c, &err), -1);
	int freed = b.index;
	exec_cpuslot_release(&b);
	assert_int_equal(b.index, -1);
	assert_int_equal(exec_cpuslot_acquire(dir, 2, mono_ms() + 1000, &c, &err), 0);
	assert_int_equal(c.index, freed); /* a still holds the other one */
	exec_cpuslot_release(&a);
	exec_cpuslot_release(&c);
}

static void cpuslot__folder_writable_by_others__refused(void **state)
{
	(void)state;
	struct exec_cpuslot a;
	struct gv_err err;
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(exec_cpuslot_acquire(dir, 1, mono_ms() + 100, &a, &err), -1);
	assert_int_equal(err.code, GV_ESANDBOX);
	assert_int_equal(a.fd, -1);
}

static void cpuslot__folder_is_a_link__refused(void **state)
{
	(void)state;
	struct exec_cpuslot a;
	struct gv_err err;
	char link[192];
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(link, sizeof(link), "%s/link", base);
	assert_int_equal(symlink(dir, link), 0);
	assert_int_equal(exec_cpuslot_acquire(link, 1, mono_ms() + 100, &a, &err), -1);
	assert_int_equal(a.fd, -1);
}

static void cpuslot__count__at_least_one(void **state)
{
	(void)state;
	unsigned n = exec_cpuslot_count();
	assert_true(n >= 1);
	assert_true(n <= (unsigned)sysconf(_SC_NPROCESSORS_CONF) || sysconf(_SC_NPROCESSORS_CONF) < 1);
}

static void cpuslot__parse__off_auto_count(void **state)
{
	(void)state;
	struct gv_err err;
	uint32_t n = 99;
	assert_int_equal(exec_cpuslot_parse(NULL, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(exec_cpuslot_parse("off", &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(exec_cpuslot_parse("auto", &n, &err), 0);
	assert_int_equal(n, exec_cpuslot_count());
	assert_int_equal(exec_cpuslot_parse("3", &n, &err), 0);
	assert_int_equal(n, 3);
	static const char *const bad[] = { "-1", "1025", "2x", "on", "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(exec_cpuslot_parse(bad[i], &n, &err), -1);
		assert_non_null(strstr(err.msg, "expected off, auto"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(cpuslot__one_slot__second_waits_until_released, setup, teardown),
		cmocka_unit_test_setup_teardown(cpuslot__two_slots__two_holders_third_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(cpuslot__folder_writable_by_others__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(cpuslot__folder_is_a_link__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(cpuslot__count__at_least_one, setup, teardown),
		cmocka_unit_test(cpuslot__parse__off_auto_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
