/* Unit tests of the sandbox uid pool (executor/sandbox/sandbox_uid.c): two
 * pools over the same lock folder (two engines of a node) never hand out the
 * same uid while it is held, a full range is refused rather than shared,
 * a given-back uid is free again and its user namespace closed. Needs root (user namespaces with a foreign uid map). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor/sandbox/sandbox_uid.h"
#include "tests/support/testutil.h"

static char dir[] = "/tmp/gavel-uids-XXXXXX";

static void uids__two_pools__never_share_a_held_uid(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	struct exec_uids *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	struct gv_err err;
	assert_int_equal(exec_uids_init(a, dir, 1600000000u, 3, &err), 0);
	assert_int_equal(exec_uids_init(b, dir, 1600000000u, 3, &err), 0);
	unsigned s[3];
	assert_int_equal(exec_uids_take(a, &s[0], &err), 0);
	assert_int_equal(exec_uids_take(b, &s[1], &err), 0);
	assert_int_equal(exec_uids_take(a, &s[2], &err), 0);
	assert_int_not_equal(exec_uids_uid(a, s[0]), exec_uids_uid(b, s[1]));
	assert_int_not_equal(exec_uids_uid(a, s[2]), exec_uids_uid(b, s[1]));
	assert_int_not_equal(exec_uids_uid(a, s[0]), exec_uids_uid(a, s[2]));
	/* All three held: refused, not shared. */
	unsigned extra;
	assert_int_equal(exec_uids_take(b, &extra, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);

	/* The held uid's user namespace is open while it is held. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", exec_uids_userns(a, s[0]));
	assert_true(exec_uids_userns(a, s[0]) >= 0);
	assert_int_equal(access(path, F_OK), 0);

	/* Given back by one pool: the other may take it. */
	exec_uids_give(b, s[1]);
	assert_int_equal(exec_uids_userns(b, s[1]), -1);
	assert_int_equal(exec_uids_take(a, &extra, &err), 0);
	assert_int_equal(exec_uids_uid(a, extra), exec_uids_uid(b, s[1]));
	exec_uids_fini(a);
	exec_uids_fini(b);
	free(a);
	free(b);
}

static void uids__bad_ranges__refused(void **state)
{
	(void)state;
	struct exec_uids *u = calloc(1, sizeof(*u));
	assert_non_null(u);
	struct gv_err err;
	assert_int_equal(exec_uids_init(u, dir, 65000, 1000, &err), -1);     /* holds nobody */
	assert_int_equal(exec_uids_init(u, dir, 0, 10, &err), -1);           /* holds root */
	assert_int_equal(exec_uids_init(u, dir, 2147483600u, 100, &err), -1); /* past 2^31 */
	assert_int_equal(exec_uids_init(u, dir, 1600000000u, 0, &err), -1);
	exec_uids_fini(u);
	free(u);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(uids__two_pools__never_share_a_held_uid),
		cmocka_unit_test(uids__bad_ranges__refused),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	test_rm_rf(dir);
	return rc;
}
