/* Public playgrounds: the tenant lookup and its cache, and the anonymous
 * admission (the origin check, the two token buckets); see playground.h.
 * Routing is the router's (fe_playground_match), the handlers are the
 * keyed routes' own. */
#include "frontend/playground.h"

#include <arpa/inet.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "frontend/api_tenant.h"
#include "frontend/auth.h"
#include "frontend/client_addr.h"
#include "frontend/cors.h"
#include "frontend/metrics.h"

int fe_playground_client(const struct sockaddr *sa, char bucket[TENANT_PLAYGROUND_CLIENT_MAX + 1],
			 char shown[FE_CLIENT_BUF])
{
	bucket[0] = shown[0] = '\0';
	if (!sa)
		return -1;
	const unsigned char *v4 = NULL, *v6 = NULL;
	if (sa->sa_family == AF_INET) {
		v4 = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
		inet_ntop(AF_INET, v4, shown, FE_CLIENT_BUF);
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			v4 = a->s6_addr + 12;
			inet_ntop(AF_INET, v4, shown, FE_CLIENT_BUF);
		} else {
			v6 = a->s6_addr;
			inet_ntop(AF_INET6, a, shown, FE_CLIENT_BUF);
		}
	} else {
		return -1;
	}
	if (v4)
		snprintf(bucket, TENANT_PLAYGROUND_CLIENT_MAX + 1, "4:%u.%u.%u.%u", v4[0], v4[1], v4[2], v4[3]);
	else /* one host's usual share, as the connection guard counts it */
		snprintf(bucket, TENANT_PLAYGROUND_CLIENT_MAX + 1, "6:%02x%02x%02x%02x%02x%02x%02x%02x", v6[0], v6[1],
			 v6[2], v6[3], v6[4], v6[5], v6[6], v6[7]);
	return 0;
}

/* ------------------------------------------------------ tenant lookup */

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct fe_pg_entry *slot_of(struct fe_worker *w, const char *name)
{
	return &w->pg_cache[name_hash(name) % FE_PG_CACHE_SLOTS];
}

static void not_found(struct fe_req *r)
{
	/* The same answer as a route outside the allowlist (server.c): an
	 * unknown name, a disabled tenant and one without a playground are
	 * not told apart. */
	fe_reply_error(r, 404, "not_found", "no such route");
}

static void decided(struct fe_req *r, const struct fe_pg_entry *e)
{
	unsigned access = 0;
	if (e->found && e->quota.playground)
		access |= FE_PG_PLAYGROUND;
	if (e->found && e->quota.token_capability)
		access |= FE_PG_TOKEN;
	if (!access || (r->pg_mr == FE_MATCH_OK && !fe_playground_route_allowed(r->m.route->id, access))) {
		not_found(r);
		return;
	}
	memcpy(r->tenant_id, e->tenant_id, sizeof(r->tenant_id));
	r->key_id[0] = '\0';
	r->anonymous = true;
	r->pg_access = access;
	r->pg_rows_only = !(access & FE_PG_TOKEN);
	tenant_playground_quota(&e->quota, &r->quota);
	r->pg_tenant_rps = e->quota.requests_per_second;
	r->pg_tenant_burst = e->quota.burst;
	fe_route_matched(r, r->pg_mr);
}

struct pg_pending {
	struct fe_req *r;
	uint64_t sent_ms;
};

static void on_pg_row(void *arg, PGresult *const *res, int n, const char *error)
{
	struct pg_pending *p = arg;
	struct fe_req *r = p->r;
	uint64_t sent = p->sent_ms;
	free(p);
	struct gv_err err;
	if (error || n < 1 || !res[0]) {
		gv_warn(NULL, "playground lookup failed: %s", error ? error : "no result");
		fe_reply_error(r, 503, "unavailable", "the service is unavailable, try again");
		fe_req_unref(r);
		return;
	}
	struct fe_pg_entry fresh;
	memset(&fresh, 0, sizeof(fresh));
	if (PQntuples(res[0]) > 0) {
		const char *tid = PQgetvalue(res[0], 0, 0);
		if (strlen(tid) >= sizeof(fresh.tenant_id) ||
		    tenant_quota_from_pg(res[0], 0, TENANT_PLAYGROUND_QUOTA_COL1, &fresh.quota, &err) < 0) {
			gv_error(NULL, "playground lookup: %s", strlen(tid) >= sizeof(fresh.tenant_id) ? "bad tenant id" : err.msg);
			fe_reply_error(r, 500, "internal", "the playground lookup failed");
			fe_req_unref(r);
			return;
		}
		snprintf(fresh.tenant_id, sizeof(fresh.tenant_id), "%s", tid);
		fresh.found = true;
	}
	fresh.used = true;
	snprintf(fresh.name, sizeof(fresh.name), "%s", r->pg_tenant);
	fresh.fetched_ms = sent;
	*slot_of(r->w, r->pg_tenant) = fresh;
	decided(r, &fresh);
	fe_req_unref(r);
}

void fe_playground_resolve(struct fe_req *r)
{
	struct fe_worker *w = r->w;
	/* The client behind a trusted proxy (client_addr.h), else the peer. */
	if (fe_client_of_request(r) < 0) {
		/* No address, no per-address budget: not served anonymously. */
		fe_reply_error(r, 403, "forbidden", "anonymous requests need a client IP address");
		return;
	}
	uint64_t now = fe_now_ms(), ttl = w->app->cfg->auth_cache_ttl_ms;
	if (ttl > TENANT_AUTH_CACHE_MAX_MS)
		ttl = TENANT_AUTH_CACHE_MAX_MS;
	const struct fe_pg_entry *e = slot_of(w, r->pg_tenant);
	if (e->used && !strcmp(e->name, r->pg_tenant) && now - e->fetched_ms < ttl) {
		decided(r, e);
		return;
	}
	struct pg_pending *p = malloc(sizeof(*p));
	if (!p) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	p->r = r;
	p->sent_ms = now;
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, TENANT_SQL_PLAYGROUND_LOOKUP, 1, r->pg_tenant);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(w->db, NULL, &s, 1, on_pg_row, p, &err) < 0) {
		free(p);
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* ------------------------------------------------------- token buckets */

static void on_bucket(void *arg, redisReply *reply);

/* A read of one submission: polled by pages waiting for their result, so
 * counted in buckets of its own (tenants/playground.h). */
static bool read_route(const struct fe_req *r)
{
	switch (r->m.route->id) {
	case FE_ROUTE_J0_GET:
	case FE_ROUTE_V1_SUBMISSION:
	case FE_ROUTE_V1_EVENTS: return true;
	default: return false;
	}
}

/* The client's bucket: rate and burst. A read's burst is two seconds of
 * its rate, room for a page's first quick polls. */
static int client_rate(const struct fe_req *r)
{
	return read_route(r) ? r->quota.playground_read_rps : r->quota.requests_per_second;
}

static int client_burst(const struct fe_req *r)
{
	return read_route(r) ? 2 * r->quota.playground_read_rps : r->quota.burst;
}

/* Sends the current bucket's command (the client's, then the tenant's).
 * 0: sent, on_bucket runs with a reference taken. */
static int send_bucket(struct fe_req *r, bool eval)
{
	struct tenant_ratelimit_args a;
	struct gv_err err;
	int (*args)(const char *, const char *, int, int, struct tenant_ratelimit_args *, struct gv_err *) =
		read_route(r) ? tenant_playground_read_ratelimit_args : tenant_playground_ratelimit_args;
	int rc = r->pg_rl_tenant ? args(r->tenant_id, NULL, r->pg_tenant_rps, r->pg_tenant_burst, &a, &err)
				 : args(r->tenant_id, r->pg_bucket, client_rate(r), client_burst(r), &a, &err);
	if (rc < 0) {
		gv_error(NULL, "playground rate limit: %s", err.msg);
		return -1;
	}
	return fe_ratelimit_send(r, &a, eval, on_bucket);
}

static void unavailable(struct fe_req *r)
{
	/* Fail closed: without its budgets the playground is not served. */
	evhttp_add_header(evhttp_request_get_output_headers(r->req), "Retry-After", "1");
	fe_reply_error(r, 503, "unavailable", "the playground's rate limit cannot be checked now, try again");
}

static void on_bucket(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	struct tenant_ratelimit_result rl;
	struct gv_err err;
	if (reply && reply->type == REDIS_REPLY_ERROR && !strncmp(reply->str, "NOSCRIPT", 8)) {
		r->w->rl_sha[0] = '\0';
		if (send_bucket(r, true) == 0) {
			fe_req_unref(r);
			return;
		}
		reply = NULL;
	}
	memset(&rl, 0, sizeof(rl));
	if (!reply || tenant_ratelimit_parse_reply(reply, &rl, &err) < 0) {
		gv_warn(NULL, "playground rate limit unavailable: %s", reply ? err.msg : "redis down");
		unavailable(r);
		fe_req_unref(r);
		return;
	}
	if (!r->pg_rl_tenant) {
		snprintf(r->rl_limit, sizeof(r->rl_limit), "%d", client_burst(r));
		snprintf(r->rl_remaining, sizeof(r->rl_remaining), "%lld", (long long)rl.remaining);
		snprintf(r->rl_reset, sizeof(r->rl_reset), "%lld", (long long)rl.reset_s);
	}
	if (!rl.allowed) {
		char ra[24];
		snprintf(ra, sizeof(ra), "%lld", (long long)rl.retry_after_s);
		evhttp_add_header(evhttp_request_get_output_headers(r->req), "Retry-After", ra);
		atomic_fetch_add(&r->w->app->metrics->rate_limited, 1);
		if (r->pg_rl_tenant) {
			fe_audit_refusal(r, "requests_per_second", 429, 1, r->pg_tenant_rps);
			fe_reply_error(r, 429, "rate_limited", "this playground's requests are above %d per second",
				       r->pg_tenant_rps);
		} else {
			fe_audit_refusal(r, read_route(r) ? "playground_read_rps" : "playground_rps", 429, 1,
					 client_rate(r));
			fe_reply_error(r, 429, "rate_limited", "%s above %d per second from this address",
				       read_route(r) ? "reads of a submission" : "request rate", client_rate(r));
		}
		fe_req_unref(r);
		return;
	}
	if (!r->pg_rl_tenant && r->pg_tenant_rps > 0) {
		r->pg_rl_tenant = true;
		if (send_bucket(r, false) < 0)
			unavailable(r);
		fe_req_unref(r);
		return;
	}
	fe_dispatch(r);
	fe_req_unref(r);
}

void fe_playground_admit(struct fe_req *r)
{
	if (!fe_cors_admit(r))
		return;
	/* The page and its static files are served from memory: they do not
	 * spend the budget the page's own API calls need. */
	if (r->m.route->id == FE_ROUTE_PLAYGROUND_PAGE) {
		fe_dispatch(r);
		return;
	}
	r->pg_rl_tenant = false;
	if (send_bucket(r, false) < 0)
		unavailable(r);
}
