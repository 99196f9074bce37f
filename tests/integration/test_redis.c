/* Integration tests of common/redis.c against the real Redis of
 * tests/run.sh (GAVEL_REDIS_URL, GAVEL_REDIS_SOCKET): commands and reply
 * ownership, error replies, command timeouts, reconnecting after the
 * server dropped the client, bounded retries, and authentication on the
 * unix socket. Keys are prefixed with
 * the test's pid and deleted afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/queue.h"
#include "common/redis.h"

static const char *need_env(const char *name)
{
	const char *v = getenv(name);
	if (!v || !v[0])
		fail_msg("%s is not set: run this through tests/run.sh, which starts PostgreSQL and Redis", name);
	return v;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static struct gv_redis *open_url(const char *url, int command_timeout_ms)
{
	struct gv_err err;
	struct gv_redis_opts o = { .url = url, .command_timeout_ms = command_timeout_ms, .max_attempts = 3,
				   .backoff_initial_ms = 20, .backoff_max_ms = 100 };
	struct gv_redis *r = gv_redis_new(&o, &err);
	if (!r)
		fail_msg("connect %s: %s", url, err.msg);
	return r;
}

static void redis__set_get_del__binary_safe(void **state)
{
	(void)state;
	struct gv_redis *r = open_url(need_env("GAVEL_REDIS_URL"), 0);
	struct gv_err err;
	char key[64];
	snprintf(key, sizeof(key), "gavel-test:%d:k", (int)getpid());
	const char value[] = "a\0b\r\nc";
	assert_int_equal(gv_redis_exec(r, &err, "SET %s %b", key, value, sizeof(value)), 0);
	const char *argv[] = { "GET", key };
	redisReply *rep = gv_redis_commandv(r, 2, argv, NULL, &err);
	assert_non_null(rep);
	assert_int_equal(rep->type, REDIS_REPLY_STRING);
	assert_int_equal(rep->len, sizeof(value));
	assert_memory_equal(rep->str, value, sizeof(value));
	gv_redis_reply_free(rep);
	rep = gv_redis_command(r, &err, "DEL %s", key);
	assert_non_null(rep);
	assert_int_equal(rep->integer, 1);
	gv_redis_reply_free(rep);
	gv_redis_reply_free(NULL);
	assert_int_equal(gv_redis_reconnects(r), 0);
	gv_redis_free(r);
	gv_redis_free(NULL);
}

static void redis__error_reply__err_and_connection_kept(void **state)
{
	(void)state;
	struct gv_redis *r = open_url(need_env("GAVEL_REDIS_URL"), 0);
	struct gv_err err;
	char key[64];
	snprintf(key, sizeof(key), "gavel-test:%d:s", (int)getpid());
	assert_int_equal(gv_redis_exec(r, &err, "SET %s notanumber", key), 0);
	assert_null(gv_redis_command(r, &err, "INCR %s", key));
	assert_int_equal(err.code, GV_EREDIS);
	assert_non_null(strstr(err.msg, "ERR"));
	assert_int_equal(gv_redis_exec(r, &err, "NOSUCHCOMMAND"), -1);
	assert_int_equal(gv_redis_exec(r, &err, "DEL %s", key), 0);
	assert_int_equal(gv_redis_reconnects(r), 0);
	gv_redis_free(r);
}

static void redis__killed_client__reconnects(void **state)
{
	(void)state;
	const char *url = need_env("GAVEL_REDIS_URL");
	struct gv_redis *r = open_url(url, 0);
	struct gv_redis *killer = open_url(url, 0);
	struct gv_err err;
	redisReply *id = gv_redis_command(r, &err, "CLIENT ID");
	assert_non_null(id);
	assert_int_equal(id->type, REDIS_REPLY_INTEGER);
	redisReply *k = gv_redis_command(killer, &err, "CLIENT KILL ID %lld", id->integer);
	assert_non_null(k);
	assert_int_equal(k->integer, 1);
	gv_redis_reply_free(k);
	gv_redis_reply_free(id);
	gv_redis_free(killer);

	/* The first command after the kill fails (it may have been lost, so
	 * it is not retried); the next one reconnects. */
	assert_int_equal(gv_redis_exec(r, &err, "PING"), -1);
	assert_null(gv_redis_context(r));
	if (gv_redis_exec(r, &err, "PING") != 0)
		fail_msg("after reconnect: %s", err.msg);
	assert_int_equal(gv_redis_reconnects(r), 1);
	gv_redis_free(r);
}

static void redis__command_timeout__fails_fast_then_recovers(void **state)
{
	(void)state;
	struct gv_redis *r = open_url(need_env("GAVEL_REDIS_URL"), 200);
	struct gv_err err;
	char key[64];
	snprintf(key, sizeof(key), "gavel-test:%d:empty", (int)getpid());
	long t0 = now_ms();
	assert_null(gv_redis_command(r, &err, "BLPOP %s 3", key));
	assert_true(now_ms() - t0 < 2000);
	assert_int_equal(gv_redis_exec(r, &err, "PING"), 0);
	assert_int_equal(gv_redis_reconnects(r), 1);
	gv_redis_free(r);
}

/* The harness's Redis listens on a unix socket and knows users only:
 * GAVEL_REDIS_URL is unix://user:password@/path (the administrative
 * user), here with a database number. */
static void redis__unix_socket_user_and_db__connects(void **state)
{
	(void)state;
	const char *base = need_env("GAVEL_REDIS_URL");
	char url[512];
	if (strncmp(base, "unix://", 7) == 0 && !strchr(base, '?'))
		snprintf(url, sizeof(url), "%s?db=3", base);
	else
		snprintf(url, sizeof(url), "unix://%s?db=3", need_env("GAVEL_REDIS_SOCKET"));
	struct gv_redis *r = open_url(url, 0);
	struct gv_err err;
	redisReply *rep = gv_redis_command(r, &err, "CLIENT INFO");
	assert_non_null(rep);
	assert_int_equal(rep->type, REDIS_REPLY_STRING);
	assert_non_null(strstr(rep->str, " db=3 "));
	gv_redis_reply_free(rep);
	gv_redis_free(r);
}

/* No unauthenticated access, and a wrong password is refused at connect
 * time without being repeated in the error. */
static void redis__socket_without_or_with_wrong_password__refused(void **state)
{
	(void)state;
	const char *sock = need_env("GAVEL_REDIS_SOCKET");
	char url[512];
	snprintf(url, sizeof(url), "unix://%s", sock);
	struct gv_redis *r = open_url(url, 0);
	struct gv_err err;
	assert_null(gv_redis_command(r, &err, "PING"));
	assert_non_null(strstr(err.msg, "NOAUTH"));
	gv_redis_free(r);
	snprintf(url, sizeof(url), "unix://gavel-admin:pw-not-shown@%s", sock);
	struct gv_redis_opts o = { .url = url, .max_attempts = 1 };
	assert_null(gv_redis_new(&o, &err));
	assert_non_null(strstr(err.msg, "WRONGPASS"));
	assert_null(strstr(err.msg, "pw-not-shown"));
}

static void redis__closed_port__bounded_failure(void **state)
{
	(void)state;
	struct gv_err err;
	struct gv_redis_opts o = { .url = "redis://:pw-not-shown@127.0.0.1:1", .max_attempts = 3,
				   .backoff_initial_ms = 20, .backoff_max_ms = 40 };
	long t0 = now_ms();
	assert_null(gv_redis_new(&o, &err));
	assert_true(now_ms() - t0 < 3000);
	assert_int_equal(err.code, GV_EREDIS);
	assert_non_null(strstr(err.msg, "3 attempt"));
	assert_null(strstr(err.msg, "pw-not-shown"));
	o.url = "http://nope";
	assert_null(gv_redis_new(&o, &err));
	assert_int_equal(err.code, GV_EINVAL);
}

/* The scheduler's wake-ups: an enqueue wakes it while a slot is free, a
 * completion always; each list holds at most one element. */
static void queue__wake__enqueue_and_complete_wake_the_scheduler(void **state)
{
	(void)state;
	struct gv_redis *r = open_url(need_env("GAVEL_REDIS_URL"), 2000);
	struct gv_err err;
	char tid[64], sid[64];
	snprintf(tid, sizeof(tid), "wake-%d", (int)getpid());
	snprintf(sid, sizeof(sid), "wakesubmission%d", (int)getpid());
	const char *del[] = { "DEL", GV_QUEUE_WAKE_QUEUED, GV_QUEUE_WAKE_FREED };
	gv_redis_reply_free(gv_redis_commandv(r, 3, del, NULL, &err));

	assert_int_equal(gv_queue_wait_wake(r, true, 0.05, &err), 0); /* nothing yet */
	for (int i = 0; i < 3; i++)
		assert_int_equal(gv_queue_enqueue(r, tid, sid, false, &err), 0);
	const char *len[] = { "LLEN", GV_QUEUE_WAKE_QUEUED };
	redisReply *rep = gv_redis_commandv(r, 2, len, NULL, &err);
	assert_non_null(rep);
	assert_int_equal(rep->integer, 1); /* three enqueues, one wake-up */
	gv_redis_reply_free(rep);
	/* No free slot: a queued job is no reason to wake. */
	long t0 = now_ms();
	assert_int_equal(gv_queue_wait_wake(r, false, 0.2, &err), 0);
	assert_true(now_ms() - t0 >= 150);
	t0 = now_ms();
	assert_int_equal(gv_queue_wait_wake(r, true, 2.0, &err), 1);
	assert_true(now_ms() - t0 < 1000);
	assert_int_equal(gv_queue_wait_wake(r, true, 0.05, &err), 0); /* consumed */

	struct gv_queue_token t = { .gpus = 0 };
	snprintf(t.tid, sizeof(t.tid), "%s", tid);
	snprintf(t.sid, sizeof(t.sid), "%s", sid);
	assert_int_equal(gv_queue_complete(r, "wake-node", &t, &err), 0);
	t0 = now_ms();
	assert_int_equal(gv_queue_wait_wake(r, false, 2.0, &err), 1); /* a slot freed */
	assert_true(now_ms() - t0 < 1000);

	char tq[GV_QUEUE_KEY_MAX];
	assert_int_equal(gv_queue_key_tenant(tq, sizeof(tq), tid, &err), 0);
	const char *cleanup[] = { "DEL", tq, GV_QUEUE_WAKE_QUEUED, GV_QUEUE_WAKE_FREED };
	gv_redis_reply_free(gv_redis_commandv(r, 4, cleanup, NULL, &err));
	const char *srem[] = { "SREM", GV_QUEUE_BACKLOG, tid };
	gv_redis_reply_free(gv_redis_commandv(r, 3, srem, NULL, &err));
	gv_redis_free(r);
}

int main(void)
{
	/* As every daemon does (common/daemon.c): on a unix socket, a write
	 * to a connection the server closed is a SIGPIPE, not only EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(redis__set_get_del__binary_safe),
		cmocka_unit_test(redis__error_reply__err_and_connection_kept),
		cmocka_unit_test(redis__killed_client__reconnects),
		cmocka_unit_test(redis__command_timeout__fails_fast_then_recovers),
		cmocka_unit_test(redis__unix_socket_user_and_db__connects),
		cmocka_unit_test(redis__socket_without_or_with_wrong_password__refused),
		cmocka_unit_test(redis__closed_port__bounded_failure),
		cmocka_unit_test(queue__wake__enqueue_and_complete_wake_the_scheduler),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
