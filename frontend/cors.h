/* Cross-origin calls from browsers (CORS): pages served elsewhere (a
 * course site, a playground, Judge0's own client pages) calling the API
 * with a tenant's key.
 *
 * A preflight (OPTIONS) carries no key, so it cannot know the tenant: it is
 * answered on every route for any well-formed origin, granting the route's
 * methods and the headers a key travels in. The tenant's list is enforced on
 * the request itself, once its key is known: an origin the tenant's
 * cors_origins (or, when that is empty, frontend.cors_origins) does not
 * allow gets 403; that 403 carries Access-Control-Allow-Origin (the origin,
 * or "null") so that the refused page can read why, and nothing else. An
 * Origin header that is present but no valid origin ("null", another case,
 * a path or trailing slash, file://) is refused alike, never taken for a
 * request without one. Same-origin requests
 * (Origin naming this server's own Host) are never refused. Credentials
 * (cookies, HTTP auth) are never allowed: a key is a header the page sets
 * itself, so no page can act with a user's ambient authority. Routes
 * without a key (languages, health, statuses, the OpenAPI document) serve
 * public data and allow any origin. */
#pragma once

#include <stdbool.h>

#include <event2/keyvalq_struct.h>

struct fe_req;

/* Notes the request's Origin header, when it has a valid one. */
void fe_cors_note_origin(struct fe_req *r);

/* OPTIONS on an existing route (r->m.allowed set): replies 204 with the
 * preflight's grant, or a plain Allow list without an Origin. */
void fe_cors_preflight(struct fe_req *r);

/* After authentication (r->quota set): whether the request's origin may
 * use this tenant's keys. false: a 403 was sent. */
bool fe_cors_admit(struct fe_req *r);

/* Adds the response's CORS headers to h (every reply path calls it). */
void fe_cors_reply_headers(struct fe_req *r, struct evkeyvalq *h);
