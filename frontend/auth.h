/* Authentication and rate limiting of a request (auth.c). Private to
 * frontend/. */
#pragma once

#include "frontend/conn.h"
#include "frontend/server_internal.h"

/* Authenticates r by its API key, applies its tenant's rate limit, then
 * hands it to fe_dispatch; or replies 401/403/429/503 itself. */
void fe_authenticate(struct fe_req *r);
/* Does r carry an API key in a header (X-Auth-Token, Authorization:
 * Bearer)? For routes that serve anyone but answer a tenant for itself. */
bool fe_auth_presented(struct fe_req *r);
/* Whether a key in the query string is taken on route for a tenant of
 * quota q: always on a kernel's channels (?token=, Jupyter's browser
 * clients), everywhere with browser_clients, on the SSE stream with
 * allow_query_key. Pure. */
bool fe_query_key_allowed(enum fe_route_id route, const struct tenant_quota *q);

/* Whether a key (by its peppered hash) still admits its holder: for
 * sessions that outlive their request (kernel WebSockets), asked again
 * while they last, so that a revoked or expired key, or a disabled
 * tenant, ends them. fn(arg, verdict) runs from the loop, never inside the
 * call: FE_KEY_OK, FE_KEY_REFUSED, or FE_KEY_PENDING when the database
 * could not say (an outage is no revocation). -1 when nothing was sent
 * (fn never runs). */
typedef void (*fe_key_recheck_fn)(void *arg, enum fe_keycheck verdict);
int fe_key_recheck(struct fe_worker *w, const unsigned char hash[TENANT_KEY_HASH_LEN], fe_key_recheck_fn fn,
		   void *arg);

/* Sends a token-bucket command for r (a: tenant_ratelimit_args or
 * tenant_playground_ratelimit_args; borrowed for the call): EVALSHA when
 * the worker knows the script's hash and eval is false, else EVAL, which
 * loads it too (after a NOSCRIPT reply, call again with eval true). cb gets
 * the reply with a reference taken on r here. 0: sent; -1: not sent, no
 * reference held. */
int fe_ratelimit_send(struct fe_req *r, struct tenant_ratelimit_args *a, bool eval, fe_redis_cb cb);
