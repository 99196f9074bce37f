/* Usage accounting per tenant and UTC day; see usage.h. */
#include "tenants/usage.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pg.h"
#include "tenants/db.h"

int tenant_usage_add(PGconn *conn, const char *tenant_id, const struct tenant_usage_delta *d, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "usage: tenant id is not a uuid");
	if (d->submissions < 0 || d->sandbox_cpu_ms < 0 || d->gpu_ms < 0 || d->egress_bytes < 0)
		return gv_err_set(err, GV_EINVAL, "usage: negative figures");
	char v[4][24];
	snprintf(v[0], sizeof(v[0]), "%" PRId64, d->submissions);
	snprintf(v[1], sizeof(v[1]), "%" PRId64, d->sandbox_cpu_ms);
	snprintf(v[2], sizeof(v[2]), "%" PRId64, d->gpu_ms);
	snprintf(v[3], sizeof(v[3]), "%" PRId64, d->egress_bytes);
	const char *p[] = { tenant_id, v[0], v[1], v[2], v[3] };
	if (gv_pg_exec(conn, TENANT_SQL_USAGE_ADD, 5, p, err) != 0) {
		gv_err_prefix(err, "usage add");
		return -1;
	}
	return 0;
}

int tenant_usage_add_kernel(PGconn *conn, const char *tenant_id, uint64_t kernel_ms, uint64_t cpu_ms,
			    uint64_t peak_memory_kb, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "usage: tenant id is not a uuid");
	if (kernel_ms > INT64_MAX || cpu_ms > INT64_MAX || peak_memory_kb > INT64_MAX)
		return gv_err_set(err, GV_EINVAL, "usage: figures out of range");
	char v[3][24];
	snprintf(v[0], sizeof(v[0]), "%" PRIu64, kernel_ms);
	snprintf(v[1], sizeof(v[1]), "%" PRIu64, cpu_ms);
	snprintf(v[2], sizeof(v[2]), "%" PRIu64, peak_memory_kb);
	const char *p[] = { tenant_id, v[0], v[1], v[2] };
	if (gv_pg_exec(conn,
		       "INSERT INTO usage_daily AS u (tenant_id, day, kernel_ms, sandbox_cpu_ms, kernel_peak_memory_kb) "
		       "VALUES ($1::uuid, (now() AT TIME ZONE 'UTC')::date, $2::bigint, $3::bigint, $4::bigint) "
		       "ON CONFLICT (tenant_id, day) DO UPDATE SET kernel_ms = u.kernel_ms + EXCLUDED.kernel_ms, "
		       "sandbox_cpu_ms = u.sandbox_cpu_ms + EXCLUDED.sandbox_cpu_ms, "
		       "kernel_peak_memory_kb = GREATEST(u.kernel_peak_memory_kb, EXCLUDED.kernel_peak_memory_kb)",
		       4, p, err) != 0) {
		gv_err_prefix(err, "kernel usage add");
		return -1;
	}
	return 0;
}

json_t *tenant_usage_report(PGconn *conn, const char *tenant_id, const char *since, struct gv_err *err)
{
	if (tenant_id && !tenant_uuid_valid(tenant_id)) {
		gv_err_set(err, GV_EINVAL, "usage: tenant id is not a uuid");
		return NULL;
	}
	const char *p[] = { tenant_id, since };
	PGresult *res = gv_pg_query(conn,
				    "SELECT t.name, to_char(u.day, 'YYYY-MM-DD'), u.submissions, u.sandbox_cpu_ms, "
				    "u.gpu_ms, u.egress_bytes, u.kernel_ms, u.kernel_peak_memory_kb "
				    "FROM usage_daily u JOIN tenants t ON t.id = u.tenant_id "
				    "WHERE ($1::uuid IS NULL OR u.tenant_id = $1::uuid) "
				    "AND ($2::date IS NULL OR u.day >= $2::date) ORDER BY t.name, u.day",
				    2, p, err);
	if (!res) {
		gv_err_prefix(err, "usage report");
		return NULL;
	}
	json_t *arr = json_array();
	for (int i = 0; arr && i < PQntuples(res); i++) {
		json_t *o = json_pack("{s:s, s:s, s:I, s:f, s:f, s:I, s:f, s:I}", "tenant", PQgetvalue(res, i, 0), "day",
				      PQgetvalue(res, i, 1), "submissions",
				      (json_int_t)strtoll(PQgetvalue(res, i, 2), NULL, 10), "sandbox_cpu_seconds",
				      strtoll(PQgetvalue(res, i, 3), NULL, 10) / 1000.0, "gpu_seconds",
				      strtoll(PQgetvalue(res, i, 4), NULL, 10) / 1000.0, "egress_bytes",
				      (json_int_t)strtoll(PQgetvalue(res, i, 5), NULL, 10), "kernel_seconds",
				      strtoll(PQgetvalue(res, i, 6), NULL, 10) / 1000.0, "kernel_peak_memory_kb",
				      (json_int_t)strtoll(PQgetvalue(res, i, 7), NULL, 10));
		if (!o || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	PQclear(res);
	if (!arr)
		gv_err_set(err, ENOMEM, "usage report: out of memory");
	return arr;
}
