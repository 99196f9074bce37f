/* The route table and a segment-by-segment matcher. Literal segments win
 * over parameters ("/submissions/batch" is not a token) because the table
 * lists literal routes first and the first full match wins. */
#include "frontend/router.h"

#include <stdio.h>
#include <string.h>

const struct fe_route fe_routes[] = {
	{ FE_M_GET, "/", FE_ROUTE_ROOT, false, "root" },
	{ FE_M_POST, "/v1/submissions", FE_ROUTE_V1_SUBMIT, true, "v1_submit" },
	{ FE_M_GET, "/v1/submissions/{id}", FE_ROUTE_V1_SUBMISSION, true, "v1_submission" },
	{ FE_M_GET, "/v1/submissions/{id}/events", FE_ROUTE_V1_EVENTS, true, "v1_events" },
	{ FE_M_POST, "/v1/problems", FE_ROUTE_V1_PROBLEMS_CREATE, true, "v1_problems_create" },
	{ FE_M_GET, "/v1/problems", FE_ROUTE_V1_PROBLEMS_LIST, true, "v1_problems_list" },
	{ FE_M_GET, "/v1/problems/{id}", FE_ROUTE_V1_PROBLEM, true, "v1_problem" },
	{ FE_M_PUT, "/v1/problems/{id}", FE_ROUTE_V1_PROBLEM_PUT, true, "v1_problem_put" },
	{ FE_M_DELETE, "/v1/problems/{id}", FE_ROUTE_V1_PROBLEM_DELETE, true, "v1_problem_delete" },
	{ FE_M_GET, "/v1/audit", FE_ROUTE_V1_AUDIT, true, "v1_audit" },
	{ FE_M_GET, "/v1/usage", FE_ROUTE_V1_USAGE, true, "v1_usage" },
	{ FE_M_GET, "/v1/assignments/{name}/grades", FE_ROUTE_V1_ASSIGNMENT_GRADES, true, "v1_assignment_grades" },
	{ FE_M_GET, "/v1/grades", FE_ROUTE_V1_GRADES, true, "v1_grades" },
	{ FE_M_GET, "/v1/languages", FE_ROUTE_V1_LANGUAGES, false, "v1_languages" },
	{ FE_M_GET, "/v1/health", FE_ROUTE_V1_HEALTH, false, "v1_health" },
	{ FE_M_GET, "/v1/openapi.json", FE_ROUTE_V1_OPENAPI, false, "v1_openapi" },
	{ FE_M_GET, "/metrics", FE_ROUTE_METRICS, false, "metrics" },
	{ FE_M_POST, "/submissions/batch", FE_ROUTE_J0_BATCH_CREATE, true, "j0_batch_create" },
	{ FE_M_GET, "/submissions/batch", FE_ROUTE_J0_BATCH_GET, true, "j0_batch_get" },
	{ FE_M_POST, "/submissions", FE_ROUTE_J0_CREATE, true, "j0_create" },
	{ FE_M_GET, "/submissions", FE_ROUTE_J0_LIST, true, "j0_list" },
	{ FE_M_GET, "/submissions/{token}", FE_ROUTE_J0_GET, true, "j0_get" },
	{ FE_M_DELETE, "/submissions/{token}", FE_ROUTE_J0_DELETE, true, "j0_delete" },
	{ FE_M_GET, "/languages", FE_ROUTE_J0_LANGUAGES, false, "j0_languages" },
	{ FE_M_GET, "/languages/all", FE_ROUTE_J0_LANGUAGES, false, "j0_languages" },
	{ FE_M_GET, "/languages/{id}", FE_ROUTE_J0_LANGUAGE, false, "j0_language" },
	{ FE_M_GET, "/statuses", FE_ROUTE_J0_STATUSES, false, "j0_statuses" },
	{ FE_M_GET, "/about", FE_ROUTE_J0_ABOUT, false, "j0_about" },
	{ FE_M_GET, "/config_info", FE_ROUTE_J0_CONFIG_INFO, false, "j0_config_info" },
	{ FE_M_GET, "/workers", FE_ROUTE_J0_WORKERS, false, "j0_workers" },
	{ FE_M_GET, "/api/v2/runtimes", FE_ROUTE_PISTON_RUNTIMES, false, "piston_runtimes" },
	{ FE_M_POST, "/api/v2/execute", FE_ROUTE_PISTON_EXECUTE, true, "piston_execute" },
	{ FE_M_GET, "/api/kernelspecs", FE_ROUTE_KERNELSPECS, true, "kernelspecs" },
	{ FE_M_GET, "/api/kernelspecs/{name}", FE_ROUTE_KERNELSPEC, true, "kernelspec" },
	{ FE_M_GET, "/api/kernels", FE_ROUTE_KERNELS_LIST, true, "kernels_list" },
	{ FE_M_POST, "/api/kernels", FE_ROUTE_KERNELS_CREATE, true, "kernels_create" },
	{ FE_M_GET, "/api/kernels/{id}", FE_ROUTE_KERNEL, true, "kernel" },
	{ FE_M_DELETE, "/api/kernels/{id}", FE_ROUTE_KERNEL_DELETE, true, "kernel_delete" },
	{ FE_M_POST, "/api/kernels/{id}/interrupt", FE_ROUTE_KERNEL_INTERRUPT, true, "kernel_interrupt" },
	{ FE_M_POST, "/api/kernels/{id}/restart", FE_ROUTE_KERNEL_RESTART, true, "kernel_restart" },
	{ FE_M_GET, "/api/kernels/{id}/channels", FE_ROUTE_KERNEL_CHANNELS, true, "kernel_channels" },
	/* Jobe: CodeRunner builds its URLs from a host name, so the prefix
	 * is Jobe's own. HEAD files/{id} (does the server hold it?) matches
	 * the GET entry, as every HEAD does. */
	{ FE_M_GET, "/jobe/index.php/restapi/languages", FE_ROUTE_JOBE_LANGUAGES, false, "jobe_languages" },
	{ FE_M_POST, "/jobe/index.php/restapi/runs", FE_ROUTE_JOBE_RUNS, true, "jobe_runs" },
	{ FE_M_GET, "/jobe/index.php/restapi/runresults/{id}", FE_ROUTE_JOBE_RUNRESULT, true, "jobe_runresult" },
	{ FE_M_POST, "/jobe/index.php/restapi/files", FE_ROUTE_JOBE_FILES_POST, true, "jobe_files_post" },
	{ FE_M_PUT, "/jobe/index.php/restapi/files/{id}", FE_ROUTE_JOBE_FILE_PUT, true, "jobe_file_put" },
	{ FE_M_GET, "/jobe/index.php/restapi/files/{id}", FE_ROUTE_JOBE_FILE_CHECK, true, "jobe_file_check" },
	/* Only through fe_playground_match (serve() sends every path under
	 * the prefix there). */
	{ FE_M_GET, "/playground/{tenant}", FE_ROUTE_PLAYGROUND_PAGE, false, "playground_page" },
	{ FE_M_GET, "/playground/{tenant}/static/{file}", FE_ROUTE_PLAYGROUND_PAGE, false, "playground_page" },
};

const size_t fe_routes_len = sizeof(fe_routes) / sizeof(fe_routes[0]);

static bool param_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '-' || c == '.';
}

/* Matches one route; fills params on success. */
static bool match_one(const char *pattern, const char *path, size_t pathlen, struct fe_match *m)
{
	const char *p = pattern, *s = path, *end = path + pathlen;
	size_t np = 0;
	while (*p && s < end) {
		if (*p != '/' || *s != '/')
			return false;
		p++;
		s++;
		const char *pe = strchr(p, '/');
		size_t plen = pe ? (size_t)(pe - p) : strlen(p);
		const char *se = memchr(s, '/', (size_t)(end - s));
		size_t slen = se ? (size_t)(se - s) : (size_t)(end - s);
		if (plen > 0 && p[0] == '{') {
			if (slen == 0 || slen >= FE_ROUTE_PARAM_MAX || np >= FE_ROUTE_PARAMS_MAX)
				return false;
			for (size_t i = 0; i < slen; i++)
				if (!param_char(s[i]))
					return false;
			memcpy(m->params[np], s, slen);
			m->params[np][slen] = '\0';
			np++;
		} else if (plen != slen || memcmp(p, s, slen) != 0) {
			return false;
		}
		p += plen;
		s += slen;
	}
	if (*p || s != end)
		return false;
	m->nparams = np;
	return true;
}

enum fe_match_result fe_route_match(enum fe_method method, const char *path, struct fe_match *m)
{
	memset(m, 0, sizeof(*m));
	if (!path || path[0] != '/')
		return FE_MATCH_NOT_FOUND;
	size_t len = strlen(path);
	if (len > 1 && path[len - 1] == '/')
		len--;
	enum fe_method want = method == FE_M_HEAD ? FE_M_GET : method;
	unsigned allowed = 0;
	struct fe_match tmp;
	for (size_t i = 0; i < fe_routes_len; i++) {
		const struct fe_route *r = &fe_routes[i];
		memset(&tmp, 0, sizeof(tmp));
		if (!match_one(r->pattern, path, len, &tmp))
			continue;
		if (r->method == want) {
			*m = tmp;
			m->route = r;
			return FE_MATCH_OK;
		}
		allowed |= r->method;
		if (r->method == FE_M_GET)
			allowed |= FE_M_HEAD;
	}
	if (allowed) {
		m->allowed = allowed;
		return FE_MATCH_BAD_METHOD;
	}
	return FE_MATCH_NOT_FOUND;
}

const char *fe_method_name(enum fe_method m)
{
	switch (m) {
	case FE_M_GET: return "GET";
	case FE_M_POST: return "POST";
	case FE_M_DELETE: return "DELETE";
	case FE_M_HEAD: return "HEAD";
	case FE_M_OPTIONS: return "OPTIONS";
	case FE_M_PUT: return "PUT";
	case FE_M_PATCH: return "PATCH";
	default: return "OTHER";
	}
}

void fe_methods_list(unsigned mask, char *buf, size_t size)
{
	static const enum fe_method order[] = { FE_M_GET, FE_M_HEAD, FE_M_POST, FE_M_PUT, FE_M_PATCH,
						FE_M_DELETE, FE_M_OPTIONS };
	size_t off = 0;
	if (size == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(mask & order[i]))
			continue;
		int n = snprintf(buf + off, size - off, "%s%s", off ? ", " : "", fe_method_name(order[i]));
		if (n < 0 || (size_t)n >= size - off)
			return;
		off += (size_t)n;
	}
}

bool fe_route_takes_query_key(enum fe_route_id id)
{
	return id == FE_ROUTE_V1_EVENTS || id == FE_ROUTE_KERNEL_CHANNELS;
}

/* ------------------------------------------------- public playgrounds */

bool fe_playground_prefixed(const char *path)
{
	static const size_t plen = sizeof(FE_PLAYGROUND_PREFIX) - 1;
	return path && (!strncmp(path, FE_PLAYGROUND_PREFIX, plen) || !strcmp(path, "/playground"));
}

bool fe_playground_route_allowed(enum fe_route_id id, unsigned access)
{
	switch (id) {
	case FE_ROUTE_J0_GET:
	case FE_ROUTE_V1_SUBMISSION:
	case FE_ROUTE_V1_EVENTS: return (access & (FE_PG_PLAYGROUND | FE_PG_TOKEN)) != 0;
	case FE_ROUTE_PISTON_RUNTIMES:
	case FE_ROUTE_PISTON_EXECUTE:
	case FE_ROUTE_J0_CREATE:
	case FE_ROUTE_J0_LANGUAGES:
	case FE_ROUTE_J0_LANGUAGE:
	case FE_ROUTE_J0_STATUSES:
	case FE_ROUTE_J0_ABOUT:
	case FE_ROUTE_J0_CONFIG_INFO:
	case FE_ROUTE_V1_SUBMIT:
	case FE_ROUTE_V1_LANGUAGES:
	case FE_ROUTE_PLAYGROUND_PAGE: return (access & FE_PG_PLAYGROUND) != 0;
	default: return false;
	}
}

/* The allowlisted methods of path (a root path), as an FE_M_* mask. */
static unsigned allowed_methods(const char *path)
{
	static const enum fe_method methods[] = { FE_M_GET, FE_M_POST, FE_M_PUT, FE_M_PATCH, FE_M_DELETE };
	unsigned mask = 0;
	struct fe_match m;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (fe_route_match(methods[i], path, &m) == FE_MATCH_OK &&
		    fe_playground_route_allowed(m.route->id, FE_PG_PLAYGROUND | FE_PG_TOKEN))
			mask |= methods[i] == FE_M_GET ? (FE_M_GET | FE_M_HEAD) : methods[i];
	return mask;
}

enum fe_match_result fe_playground_match(enum fe_method method, const char *path, struct fe_match *m,
					 char tenant[FE_ROUTE_PARAM_MAX], char *rest, size_t rest_size)
{
	static const size_t plen = sizeof(FE_PLAYGROUND_PREFIX) - 1;
	memset(m, 0, sizeof(*m));
	tenant[0] = '\0';
	if (rest_size)
		rest[0] = '\0';
	if (!path || strncmp(path, FE_PLAYGROUND_PREFIX, plen) != 0)
		return FE_MATCH_NOT_FOUND;
	const char *seg = path + plen, *end = strchr(seg, '/');
	size_t slen = end ? (size_t)(end - seg) : strlen(seg);
	if (slen == 0 || slen >= FE_ROUTE_PARAM_MAX)
		return FE_MATCH_NOT_FOUND;
	for (size_t i = 0; i < slen; i++)
		if (!param_char(seg[i]))
			return FE_MATCH_NOT_FOUND;
	const char *sub = end && end[1] ? end : "/"; /* "/playground/t" and "/playground/t/": the page */
	size_t sublen = strlen(sub);
	if (sublen >= rest_size)
		return FE_MATCH_NOT_FOUND;
	/* The page: its own entries of the table, matched on the whole path. */
	struct fe_match tmp;
	enum fe_match_result mr = fe_route_match(method, path, &tmp);
	if (mr != FE_MATCH_NOT_FOUND && (mr == FE_MATCH_BAD_METHOD || tmp.route->id == FE_ROUTE_PLAYGROUND_PAGE)) {
		if (mr == FE_MATCH_BAD_METHOD && method != FE_M_OPTIONS)
			return FE_MATCH_NOT_FOUND;
		*m = tmp;
		if (mr == FE_MATCH_BAD_METHOD)
			m->allowed = FE_M_GET | FE_M_HEAD;
	} else {
		if (!strcmp(sub, "/"))
			return FE_MATCH_NOT_FOUND;
		mr = fe_route_match(method, sub, &tmp);
		if (mr == FE_MATCH_OK && fe_playground_route_allowed(tmp.route->id, FE_PG_PLAYGROUND | FE_PG_TOKEN) &&
		    tmp.route->id != FE_ROUTE_PLAYGROUND_PAGE) {
			*m = tmp;
		} else if (method == FE_M_OPTIONS && (tmp.allowed = allowed_methods(sub)) != 0) {
			memset(&tmp.params, 0, sizeof(tmp.params));
			tmp.nparams = 0;
			tmp.route = NULL;
			*m = tmp;
			mr = FE_MATCH_BAD_METHOD;
		} else {
			return FE_MATCH_NOT_FOUND;
		}
	}
	memcpy(tenant, seg, slen);
	tenant[slen] = '\0';
	memcpy(rest, sub, sublen + 1);
	return mr;
}
