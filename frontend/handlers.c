/* The routing glue: fe_handle sends each route to the file of its concern
 * (submit.c, lookup.c, sse.c, stats.c, languages.c, api_problems.c,
 * api_tenant.c, playground_page.c, kernels.c, jobe.c) and answers the static routes itself; fe_handler_cleanup
 * frees whatever handler state a request still holds when it ends. */
#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/api_problems.h"
#include "frontend/api_grades.h"
#include "frontend/api_tenant.h"
#include "frontend/jobe.h"
#include "frontend/kernels.h"
#include "frontend/languages.h"
#include "frontend/lookup.h"
#include "frontend/playground_page.h"
#include "frontend/server_internal.h"
#include "frontend/sse.h"
#include "frontend/stats.h"
#include "frontend/submit.h"

void fe_handler_cleanup(struct fe_req *r)
{
	if (r->timer)
		event_free(r->timer);
	if (r->ping)
		event_free(r->ping);
	r->timer = r->ping = NULL;
	json_decref(r->batch_result);
	r->batch_result = NULL;
	for (size_t i = 0; i < r->batch_n; i++)
		free(r->batch_ids[i]);
	free(r->batch_ids);
	r->batch_ids = NULL;
	r->batch_n = 0;
	if (r->stats)
		fe_stats_free(r->stats);
	r->stats = NULL;
	fe_kernels_cleanup(r);
}

void fe_handle(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	/* Anonymous requests reach only the allowlist of their tenant's
	 * settings; checked once more here, whatever admitted them. */
	if (r->anonymous && !fe_playground_route_allowed(r->m.route->id, r->pg_access)) {
		fe_reply_error(r, 404, "not_found", "no such route");
		return;
	}
	switch (r->m.route->id) {
	case FE_ROUTE_ROOT:
		fe_reply_json(r, 200, json_pack("{s:s,s:s,s:[sss]}", "service", "gavel", "openapi",
						"/v1/openapi.json", "apis", "native /v1", "judge0 1.13.1",
						"piston v2"));
		return;
	case FE_ROUTE_V1_LANGUAGES:
	case FE_ROUTE_J0_LANGUAGES:
	case FE_ROUTE_J0_LANGUAGE:
	case FE_ROUTE_PISTON_RUNTIMES:
	case FE_ROUTE_JOBE_LANGUAGES: fe_handle_languages(r); return;
	case FE_ROUTE_V1_OPENAPI: {
		struct evbuffer *b = evbuffer_new();
		if (!b) {
			fe_reply_error(r, 500, "internal", "out of memory");
			return;
		}
		evbuffer_add(b, fe_openapi_json, strlen(fe_openapi_json));
		fe_reply_raw(r, 200, "application/json", b);
		evbuffer_free(b);
		return;
	}
	case FE_ROUTE_V1_HEALTH:
	case FE_ROUTE_METRICS:
	case FE_ROUTE_J0_WORKERS: fe_handle_stats(r); return;
	case FE_ROUTE_V1_SUBMIT:
	case FE_ROUTE_J0_CREATE:
	case FE_ROUTE_PISTON_EXECUTE: fe_handle_create(r); return;
	case FE_ROUTE_V1_SUBMISSION:
	case FE_ROUTE_J0_GET: fe_handle_get(r); return;
	case FE_ROUTE_V1_EVENTS: fe_handle_events(r); return;
	case FE_ROUTE_V1_AUDIT: fe_handle_audit(r); return;
	case FE_ROUTE_V1_USAGE: fe_handle_usage(r); return;
	case FE_ROUTE_V1_ASSIGNMENT_GRADES: fe_handle_grades(r, r->m.params[0]); return;
	case FE_ROUTE_V1_GRADES: fe_handle_grades(r, fe_query(r, "assignment")); return;
	case FE_ROUTE_V1_PROBLEMS_CREATE:
	case FE_ROUTE_V1_PROBLEMS_LIST:
	case FE_ROUTE_V1_PROBLEM:
	case FE_ROUTE_V1_PROBLEM_PUT:
	case FE_ROUTE_V1_PROBLEM_DELETE: fe_handle_problems(r); return;
	case FE_ROUTE_J0_LIST: fe_handle_list(r); return;
	case FE_ROUTE_J0_DELETE: fe_handle_delete(r); return;
	case FE_ROUTE_J0_BATCH_CREATE: fe_handle_batch_create(r); return;
	case FE_ROUTE_J0_BATCH_GET: fe_handle_batch_get(r); return;
	case FE_ROUTE_J0_STATUSES: fe_reply_json(r, 200, fe_j0_statuses()); return;
	case FE_ROUTE_J0_ABOUT: fe_reply_json(r, 200, fe_j0_about()); return;
	case FE_ROUTE_J0_CONFIG_INFO:
		fe_reply_json(r, 200,
			      fe_j0_config_info(&app->cat, &app->bounds, true, r->tenant_id[0] ? &r->quota : NULL));
		return;
	/* pg_rest is "/" or "/static/{file}" (fe_playground_match) */
	case FE_ROUTE_PLAYGROUND_PAGE: fe_playground_page(r, r->pg_rest[0] == '/' ? r->pg_rest + 1 : r->pg_rest); return;
	case FE_ROUTE_KERNELSPECS:
	case FE_ROUTE_KERNELSPEC:
	case FE_ROUTE_KERNELS_LIST:
	case FE_ROUTE_KERNELS_CREATE:
	case FE_ROUTE_KERNEL:
	case FE_ROUTE_KERNEL_DELETE:
	case FE_ROUTE_KERNEL_INTERRUPT:
	case FE_ROUTE_KERNEL_RESTART:
	case FE_ROUTE_KERNEL_CHANNELS: fe_handle_kernels(r); return;
	case FE_ROUTE_JOBE_RUNS:
	case FE_ROUTE_JOBE_RUNRESULT:
	case FE_ROUTE_JOBE_FILES_POST:
	case FE_ROUTE_JOBE_FILE_PUT:
	case FE_ROUTE_JOBE_FILE_CHECK: fe_handle_jobe(r); return;
	default: fe_reply_error(r, 404, "not_found", "no such route"); return;
	}
}
