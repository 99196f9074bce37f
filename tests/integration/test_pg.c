/* Integration tests of common/pg.c against the real PostgreSQL of
 * tests/run.sh (GAVEL_DATABASE_URL): parameterised queries, results
 * drained after errors, pipelines, statement timeouts, bounded connect retries and
 * reconnecting after the server dropped the session. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/pg.h"

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

static long query_long(PGconn *conn, const char *sql, int nparams, const char *const *params)
{
	struct gv_err err;
	PGresult *res = gv_pg_query(conn, sql, nparams, params, &err);
	if (!res)
		fail_msg("%s: %s", sql, err.msg);
	assert_int_equal(PQntuples(res), 1);
	long v = atol(PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

/* A connection to the test database, or the test fails. */
static PGconn *connect_db(int statement_timeout_ms)
{
	struct gv_err err;
	PGconn *c = gv_pg_connect(need_env("GAVEL_DATABASE_URL"), 5, statement_timeout_ms, &err);
	if (!c)
		fail_msg("connect: %s", err.msg);
	return c;
}

/* Ends conn's session from another one, as an administrator or a
 * failover would; conn's libpq notices at its next query. */
static void terminate_backend(PGconn *conn)
{
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", PQbackendPID(conn));
	PGconn *killer = connect_db(0);
	const char *p[] = { pid };
	assert_int_equal(query_long(killer, "SELECT pg_terminate_backend($1::int, 5000)::int", 1, p), 1);
	PQfinish(killer);
}

static void pg__params__roundtrip_and_null(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *c = connect_db(0);
	const char *p[] = { "41", "x'; DROP TABLE y; --" };
	assert_int_equal(query_long(c, "SELECT $1::int + 1", 1, p), 42);
	PGresult *res = gv_pg_query(c, "SELECT $2::text, $1::int IS NULL", 2, (const char *const[]){ NULL, p[1] }, &err);
	assert_non_null(res);
	assert_string_equal(PQgetvalue(res, 0, 0), p[1]);
	assert_string_equal(PQgetvalue(res, 0, 1), "t");
	PQclear(res);
	PQfinish(c);
}

static void pg__server_error__sqlstate_and_idle_after(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *c = connect_db(0);
	assert_null(gv_pg_query(c, "SELECT 1/0", 0, NULL, &err));
	assert_int_equal(err.code, GV_EDB);
	assert_non_null(strstr(err.msg, "22012"));
	assert_int_equal(PQtransactionStatus(c), PQTRANS_IDLE);
	/* Scripts: stop at the first error, report where it is. */
	int pos = -1;
	assert_int_equal(gv_pg_exec_script(c, "SELECT 1; SELECT 2;\nSELECT nope;", &pos, &err), -1);
	assert_int_equal(pos, 28);
	assert_int_equal(gv_pg_exec_script(c, "SELECT 1; SELECT 2;", &pos, &err), 0);
	assert_int_equal(gv_pg_exec_script(c, "", &pos, &err), 0);
	assert_int_equal(gv_pg_exec_script(c, "COPY (SELECT 1) TO STDOUT", &pos, &err), -1);
	assert_int_equal(query_long(c, "SELECT 7", 0, NULL), 7);
	PQfinish(c);
}

static void pg__pipeline__kept_result_one_transaction_idle_after(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *c = connect_db(0);
	const char *bang[] = { "!" };
	const struct gv_pg_stmt stmts[] = {
		{ "BEGIN", 0, NULL },
		{ "SELECT set_config('gavel.pipeline_test', 'set', true)", 0, NULL },
		{ "SELECT current_setting('gavel.pipeline_test') || $1", 1, bang },
		{ "COMMIT", 0, NULL },
	};
	PGresult *res = gv_pg_pipeline(c, stmts, 4, 2, &err);
	if (!res)
		fail_msg("pipeline: %s", err.msg);
	/* The local setting of statement 2 was visible to statement 3: one
	 * transaction, committed, and nothing left behind. */
	assert_string_equal(PQgetvalue(res, 0, 0), "set!");
	PQclear(res);
	assert_int_equal(PQpipelineStatus(c), PQ_PIPELINE_OFF);
	assert_int_equal(PQtransactionStatus(c), PQTRANS_IDLE);
	res = gv_pg_query(c, "SELECT coalesce(current_setting('gavel.pipeline_test', true), '')", 0, NULL, &err);
	assert_non_null(res);
	assert_string_equal(PQgetvalue(res, 0, 0), "");
	PQclear(res);
	assert_null(gv_pg_pipeline(c, stmts, 4, 4, &err));
	assert_int_equal(err.code, GV_EINVAL);
	PQfinish(c);
}

static void pg__pipeline_error__first_failure_rest_skipped(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *c = connect_db(0);
	assert_int_equal(gv_pg_exec(c, "CREATE TEMP TABLE pipeline_t (v int)", 0, NULL, &err), 0);
	const struct gv_pg_stmt stmts[] = {
		{ "BEGIN", 0, NULL },
		{ "INSERT INTO pipeline_t VALUES (1)", 0, NULL },
		{ "SELECT 1/0", 0, NULL },
		{ "INSERT INTO pipeline_t VALUES (2)", 0, NULL },
		{ "COMMIT", 0, NULL },
	};
	assert_null(gv_pg_pipeline(c, stmts, 5, 1, &err));
	assert_int_equal(err.code, GV_EDB);
	assert_non_null(strstr(err.msg, "22012"));
	/* The transaction the pipeline opened is the caller's to roll back;
	 * the connection takes queries again. */
	assert_int_equal(PQpipelineStatus(c), PQ_PIPELINE_OFF);
	assert_int_equal(PQtransactionStatus(c), PQTRANS_INERROR);
	assert_int_equal(gv_pg_exec(c, "ROLLBACK", 0, NULL, &err), 0);
	assert_int_equal(query_long(c, "SELECT count(*) FROM pipeline_t", 0, NULL), 0);
	/* Without BEGIN the statements up to the sync are one implicit
	 * transaction: the failure undoes the first insert as well. */
	assert_null(gv_pg_pipeline(c, stmts + 1, 3, 0, &err));
	assert_int_equal(PQtransactionStatus(c), PQTRANS_IDLE);
	assert_int_equal(query_long(c, "SELECT count(*) FROM pipeline_t", 0, NULL), 0);
	PQfinish(c);
}

static void pg__pipeline_dead_session__fails_fast_and_reconnects(void **state)
{
	(void)state;
	struct gv_err err;
	struct gv_pg_opts o = { .url = need_env("GAVEL_DATABASE_URL"), .backoff_initial_ms = 20, .backoff_max_ms = 200 };
	struct gv_pg *pg = gv_pg_new(&o, &err);
	if (!pg)
		fail_msg("gv_pg_new: %s", err.msg);
	terminate_backend(gv_pg_conn(pg));
	const struct gv_pg_stmt stmts[] = { { "BEGIN", 0, NULL }, { "SELECT 1", 0, NULL }, { "COMMIT", 0, NULL } };
	long t0 = now_ms();
	assert_null(gv_pg_pipeline(gv_pg_conn(pg), stmts, 3, 1, &err));
	assert_true(now_ms() - t0 < 3000);
	assert_int_equal(err.code, GV_EDB);
	assert_false(gv_pg_conn_ok(gv_pg_conn(pg)));
	/* The broken session is replaced and the same pipeline goes through. */
	assert_int_equal(gv_pg_ensure(pg, &err), 0);
	PGresult *res = gv_pg_pipeline(gv_pg_conn(pg), stmts, 3, 1, &err);
	if (!res)
		fail_msg("pipeline after reconnect: %s", err.msg);
	assert_string_equal(PQgetvalue(res, 0, 0), "1");
	PQclear(res);
	assert_int_equal(gv_pg_reconnects(pg), 1);
	gv_pg_free(pg);
}

static void pg__statement_timeout__cancels_and_conn_survives(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *c = connect_db(200);
	long t0 = now_ms();
	assert_int_equal(gv_pg_exec(c, "SELECT pg_sleep(5)", 0, NULL, &err), -1);
	assert_true(now_ms() - t0 < 3000);
	assert_non_null(strstr(err.msg, "57014"));
	assert_int_equal(gv_pg_set_statement_timeout(c, 0, &err), 0);
	assert_int_equal(query_long(c, "SELECT 1", 0, NULL), 1);
	PQfinish(c);
}

static void pg__closed_port__bounded_retries_no_password(void **state)
{
	(void)state;
	struct gv_err err;
	const char *url = "postgresql://gavel_owner:hunter2secret@127.0.0.1:1/gavel";
	assert_null(gv_pg_connect(url, 2, 0, &err));
	assert_null(strstr(err.msg, "hunter2secret"));
	struct gv_pg_opts o = { .url = url, .connect_timeout_s = 2, .max_attempts = 4,
				.backoff_initial_ms = 50, .backoff_max_ms = 100 };
	long t0 = now_ms();
	assert_null(gv_pg_new(&o, &err));
	long took = now_ms() - t0;
	/* three waits: [25,50] + [50,100] + [50,100] ms */
	assert_true(took >= 120);
	assert_true(took < 5000);
	assert_non_null(strstr(err.msg, "4 attempt"));
	assert_null(strstr(err.msg, "hunter2secret"));
	assert_int_equal(gv_pg_connect("", 1, 0, &err) == NULL, 1);
}

static void pg__terminated_backend__reconnects(void **state)
{
	(void)state;
	const char *url = need_env("GAVEL_DATABASE_URL");
	struct gv_err err;
	struct gv_pg_opts o = { .url = url, .max_attempts = 5, .backoff_initial_ms = 20, .backoff_max_ms = 200 };
	struct gv_pg *pg = gv_pg_new(&o, &err);
	if (!pg)
		fail_msg("gv_pg_new: %s", err.msg);
	long pid1 = query_long(gv_pg_conn(pg), "SELECT pg_backend_pid()", 0, NULL);
	terminate_backend(gv_pg_conn(pg));

	/* The next query finds the session gone... */
	assert_int_equal(gv_pg_ensure(pg, &err), 0); /* libpq has not noticed yet */
	assert_int_equal(gv_pg_exec(gv_pg_conn(pg), "SELECT 1", 0, NULL, &err), -1);
	assert_false(gv_pg_conn_ok(gv_pg_conn(pg)));
	/* ...and ensure reconnects. */
	if (gv_pg_ensure(pg, &err) != 0)
		fail_msg("reconnect: %s", err.msg);
	assert_int_equal(gv_pg_reconnects(pg), 1);
	long pid2 = query_long(gv_pg_conn(pg), "SELECT pg_backend_pid()", 0, NULL);
	assert_true(pid2 != pid1);
	gv_pg_free(pg);
	gv_pg_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pg__params__roundtrip_and_null),
		cmocka_unit_test(pg__server_error__sqlstate_and_idle_after),
		cmocka_unit_test(pg__pipeline__kept_result_one_transaction_idle_after),
		cmocka_unit_test(pg__pipeline_error__first_failure_rest_skipped),
		cmocka_unit_test(pg__pipeline_dead_session__fails_fast_and_reconnects),
		cmocka_unit_test(pg__statement_timeout__cancels_and_conn_survives),
		cmocka_unit_test(pg__closed_port__bounded_retries_no_password),
		cmocka_unit_test(pg__terminated_backend__reconnects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
