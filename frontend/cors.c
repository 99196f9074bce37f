/* CORS: preflights, the tenant's origin check and the response headers
 * (frontend/cors.h has the policy and why). */
#include "frontend/cors.h"

#include <string.h>
#include <strings.h>

#include <event2/http.h>

#include "frontend/server_internal.h"
#include "tenants/origin.h"

/* The request headers a page may send: where keys travel, the body's
 * type, and SSE's resume header. */
#define ALLOW_HEADERS "Authorization, Content-Type, X-Auth-Token, X-Auth-User, X-API-KEY, Last-Event-ID"
/* The response headers a page may read beyond the CORS-safelisted ones. */
#define EXPOSE_HEADERS                                                                        \
	"Location, Retry-After, WWW-Authenticate, X-RateLimit-Limit, X-RateLimit-Remaining, " \
	"X-RateLimit-Reset"
#define PREFLIGHT_MAX_AGE "600"

void fe_cors_note_origin(struct fe_req *r)
{
	const char *o = evhttp_find_header(evhttp_request_get_input_headers(r->req), "Origin");
	size_t len = o ? strlen(o) : 0;
	r->origin[0] = '\0';
	r->origin_invalid = false;
	r->origin_null = false;
	if (o && len < sizeof(r->origin) && !(len == 1 && o[0] == '*') && tenant_origin_valid(o, len))
		memcpy(r->origin, o, len + 1);
	else if (o) {
		/* Present but no origin a list can name: "null" (sandboxed
		 * frames, file: pages, redirects), another case, a path, a
		 * trailing slash. Refused wherever an origin is checked, never
		 * taken for a request without one. */
		r->origin_invalid = true;
		r->origin_null = strcmp(o, "null") == 0;
	}
}

/* Origin names the Host this request was sent to: the page is ours. */
static bool same_origin(struct fe_req *r)
{
	const char *host = evhttp_find_header(evhttp_request_get_input_headers(r->req), "Host");
	const char *sep = strstr(r->origin, "://");
	return host && sep && strcasecmp(sep + 3, host) == 0;
}

void fe_cors_preflight(struct fe_req *r)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
	char methods[96];
	fe_methods_list(r->m.allowed, methods, sizeof(methods));
	evhttp_add_header(h, "Allow", methods);
	if (r->origin[0]) {
		/* fe_reply_raw adds Access-Control-Allow-Origin and Vary. */
		evhttp_add_header(h, "Access-Control-Allow-Methods", methods);
		evhttp_add_header(h, "Access-Control-Allow-Headers", ALLOW_HEADERS);
		evhttp_add_header(h, "Access-Control-Max-Age", PREFLIGHT_MAX_AGE);
	}
	fe_reply_raw(r, 204, "text/plain", NULL);
}

bool fe_cors_admit(struct fe_req *r)
{
	if (r->origin_invalid) {
		r->cors_refused = true;
		fe_reply_error(r, 403, "origin_not_allowed",
			       "the request's Origin is not an origin this tenant's cors_origins can list "
			       "(scheme://host[:port] in lower case, no path; 'null' is never allowed)");
		return false;
	}
	if (!r->origin[0] || same_origin(r))
		return true;
	const char *list = r->quota.cors_origins[0] ? r->quota.cors_origins : r->w->app->cfg->cors_origins;
	if (tenant_origins_allow(list, r->origin, strlen(r->origin)))
		return true;
	r->cors_refused = true;
	fe_reply_error(r, 403, "origin_not_allowed",
		       "pages from %s may not use this tenant's keys (its cors_origins quota does not list them)",
		       r->origin);
	return false;
}

void fe_cors_reply_headers(struct fe_req *r, struct evkeyvalq *h)
{
	if (r->cors_refused) {
		/* The refusal itself is readable by the page that was refused,
		 * so it can say why: it holds no tenant data. An origin no
		 * browser sends (another case, a path) gets nothing. */
		const char *o = r->origin[0] ? r->origin : r->origin_null ? "null" : NULL;
		if (o) {
			evhttp_add_header(h, "Access-Control-Allow-Origin", o);
			evhttp_add_header(h, "Vary", "Origin");
		}
		return;
	}
	if (!r->origin[0] || same_origin(r))
		return;
	evhttp_add_header(h, "Access-Control-Allow-Origin", r->origin);
	evhttp_add_header(h, "Vary", "Origin");
	evhttp_add_header(h, "Access-Control-Expose-Headers", EXPOSE_HEADERS);
}
