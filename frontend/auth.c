/* Who is asking: the API key a request presents (header, or the query
 * string where a browser has no other way), looked up by its peppered hash
 * in PostgreSQL through a small per-worker cache (frontend.auth_cache_ttl,
 * at most 1 s), the tenant's decision (disabled, expired, revoked), then
 * the tenant's token-bucket rate limit in Redis. Separate from the request
 * pipeline in server.c: this is the one place that decides whether a
 * request may reach a handler, and the connection guard's early key check
 * (conn.c) shares its cache. */
#include "frontend/auth.h"

#include <event2/keyvalq_struct.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/log.h"
#include "frontend/api_tenant.h"
#include "frontend/conn.h"
#include "frontend/cors.h"
#include "frontend/metrics.h"

static void on_script_loaded(void *arg, redisReply *reply)
{
	struct fe_worker *w = arg;
	w->rl_sha_loading = false;
	if (reply && reply->type == REDIS_REPLY_STRING && reply->len == 40) {
		memcpy(w->rl_sha, reply->str, 40);
		w->rl_sha[40] = '\0';
	}
}

int fe_ratelimit_send(struct fe_req *r, struct tenant_ratelimit_args *a, bool eval, fe_redis_cb cb)
{
	struct fe_worker *w = r->w;
	struct gv_err err;
	if (!eval && w->rl_sha[0]) {
		a->argv[0] = "EVALSHA";
		a->argvlen[0] = 7;
		a->argv[1] = w->rl_sha;
		a->argvlen[1] = 40;
	} else if (!w->rl_sha_loading && !w->rl_sha[0]) {
		const char *load[] = { "SCRIPT", "LOAD", TENANT_RATELIMIT_SCRIPT };
		if (fe_redis_command(w->redis, on_script_loaded, w, 3, load, NULL, &err) == 0)
			w->rl_sha_loading = true;
	}
	fe_req_ref(r);
	if (fe_redis_command(w->redis, cb, r, a->argc, a->argv, a->argvlen, &err) == 0)
		return 0;
	fe_req_unref(r);
	return -1;
}

static void on_ratelimit(void *arg, redisReply *reply);

/* Sends r's tenant's token-bucket command (fe_ratelimit_send). */
static int send_ratelimit(struct fe_req *r, bool eval)
{
	struct tenant_ratelimit_args a;
	struct gv_err err;
	if (tenant_ratelimit_args(r->tenant_id, &r->quota, 1, &a, &err) < 0)
		return -1;
	return fe_ratelimit_send(r, &a, eval, on_ratelimit);
}

static void on_ratelimit(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	struct tenant_ratelimit_result rl;
	struct gv_err err;
	if (reply && reply->type == REDIS_REPLY_ERROR && !strncmp(reply->str, "NOSCRIPT", 8)) {
		/* Redis lost its scripts (restart, SCRIPT FLUSH): EVAL this
		 * one, which loads it again, and forget the hash. */
		r->w->rl_sha[0] = '\0';
		if (send_ratelimit(r, true) == 0) {
			fe_req_unref(r);
			return;
		}
		reply = NULL;
	}
	if (reply && tenant_ratelimit_parse_reply(reply, &rl, &err) == 0) {
		rl.limit = r->quota.burst;
		snprintf(r->rl_limit, sizeof(r->rl_limit), "%lld", (long long)rl.limit);
		snprintf(r->rl_remaining, sizeof(r->rl_remaining), "%lld", (long long)rl.remaining);
		snprintf(r->rl_reset, sizeof(r->rl_reset), "%lld", (long long)rl.reset_s);
		if (!rl.allowed) {
			char ra[24];
			snprintf(ra, sizeof(ra), "%lld", (long long)rl.retry_after_s);
			evhttp_add_header(evhttp_request_get_output_headers(r->req), "Retry-After", ra);
			atomic_fetch_add(&r->w->app->metrics->rate_limited, 1);
			fe_audit_refusal(r, "requests_per_second", 429, 1, r->quota.requests_per_second);
			fe_reply_error(r, 429, "rate_limited", "request rate above %d per second",
				       r->quota.requests_per_second);
			fe_req_unref(r);
			return;
		}
	} else {
		/* Fail open: Redis trouble must not take the API down; the
		 * per-job ceilings and max_queued still hold. */
		gv_warn(NULL, "rate limit unavailable: %s", reply ? err.msg : "redis down");
	}
	fe_dispatch(r);
	fe_req_unref(r);
}

static void auth_decided(struct fe_req *r, const struct fe_auth_entry *e)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	enum tenant_auth_decision d = tenant_auth_decide(&e->row, (int64_t)ts.tv_sec);
	if (d != TENANT_AUTH_OK) {
		atomic_fetch_add(&r->w->app->metrics->auth_failures, 1);
		if (tenant_auth_http_status(d) == 401)
			evhttp_add_header(evhttp_request_get_output_headers(r->req), "WWW-Authenticate",
					  "Bearer");
		fe_reply_error(r, tenant_auth_http_status(d), tenant_auth_error_code(d), "%s",
			       tenant_auth_message(d));
		return;
	}
	if (r->key_in_query && !fe_query_key_allowed(r->m.route->id, &e->quota)) {
		atomic_fetch_add(&r->w->app->metrics->auth_failures, 1);
		evhttp_add_header(evhttp_request_get_output_headers(r->req), "WWW-Authenticate", "Bearer");
		fe_reply_error(r, 401, tenant_auth_error_code(TENANT_AUTH_MALFORMED),
			       "this tenant does not take API keys in the query string here (its browser_clients "
			       "setting is off; allow_query_key covers only GET /v1/submissions/{id}/events): send "
			       "X-Auth-Token or Authorization: Bearer");
		return;
	}
	memcpy(r->tenant_id, e->row.tenant_id, sizeof(r->tenant_id));
	memcpy(r->key_id, e->row.key_id, sizeof(r->key_id));
	r->quota = e->quota;
	if (!fe_cors_admit(r))
		return;
	if (r->quota.requests_per_second > 0 && send_ratelimit(r, false) == 0)
		return;
	fe_dispatch(r);
}

struct auth_pending {
	struct fe_req *r;
	uint64_t sent_ms;
};

/* The worker's cached answer for a key hash, when still fresh; NULL
 * otherwise. */
static struct fe_auth_entry *cached_key(struct fe_worker *w, const unsigned char hash[TENANT_KEY_HASH_LEN],
					uint64_t now)
{
	struct fe_auth_entry *e = &w->auth_cache[hash[0]];
	uint64_t ttl = w->app->cfg->auth_cache_ttl_ms;
	if (ttl > TENANT_AUTH_CACHE_MAX_MS)
		ttl = TENANT_AUTH_CACHE_MAX_MS;
	return e->used && tenant_key_hash_equal(e->hash, hash) && now - e->fetched_ms < ttl ? e : NULL;
}

/* Sends the key lookup for hash (which must outlive the query) on the
 * worker's database connection; cb gets the row. */
static int look_up_key(struct fe_worker *w, const unsigned char hash[TENANT_KEY_HASH_LEN], fe_db_cb cb, void *arg,
		       struct gv_err *err)
{
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, TENANT_SQL_KEY_LOOKUP, 1, (const char *)hash);
	s.lengths[0] = TENANT_KEY_HASH_LEN;
	s.formats[0] = 1;
	return fe_db_txn(w->db, NULL, &s, 1, cb, arg, err);
}

static void on_auth_row(void *arg, PGresult *const *res, int n, const char *error)
{
	struct auth_pending *p = arg;
	struct fe_req *r = p->r;
	uint64_t sent = p->sent_ms;
	free(p);
	struct gv_err err;
	if (error || n < 1 || !res[0]) {
		gv_warn(NULL, "key lookup failed: %s", error ? error : "no result");
		fe_reply_error(r, 503, "unavailable", "authentication is unavailable, try again");
		fe_req_unref(r);
		return;
	}
	struct fe_auth_entry *e = &r->w->auth_cache[r->key_hash[0]];
	struct fe_auth_entry fresh;
	memset(&fresh, 0, sizeof(fresh));
	if (tenant_auth_row_from_pg(res[0], 0, &fresh.row, &err) < 0 ||
	    (fresh.row.found && tenant_quota_from_pg(res[0], 0, TENANT_AUTH_QUOTA_COL1, &fresh.quota, &err) < 0)) {
		gv_error(NULL, "key lookup: %s", err.msg);
		fe_reply_error(r, 500, "internal", "authentication failed");
		fe_req_unref(r);
		return;
	}
	fresh.used = true;
	memcpy(fresh.hash, r->key_hash, sizeof(fresh.hash));
	fresh.fetched_ms = sent;
	*e = fresh;
	auth_decided(r, &fresh);
	fe_req_unref(r);
}

static const char *presented_key(struct fe_req *r)
{
	struct evkeyvalq *h = evhttp_request_get_input_headers(r->req);
	const char *k = evhttp_find_header(h, "X-Auth-Token");
	if (k && *k)
		return k;
	const char *a = evhttp_find_header(h, "Authorization");
	if (a && !strncasecmp(a, "Bearer ", 7))
		return a + 7;
	/* Jupyter's clients (Kernel Gateway's scheme). */
	if (a && !strncasecmp(a, "token ", 6))
		return a + 6;
	/* Jobe's header: the key Moodle's CodeRunner is configured with. */
	k = evhttp_find_header(h, "X-API-KEY");
	if (k && *k)
		return k;
	/* Query-string keys end up in access logs and browser histories:
	 * only where a browser has no other way (fe_route_takes_query_key),
	 * and only for tenants that allow it (auth_decided), but for a
	 * kernel's channels, where Jupyter's browser clients put ?token=
	 * (a WebSocket request carries no header a page can set). */
	k = fe_query(r, "X-Auth-Token");
	if (!k)
		k = fe_query(r, "api_key");
	if (!k && r->m.route && r->m.route->id == FE_ROUTE_KERNEL_CHANNELS)
		k = fe_query(r, "token");
	r->key_in_query = k && *k;
	return r->key_in_query ? k : NULL;
}

bool fe_query_key_allowed(enum fe_route_id route, const struct tenant_quota *q)
{
	if (route == FE_ROUTE_KERNEL_CHANNELS || q->browser_clients)
		return true;
	return q->allow_query_key && fe_route_takes_query_key(route);
}

bool fe_auth_presented(struct fe_req *r)
{
	struct evkeyvalq *h = evhttp_request_get_input_headers(r->req);
	const char *k = evhttp_find_header(h, "X-Auth-Token"), *a = evhttp_find_header(h, "Authorization");
	const char *j = evhttp_find_header(h, "X-API-KEY");
	return (k && *k) || (j && *j) || (a && (!strncasecmp(a, "Bearer ", 7) || !strncasecmp(a, "token ", 6)));
}

void fe_authenticate(struct fe_req *r)
{
	struct fe_worker *w = r->w;
	const char *key = presented_key(r);
	struct gv_err err;
	if (!key) {
		atomic_fetch_add(&w->app->metrics->auth_failures, 1);
		evhttp_add_header(evhttp_request_get_output_headers(r->req), "WWW-Authenticate", "Bearer");
		fe_reply_error(r, 401, tenant_auth_error_code(TENANT_AUTH_MISSING), "%s",
			       tenant_auth_message(TENANT_AUTH_MISSING));
		return;
	}
	/* A key in the query string is judged once its tenant is known
	 * (auth_decided): whether it is taken depends on the tenant's
	 * settings. */
	size_t len = strnlen(key, TENANT_KEY_PRESENTED_MAX + 1);
	if (len > TENANT_KEY_PRESENTED_MAX ||
	    tenant_key_hash(key, len, &w->app->pepper, r->key_hash, &err) < 0) {
		atomic_fetch_add(&w->app->metrics->auth_failures, 1);
		evhttp_add_header(evhttp_request_get_output_headers(r->req), "WWW-Authenticate", "Bearer");
		fe_reply_error(r, 401, tenant_auth_error_code(TENANT_AUTH_MALFORMED), "%s",
			       tenant_auth_message(TENANT_AUTH_MALFORMED));
		return;
	}
	uint64_t now = fe_now_ms();
	struct fe_auth_entry *e = cached_key(w, r->key_hash, now);
	if (e) {
		auth_decided(r, e);
		return;
	}
	struct auth_pending *p = malloc(sizeof(*p));
	if (!p) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	p->r = r;
	p->sent_ms = now;
	fe_req_ref(r);
	if (look_up_key(w, r->key_hash, on_auth_row, p, &err) < 0) {
		free(p);
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* A key checked before its request's body is read (conn.c). It only
 * decides how large a body is read; the request is authenticated again
 * when it has arrived, by fe_authenticate(), from evhttp's own parse. Shares
 * the worker's cache, so that second lookup is usually a cache hit. */
struct keycheck {
	struct fe_worker *w;
	bool in_query;
	unsigned char hash[TENANT_KEY_HASH_LEN];
	uint64_t sent_ms;
	fe_keycheck_fn fn;
	void *arg;
};

static bool entry_ok(const struct fe_auth_entry *e)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return tenant_auth_decide(&e->row, (int64_t)ts.tv_sec) == TENANT_AUTH_OK;
}

/* A write route's key from the query string admits a large body only
 * for a tenant that takes keys there (every route that takes a body is a
 * browser_clients route). */
static bool entry_ok_for(const struct fe_auth_entry *e, bool in_query)
{
	return entry_ok(e) && (!in_query || e->quota.browser_clients);
}

static void on_keycheck_row(void *arg, PGresult *const *res, int n, const char *error)
{
	struct keycheck *k = arg;
	struct gv_err err;
	struct fe_auth_entry fresh;
	bool ok = false;
	memset(&fresh, 0, sizeof(fresh));
	if (!error && n >= 1 && res[0] && tenant_auth_row_from_pg(res[0], 0, &fresh.row, &err) == 0 &&
	    (!fresh.row.found || tenant_quota_from_pg(res[0], 0, TENANT_AUTH_QUOTA_COL1, &fresh.quota, &err) == 0)) {
		fresh.used = true;
		memcpy(fresh.hash, k->hash, sizeof(fresh.hash));
		fresh.fetched_ms = k->sent_ms;
		k->w->auth_cache[k->hash[0]] = fresh;
		ok = entry_ok_for(&fresh, k->in_query);
	}
	k->fn(k->arg, ok);
	free(k);
}

struct recheck {
	struct fe_worker *w;
	unsigned char hash[TENANT_KEY_HASH_LEN];
	uint64_t sent_ms;
	fe_key_recheck_fn fn;
	void *arg;
};

static void on_recheck_row(void *arg, PGresult *const *res, int n, const char *error)
{
	struct recheck *k = arg;
	struct gv_err err;
	struct fe_auth_entry fresh;
	enum fe_keycheck verdict = FE_KEY_PENDING;
	memset(&fresh, 0, sizeof(fresh));
	if (!error && n >= 1 && res[0] && tenant_auth_row_from_pg(res[0], 0, &fresh.row, &err) == 0 &&
	    (!fresh.row.found || tenant_quota_from_pg(res[0], 0, TENANT_AUTH_QUOTA_COL1, &fresh.quota, &err) == 0)) {
		fresh.used = true;
		memcpy(fresh.hash, k->hash, sizeof(fresh.hash));
		fresh.fetched_ms = k->sent_ms;
		k->w->auth_cache[k->hash[0]] = fresh;
		verdict = entry_ok(&fresh) ? FE_KEY_OK : FE_KEY_REFUSED;
	}
	k->fn(k->arg, verdict);
	free(k);
}

int fe_key_recheck(struct fe_worker *w, const unsigned char hash[TENANT_KEY_HASH_LEN], fe_key_recheck_fn fn,
		   void *arg)
{
	struct gv_err err;
	struct recheck *k = calloc(1, sizeof(*k));
	if (!k)
		return -1;
	k->w = w;
	memcpy(k->hash, hash, sizeof(k->hash));
	k->sent_ms = fe_now_ms();
	k->fn = fn;
	k->arg = arg;
	/* Always the database, never the cache: the cache's second is well
	 * inside the recheck's period, and a cached row would only delay. */
	if (look_up_key(w, k->hash, on_recheck_row, k, &err) < 0) {
		free(k);
		return -1;
	}
	return 0;
}

enum fe_keycheck fe_key_check(struct fe_worker *w, const char *key, bool in_query, fe_keycheck_fn fn, void *arg)
{
	struct gv_err err;
	unsigned char hash[TENANT_KEY_HASH_LEN];
	size_t len = strnlen(key, TENANT_KEY_PRESENTED_MAX + 1);
	if (len > TENANT_KEY_PRESENTED_MAX || tenant_key_hash(key, len, &w->app->pepper, hash, &err) < 0)
		return FE_KEY_REFUSED;
	uint64_t now = fe_now_ms();
	const struct fe_auth_entry *e = cached_key(w, hash, now);
	if (e)
		return entry_ok_for(e, in_query) ? FE_KEY_OK : FE_KEY_REFUSED;
	struct keycheck *k = calloc(1, sizeof(*k));
	if (!k)
		return FE_KEY_REFUSED;
	k->w = w;
	k->in_query = in_query;
	memcpy(k->hash, hash, sizeof(hash));
	k->sent_ms = now;
	k->fn = fn;
	k->arg = arg;
	if (look_up_key(w, k->hash, on_keycheck_row, k, &err) < 0) {
		free(k);
		return FE_KEY_REFUSED;
	}
	return FE_KEY_PENDING;
}
