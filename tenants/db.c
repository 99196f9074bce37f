/* Tenant-scoped transactions for the daemons' roles; see db.h. */
#include "tenants/db.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/pg.h"

int tenant_uuid_valid(const char *s)
{
	if (!s || strlen(s) != 36)
		return 0;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!isxdigit((unsigned char)s[i])) {
			return 0;
		}
	}
	return 1;
}

int tenant_tx_begin(PGconn *conn, const char *tenant_id, struct gv_err *err)
{
	if (tenant_id && !tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	if (gv_pg_exec(conn, "BEGIN", 0, NULL, err) != 0)
		return -1;
	if (tenant_id && gv_pg_exec(conn, TENANT_SQL_SET_TENANT, 1, &tenant_id, err) != 0) {
		tenant_tx_rollback(conn);
		gv_err_prefix(err, "set tenant");
		return -1;
	}
	return 0;
}

PGresult *tenant_tx_query(PGconn *conn, const char *tenant_id, const char *sql, int nparams,
			  const char *const *params, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id)) {
		gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
		return NULL;
	}
	const struct gv_pg_stmt stmts[] = {
		{ "BEGIN", 0, NULL },
		{ TENANT_SQL_SET_TENANT, 1, &tenant_id },
		{ sql, nparams, params },
		{ "COMMIT", 0, NULL },
	};
	PGresult *res = gv_pg_pipeline(conn, stmts, sizeof(stmts) / sizeof(stmts[0]), 2, err);
	if (!res)
		tenant_tx_rollback(conn);
	return res;
}

int tenant_tx_commit(PGconn *conn, struct gv_err *err)
{
	PGresult *res = gv_pg_query(conn, "COMMIT", 0, NULL, err);
	if (!res) {
		tenant_tx_rollback(conn);
		gv_err_prefix(err, "commit");
		return -1;
	}
	/* COMMIT of an aborted transaction "succeeds" with the tag ROLLBACK. */
	int rolled_back = strcmp(PQcmdStatus(res), "ROLLBACK") == 0;
	PQclear(res);
	if (rolled_back)
		return gv_err_set(err, GV_EDB, "commit: the transaction had failed and was rolled back");
	return 0;
}

void tenant_tx_rollback(PGconn *conn)
{
	if (!conn || PQtransactionStatus(conn) == PQTRANS_IDLE)
		return;
	struct gv_err ignored;
	if (gv_pg_exec(conn, "ROLLBACK", 0, NULL, &ignored) != 0) {
		/* Nothing more to do: the next query reports the broken connection. */
	}
}

int tenant_parse_i64(const char *s, int64_t *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}
