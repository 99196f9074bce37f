/* The route table of gavel-frontend and its matcher: method + path to a
 * route id with up to two path parameters. Pure (no libevent), so the table
 * is unit-tested and the OpenAPI test can walk it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum fe_method {
	FE_M_GET = 1 << 0,
	FE_M_POST = 1 << 1,
	FE_M_DELETE = 1 << 2,
	FE_M_HEAD = 1 << 3,
	FE_M_OPTIONS = 1 << 4,
	FE_M_PUT = 1 << 5,
	FE_M_PATCH = 1 << 6,
	FE_M_OTHER = 1 << 7,
};

enum fe_route_id {
	FE_ROUTE_NONE = 0,
	FE_ROUTE_ROOT,
	/* native /v1 */
	FE_ROUTE_V1_SUBMIT,
	FE_ROUTE_V1_SUBMISSION,
	FE_ROUTE_V1_EVENTS,
	FE_ROUTE_V1_LANGUAGES,
	FE_ROUTE_V1_HEALTH,
	FE_ROUTE_V1_OPENAPI,
	FE_ROUTE_METRICS,
	/* Judge0 CE 1.13.1 */
	FE_ROUTE_J0_CREATE,
	FE_ROUTE_J0_LIST,
	FE_ROUTE_J0_GET,
	FE_ROUTE_J0_DELETE,
	FE_ROUTE_J0_BATCH_CREATE,
	FE_ROUTE_J0_BATCH_GET,
	FE_ROUTE_J0_LANGUAGES,
	FE_ROUTE_J0_LANGUAGE,
	FE_ROUTE_J0_STATUSES,
	FE_ROUTE_J0_ABOUT,
	FE_ROUTE_J0_CONFIG_INFO,
	FE_ROUTE_J0_WORKERS,
	/* Piston v2 */
	FE_ROUTE_PISTON_RUNTIMES,
	FE_ROUTE_PISTON_EXECUTE,
	/* the tenant's own audit trail and usage */
	FE_ROUTE_V1_AUDIT,
	FE_ROUTE_V1_USAGE,
	/* a course's grades per assignment (classroom autograding) */
	FE_ROUTE_V1_ASSIGNMENT_GRADES,
	FE_ROUTE_V1_GRADES,
	/* stored problems (issue 6) */
	FE_ROUTE_V1_PROBLEMS_CREATE,
	FE_ROUTE_V1_PROBLEMS_LIST,
	FE_ROUTE_V1_PROBLEM,
	FE_ROUTE_V1_PROBLEM_PUT,
	FE_ROUTE_V1_PROBLEM_DELETE,
	/* a tenant's public playground page and its static files (issue 17) */
	FE_ROUTE_PLAYGROUND_PAGE,
	/* Jupyter's kernel gateway API (hosted notebook kernels, issue 18) */
	FE_ROUTE_KERNELSPECS,
	FE_ROUTE_KERNELSPEC,
	FE_ROUTE_KERNELS_LIST,
	FE_ROUTE_KERNELS_CREATE,
	FE_ROUTE_KERNEL,
	FE_ROUTE_KERNEL_DELETE,
	FE_ROUTE_KERNEL_INTERRUPT,
	FE_ROUTE_KERNEL_RESTART,
	FE_ROUTE_KERNEL_CHANNELS,
	/* Jobe's REST API 1.0, as Moodle's CodeRunner calls it (issue 30) */
	FE_ROUTE_JOBE_LANGUAGES,
	FE_ROUTE_JOBE_RUNS,
	FE_ROUTE_JOBE_RUNRESULT,
	FE_ROUTE_JOBE_FILES_POST,
	FE_ROUTE_JOBE_FILE_PUT,
	FE_ROUTE_JOBE_FILE_CHECK,
	FE_ROUTE_COUNT_
};

#define FE_ROUTE_PARAMS_MAX 2
#define FE_ROUTE_PARAM_MAX 128 /* bytes of one path parameter, with NUL */

struct fe_route {
	enum fe_method method;
	const char *pattern;    /* "/v1/submissions/{id}/events" */
	enum fe_route_id id;
	bool auth;              /* needs a tenant key */
	const char *name;       /* metrics label */
};

/* The routes that take an API key in the query string: those a browser
 * can reach no other way, i.e. the SSE stream (an EventSource sends no
 * headers; for tenants that allow it) and a kernel's WebSocket channels
 * (?token=, as Jupyter's browser clients send it; always). */
bool fe_route_takes_query_key(enum fe_route_id id);

extern const struct fe_route fe_routes[];
extern const size_t fe_routes_len;

enum fe_match_result {
	FE_MATCH_OK,
	FE_MATCH_NOT_FOUND,   /* 404 */
	FE_MATCH_BAD_METHOD,  /* 405; *allowed holds the methods the path takes */
};

struct fe_match {
	const struct fe_route *route;
	size_t nparams;
	char params[FE_ROUTE_PARAMS_MAX][FE_ROUTE_PARAM_MAX];
	unsigned allowed; /* FE_M_* mask when FE_MATCH_BAD_METHOD */
};

/* Matches path (without query string; one trailing '/' ignored) for method.
 * HEAD matches GET routes. A parameter segment matches 1..127 bytes of
 * [A-Za-z0-9_.-]; anything else does not match (404). Pure. */
enum fe_match_result fe_route_match(enum fe_method method, const char *path, struct fe_match *m);

/* ------------------------------------------------ public playgrounds
 *
 * /playground/{tenant}/REST: a tenant's routes without a key, for a tenant
 * whose playground (or token_capability) setting is on
 * (frontend/playground.h has the policy). {tenant} is the tenant's name or
 * uuid, one path parameter. */
#define FE_PLAYGROUND_PREFIX "/playground/"

/* What a tenant's settings open under the prefix. */
enum fe_playground_access {
	FE_PG_PLAYGROUND = 1 << 0, /* the playground setting */
	FE_PG_TOKEN = 1 << 1,      /* the token_capability setting */
};

/* Whether path is "/playground" or under "/playground/": such a path is
 * matched only by fe_playground_match, never as a keyed route. Pure. */
bool fe_playground_prefixed(const char *path);

/* Whether route id may be reached under the prefix with access (a mask of
 * enum fe_playground_access). The allowlist: with FE_PG_PLAYGROUND, Piston's
 * runtimes and execute, Judge0's create, GET of one submission, languages,
 * one language, statuses, about and config_info, the native submit, GET of
 * one submission, its events and the languages, and the page; with
 * FE_PG_TOKEN, GET of one submission (Judge0, native) and its events.
 * Nothing else, ever. Pure. */
bool fe_playground_route_allowed(enum fe_route_id id, unsigned access);

/* Matches a path under the prefix: "/playground/{tenant}" and
 * "/playground/{tenant}/static/{file}" are FE_ROUTE_PLAYGROUND_PAGE
 * (m->params: the tenant, the file); "/playground/{tenant}/REST" is the
 * route REST matches at the root (m->params: REST's), when the allowlist
 * holds it for some access. The tenant segment goes to tenant (the
 * parameter grammar: 1..127 bytes of [A-Za-z0-9_.-]) and REST ("/" for the
 * page itself) to rest. Under the prefix only OPTIONS answers
 * FE_MATCH_BAD_METHOD (m->allowed: the allowlisted methods of the path);
 * any other method that the allowlist does not hold on the path is
 * FE_MATCH_NOT_FOUND, as is a path not under the prefix. Pure. */
enum fe_match_result fe_playground_match(enum fe_method method, const char *path, struct fe_match *m,
					 char tenant[FE_ROUTE_PARAM_MAX], char *rest, size_t rest_size);

/* "GET", "POST", ...; "OTHER" for the rest. */
const char *fe_method_name(enum fe_method m);
/* Writes "GET, HEAD, POST" for mask into buf. */
void fe_methods_list(unsigned mask, char *buf, size_t size);
