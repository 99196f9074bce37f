/* Group commit of submission INSERTs. Separate from the routes because
 * it is a process-wide pipeline with its own lock and thread hand-offs,
 * not part of any one request:
 *
 * A durable POST costs one WAL flush (fsync) at its COMMIT, and the
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
 * only fields set before the hand-over (tenant, ids, quota, key, API,
 * anonymous and client). */
#include "frontend/commit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "frontend/api_tenant.h"

/* Inserts every element of $2 (a JSON array of {id, language, request})
 * for tenant $1, made through API $4 (anonymously through the tenant's
 * playground when $5), unless that would take the tenant's
 * queued submissions over $3 (the max_queued quota): then nothing is
 * inserted. The queued count is the one triggers keep (migration 0008):
 * counting the rows would cost a visit of every queued row per POST. */
static const char SQL_INSERT[] =
	"INSERT INTO submissions (id, tenant_id, language, source, request, api, problem_id, problem_version, "
	"playground, student, assignment) "
	"SELECT e->>'id', $1::uuid, e->>'language', "
	"convert_to(e->'request'->'files'->0->>'content', 'UTF8'), e->'request', $4, "
	"e->'request'->>'problem_id', (e->'request'->>'problem_version')::int, $5::boolean, "
	"e->'request'->>'student', e->'request'->>'assignment' "
	"FROM jsonb_array_elements($2::jsonb) e "
	"WHERE coalesce((SELECT queued FROM tenant_queue_counts WHERE tenant_id = $1::uuid), 0) "
	"+ jsonb_array_length($2::jsonb) <= $3::int RETURNING id";

#define STORE_BATCH_MAX 128

struct fe_store {
	struct fe_req *r;
	struct fe_worker *owner;
	uint64_t queued_ms;
	char *text;  /* the rows (JSON) */
	char maxq[24];
	struct fe_db_stmt insert;
	fe_store_done_fn done;
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

void fe_store_free(struct fe_store *it)
{
	free(it->text);
	free(it);
}

struct fe_store *fe_store_new(struct fe_req *r, char *text, fe_store_done_fn done)
{
	struct fe_store *it = calloc(1, sizeof(*it));
	if (!it) {
		free(text);
		return NULL;
	}
	it->r = r;
	it->text = text;
	it->done = done;
	snprintf(it->maxq, sizeof(it->maxq), "%d", r->quota.max_queued);
	/* The INSERT and its audit records (submission.created, or
	 * quota.refused for max_queued; store_send) commit together. */
	fe_db_stmt_text(&it->insert, SQL_INSERT, 5, r->tenant_id, it->text, it->maxq, fe_api_name(r),
			r->anonymous ? "true" : "false");
	return it;
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
		done->done(done->r, done->rows, done->error[0] ? done->error : NULL, done->unavailable);
		fe_store_free(done);
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
		/* fail: frees b (NULL or not) and fails the caller's items. */
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
void fe_store_submit(struct fe_worker *w, struct fe_store *it)
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
		it->done(it->r, -1, "out of memory", true);
		fe_store_free(it);
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
		it->done(it->r, it->rows, it->error[0] ? it->error : "shutting down", it->unavailable);
		fe_store_free(it);
	}
	for (struct fe_store *it = queued, *next; it; it = next) {
		next = it->next;
		it->done(it->r, -1, "shutting down", true);
		fe_store_free(it);
	}
	if (w->store_ev)
		event_free(w->store_ev);
	w->store_ev = NULL;
}

/* Checks the tenant's per-job ceilings; 0 ok, -1 replied 422. */
