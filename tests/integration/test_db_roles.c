/* The daemons' database roles (deploy/sql/0012_daemon_roles.sql) against
 * the real PostgreSQL of tests/run.sh, tried as an attacker who holds one
 * daemon's credentials and sets the tenant itself (every daemon may): each
 * of gavel_frontend, gavel_scheduler and gavel_executor is refused an
 * operator record in the audit log (and any actor that is not a daemon's),
 * a direct write to audit_log, the tables and columns its daemon does not
 * use (API keys, webhook secrets, another daemon's tables), DDL and a
 * change of role; the catalog holds exactly the grants the migration
 * lists, and gavel_service none. The owner still writes operator records,
 * and the chain, daemon and operator records together, verifies in C and
 * with `gavel audit verify`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/migrate.h"
#include "common/pg.h"
#include "tenants/admin.h"
#include "tenants/audit.h"
#include "tenants/db.h"

static const char *const DAEMONS[] = { "frontend", "scheduler", "executor" };
#define NDAEMONS (sizeof(DAEMONS) / sizeof(DAEMONS[0]))

static const char *need_env(const char *name)
{
	const char *v = getenv(name);
	if (!v || !v[0])
		fail_msg("%s is not set: run this through tests/run.sh, which starts PostgreSQL and Redis", name);
	return v;
}

static PGconn *connect_url(const char *var)
{
	struct gv_err err;
	PGconn *c = gv_pg_connect(need_env(var), 5, 30000, &err);
	if (!c)
		fail_msg("%s: %s", var, err.msg);
	return c;
}

static PGconn *owner(void)
{
	return connect_url("GAVEL_DATABASE_URL");
}

/* A connection as gavel_<daemon>, with its URL from the harness. */
static PGconn *as_daemon(const char *daemon)
{
	char var[64];
	snprintf(var, sizeof(var), "GAVEL_%s_DATABASE_URL", daemon);
	for (char *p = var; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	return connect_url(var);
}

static void must(int rc, const struct gv_err *err, const char *what)
{
	if (rc != 0)
		fail_msg("%s: %s", what, err->msg);
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

/* A tenant with a unique name for this run, made by the owner. */
static void new_tenant(PGconn *o, const char *stem, struct tenant_info *t)
{
	char name[64];
	unsigned char r[6];
	FILE *f = fopen("/dev/urandom", "r");
	assert_non_null(f);
	assert_int_equal(fread(r, 1, sizeof(r), f), sizeof(r));
	fclose(f);
	snprintf(name, sizeof(name), "test-%s-%02x%02x%02x%02x%02x%02x", stem, r[0], r[1], r[2], r[3], r[4], r[5]);
	struct gv_err err;
	must(tenant_create(o, name, 0, "operator:test", t, NULL, &err), &err, "tenant_create");
}

/* Runs sql as the role of c inside a transaction bound to tenant (as the
 * attacker may: set_config is open to every role) and expects it refused
 * with insufficient_privilege (42501); the transaction is rolled back. */
static void refused(PGconn *c, const char *who, const char *tenant, const char *sql)
{
	struct gv_err err;
	must(tenant_tx_begin(c, tenant, &err), &err, "begin");
	const char *p[] = { tenant };
	int rc = gv_pg_exec(c, sql, strstr(sql, "$1") ? 1 : 0, p, &err);
	tenant_tx_rollback(c);
	if (rc == 0)
		fail_msg("gavel_%s may run: %s", who, sql);
	if (!strstr(err.msg, "42501"))
		fail_msg("gavel_%s: %s: want 42501 (insufficient privilege), got %s", who, sql, err.msg);
}

static int setup(void **state)
{
	(void)state;
	struct gv_err err;
	const char *root = getenv("GAVEL_ROOT");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/deploy/sql", root && root[0] ? root : ".");
	PGconn *c = gv_pg_connect(getenv("GAVEL_DATABASE_URL") ? getenv("GAVEL_DATABASE_URL") : "", 5, 0, &err);
	if (!c) {
		fprintf(stderr, "# setup: %s\n", err.msg);
		return -1;
	}
	int rc = gv_migrate(c, dir, NULL, &err);
	PQfinish(c);
	if (rc != 0) {
		fprintf(stderr, "# setup: migrations in %s: %s\n", dir, err.msg);
		return -1;
	}
	return 0;
}

/* Every way to an operator record a daemon's role has, and actors that
 * would read as one: refused, for every role, also with the tenant set
 * to the record's tenant; nothing reaches the chain. */
static void audit__operator_actor__refused_for_every_daemon_role(void **state)
{
	(void)state;
	PGconn *o = owner();
	struct tenant_info t;
	new_tenant(o, "roles-op", &t);
	const char *pt[] = { t.id };
	long long before = q_ll(o, "SELECT count(*) FROM audit_log WHERE tenant_id = $1::uuid", 1, pt);
	static const char *const forged[] = {
		"SELECT gavel_audit_append($1::uuid, 'operator:root', 'tenant.changed', NULL, NULL, NULL, "
		"'{\"disabled\": false}'::jsonb)",
		"SELECT gavel_audit_append($1::uuid, 'operator:root(via mallory)', 'key.revoked', NULL, NULL, NULL, NULL)",
		"SELECT gavel_audit_append($1::uuid, 'Operator:root', 'quota.changed', NULL, NULL, NULL, NULL)",
		"SELECT gavel_audit_append($1::uuid, ' operator:root', 'quota.changed', NULL, NULL, NULL, NULL)",
		"SELECT gavel_audit_append($1::uuid, 'root', 'tenant.changed', NULL, NULL, NULL, NULL)",
		/* The playground's actor is "anonymous:" exactly (0015). */
		"SELECT gavel_audit_append($1::uuid, 'Anonymous:192.0.2.1', 'quota.changed', NULL, NULL, NULL, NULL)",
		"SELECT gavel_audit_append($1::uuid, 'anonymous', 'quota.changed', NULL, NULL, NULL, NULL)",
		/* One good record does not carry a forged one through. */
		"SELECT gavel_audit_append_many($1::uuid, ARRAY['key:x', 'operator:root'], ARRAY['a.b', 'tenant.changed'], "
		"NULL, NULL, NULL, NULL)",
		/* Through a definer function's caller: a statement that calls
		 * it once per row. */
		"SELECT count(gavel_audit_append($1::uuid, 'operator:' || g, 'x.y', NULL, NULL, NULL, NULL)) "
		"FROM generate_series(1, 3) g",
	};
	for (size_t d = 0; d < NDAEMONS; d++) {
		PGconn *c = as_daemon(DAEMONS[d]);
		for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++)
			refused(c, DAEMONS[d], t.id, forged[i]);
		PQfinish(c);
	}
	assert_int_equal(q_ll(o, "SELECT count(*) FROM audit_log WHERE tenant_id = $1::uuid", 1, pt), before);
	PQfinish(o);
}

/* What each role must never touch, with the tenant set by the role
 * itself. */
static void tables__outside_each_daemons_needs__refused(void **state)
{
	(void)state;
	PGconn *o = owner();
	struct tenant_info t;
	new_tenant(o, "roles-tables", &t);
	static const char *const every_role[] = {
		/* The audit log only through the append functions. */
		"INSERT INTO audit_log (tenant_id, seq, actor, action, hash) VALUES ($1::uuid, 999999, 'operator:root', "
		"'tenant.changed', '\\x00'::bytea)",
		"UPDATE audit_log SET actor = 'operator:root' WHERE tenant_id = $1::uuid",
		"DELETE FROM audit_log WHERE tenant_id = $1::uuid",
		"TRUNCATE audit_log",
		/* Keys: only gavel_key_lookup (the frontend's) sees them. */
		"SELECT count(*) FROM api_keys",
		"SELECT key_hash FROM api_keys WHERE tenant_id = $1::uuid",
		"INSERT INTO api_keys (tenant_id, key_hash) VALUES ($1::uuid, '\\x00112233445566778899aabbccddeeff')",
		"UPDATE api_keys SET revoked_at = NULL",
		/* Tenants: names and webhook secrets are not any daemon's to read. */
		"SELECT webhook_secret FROM tenants",
		"SELECT name FROM tenants",
		"UPDATE tenants SET disabled = false",
		"INSERT INTO tenants (name) VALUES ('mallory')",
		"UPDATE tenant_quotas SET max_running = 100000",
		"DELETE FROM tenant_quotas",
		"UPDATE tenant_queue_counts SET queued = 0",
		"SELECT count(*) FROM schema_migrations",
		/* The owner's trigger function. */
		"SELECT gavel_queue_count()",
	};
	struct {
		const char *daemon;
		const char *sql;
	} per_role[] = {
		/* The frontend: submissions are created queued, never changed
		 * (a queued kernel's cancel is a function of its own, 0017); no
		 * quotas but the kernel budgets it copies into a kernel's row
		 * (0016; the key lookup carries the rest), no webhooks, no
		 * blobs, no cross-tenant listing. */
		{ "frontend", "INSERT INTO submissions (id, tenant_id, language, source, status, verdict) VALUES "
			      "('aaaaaaaaaaaaaaaaaaaaaaaa', $1::uuid, 'c', 'x', 'done', 'AC')" },
		{ "frontend", "UPDATE submissions SET verdict = 'AC'" },
		{ "frontend", "SELECT max_queued FROM tenant_quotas" },
		{ "frontend", "UPDATE tenant_quotas SET max_kernels = 10000" },
		{ "frontend", "SELECT count(*) FROM tenants" },
		{ "frontend", "SELECT count(*) FROM webhook_outbox" },
		{ "frontend", "SELECT count(*) FROM webhook_deliveries" },
		{ "frontend", "SELECT count(*) FROM problem_blobs" },
		{ "frontend", "UPDATE problem_versions SET status = 'ready'" },
		{ "frontend", "INSERT INTO usage_daily (tenant_id, day) VALUES ($1::uuid, current_date)" },
		{ "frontend", "SELECT * FROM gavel_tenant_ids()" },
		{ "frontend", "SELECT * FROM gavel_unfinished_submissions(0, 10)" },
		{ "frontend", "SELECT gavel_webhook_secret('\\x0000000000000000000000000000000000000000000000000000000000000000')" },
		{ "frontend", "SELECT * FROM gavel_problem_import_claim('n', 1000)" },
		/* The scheduler: no audit log to read, no keys, no problems, no
		 * usage, no new submissions, no source rewriting. */
		{ "scheduler", "SELECT count(*) FROM audit_log" },
		{ "scheduler", "SELECT gavel_key_lookup('\\x00112233445566778899aabbccddeeff')" },
		{ "scheduler", "INSERT INTO submissions (id, tenant_id, language, source) VALUES "
			       "('aaaaaaaaaaaaaaaaaaaaaaaa', $1::uuid, 'c', 'x')" },
		{ "scheduler", "UPDATE submissions SET source = 'x'" },
		{ "scheduler", "UPDATE submissions SET tenant_id = $1::uuid" },
		{ "scheduler", "SELECT count(*) FROM problems" },
		{ "scheduler", "SELECT count(*) FROM problem_blobs" },
		{ "scheduler", "SELECT count(*) FROM usage_daily" },
		{ "scheduler", "SELECT count(*) FROM webhook_outbox" },
		{ "scheduler", "SELECT gavel_webhook_secret('\\x0000000000000000000000000000000000000000000000000000000000000000')" },
		{ "scheduler", "SELECT * FROM gavel_problem_import_claim('n', 1000)" },
		{ "scheduler", "SELECT gavel_audit_append_many($1::uuid, ARRAY['system:x'], ARRAY['a.b'], NULL, NULL, NULL, NULL)" },
		/* The executor: no audit log to read, no keys, no deleting
		 * submissions, no changing what a tenant submitted. */
		{ "executor", "SELECT count(*) FROM audit_log" },
		{ "executor", "SELECT gavel_key_lookup('\\x00112233445566778899aabbccddeeff')" },
		{ "executor", "SELECT count(*) FROM tenants" },
		{ "executor", "SELECT max_running FROM tenant_quotas" },
		{ "executor", "DELETE FROM submissions" },
		{ "executor", "UPDATE submissions SET source = 'x', request = '{}'" },
		{ "executor", "INSERT INTO submissions (id, tenant_id, language, source) VALUES "
			      "('aaaaaaaaaaaaaaaaaaaaaaaa', $1::uuid, 'c', 'x')" },
		{ "executor", "UPDATE problems SET feedback = '{}'" },
		{ "executor", "DELETE FROM problem_blobs" },
		{ "executor", "SELECT count(*) FROM webhook_deliveries" },
		{ "executor", "SELECT * FROM gavel_tenant_ids()" },
		{ "executor", "SELECT gavel_audit_append_many($1::uuid, ARRAY['system:x'], ARRAY['a.b'], NULL, NULL, NULL, NULL)" },
	};
	for (size_t d = 0; d < NDAEMONS; d++) {
		PGconn *c = as_daemon(DAEMONS[d]);
		for (size_t i = 0; i < sizeof(every_role) / sizeof(every_role[0]); i++)
			refused(c, DAEMONS[d], t.id, every_role[i]);
		for (size_t i = 0; i < sizeof(per_role) / sizeof(per_role[0]); i++)
			if (strcmp(per_role[i].daemon, DAEMONS[d]) == 0)
				refused(c, DAEMONS[d], t.id, per_role[i].sql);
		PQfinish(c);
	}
	PQfinish(o);
}

/* No schema change, no temporary objects, no other role. */
static void ddl_and_role_changes__refused(void **state)
{
	(void)state;
	PGconn *o = owner();
	struct tenant_info t;
	new_tenant(o, "roles-ddl", &t);
	static const char *const ddl[] = {
		"CREATE TABLE sneaky (a int)",
		"CREATE TEMP TABLE sneaky (a int)",
		"CREATE SCHEMA sneaky",
		"CREATE FUNCTION sneaky() RETURNS int LANGUAGE sql AS 'SELECT 1'",
		"CREATE VIEW sneaky AS SELECT 1",
		"DROP TABLE audit_log",
		"ALTER TABLE submissions DISABLE ROW LEVEL SECURITY",
		"ALTER TABLE audit_log ADD COLUMN x int",
		"DROP POLICY tenant_isolation ON submissions",
		"CREATE POLICY sneaky ON submissions USING (true)",
		"ALTER FUNCTION gavel_audit_append_many(uuid, text[], text[], text[], text[], text[], jsonb[]) "
		"SECURITY INVOKER",
		"CREATE OR REPLACE FUNCTION gavel_audit_field(b bytea) RETURNS bytea LANGUAGE sql AS 'SELECT b'",
		"SET ROLE gavel_owner",
		"SET SESSION AUTHORIZATION gavel_owner",
		"SELECT set_config('role', 'gavel_owner', false)",
		"ALTER ROLE CURRENT_USER BYPASSRLS",
		"GRANT gavel_owner TO CURRENT_USER",
	};
	for (size_t d = 0; d < NDAEMONS; d++) {
		PGconn *c = as_daemon(DAEMONS[d]);
		for (size_t i = 0; i < sizeof(ddl) / sizeof(ddl[0]); i++)
			refused(c, DAEMONS[d], t.id, ddl[i]);
		PQfinish(c);
	}
	PQfinish(o);
}

/* Each role's privileges in the schema (tables, columns, functions, the
 * schema itself), read from the catalog: exactly what 0012 grants (and
 * 0015, for public playgrounds; 0018, the course labels; 0019, the kernels
 * warm ahead), no more. A grant added later shows here and must be added on purpose. */
static const char SQL_GRANTS[] =
	"SELECT coalesce(string_agg(x, ' ' ORDER BY x), '') FROM ("
	"SELECT c.relname || ':' || a.privilege_type AS x FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a "
	"WHERE c.relnamespace = current_schema()::regnamespace AND a.grantee = $1::regrole "
	"UNION ALL SELECT c.relname || '.' || t.attname || ':' || a.privilege_type FROM pg_class c "
	"JOIN pg_attribute t ON t.attrelid = c.oid CROSS JOIN LATERAL aclexplode(t.attacl) a "
	"WHERE c.relnamespace = current_schema()::regnamespace AND a.grantee = $1::regrole "
	"UNION ALL SELECT p.proname || '():' || a.privilege_type FROM pg_proc p CROSS JOIN LATERAL aclexplode(p.proacl) a "
	"WHERE p.pronamespace = current_schema()::regnamespace AND a.grantee = $1::regrole "
	"UNION ALL SELECT 'schema:' || a.privilege_type FROM pg_namespace n CROSS JOIN LATERAL aclexplode(n.nspacl) a "
	"WHERE n.oid = current_schema()::regnamespace AND a.grantee = $1::regrole) g";

static void catalog__each_role__granted_exactly_its_list(void **state)
{
	(void)state;
	static const struct {
		const char *role, *grants;
	} want[] = {
		{ "gavel_frontend",
		  "audit_log:SELECT gavel_audit_append():EXECUTE gavel_audit_append_many():EXECUTE "
		  "gavel_kernel_cancel_queued():EXECUTE gavel_key_lookup():EXECUTE gavel_playground_lookup():EXECUTE "
		  "gavel_token_lookup():EXECUTE "
		  "problem_versions.archive:INSERT problem_versions.archive_bytes:INSERT "
		  "problem_versions.archive_sha256:INSERT problem_versions.problem_id:INSERT "
		  "problem_versions.tenant_id:INSERT problem_versions.version:INSERT problem_versions:SELECT "
		  "problems.deleted_at:UPDATE problems.feedback:INSERT problems.feedback:UPDATE problems.id:INSERT "
		  "problems.latest_version:INSERT problems.latest_version:UPDATE problems.tenant_id:INSERT "
		  "problems.updated_at:UPDATE problems:SELECT schema:USAGE "
		  "submissions.api:INSERT submissions.assignment:INSERT submissions.id:INSERT submissions.kind:INSERT "
		  "submissions.language:INSERT "
		  "submissions.playground:INSERT submissions.problem_id:INSERT submissions.problem_version:INSERT submissions.request:INSERT "
		  "submissions.source:INSERT submissions.student:INSERT submissions.tenant_id:INSERT submissions:DELETE "
		  "submissions:SELECT "
		  "tenant_queue_counts:SELECT tenant_quotas.kernel_cpu_pct:SELECT tenant_quotas.kernel_idle_s:SELECT "
		  "tenant_quotas.kernel_lifetime_s:SELECT tenant_quotas.kernel_memory_mb:SELECT "
		  "tenant_quotas.kernels_per_minute:SELECT tenant_quotas.max_kernels:SELECT "
		  "tenant_quotas.tenant_id:SELECT usage_daily:SELECT" },
		{ "gavel_scheduler",
		  "gavel_audit_append():EXECUTE gavel_tenant_ids():EXECUTE gavel_unfinished_submissions():EXECUTE "
		  "schema:USAGE submissions.finished_at:UPDATE submissions.result:UPDATE submissions.status:UPDATE "
		  "submissions.verdict:UPDATE submissions:DELETE submissions:SELECT tenant_quotas:SELECT "
		  "tenants.disabled:SELECT tenants.id:SELECT webhook_outbox.submission_id:INSERT "
		  "webhook_outbox.tenant_id:INSERT" },
		{ "gavel_executor",
		  "gavel_audit_append():EXECUTE gavel_kernel_warm_asks():EXECUTE gavel_problem_import_claim():EXECUTE "
		  "gavel_webhook_outbox_due():EXECUTE gavel_webhook_secret():EXECUTE "
		  "problem_blobs.content:INSERT problem_blobs.sha256:INSERT problem_blobs.size:INSERT "
		  "problem_blobs.tenant_id:INSERT problem_blobs:SELECT "
		  "problem_files.path:INSERT problem_files.problem_id:INSERT problem_files.sha256:INSERT "
		  "problem_files.size:INSERT problem_files.tenant_id:INSERT problem_files.version:INSERT "
		  "problem_files:SELECT "
		  "problem_versions.archive:UPDATE problem_versions.claimed_until:UPDATE "
		  "problem_versions.custom_validation:UPDATE problem_versions.imported_at:UPDATE "
		  "problem_versions.interactive:UPDATE problem_versions.memory_mb:UPDATE "
		  "problem_versions.message:UPDATE problem_versions.name:UPDATE problem_versions.output_mb:UPDATE "
		  "problem_versions.status:UPDATE problem_versions.summary:UPDATE "
		  "problem_versions.time_limit_ms:UPDATE problem_versions.type:UPDATE problem_versions:SELECT "
		  "problems.current_version:UPDATE problems.updated_at:UPDATE problems:SELECT schema:USAGE "
		  "submissions.attempts:UPDATE submissions.finished_at:UPDATE submissions.node:UPDATE "
		  "submissions.result:UPDATE submissions.started_at:UPDATE submissions.status:UPDATE "
		  "submissions.verdict:UPDATE submissions:SELECT "
		  "tenant_quotas.egress_policy:SELECT tenant_quotas.tenant_id:SELECT "
		  "usage_daily.day:INSERT usage_daily.egress_bytes:INSERT usage_daily.egress_bytes:UPDATE "
		  "usage_daily.gpu_ms:INSERT usage_daily.gpu_ms:UPDATE usage_daily.kernel_ms:INSERT "
		  "usage_daily.kernel_ms:UPDATE usage_daily.kernel_peak_memory_kb:INSERT "
		  "usage_daily.kernel_peak_memory_kb:UPDATE usage_daily.sandbox_cpu_ms:INSERT "
		  "usage_daily.sandbox_cpu_ms:UPDATE usage_daily.submissions:INSERT usage_daily.submissions:UPDATE "
		  "usage_daily.tenant_id:INSERT usage_daily:SELECT "
		  "webhook_deliveries.attempt:INSERT webhook_deliveries.error:INSERT webhook_deliveries.outcome:INSERT "
		  "webhook_deliveries.status_code:INSERT webhook_deliveries.submission_id:INSERT "
		  "webhook_deliveries.tenant_id:INSERT "
		  "webhook_outbox.attempt:UPDATE webhook_outbox.due_at:UPDATE webhook_outbox.submission_id:INSERT "
		  "webhook_outbox.tenant_id:INSERT webhook_outbox:DELETE webhook_outbox:SELECT" },
		/* The role the daemons shared before 0012: nothing left. */
		{ "gavel_service", "" },
	};
	struct gv_err err;
	PGconn *o = owner();
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *p[] = { want[i].role };
		PGresult *res = gv_pg_query(o, SQL_GRANTS, 1, p, &err);
		if (!res)
			fail_msg("grants of %s: %s", want[i].role, err.msg);
		if (strcmp(PQgetvalue(res, 0, 0), want[i].grants) != 0) {
			fprintf(stderr, "# %s has: %s\n", want[i].role, PQgetvalue(res, 0, 0));
			PQclear(res);
			fail_msg("%s: grants differ from 0012's list (see the line above)", want[i].role);
		}
		PQclear(res);
		/* Nothing at the database level beyond connecting: no
		 * temporary objects, no schemas; no role attribute that would
		 * step around row-level security or the audit check. */
		assert_int_equal(q_ll(o,
				      "SELECT (has_database_privilege($1, current_database(), 'TEMP') "
				      "OR has_database_privilege($1, current_database(), 'CREATE') "
				      "OR r.rolsuper OR r.rolbypassrls OR r.rolcreaterole OR r.rolcreatedb "
				      "OR pg_has_role($1, 'gavel_owner', 'MEMBER'))::int FROM pg_roles r WHERE r.rolname = $1",
				      1, p),
			     0);
	}
	PQfinish(o);
}

/* `gavel audit verify --tenant NAME` as the operator runs it (the
 * harness's BUILD and GAVEL_DATABASE_URL); its output into out. */
static int cli_verify(const char *tenant, char *out, size_t outsz)
{
	char bin[4096];
	const char *build = getenv("BUILD");
	snprintf(bin, sizeof(bin), "%s/gavel", build && build[0] ? build : "build");
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		char *const argv[] = { bin, "audit", "verify", "--tenant", (char *)tenant, NULL };
		execv(bin, argv);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < outsz && (r = read(p[0], out + n, outsz - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(p[0]);
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The owner (the CLI's role) still writes operator records; daemon and
 * operator records make one chain that verifies. */
static void owner__operator_records__written_and_verified(void **state)
{
	(void)state;
	struct gv_err err;
	PGconn *o = owner();
	struct tenant_info t;
	new_tenant(o, "roles-verify", &t); /* seq 1, operator:test */
	must(tenant_tx_begin(o, NULL, &err), &err, "begin");
	must(tenant_audit_append(o, t.id, "operator:test", TENANT_AUDIT_TENANT_CHANGED, t.id, NULL, NULL,
				 "{\"disabled\": false}", &err),
	     &err, "owner operator record");
	must(tenant_tx_commit(o, &err), &err, "commit");
	/* Each daemon's own kind of record, in between. */
	static const char *const actors[] = { "key:00000000-0000-4000-8000-000000000000", "system:retention",
					      "system:executor@node-1" };
	for (size_t d = 0; d < NDAEMONS; d++) {
		PGconn *c = as_daemon(DAEMONS[d]);
		must(tenant_tx_begin(c, t.id, &err), &err, "begin");
		must(tenant_audit_append(c, t.id, actors[d], "test.roles", NULL, NULL, NULL, NULL, &err), &err,
		     DAEMONS[d]);
		must(tenant_tx_commit(c, &err), &err, "commit");
		PQfinish(c);
	}
	must(tenant_tx_begin(o, NULL, &err), &err, "begin");
	must(tenant_audit_append(o, t.id, "operator:test", TENANT_AUDIT_KEY_REVOKED, "k", NULL, NULL, NULL, &err),
	     &err, "owner operator record 2");
	must(tenant_tx_commit(o, &err), &err, "commit");
	struct tenant_audit_report rep;
	must(tenant_audit_verify(o, t.id, &rep, &err), &err, "verify");
	if (!rep.ok)
		fail_msg("broken at %lld: %s", (long long)rep.broken_seq, rep.reason);
	assert_int_equal(rep.records, 6);
	const char *pt[] = { t.id };
	assert_int_equal(q_ll(o, "SELECT count(*) FROM audit_log WHERE tenant_id = $1::uuid AND actor LIKE 'operator:%'",
			      1, pt),
			 3);
	char out[4096];
	int rc = cli_verify(t.name, out, sizeof(out));
	if (rc != 0 || !strstr(out, "intact"))
		fail_msg("gavel audit verify --tenant %s: exit %d: %s", t.name, rc, out);
	PQfinish(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(catalog__each_role__granted_exactly_its_list),
		cmocka_unit_test(audit__operator_actor__refused_for_every_daemon_role),
		cmocka_unit_test(tables__outside_each_daemons_needs__refused),
		cmocka_unit_test(ddl_and_role_changes__refused),
		cmocka_unit_test(owner__operator_records__written_and_verified),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
