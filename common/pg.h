/* PostgreSQL connection helpers on libpq, blocking flavour (the CLI, the
 * executor's result writer, migrations). The ownership rules of libpq are
 * coded here once: every PGresult is cleared and PQgetResult is drained to
 * NULL on every path, so a connection is never left busy. SQL is always
 * parameterised; gv_pg_exec_script is the one exception, for trusted
 * multi-statement files (migrations).
 *
 * Errors are GV_EDB with PostgreSQL's message and, for server errors,
 * "(SQLSTATE xxxxx)" at the end. Messages never contain a password. */
#pragma once

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

/* What every connection of Gavel asks of its server unless the URL says
 * otherwise: libpq tries a multi-host URL's hosts in turn
 * (postgresql://u:p@db1:5432,db2:5432/gavel) and keeps the first that
 * accepts writes, so after a standby's promotion a reconnect finds the new
 * primary, and a demoted or still-standby server is never written to. */
#define GV_PG_SESSION_ATTRS "read-write"

/* Opens one connection, one attempt. url is a postgresql:// URL or a
 * key=value conninfo string; parameters it names win over the defaults
 * given here (connect_timeout_s, application_name "gavel", UTF8,
 * target_session_attrs GV_PG_SESSION_ATTRS).
 * statement_timeout_ms > 0 sets the session's statement_timeout.
 * Returns a connection the caller closes with PQfinish, or NULL with err
 * filled. */
PGconn *gv_pg_connect(const char *url, int connect_timeout_s, int statement_timeout_ms,
		      struct gv_err *err) GV_MUST_CHECK;

/* Sets statement_timeout for the session (0 = none). */
int gv_pg_set_statement_timeout(PGconn *conn, int ms, struct gv_err *err) GV_MUST_CHECK;

/* Runs one parameterised statement (text parameters, NULL pointer = SQL
 * NULL) and discards its result. 0 on COMMAND_OK or TUPLES_OK. */
int gv_pg_exec(PGconn *conn, const char *sql, int nparams, const char *const *params,
	       struct gv_err *err) GV_MUST_CHECK;

/* Like gv_pg_exec but returns the result (TUPLES_OK or COMMAND_OK), owned
 * by the caller, who PQclear()s it. NULL with err filled on failure. */
PGresult *gv_pg_query(PGconn *conn, const char *sql, int nparams, const char *const *params,
		      struct gv_err *err) GV_MUST_CHECK;

/* One statement of a pipeline: text parameters as in gv_pg_query. */
struct gv_pg_stmt {
	const char *sql;
	int nparams;
	const char *const *params;
};

/* Sends n statements as one libpq pipeline (one network round trip for all
 * of them, where gv_pg_query makes one each) and reads every result.
 * Returns the result of stmts[keep] (caller owns it) when every statement
 * succeeded; NULL with err naming the first failure otherwise (the server
 * skips the statements after it). The connection is out of pipeline mode
 * and idle on return; a transaction that the statements opened and a
 * failure aborted stays open for the caller to roll back. */
PGresult *gv_pg_pipeline(PGconn *conn, const struct gv_pg_stmt *stmts, size_t n, size_t keep,
			 struct gv_err *err) GV_MUST_CHECK;

/* Runs a trusted script of several statements (simple query protocol, no
 * parameters), stopping at the first error. COPY is refused. On a server
 * error, *err_position (when not NULL) receives PostgreSQL's 1-based
 * character position of the error in sql, or 0 when it gave none. */
int gv_pg_exec_script(PGconn *conn, const char *sql, int *err_position,
		      struct gv_err *err) GV_MUST_CHECK;

/* True when the connection is usable as far as libpq knows (a server that
 * went away is noticed by the next query, which fails). */
bool gv_pg_conn_ok(const PGconn *conn);

/* Copies url into out with any password replaced by "***", for logs. */
void gv_pg_url_redact(const char *url, char *out, size_t outsz);

/* A connection that reconnects: gv_pg_ensure() reopens it, with bounded
 * exponential backoff, when the last query found it broken. */
struct gv_pg_opts {
	const char *url;           /* copied by gv_pg_new */
	int connect_timeout_s;     /* per attempt; 0 = 5 */
	int statement_timeout_ms;  /* 0 = none */
	int max_attempts;          /* per gv_pg_new / gv_pg_ensure; 0 = 5 */
	long backoff_initial_ms;   /* 0 = 100 */
	long backoff_max_ms;       /* 0 = 5000 */
	bool lazy;                 /* connect at the first gv_pg_ensure, not in gv_pg_new */
	/* A bound on the connections of several handles (a node's worker
	 * processes): gate_take before a connection is made (false: none to
	 * be had now, the connect fails), gate_give once it is closed. */
	bool (*gate_take)(void *arg);
	void (*gate_give)(void *arg);
	void *gate_arg;
};

struct gv_pg;

/* Connects (with retries as in gv_pg_ensure; opts->lazy: not yet).
 * Returns a handle the caller frees with gv_pg_free, or NULL with err
 * filled. */
struct gv_pg *gv_pg_new(const struct gv_pg_opts *opts, struct gv_err *err) GV_MUST_CHECK;
/* Closes the connection; NULL-safe. */
void gv_pg_free(struct gv_pg *pg);
/* 0 when the connection is usable, reconnecting first if it is broken;
 * -1 when every attempt failed (the handle stays valid; try again later). */
int gv_pg_ensure(struct gv_pg *pg, struct gv_err *err) GV_MUST_CHECK;
/* Closes the connection but keeps the handle: the next gv_pg_ensure
 * connects again. For a process that waits long between queries (a kernel
 * node's worker), so that its idle time holds no server connection. */
void gv_pg_release(struct gv_pg *pg);
/* The current connection, borrowed: valid until the next gv_pg_ensure or
 * gv_pg_free. NULL after a failed reconnect. */
PGconn *gv_pg_conn(struct gv_pg *pg);
/* How many times the handle has reconnected since gv_pg_new. */
unsigned gv_pg_reconnects(const struct gv_pg *pg);
/* Whether the server is away: the last reconnect failed, or the last
 * query found the connection broken. What failed then is worth trying
 * again once a failover is over; any other failure is not. */
bool gv_pg_away(struct gv_pg *pg);
