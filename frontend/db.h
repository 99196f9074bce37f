/* Asynchronous PostgreSQL for the event loop: one connection per worker
 * thread in libpq pipeline mode, driven by libevent events on its socket, so
 * the loop never blocks. A "transaction" is up to FE_DB_STMTS_MAX
 * parameterised statements sent back to back and closed with one Sync: the
 * extended protocol runs everything before a Sync in one implicit
 * transaction, so `SELECT set_config('gavel.tenant_id', $1, true)` sent first
 * scopes row-level security to that tenant for exactly those statements,
 * and an error rolls all of them back. Many transactions may be in flight
 * on one connection; results come back in order.
 *
 * Every statement is prepared on the server once per connection (the
 * first use sends PQsendPrepare ahead of it in the pipeline), so the SQL
 * text must be a string that lives as long as the handle (static text).
 *
 * Ownership: parameters are copied by libpq during fe_db_txn; the PGresults
 * handed to the callback are borrowed and cleared after it returns. */
#pragma once

#include <event2/event.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

#define FE_DB_STMTS_MAX 1024
#define FE_DB_PARAMS_MAX 16
#define FE_DB_INFLIGHT_MAX 512

struct fe_db;

struct fe_db_stmt {
	const char *sql;
	int nparams;
	const char *values[FE_DB_PARAMS_MAX]; /* NULL = SQL NULL */
	int lengths[FE_DB_PARAMS_MAX];        /* for binary parameters */
	int formats[FE_DB_PARAMS_MAX];        /* 0 text, 1 binary */
	/* When not NULL: set_config('gavel.tenant_id', set_tenant, true) is
	 * sent (hidden) just before this statement, so that one transaction
	 * can hold statements scoped to different tenants (group commit). */
	const char *set_tenant;
};

/* Called once per transaction. results[i] is statement i's result (after
 * the set_config one, which is hidden) or NULL when it did not run; error
 * is NULL on success or the first failure ("database unavailable", the
 * server's message). Both borrowed for the duration of the call. */
typedef void (*fe_db_cb)(void *arg, PGresult *const *results, int n, const char *error);

/* Creates the handle and starts connecting (asynchronously; retries with
 * backoff). url is copied. */
struct fe_db *fe_db_new(struct event_base *base, const char *url, int connect_timeout_s,
			int statement_timeout_ms, struct gv_err *err) GV_MUST_CHECK;
/* Fails every pending transaction ("shutting down") and closes; NULL-safe. */
void fe_db_free(struct fe_db *db);

/* Sends stmts[0..n) as one transaction, preceded by set_config of the
 * tenant when tenant_id is not NULL. Returns 0 when sent (cb will be called
 * later, exactly once), -1 with err when the connection is not up or too
 * many transactions are in flight (cb is then never called). */
int fe_db_txn(struct fe_db *db, const char *tenant_id, const struct fe_db_stmt *stmts, int n,
	      fe_db_cb cb, void *arg, struct gv_err *err) GV_MUST_CHECK;

bool fe_db_ready(const struct fe_db *db);
/* Transactions sent and not yet answered. */
size_t fe_db_inflight(const struct fe_db *db);

/* Fills a statement: fe_db_stmt_text(&s, sql, n, v0, v1, ...) with text
 * parameters (NULL for SQL NULL). */
void fe_db_stmt_text(struct fe_db_stmt *s, const char *sql, int nparams, ...);
