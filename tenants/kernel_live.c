/* A tenant's kernels of the moment (tenants/kernel_live.h). */
#include "tenants/kernel_live.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/pg.h"
#include "tenants/db.h"

static json_t *kernel_row(PGresult *res, int i)
{
	const char *started = PQgetvalue(res, i, 6);
	const char *node = PQgetvalue(res, i, 4);
	return json_pack("{s:s,s:s,s:i,s:i,s:s?,s:s,s:s?}", "id", PQgetvalue(res, i, 0), "status", PQgetvalue(res, i, 1),
			 "memory_mb", atoi(PQgetvalue(res, i, 2)), "cpu_pct", atoi(PQgetvalue(res, i, 3)), "node",
			 *node ? node : NULL, "created", PQgetvalue(res, i, 5), "started", *started ? started : NULL);
}

json_t *tenant_kernels_live(PGconn *conn, const char *tenant_id, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id)) {
		gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
		return NULL;
	}
	const char *p[] = { tenant_id };
	PGresult *tot = tenant_tx_query(
		conn, tenant_id,
		"SELECT count(*) FILTER (WHERE s.status = 'running'), count(*) FILTER (WHERE s.status = 'queued'), "
		"COALESCE(sum((s.request->'kernel'->>'memory_mb')::bigint) FILTER (WHERE s.status = 'running'), 0), "
		"(SELECT q.max_kernels FROM tenant_quotas q WHERE q.tenant_id = $1::uuid) "
		"FROM submissions s WHERE s.tenant_id = $1::uuid AND s.kind = 'kernel' AND s.status <> 'done'",
		1, p, err);
	if (!tot)
		return NULL;
	PGresult *res = tenant_tx_query(
		conn, tenant_id,
		"SELECT id, status, COALESCE(request->'kernel'->>'memory_mb', '0'), "
		"COALESCE(request->'kernel'->>'cpu_pct', '0'), COALESCE(node, ''), " TENANT_SQL_TS_UTC("created_at") ", "
		"COALESCE(" TENANT_SQL_TS_UTC("started_at") ", '') "
		"FROM submissions WHERE tenant_id = $1::uuid AND kind = 'kernel' AND status <> 'done' "
		"ORDER BY created_at, id LIMIT 1000",
		1, p, err);
	if (!res) {
		PQclear(tot);
		return NULL;
	}
	json_t *list = json_array();
	for (int i = 0; list && i < PQntuples(res); i++) {
		json_t *k = kernel_row(res, i);
		if (!k || json_array_append_new(list, k) != 0) {
			json_decref(list);
			list = NULL;
		}
	}
	json_t *o = NULL;
	if (list && PQntuples(tot) == 1)
		o = json_pack("{s:I,s:I,s:I,s:I,s:o}", "running", (json_int_t)strtoll(PQgetvalue(tot, 0, 0), NULL, 10),
			      "queued", (json_int_t)strtoll(PQgetvalue(tot, 0, 1), NULL, 10), "memory_mb_running",
			      (json_int_t)strtoll(PQgetvalue(tot, 0, 2), NULL, 10), "max_kernels",
			      (json_int_t)strtoll(PQgetvalue(tot, 0, 3), NULL, 10), "kernels", list);
	else
		json_decref(list);
	PQclear(tot);
	PQclear(res);
	if (!o)
		gv_err_set(err, ENOMEM, "out of memory");
	return o;
}
