/* A tenant's public playground (issue 17): anonymous access, under
 * /playground/{tenant}/, to the routes that run code and read their own
 * result, for a tenant whose `playground` setting is on; and, for a tenant
 * whose `token_capability` setting is on, GET of any one of its submissions
 * there by its id (Judge0's model: the token is the capability).
 *
 * The policy:
 *   - {tenant} is the tenant's name or uuid. A tenant with both settings
 *     off, a disabled one and a name that is no tenant's answer the same
 *     404 to everything under the prefix (gavel_playground_lookup gives no
 *     row for any of them).
 *   - What is reachable is an allowlist (fe_playground_route_allowed,
 *     frontend/router.h); the existing handlers serve it, with the request
 *     admitted as an anonymous principal of the tenant: r->tenant_id set,
 *     no key, r->anonymous. Everything else is 404.
 *   - GET of one submission (Judge0, native, its SSE events) reads only
 *     the submissions made through the playground (submissions.playground),
 *     unless token_capability is on: then any of the tenant's, by id.
 *     Ids are 128 bits from libsodium's randombytes_buf (fe_new_id), never
 *     chosen by a client, so an id is not guessable.
 *   - Budgets, each no higher than the tenant's own (tenant_playground_quota,
 *     tenants/playground.h): a token bucket per client address (IPv4
 *     address, IPv6 /64; playground_rps, playground_burst) and one for all
 *     anonymous requests of the tenant together (its requests_per_second
 *     and burst), both in Redis; reads of one submission (GET of it, its
 *     events) in buckets of their own, per client address
 *     (playground_read_rps, a burst of twice that) and for the tenant (its
 *     rate again), since pages poll their result every 100 ms or so; the
 *     client address is the one behind a trusted proxy (client_addr.h); anonymous submissions only while the
 *     tenant has fewer than playground_max_queued queued; the tenant's
 *     per-job ceilings; no GPUs, no network (a tenant whose egress policy
 *     grants any cannot turn the playground on); the small keyless body
 *     limit (FE_CONN_KEYLESS_BODY_MAX: the body is read before the tenant
 *     is known); the connection guard's per-address connection cap.
 *     Redis unavailable: 503 (fail closed; keyed requests fail open).
 *   - Anonymous submissions take no callback_url and no problem_id (403),
 *     and are audited with the actor "anonymous:<client address>".
 *   - CORS applies as for the tenant's keys (its cors_origins).
 *
 * The lookup is cached per worker by name, like keys (at most
 * TENANT_AUTH_CACHE_MAX_MS), so turning a playground off takes effect
 * within a second. Private to frontend/. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "frontend/server_internal.h"
#include "tenants/playground.h"

#define FE_PG_CACHE_SLOTS 64

struct fe_pg_entry {
	bool used;
	char name[FE_ROUTE_PARAM_MAX];
	uint64_t fetched_ms;
	bool found;
	char tenant_id[TENANT_UUID_BUF];
	struct tenant_quota quota; /* the tenant's own */
};

/* A request under the prefix that matched (r->pg_mr not NOT_FOUND): looks
 * its tenant up (cache, else PostgreSQL), then answers 404 or hands it on
 * to fe_route_matched as the tenant's anonymous principal. */
void fe_playground_resolve(struct fe_req *r);

/* An anonymous request past CORS preflight and method checks
 * (fe_route_matched): the tenant's origin check, the client's then the
 * tenant's anonymous token bucket (not for the page and its static
 * files), then fe_dispatch; or a 403/429/503. */
void fe_playground_admit(struct fe_req *r);

/* The client address sa as the bucket's name (bucket: "4:a.b.c.d" or
 * "6:<16 hex digits of the /64>", at most TENANT_PLAYGROUND_CLIENT_MAX
 * bytes) and as shown in the audit (shown: inet_ntop's text). -1 for a
 * NULL or non-IP address. Pure. */
int fe_playground_client(const struct sockaddr *sa, char bucket[TENANT_PLAYGROUND_CLIENT_MAX + 1],
			 char shown[FE_CLIENT_BUF]);
