/* Integration tests of gv_migrate against the real PostgreSQL that
 * tests/run.sh starts (GAVEL_DATABASE_URL, owner role). Each test works in
 * a schema of its own, first on the search_path, and drops it afterwards,
 * so the tests leave nothing behind and can run again and again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/migrate.h"
#include "common/pg.h"

struct fixture {
	char schema[64];
	PGconn *conn;
	char tmpdir[64];
};

static const char *need_env(const char *name)
{
	const char *v = getenv(name);
	if (!v || !v[0])
		fail_msg("%s is not set: run this through tests/run.sh, which starts PostgreSQL and Redis", name);
	return v;
}

static const char *sql_dir(void)
{
	static char dir[4096];
	const char *root = getenv("GAVEL_ROOT");
	snprintf(dir, sizeof(dir), "%s/deploy/sql", root && root[0] ? root : ".");
	return dir;
}

/* A connection whose search_path is only `schema`. */
static PGconn *connect_in(const char *url, const char *schema)
{
	struct gv_err err;
	PGconn *conn = gv_pg_connect(url, 5, 0, &err);
	if (!conn)
		fail_msg("connect: %s", err.msg);
	const char *p[] = { schema };
	if (gv_pg_exec(conn, "SELECT set_config('search_path', $1, false)", 1, p, &err) != 0)
		fail_msg("search_path: %s", err.msg);
	return conn;
}

static void exec_ok(PGconn *conn, const char *sql)
{
	struct gv_err err;
	if (gv_pg_exec(conn, sql, 0, NULL, &err) != 0)
		fail_msg("%s: %s", sql, err.msg);
}

/* The one-value result of sql, as an integer. */
static long query_long(PGconn *conn, const char *sql)
{
	struct gv_err err;
	PGresult *res = gv_pg_query(conn, sql, 0, NULL, &err);
	if (!res)
		fail_msg("%s: %s", sql, err.msg);
	assert_int_equal(PQntuples(res), 1);
	long v = PQgetisnull(res, 0, 0) ? -1 : atol(PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

static int setup(void **state)
{
	static unsigned counter;
	const char *url = need_env("GAVEL_DATABASE_URL");
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	snprintf(f->schema, sizeof(f->schema), "gv_test_migrate_%d_%u", (int)getpid(), counter++);
	f->conn = connect_in(url, f->schema);
	char sql[256];
	snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE", f->schema);
	exec_ok(f->conn, sql);
	snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", f->schema);
	exec_ok(f->conn, sql);
	*state = f;
	return 0;
}

static void rm_tmpdir(struct fixture *f)
{
	if (!f->tmpdir[0])
		return;
	char cmd_path[512];
	static const char *const names[] = { "0001_ok.sql", "0002_bad.sql", "0003_later.sql", "1_bad.sql",
					      "0001_commit.sql" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(cmd_path, sizeof(cmd_path), "%s/%s", f->tmpdir, names[i]);
		unlink(cmd_path);
	}
	rmdir(f->tmpdir);
	f->tmpdir[0] = '\0';
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	if (!f)
		return 0;
	if (f->conn) {
		char sql[256];
		struct gv_err err;
		snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE", f->schema);
		if (gv_pg_exec(f->conn, sql, 0, NULL, &err) != 0)
			fprintf(stderr, "# teardown: %s\n", err.msg);
		PQfinish(f->conn);
	}
	rm_tmpdir(f);
	free(f);
	return 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static void make_tmpdir(struct fixture *f)
{
	snprintf(f->tmpdir, sizeof(f->tmpdir), "/tmp/gavel-migrate-it.XXXXXX");
	assert_non_null(mkdtemp(f->tmpdir));
}

static size_t count_files(const char *dir)
{
	struct gv_migration *m;
	size_t n;
	struct gv_err err;
	if (gv_migrate_scan(dir, &m, &n, &err) != 0)
		fail_msg("scan: %s", err.msg);
	free(m);
	return n;
}

static void migrate__real_files__applied_then_nothing(void **state)
{
	struct fixture *f = *state;
	size_t n = count_files(sql_dir());
	assert_true(n >= 1);
	struct gv_migrate_report rep;
	struct gv_err err;
	if (gv_migrate(f->conn, sql_dir(), &rep, &err) != 0)
		fail_msg("first run: %s", err.msg);
	assert_int_equal(rep.applied, n);
	assert_int_equal(rep.already, 0);
	assert_true(rep.version >= 1);
	assert_int_equal(query_long(f->conn, "SELECT count(*) FROM schema_migrations"), n);
	assert_int_equal(query_long(f->conn, "SELECT count(*) FROM tenants"), 0);
	assert_int_equal(query_long(f->conn, "SELECT count(*) FROM audit_log"), 0);

	if (gv_migrate(f->conn, sql_dir(), &rep, &err) != 0)
		fail_msg("second run: %s", err.msg);
	assert_int_equal(rep.applied, 0);
	assert_int_equal(rep.already, n);
	assert_string_equal(rep.last_applied, "");
	assert_int_equal(query_long(f->conn, "SELECT count(*) FROM schema_migrations"), n);
	/* The connection is left idle and usable. */
	assert_int_equal(PQtransactionStatus(f->conn), PQTRANS_IDLE);
}

static void migrate__daemon_role__audit_log_append_only(void **state)
{
	struct fixture *f = *state;
	const char *frontend_url = need_env("GAVEL_FRONTEND_DATABASE_URL");
	struct gv_err err;
	if (gv_migrate(f->conn, sql_dir(), NULL, &err) != 0)
		fail_msg("migrate: %s", err.msg);
	/* Tenants are the operator's (owner role); a daemon's role works
	 * inside one tenant, set per session here as the daemons set it per
	 * transaction. The frontend's role is the one that reads the log. */
	exec_ok(f->conn, "INSERT INTO tenants (name) VALUES ('acme')");
	PGresult *res = gv_pg_query(f->conn, "SELECT id::text FROM tenants WHERE name = 'acme'", 0, NULL, &err);
	if (!res)
		fail_msg("tenant id: %s", err.msg);
	char tenant_id[64];
	snprintf(tenant_id, sizeof(tenant_id), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	PGconn *svc = connect_in(frontend_url, f->schema);
	const char *tp[] = { tenant_id };
	if (gv_pg_exec(svc, "SELECT set_config('gavel.tenant_id', $1, false)", 1, tp, &err) != 0)
		fail_msg("set tenant: %s", err.msg);
	if (gv_pg_exec(svc,
		       "SELECT gavel_audit_append($1::uuid, 'system:test', 'tenant.create', NULL, NULL, NULL, '{}'::jsonb)",
		       1, tp, &err) != 0)
		fail_msg("audit append: %s", err.msg);
	assert_int_equal(query_long(svc, "SELECT count(*) FROM audit_log"), 1);
	static const char *const denied[] = {
		"INSERT INTO audit_log (tenant_id, seq, actor, action, hash)"
		" SELECT tenant_id, 2, 'mallory', 'forged', '\\x00'::bytea FROM audit_log",
		"UPDATE audit_log SET actor = 'mallory'",
		"DELETE FROM audit_log",
		"TRUNCATE audit_log",
		"INSERT INTO tenants (name) VALUES ('mallory')",
		"UPDATE tenants SET disabled = true",
		"DELETE FROM tenants",
		"DROP TABLE submissions",
		"CREATE TABLE sneaky (a int)",
		"SELECT gavel_audit_append(current_setting('gavel.tenant_id')::uuid, 'operator:root', 'tenant.changed', "
		"NULL, NULL, NULL, '{}'::jsonb)",
	};
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		if (gv_pg_exec(svc, denied[i], 0, NULL, &err) == 0) {
			PQfinish(svc);
			fail_msg("the frontend's role may run: %s", denied[i]);
		}
		if (!strstr(err.msg, "42501")) {
			PQfinish(svc);
			fail_msg("%s: want permission denied, got %s", denied[i], err.msg);
		}
	}
	assert_int_equal(query_long(svc, "SELECT count(*) FROM audit_log WHERE actor = 'system:test'"), 1);
	PQfinish(svc);
}

/* Several processes migrate one schema at once; the advisory lock makes
 * exactly one of them apply each file. Children report how many files
 * they applied as their exit status (100 + on error). */
static void migrate__concurrent_processes__each_version_once(void **state)
{
	struct fixture *f = *state;
	const char *url = need_env("GAVEL_DATABASE_URL");
	size_t n = count_files(sql_dir());
	enum { NPROC = 4 };
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t pids[NPROC];
	for (int i = 0; i < NPROC; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			close(go[1]);
			struct gv_err err;
			PGconn *c = gv_pg_connect(url, 5, 0, &err);
			const char *p[] = { f->schema };
			if (!c || gv_pg_exec(c, "SELECT set_config('search_path', $1, false)", 1, p, &err) != 0) {
				fprintf(stderr, "# child: %s\n", err.msg);
				_exit(101);
			}
			char b;
			(void)!read(go[0], &b, 1); /* wait until every child is connected */
			struct gv_migrate_report rep;
			int rc = gv_migrate(c, sql_dir(), &rep, &err);
			if (rc != 0)
				fprintf(stderr, "# child: %s\n", err.msg);
			PQfinish(c);
			_exit(rc != 0 ? 102 : rep.applied);
		}
	}
	close(go[0]);
	usleep(200 * 1000);
	close(go[1]); /* start them together */
	int total = 0;
	for (int i = 0; i < NPROC; i++) {
		int st;
		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) >= 100)
			fail_msg("child %d failed with %d", i, WEXITSTATUS(st));
		total += WEXITSTATUS(st);
	}
	assert_int_equal(total, n);
	assert_int_equal(query_long(f->conn, "SELECT count(*) FROM schema_migrations"), n);
	assert_int_equal(query_long(f->conn, "SELECT count(DISTINCT version) FROM schema_migrations"), n);
}

static void migrate__broken_file__rolled_back_and_named(void **state)
{
	struct fixture *f = *state;
	make_tmpdir(f);
	write_file(f->tmpdir, "0001_ok.sql", "CREATE TABLE t_ok (a int);\n");
	write_file(f->tmpdir, "0002_bad.sql",
		   "CREATE TABLE t_bad (a int);\n"
		   "INSERT INTO t_ok VALUES (1);\n"
		   "SELECT * FROM no_such_table;\n");
	write_file(f->tmpdir, "0003_later.sql", "CREATE TABLE t_later (a int);\n");
	struct gv_migrate_report rep;
	struct gv_err err;
	gv_err_clear(&err);
	assert_int_equal(gv_migrate(f->conn, f->tmpdir, &rep, &err), -1);
	if (!strstr(err.msg, "0002_bad.sql:3") || !strstr(err.msg, "no_such_table"))
		fail_msg("error does not name the file, line and cause: %s", err.msg);
	assert_int_equal(rep.applied, 1);
	assert_string_equal(rep.last_applied, "0001_ok.sql");
	assert_int_equal(PQtransactionStatus(f->conn), PQTRANS_IDLE);
	/* 0002 rolled back entirely, 0003 never tried. */
	assert_int_equal(query_long(f->conn, "SELECT count(*) FROM t_ok"), 0);
	assert_int_equal(query_long(f->conn, "SELECT (to_regclass('t_bad') IS NULL)::int"), 1);
	assert_int_equal(query_long(f->conn, "SELECT (to_regclass('t_later') IS NULL)::int"), 1);
	assert_int_equal(query_long(f->conn, "SELECT max(version) FROM schema_migrations"), 1);
	/* The lock was released: another session can take it. */
	PGconn *other = connect_in(need_env("GAVEL_DATABASE_URL"), f->schema);
	assert_int_equal(query_long(other, "SELECT pg_try_advisory_lock(" GV_MIGRATE_LOCK_KEY ")::int"), 1);
	assert_int_equal(query_long(other, "SELECT pg_advisory_unlock(" GV_MIGRATE_LOCK_KEY ")::int"), 1);
	PQfinish(other);

	/* Fixed, the run continues where it stopped. */
	write_file(f->tmpdir, "0002_bad.sql", "CREATE TABLE t_bad (a int);\nINSERT INTO t_ok VALUES (1);\n");
	if (gv_migrate(f->conn, f->tmpdir, &rep, &err) != 0)
		fail_msg("after the fix: %s", err.msg);
	assert_int_equal(rep.applied, 2);
	assert_int_equal(rep.already, 1);
	assert_int_equal(rep.version, 3);
	assert_int_equal(query_long(f->conn, "SELECT count(*) FROM t_ok"), 1);
}

static void migrate__bad_name__nothing_touched(void **state)
{
	struct fixture *f = *state;
	make_tmpdir(f);
	write_file(f->tmpdir, "0001_ok.sql", "CREATE TABLE t_ok (a int);\n");
	write_file(f->tmpdir, "1_bad.sql", "CREATE TABLE t_bad (a int);\n");
	struct gv_err err;
	assert_int_equal(gv_migrate(f->conn, f->tmpdir, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "1_bad.sql"));
	assert_int_equal(query_long(f->conn, "SELECT (to_regclass('schema_migrations') IS NULL)::int"), 1);
	assert_int_equal(query_long(f->conn, "SELECT (to_regclass('t_ok') IS NULL)::int"), 1);
}

static void migrate__commit_inside_file__reported(void **state)
{
	struct fixture *f = *state;
	make_tmpdir(f);
	write_file(f->tmpdir, "0001_commit.sql", "CREATE TABLE t_c (a int);\nCOMMIT;\n");
	struct gv_err err;
	assert_int_equal(gv_migrate(f->conn, f->tmpdir, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "0001_commit.sql"));
	assert_int_equal(PQtransactionStatus(f->conn), PQTRANS_IDLE);
	assert_int_equal(query_long(f->conn, "SELECT count(*) FROM schema_migrations"), 0);
}

static void migrate__inside_transaction__refused(void **state)
{
	struct fixture *f = *state;
	exec_ok(f->conn, "BEGIN");
	struct gv_err err;
	assert_int_equal(gv_migrate(f->conn, sql_dir(), NULL, &err), -1);
	exec_ok(f->conn, "ROLLBACK");
	assert_int_equal(gv_migrate(NULL, sql_dir(), NULL, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(migrate__real_files__applied_then_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(migrate__daemon_role__audit_log_append_only, setup, teardown),
		cmocka_unit_test_setup_teardown(migrate__concurrent_processes__each_version_once, setup, teardown),
		cmocka_unit_test_setup_teardown(migrate__broken_file__rolled_back_and_named, setup, teardown),
		cmocka_unit_test_setup_teardown(migrate__bad_name__nothing_touched, setup, teardown),
		cmocka_unit_test_setup_teardown(migrate__commit_inside_file__reported, setup, teardown),
		cmocka_unit_test_setup_teardown(migrate__inside_transaction__refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
