/* PostgreSQL connection helpers; see pg.h. Every function here that sends
 * a query reads results until PQgetResult returns NULL and clears each one,
 * whatever happened, so the connection is idle again when it returns. */
#include "common/pg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/log.h"

struct gv_pg {
	PGconn *conn;
	char *url;
	struct gv_pg_opts opts;
	unsigned reconnects;
	unsigned seed;
	bool gated; /* holds one of opts.gate's places */
};

/* libpq messages end with a newline and may span lines; keep the first. */
static void set_conn_err(struct gv_err *err, const PGconn *conn, const char *what)
{
	const char *m = conn ? PQerrorMessage(conn) : "out of memory";
	size_t len = strcspn(m, "\n");
	while (len > 0 && m[len - 1] == ' ')
		len--;
	gv_err_set(err, GV_EDB, "%s: %.*s", what, (int)len, m[0] ? m : "connection failed");
}

static void set_result_err(struct gv_err *err, const PGresult *res)
{
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	if (!msg) {
		const char *m = PQresultErrorMessage(res);
		size_t len = strcspn(m, "\n");
		gv_err_set(err, GV_EDB, "%.*s", (int)len, m[0] ? m : PQresStatus(PQresultStatus(res)));
		return;
	}
	gv_err_set(err, GV_EDB, "%s: %s (SQLSTATE %s)", sev ? sev : "ERROR", msg, state ? state : "?????");
}

/* Server notices (NOTICE, WARNING) go to the debug log, not to stderr as
 * libpq's default does: "relation already exists, skipping" is not news. */
static void notice_to_log(void *arg, const char *message)
{
	(void)arg;
	size_t len = strcspn(message, "\n");
	gv_debug(NULL, "postgres: %.*s", (int)len, message);
}

bool gv_pg_conn_ok(const PGconn *conn)
{
	return conn && PQstatus(conn) == CONNECTION_OK;
}

PGconn *gv_pg_connect(const char *url, int connect_timeout_s, int statement_timeout_ms,
		      struct gv_err *err)
{
	if (!url || !url[0]) {
		gv_err_set(err, GV_ECONFIG, "no database URL given");
		return NULL;
	}
	char timeout[16];
	snprintf(timeout, sizeof(timeout), "%d", connect_timeout_s > 0 ? connect_timeout_s : 5);
	/* Defaults first: with expand_dbname the URL's own values override
	 * what came before it. read-write: of a multi-host URL's servers the
	 * one that takes writes, whichever that is since the last failover;
	 * a standby alone is refused rather than used (GV_PG_SESSION_ATTRS). */
	const char *const keys[] = { "target_session_attrs", "connect_timeout", "application_name", "client_encoding",
				     "dbname", NULL };
	const char *const vals[] = { GV_PG_SESSION_ATTRS, timeout, "gavel", "UTF8", url, NULL };
	PGconn *conn = PQconnectdbParams(keys, vals, 1);
	if (!conn) {
		gv_err_set(err, GV_EDB, "connect: out of memory");
		return NULL;
	}
	if (PQstatus(conn) != CONNECTION_OK) {
		set_conn_err(err, conn, "connect");
		PQfinish(conn);
		return NULL;
	}
	PQsetNoticeProcessor(conn, notice_to_log, NULL);
	if (statement_timeout_ms > 0 && gv_pg_set_statement_timeout(conn, statement_timeout_ms, err) != 0) {
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

int gv_pg_set_statement_timeout(PGconn *conn, int ms, struct gv_err *err)
{
	char v[16];
	snprintf(v, sizeof(v), "%d", ms < 0 ? 0 : ms);
	const char *params[] = { v };
	if (gv_pg_exec(conn, "SELECT set_config('statement_timeout', $1, false)", 1, params, err) != 0) {
		gv_err_prefix(err, "set statement_timeout");
		return -1;
	}
	return 0;
}

/* Reads every pending result. Returns the last successful one (caller
 * owns it) unless an error came first; clears all others. COPY states are
 * ended so that the loop always terminates. */
static PGresult *drain(PGconn *conn, int *err_position, struct gv_err *err)
{
	PGresult *keep = NULL;
	PGresult *res;
	bool failed = false;
	while ((res = PQgetResult(conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);
		if (st == PGRES_COPY_IN) {
			PQputCopyEnd(conn, "COPY is not supported here");
		} else if (st == PGRES_COPY_OUT) {
			char *buf;
			while (PQgetCopyData(conn, &buf, 0) > 0)
				PQfreemem(buf);
		}
		if (failed) {
			PQclear(res);
			continue;
		}
		switch (st) {
		case PGRES_COMMAND_OK:
		case PGRES_TUPLES_OK:
		case PGRES_EMPTY_QUERY:
			PQclear(keep);
			keep = res;
			break;
		case PGRES_COPY_IN:
		case PGRES_COPY_OUT:
		case PGRES_COPY_BOTH:
			gv_err_set(err, GV_EDB, "COPY is not supported by this helper");
			failed = true;
			PQclear(res);
			break;
		default:
			set_result_err(err, res);
			if (err_position) {
				const char *pos = PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION);
				*err_position = pos ? atoi(pos) : 0;
			}
			failed = true;
			PQclear(res);
			break;
		}
	}
	if (failed) {
		PQclear(keep);
		return NULL;
	}
	if (!keep) {
		if (PQstatus(conn) != CONNECTION_OK)
			set_conn_err(err, conn, "query");
		else
			gv_err_set(err, GV_EDB, "query returned no result");
	}
	return keep;
}

PGresult *gv_pg_query(PGconn *conn, const char *sql, int nparams, const char *const *params,
		      struct gv_err *err)
{
	if (!conn) {
		gv_err_set(err, GV_EDB, "no database connection");
		return NULL;
	}
	if (!PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0)) {
		set_conn_err(err, conn, "send query");
		/* A failed send can leave results queued (e.g. a previous
		 * query's); never leave the connection busy. */
		PGresult *res;
		while ((res = PQgetResult(conn)) != NULL)
			PQclear(res);
		return NULL;
	}
	return drain(conn, NULL, err);
}

int gv_pg_exec(PGconn *conn, const char *sql, int nparams, const char *const *params,
	       struct gv_err *err)
{
	PGresult *res = gv_pg_query(conn, sql, nparams, params, err);
	if (!res)
		return -1;
	PQclear(res);
	return 0;
}

/* Reads one pipelined statement's results up to the NULL that ends them.
 * Returns its result when it succeeded; NULL after recording the first
 * failure in err (*failed tells whether one was recorded before). */
static PGresult *pipeline_result(PGconn *conn, bool *failed, struct gv_err *err)
{
	PGresult *ok = NULL, *res;
	while ((res = PQgetResult(conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);
		if (!ok && (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)) {
			ok = res;
			continue;
		}
		if (!*failed) {
			if (st == PGRES_PIPELINE_ABORTED)
				gv_err_set(err, GV_EDB, "pipeline aborted");
			else
				set_result_err(err, res);
			*failed = true;
		}
		PQclear(res);
		if (PQstatus(conn) != CONNECTION_OK)
			break;
	}
	return ok;
}

PGresult *gv_pg_pipeline(PGconn *conn, const struct gv_pg_stmt *stmts, size_t n, size_t keep,
			 struct gv_err *err)
{
	if (!conn) {
		gv_err_set(err, GV_EDB, "no database connection");
		return NULL;
	}
	if (n == 0 || keep >= n) {
		gv_err_set(err, GV_EINVAL, "pipeline: no statement to keep");
		return NULL;
	}
	if (!PQenterPipelineMode(conn)) {
		set_conn_err(err, conn, "pipeline");
		return NULL;
	}
	bool failed = false;
	size_t sent = 0;
	while (sent < n && PQsendQueryParams(conn, stmts[sent].sql, stmts[sent].nparams, NULL, stmts[sent].params,
					     NULL, NULL, 0))
		sent++;
	if (sent < n) {
		set_conn_err(err, conn, "send query");
		failed = true;
	}
	bool synced = PQpipelineSync(conn) == 1;
	if (!synced && !failed) {
		set_conn_err(err, conn, "pipeline sync");
		failed = true;
	}
	PGresult *kept = NULL;
	for (size_t i = 0; i < sent && PQstatus(conn) == CONNECTION_OK; i++) {
		PGresult *res = pipeline_result(conn, &failed, err);
		if (!res && !failed) {
			gv_err_set(err, GV_EDB, "query returned no result");
			failed = true;
		}
		if (i == keep)
			kept = res;
		else
			PQclear(res);
	}
	/* The Sync's own result, then the pipeline is empty. */
	PGresult *res;
	while (synced && PQstatus(conn) == CONNECTION_OK && (res = PQgetResult(conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);
		PQclear(res);
		if (st == PGRES_PIPELINE_SYNC)
			break;
	}
	if (!PQexitPipelineMode(conn) && !failed) {
		set_conn_err(err, conn, "pipeline end");
		failed = true;
	}
	if (PQstatus(conn) != CONNECTION_OK && !failed) {
		set_conn_err(err, conn, "query");
		failed = true;
	}
	if (failed) {
		PQclear(kept);
		return NULL;
	}
	return kept;
}

int gv_pg_exec_script(PGconn *conn, const char *sql, int *err_position, struct gv_err *err)
{
	if (err_position)
		*err_position = 0;
	if (!conn)
		return gv_err_set(err, GV_EDB, "no database connection");
	if (!PQsendQuery(conn, sql)) {
		set_conn_err(err, conn, "send script");
		PGresult *res;
		while ((res = PQgetResult(conn)) != NULL)
			PQclear(res);
		return -1;
	}
	PGresult *res = drain(conn, err_position, err);
	if (!res)
		return -1;
	PQclear(res);
	return 0;
}

void gv_pg_url_redact(const char *url, char *out, size_t outsz)
{
	if (!out || outsz == 0)
		return;
	out[0] = '\0';
	if (!url)
		return;
	size_t o = 0;
#define PUT(c)                          \
	do {                            \
		if (o + 1 < outsz)      \
			out[o++] = (c); \
	} while (0)
#define PUTS(s)                                  \
	do {                                     \
		for (const char *p_ = (s); *p_; p_++) \
			PUT(*p_);                \
	} while (0)
	const char *scheme_end = strstr(url, "://");
	if (scheme_end && (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0)) {
		const char *auth = scheme_end + 3;
		size_t alen = strcspn(auth, "/?#");
		const char *at = NULL;
		for (size_t i = 0; i < alen; i++)
			if (auth[i] == '@')
				at = auth + i;
		const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
		for (const char *p = url; *p; p++) {
			if (colon && p == colon + 1) {
				PUTS("***");
				p = at - 1;
				continue;
			}
			/* password=... in the query string */
			if ((*p == '?' || *p == '&') && strncmp(p + 1, "password=", 9) == 0) {
				PUT(*p);
				PUTS("password=***");
				p += 9;
				while (p[1] && p[1] != '&' && p[1] != '#')
					p++;
				continue;
			}
			PUT(*p);
		}
	} else {
		/* key=value conninfo: blank out the value of password. */
		for (const char *p = url; *p; p++) {
			if (strncmp(p, "password", 8) == 0 && (p == url || p[-1] == ' ' || p[-1] == '\t')) {
				const char *q = p + 8;
				while (*q == ' ' || *q == '\t')
					q++;
				if (*q == '=') {
					q++;
					while (*q == ' ' || *q == '\t')
						q++;
					PUTS("password=***");
					if (*q == '\'') {
						for (q++; *q && *q != '\''; q++)
							if (*q == '\\' && q[1])
								q++;
						if (*q)
							q++;
					} else {
						while (*q && *q != ' ' && *q != '\t')
							q++;
					}
					p = q - 1;
					continue;
				}
			}
			PUT(*p);
		}
	}
	out[o] = '\0';
#undef PUT
#undef PUTS
}

/* ----------------------------------------------------------- reconnecting */

static void opts_defaults(struct gv_pg_opts *o)
{
	if (o->connect_timeout_s <= 0)
		o->connect_timeout_s = 5;
	if (o->max_attempts <= 0)
		o->max_attempts = 5;
	if (o->backoff_initial_ms <= 0)
		o->backoff_initial_ms = 100;
	if (o->backoff_max_ms <= 0)
		o->backoff_max_ms = 5000;
	if (o->statement_timeout_ms < 0)
		o->statement_timeout_ms = 0;
}

static void close_conn(struct gv_pg *pg)
{
	if (pg->conn)
		PQfinish(pg->conn);
	pg->conn = NULL;
	if (pg->gated && pg->opts.gate_give)
		pg->opts.gate_give(pg->opts.gate_arg);
	pg->gated = false;
}

static int connect_with_backoff(struct gv_pg *pg, struct gv_err *err)
{
	if (pg->opts.gate_take && !pg->gated) {
		if (!pg->opts.gate_take(pg->opts.gate_arg))
			return gv_err_set(err, GV_EDB, "PostgreSQL: every connection this node may hold is in use");
		pg->gated = true;
	}
	for (int attempt = 0; attempt < pg->opts.max_attempts; attempt++) {
		if (attempt > 0) {
			long d = gv_backoff_delay_ms((unsigned)(attempt - 1), pg->opts.backoff_initial_ms,
						     pg->opts.backoff_max_ms);
			gv_backoff_sleep_ms(gv_backoff_jitter_ms(d, &pg->seed));
		}
		pg->conn = gv_pg_connect(pg->url, pg->opts.connect_timeout_s, pg->opts.statement_timeout_ms, err);
		if (pg->conn)
			return 0;
	}
	close_conn(pg);
	gv_err_prefix(err, "PostgreSQL unreachable after %d attempt(s)", pg->opts.max_attempts);
	return -1;
}

struct gv_pg *gv_pg_new(const struct gv_pg_opts *opts, struct gv_err *err)
{
	if (!opts || !opts->url || !opts->url[0]) {
		gv_err_set(err, GV_ECONFIG, "no database URL given");
		return NULL;
	}
	struct gv_pg *pg = calloc(1, sizeof(*pg));
	if (!pg) {
		gv_err_errno(err, "calloc");
		return NULL;
	}
	pg->opts = *opts;
	opts_defaults(&pg->opts);
	pg->url = strdup(opts->url);
	if (!pg->url) {
		gv_err_errno(err, "strdup");
		free(pg);
		return NULL;
	}
	pg->opts.url = pg->url;
	pg->seed = gv_backoff_seed();
	if (!opts->lazy && connect_with_backoff(pg, err) != 0) {
		gv_pg_free(pg);
		return NULL;
	}
	return pg;
}

void gv_pg_free(struct gv_pg *pg)
{
	if (!pg)
		return;
	close_conn(pg);
	if (pg->url) {
		/* The URL may hold a password: do not leave it in freed memory. */
		explicit_bzero(pg->url, strlen(pg->url));
		free(pg->url);
	}
	free(pg);
}

int gv_pg_ensure(struct gv_pg *pg, struct gv_err *err)
{
	if (!pg)
		return gv_err_set(err, GV_EINTERNAL, "no PostgreSQL handle");
	if (gv_pg_conn_ok(pg->conn) && PQtransactionStatus(pg->conn) != PQTRANS_UNKNOWN)
		return 0;
	if (pg->conn) {
		/* Broken: a new one in its place, under the same gate place. */
		PQfinish(pg->conn);
		pg->conn = NULL;
	}
	if (connect_with_backoff(pg, err) != 0)
		return -1;
	pg->reconnects++;
	return 0;
}

void gv_pg_release(struct gv_pg *pg)
{
	if (pg)
		close_conn(pg);
}

PGconn *gv_pg_conn(struct gv_pg *pg)
{
	return pg ? pg->conn : NULL;
}

unsigned gv_pg_reconnects(const struct gv_pg *pg)
{
	return pg ? pg->reconnects : 0;
}

bool gv_pg_away(struct gv_pg *pg)
{
	return pg && (!gv_pg_conn_ok(pg->conn) || PQtransactionStatus(pg->conn) == PQTRANS_UNKNOWN);
}
