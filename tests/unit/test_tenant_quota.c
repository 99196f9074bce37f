/* Unit tests of tenants/quota.c and the pure parts of ratelimit.c and
 * audit.c: per-job ceilings, operator settings, the rate-limit command
 * and reply, and the audit record hash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tenants/audit.h"
#include "tenants/quota.h"

static void quota__defaults__valid(void **state)
{
	(void)state;
	struct tenant_quota q;
	struct gv_err err;
	tenant_quota_defaults(&q);
	assert_int_equal(tenant_quota_validate(&q, &err), 0);
	assert_int_equal(q.weight, 1);
	assert_int_equal(q.n_allowed_languages, 0);
}

static void quota__check_job__names_first_limit(void **state)
{
	(void)state;
	struct tenant_quota q;
	struct gv_err err;
	tenant_quota_defaults(&q);
	assert_int_equal(tenant_quota_set(&q, "allowed_languages", "c, cpp,python3", &err), 0);
	assert_int_equal(q.n_allowed_languages, 3);
	static const struct {
		const char *name;
		struct tenant_job_request r;
		const char *limit; /* NULL: fits */
	} cases[] = {
		{ "nothing asked", { 0 }, NULL },
		{ "at every ceiling", { "cpp", 10000, 20000, 512, 1024, 0, false }, NULL },
		{ "language not listed", { "java", 1, 1, 1, 1, 0, false }, "allowed_languages" },
		{ "cpu over", { "c", 10001, 0, 0, 0, 0, false }, "max_cpu_ms" },
		{ "wall over", { "c", 0, 20001, 0, 0, 0, false }, "max_wall_ms" },
		{ "memory over", { "c", 0, 0, 513, 0, 0, false }, "max_memory_mb" },
		{ "output over", { "c", 0, 0, 0, 1025, 0, false }, "max_output_kb" },
		{ "gpus over", { "c", 0, 0, 0, 0, 1, false }, "max_gpus" },
		{ "egress with none policy", { "c", 0, 0, 0, 0, 0, true }, "egress_policy" },
		{ "cpu and memory over: cpu first", { "c", 99999, 0, 9999, 0, 0, false }, "max_cpu_ms" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tenant_quota_violation v;
		int rc = tenant_quota_check_job(&q, &cases[i].r, &v);
		if (!cases[i].limit) {
			if (rc != 0)
				fail_msg("%s: refused by %s", cases[i].name, v.limit);
			continue;
		}
		if (rc != 1)
			fail_msg("%s: accepted", cases[i].name);
		assert_string_equal(v.limit, cases[i].limit);
		assert_non_null(strstr(v.message, cases[i].limit));
	}
	struct tenant_quota_violation v;
	struct tenant_job_request r = { .cpu_ms = 20000 };
	assert_int_equal(tenant_quota_check_job(&q, &r, &v), 1);
	assert_string_equal(v.message, "max_cpu_ms: requested 20000, allowed 10000");
	/* Egress granted by an allowlist policy. */
	assert_int_equal(tenant_quota_set(&q, "egress_policy", "{\"mode\":\"allowlist\",\"allow\":[\"203.0.113.0/24:443\"],\"rate_kbit\":1000}", &err), 0);
	r = (struct tenant_job_request){ .wants_egress = true };
	assert_int_equal(tenant_quota_check_job(&q, &r, &v), 0);
}

static void quota__check_queued__at_limit_refuses(void **state)
{
	(void)state;
	struct tenant_quota q;
	struct tenant_quota_violation v;
	tenant_quota_defaults(&q);
	q.max_queued = 3;
	assert_int_equal(tenant_quota_check_queued(&q, 2, &v), 0);
	assert_int_equal(tenant_quota_check_queued(&q, 3, &v), 1);
	assert_string_equal(v.limit, "max_queued");
	q.max_queued = 0;
	assert_int_equal(tenant_quota_check_queued(&q, 0, &v), 1);
}

static void quota__set__table(void **state)
{
	(void)state;
	static const struct {
		const char *key, *value;
		int ok;
	} cases[] = {
		{ "weight", "5", 1 },
		{ "weight", "0", 0 },
		{ "weight", "10001", 0 },
		{ "weight", "5x", 0 },
		{ "weight", "", 0 },
		{ "max_cpu_ms", "86400000", 1 },
		{ "max_cpu_ms", "86400001", 0 },
		{ "requests_per_second", "0", 1 },
		{ "burst", "0", 0 },
		{ "allowed_languages", "*", 1 },
		{ "allowed_languages", "c,,cpp", 0 },
		{ "allowed_languages", "c,c", 0 },
		{ "allowed_languages", "c;rm", 0 },
		{ "egress_policy", "{\"mode\":\"none\"}", 1 },
		{ "egress_policy", "{\"mode\":\"open\"}", 0 },
		{ "egress_policy", "{\"mode\":\"allowlist\",\"allow\":[\"a:443\"],\"rate_kbit\":1000}", 1 },
		{ "egress_policy", "{\"mode\":\"allowlist\",\"surprise\":1}", 0 },
		{ "egress_policy", "[1]", 0 },
		{ "egress_policy", "not json", 0 },
		{ "no_such_quota", "1", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tenant_quota q, before;
		struct gv_err err;
		tenant_quota_defaults(&q);
		before = q;
		int rc = tenant_quota_set(&q, cases[i].key, cases[i].value, &err);
		if ((rc == 0) != cases[i].ok)
			fail_msg("%s=%s: rc %d (%s)", cases[i].key, cases[i].value, rc, rc ? err.msg : "");
		if (rc != 0)
			assert_memory_equal(&q, &before, sizeof(q)); /* untouched on failure */
	}
}

static void quota__to_json__round_trip_fields(void **state)
{
	(void)state;
	struct tenant_quota q;
	struct gv_err err;
	tenant_quota_defaults(&q);
	assert_int_equal(tenant_quota_set(&q, "allowed_languages", "c,go", &err), 0);
	json_t *j = tenant_quota_to_json(&q);
	assert_non_null(j);
	assert_int_equal(json_object_size(j), TENANT_QUOTA_NCOLS);
	assert_int_equal(json_array_size(json_object_get(j, "allowed_languages")), 2);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "egress_policy"), "mode")), "none");
	json_decref(j);
}

static void ratelimit__args__eval_shape(void **state)
{
	(void)state;
	struct tenant_quota q;
	struct tenant_ratelimit_args a;
	struct gv_err err;
	tenant_quota_defaults(&q);
	const char *id = "0b8f9a8e-1d2c-4c1e-9f00-000000000001";
	assert_int_equal(tenant_ratelimit_args(id, &q, 1, &a, &err), 0);
	assert_int_equal(a.argc, 7);
	assert_string_equal(a.argv[0], "EVAL");
	assert_ptr_equal(a.argv[1], TENANT_RATELIMIT_SCRIPT);
	assert_string_equal(a.argv[2], "1");
	assert_string_equal(a.argv[3], "gavel:ratelimit:0b8f9a8e-1d2c-4c1e-9f00-000000000001");
	assert_string_equal(a.argv[4], "20");
	assert_string_equal(a.argv[5], "40");
	assert_string_equal(a.argv[6], "1");
	assert_int_equal(a.argvlen[3], strlen(a.argv[3]));
	assert_int_equal(tenant_ratelimit_args("not-a-uuid", &q, 1, &a, &err), -1);
	assert_int_equal(tenant_ratelimit_args(id, &q, 41, &a, &err), -1);
	q.requests_per_second = 0;
	assert_int_equal(tenant_ratelimit_args(id, &q, 1, &a, &err), -1);
}

static void ratelimit__parse_reply__table(void **state)
{
	(void)state;
	redisReply e[5], *pe[5];
	long long vals[5] = { 0, 3, 2, 1, 40 };
	for (int i = 0; i < 5; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		e[i].type = REDIS_REPLY_INTEGER;
		e[i].integer = vals[i];
		pe[i] = &e[i];
	}
	redisReply arr = { .type = REDIS_REPLY_ARRAY, .elements = 5, .element = pe };
	struct tenant_ratelimit_result r = { .limit = 40 };
	struct gv_err err;
	assert_int_equal(tenant_ratelimit_parse_reply(&arr, &r, &err), 0);
	assert_false(r.allowed);
	assert_int_equal(r.limit, 40);
	assert_int_equal(r.remaining, 3);
	assert_int_equal(r.reset_s, 2);
	assert_int_equal(r.retry_after_s, 1);
	assert_int_equal(r.retry_after_ms, 40);
	e[0].integer = 1;
	e[3].integer = 0;
	assert_int_equal(tenant_ratelimit_parse_reply(&arr, &r, &err), 0);
	assert_true(r.allowed);
	assert_int_equal(r.retry_after_s, 0);
	e[2].type = REDIS_REPLY_STRING;
	assert_int_equal(tenant_ratelimit_parse_reply(&arr, &r, &err), -1);
	assert_int_equal(err.code, GV_EPROTO);
	e[2].type = REDIS_REPLY_INTEGER;
	arr.elements = 4;
	assert_int_equal(tenant_ratelimit_parse_reply(&arr, &r, &err), -1);
	redisReply er = { .type = REDIS_REPLY_ERROR, .str = (char *)"NOSCRIPT", .len = 8 };
	assert_int_equal(tenant_ratelimit_parse_reply(&er, &r, &err), -1);
	assert_int_equal(err.code, GV_EREDIS);
}

static void audit__hash__every_field_counts_and_null_differs_from_empty(void **state)
{
	(void)state;
	unsigned char prev[32];
	memset(prev, 7, sizeof(prev));
	struct tenant_audit_record base = {
		.tenant_id = "0b8f9a8e-1d2c-4c1e-9f00-000000000001", .seq = 2, .at_us = 1700000000123456,
		.actor = "key:x", .action = "submission.created", .object = "abc", .node = NULL, .sandbox = NULL,
		.details = "{}", .prev_hash = prev,
	};
	struct gv_err err;
	unsigned char h0[32], h[32];
	assert_int_equal(tenant_audit_hash(&base, h0, &err), 0);
	assert_int_equal(tenant_audit_hash(&base, h, &err), 0);
	assert_memory_equal(h0, h, 32);
	struct tenant_audit_record v[9];
	for (int i = 0; i < 9; i++)
		v[i] = base;
	v[0].seq = 3;
	v[1].at_us++;
	v[2].actor = "key:y";
	v[3].action = "x";
	v[4].object = NULL;
	v[5].node = ""; /* NULL and "" must differ */
	v[6].details = "{\"a\": 1}";
	v[7].prev_hash = NULL;
	v[8].tenant_id = NULL;
	for (int i = 0; i < 9; i++) {
		assert_int_equal(tenant_audit_hash(&v[i], h, &err), 0);
		if (memcmp(h, h0, 32) == 0)
			fail_msg("variant %d hashes like the base record", i);
	}
	/* Field boundaries are unambiguous: "ab"+"c" differs from "a"+"bc". */
	struct tenant_audit_record a = base, b = base;
	a.actor = "ab";
	a.action = "c";
	b.actor = "a";
	b.action = "bc";
	unsigned char ha[32], hb[32];
	assert_int_equal(tenant_audit_hash(&a, ha, &err), 0);
	assert_int_equal(tenant_audit_hash(&b, hb, &err), 0);
	assert_memory_not_equal(ha, hb, 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quota__defaults__valid),
		cmocka_unit_test(quota__check_job__names_first_limit),
		cmocka_unit_test(quota__check_queued__at_limit_refuses),
		cmocka_unit_test(quota__set__table),
		cmocka_unit_test(quota__to_json__round_trip_fields),
		cmocka_unit_test(ratelimit__args__eval_shape),
		cmocka_unit_test(ratelimit__parse_reply__table),
		cmocka_unit_test(audit__hash__every_field_counts_and_null_differs_from_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
