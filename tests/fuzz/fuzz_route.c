/* libFuzzer target for the request path's router, with the public
 * playground's prefix (frontend/router.h): the first byte picks the method,
 * the rest is the path as evhttp hands it over. Beyond "does not crash":
 * a path under /playground/ matches only through fe_playground_match, and
 * what that answers is on the allowlist, names a tenant of the parameter
 * grammar and a rest that, after "/playground/<tenant>", is the path again
 * (one trailing '/' aside); every keyed route's match is an exact one of
 * the table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/router.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool tenant_ok(const char *t)
{
	size_t n = strlen(t);
	if (n == 0 || n >= FE_ROUTE_PARAM_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = t[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.'))
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum fe_method methods[] = { FE_M_GET, FE_M_POST, FE_M_DELETE, FE_M_HEAD,
						  FE_M_OPTIONS, FE_M_PUT, FE_M_PATCH, FE_M_OTHER };
	if (size < 1 || size > 4096)
		return 0;
	enum fe_method m = methods[data[0] % (sizeof(methods) / sizeof(methods[0]))];
	char *path = malloc(size);
	if (!path)
		return 0;
	memcpy(path, data + 1, size - 1);
	path[size - 1] = '\0';
	struct fe_match match;
	char tenant[FE_ROUTE_PARAM_MAX], rest[256];
	enum fe_match_result r = fe_playground_match(m, path, &match, tenant, rest, sizeof(rest));
	if (!fe_playground_prefixed(path) && r != FE_MATCH_NOT_FOUND)
		abort(); /* only paths under the prefix */
	if (r == FE_MATCH_OK) {
		if (!match.route || !fe_playground_route_allowed(match.route->id, FE_PG_PLAYGROUND | FE_PG_TOKEN))
			abort(); /* off the allowlist */
		if (m != FE_M_GET && m != FE_M_HEAD && m != FE_M_POST)
			abort();
	}
	if (r == FE_MATCH_BAD_METHOD && (m != FE_M_OPTIONS || !match.allowed))
		abort(); /* 405 is never answered under the prefix */
	if (r != FE_MATCH_NOT_FOUND) {
		if (!tenant_ok(tenant) || rest[0] != '/')
			abort();
		/* "/playground/" + tenant + rest is the path, but for the
		 * page's "/" standing for "" and one trailing '/'. */
		size_t tl = strlen(tenant), pl = strlen(path), rl = strlen(rest);
		if (strncmp(path, FE_PLAYGROUND_PREFIX, 12) || strncmp(path + 12, tenant, tl))
			abort();
		const char *tail = path + 12 + tl;
		size_t tail_len = pl - 12 - tl;
		bool same = (tail_len == rl && !memcmp(tail, rest, rl)) ||
			    (tail_len == rl + 1 && tail[rl] == '/' && !memcmp(tail, rest, rl)) ||
			    (!strcmp(rest, "/") && tail_len == 0);
		if (!same)
			abort();
	} else if (tenant[0]) {
		abort(); /* nothing is reported for a path that matched nothing */
	}
	/* The keyed table never answers for a path under the prefix but the
	 * page's own entries, which serve() never reaches this way. */
	struct fe_match k;
	if (fe_playground_prefixed(path) && fe_route_match(m, path, &k) == FE_MATCH_OK &&
	    k.route->id != FE_ROUTE_PLAYGROUND_PAGE)
		abort();
	free(path);
	return 0;
}
