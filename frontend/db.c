/* libpq pipeline mode on libevent. The connection is nonblocking; output is
 * flushed with PQflush on write readiness, input consumed on read
 * readiness, and results are matched to transactions in FIFO order: each
 * statement yields its result(s) then NULL, each transaction ends with a
 * PGRES_PIPELINE_SYNC result. A broken connection fails everything in
 * flight and reconnects with bounded backoff, without blocking the loop
 * (PQconnectStartParams + PQconnectPoll). */
#include "frontend/db.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/log.h"
#include "common/pg.h"

/* One command of a transaction as sent: a user statement (its index in
 * the caller's array), or a hidden one (set_config, a Parse of a statement
 * being prepared: -1, or -2 - slot for a prepare of cache slot `slot`). */
struct db_txn {
	fe_db_cb cb;
	void *arg;
	int ncmds;        /* commands sent, hidden ones included */
	int nuser;        /* the caller's statements */
	int idx;          /* command whose results are being read */
	short *map;       /* [ncmds] */
	PGresult **results; /* [nuser] */
	char error[256];
	struct db_txn *next;
};

/* Server-side prepared statements, per connection: the first transaction
 * that uses a statement text sends PQsendPrepare ahead of it (in the same
 * pipeline), later ones PQsendQueryPrepared, so PostgreSQL parses, analyses
 * and plans each statement once per connection instead of on every
 * request. Keyed by the SQL pointer (every caller passes static text) and
 * checked by content. Forgotten on reconnect, and when the server says a
 * cached plan went stale (a migration changed a table under it). */
#define DB_PREP_SLOTS 64
enum prep_state { PREP_NONE, PREP_SENT, PREP_FAILED };
struct db_prep {
	const char *sql;
	enum prep_state state;
	int fails;
	char name[24];
};
enum db_state { DB_DOWN, DB_CONNECTING, DB_UP };

struct fe_db {
	struct event_base *base;
	char *url;
	int connect_timeout_s;
	int statement_timeout_ms;
	PGconn *conn;
	enum db_state state;
	struct event *rev, *wev, *retry;
	PostgresPollingStatusType poll_want;
	unsigned attempt;
	unsigned seed;
	struct db_txn *head, *tail;
	size_t inflight;
	struct db_prep prep[DB_PREP_SLOTS];
	int nprep;
	unsigned prep_gen; /* in statement names: a reset never reuses one */
};

static void prep_reset(struct fe_db *db)
{
	memset(db->prep, 0, sizeof(db->prep));
	db->nprep = 0;
	db->prep_gen++;
}

static void db_connect_start(struct fe_db *db);

static void txn_finish(struct db_txn *t)
{
	t->cb(t->arg, (PGresult *const *)t->results, t->nuser, t->error[0] ? t->error : NULL);
	for (int i = 0; i < t->nuser; i++)
		PQclear(t->results[i]);
	free(t);
}

static void db_fail_all(struct fe_db *db, const char *why)
{
	struct db_txn *t = db->head;
	db->head = db->tail = NULL;
	db->inflight = 0;
	while (t) {
		struct db_txn *next = t->next;
		if (!t->error[0])
			snprintf(t->error, sizeof(t->error), "%s", why);
		txn_finish(t);
		t = next;
	}
}

static void db_drop(struct fe_db *db, const char *why)
{
	if (db->rev) {
		event_free(db->rev);
		db->rev = NULL;
	}
	if (db->wev) {
		event_free(db->wev);
		db->wev = NULL;
	}
	if (db->conn) {
		PQfinish(db->conn);
		db->conn = NULL;
	}
	if (db->state == DB_UP)
		gv_warn(NULL, "postgres: connection lost: %s", why);
	db->state = DB_DOWN;
	prep_reset(db);
	db_fail_all(db, "database unavailable");
	long delay = gv_backoff_jitter_ms(gv_backoff_delay_ms(db->attempt, 100, 5000), &db->seed);
	if (db->attempt < 30)
		db->attempt++;
	struct timeval tv = { delay / 1000, (delay % 1000) * 1000 };
	evtimer_add(db->retry, &tv);
}

static void db_flush(struct fe_db *db)
{
	int r = PQflush(db->conn);
	if (r < 0) {
		db_drop(db, PQerrorMessage(db->conn));
		return;
	}
	if (r == 1)
		event_add(db->wev, NULL);
	else
		event_del(db->wev);
}

/* Reads every available result. Returns -1 when the connection was dropped. */
static int db_read(struct fe_db *db)
{
	if (!PQconsumeInput(db->conn)) {
		db_drop(db, PQerrorMessage(db->conn));
		return -1;
	}
	while (db->head) {
		if (PQisBusy(db->conn))
			break;
		struct db_txn *t = db->head;
		PGresult *r = PQgetResult(db->conn);
		if (!r) {
			if (t->idx < t->ncmds)
				t->idx++;
			continue;
		}
		ExecStatusType st = PQresultStatus(r);
		if (st == PGRES_PIPELINE_SYNC) {
			PQclear(r);
			db->head = t->next;
			if (!db->head)
				db->tail = NULL;
			db->inflight--;
			txn_finish(t);
			/* A callback may have sent on a broken connection and
			 * dropped it. */
			if (db->state != DB_UP)
				return -1;
			continue;
		}
		int slot = t->idx < t->ncmds ? t->map[t->idx] : -1;
		if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
			const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
			if (slot <= -2 && -2 - slot < db->nprep) {
				/* This statement's Parse did not happen: prepare
				 * it again next time, or give up on preparing it
				 * after a few tries (it then goes unnamed). */
				struct db_prep *pp = &db->prep[-2 - slot];
				pp->state = ++pp->fails >= 3 ? PREP_FAILED : PREP_NONE;
				if (pp->state == PREP_NONE)
					pp->name[0] = '\0';
			}
			/* 0A000: "cached plan must not change result type";
			 * 26000: no such prepared statement. Start over. */
			if (state && (!strcmp(state, "0A000") || !strcmp(state, "26000")))
				prep_reset(db);
			if (!t->error[0]) {
				if (st == PGRES_PIPELINE_ABORTED)
					snprintf(t->error, sizeof(t->error), "statement skipped after an earlier error");
				else {
					const char *m = PQresultErrorMessage(r);
					snprintf(t->error, sizeof(t->error), "%.*s (SQLSTATE %s)",
						 (int)strcspn(m, "\n"), m, state ? state : "?");
				}
			}
		}
		if (slot >= 0) {
			PQclear(t->results[slot]);
			t->results[slot] = r;
		} else {
			PQclear(r);
		}
	}
	if (PQstatus(db->conn) == CONNECTION_BAD) {
		db_drop(db, "connection bad");
		return -1;
	}
	return 0;
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_db *db = arg;
	if (db->state != DB_UP)
		return;
	if (db_read(db) == 0 && db->conn)
		db_flush(db);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_db *db = arg;
	if (db->state == DB_UP)
		db_flush(db);
}

static void db_poll_events(struct fe_db *db);

static void on_connect_io(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_db *db = arg;
	db_poll_events(db);
}

/* Drives PQconnectPoll until the connection is up or has failed. */
static void db_poll_events(struct fe_db *db)
{
	PostgresPollingStatusType st = PQconnectPoll(db->conn);
	if (db->rev) {
		event_free(db->rev);
		db->rev = NULL;
	}
	if (st == PGRES_POLLING_FAILED) {
		char why[256];
		snprintf(why, sizeof(why), "%.*s", (int)strcspn(PQerrorMessage(db->conn), "\n"),
			 PQerrorMessage(db->conn));
		if (db->attempt == 0 || db->attempt % 10 == 0)
			gv_warn(NULL, "postgres: connect failed: %s", why);
		db_drop(db, why);
		return;
	}
	int fd = PQsocket(db->conn);
	if (st == PGRES_POLLING_OK) {
		if (PQsetnonblocking(db->conn, 1) != 0 || PQenterPipelineMode(db->conn) != 1) {
			db_drop(db, "cannot enter pipeline mode");
			return;
		}
		db->rev = event_new(db->base, fd, EV_READ | EV_PERSIST, on_read, db);
		db->wev = event_new(db->base, fd, EV_WRITE, on_write, db);
		if (!db->rev || !db->wev || event_add(db->rev, NULL) != 0) {
			db_drop(db, "out of memory");
			return;
		}
		db->state = DB_UP;
		db->attempt = 0;
		gv_info(NULL, "postgres: connected");
		return;
	}
	short ev = st == PGRES_POLLING_READING ? EV_READ : EV_WRITE;
	db->rev = event_new(db->base, fd, ev, on_connect_io, db);
	struct timeval tv = { db->connect_timeout_s, 0 };
	if (!db->rev || event_add(db->rev, &tv) != 0)
		db_drop(db, "out of memory");
}

static void db_connect_start(struct fe_db *db)
{
	char opts[64], timeout[16];
	/* jit off: the frontend's statements are short, and a generic plan's
	 * guess at the rows of a JSON parameter can cross jit_above_cost,
	 * making PostgreSQL compile code for hundreds of ms to run a
	 * statement that takes one. */
	snprintf(opts, sizeof(opts), "-c statement_timeout=%d -c jit=off", db->statement_timeout_ms);
	snprintf(timeout, sizeof(timeout), "%d", db->connect_timeout_s);
	/* expand_dbname=1 expands the URL; keywords after it win over its own
	 * parameters, keywords before it give way to them: target_session_attrs
	 * is a default the URL may change (common/pg.h). */
	const char *const keys[] = { "target_session_attrs", "dbname", "application_name", "options",
				     "connect_timeout", "client_encoding", NULL };
	const char *const vals[] = { GV_PG_SESSION_ATTRS, db->url, "gavel-frontend", opts, timeout, "UTF8", NULL };
	db->conn = PQconnectStartParams(keys, vals, 1);
	if (!db->conn) {
		db_drop(db, "out of memory");
		return;
	}
	if (PQstatus(db->conn) == CONNECTION_BAD) {
		db_drop(db, PQerrorMessage(db->conn));
		return;
	}
	db->state = DB_CONNECTING;
	db_poll_events(db);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_db *db = arg;
	if (db->state == DB_DOWN)
		db_connect_start(db);
}

struct fe_db *fe_db_new(struct event_base *base, const char *url, int connect_timeout_s,
			int statement_timeout_ms, struct gv_err *err)
{
	struct fe_db *db = calloc(1, sizeof(*db));
	if (!db) {
		gv_err_errno(err, "calloc");
		return NULL;
	}
	db->base = base;
	db->url = strdup(url);
	db->connect_timeout_s = connect_timeout_s > 0 ? connect_timeout_s : 5;
	db->statement_timeout_ms = statement_timeout_ms;
	db->seed = gv_backoff_seed();
	db->retry = evtimer_new(base, on_retry, db);
	if (!db->url || !db->retry) {
		gv_err_set(err, ENOMEM, "out of memory");
		fe_db_free(db);
		return NULL;
	}
	db_connect_start(db);
	return db;
}

void fe_db_free(struct fe_db *db)
{
	if (!db)
		return;
	if (db->rev)
		event_free(db->rev);
	if (db->wev)
		event_free(db->wev);
	db->rev = db->wev = NULL;
	if (db->retry)
		event_free(db->retry);
	if (db->conn)
		PQfinish(db->conn);
	db->conn = NULL;
	/* A callback may try to send again: it gets "database unavailable". */
	db->state = DB_DOWN;
	db_fail_all(db, "shutting down");
	free(db->url);
	free(db);
}

bool fe_db_ready(const struct fe_db *db)
{
	return db && db->state == DB_UP;
}

size_t fe_db_inflight(const struct fe_db *db)
{
	return db ? db->inflight : 0;
}

static const char SQL_SET_TENANT[] = "SELECT set_config('gavel.tenant_id', $1, true)";

/* The cache slot of sql, or -1 when it goes unnamed (cache full, or its
 * prepare failed). Marks a new one PREP_NONE: the caller sends the Parse. */
static int prep_slot(struct fe_db *db, const char *sql)
{
	for (int i = 0; i < db->nprep; i++)
		if (db->prep[i].sql == sql || !strcmp(db->prep[i].sql, sql))
			return db->prep[i].state == PREP_FAILED ? -1 : i;
	if (db->nprep >= DB_PREP_SLOTS)
		return -1;
	struct db_prep *p = &db->prep[db->nprep];
	memset(p, 0, sizeof(*p));
	p->sql = sql;
	return db->nprep++;
}

/* Sends what s needs: its Parse first when its statement is not prepared
 * on this connection yet (a hidden command), then the statement itself
 * (user index ui, or -1 hidden). */
static int send_stmt(struct fe_db *db, struct db_txn *t, const struct fe_db_stmt *s, int ui)
{
	int slot = prep_slot(db, s->sql);
	if (slot >= 0 && db->prep[slot].state == PREP_NONE) {
		struct db_prep *p = &db->prep[slot];
		snprintf(p->name, sizeof(p->name), "gv%u_%d", db->prep_gen, slot);
		if (!PQsendPrepare(db->conn, p->name, s->sql, s->nparams, NULL))
			return 0;
		p->state = PREP_SENT;
		t->map[t->ncmds++] = (short)(-2 - slot);
	}
	int ok;
	if (slot >= 0)
		ok = PQsendQueryPrepared(db->conn, db->prep[slot].name, s->nparams, s->values, s->lengths,
					 s->formats, 0);
	else
		ok = PQsendQueryParams(db->conn, s->sql, s->nparams, NULL, s->values, s->lengths, s->formats,
				       0);
	if (ok)
		t->map[t->ncmds++] = (short)ui;
	return ok;
}

static int send_tenant(struct fe_db *db, struct db_txn *t, const char *tenant_id)
{
	struct fe_db_stmt sc;
	fe_db_stmt_text(&sc, SQL_SET_TENANT, 1, tenant_id);
	return send_stmt(db, t, &sc, -1);
}

int fe_db_txn(struct fe_db *db, const char *tenant_id, const struct fe_db_stmt *stmts, int n,
	      fe_db_cb cb, void *arg, struct gv_err *err)
{
	if (n < 1 || n > FE_DB_STMTS_MAX)
		return gv_err_set(err, GV_EINTERNAL, "bad statement count %d", n);
	if (db->state != DB_UP)
		return gv_err_set(err, GV_EDB, "database unavailable");
	if (db->inflight >= FE_DB_INFLIGHT_MAX)
		return gv_err_set(err, GV_ELIMIT, "database busy");
	int ntenant = tenant_id ? 1 : 0;
	for (int i = 0; i < n; i++)
		ntenant += stmts[i].set_tenant != NULL;
	/* At most two commands (Parse, statement) per statement. */
	size_t maxcmds = 2 * ((size_t)n + (size_t)ntenant);
	struct db_txn *t = calloc(1, sizeof(*t) + (size_t)n * sizeof(PGresult *) + maxcmds * sizeof(short));
	if (!t)
		return gv_err_errno(err, "calloc");
	t->results = (PGresult **)(t + 1);
	t->map = (short *)(t->results + n);
	t->cb = cb;
	t->arg = arg;
	t->nuser = n;
	if (tenant_id && !send_tenant(db, t, tenant_id))
		goto fail;
	for (int i = 0; i < n; i++) {
		if (stmts[i].set_tenant && !send_tenant(db, t, stmts[i].set_tenant))
			goto fail;
		if (!send_stmt(db, t, &stmts[i], i))
			goto fail;
	}
	if (!PQpipelineSync(db->conn))
		goto fail;
	if (db->tail)
		db->tail->next = t;
	else
		db->head = t;
	db->tail = t;
	db->inflight++;
	db_flush(db);
	return 0;
fail:
	/* A send failure means the connection is unusable: whatever part of
	 * this transaction went out has no Sync, so the pipeline is out of
	 * step. Drop the connection (failing the others) and this one. */
	gv_err_set(err, GV_EDB, "database send failed: %.*s",
		   (int)strcspn(PQerrorMessage(db->conn), "\n"), PQerrorMessage(db->conn));
	free(t);
	db_drop(db, "send failed");
	return -1;
}

void fe_db_stmt_text(struct fe_db_stmt *s, const char *sql, int nparams, ...)
{
	va_list ap;
	memset(s, 0, sizeof(*s));
	s->sql = sql;
	s->nparams = nparams > FE_DB_PARAMS_MAX ? FE_DB_PARAMS_MAX : nparams;
	va_start(ap, nparams);
	for (int i = 0; i < s->nparams; i++)
		s->values[i] = va_arg(ap, const char *);
	va_end(ap);
}
