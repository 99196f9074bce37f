/* Unit tests of public playgrounds' pure parts: the prefix matcher and its
 * allowlist (frontend/router.h), the client's address bucket
 * (frontend/playground.h), the anonymous quota and token buckets
 * (tenants/playground.h) and the settings (tenants/quota.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "frontend/playground.h"
#include "frontend/router.h"
#include "tenants/playground.h"
#include "tenants/quota.h"

static void prefix__match__table(void **state)
{
	(void)state;
	static const struct {
		enum fe_method m;
		const char *path;
		enum fe_match_result want;
		enum fe_route_id id;
		const char *tenant, *rest, *param;
	} cases[] = {
		/* the allowlist */
		{ FE_M_GET, "/playground/demo/api/v2/runtimes", FE_MATCH_OK, FE_ROUTE_PISTON_RUNTIMES, "demo",
		  "/api/v2/runtimes", NULL },
		{ FE_M_POST, "/playground/demo/api/v2/execute", FE_MATCH_OK, FE_ROUTE_PISTON_EXECUTE, "demo",
		  "/api/v2/execute", NULL },
		{ FE_M_POST, "/playground/demo/submissions", FE_MATCH_OK, FE_ROUTE_J0_CREATE, "demo", "/submissions",
		  NULL },
		{ FE_M_GET, "/playground/demo/submissions/tok_1", FE_MATCH_OK, FE_ROUTE_J0_GET, "demo",
		  "/submissions/tok_1", "tok_1" },
		{ FE_M_HEAD, "/playground/demo/submissions/tok_1", FE_MATCH_OK, FE_ROUTE_J0_GET, "demo",
		  "/submissions/tok_1", "tok_1" },
		{ FE_M_GET, "/playground/demo/languages", FE_MATCH_OK, FE_ROUTE_J0_LANGUAGES, "demo", "/languages",
		  NULL },
		{ FE_M_GET, "/playground/demo/languages/71", FE_MATCH_OK, FE_ROUTE_J0_LANGUAGE, "demo",
		  "/languages/71", "71" },
		{ FE_M_GET, "/playground/demo/statuses", FE_MATCH_OK, FE_ROUTE_J0_STATUSES, "demo", "/statuses", NULL },
		{ FE_M_GET, "/playground/demo/about", FE_MATCH_OK, FE_ROUTE_J0_ABOUT, "demo", "/about", NULL },
		{ FE_M_GET, "/playground/demo/config_info", FE_MATCH_OK, FE_ROUTE_J0_CONFIG_INFO, "demo",
		  "/config_info", NULL },
		{ FE_M_POST, "/playground/demo/v1/submissions", FE_MATCH_OK, FE_ROUTE_V1_SUBMIT, "demo",
		  "/v1/submissions", NULL },
		{ FE_M_GET, "/playground/demo/v1/submissions/abc", FE_MATCH_OK, FE_ROUTE_V1_SUBMISSION, "demo",
		  "/v1/submissions/abc", "abc" },
		{ FE_M_GET, "/playground/demo/v1/submissions/abc/events", FE_MATCH_OK, FE_ROUTE_V1_EVENTS, "demo",
		  "/v1/submissions/abc/events", "abc" },
		{ FE_M_GET, "/playground/demo/v1/languages", FE_MATCH_OK, FE_ROUTE_V1_LANGUAGES, "demo",
		  "/v1/languages", NULL },
		/* a tenant's uuid names it too */
		{ FE_M_GET, "/playground/0b8f9a8e-1d2c-4c1e-9f00-000000000001/statuses", FE_MATCH_OK,
		  FE_ROUTE_J0_STATUSES, "0b8f9a8e-1d2c-4c1e-9f00-000000000001", "/statuses", NULL },
		/* the page and its files */
		{ FE_M_GET, "/playground/demo", FE_MATCH_OK, FE_ROUTE_PLAYGROUND_PAGE, "demo", "/", "demo" },
		{ FE_M_GET, "/playground/demo/", FE_MATCH_OK, FE_ROUTE_PLAYGROUND_PAGE, "demo", "/", "demo" },
		{ FE_M_GET, "/playground/demo/static/app.js", FE_MATCH_OK, FE_ROUTE_PLAYGROUND_PAGE, "demo",
		  "/static/app.js", "demo" },
		/* preflights: only the allowlisted methods */
		{ FE_M_OPTIONS, "/playground/demo/submissions", FE_MATCH_BAD_METHOD, FE_ROUTE_NONE, "demo",
		  "/submissions", NULL },
		{ FE_M_OPTIONS, "/playground/demo/", FE_MATCH_BAD_METHOD, FE_ROUTE_NONE, "demo", "/", NULL },
		/* everything else: 404, never 405 */
		{ FE_M_GET, "/playground/demo/submissions", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },       /* Judge0 list */
		{ FE_M_DELETE, "/playground/demo/submissions/tok", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL }, /* delete */
		{ FE_M_POST, "/playground/demo/submissions/batch", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/demo/submissions/batch", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/demo/workers", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/demo/metrics", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/demo/v1/health", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/demo/v1/openapi.json", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/demo/v1/audit", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/demo/v1/usage", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_POST, "/playground/demo/v1/problems", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/demo/v1/problems/p1", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_PUT, "/playground/demo/v1/problems/p1", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_POST, "/playground/demo/", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/demo/playground/demo/statuses", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_OPTIONS, "/playground/demo/v1/audit", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		/* malformed tenants and paths */
		{ FE_M_GET, "/playground/", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground//statuses", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/a%2Fb/statuses", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playground/de mo/statuses", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/statuses", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
		{ FE_M_GET, "/playgroundx/demo/statuses", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL, NULL, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fe_match m;
		char tenant[FE_ROUTE_PARAM_MAX], rest[256];
		enum fe_match_result r = fe_playground_match(cases[i].m, cases[i].path, &m, tenant, rest, sizeof(rest));
		if (r != cases[i].want)
			fail_msg("%s %s: %d, want %d", fe_method_name(cases[i].m), cases[i].path, r, cases[i].want);
		if (r == FE_MATCH_OK) {
			assert_int_equal(m.route->id, cases[i].id);
			if (cases[i].param)
				assert_string_equal(m.params[0], cases[i].param);
		}
		if (r != FE_MATCH_NOT_FOUND) {
			assert_string_equal(tenant, cases[i].tenant);
			assert_string_equal(rest, cases[i].rest);
		} else {
			assert_string_equal(tenant, "");
		}
	}
}

static void prefix__preflight__lists_allowlisted_methods_only(void **state)
{
	(void)state;
	struct fe_match m;
	char tenant[FE_ROUTE_PARAM_MAX], rest[256];
	assert_int_equal(fe_playground_match(FE_M_OPTIONS, "/playground/t/submissions", &m, tenant, rest, sizeof(rest)),
			 FE_MATCH_BAD_METHOD);
	assert_int_equal(m.allowed, FE_M_POST); /* not GET: the list is not on it */
	assert_int_equal(fe_playground_match(FE_M_OPTIONS, "/playground/t/submissions/x", &m, tenant, rest, sizeof(rest)),
			 FE_MATCH_BAD_METHOD);
	assert_int_equal(m.allowed, FE_M_GET | FE_M_HEAD); /* not DELETE */
	/* A rest longer than the caller's buffer is no route. */
	char small[8];
	assert_int_equal(fe_playground_match(FE_M_GET, "/playground/t/statuses", &m, tenant, small, sizeof(small)),
			 FE_MATCH_NOT_FOUND);
}

static void prefix__prefixed__only_the_prefix(void **state)
{
	(void)state;
	assert_true(fe_playground_prefixed("/playground/x"));
	assert_true(fe_playground_prefixed("/playground/"));
	assert_true(fe_playground_prefixed("/playground"));
	assert_false(fe_playground_prefixed("/playgroundx"));
	assert_false(fe_playground_prefixed("/v1/playground/x"));
	assert_false(fe_playground_prefixed(NULL));
}

static void allowlist__by_access(void **state)
{
	(void)state;
	/* Every route id: nothing but the listed ones, for either access. */
	for (int id = FE_ROUTE_NONE; id < FE_ROUTE_COUNT_; id++) {
		bool token = id == FE_ROUTE_J0_GET || id == FE_ROUTE_V1_SUBMISSION || id == FE_ROUTE_V1_EVENTS;
		bool play = token || id == FE_ROUTE_PISTON_RUNTIMES || id == FE_ROUTE_PISTON_EXECUTE ||
			    id == FE_ROUTE_J0_CREATE || id == FE_ROUTE_J0_LANGUAGES || id == FE_ROUTE_J0_LANGUAGE ||
			    id == FE_ROUTE_J0_STATUSES || id == FE_ROUTE_J0_ABOUT || id == FE_ROUTE_J0_CONFIG_INFO ||
			    id == FE_ROUTE_V1_SUBMIT || id == FE_ROUTE_V1_LANGUAGES || id == FE_ROUTE_PLAYGROUND_PAGE;
		if (fe_playground_route_allowed((enum fe_route_id)id, FE_PG_PLAYGROUND) != play)
			fail_msg("route %d with playground", id);
		if (fe_playground_route_allowed((enum fe_route_id)id, FE_PG_TOKEN) != token)
			fail_msg("route %d with token_capability", id);
		assert_false(fe_playground_route_allowed((enum fe_route_id)id, 0));
	}
}

static void client__buckets_v4_v6_and_mapped(void **state)
{
	(void)state;
	char bucket[TENANT_PLAYGROUND_CLIENT_MAX + 1], shown[FE_CLIENT_BUF];
	struct sockaddr_in in = { .sin_family = AF_INET };
	inet_pton(AF_INET, "192.0.2.7", &in.sin_addr);
	assert_int_equal(fe_playground_client((struct sockaddr *)&in, bucket, shown), 0);
	assert_string_equal(bucket, "4:192.0.2.7");
	assert_string_equal(shown, "192.0.2.7");
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	inet_pton(AF_INET6, "2001:db8:1:2:aaaa:bbbb:cccc:dddd", &in6.sin6_addr);
	assert_int_equal(fe_playground_client((struct sockaddr *)&in6, bucket, shown), 0);
	assert_string_equal(bucket, "6:20010db800010002"); /* the /64 */
	assert_string_equal(shown, "2001:db8:1:2:aaaa:bbbb:cccc:dddd");
	inet_pton(AF_INET6, "2001:db8:1:2::1", &in6.sin6_addr);
	char other[TENANT_PLAYGROUND_CLIENT_MAX + 1];
	assert_int_equal(fe_playground_client((struct sockaddr *)&in6, other, shown), 0);
	assert_string_equal(other, bucket); /* same /64, same bucket */
	inet_pton(AF_INET6, "::ffff:192.0.2.7", &in6.sin6_addr);
	assert_int_equal(fe_playground_client((struct sockaddr *)&in6, bucket, shown), 0);
	assert_string_equal(bucket, "4:192.0.2.7");
	struct sockaddr un = { .sa_family = AF_UNIX };
	assert_int_equal(fe_playground_client(&un, bucket, shown), -1);
	assert_int_equal(fe_playground_client(NULL, bucket, shown), -1);
}

static void quota__anonymous__never_above_the_tenant(void **state)
{
	(void)state;
	struct tenant_quota t, a;
	struct gv_err err;
	tenant_quota_defaults(&t);
	assert_false(t.playground);
	assert_false(t.token_capability);
	t.max_gpus = 2;
	tenant_playground_quota(&t, &a);
	assert_int_equal(a.requests_per_second, 2);
	assert_int_equal(a.burst, 10);
	assert_int_equal(a.max_queued, 10);
	assert_int_equal(a.max_gpus, 0);
	assert_false(a.allow_query_key);
	assert_int_equal(a.max_cpu_ms, t.max_cpu_ms);
	assert_string_equal(a.egress_policy, "{\"mode\": \"none\"}");
	/* Playground budgets above the tenant's own are cut to them. */
	assert_int_equal(tenant_quota_set(&t, "playground_rps", "500", &err), 0);
	assert_int_equal(tenant_quota_set(&t, "playground_burst", "500", &err), 0);
	assert_int_equal(tenant_quota_set(&t, "playground_max_queued", "5000", &err), 0);
	tenant_playground_quota(&t, &a);
	assert_int_equal(a.requests_per_second, t.requests_per_second);
	assert_int_equal(a.burst, t.burst);
	assert_int_equal(a.max_queued, t.max_queued);
	/* A tenant without a rate limit still limits each anonymous client. */
	t.requests_per_second = 0;
	tenant_playground_quota(&t, &a);
	assert_int_equal(a.requests_per_second, 500);
}

static void quota__settings__parse_and_refuse(void **state)
{
	(void)state;
	struct tenant_quota q;
	struct gv_err err;
	tenant_quota_defaults(&q);
	assert_int_equal(tenant_quota_set(&q, "playground", "true", &err), 0);
	assert_true(q.playground);
	assert_int_equal(tenant_quota_set(&q, "token_capability", "on", &err), 0);
	assert_true(q.token_capability);
	assert_int_not_equal(tenant_quota_set(&q, "playground", "maybe", &err), 0);
	assert_int_not_equal(tenant_quota_set(&q, "playground_rps", "0", &err), 0);
	assert_int_not_equal(tenant_quota_set(&q, "playground_burst", "-1", &err), 0);
	/* Anonymous code never gets the network, in either order. */
	assert_int_not_equal(tenant_quota_set(&q, "egress_policy", "{\"mode\":\"allowlist\",\"allow\":[\"1.1.1.1:443\"],\"rate_kbit\":1000}", &err), 0);
	assert_non_null(strstr(err.msg, "playground"));
	assert_int_equal(tenant_quota_set(&q, "playground", "false", &err), 0);
	assert_int_equal(tenant_quota_set(&q, "egress_policy", "{\"mode\":\"allowlist\",\"allow\":[\"1.1.1.1:443\"],\"rate_kbit\":1000}", &err), 0);
	assert_int_not_equal(tenant_quota_set(&q, "playground", "true", &err), 0);
	assert_false(q.playground);
}

static void ratelimit__playground_keys(void **state)
{
	(void)state;
	struct tenant_ratelimit_args a;
	struct gv_err err;
	const char *id = "0b8f9a8e-1d2c-4c1e-9f00-000000000001";
	assert_int_equal(tenant_playground_ratelimit_args(id, "4:192.0.2.7", 2, 10, &a, &err), 0);
	assert_string_equal(a.argv[3], "gavel:ratelimit:pg:0b8f9a8e-1d2c-4c1e-9f00-000000000001:4:192.0.2.7");
	assert_string_equal(a.argv[4], "2");
	assert_string_equal(a.argv[5], "10");
	assert_int_equal(a.argvlen[3], strlen(a.argv[3]));
	assert_int_equal(tenant_playground_ratelimit_args(id, NULL, 20, 40, &a, &err), 0);
	assert_string_equal(a.argv[3], "gavel:ratelimit:pg:0b8f9a8e-1d2c-4c1e-9f00-000000000001");
	assert_int_equal(tenant_playground_ratelimit_args(id, "6:20010db800010002", 1, 1, &a, &err), 0);
	/* Refused: not a uuid, a client outside the grammar, no rate. */
	assert_int_not_equal(tenant_playground_ratelimit_args("demo", "4:1.2.3.4", 2, 10, &a, &err), 0);
	assert_int_not_equal(tenant_playground_ratelimit_args(id, "4:1.2.3.4 x", 2, 10, &a, &err), 0);
	assert_int_not_equal(tenant_playground_ratelimit_args(id, "", 2, 10, &a, &err), 0);
	assert_int_not_equal(tenant_playground_ratelimit_args(id, "4:1.2.3.4", 0, 10, &a, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prefix__match__table),
		cmocka_unit_test(prefix__preflight__lists_allowlisted_methods_only),
		cmocka_unit_test(prefix__prefixed__only_the_prefix),
		cmocka_unit_test(allowlist__by_access),
		cmocka_unit_test(client__buckets_v4_v6_and_mapped),
		cmocka_unit_test(quota__anonymous__never_above_the_tenant),
		cmocka_unit_test(quota__settings__parse_and_refuse),
		cmocka_unit_test(ratelimit__playground_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
