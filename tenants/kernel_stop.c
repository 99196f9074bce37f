/* Stopping a tenant's kernels (kernel_stop.h). */
#include "tenants/kernel_stop.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pg.h"
#include "tenants/audit.h"
#include "tenants/db.h"

static const char SQL_FINISH_QUEUED[] =
	"UPDATE submissions SET status = 'done', finished_at = now(), "
	"result = jsonb_build_object('kernel', jsonb_build_object('reason', '" TENANT_KERNEL_STOP_REASON "', "
	"'kernel_ms', 0, 'peak_memory_kb', 0, 'restarts', 0, 'message', 'the tenant was disabled while the kernel "
	"was queued')) "
	"WHERE tenant_id = $1::uuid AND kind = 'kernel' AND status = 'queued' RETURNING id";
static const char SQL_RUNNING[] =
	"SELECT id FROM submissions WHERE tenant_id = $1::uuid AND kind = 'kernel' AND status = 'running'";

static int ids_of(PGresult *res, struct tenant_kernel_ids *out, struct gv_err *err)
{
	int n = PQntuples(res);
	out->ids = calloc(n ? (size_t)n : 1, sizeof(*out->ids));
	if (!out->ids)
		return gv_err_set(err, ENOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		snprintf(out->ids[i], sizeof(out->ids[i]), "%s", PQgetvalue(res, i, 0));
	out->n = (size_t)n;
	return 0;
}

int tenant_kernels_stop(PGconn *conn, const char *tenant_id, const char *actor, struct tenant_kernel_ids *queued,
			struct tenant_kernel_ids *running, struct gv_err *err)
{
	memset(queued, 0, sizeof(*queued));
	memset(running, 0, sizeof(*running));
	if (tenant_tx_begin(conn, tenant_id, err) != 0)
		return -1;
	const char *p[] = { tenant_id };
	PGresult *res = gv_pg_query(conn, SQL_FINISH_QUEUED, 1, p, err);
	if (!res || ids_of(res, queued, err) != 0)
		goto fail;
	PQclear(res);
	res = gv_pg_query(conn, SQL_RUNNING, 1, p, err);
	if (!res || ids_of(res, running, err) != 0)
		goto fail;
	PQclear(res);
	res = NULL;
	for (size_t i = 0; i < queued->n; i++)
		if (tenant_audit_append(conn, tenant_id, actor, TENANT_AUDIT_KERNEL_STOPPED, queued->ids[i], NULL, NULL,
					"{\"reason\": \"" TENANT_KERNEL_STOP_REASON "\", \"queued\": true}", err) != 0)
			goto fail;
	if (tenant_tx_commit(conn, err) != 0)
		goto fail;
	return 0;
fail:
	PQclear(res);
	tenant_tx_rollback(conn);
	gv_err_prefix(err, "stopping the tenant's kernels");
	return -1;
}

void tenant_kernel_ids_free(struct tenant_kernel_ids *k)
{
	if (!k)
		return;
	free(k->ids);
	k->ids = NULL;
	k->n = 0;
}
