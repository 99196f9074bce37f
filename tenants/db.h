/* Transactions scoped to one tenant. The daemons' roles (gavel_frontend,
 * gavel_scheduler, gavel_executor) are subject to row-level security on every tenant table (migration 0002):
 * policies compare tenant_id with current_setting('gavel.tenant_id'),
 * which a transaction sets with set_config(..., true) so that it ends with
 * the transaction and can never leak to the next user of a pooled
 * connection. A transaction that sets nothing sees no tenant rows at all.
 *
 * For an async caller (the frontend) the same two statements are:
 *   BEGIN; TENANT_SQL_SET_TENANT ($1 = tenant uuid text) */
#pragma once

#include <libpq-fe.h>
#include <stdint.h>

#include "common/err.h"

/* Sets the tenant for the rest of the current transaction. */
#define TENANT_SQL_SET_TENANT "SELECT set_config('gavel.tenant_id', $1::uuid::text, true)"

/* BEGIN, then TENANT_SQL_SET_TENANT with tenant_id (NULL: only BEGIN, for
 * owner-role work spanning tenants). On failure the connection is left
 * idle (rolled back). */
int tenant_tx_begin(PGconn *conn, const char *tenant_id, struct gv_err *err) GV_MUST_CHECK;
/* COMMIT. */
int tenant_tx_commit(PGconn *conn, struct gv_err *err) GV_MUST_CHECK;
/* ROLLBACK if a transaction is open (also an aborted one); never fails
 * loudly: for error paths. */
void tenant_tx_rollback(PGconn *conn);

/* One statement in its own transaction for tenant_id: BEGIN,
 * TENANT_SQL_SET_TENANT, sql and COMMIT go as one pipeline, one round trip
 * to the server where tenant_tx_begin, a query and tenant_tx_commit take
 * four (each a wait for a CPU on a busy host). Returns sql's result,
 * committed (caller PQclear()s it), or NULL with err filled and the
 * connection idle, nothing committed. */
PGresult *tenant_tx_query(PGconn *conn, const char *tenant_id, const char *sql, int nparams,
			  const char *const *params, struct gv_err *err) GV_MUST_CHECK;

/* True when s is a canonical-looking uuid text (36 chars, hex and dashes
 * at 8-4-4-4-12). Pure. */
/* A timestamptz column as ISO 8601 UTC text to the second, in SQL. */
#define TENANT_SQL_TS_UTC(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

int tenant_uuid_valid(const char *s);

/* Parses s, the whole of it, as a decimal int64 (the text form PostgreSQL
 * gives a bigint, or a stored setting); -1 when empty, out of range or not
 * a number. Pure. */
int tenant_parse_i64(const char *s, int64_t *out);
