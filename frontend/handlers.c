/* The route handlers: they read the request, call the pure API layer
 * (api_*.c) and talk to PostgreSQL and Redis through the worker's async
 * connections. Every query carries the caller's tenant twice: as the
 * transaction's gavel.tenant_id (row-level security) and in its WHERE
 * clause, so another tenant's id answers exactly like a missing one. */
#include <errno.h>
#include <event2/buffer.h>
#include <hiredis/hiredis.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/feedback.h"
#include "common/jobspec.h"
#include "common/json.h"
#include "common/log.h"
#include "common/queue.h"
#include "frontend/api_problems.h"
#include "frontend/api_tenant.h"
#include "frontend/metrics.h"
#include "frontend/server_internal.h"

#define ROW_COLS                                                                            \
	"id, language, status, verdict, "                                                   \
	"to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "     \
	"to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), result::text"

/* Column 9: the feedback policy of the submission's problem (issue 6),
 * applied in row_load; reads without it apply the default policy. */
#define PROBLEM_POLICY                                                                           \
	"(SELECT p.feedback::text FROM problems p WHERE p.tenant_id = submissions.tenant_id "   \
	"AND p.id = submissions.problem_id)"
static const char SQL_GET[] =
	"SELECT " ROW_COLS ", NULL, NULL, " PROBLEM_POLICY " FROM submissions WHERE tenant_id = $1::uuid AND id = $2";
static const char SQL_GET_REQ[] =
	"SELECT " ROW_COLS ", request::text, NULL, " PROBLEM_POLICY
	" FROM submissions WHERE tenant_id = $1::uuid AND id = $2";
static const char SQL_GET_MANY[] =
	"SELECT " ROW_COLS ", request::text FROM submissions WHERE tenant_id = $1::uuid AND id = ANY($2::text[])";
static const char SQL_LIST[] =
	"SELECT " ROW_COLS ", request::text, count(*) OVER () FROM submissions WHERE tenant_id = $1::uuid "
	"ORDER BY created_at DESC, id LIMIT $2::int OFFSET $3::int";
/* Inserts every element of $2 (a JSON array of {id, language, request})
 * for tenant $1, made through API $4, unless that would take the tenant's
 * queued submissions over $3 (the max_queued quota): then nothing is
 * inserted. The queued count is the one triggers keep (migration 0008):
 * counting the rows would cost a visit of every queued row per POST. */
static const char SQL_INSERT[] =
	"INSERT INTO submissions (id, tenant_id, language, source, request, api, problem_id, problem_version) "
	"SELECT e->>'id', $1::uuid, e->>'language', "
	"convert_to(e->'request'->'files'->0->>'content', 'UTF8'), e->'request', $4, "
	"e->'request'->>'problem_id', (e->'request'->>'problem_version')::int "
	"FROM jsonb_array_elements($2::jsonb) e "
	"WHERE coalesce((SELECT queued FROM tenant_queue_counts WHERE tenant_id = $1::uuid), 0) "
	"+ jsonb_array_length($2::jsonb) <= $3::int RETURNING id";
static const char SQL_DELETE[] =
	"DELETE FROM submissions WHERE tenant_id = $1::uuid AND id = $2 "
	"AND status IN ('done', 'failed', 'cancelled') RETURNING " ROW_COLS ", request::text";

/* Statistics of the queues and executors, read atomically by one script:
 * {nodes, alive, capacity, running, queued_total, burst, tid1, len1, tid2,
 * ...}. capacity and burst are the regular and burst slots (common/queue.h)
 * of the alive executors. ARGV[1]: heartbeat timeout in ms. */
static const char STATS_LUA[] =
	"local t = redis.call('TIME') "
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
	"local nodes = redis.call('SMEMBERS', 'gavel:executors') "
	"local alive, cap, run, burst = 0, 0, 0, 0 "
	"for _, n in ipairs(nodes) do "
	"  local h = redis.call('HMGET', 'gavel:exec:' .. n, 'heartbeat_ms', 'capacity', 'running', 'burst') "
	"  if h[1] and now - tonumber(h[1]) < tonumber(ARGV[1]) then "
	"    alive = alive + 1; cap = cap + (tonumber(h[2]) or 0); run = run + (tonumber(h[3]) or 0) "
	"    burst = burst + (tonumber(h[4]) or 0) end "
	"end "
	"local out = {#nodes, alive, cap, run, 0, burst} "
	"local total = 0 "
	"for _, tid in ipairs(redis.call('SMEMBERS', 'gavel:backlog')) do "
	"  local l = redis.call('LLEN', 'gavel:tq:' .. tid) "
	"  total = total + l; table.insert(out, tid); table.insert(out, l) end "
	"out[5] = total "
	"return out";

static bool sid_ok(const char *s)
{
	return gv_queue_sid_ok(s);
}

/* id passed sid_ok: at most 64 bytes. */
static void set_sid(struct fe_req *r, const char *id)
{
	size_t n = strnlen(id, FE_SID_BUF - 1);
	memcpy(r->sid, id, n);
	r->sid[n] = '\0';
}

/* ---------------------------------------------------------------- rows */

struct rowbuf {
	struct fe_subrow row;
	json_t *req, *res;
	long long total; /* list: count(*) over () */
};

static const char *val(const PGresult *res, int i, int c)
{
	return PQgetisnull(res, i, c) ? NULL : PQgetvalue(res, i, c);
}

static void row_load(const PGresult *res, int i, struct rowbuf *rb)
{
	memset(rb, 0, sizeof(*rb));
	rb->row.id = val(res, i, 0);
	rb->row.language = val(res, i, 1);
	rb->row.status = val(res, i, 2);
	rb->row.verdict = val(res, i, 3);
	rb->row.created_at = val(res, i, 4);
	rb->row.finished_at = val(res, i, 5);
	const char *r = val(res, i, 6), *q = val(res, i, 7);
	/* Written by our own daemons; NULs inside strings are legal there. */
	if (r)
		rb->res = json_loads(r, JSON_ALLOW_NUL, NULL);
	if (q)
		rb->req = json_loads(q, JSON_ALLOW_NUL, NULL);
	rb->row.result = rb->res;
	rb->row.request = rb->req;
	if (PQnfields(res) > 8 && !PQgetisnull(res, i, 8))
		rb->total = atoll(PQgetvalue(res, i, 8));
	/* What the submitter may see of a problem's tests: filtered here,
	 * before any API renders the row. */
	gv_feedback_filter(rb->res, PQnfields(res) > 9 ? val(res, i, 9) : NULL);
}

static void row_clear(struct rowbuf *rb)
{
	json_decref(rb->req);
	json_decref(rb->res);
	memset(rb, 0, sizeof(*rb));
}

static bool row_final(const struct fe_subrow *row)
{
	return row->status && (strcmp(row->status, "queued") && strcmp(row->status, "running"));
}

typedef void (*row_cb)(struct fe_req *r, struct rowbuf *rb, const char *error);

struct fetch_ctx {
	struct fe_req *r;
	row_cb cb;
};

static void on_fetch(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fetch_ctx *c = arg;
	struct fe_req *r = c->r;
	row_cb cb = c->cb;
	free(c);
	r->fetching = false;
	if (error || n < 1 || !res[0]) {
		cb(r, NULL, error ? error : "no result");
	} else if (PQntuples(res[0]) == 0) {
		cb(r, NULL, NULL);
	} else {
		struct rowbuf rb;
		row_load(res[0], 0, &rb);
		if (row_final(&rb.row) && rb.row.verdict)
			fe_metrics_verdict(r->w->app->metrics, rb.row.verdict);
		cb(r, &rb, NULL);
		row_clear(&rb);
	}
	fe_req_unref(r);
}

/* Reads r->sid for r's tenant. cb runs exactly once (rb NULL: not found or
 * error). */
static void fetch_row(struct fe_req *r, bool with_request, row_cb cb)
{
	struct gv_err err;
	struct fetch_ctx *c = malloc(sizeof(*c));
	if (!c) {
		cb(r, NULL, "out of memory");
		return;
	}
	c->r = r;
	c->cb = cb;
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, with_request ? SQL_GET_REQ : SQL_GET, 2, r->tenant_id, r->sid);
	fe_req_ref(r);
	r->fetching = true;
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_fetch, c, &err) < 0) {
		r->fetching = false;
		free(c);
		fe_req_unref(r);
		cb(r, NULL, err.msg);
	}
}

static void reply_db_error(struct fe_req *r, const char *error)
{
	gv_warn(NULL, "database: %s", error);
	fe_reply_error(r, 503, "unavailable", "the database is unavailable, try again");
}

/* ------------------------------------------------------------- waiting */

void fe_wait_start(struct fe_req *r, fe_wake_fn on_wake)
{
	if (r->waiting)
		return;
	r->waiting = true;
	r->on_wake = on_wake;
	r->wnext = r->w->waiters;
	r->w->waiters = r;
	fe_req_ref(r);
}

void fe_wait_stop(struct fe_req *r)
{
	if (!r->waiting)
		return;
	for (struct fe_req **pp = &r->w->waiters; *pp; pp = &(*pp)->wnext) {
		if (*pp == r) {
			*pp = r->wnext;
			break;
		}
	}
	r->waiting = false;
	r->wnext = NULL;
	if (r->timer)
		evtimer_del(r->timer);
	if (r->ping)
		evtimer_del(r->ping);
	if (r->sse_subscribed) {
		char ch[GV_QUEUE_KEY_MAX];
		struct gv_err err;
		if (gv_queue_key_events(ch, sizeof(ch), r->sid, &err) == 0)
			fe_redis_unsubscribe(r->w->redis, ch);
		r->sse_subscribed = false;
	}
	fe_req_unref(r);
}

static void sse_event(struct fe_req *r, const char *event, const char *data, size_t len);

void fe_worker_on_message(void *arg, const char *channel, const char *payload, size_t len)
{
	struct fe_worker *w = arg;
	bool done = !strcmp(channel, GV_QUEUE_DONE_CHANNEL);
	const char *sid = NULL;
	if (!done) {
		if (strncmp(channel, "gavel:ev:", 9))
			return;
		sid = channel + 9;
	}
	/* Collect first: a wake may reply and unlink itself. */
	struct fe_req *hits[64];
	size_t n = 0;
	for (struct fe_req *r = w->waiters; r && n < 64; r = r->wnext) {
		if (done ? (strlen(r->sid) == len && !memcmp(r->sid, payload, len)) : !strcmp(r->sid, sid))
			hits[n++] = r;
	}
	for (size_t i = 0; i < n; i++)
		fe_req_ref(hits[i]);
	for (size_t i = 0; i < n; i++) {
		struct fe_req *r = hits[i];
		if (r->waiting) {
			if (!done && r->sse) {
				/* progress: forward as an SSE event named by its "event" */
				json_t *j = json_loadb(payload, len, 0, NULL);
				const char *ev = j ? json_string_value(json_object_get(j, "event")) : NULL;
				if (ev && (!strcmp(ev, "queued") || !strcmp(ev, "compiling") ||
					   !strcmp(ev, "running")))
					sse_event(r, ev, payload, len);
				bool is_done = ev && !strcmp(ev, "done");
				json_decref(j);
				if (is_done && r->on_wake)
					r->on_wake(r);
			} else if (done && r->on_wake) {
				r->on_wake(r);
			}
		}
		fe_req_unref(r);
	}
}

void fe_worker_on_resync(void *arg)
{
	struct fe_worker *w = arg;
	struct fe_req *hits[256];
	size_t n = 0;
	for (struct fe_req *r = w->waiters; r && n < 256; r = r->wnext)
		hits[n++] = r;
	for (size_t i = 0; i < n; i++)
		fe_req_ref(hits[i]);
	for (size_t i = 0; i < n; i++) {
		if (hits[i]->waiting && hits[i]->on_wake)
			hits[i]->on_wake(hits[i]);
		fe_req_unref(hits[i]);
	}
}

void fe_handle_gone(struct fe_req *r)
{
	/* A waiting request has nobody to answer: stop waiting and release
	 * it (the reply call frees libevent's request object). */
	if (r->waiting) {
		fe_req_ref(r);
		fe_wait_stop(r);
		if (r->sse) {
			r->replied = true;
			fe_req_detach_conn(r);
			evhttp_send_reply_end(r->req);
			fe_req_unref(r);
		} else {
			fe_reply_error(r, 499, "client_closed", "client closed the connection");
		}
		fe_req_unref(r);
	}
}

static void stats_free(struct fe_stats *st);

void fe_handler_cleanup(struct fe_req *r)
{
	if (r->timer)
		event_free(r->timer);
	if (r->ping)
		event_free(r->ping);
	r->timer = r->ping = NULL;
	json_decref(r->batch_result);
	r->batch_result = NULL;
	for (size_t i = 0; i < r->batch_n; i++)
		free(r->batch_ids[i]);
	free(r->batch_ids);
	r->batch_ids = NULL;
	r->batch_n = 0;
	if (r->stats)
		stats_free(r->stats);
	r->stats = NULL;
}

/* ------------------------------------------------------------- helpers */

static json_t *read_body(struct fe_req *r)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(r->req);
	size_t len = evbuffer_get_length(in);
	size_t max = r->w->app->cfg->max_body_size;
	if (len > max) {
		fe_reply_error(r, 413, "too_large", "request body over %zu bytes", max);
		return NULL;
	}
	if (len == 0) {
		fe_reply_error(r, 400, "invalid_json", "request body is empty; expected JSON");
		return NULL;
	}
	const char *buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
	struct gv_err err;
	json_t *j = buf ? gv_json_parse(buf, len, max, 0, &err) : NULL;
	if (!j) {
		fe_reply_error(r, err.code == GV_ELIMIT ? 413 : 400,
			       err.code == GV_ELIMIT ? "too_large" : "invalid_json", "malformed JSON: %s",
			       buf ? err.msg : "out of memory");
		return NULL;
	}
	return j;
}

static void new_sid(char out[FE_SID_BUF])
{
	unsigned char raw[16]; /* 128 bits */
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2base64(out, FE_SID_BUF, raw, sizeof(raw), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

static int wait_timer(struct fe_req *r, uint64_t ms, event_callback_fn cb)
{
	if (!r->timer)
		r->timer = evtimer_new(r->w->base, cb, r);
	if (!r->timer)
		return -1;
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	return evtimer_add(r->timer, &tv);
}

/* --------------------------------------------------------- the answers */

static void answer_row(struct fe_req *r, int status, struct rowbuf *rb)
{
	struct fe_app *app = r->w->app;
	json_t *j = NULL;
	switch (r->api) {
	case FE_API_JUDGE0: j = fe_j0_render(&rb->row, r->j0_fields, r->j0_base64, &app->cat); break;
	case FE_API_PISTON:
		j = fe_piston_render(&rb->row, r->lang ? r->lang : lang_find(&app->langs, rb->row.language),
				     &app->cat);
		break;
	default: j = fe_native_render(&rb->row); break;
	}
	fe_reply_json(r, status, j);
}

static void on_wait_row(struct fe_req *r, struct rowbuf *rb, const char *error)
{
	if (!r->waiting)
		return;
	if (error) {
		/* Keep waiting: the deadline answers if the database stays down. */
		gv_warn(NULL, "wait: %s", error);
		return;
	}
	if (!rb) {
		fe_wait_stop(r);
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	if (!row_final(&rb->row))
		return;
	fe_wait_stop(r);
	answer_row(r, r->api == FE_API_PISTON ? 200 : 201, rb);
}

static void wait_wake(struct fe_req *r)
{
	if (!r->fetching)
		fetch_row(r, r->api == FE_API_JUDGE0, on_wait_row);
}

static void on_wait_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_req *r = arg;
	if (!r->waiting)
		return;
	fe_req_ref(r);
	fe_wait_stop(r);
	atomic_fetch_add(&r->w->app->metrics->waits_timed_out, 1);
	if (r->api == FE_API_PISTON)
		fe_reply_error(r, 504, "timeout", "the run did not finish within %llu ms (id %s)",
			       (unsigned long long)r->w->app->cfg->wait_timeout_ms, r->sid);
	else if (r->api == FE_API_JUDGE0)
		fe_reply_json(r, 202, json_pack("{s:s}", "token", r->sid));
	else
		fe_reply_json(r, 202, json_pack("{s:s,s:s}", "id", r->sid, "status", "queued"));
	fe_req_unref(r);
}

/* ----------------------------------------------------------- creation */

static void answer_created(struct fe_req *r, bool wait)
{
	if (wait && r->batch_n == 1) {
		/* The waiter was registered before the enqueue; a fetch now
		 * covers a job that finished before we subscribed. */
		if (r->waiting)
			wait_wake(r);
		return;
	}
	if (r->api == FE_API_JUDGE0 && r->batch_result) {
		json_t *out = r->batch_result;
		r->batch_result = NULL;
		fe_reply_json(r, 201, out);
		return;
	}
	if (r->api == FE_API_JUDGE0)
		fe_reply_json(r, 201, json_pack("{s:s}", "token", r->batch_ids[0]));
	else
		fe_reply_json(r, 201, json_pack("{s:s,s:s}", "id", r->batch_ids[0], "status", "queued"));
}

static void on_enqueued(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	if (!reply || reply->type != REDIS_REPLY_ARRAY) {
		/* Stored in PostgreSQL: the scheduler's reconciler enqueues it. */
		atomic_fetch_add(&r->w->app->metrics->enqueue_failures, 1);
		gv_warn(NULL, "enqueue failed: %s", reply && reply->type == REDIS_REPLY_ERROR ? reply->str : "redis down");
	}
	answer_created(r, r->waiting);
	fe_req_unref(r);
}

static void enqueue(struct fe_req *r)
{
	struct fe_redis *rd = r->w->redis;
	struct gv_err err;
	const char *multi[] = { "MULTI" }, *exec[] = { "EXEC" };
	if (fe_redis_command(rd, NULL, NULL, 1, multi, NULL, &err) < 0)
		goto fail;
	for (size_t i = 0; i < r->batch_n; i++) {
		struct gv_queue_argv a;
		if (gv_queue_enqueue_argv(&a, r->tenant_id, r->batch_ids[i], false, &err) < 0)
			goto discard;
		for (int k = 0; k < 3; k++)
			if (fe_redis_command(rd, NULL, NULL, a.argc[k], a.argv[k], a.argvlen[k], &err) < 0)
				goto fail;
	}
	for (int k = 0; k < 2; k++)
		if (fe_redis_command(rd, NULL, NULL, gv_queue_wake_queued_argc[k], (const char **)gv_queue_wake_queued_argv[k],
				     NULL, &err) < 0)
			goto fail;
	fe_req_ref(r);
	if (fe_redis_command(rd, on_enqueued, r, 1, exec, NULL, &err) == 0)
		return;
	fe_req_unref(r);
	goto fail;
discard: {
	const char *d[] = { "DISCARD" };
	struct gv_err derr;
	if (fe_redis_command(rd, NULL, NULL, 1, d, NULL, &derr) < 0)
		gv_warn(NULL, "redis DISCARD: %s", derr.msg);
}
fail:
	atomic_fetch_add(&r->w->app->metrics->enqueue_failures, 1);
	gv_warn(NULL, "enqueue failed: %s (the reconciler re-enqueues)", err.msg);
	answer_created(r, r->waiting);
}

/* The end of a submission's INSERT, on its own worker's thread: rows is
 * the number of rows the INSERT stored (-1 when it did not run), error NULL
 * or why the transaction failed; unavailable: it could not be sent. */
static void on_inserted(struct fe_req *r, int rows, const char *error, bool unavailable)
{
	if (unavailable || error || rows < 0) {
		if (r->waiting)
			fe_wait_stop(r);
		if (unavailable)
			fe_reply_error(r, 503, "unavailable", "%s", error ? error : "database unavailable");
		else
			reply_db_error(r, error ? error : "no result");
		fe_req_unref(r);
		return;
	}
	if ((size_t)rows != r->batch_n) {
		if (r->waiting)
			fe_wait_stop(r);
		fe_reply_error(r, 429, "quota_exceeded", "max_queued: at most %d queued submissions",
			       r->quota.max_queued);
		fe_req_unref(r);
		return;
	}
	atomic_fetch_add(&r->w->app->metrics->submissions_created, r->batch_n);
	enqueue(r);
	fe_req_unref(r);
}

/* ------------------------------------------------------ group commit */

/* A durable POST costs one WAL flush (fsync) at its COMMIT, and the
 * audit chain (gavel_audit_append_many) and the tenant's queued count
 * (migration 0008) hold per-tenant locks until that commit: one tenant's
 * transactions commit one after the other, one fsync each, whichever
 * thread or connection sends them. So the whole process keeps at most one
 * INSERT transaction in flight, on worker 0's connection: every worker
 * hands its submissions to worker 0 (store_mu, then event_active on
 * worker 0's store event), and those that arrive while one transaction is
 * being committed are sent together as the next one: for each, in tenant
 * order, set_config of its tenant, its INSERT (with its own max_queued
 * check, which sees the rows inserted before it in the same transaction,
 * as if they had come one after the other), then per tenant one statement
 * appending the audit records of all its INSERTs under one lock. One
 * COMMIT, one fsync for all of them; each outcome goes back to the
 * submission's own worker (its store event), which replies after the
 * Redis enqueue. Should the transaction fail, every submission in it is
 * retried alone, so one bad statement cannot fail its neighbours.
 * Only worker 0's thread reads a request while it is handed over, and
 * only fields set before the hand-over (tenant, ids, quota, key, API). */
#define STORE_BATCH_MAX 128

struct fe_store {
	struct fe_req *r;
	struct fe_worker *owner;
	uint64_t queued_ms;
	char *text;  /* the rows (JSON) */
	char maxq[24];
	struct fe_db_stmt insert;
	/* the outcome, filled on worker 0 */
	int rows;
	bool unavailable;
	char error[256];
	struct fe_store *next;
};

struct store_batch {
	struct fe_worker *w;
	size_t n;
	bool grouped; /* part of the group commit (store_busy) */
	struct fe_store *items[];
};

/* Guards every worker's store_head/store_tail/store_n (the queue, on
 * worker 0), store_done_head/tail (outcomes for that worker) and the
 * creation of store_ev. */
static pthread_mutex_t store_mu = PTHREAD_MUTEX_INITIALIZER;

static void store_item_free(struct fe_store *it)
{
	free(it->text);
	free(it);
}

static void store_send(struct fe_worker *w, struct fe_store **items, size_t n, bool grouped);
static void on_store_event(evutil_socket_t fd, short what, void *arg);

/* w's store event, made on first use (under store_mu). */
static struct event *store_ev(struct fe_worker *w)
{
	if (!w->store_ev)
		w->store_ev = event_new(w->base, -1, 0, on_store_event, w);
	return w->store_ev;
}

static struct fe_worker *store_hub(struct fe_worker *w)
{
	return w->app->workers && w->app->nworkers > 0 ? w->app->workers[0] : w;
}

/* On worker 0: hands it back to its worker. */
static void store_done(struct fe_store *it)
{
	struct fe_worker *o = it->owner;
	pthread_mutex_lock(&store_mu);
	it->next = NULL;
	if (o->store_done_tail)
		o->store_done_tail->next = it;
	else
		o->store_done_head = it;
	o->store_done_tail = it;
	struct event *ev = store_ev(o);
	pthread_mutex_unlock(&store_mu);
	if (ev)
		event_active(ev, 0, 0);
}

static int cmp_tenant(const void *a, const void *b)
{
	const struct fe_store *x = *(struct fe_store *const *)a, *y = *(struct fe_store *const *)b;
	return strcmp(x->r->tenant_id, y->r->tenant_id);
}

/* Worker 0's connection may still be connecting (start-up, a reconnect)
 * when another worker's is up: submissions wait for it this long before
 * they fail with 503. */
#define STORE_CONNECT_WAIT_MS 2000

/* On worker 0: the next transaction, if one is waiting and none is in
 * flight. */
static void store_next(struct fe_worker *w)
{
	struct fe_store *items[STORE_BATCH_MAX];
	size_t n = 0;
	pthread_mutex_lock(&store_mu);
	if (!w->store_busy && !w->closing && w->store_head && !fe_db_ready(w->db) &&
	    fe_now_ms() - w->store_head->queued_ms < STORE_CONNECT_WAIT_MS) {
		struct timeval tv = { 0, 20000 };
		if (w->store_ev)
			event_add(w->store_ev, &tv);
		pthread_mutex_unlock(&store_mu);
		return;
	}
	if (!w->store_busy && !w->closing) {
		while (w->store_head && n < STORE_BATCH_MAX) {
			items[n++] = w->store_head;
			w->store_head = w->store_head->next;
			w->store_n--;
		}
		if (!w->store_head)
			w->store_tail = NULL;
		if (n)
			w->store_busy = true;
	}
	pthread_mutex_unlock(&store_mu);
	if (n)
		store_send(w, items, n, true);
}

static void on_store_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_worker *w = arg;
	pthread_mutex_lock(&store_mu);
	struct fe_store *done = w->store_done_head;
	w->store_done_head = w->store_done_tail = NULL;
	pthread_mutex_unlock(&store_mu);
	while (done) {
		struct fe_store *next = done->next;
		on_inserted(done->r, done->rows, done->error[0] ? done->error : NULL, done->unavailable);
		store_item_free(done);
		done = next;
	}
	if (w == store_hub(w))
		store_next(w);
}

static void on_batch(void *arg, PGresult *const *res, int n, const char *error)
{
	struct store_batch *b = arg;
	struct fe_worker *w = b->w;
	if (error && b->n > 1 && !w->closing) {
		/* Nothing of it committed: each one again, on its own. */
		gv_warn(NULL, "group commit of %zu submissions failed (%s): retrying one by one", b->n, error);
		for (size_t i = 0; i < b->n; i++)
			store_send(w, &b->items[i], 1, false);
	} else {
		for (size_t i = 0; i < b->n; i++) {
			struct fe_store *it = b->items[i];
			int k = (int)i;
			it->rows = k < n && res[k] ? PQntuples(res[k]) : -1;
			if (error)
				snprintf(it->error, sizeof(it->error), "%s", error);
			store_done(it);
		}
	}
	if (b->grouped) {
		pthread_mutex_lock(&store_mu);
		w->store_busy = false;
		pthread_mutex_unlock(&store_mu);
		store_next(w);
	}
	free(b);
}

static void store_send(struct fe_worker *w, struct fe_store **items, size_t n, bool grouped)
{
	struct gv_err err;
	struct store_batch *b = malloc(sizeof(*b) + n * sizeof(b->items[0]));
	struct fe_db_stmt *s = calloc(2 * n, sizeof(*s));
	char **audit_text = calloc(n, sizeof(*audit_text));
	struct fe_req **reqs = malloc(n * sizeof(*reqs));
	size_t ngroups = 0;
	int rc = -1;
	if (!b || !s || !audit_text || !reqs) {
		free(b);
		free(s);
		free(audit_text);
		free(reqs);
		snprintf(err.msg, sizeof(err.msg), "out of memory");
		goto fail;
	}
	b->w = w;
	b->n = n;
	b->grouped = grouped;
	memcpy(b->items, items, n * sizeof(items[0]));
	/* One lock order for every transaction: tenants sorted. */
	if (n > 1)
		qsort(b->items, n, sizeof(b->items[0]), cmp_tenant);
	/* Every INSERT first (item i's is statement i), then per tenant one
	 * statement with the audit records of all its INSERTs. */
	for (size_t g = 0; g < n; ) {
		size_t e = g;
		while (e < n && !strcmp(b->items[e]->r->tenant_id, b->items[g]->r->tenant_id))
			e++;
		for (size_t i = g; i < e; i++) {
			s[i] = b->items[i]->insert;
			s[i].set_tenant = i == g ? b->items[i]->r->tenant_id : NULL;
			reqs[i - g] = b->items[i]->r;
		}
		struct fe_db_stmt *a = &s[n + ngroups];
		if (fe_audit_created_stmt(reqs, e - g, &audit_text[ngroups], a) < 0) {
			snprintf(err.msg, sizeof(err.msg), "out of memory");
			goto unsent;
		}
		a->set_tenant = b->items[g]->r->tenant_id;
		ngroups++;
		g = e;
	}
	rc = fe_db_txn(w->db, NULL, s, (int)(n + ngroups), on_batch, b, &err);
unsent:
	free(s);
	for (size_t i = 0; i < ngroups; i++)
		free(audit_text[i]);
	free(audit_text);
	free(reqs);
	if (rc == 0)
		return;
	items = b->items;
fail:
	for (size_t i = 0; i < n; i++) {
		items[i]->rows = -1;
		items[i]->unavailable = true;
		snprintf(items[i]->error, sizeof(items[i]->error), "%.*s", (int)sizeof(items[i]->error) - 1, err.msg);
		store_done(items[i]);
	}
	free(b);
	if (grouped) {
		pthread_mutex_lock(&store_mu);
		w->store_busy = false;
		pthread_mutex_unlock(&store_mu);
	}
}

/* Takes it (and the reference it holds on its request): queues it on
 * worker 0 and wakes that worker. */
static void store_submit(struct fe_worker *w, struct fe_store *it)
{
	struct fe_worker *hub = store_hub(w);
	it->owner = w;
	it->queued_ms = fe_now_ms();
	it->next = NULL;
	pthread_mutex_lock(&store_mu);
	struct event *ev = store_ev(hub);
	bool own = store_ev(w) != NULL;
	if (ev && own) {
		if (hub->store_tail)
			hub->store_tail->next = it;
		else
			hub->store_head = it;
		hub->store_tail = it;
		hub->store_n++;
	}
	pthread_mutex_unlock(&store_mu);
	if (!ev || !own) {
		on_inserted(it->r, -1, "out of memory", true);
		store_item_free(it);
		return;
	}
	event_active(ev, 0, 0);
}

/* At shutdown, every worker thread joined (workers are freed in order,
 * worker 0 first): worker 0 fails everything still queued, whoever's it
 * is; each worker finishes the outcomes handed back to it; each frees its
 * store event. */
void fe_store_abort(struct fe_worker *w)
{
	bool hub = w == store_hub(w);
	pthread_mutex_lock(&store_mu);
	struct fe_store *done = w->store_done_head, *queued = hub ? w->store_head : NULL;
	w->store_done_head = w->store_done_tail = NULL;
	if (hub) {
		w->store_head = w->store_tail = NULL;
		w->store_n = 0;
	}
	pthread_mutex_unlock(&store_mu);
	for (struct fe_store *it = done, *next; it; it = next) {
		next = it->next;
		on_inserted(it->r, it->rows, it->error[0] ? it->error : "shutting down", it->unavailable);
		store_item_free(it);
	}
	for (struct fe_store *it = queued, *next; it; it = next) {
		next = it->next;
		on_inserted(it->r, -1, "shutting down", true);
		store_item_free(it);
	}
	if (w->store_ev)
		event_free(w->store_ev);
	w->store_ev = NULL;
}

/* Checks the tenant's per-job ceilings; 0 ok, -1 replied 422. */
/* A limit the client left to the default is lowered to the tenant's
 * ceiling; one it asked for explicitly is checked against it (422). */
static void clamp_default(json_t *limits, const char *key, uint32_t *eff, int64_t ceiling)
{
	if (json_integer_value(json_object_get(limits, key)) == 0 && ceiling > 0 && *eff > ceiling) {
		*eff = (uint32_t)ceiling;
		json_object_set_new(limits, key, json_integer(ceiling));
	}
}

static int check_quota(struct fe_req *r, struct fe_job *job, struct fe_apierr *e)
{
	json_t *limits = json_object_get(job->spec, "limits");
	if (limits) {
		clamp_default(limits, "time_ms", &job->time_ms, r->quota.max_cpu_ms);
		clamp_default(limits, "wall_ms", &job->wall_ms, r->quota.max_wall_ms);
		clamp_default(limits, "memory_mb", &job->memory_mb, r->quota.max_memory_mb);
		clamp_default(limits, "output_kb", &job->output_kb, r->quota.max_output_kb);
	}
	struct tenant_job_request q = {
		.language = job->lang->id,
		.cpu_ms = job->time_ms,
		.wall_ms = job->wall_ms,
		.memory_mb = job->memory_mb,
		.output_kb = job->output_kb,
		.gpus = json_integer_value(json_object_get(job->spec, "gpus")),
	};
	struct tenant_quota_violation v;
	if (tenant_quota_check_job(&r->quota, &q, &v) != 0) {
		fe_audit_refusal(r, v.limit, 422, v.requested, v.allowed);
		return fe_apierr_set(e, 422, "quota_exceeded", "%s", v.message);
	}
	struct gv_jobspec spec;
	struct gv_err err;
	int rc = gv_jobspec_from_json(job->spec, &spec, &err);
	gv_jobspec_free(&spec);
	if (rc < 0)
		return fe_apierr_set(e, err.code == GV_ELIMIT ? 413 : 400,
				     err.code == GV_ELIMIT ? "too_large" : "invalid_request", "%s", err.msg);
	return 0;
}

/* Stores jobs (already validated; ids in r->batch_ids) in one statement,
 * then enqueues them. */
static void store(struct fe_req *r, json_t *rows, bool wait)
{
	struct gv_err err;
	char *text = gv_json_dump(rows, JSON_COMPACT, 512u * 1024 * 1024, NULL, &err);
	json_decref(rows);
	if (!text) {
		fe_reply_error(r, 500, "internal", "%s", err.msg);
		return;
	}
	struct fe_store *it = calloc(1, sizeof(*it));
	if (!it) {
		free(text);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	it->r = r;
	it->text = text;
	snprintf(it->maxq, sizeof(it->maxq), "%d", r->quota.max_queued);
	/* The INSERT and its audit records (submission.created, or
	 * quota.refused for max_queued; store_send) commit together. */
	fe_db_stmt_text(&it->insert, SQL_INSERT, 4, r->tenant_id, it->text, it->maxq, fe_api_name(r));
	if (wait) {
		snprintf(r->sid, sizeof(r->sid), "%s", r->batch_ids[0]);
		fe_wait_start(r, wait_wake);
		if (wait_timer(r, r->w->app->cfg->wait_timeout_ms, on_wait_timeout) < 0) {
			fe_wait_stop(r);
			store_item_free(it);
			fe_reply_error(r, 500, "internal", "timer setup failed");
			return;
		}
	}
	fe_req_ref(r);
	store_submit(r->w, it);
}

static json_t *row_of(const char *sid, const struct fe_job *job)
{
	return json_pack("{s:s,s:s,s:O}", "id", sid, "language", job->lang->id, "request", job->spec);
}

/* The most GPUs one alive executor declares (gavel:exec:<node> gpus,
 * heartbeat younger than ARGV[1] ms): a job asking for more can never be
 * placed, so it is refused at submit time (422), not left queued. */
static const char GPU_LARGEST_LUA[] =
	"local t = redis.call('TIME') "
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
	"local best = 0 "
	"for _, n in ipairs(redis.call('SMEMBERS', 'gavel:executors')) do "
	"  local h = redis.call('HMGET', 'gavel:exec:' .. n, 'heartbeat_ms', 'gpus') "
	"  if h[1] and now - tonumber(h[1]) < tonumber(ARGV[1]) and (tonumber(h[2]) or 0) > best then "
	"    best = tonumber(h[2]) end "
	"end "
	"return best";

struct gpu_check {
	struct fe_req *r;
	json_t *rows;
	bool wait;
	json_int_t gpus;
};

static void on_gpu_largest(void *arg, redisReply *reply)
{
	struct gpu_check *g = arg;
	struct fe_req *r = g->r;
	if (!reply || reply->type != REDIS_REPLY_INTEGER) {
		json_decref(g->rows);
		fe_reply_error(r, 503, "unavailable", "the executor registry (Redis) cannot be read: GPU jobs are "
			       "not accepted now");
	} else if (g->gpus > reply->integer) {
		json_decref(g->rows);
		fe_audit_refusal(r, "node_gpus", 422, g->gpus, reply->integer);
		fe_reply_error(r, 422, "quota_exceeded", "gpus: requested %lld, the largest executor node has %lld",
			       (long long)g->gpus, (long long)reply->integer);
	} else {
		store(r, g->rows, g->wait);
	}
	free(g);
	fe_req_unref(r);
}

static void gpu_node_check(struct fe_req *r, json_t *rows, bool wait, json_int_t gpus)
{
	struct gpu_check *g = calloc(1, sizeof(*g));
	if (!g) {
		json_decref(rows);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	*g = (struct gpu_check){ .r = r, .rows = rows, .wait = wait, .gpus = gpus };
	struct gv_err err;
	const char *argv[] = { "EVAL", GPU_LARGEST_LUA, "0", "15000" };
	fe_req_ref(r);
	if (fe_redis_command(r->w->redis, on_gpu_largest, g, 4, argv, NULL, &err) < 0)
		on_gpu_largest(g, NULL);
}

static void handle_create(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	json_t *body = read_body(r);
	if (!body)
		return;
	struct fe_job job;
	struct fe_apierr e;
	int rc;
	bool wait = false;
	if (r->api == FE_API_JUDGE0) {
		r->j0_base64 = fe_query_bool(r, "base64_encoded");
		wait = fe_query_bool(r, "wait");
		if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
			json_decref(body);
			fe_reply_apierr(r, &e);
			return;
		}
		rc = fe_j0_parse(body, r->j0_base64, &app->cat, &app->bounds, &job, &e);
	} else if (r->api == FE_API_PISTON) {
		wait = true;
		rc = fe_piston_parse(body, &app->cat, &app->bounds, &job, &e);
	} else {
		wait = fe_query_bool(r, "wait");
		rc = fe_native_parse(body, &app->cat, &app->bounds, &job, &e);
	}
	json_decref(body);
	if (rc < 0 || check_quota(r, &job, &e) < 0) {
		if (rc == 0)
			fe_job_clear(&job);
		fe_reply_apierr(r, &e);
		return;
	}
	r->lang = job.lang;
	r->batch_ids = calloc(1, sizeof(char *));
	char sid[FE_SID_BUF];
	new_sid(sid);
	if (!r->batch_ids || !(r->batch_ids[0] = strdup(sid))) {
		fe_job_clear(&job);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	r->batch_n = 1;
	json_int_t gpus = json_integer_value(json_object_get(job.spec, "gpus"));
	json_t *rows = json_pack("[o]", row_of(sid, &job));
	fe_job_clear(&job);
	if (!rows) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	if (json_object_get(json_object_get(json_array_get(rows, 0), "request"), "problem_id"))
		fe_problem_submission_check(r, rows, wait);
	else if (gpus > 0)
		gpu_node_check(r, rows, wait, gpus);
	else
		store(r, rows, wait);
}

void fe_submission_store(struct fe_req *r, json_t *rows, bool wait)
{
	store(r, rows, wait);
}

static void handle_batch_create(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	struct fe_apierr e;
	r->j0_base64 = fe_query_bool(r, "base64_encoded");
	json_t *body = read_body(r);
	if (!body)
		return;
	json_t *subs = json_object_get(body, "submissions");
	if (!json_is_array(subs) || json_array_size(subs) == 0) {
		json_decref(body);
		fe_reply_error(r, 400, "invalid_request", "field 'submissions': expected a non-empty array");
		return;
	}
	size_t n = json_array_size(subs);
	if (n > app->bounds.max_batch) {
		json_decref(body);
		fe_reply_error(r, 413, "too_large", "number of submissions in a batch should be less than or equal to %zu",
			       app->bounds.max_batch);
		return;
	}
	r->batch_result = json_array();
	r->batch_ids = calloc(n, sizeof(char *));
	json_t *rows = json_array();
	if (!r->batch_result || !r->batch_ids || !rows) {
		json_decref(body);
		json_decref(rows);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct fe_job job;
		if (fe_j0_parse(json_array_get(subs, i), r->j0_base64, &app->cat, &app->bounds, &job, &e) < 0 ||
		    check_quota(r, &job, &e) < 0) {
			if (job.spec)
				fe_job_clear(&job);
			json_array_append_new(r->batch_result,
					      json_pack("{s:{s:s,s:s}}", "error", "code", e.code, "message", e.msg));
			continue;
		}
		char sid[FE_SID_BUF];
		new_sid(sid);
		r->batch_ids[r->batch_n] = strdup(sid);
		if (!r->batch_ids[r->batch_n]) {
			fe_job_clear(&job);
			continue;
		}
		r->batch_n++;
		json_array_append_new(rows, row_of(sid, &job));
		json_array_append_new(r->batch_result, json_pack("{s:s}", "token", sid));
		fe_job_clear(&job);
	}
	json_decref(body);
	if (r->batch_n == 0) {
		json_decref(rows);
		json_t *out = r->batch_result;
		r->batch_result = NULL;
		fe_reply_json(r, 422, out);
		return;
	}
	store(r, rows, false);
}

/* ------------------------------------------------------------ reading */

static void on_get_row(struct fe_req *r, struct rowbuf *rb, const char *error)
{
	if (error) {
		reply_db_error(r, error);
		return;
	}
	if (!rb) {
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	answer_row(r, 200, rb);
}

static bool j0_needs_request(uint64_t f)
{
	uint64_t need = 1ull << FE_J0_SOURCE_CODE | 1ull << FE_J0_STDIN | 1ull << FE_J0_EXPECTED_OUTPUT |
			1ull << FE_J0_CPU_TIME_LIMIT | 1ull << FE_J0_WALL_TIME_LIMIT |
			1ull << FE_J0_MEMORY_LIMIT | 1ull << FE_J0_MAX_FILE_SIZE | 1ull << FE_J0_CALLBACK_URL |
			1ull << FE_J0_STDOUT; /* judged runs keep stdout per test */
	return (f & need) != 0;
}

static void handle_get(struct fe_req *r)
{
	const char *id = r->m.params[0];
	if (!sid_ok(id)) {
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	set_sid(r, id);
	if (r->api == FE_API_JUDGE0) {
		struct fe_apierr e;
		r->j0_base64 = fe_query_bool(r, "base64_encoded");
		if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
			fe_reply_apierr(r, &e);
			return;
		}
		fetch_row(r, j0_needs_request(r->j0_fields), on_get_row);
		return;
	}
	fetch_row(r, false, on_get_row);
}


/* The list's page and page size from the query, each clamped to its range
 * (page 1..100000, per_page 1..100, 20 when absent or not a number): a
 * number past long's range read as a negative page once. */
static long query_in_range(struct fe_req *r, const char *name, long def, long lo, long hi)
{
	const char *v = fe_query(r, name);
	if (!v || !*v)
		return def;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (*end)
		return def;
	if (errno == ERANGE)
		return n < 0 ? lo : hi;
	return n < lo ? lo : n > hi ? hi : n;
}

static void list_page(struct fe_req *r, long *page, long *per)
{
	*page = query_in_range(r, "page", 1, 1, 100000);
	*per = query_in_range(r, "per_page", 20, 1, 100);
}

static void on_many(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0]) {
		reply_db_error(r, error ? error : "no result");
		fe_req_unref(r);
		return;
	}
	struct fe_app *app = r->w->app;
	json_t *arr = json_array();
	bool list = r->m.route->id == FE_ROUTE_J0_LIST;
	int rows = PQntuples(res[0]);
	long long total = 0;
	if (list) {
		for (int i = 0; i < rows; i++) {
			struct rowbuf rb;
			row_load(res[0], i, &rb);
			total = rb.total;
			json_array_append_new(arr, fe_j0_render(&rb.row, r->j0_fields, r->j0_base64, &app->cat));
			row_clear(&rb);
		}
		long page, per;
		list_page(r, &page, &per);
		long pages = (long)((total + per - 1) / per);
		json_t *meta = json_pack("{s:i,s:o,s:o,s:i,s:I}", "current_page", (int)page, "next_page",
					 page < pages ? json_integer(page + 1) : json_null(), "prev_page",
					 page > 1 ? json_integer(page - 1) : json_null(), "total_pages", (int)pages,
					 "total_count", (json_int_t)total);
		fe_reply_json(r, 200, json_pack("{s:o,s:o}", "submissions", arr, "meta", meta));
		fe_req_unref(r);
		return;
	}
	/* Batch GET: answer in the order asked, null for ids that are not
	 * this tenant's (missing and foreign look the same). */
	for (size_t k = 0; k < r->batch_n; k++) {
		json_t *item = NULL;
		for (int i = 0; i < rows && !item; i++) {
			if (strcmp(PQgetvalue(res[0], i, 0), r->batch_ids[k]))
				continue;
			struct rowbuf rb;
			row_load(res[0], i, &rb);
			item = fe_j0_render(&rb.row, r->j0_fields, r->j0_base64, &app->cat);
			row_clear(&rb);
		}
		json_array_append_new(arr, item ? item : json_null());
	}
	fe_reply_json(r, 200, json_pack("{s:o}", "submissions", arr));
	fe_req_unref(r);
}

static void handle_batch_get(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	struct fe_apierr e;
	r->j0_base64 = fe_query_bool(r, "base64_encoded");
	if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
		fe_reply_apierr(r, &e);
		return;
	}
	const char *tokens = fe_query(r, "tokens");
	if (!tokens || !*tokens) {
		fe_reply_error(r, 400, "invalid_request", "query parameter 'tokens' is required");
		return;
	}
	r->batch_ids = calloc(app->bounds.max_batch, sizeof(char *));
	if (!r->batch_ids) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	size_t cap = strlen(tokens) + 3;
	char *arr = malloc(cap);
	if (!arr) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	size_t off = 0;
	arr[off++] = '{';
	for (const char *p = tokens; *p;) {
		size_t len = strcspn(p, ",");
		if (r->batch_n >= app->bounds.max_batch) {
			free(arr);
			fe_reply_error(r, 413, "too_large", "at most %zu tokens", app->bounds.max_batch);
			return;
		}
		char *t = strndup(p, len);
		if (!t) {
			free(arr);
			fe_reply_error(r, 500, "internal", "out of memory");
			return;
		}
		r->batch_ids[r->batch_n++] = t;
		/* Only valid ids go into the array literal: no quoting
		 * needed, and nothing else can reach the SQL. */
		if (sid_ok(t)) {
			if (off > 1)
				arr[off++] = ',';
			memcpy(arr + off, t, len);
			off += len;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	arr[off++] = '}';
	arr[off] = '\0';
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, SQL_GET_MANY, 2, r->tenant_id, arr);
	struct gv_err err;
	fe_req_ref(r);
	int rc = fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_many, r, &err);
	free(arr);
	if (rc < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

static void handle_list(struct fe_req *r)
{
	struct fe_apierr e;
	r->j0_base64 = fe_query_bool(r, "base64_encoded");
	if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
		fe_reply_apierr(r, &e);
		return;
	}
	long page, per;
	list_page(r, &page, &per);
	char lim[24], off[24];
	snprintf(lim, sizeof(lim), "%ld", per);
	snprintf(off, sizeof(off), "%ld", (page - 1) * per);
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, SQL_LIST, 3, r->tenant_id, lim, off);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_many, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

static void on_delete_check(struct fe_req *r, struct rowbuf *rb, const char *error)
{
	if (error)
		reply_db_error(r, error);
	else if (!rb)
		fe_reply_error(r, 404, "not_found", "no such submission");
	else
		fe_reply_error(r, 400, "not_finished",
			       "submission cannot be deleted because its status is %s", rb->row.status);
}

static void on_deleted2(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0]) {
		reply_db_error(r, error ? error : "no result");
	} else if (PQntuples(res[0]) == 0) {
		fetch_row(r, false, on_delete_check);
	} else {
		struct rowbuf rb;
		row_load(res[0], 0, &rb);
		answer_row(r, 200, &rb);
		row_clear(&rb);
	}
	fe_req_unref(r);
}

static void handle_delete(struct fe_req *r)
{
	const char *id = r->m.params[0];
	if (!sid_ok(id)) {
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	set_sid(r, id);
	struct fe_apierr e;
	r->j0_base64 = fe_query_bool(r, "base64_encoded");
	if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
		fe_reply_apierr(r, &e);
		return;
	}
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, SQL_DELETE, 2, r->tenant_id, r->sid);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_deleted2, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* ----------------------------------------------------------------- SSE */

static void sse_event(struct fe_req *r, const char *event, const char *data, size_t len)
{
	if (r->gone || !r->sse)
		return;
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return;
	evbuffer_add_printf(b, "event: %s\ndata: ", event);
	/* One data line: JSON has no raw newlines, but program bytes in a
	 * payload must not be able to start a new field. */
	for (size_t i = 0; i < len; i++)
		evbuffer_add(b, data[i] == '\n' || data[i] == '\r' ? " " : &data[i], 1);
	evbuffer_add(b, "\n\n", 2);
	evhttp_send_reply_chunk(r->req, b);
	evbuffer_free(b);
}

static void sse_finish(struct fe_req *r)
{
	fe_req_ref(r);
	fe_wait_stop(r);
	if (!r->replied) {
		r->replied = true;
		/* The connection stays open after the stream (keep-alive). */
		fe_req_detach_conn(r);
		evhttp_send_reply_end(r->req);
		fe_metrics_request(r->w->app->metrics, r->m.route->id, 200, fe_now_us() - r->t0_us);
		fe_req_unref(r);
	}
	fe_req_unref(r);
}

static void on_sse_row(struct fe_req *r, struct rowbuf *rb, const char *error)
{
	if (!r->waiting)
		return;
	if (error || !rb)
		return;
	if (!row_final(&rb->row))
		return;
	json_t *j = fe_native_render(&rb->row);
	struct gv_err err;
	char *t = j ? gv_json_dump(j, JSON_COMPACT, 512u * 1024 * 1024, NULL, &err) : NULL;
	json_decref(j);
	if (t)
		sse_event(r, "done", t, strlen(t));
	free(t);
	sse_finish(r);
}

static void sse_wake(struct fe_req *r)
{
	if (!r->fetching)
		fetch_row(r, false, on_sse_row);
}

static void on_sse_ping(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_req *r = arg;
	if (r->gone || !r->waiting)
		return;
	struct evbuffer *b = evbuffer_new();
	if (b) {
		evbuffer_add_printf(b, ": ping\n\n");
		evhttp_send_reply_chunk(r->req, b);
		evbuffer_free(b);
	}
	struct timeval tv = { 15, 0 };
	evtimer_add(r->ping, &tv);
}

static void on_sse_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_req *r = arg;
	if (r->waiting)
		sse_finish(r);
}

static void on_sse_first(struct fe_req *r, struct rowbuf *rb, const char *error)
{
	if (error) {
		fe_wait_stop(r);
		reply_db_error(r, error);
		return;
	}
	if (!rb) {
		fe_wait_stop(r);
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
	evhttp_add_header(h, "Content-Type", "text/event-stream");
	evhttp_add_header(h, "Cache-Control", "no-cache");
	evhttp_add_header(h, "X-Accel-Buffering", "no");
	struct evhttp_connection *evcon = evhttp_request_get_connection(r->req);
	if (evcon)
		evhttp_connection_set_timeout(evcon, (int)(r->w->app->cfg->sse_max_duration_ms / 1000) + 60);
	evhttp_send_reply_start(r->req, 200, "OK");
	r->sse = true;
	char first[128];
	snprintf(first, sizeof(first), "{\"event\":\"%s\"}",
		 !strcmp(rb->row.status, "running") ? "running" : "queued");
	if (!row_final(&rb->row)) {
		sse_event(r, !strcmp(rb->row.status, "running") ? "running" : "queued", first, strlen(first));
		r->ping = evtimer_new(r->w->base, on_sse_ping, r);
		struct timeval tv = { 15, 0 };
		if (r->ping)
			evtimer_add(r->ping, &tv);
		wait_timer(r, r->w->app->cfg->sse_max_duration_ms, on_sse_deadline);
		return;
	}
	on_sse_row(r, rb, NULL);
}

static void handle_events(struct fe_req *r)
{
	const char *id = r->m.params[0];
	if (!sid_ok(id)) {
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	set_sid(r, id);
	char ch[GV_QUEUE_KEY_MAX];
	struct gv_err err;
	/* Subscribe before reading the row, so no event falls in between. */
	if (gv_queue_key_events(ch, sizeof(ch), r->sid, &err) < 0 ||
	    fe_redis_subscribe(r->w->redis, ch, &err) < 0) {
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
		return;
	}
	r->sse_subscribed = true;
	fe_wait_start(r, sse_wake);
	fetch_row(r, false, on_sse_first);
}

/* ------------------------------------------------------ stats & health */

struct fe_stats {
	bool redis_ok;
	long long nodes, alive, capacity, burst, running, queued;
	json_t *tenants; /* {tid: depth} */
	bool pg_ok;
	int pending;
};

static void stats_done(struct fe_req *r, struct fe_stats *st);

static void on_stats(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	struct fe_stats *st = r->stats;
	if (reply && reply->type == REDIS_REPLY_ARRAY && reply->elements >= 6) {
		st->redis_ok = true;
		st->nodes = reply->element[0]->integer;
		st->alive = reply->element[1]->integer;
		st->capacity = reply->element[2]->integer;
		st->running = reply->element[3]->integer;
		st->queued = reply->element[4]->integer;
		st->burst = reply->element[5]->integer;
		for (size_t i = 6; i + 1 < reply->elements; i += 2)
			if (reply->element[i]->type == REDIS_REPLY_STRING)
				json_object_set_new(st->tenants, reply->element[i]->str,
						    json_integer(reply->element[i + 1]->integer));
	}
	if (--st->pending == 0)
		stats_done(r, st);
	fe_req_unref(r);
}

static void on_pg_ping(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	struct fe_stats *st = r->stats;
	st->pg_ok = !error && n == 1 && res[0];
	if (--st->pending == 0)
		stats_done(r, st);
	fe_req_unref(r);
}

static void handle_stats(struct fe_req *r)
{
	struct fe_stats *st = calloc(1, sizeof(*st));
	if (!st || !(st->tenants = json_object())) {
		free(st);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	r->stats = st; /* freed by stats_done, or by the cleanup if never done */
	st->pending = 2;
	struct gv_err err;
	char hb[24];
	snprintf(hb, sizeof(hb), "%d", 15000);
	const char *argv[] = { "EVAL", STATS_LUA, "0", hb };
	fe_req_ref(r);
	if (fe_redis_command(r->w->redis, on_stats, r, 4, argv, NULL, &err) < 0) {
		st->pending--;
		fe_req_unref(r);
	}
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, "SELECT 1", 0);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, NULL, &s, 1, on_pg_ping, r, &err) < 0) {
		st->pending--;
		fe_req_unref(r);
	}
	if (st->pending == 0)
		stats_done(r, st);
}

static void stats_done(struct fe_req *r, struct fe_stats *st)
{
	struct fe_app *app = r->w->app;
	r->stats = NULL;
	switch (r->m.route->id) {
	case FE_ROUTE_V1_HEALTH: {
		bool ok = st->pg_ok && st->redis_ok;
		json_t *j = json_pack("{s:s,s:{s:b},s:{s:b},s:{s:I,s:I,s:I,s:I,s:I},s:I}", "status",
				      !ok ? "unavailable" : st->alive > 0 ? "ok" : "degraded", "postgres", "ok",
				      st->pg_ok, "redis", "ok", st->redis_ok, "executors", "registered",
				      (json_int_t)st->nodes, "alive", (json_int_t)st->alive, "capacity",
				      (json_int_t)st->capacity, "burst", (json_int_t)st->burst, "running",
				      (json_int_t)st->running, "queued", (json_int_t)st->queued);
		fe_reply_json(r, ok ? 200 : 503, j);
		break;
	}
	case FE_ROUTE_J0_WORKERS: {
		long long idle = st->capacity - st->running;
		fe_reply_json(r, 200,
			      json_pack("[{s:s,s:I,s:I,s:I,s:I,s:i,s:i}]", "queue", "default", "size",
					(json_int_t)st->queued, "available", (json_int_t)st->alive, "idle",
					(json_int_t)(idle < 0 ? 0 : idle), "working", (json_int_t)st->running,
					"paused", 0, "failed", 0));
		break;
	}
	default: {
		struct evbuffer *b = evbuffer_new();
		if (!b) {
			fe_reply_error(r, 500, "internal", "out of memory");
			break;
		}
		fe_metrics_render(app->metrics, atomic_load(&app->connections), b);
		evbuffer_add_printf(b, "# HELP gavel_up_postgres PostgreSQL answered this frontend.\n"
				       "# TYPE gavel_up_postgres gauge\ngavel_up_postgres %d\n", st->pg_ok);
		evbuffer_add_printf(b, "# HELP gavel_up_redis Redis answered this frontend.\n"
				       "# TYPE gavel_up_redis gauge\ngavel_up_redis %d\n", st->redis_ok);
		evbuffer_add_printf(b, "# HELP gavel_executors Executors registered and alive.\n"
				       "# TYPE gavel_executors gauge\n"
				       "gavel_executors{state=\"registered\"} %lld\n"
				       "gavel_executors{state=\"alive\"} %lld\n", st->nodes, st->alive);
		evbuffer_add_printf(b, "# HELP gavel_executor_slots Sandbox slots of alive executors: capacity the regular ones "
				       "(executor.max_parallel), running the jobs in regular and burst slots.\n"
				       "# TYPE gavel_executor_slots gauge\n"
				       "gavel_executor_slots{state=\"capacity\"} %lld\n"
				       "gavel_executor_slots{state=\"running\"} %lld\n", st->capacity, st->running);
		evbuffer_add_printf(b, "# HELP gavel_executor_burst_slots Burst slots of alive executors "
				       "(executor.burst_slots): beyond capacity, only for tenants below their fair share.\n"
				       "# TYPE gavel_executor_burst_slots gauge\n"
				       "gavel_executor_burst_slots %lld\n", st->burst);
		evbuffer_add_printf(b, "# HELP gavel_queue_depth Submissions waiting in a tenant's queue.\n"
				       "# TYPE gavel_queue_depth gauge\n");
		const char *tid;
		json_t *v;
		json_object_foreach(st->tenants, tid, v) {
			if (gv_queue_tid_ok(tid))
				evbuffer_add_printf(b, "gavel_queue_depth{tenant=\"%s\"} %lld\n", tid,
						    (long long)json_integer_value(v));
		}
		fe_reply_raw(r, 200, "text/plain; version=0.0.4", b);
		evbuffer_free(b);
	}
	}
	stats_free(st);
}

static void stats_free(struct fe_stats *st)
{
	json_decref(st->tenants);
	free(st);
}

/* ------------------------------------------------------ static answers */

/* Every language of the catalog; "available" says whether a live executor
 * offers it, "version" is what that executor probed (null when none). */
static json_t *v1_languages(const struct fe_app *app, const struct fe_probed *p)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < app->cat.n; i++) {
		const struct lang_def *l = app->cat.lang[i];
		bool offered = p->known && p->version[i][0];
		char v[LANG_STR_MAX];
		fe_catalog_display_version(&app->cat, p, i, v, sizeof(v));
		json_t *ext = json_array();
		for (char **e = l->extensions; e && *e; e++)
			json_array_append_new(ext, json_string(*e));
		json_t *lim = json_pack("{s:{s:i,s:i,s:i,s:i},s:{s:i,s:i,s:i,s:i}}", "defaults", "time_ms",
					(int)l->defaults.time_ms, "wall_ms", (int)l->defaults.wall_ms,
					"memory_mb", (int)l->defaults.memory_mb, "output_kb",
					(int)l->defaults.output_kb, "max", "time_ms", (int)l->max.time_ms,
					"wall_ms", (int)l->max.wall_ms, "memory_mb", (int)l->max.memory_mb,
					"output_kb", (int)l->max.output_kb);
		int j0 = app->cat.judge0_id[i];
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:o,s:b,s:s,s:o,s:o,s:b,s:o}", "id", l->id, "name",
						   l->name, "display_version", v, "version",
						   offered ? json_string(p->version[i]) : json_null(), "available",
						   offered, "source_file", l->source, "extensions", ext, "judge0_id",
						   j0 ? json_integer(j0) : json_null(), "compiled",
						   l->compile != NULL, "limits", lim));
	}
	return a;
}

static void languages_reply(struct fe_req *r, const struct fe_probed *p)
{
	struct fe_app *app = r->w->app;
	switch (r->m.route->id) {
	case FE_ROUTE_V1_LANGUAGES: fe_reply_json(r, 200, v1_languages(app, p)); return;
	case FE_ROUTE_J0_LANGUAGES: fe_reply_json(r, 200, fe_j0_languages(&app->cat, p)); return;
	case FE_ROUTE_J0_LANGUAGE: {
		char *end;
		long id = strtol(r->m.params[0], &end, 10);
		json_t *j = *end || id <= 0 || id > 1000000 ? NULL : fe_j0_language(&app->cat, (int)id, p);
		if (!j)
			fe_reply_error(r, 404, "not_found", "no such language");
		else
			fe_reply_json(r, 200, j);
		return;
	}
	case FE_ROUTE_PISTON_RUNTIMES: fe_reply_json(r, 200, fe_piston_runtimes(&app->cat, p)); return;
	default: fe_reply_error(r, 404, "not_found", "no such route"); return;
	}
}

/* MGET gavel:lang:<id> answered: what live executors offer, as they probed
 * it (common/queue.h). Versions are copied only when printable and short. */
static void on_lang_versions(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	struct fe_app *app = r->w->app;
	struct fe_probed *p = calloc(1, sizeof(*p));
	if (!p) {
		fe_reply_error(r, 500, "internal", "out of memory");
	} else if (reply && reply->type == REDIS_REPLY_ARRAY && reply->elements == app->cat.n) {
		p->known = true;
		for (size_t i = 0; i < app->cat.n; i++) {
			const redisReply *e = reply->element[i];
			if (!e || e->type != REDIS_REPLY_STRING || e->len == 0 || e->len >= sizeof(p->version[i]))
				continue;
			bool printable = true;
			for (size_t k = 0; k < e->len; k++)
				printable &= (unsigned char)e->str[k] >= 0x20 && (unsigned char)e->str[k] < 0x7f;
			if (printable)
				memcpy(p->version[i], e->str, e->len + 1);
		}
		fe_catalog_probed_set(&app->cat, p);
		languages_reply(r, p);
	} else {
		fe_reply_error(r, 503, "unavailable", "the languages executors offer cannot be read (Redis)");
	}
	free(p);
	fe_req_unref(r);
}

/* Language listings show what live executors probed: one MGET of
 * gavel:lang:<id> for every catalog language. */
static void handle_languages(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	size_t n = app->cat.n;
	const char **argv = calloc(n + 1, sizeof(*argv));
	char(*keys)[GV_QUEUE_KEY_MAX] = calloc(n ? n : 1, sizeof(*keys));
	if (!argv || !keys) {
		free(argv);
		free(keys);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	argv[0] = "MGET";
	for (size_t i = 0; i < n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "%s%s", GV_QUEUE_LANG_PREFIX, app->cat.lang[i]->id);
		argv[i + 1] = keys[i];
	}
	struct gv_err err;
	fe_req_ref(r);
	if (fe_redis_command(r->w->redis, on_lang_versions, r, (int)n + 1, argv, NULL, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "the languages executors offer cannot be read (Redis): %s",
			       err.msg);
	}
	free(argv);
	free(keys);
}

void fe_handle(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	switch (r->m.route->id) {
	case FE_ROUTE_ROOT:
		fe_reply_json(r, 200, json_pack("{s:s,s:s,s:[sss]}", "service", "gavel", "openapi",
						"/v1/openapi.json", "apis", "native /v1", "judge0 1.13.1",
						"piston v2"));
		return;
	case FE_ROUTE_V1_LANGUAGES:
	case FE_ROUTE_J0_LANGUAGES:
	case FE_ROUTE_J0_LANGUAGE:
	case FE_ROUTE_PISTON_RUNTIMES: handle_languages(r); return;
	case FE_ROUTE_V1_OPENAPI: {
		struct evbuffer *b = evbuffer_new();
		if (!b) {
			fe_reply_error(r, 500, "internal", "out of memory");
			return;
		}
		evbuffer_add(b, fe_openapi_json, strlen(fe_openapi_json));
		fe_reply_raw(r, 200, "application/json", b);
		evbuffer_free(b);
		return;
	}
	case FE_ROUTE_V1_HEALTH:
	case FE_ROUTE_METRICS:
	case FE_ROUTE_J0_WORKERS: handle_stats(r); return;
	case FE_ROUTE_V1_SUBMIT:
	case FE_ROUTE_J0_CREATE:
	case FE_ROUTE_PISTON_EXECUTE: handle_create(r); return;
	case FE_ROUTE_V1_SUBMISSION:
	case FE_ROUTE_J0_GET: handle_get(r); return;
	case FE_ROUTE_V1_EVENTS: handle_events(r); return;
	case FE_ROUTE_V1_AUDIT: fe_handle_audit(r); return;
	case FE_ROUTE_V1_USAGE: fe_handle_usage(r); return;
	case FE_ROUTE_V1_PROBLEMS_CREATE:
	case FE_ROUTE_V1_PROBLEMS_LIST:
	case FE_ROUTE_V1_PROBLEM:
	case FE_ROUTE_V1_PROBLEM_PUT:
	case FE_ROUTE_V1_PROBLEM_DELETE: fe_handle_problems(r); return;
	case FE_ROUTE_J0_LIST: handle_list(r); return;
	case FE_ROUTE_J0_DELETE: handle_delete(r); return;
	case FE_ROUTE_J0_BATCH_CREATE: handle_batch_create(r); return;
	case FE_ROUTE_J0_BATCH_GET: handle_batch_get(r); return;
	case FE_ROUTE_J0_STATUSES: fe_reply_json(r, 200, fe_j0_statuses()); return;
	case FE_ROUTE_J0_ABOUT: fe_reply_json(r, 200, fe_j0_about()); return;
	case FE_ROUTE_J0_CONFIG_INFO:
		fe_reply_json(r, 200, fe_j0_config_info(&app->cat, &app->bounds, true));
		return;
	default: fe_reply_error(r, 404, "not_found", "no such route"); return;
	}
}
