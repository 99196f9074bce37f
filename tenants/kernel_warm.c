/* Kernels warm ahead for a course (tenants/kernel_warm.h). */
#include "tenants/kernel_warm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pg.h"
#include "tenants/audit.h"
#include "tenants/db.h"
#include "tenants/key.h"

#define PENDING_STR_(x) #x
#define PENDING_STR(x) PENDING_STR_(x)

/* $1 tenant, $2 kernels, $3 from, $4 until. Inserts only within the
 * tenant's max_kernels and pending-request budget, and a window that ends
 * in the future; the row's CHECK bounds the window's length. One row back:
 * the new id (NULL when refused) and why it was refused. */
static const char SQL_ADD[] =
	"WITH q AS (SELECT max_kernels FROM tenant_quotas WHERE tenant_id = $1::uuid), "
	"p AS (SELECT count(*) AS n FROM kernel_warm_requests WHERE tenant_id = $1::uuid AND ends_at > now()), "
	"w AS (SELECT $3::timestamptz AS f, $4::timestamptz AS u), "
	"ins AS (INSERT INTO kernel_warm_requests (tenant_id, kernels, starts_at, ends_at) "
	"  SELECT $1::uuid, $2::integer, w.f, w.u FROM w, q, p "
	"  WHERE $2::integer <= q.max_kernels AND p.n < " PENDING_STR(TENANT_KERNEL_WARM_PENDING_MAX) " AND w.u > now() "
	"  AND w.u > w.f AND w.u - w.f <= interval '12 hours' "
	"  RETURNING id, " TENANT_SQL_TS_UTC("starts_at") " AS f, " TENANT_SQL_TS_UTC("ends_at") " AS u) "
	"SELECT ins.id, ins.f, ins.u, CASE "
	"  WHEN q.max_kernels IS NULL THEN 'the tenant has no quota row' "
	"  WHEN $2::integer > q.max_kernels THEN 'more kernels than its max_kernels (' || q.max_kernels || ')' "
	"  WHEN p.n >= " PENDING_STR(TENANT_KERNEL_WARM_PENDING_MAX) " THEN 'it has " PENDING_STR(TENANT_KERNEL_WARM_PENDING_MAX) " requests not yet ended' "
	"  WHEN w.u <= now() THEN 'the window has ended already' "
	"  WHEN w.u <= w.f THEN 'until is not after from' "
	"  WHEN w.u - w.f > interval '12 hours' THEN 'the window is longer than 12 hours' END "
	"FROM w CROSS JOIN p LEFT JOIN q ON true LEFT JOIN ins ON true";

int tenant_kernel_warm_add(PGconn *conn, const char *tenant_id, long kernels, const char *from, const char *until,
			   const char *actor, long long *id, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	if (kernels < 1 || kernels > TENANT_KERNEL_WARM_MAX_KERNELS)
		return gv_err_set(err, GV_EINVAL, "kernels: 1..%d", TENANT_KERNEL_WARM_MAX_KERNELS);
	if (tenant_tx_begin(conn, NULL, err) != 0)
		return -1;
	char n[24];
	snprintf(n, sizeof(n), "%ld", kernels);
	const char *p[] = { tenant_id, n, from, until };
	PGresult *res = gv_pg_query(conn, SQL_ADD, 4, p, err);
	if (!res)
		goto fail;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0)) {
		gv_err_set(err, GV_ELIMIT, "refused: %s",
			   PQntuples(res) == 1 && !PQgetisnull(res, 0, 3) ? PQgetvalue(res, 0, 3) : "no such tenant");
		PQclear(res);
		goto fail;
	}
	*id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	json_t *d = json_pack("{s:I,s:i,s:s,s:s}", "id", (json_int_t)*id, "kernels", (int)kernels, "from",
			      PQgetvalue(res, 0, 1), "until", PQgetvalue(res, 0, 2));
	PQclear(res);
	char *details = d ? json_dumps(d, JSON_COMPACT) : NULL;
	json_decref(d);
	int rc = details ? tenant_audit_append(conn, tenant_id, actor, TENANT_AUDIT_KERNEL_WARM_REQUESTED, tenant_id,
					       NULL, NULL, details, err)
			 : gv_err_set(err, ENOMEM, "out of memory");
	free(details);
	if (rc != 0 || tenant_tx_commit(conn, err) != 0)
		goto fail;
	return 0;
fail:
	tenant_tx_rollback(conn);
	gv_err_prefix(err, "kernels warm");
	return -1;
}

int tenant_kernel_warm_cancel(PGconn *conn, const char *tenant_id, long long id, const char *actor,
			      struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	if (tenant_tx_begin(conn, NULL, err) != 0)
		return -1;
	char ids[24], details[64];
	snprintf(ids, sizeof(ids), "%lld", id);
	const char *p[] = { tenant_id, ids };
	/* Ended now rather than deleted: the request stays on record. A window
	 * not yet begun is moved to just before now, so that it counts as
	 * neither pending nor active. */
	PGresult *res = gv_pg_query(conn,
				    "UPDATE kernel_warm_requests SET ends_at = now(), "
				    "starts_at = least(starts_at, now() - interval '1 microsecond') "
				    "WHERE tenant_id = $1::uuid AND id = $2::bigint AND ends_at > now() RETURNING id",
				    2, p, err);
	if (!res)
		goto fail;
	int n = PQntuples(res);
	PQclear(res);
	if (n != 1) {
		gv_err_set(err, GV_ENOTFOUND, "no request %lld of this tenant still to end", id);
		goto fail;
	}
	snprintf(details, sizeof(details), "{\"id\": %lld}", id);
	if (tenant_audit_append(conn, tenant_id, actor, TENANT_AUDIT_KERNEL_WARM_CANCELLED, tenant_id, NULL, NULL,
				details, err) != 0 ||
	    tenant_tx_commit(conn, err) != 0)
		goto fail;
	return 0;
fail:
	tenant_tx_rollback(conn);
	gv_err_prefix(err, "kernels warm cancel");
	return -1;
}

json_t *tenant_kernel_warm_list(PGconn *conn, const char *tenant_id, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id)) {
		gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
		return NULL;
	}
	const char *p[] = { tenant_id };
	PGresult *res = gv_pg_query(conn,
				    "SELECT id, kernels, " TENANT_SQL_TS_UTC("starts_at") ", " TENANT_SQL_TS_UTC("ends_at") " "
				    "FROM kernel_warm_requests WHERE tenant_id = $1::uuid AND ends_at > now() "
				    "ORDER BY starts_at, id",
				    1, p, err);
	if (!res)
		return NULL;
	json_t *a = json_array();
	for (int i = 0; a && i < PQntuples(res); i++) {
		json_t *o = json_pack("{s:I,s:i,s:s,s:s}", "id", (json_int_t)strtoll(PQgetvalue(res, i, 0), NULL, 10),
				      "kernels", atoi(PQgetvalue(res, i, 1)), "from", PQgetvalue(res, i, 2), "until",
				      PQgetvalue(res, i, 3));
		if (!o || json_array_append_new(a, o) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	PQclear(res);
	if (!a)
		gv_err_set(err, ENOMEM, "out of memory");
	return a;
}

int tenant_kernel_warm_asks(PGconn *conn, struct tenant_kernel_warm_ask *out, size_t max, struct gv_err *err)
{
	PGresult *res = gv_pg_query(conn,
				    "SELECT tenant_id, kernels, memory_mb, cpu_pct, lifetime_s, idle_s "
				    "FROM gavel_kernel_warm_asks()",
				    0, NULL, err);
	if (!res)
		return -1;
	size_t n = 0;
	for (int i = 0; i < PQntuples(res) && n < max; i++) {
		struct tenant_kernel_warm_ask *a = &out[n];
		memset(a, 0, sizeof(*a));
		snprintf(a->tenant, sizeof(a->tenant), "%s", PQgetvalue(res, i, 0));
		a->kernels = (uint32_t)strtoul(PQgetvalue(res, i, 1), NULL, 10);
		a->memory_mb = (uint32_t)strtoul(PQgetvalue(res, i, 2), NULL, 10);
		a->cpu_pct = (uint32_t)strtoul(PQgetvalue(res, i, 3), NULL, 10);
		a->lifetime_s = (uint32_t)strtoul(PQgetvalue(res, i, 4), NULL, 10);
		a->idle_s = (uint32_t)strtoul(PQgetvalue(res, i, 5), NULL, 10);
		if (tenant_uuid_valid(a->tenant) && a->kernels > 0)
			n++;
	}
	PQclear(res);
	return (int)n;
}
