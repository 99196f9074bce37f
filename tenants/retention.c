/* Retention: batched deletes of finished submissions past the tenant's
 * retention period, each batch in its own short transaction with its audit
 * record; see retention.h. */
#include "tenants/retention.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pg.h"
#include "tenants/audit.h"
#include "tenants/db.h"

static int purge_tenant(PGconn *conn, const char *tenant_id, const char *actor, int64_t *deleted,
			struct gv_err *err)
{
	char batch[16];
	snprintf(batch, sizeof(batch), "%d", TENANT_RETENTION_BATCH);
	for (;;) {
		/* Scoped to the tenant: as gavel_scheduler (the scheduler's
		 * periodic job) row-level security then allows exactly this
		 * tenant's rows; the owner is not bound by it anyway. */
		if (tenant_tx_begin(conn, tenant_id, err) != 0)
			return -1;
		const char *p[] = { tenant_id, batch };
		PGresult *res = gv_pg_query(
			conn,
			"WITH q AS (SELECT retention_days FROM tenant_quotas WHERE tenant_id = $1::uuid), "
			"victims AS (SELECT s.id FROM submissions s, q WHERE s.tenant_id = $1::uuid "
			"AND s.status IN ('done', 'failed', 'cancelled') "
			"AND s.created_at < now() - make_interval(days => q.retention_days) "
			"ORDER BY s.created_at LIMIT $2::int FOR UPDATE OF s SKIP LOCKED), "
			"gone AS (DELETE FROM submissions s USING victims v WHERE s.id = v.id RETURNING 1) "
			"SELECT count(*), (SELECT retention_days FROM q) FROM gone",
			2, p, err);
		if (!res) {
			tenant_tx_rollback(conn);
			gv_err_prefix(err, "retention delete");
			return -1;
		}
		int64_t n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		char details[128];
		snprintf(details, sizeof(details), "{\"deleted\": %" PRId64 ", \"retention_days\": %s}", n,
			 PQgetisnull(res, 0, 1) ? "null" : PQgetvalue(res, 0, 1));
		PQclear(res);
		if (n == 0) {
			tenant_tx_rollback(conn);
			return 0;
		}
		if (tenant_audit_append(conn, tenant_id, actor, TENANT_AUDIT_RETENTION_PURGED, "submissions", NULL,
					NULL, details, err) != 0 ||
		    tenant_tx_commit(conn, err) != 0) {
			tenant_tx_rollback(conn);
			return -1;
		}
		*deleted += n;
		if (n < TENANT_RETENTION_BATCH)
			return 0;
	}
}

int tenant_retention_run(PGconn *conn, const char *tenant_id, const char *actor,
			 struct tenant_retention_report *rep, struct gv_err *err)
{
	memset(rep, 0, sizeof(*rep));
	if (tenant_id && !tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "retention: tenant id is not a uuid");
	const char *p[] = { tenant_id };
	PGresult *res = gv_pg_query(conn, "SELECT t FROM gavel_tenant_ids() t WHERE $1::uuid IS NULL OR t = $1::uuid",
				    1, p, err);
	if (!res) {
		gv_err_prefix(err, "retention");
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < PQntuples(res) && rc == 0; i++) {
		rc = purge_tenant(conn, PQgetvalue(res, i, 0), actor, &rep->deleted, err);
		if (rc != 0)
			gv_err_prefix(err, "tenant %s", PQgetvalue(res, i, 0));
		else
			rep->tenants++;
	}
	PQclear(res);
	return rc;
}
