/* Unit tests of tenants/origin.c: the allowed-origin grammar (what a
 * tenant's cors_origins and frontend.cors_origins accept) and the match of
 * an Origin header against a list, as tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tenants/origin.h"
#include "tenants/quota.h"

static void origin__valid__table(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		bool ok;
	} cases[] = {
		{ "https://judge.example", true },
		{ "http://localhost:8080", true },
		{ "http://127.0.0.1:3000", true },
		{ "https://[2001:db8::1]:8443", true },
		{ "https://[::1]", true },
		{ "*", true },
		{ "https://judge.example/", false },     /* trailing slash */
		{ "https://judge.example/page", false }, /* path */
		{ "https://Judge.example", false },      /* browsers send lower case */
		{ "ftp://judge.example", false },
		{ "judge.example", false },
		{ "https://", false },
		{ "https://a..b", false },
		{ "https://.a", false },
		{ "https://a.", false },
		{ "https://a:0", false },
		{ "https://a:065", false },
		{ "https://a:65536", false },
		{ "https://a:", false },
		{ "https://user@a", false },
		{ "https://[::1", false },
		{ "https://[::1]x", false },
		{ "null", false },
		{ "", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (tenant_origin_valid(cases[i].s, strlen(cases[i].s)) != cases[i].ok)
			fail_msg("'%s': want %s", cases[i].s, cases[i].ok ? "valid" : "invalid");
	}
}

static void origins__parse__normalises_and_refuses(void **state)
{
	(void)state;
	char out[TENANT_ORIGINS_BUF];
	struct gv_err err;
	assert_int_equal(tenant_origins_parse(" https://a.example ,http://localhost:8080 ", out, sizeof(out), &err), 0);
	assert_string_equal(out, "https://a.example,http://localhost:8080");
	assert_int_equal(tenant_origins_parse("", out, sizeof(out), &err), 0);
	assert_string_equal(out, "");
	assert_int_equal(tenant_origins_parse("  ", out, sizeof(out), &err), 0);
	assert_string_equal(out, "");
	assert_int_equal(tenant_origins_parse("*", out, sizeof(out), &err), 0);
	assert_string_equal(out, "*");
	static const char *const bad[] = {
		"https://a.example,https://a.example", /* twice */
		"*,https://a.example",                 /* * stands alone */
		"https://a.example,*",
		"https://a.example/",
		"https://a.example,,https://b.example", /* an empty item */
		"https://a.example,",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tenant_origins_parse(bad[i], out, sizeof(out), &err) == 0)
			fail_msg("'%s' accepted as '%s'", bad[i], out);
		assert_string_equal(out, "");
	}
	/* More than TENANT_ORIGINS_MAX. */
	char many[2048] = "";
	for (int i = 0; i <= TENANT_ORIGINS_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%shttps://h%d.example", i ? "," : "", i);
	assert_int_not_equal(tenant_origins_parse(many, out, sizeof(out), &err), 0);
}

static void origins__allow__exact_or_star(void **state)
{
	(void)state;
	const char *list = "https://a.example,http://localhost:8080";
	assert_true(tenant_origins_allow(list, "https://a.example", 17));
	assert_true(tenant_origins_allow(list, "http://localhost:8080", 21));
	assert_false(tenant_origins_allow(list, "http://localhost:808", 20));
	assert_false(tenant_origins_allow(list, "https://a.example.evil", 22));
	assert_false(tenant_origins_allow(list, "http://a.example", 16));
	assert_false(tenant_origins_allow("", "https://a.example", 17));
	assert_true(tenant_origins_allow("*", "https://any.example", 19));
	/* Never an invalid origin, even under *. */
	assert_false(tenant_origins_allow("*", "null", 4));
	assert_false(tenant_origins_allow("*", "*", 1));
	assert_false(tenant_origins_allow("*", "https://a.example/x", 19));
}

static void quota__cors_origins__set_validated_and_shown(void **state)
{
	(void)state;
	struct tenant_quota q;
	struct gv_err err;
	tenant_quota_defaults(&q);
	assert_string_equal(q.cors_origins, "");
	assert_int_equal(tenant_quota_set(&q, "cors_origins", "https://a.example, https://b.example", &err), 0);
	assert_string_equal(q.cors_origins, "https://a.example,https://b.example");
	assert_int_not_equal(tenant_quota_set(&q, "cors_origins", "https://a.example/path", &err), 0);
	assert_non_null(strstr(err.msg, "cors_origins"));
	assert_string_equal(q.cors_origins, "https://a.example,https://b.example"); /* unchanged */
	json_t *j = tenant_quota_to_json(&q);
	assert_non_null(j);
	json_t *a = json_object_get(j, "cors_origins");
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(json_string_value(json_array_get(a, 1)), "https://b.example");
	json_decref(j);
	/* Not in normal form: refused by validation. */
	strcpy(q.cors_origins, "https://a.example, https://b.example");
	assert_int_not_equal(tenant_quota_validate(&q, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(origin__valid__table),
		cmocka_unit_test(origins__parse__normalises_and_refuses),
		cmocka_unit_test(origins__allow__exact_or_star),
		cmocka_unit_test(quota__cors_origins__set_validated_and_shown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
