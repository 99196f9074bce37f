/* Integration tests of common/kernel_inbox.c's scripts against the real
 * Redis of tests/run.sh (GAVEL_REDIS_URL): a kernel's command list takes
 * nothing while the kernel is not running, is refused at the kernel's,
 * the tenant's and the global byte budgets, is uncounted by take and
 * cleared by drop, and a count whose list is gone does not hold a tenant
 * back. Each test uses fresh random ids and deletes its keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kernel_inbox.h"
#include "common/queue.h"
#include "common/redis.h"
#include "tests/support/redis_test.h"

#define MIB (1024u * 1024)

static struct gv_redis *open_redis(void)
{
	char why[256];
	struct gv_redis *r = test_redis_open(why, sizeof(why));
	if (!r)
		fail_msg("%s", why);
	return r;
}

static long long integer(struct gv_redis *r, int argc, const char **argv, const size_t *lens)
{
	struct gv_err err;
	redisReply *rep = gv_redis_commandv(r, argc, argv, lens, &err);
	if (!rep)
		fail_msg("%s: %s", argv[0], err.msg);
	long long v = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1000;
	gv_redis_reply_free(rep);
	return v;
}

static long long push(struct gv_redis *r, const char *tenant, const char *kid, enum gv_kin_kind kind, const char *el,
		      size_t n)
{
	struct gv_kin_args a;
	assert_int_equal(gv_kin_push_args(&a, tenant, kid, kind, el, n), 0);
	return integer(r, a.argc, a.argv, a.lens);
}

/* A "msg" element of n bytes in all. */
static char *msg_of(size_t n)
{
	char *el = malloc(n);
	assert_non_null(el);
	memset(el, 'x', n);
	memcpy(el, "msg 1 ", 6);
	return el;
}

static void cmd(struct gv_redis *r, const char *a0, const char *a1, const char *a2, const char *a3)
{
	const char *argv[] = { a0, a1, a2, a3 };
	int argc = a3 ? 4 : a2 ? 3 : 2;
	struct gv_err err;
	redisReply *rep = gv_redis_commandv(r, argc, argv, NULL, &err);
	if (!rep)
		fail_msg("%s %s: %s", a0, a1, err.msg);
	gv_redis_reply_free(rep);
}

/* The model that says kid runs (the executor's, in the service). */
static void running(struct gv_redis *r, const char *kid)
{
	char k[320];
	snprintf(k, sizeof(k), GV_QUEUE_KSTATE_PREFIX "%s", kid);
	cmd(r, "HSET", k, "execution_state", "idle");
}

static void drop(struct gv_redis *r, const char *tenant, const char *kid)
{
	struct gv_kin_args a;
	assert_int_equal(gv_kin_drop_args(&a, tenant, kid), 0);
	integer(r, a.argc, a.argv, a.lens);
}

static long long llen(struct gv_redis *r, const char *kid)
{
	char k[320];
	snprintf(k, sizeof(k), GV_QUEUE_KIN_PREFIX "%s", kid);
	const char *argv[] = { "LLEN", k };
	return integer(r, 2, argv, NULL);
}

static void inbox__queued_kernel__takes_nothing_but_commands(void **state)
{
	(void)state;
	struct gv_redis *r = open_redis();
	char t[37], k[37];
	test_random_uuid(t), test_random_uuid(k);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, "open 1 v1\n", 10), GV_KIN_NOT_RUNNING);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, "msg 1 2\nab", 10), GV_KIN_NOT_RUNNING);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, "close 1\n", 8), GV_KIN_DROPPED);
	assert_int_equal(llen(r, k), 0);
	assert_int_equal(push(r, t, k, GV_KIN_COMMAND, "stop client\n", 12), 1);
	assert_int_equal(llen(r, k), 1);
	drop(r, t, k);
	assert_int_equal(llen(r, k), 0);
	gv_redis_free(r);
}

static void inbox__kernel_bytes__refused_at_its_budget_then_taken(void **state)
{
	(void)state;
	struct gv_redis *r = open_redis();
	char t[37], k[37];
	test_random_uuid(t), test_random_uuid(k);
	running(r, k);
	char *el = msg_of(10 * MIB);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, el, 10 * MIB), 1);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, el, 10 * MIB), 2);
	/* 30 MiB > 24 MiB: refused, nothing pushed; a close still goes. */
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, el, 10 * MIB), GV_KIN_FULL);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, "close 1\n", 8), 3);
	assert_int_equal(llen(r, k), 3);
	/* The executor pops one and uncounts it: there is room again. */
	char key[320];
	snprintf(key, sizeof(key), GV_QUEUE_KIN_PREFIX "%s", k);
	cmd(r, "LPOP", key, NULL, NULL);
	struct gv_kin_args a;
	assert_int_equal(gv_kin_take_args(&a, t, k, 10 * MIB), 0);
	integer(r, a.argc, a.argv, a.lens);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, el, 10 * MIB), 3);
	free(el);
	drop(r, t, k);
	gv_redis_free(r);
}

static void inbox__tenant_bytes__refused_at_its_share_across_kernels(void **state)
{
	(void)state;
	struct gv_redis *r = open_redis();
	char t[37], k[7][37];
	test_random_uuid(t);
	char *el = msg_of(10 * MIB);
	/* 6 kernels of 10 MiB: 60 MiB; a 7th message would make 70 > 64. */
	for (int i = 0; i < 7; i++) {
		test_random_uuid(k[i]);
		running(r, k[i]);
		long long got = push(r, t, k[i], GV_KIN_CONNECTION, el, 10 * MIB);
		if (i < 6)
			assert_int_equal(got, 1);
		else
			assert_int_equal(got, GV_KIN_TENANT_FULL);
	}
	/* Another tenant is not held back by this one. */
	char t2[37], k2[37];
	test_random_uuid(t2), test_random_uuid(k2);
	running(r, k2);
	assert_int_equal(push(r, t2, k2, GV_KIN_CONNECTION, el, 10 * MIB), 1);
	/* A kernel's end frees its bytes for the tenant's others. */
	drop(r, t, k[0]);
	assert_int_equal(push(r, t, k[6], GV_KIN_CONNECTION, el, 10 * MIB), 1);
	free(el);
	for (int i = 0; i < 7; i++)
		drop(r, t, k[i]);
	drop(r, t2, k2);
	gv_redis_free(r);
}

static void inbox__count_of_a_vanished_list__does_not_hold_the_tenant(void **state)
{
	(void)state;
	struct gv_redis *r = open_redis();
	char t[37], k[37], ghost[37], tk[96];
	test_random_uuid(t), test_random_uuid(k), test_random_uuid(ghost);
	running(r, k);
	/* A count left by a list that expired (or an executor that died
	 * between its pop and its take): 63 MiB of nothing. */
	snprintf(tk, sizeof(tk), "gavel:kinb:%s", t);
	char big[24];
	snprintf(big, sizeof(big), "%u", 63 * MIB);
	cmd(r, "HSET", tk, ghost, big);
	char *el = msg_of(10 * MIB);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, el, 10 * MIB), 1);
	const char *hget[] = { "HEXISTS", tk, ghost };
	assert_int_equal(integer(r, 3, hget, NULL), 0);
	free(el);
	drop(r, t, k);
	gv_redis_free(r);
}

static void inbox__global_bytes__refused_for_every_tenant(void **state)
{
	(void)state;
	struct gv_redis *r = open_redis();
	char other[37], t[37], k[37], ok[96], ofield[24];
	test_random_uuid(other), test_random_uuid(t), test_random_uuid(k);
	running(r, k);
	/* Other tenants hold 250 MiB (their counts are live: their hash
	 * exists). */
	snprintf(ok, sizeof(ok), "gavel:kinb:%s", other);
	cmd(r, "HSET", ok, "x", "1");
	snprintf(ofield, sizeof(ofield), "%u", 250 * MIB);
	cmd(r, "HSET", "gavel:kinb", other, ofield);
	char *el = msg_of(10 * MIB);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, el, 10 * MIB), GV_KIN_GLOBAL_FULL);
	assert_int_equal(push(r, t, k, GV_KIN_CONNECTION, el, 1 * MIB), 1);
	free(el);
	cmd(r, "HDEL", "gavel:kinb", other, NULL);
	cmd(r, "DEL", ok, NULL, NULL);
	drop(r, t, k);
	gv_redis_free(r);
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(inbox__queued_kernel__takes_nothing_but_commands),
		cmocka_unit_test(inbox__kernel_bytes__refused_at_its_budget_then_taken),
		cmocka_unit_test(inbox__tenant_bytes__refused_at_its_share_across_kernels),
		cmocka_unit_test(inbox__count_of_a_vanished_list__does_not_hold_the_tenant),
		cmocka_unit_test(inbox__global_bytes__refused_for_every_tenant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
