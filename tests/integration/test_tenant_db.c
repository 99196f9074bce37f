/* Integration tests of tenants/ against the real PostgreSQL and Redis of
 * tests/run.sh: row-level security as the daemons' roles (gavel_frontend,
 * gavel_scheduler, gavel_executor: each test uses the role of the daemon
 * whose code it exercises), the audit chain
 * (tamper detection, append-only grants, concurrent appends), key
 * authentication through gavel_key_lookup (revoked, expired, disabled),
 * usage accounting, retention, the Redis token bucket under two concurrent
 * clients, and the scheduling-config mirror. Each run creates tenants with
 * fresh random names, so the suite passes when run again on one database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/migrate.h"
#include "common/pg.h"
#include "common/redis.h"
#include "tenants/admin.h"
#include "tenants/audit.h"
#include "tenants/db.h"
#include "tenants/key.h"
#include "tenants/quota.h"
#include "tenants/retention.h"
#include "tenants/usage.h"

static const char *need_env(const char *name)
{
	const char *v = getenv(name);
	if (!v || !v[0])
		fail_msg("%s is not set: run this through tests/run.sh, which starts PostgreSQL and Redis", name);
	return v;
}

static PGconn *owner(void)
{
	struct gv_err err;
	PGconn *c = gv_pg_connect(need_env("GAVEL_DATABASE_URL"), 5, 30000, &err);
	if (!c)
		fail_msg("owner connect: %s", err.msg);
	return c;
}

/* A connection as a daemon's role: "FRONTEND", "SCHEDULER", "EXECUTOR". */
static PGconn *daemon_role(const char *daemon)
{
	char var[64];
	snprintf(var, sizeof(var), "GAVEL_%s_DATABASE_URL", daemon);
	struct gv_err err;
	PGconn *c = gv_pg_connect(need_env(var), 5, 30000, &err);
	if (!c)
		fail_msg("%s connect: %s", var, err.msg);
	return c;
}

static PGconn *frontend(void) { return daemon_role("FRONTEND"); }
static PGconn *scheduler(void) { return daemon_role("SCHEDULER"); }
static PGconn *executor(void) { return daemon_role("EXECUTOR"); }

static struct gv_redis *redis(void)
{
	struct gv_err err;
	struct gv_redis_opts o = { .url = need_env("GAVEL_REDIS_URL") };
	struct gv_redis *r = gv_redis_new(&o, &err);
	if (!r)
		fail_msg("redis: %s", err.msg);
	return r;
}

static long long q_ll(PGconn *c, const char *sql, int n, const char *const *p)
{
	struct gv_err err;
	PGresult *res = gv_pg_query(c, sql, n, p, &err);
	if (!res)
		fail_msg("%s: %s", sql, err.msg);
	if (PQntuples(res) != 1)
		fail_msg("%s: %d rows", sql, PQntuples(res));
	long long v = atoll(PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

static void must(int rc, const struct gv_err *err, const char *what)
{
	if (rc != 0)
		fail_msg("%s: %s", what, err->msg);
}

/* A tenant with a unique name for this run. */
static void new_tenant(PGconn *c, const char *stem, struct tenant_info *t)
{
	char name[64];
	unsigned char r[6];
	FILE *f = fopen("/dev/urandom", "r");
	assert_non_null(f);
	assert_int_equal(fread(r, 1, sizeof(r), f), sizeof(r));
	fclose(f);
	snprintf(name, sizeof(name), "test-%s-%02x%02x%02x%02x%02x%02x", stem, r[0], r[1], r[2], r[3], r[4], r[5]);
	struct gv_err err;
	must(tenant_create(c, name, 0, "operator:test", t, NULL, &err), &err, "tenant_create");
}

static void add_submission(PGconn *c, const char *tenant_id, const char *status, const char *age)
{
	struct gv_err err;
	const char *p[] = { tenant_id, status, age };
	must(gv_pg_exec(c,
			"INSERT INTO submissions (id, tenant_id, language, status, source, created_at) VALUES "
			"(replace(gen_random_uuid()::text, '-', ''), $1::uuid, 'c', $2, 'int main(){}', "
			"now() - $3::interval)",
			3, p, &err),
	     &err, "insert submission");
}

static int setup(void **state)
{
	(void)state;
	struct gv_err err;
	const char *root = getenv("GAVEL_ROOT");
	const char *dir_env = getenv("GAVEL_MIGRATIONS_DIR"); /* for private runs */
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", dir_env && dir_env[0] ? dir_env : root && root[0] ? root : ".");
	if (!(dir_env && dir_env[0]))
		strncat(dir, "/deploy/sql", sizeof(dir) - strlen(dir) - 1);
	PGconn *c = gv_pg_connect(getenv("GAVEL_DATABASE_URL") ? getenv("GAVEL_DATABASE_URL") : "", 5, 0, &err);
	if (!c) {
		fprintf(stderr, "# setup: %s\n", err.msg);
		return -1;
	}
	struct gv_migrate_report rep;
	int rc = gv_migrate(c, dir, &rep, &err);
	PQfinish(c);
	if (rc != 0) {
		fprintf(stderr, "# setup: migrations in %s: %s\n", dir, err.msg);
		return -1;
	}
	return 0;
}

static void rls__daemon_without_where__sees_only_its_tenant(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner(), *s = scheduler(), *fe = frontend();
	struct tenant_info a, b;
	new_tenant(o, "rls-a", &a);
	new_tenant(o, "rls-b", &b);
	add_submission(o, a.id, "queued", "0");
	add_submission(o, a.id, "done", "0");
	add_submission(o, b.id, "queued", "0");
	must(tenant_tx_begin(s, a.id, &err), &err, "begin a");
	/* No WHERE at all: only a's rows, on every tenant table. */
	assert_int_equal(q_ll(s, "SELECT count(*) FROM submissions", 0, NULL), 2);
	assert_int_equal(q_ll(s, "SELECT count(DISTINCT tenant_id) FROM submissions", 0, NULL), 1);
	assert_int_equal(q_ll(s, "SELECT count(*) FROM tenants", 0, NULL), 1);
	assert_int_equal(q_ll(s, "SELECT count(*) FROM tenant_quotas", 0, NULL), 1);
	tenant_tx_rollback(s);
	must(tenant_tx_begin(fe, a.id, &err), &err, "begin a (frontend)");
	assert_int_equal(q_ll(fe, "SELECT count(*) FROM audit_log WHERE tenant_id <> $1::uuid", 1,
			      (const char *const[]){ a.id }), 0);
	/* Writing another tenant's row is refused by the policy. */
	const char *pb[] = { b.id };
	assert_int_equal(gv_pg_exec(fe,
				    "INSERT INTO submissions (id, tenant_id, language, source) VALUES "
				    "('xxxxxxxxxxxxxxxxxxxxrls', $1::uuid, 'c', 'x')",
				    1, pb, &err),
			 -1);
	assert_non_null(strstr(err.msg, "row-level security"));
	tenant_tx_rollback(fe);
	must(tenant_tx_begin(s, b.id, &err), &err, "begin b");
	assert_int_equal(q_ll(s, "SELECT count(*) FROM submissions", 0, NULL), 1);
	must(tenant_tx_commit(s, &err), &err, "commit");
	/* No tenant set (also after a transaction that had set one): none. */
	assert_int_equal(q_ll(s, "SELECT count(*) FROM submissions", 0, NULL), 0);
	assert_int_equal(q_ll(s, "SELECT count(*) FROM tenants", 0, NULL), 0);
	PGconn *fresh = frontend();
	assert_int_equal(q_ll(fresh, "SELECT count(*) FROM submissions", 0, NULL), 0);
	assert_int_equal(q_ll(fresh, "SELECT count(*) FROM audit_log", 0, NULL), 0);
	/* The owner (operator tools) is not bound by the policies. */
	assert_true(q_ll(o, "SELECT count(*) FROM submissions", 0, NULL) >= 3);
	PQfinish(fresh);
	PQfinish(fe);
	PQfinish(s);
	PQfinish(o);
}

static void tx_query__one_round_trip__scoped_committed_or_rolled_back(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner(), *s = scheduler();
	struct tenant_info a, b;
	new_tenant(o, "txq-a", &a);
	new_tenant(o, "txq-b", &b);
	add_submission(o, a.id, "queued", "0");
	add_submission(o, b.id, "queued", "0");
	add_submission(o, b.id, "done", "0");
	PGresult *res = tenant_tx_query(s, b.id, "SELECT count(*), count(DISTINCT tenant_id) FROM submissions", 0,
					NULL, &err);
	if (!res)
		fail_msg("tenant_tx_query: %s", err.msg);
	assert_string_equal(PQgetvalue(res, 0, 0), "2");
	assert_string_equal(PQgetvalue(res, 0, 1), "1");
	PQclear(res);
	assert_int_equal(PQtransactionStatus(s), PQTRANS_IDLE);
	/* The tenant setting ended with the transaction. */
	assert_int_equal(q_ll(s, "SELECT count(*) FROM submissions", 0, NULL), 0);
	/* A write is committed; another tenant's row is out of reach. */
	const char *pa[] = { a.id };
	res = tenant_tx_query(s, b.id, "UPDATE submissions SET status = 'cancelled' WHERE tenant_id = $1::uuid", 1,
			      pa, &err);
	assert_non_null(res);
	assert_string_equal(PQcmdTuples(res), "0");
	PQclear(res);
	res = tenant_tx_query(s, a.id, "UPDATE submissions SET status = 'cancelled' WHERE tenant_id = $1::uuid", 1,
			      pa, &err);
	assert_non_null(res);
	assert_string_equal(PQcmdTuples(res), "1");
	PQclear(res);
	assert_int_equal(q_ll(o, "SELECT count(*) FROM submissions WHERE tenant_id = $1::uuid AND status = 'cancelled'",
			      1, pa),
			 1);
	/* A failing statement: nothing committed, the connection idle. */
	assert_null(tenant_tx_query(s, a.id, "UPDATE submissions SET status = 'queued' WHERE 1/0 = 1", 0, NULL, &err));
	assert_non_null(strstr(err.msg, "22012"));
	assert_int_equal(PQtransactionStatus(s), PQTRANS_IDLE);
	assert_null(tenant_tx_query(s, "not-a-uuid", "SELECT 1", 0, NULL, &err));
	assert_int_equal(err.code, GV_EINVAL);
	assert_int_equal(q_ll(s, "SELECT 5", 0, NULL), 5);
	PQfinish(s);
	PQfinish(o);
}

static void audit__tamper_as_owner__verify_names_the_row(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner();
	struct tenant_info t;
	new_tenant(o, "audit", &t); /* seq 1: tenant.created */
	for (int i = 0; i < 5; i++) {
		must(tenant_tx_begin(o, NULL, &err), &err, "begin");
		must(tenant_audit_append(o, t.id, "system:test", TENANT_AUDIT_SANDBOX_FINISHED, "sub", "node-1", "sb-1",
					 "{\"verdict\": \"AC\", \"cpu_ms\": 12, \"x\": 1.50}", &err),
		     &err, "append");
		must(tenant_tx_commit(o, &err), &err, "commit");
	}
	struct tenant_audit_report rep;
	must(tenant_audit_verify(o, t.id, &rep, &err), &err, "verify");
	assert_true(rep.ok);
	assert_int_equal(rep.records, 6);
	/* Change one record's details as the owner. */
	const char *p[] = { t.id };
	must(gv_pg_exec(o, "UPDATE audit_log SET details = '{\"verdict\": \"WA\"}' WHERE tenant_id = $1::uuid AND seq = 4",
			1, p, &err),
	     &err, "tamper");
	must(tenant_audit_verify(o, t.id, &rep, &err), &err, "verify");
	assert_false(rep.ok);
	assert_int_equal(rep.broken_seq, 4);
	assert_non_null(strstr(rep.reason, "hash mismatch"));
	assert_int_equal(rep.records, 3);
	/* A removed record shows as a gap at its seq. */
	must(gv_pg_exec(o, "DELETE FROM audit_log WHERE tenant_id = $1::uuid AND seq = 2", 1, p, &err), &err, "delete");
	must(tenant_audit_verify(o, t.id, &rep, &err), &err, "verify");
	assert_false(rep.ok);
	assert_int_equal(rep.broken_seq, 2);
	assert_non_null(strstr(rep.reason, "missing"));
	PQfinish(o);
}

static void audit__daemon_role__cannot_update_or_delete(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner(), *s = frontend();
	struct tenant_info t;
	new_tenant(o, "audit-grants", &t);
	must(tenant_tx_begin(s, t.id, &err), &err, "begin");
	/* The frontend's role may append (through the function) for its
	 * tenant ... */
	must(tenant_audit_append(s, t.id, "key:test", TENANT_AUDIT_SUBMISSION_CREATED, "s1", NULL, NULL, NULL, &err),
	     &err, "frontend append");
	must(tenant_tx_commit(s, &err), &err, "commit");
	static const char *const forbidden[] = {
		"UPDATE audit_log SET actor = 'evil'",
		"DELETE FROM audit_log",
		"TRUNCATE audit_log",
	};
	for (size_t i = 0; i < 3; i++) {
		must(tenant_tx_begin(s, t.id, &err), &err, "begin");
		assert_int_equal(gv_pg_exec(s, forbidden[i], 0, NULL, &err), -1);
		if (!strstr(err.msg, "42501"))
			fail_msg("%s: expected permission denied, got %s", forbidden[i], err.msg);
		tenant_tx_rollback(s);
	}
	/* ... but not for another tenant, and not records of details with source. */
	struct tenant_info other;
	new_tenant(o, "audit-other", &other);
	must(tenant_tx_begin(s, t.id, &err), &err, "begin");
	assert_int_equal(tenant_audit_append(s, other.id, "key:test", "x", NULL, NULL, NULL, NULL, &err), -1);
	tenant_tx_rollback(s);
	must(tenant_tx_begin(s, t.id, &err), &err, "begin");
	assert_int_equal(tenant_audit_append(s, t.id, "key:test", "x", NULL, NULL, NULL, "{\"source_code\": \"int\"}", &err),
			 -1);
	assert_int_equal(err.code, GV_EINVAL);
	tenant_tx_rollback(s);
	/* Outside a transaction: refused. */
	assert_int_equal(tenant_audit_append(s, t.id, "key:test", "x", NULL, NULL, NULL, NULL, &err), -1);
	struct tenant_audit_report rep;
	must(tenant_audit_verify(o, t.id, &rep, &err), &err, "verify");
	assert_true(rep.ok);
	assert_int_equal(rep.records, 2);
	PQfinish(s);
	PQfinish(o);
}

/* The SQL hash (gavel_audit_hash, 0005) equals the C one
 * (tenant_audit_hash) on a table of records: NULLs in every nullable
 * field, non-ASCII text, JSON that jsonb rewrites, a prev_hash, large
 * numbers, a negative time. */
static void audit__sql_hash__equals_c_hash(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *s = executor();
	static const char prev_hex[] = "00ff10203040506070809a0b0c0d0e0f1112131415161718191a1b1c1d1e1f20";
	static const struct {
		const char *tenant, *seq, *at_us, *actor, *action, *object, *node, *sandbox, *details, *prev;
	} cases[] = {
		{ "0b7c2a4e-5f1d-4c3b-9a8e-7d6c5b4a3f21", "1", "1700000000123456", "key:x", "submission.created",
		  "abcDEF0123456789xyz", NULL, NULL, "{}", NULL },
		{ NULL, "1", "0", "operator:root", "tenant.created", NULL, NULL, NULL, "{\"name\": \"t\"}", NULL },
		{ "FFFFFFFF-0000-4000-8000-000000000001", "9223372036854775807", "-1", "system:executor@n1",
		  "sandbox.started", "s", "node-1", "sb-9", "{\"b\":1,   \"a\":[1.50, \"x\"], \"u\":\"\\u00e9\"}", prev_hex },
		{ "0b7c2a4e-5f1d-4c3b-9a8e-7d6c5b4a3f21", "42", "1700000000000000", "k\xc3\xa9y", "quota.refused", "",
		  "", "", "{\"limit\": \"rate\", \"status\": 429, \"nested\": {\"z\": null, \"a\": true}}", prev_hex },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p[] = { cases[i].tenant, cases[i].seq, cases[i].at_us, cases[i].actor, cases[i].action,
				    cases[i].object, cases[i].node, cases[i].sandbox, cases[i].details, cases[i].prev };
		PGresult *res = gv_pg_query(s,
					    "SELECT encode(gavel_audit_hash($1::uuid, $2::bigint, $3::bigint, $4, $5, $6, $7, $8, "
					    "$9::jsonb, decode($10, 'hex')), 'hex'), $1::uuid::text, $9::jsonb::text",
					    10, p, &err);
		if (!res)
			fail_msg("case %zu: %s", i, err.msg);
		unsigned char prev[TENANT_AUDIT_HASH_LEN], h[TENANT_AUDIT_HASH_LEN];
		for (size_t k = 0; k < sizeof(prev); k++)
			sscanf(prev_hex + 2 * k, "%2hhx", &prev[k]);
		struct tenant_audit_record rec = {
			.tenant_id = PQgetisnull(res, 0, 1) ? NULL : PQgetvalue(res, 0, 1),
			.seq = strtoll(cases[i].seq, NULL, 10),
			.at_us = strtoll(cases[i].at_us, NULL, 10),
			.actor = cases[i].actor, .action = cases[i].action, .object = cases[i].object,
			.node = cases[i].node, .sandbox = cases[i].sandbox,
			.details = PQgetvalue(res, 0, 2), /* jsonb's text form, as stored */
			.prev_hash = cases[i].prev ? prev : NULL,
		};
		must(tenant_audit_hash(&rec, h, &err), &err, "C hash");
		char hex[2 * TENANT_AUDIT_HASH_LEN + 1];
		for (size_t k = 0; k < sizeof(h); k++)
			snprintf(hex + 2 * k, 3, "%02x", h[k]);
		if (strcmp(hex, PQgetvalue(res, 0, 0)) != 0)
			fail_msg("case %zu: C %s, SQL %s", i, hex, PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	PQfinish(s);
}

/* Records appended by the SQL function directly (as the frontend's
 * pipeline does, several in one statement) and through the C wrapper make
 * one chain that the C verifier accepts; the function keeps a daemon's
 * role inside its tenant and refuses what the C checks refuse. */
static void audit__sql_and_c_appends__one_verified_chain(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner(), *s = frontend();
	struct tenant_info t, other;
	new_tenant(o, "audit-mixed", &t);       /* seq 1 (owner, C wrapper) */
	new_tenant(o, "audit-mixed-other", &other);
	for (int i = 0; i < 3; i++) {
		must(tenant_tx_begin(s, t.id, &err), &err, "begin");
		const char *p[] = { t.id, "key:test", TENANT_AUDIT_SUBMISSION_CREATED, "sub-sql", NULL, NULL,
				    "{\"language\": \"c\", \"source_bytes\": 12}" };
		PGresult *res = gv_pg_query(s, TENANT_SQL_AUDIT_APPEND, 7, p, &err);
		if (!res)
			fail_msg("SQL append: %s", err.msg);
		PQclear(res);
		int64_t seq = 0;
		must(tenant_audit_append_seq(s, t.id, "system:test", TENANT_AUDIT_SANDBOX_STARTED, "sub-sql", "node-1",
					     "sb-1", "{\"limits\": {\"time_ms\": 1000}}", &seq, &err),
		     &err, "C append");
		assert_int_equal(seq, 3 + 2 * i);
		must(tenant_tx_commit(s, &err), &err, "commit");
	}
	/* Several in one statement: each call sees the one before. */
	must(tenant_tx_begin(s, t.id, &err), &err, "begin");
	const char *pt[] = { t.id };
	assert_int_equal(q_ll(s,
			      "SELECT count(gavel_audit_append($1::uuid, 'key:test', 'submission.created', 'b' || g, NULL, "
			      "NULL, jsonb_build_object('n', g))) FROM generate_series(1, 5) g",
			      1, pt),
			 5);
	must(tenant_tx_commit(s, &err), &err, "commit");
	struct tenant_audit_report rep;
	must(tenant_audit_verify(o, t.id, &rep, &err), &err, "verify");
	if (!rep.ok)
		fail_msg("broken at %lld: %s", (long long)rep.broken_seq, rep.reason);
	assert_int_equal(rep.records, 12);
	/* Another tenant's chain, a system record, no tenant set: refused. */
	const char *cases[][2] = { { t.id, other.id }, { t.id, NULL }, { NULL, t.id } };
	for (size_t i = 0; i < 3; i++) {
		must(tenant_tx_begin(s, cases[i][0], &err), &err, "begin");
		const char *p[] = { cases[i][1], "key:test", "x", NULL, NULL, NULL, "{}" };
		assert_int_equal(gv_pg_exec(s, TENANT_SQL_AUDIT_APPEND, 7, p, &err), -1);
		if (!strstr(err.msg, "42501"))
			fail_msg("case %zu: expected 42501, got %s", i, err.msg);
		tenant_tx_rollback(s);
	}
	/* Every key the C side refuses, the SQL side refuses too. */
	for (size_t i = 0; TENANT_AUDIT_FORBIDDEN_KEYS[i]; i++) {
		char details[96];
		snprintf(details, sizeof(details), "{\"%s\": \"x\"}", TENANT_AUDIT_FORBIDDEN_KEYS[i]);
		must(tenant_tx_begin(s, t.id, &err), &err, "begin");
		const char *p[] = { t.id, "key:test", "x", NULL, NULL, NULL, details };
		assert_int_equal(gv_pg_exec(s, TENANT_SQL_AUDIT_APPEND, 7, p, &err), -1);
		if (!strstr(err.msg, "22023"))
			fail_msg("key %s: expected 22023, got %s", TENANT_AUDIT_FORBIDDEN_KEYS[i], err.msg);
		tenant_tx_rollback(s);
	}
	must(tenant_audit_verify(o, other.id, &rep, &err), &err, "verify other");
	assert_true(rep.ok);
	assert_int_equal(rep.records, 1);
	PQfinish(s);
	PQfinish(o);
}

struct appender {
	const char *tenant_id;
	int n;
	int failures;
	char msg[GV_ERR_MSG_MAX];
};

static void *append_many(void *arg)
{
	struct appender *a = arg;
	struct gv_err err;
	PGconn *s = gv_pg_connect(getenv("GAVEL_EXECUTOR_DATABASE_URL"), 5, 30000, &err);
	if (!s) {
		a->failures = a->n;
		snprintf(a->msg, sizeof(a->msg), "%s", err.msg);
		return NULL;
	}
	for (int i = 0; i < a->n; i++) {
		if (tenant_tx_begin(s, a->tenant_id, &err) != 0 ||
		    tenant_audit_append(s, a->tenant_id, "system:test", "test.concurrent", NULL, NULL, NULL, NULL, &err) != 0 ||
		    tenant_tx_commit(s, &err) != 0) {
			tenant_tx_rollback(s);
			a->failures++;
			snprintf(a->msg, sizeof(a->msg), "%s", err.msg);
		}
	}
	PQfinish(s);
	return NULL;
}

static void audit__concurrent_appends__one_intact_chain(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner();
	struct tenant_info t;
	new_tenant(o, "audit-conc", &t);
	struct appender a[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		a[i] = (struct appender){ .tenant_id = t.id, .n = 40 };
		assert_int_equal(pthread_create(&th[i], NULL, append_many, &a[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		if (a[i].failures)
			fail_msg("appender %d: %d failures: %s", i, a[i].failures, a[i].msg);
	}
	struct tenant_audit_report rep;
	must(tenant_audit_verify(o, t.id, &rep, &err), &err, "verify");
	if (!rep.ok)
		fail_msg("broken at %lld: %s", (long long)rep.broken_seq, rep.reason);
	assert_int_equal(rep.records, 121);
	PQfinish(o);
}

static void auth__lookup_as_frontend__ok_revoked_expired_disabled(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner(), *s = frontend();
	struct tenant_info t;
	new_tenant(o, "auth", &t);
	const char *set[] = { "max_cpu_ms=1234", "allowed_languages=c,cpp" };
	must(tenant_update_quota(o, t.id, set, 2, "operator:test", NULL, &err), &err, "quota");
	char key[TENANT_KEY_BUF], key2[TENANT_KEY_BUF];
	struct tenant_key_info info, info2;
	must(tenant_key_create(o, t.id, "ci", NULL, NULL, "operator:test", key, &info, &err), &err, "key create");
	must(tenant_key_create(o, t.id, "short", "2999-01-01", NULL, "operator:test", key2, &info2, &err), &err,
	     "key create 2");
	int64_t now = (int64_t)time(NULL);
	enum tenant_auth_decision d;
	struct tenant_auth_row row;
	struct tenant_quota q;
	must(tenant_key_authenticate(s, key, NULL, now, &d, &row, &q, &err), &err, "auth");
	assert_int_equal(d, TENANT_AUTH_OK);
	assert_string_equal(row.tenant_id, t.id);
	assert_string_equal(row.key_id, info.id);
	assert_int_equal(q.max_cpu_ms, 1234);
	assert_int_equal(q.n_allowed_languages, 2);
	must(tenant_key_authenticate(s, key2, NULL, now, &d, &row, NULL, &err), &err, "auth 2");
	assert_int_equal(d, TENANT_AUTH_OK);
	assert_true(row.has_expiry);
	/* A wrong pepper, an unknown key, a malformed key, no key. */
	struct tenant_pepper pep;
	must(tenant_pepper_parse("00112233445566778899aabbccddeeff", &pep, &err), &err, "pepper");
	must(tenant_key_authenticate(s, key, &pep, now, &d, NULL, NULL, &err), &err, "auth pepper");
	assert_int_equal(d, TENANT_AUTH_UNKNOWN);
	char unknown[TENANT_KEY_BUF];
	must(tenant_key_generate(unknown, &err), &err, "generate");
	must(tenant_key_authenticate(s, unknown, NULL, now, &d, NULL, NULL, &err), &err, "auth unknown");
	assert_int_equal(d, TENANT_AUTH_UNKNOWN);
	must(tenant_key_authenticate(s, "Bearer nonsense", NULL, now, &d, NULL, NULL, &err), &err, "malformed");
	assert_int_equal(d, TENANT_AUTH_MALFORMED);
	must(tenant_key_authenticate(s, "", NULL, now, &d, NULL, NULL, &err), &err, "missing");
	assert_int_equal(d, TENANT_AUTH_MISSING);
	/* Expired: pushed into the past by the owner. */
	const char *pk[] = { info2.id };
	must(gv_pg_exec(o, "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1::uuid", 1, pk, &err),
	     &err, "expire");
	must(tenant_key_authenticate(s, key2, NULL, (int64_t)time(NULL), &d, NULL, NULL, &err), &err, "auth expired");
	assert_int_equal(d, TENANT_AUTH_EXPIRED);
	/* Revoked: effective on the very next lookup. */
	must(tenant_key_revoke(o, info.id, "operator:test", &info, &err), &err, "revoke");
	must(tenant_key_authenticate(s, key, NULL, (int64_t)time(NULL), &d, NULL, NULL, &err), &err, "auth revoked");
	assert_int_equal(d, TENANT_AUTH_REVOKED);
	assert_int_equal(tenant_key_revoke(o, info.id, "operator:test", &info, &err), -1);
	/* Disabled tenant: a fresh valid key answers 403. */
	char key3[TENANT_KEY_BUF];
	struct tenant_key_info info3;
	must(tenant_key_create(o, t.id, "", NULL, NULL, "operator:test", key3, &info3, &err), &err, "key 3");
	must(tenant_set_disabled(o, t.id, true, "operator:test", &err), &err, "disable");
	must(tenant_key_authenticate(s, key3, NULL, (int64_t)time(NULL), &d, NULL, NULL, &err), &err, "auth disabled");
	assert_int_equal(d, TENANT_AUTH_DISABLED);
	assert_int_equal(tenant_auth_http_status(d), 403);
	/* Every change above is in the chain: created, quota, 2 keys, 1 revoke,
	 * 1 key, disabled. */
	struct tenant_audit_report rep;
	must(tenant_audit_verify(o, t.id, &rep, &err), &err, "verify");
	assert_true(rep.ok);
	assert_int_equal(rep.records, 7);
	const char *pt[] = { t.id };
	assert_int_equal(q_ll(o, "SELECT count(*) FROM audit_log WHERE tenant_id = $1::uuid AND action LIKE 'key.%'", 1, pt), 4);
	assert_int_equal(q_ll(o, "SELECT count(*) FROM audit_log WHERE tenant_id = $1::uuid AND details::text LIKE '%gv\\_%'",
			      1, pt),
			 0); /* no key text in the log */
	PQfinish(s);
	PQfinish(o);
}

static void usage__add_twice_as_executor__sums(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner(), *s = executor();
	struct tenant_info t;
	new_tenant(o, "usage", &t);
	struct tenant_usage_delta d = { 1, 250, 0, 1000 };
	for (int i = 0; i < 2; i++) {
		must(tenant_tx_begin(s, t.id, &err), &err, "begin");
		must(tenant_usage_add(s, t.id, &d, &err), &err, "usage add");
		must(tenant_tx_commit(s, &err), &err, "commit");
	}
	const char *p[] = { t.id };
	assert_int_equal(q_ll(o, "SELECT submissions FROM usage_daily WHERE tenant_id = $1::uuid", 1, p), 2);
	assert_int_equal(q_ll(o, "SELECT sandbox_cpu_ms FROM usage_daily WHERE tenant_id = $1::uuid", 1, p), 500);
	/* Without the tenant set, the policy refuses the write. */
	assert_int_equal(tenant_usage_add(s, t.id, &d, &err), -1);
	json_t *rows = tenant_usage_report(o, t.id, NULL, &err);
	assert_non_null(rows);
	assert_int_equal(json_array_size(rows), 1);
	json_decref(rows);
	PQfinish(s);
	PQfinish(o);
}

static void retention__old_finished_deleted__audit_kept(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner();
	struct tenant_info t;
	new_tenant(o, "retention", &t);
	const char *set[] = { "retention_days=7" };
	must(tenant_update_quota(o, t.id, set, 1, "operator:test", NULL, &err), &err, "quota");
	add_submission(o, t.id, "done", "8 days");
	add_submission(o, t.id, "failed", "30 days");
	add_submission(o, t.id, "queued", "30 days"); /* unfinished: kept */
	add_submission(o, t.id, "done", "6 days");    /* young: kept */
	struct tenant_retention_report rep;
	must(tenant_retention_run(o, t.id, "operator:test", &rep, &err), &err, "retention");
	assert_int_equal(rep.deleted, 2);
	const char *p[] = { t.id };
	assert_int_equal(q_ll(o, "SELECT count(*) FROM submissions WHERE tenant_id = $1::uuid", 1, p), 2);
	must(tenant_retention_run(o, t.id, "operator:test", &rep, &err), &err, "retention again");
	assert_int_equal(rep.deleted, 0);
	struct tenant_audit_report ar;
	must(tenant_audit_verify(o, t.id, &ar, &err), &err, "verify");
	assert_true(ar.ok);
	assert_int_equal(ar.records, 3); /* created, quota.changed, retention.purged */
	PQfinish(o);
}

/* The scheduler's periodic job runs retention as gavel_scheduler: tenants
 * come from gavel_tenant_ids, each batch is scoped to its tenant. */
static void retention__as_scheduler__deletes_and_audits(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner(), *s = scheduler();
	struct tenant_info t;
	new_tenant(o, "retention-svc", &t);
	const char *set[] = { "retention_days=3" };
	must(tenant_update_quota(o, t.id, set, 1, "operator:test", NULL, &err), &err, "quota");
	add_submission(o, t.id, "done", "4 days");
	add_submission(o, t.id, "done", "1 day");
	struct tenant_retention_report rep;
	must(tenant_retention_run(s, NULL, "system:retention", &rep, &err), &err, "retention as scheduler");
	assert_true(rep.tenants >= 1);
	assert_true(rep.deleted >= 1);
	const char *p[] = { t.id };
	assert_int_equal(q_ll(o, "SELECT count(*) FROM submissions WHERE tenant_id = $1::uuid", 1, p), 1);
	assert_int_equal(q_ll(o, "SELECT count(*) FROM audit_log WHERE tenant_id = $1::uuid AND action = 'retention.purged' "
			      "AND actor = 'system:retention'", 1, p),
			 1);
	struct tenant_audit_report ar;
	must(tenant_audit_verify(o, t.id, &ar, &err), &err, "verify");
	assert_true(ar.ok);
	PQfinish(s);
	PQfinish(o);
}

struct hammer {
	const char *tenant_id;
	const struct tenant_quota *q;
	long long stop_at_ms;
	int accepted, refused, errors;
	long long first_ms, last_ms;
};

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	struct gv_err err;
	struct gv_redis_opts o = { .url = getenv("GAVEL_REDIS_URL") };
	struct gv_redis *r = gv_redis_new(&o, &err);
	if (!r) {
		h->errors++;
		return NULL;
	}
	h->first_ms = mono_ms();
	while (mono_ms() < h->stop_at_ms) {
		struct tenant_ratelimit_result res;
		if (tenant_ratelimit_take(r, h->tenant_id, h->q, 1, &res, &err) != 0) {
			h->errors++;
			continue;
		}
		if (res.allowed) {
			h->accepted++;
		} else {
			h->refused++;
			if (res.retry_after_s < 1 || res.limit != h->q->burst)
				h->errors++;
		}
	}
	h->last_ms = mono_ms();
	gv_redis_free(r);
	return NULL;
}

static void ratelimit__two_concurrent_clients__accepted_matches_bucket(void **state)
{
	(void)state;
	PGconn *o = owner();
	struct tenant_info t;
	new_tenant(o, "rate", &t);
	PQfinish(o);
	struct tenant_quota q;
	tenant_quota_defaults(&q);
	q.requests_per_second = 100;
	q.burst = 50;
	struct hammer h[2];
	pthread_t th[2];
	long long start = mono_ms();
	for (int i = 0; i < 2; i++) {
		h[i] = (struct hammer){ .tenant_id = t.id, .q = &q, .stop_at_ms = start + 2000 };
		assert_int_equal(pthread_create(&th[i], NULL, hammer_run, &h[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(h[0].errors + h[1].errors, 0);
	long long first = h[0].first_ms < h[1].first_ms ? h[0].first_ms : h[1].first_ms;
	long long last = h[0].last_ms > h[1].last_ms ? h[0].last_ms : h[1].last_ms;
	double expected = q.burst + q.requests_per_second * (last - first) / 1000.0;
	int accepted = h[0].accepted + h[1].accepted;
	double dev = (accepted - expected) / expected;
	printf("# rate limit: accepted %d (client A %d, B %d), refused %d, expected %.1f over %lld ms: %+.2f%%\n",
	       accepted, h[0].accepted, h[1].accepted, h[0].refused + h[1].refused, expected, last - first, dev * 100);
	assert_true(h[0].refused + h[1].refused > 0);
	assert_true(h[0].accepted > 0 && h[1].accepted > 0);
	if (dev > 0.05 || dev < -0.05)
		fail_msg("accepted %d, expected %.1f (%.2f%% off)", accepted, expected, dev * 100);
}

static void schedcfg__publish__hash_readable(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner();
	struct tenant_info t;
	struct tenant_quota q;
	new_tenant(o, "sched", &t);
	const char *set[] = { "weight=3", "max_running=7" };
	must(tenant_update_quota(o, t.id, set, 2, "operator:test", &q, &err), &err, "quota");
	struct gv_redis *r = redis();
	must(tenant_sched_cfg_publish(r, t.id, &q, false, &err), &err, "publish");
	redisReply *rep = gv_redis_command(r, &err, "HMGET " TENANT_SCHED_CFG_KEY_PREFIX "%s weight max_running disabled", t.id);
	assert_non_null(rep);
	assert_int_equal(rep->elements, 3);
	assert_string_equal(rep->element[0]->str, "3");
	assert_string_equal(rep->element[1]->str, "7");
	assert_string_equal(rep->element[2]->str, "0");
	gv_redis_reply_free(rep);
	int count = 0;
	must(tenant_sched_cfg_publish_all(o, r, &count, &err), &err, "publish all");
	assert_true(count >= 1);
	gv_redis_free(r);
	PQfinish(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rls__daemon_without_where__sees_only_its_tenant),
		cmocka_unit_test(tx_query__one_round_trip__scoped_committed_or_rolled_back),
		cmocka_unit_test(audit__tamper_as_owner__verify_names_the_row),
		cmocka_unit_test(audit__daemon_role__cannot_update_or_delete),
		cmocka_unit_test(audit__concurrent_appends__one_intact_chain),
		cmocka_unit_test(audit__sql_hash__equals_c_hash),
		cmocka_unit_test(audit__sql_and_c_appends__one_verified_chain),
		cmocka_unit_test(auth__lookup_as_frontend__ok_revoked_expired_disabled),
		cmocka_unit_test(usage__add_twice_as_executor__sums),
		cmocka_unit_test(retention__old_finished_deleted__audit_kept),
		cmocka_unit_test(retention__as_scheduler__deletes_and_audits),
		cmocka_unit_test(ratelimit__two_concurrent_clients__accepted_matches_bucket),
		cmocka_unit_test(schedcfg__publish__hash_readable),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
