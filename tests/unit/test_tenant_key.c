/* Unit tests of tenants/key.c: key format, parsing, hashing, constant-time
 * comparison, pepper parsing and the authentication decision table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tenants/key.h"

static void key__generate__format_and_uniqueness(void **state)
{
	(void)state;
	struct gv_err err;
	char a[TENANT_KEY_BUF], b[TENANT_KEY_BUF];
	assert_int_equal(tenant_key_generate(a, &err), 0);
	assert_int_equal(tenant_key_generate(b, &err), 0);
	assert_int_equal(strlen(a), TENANT_KEY_LEN);
	assert_int_equal(strncmp(a, "gv_", 3), 0);
	assert_string_not_equal(a, b);
	assert_int_equal(tenant_key_parse(a, strlen(a), &err), 0);
	for (int i = 0; i < 200; i++) {
		assert_int_equal(tenant_key_generate(a, &err), 0);
		assert_int_equal(tenant_key_parse(a, strlen(a), &err), 0);
	}
}

static void key__parse__table(void **state)
{
	(void)state;
	static const struct {
		const char *key;
		int ok;
	} cases[] = {
		{ "gv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 1 },
		{ "gv_abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE", 1 },
		{ "gv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB", 0 }, /* non-canonical last char */
		{ "gv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 0 },  /* too short */
		{ "gv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 0 }, /* too long */
		{ "gx_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 0 }, /* prefix */
		{ "gv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA+A", 0 }, /* standard base64 char */
		{ "gv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=A", 0 },
		{ "gv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA AA", 0 },
		{ "", 0 },
	};
	struct gv_err err;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = tenant_key_parse(cases[i].key, strlen(cases[i].key), &err);
		if ((rc == 0) != cases[i].ok)
			fail_msg("case %zu (%s): rc %d", i, cases[i].key, rc);
		if (rc != 0) {
			assert_int_equal(err.code, GV_EINVAL);
			assert_null(strstr(err.msg, "AAAA")); /* never echoes the key */
		}
	}
	/* An embedded NUL counts as a bad character, not an early end. */
	char nul[TENANT_KEY_BUF];
	memcpy(nul, cases[0].key, TENANT_KEY_BUF);
	nul[10] = '\0';
	assert_int_equal(tenant_key_parse(nul, TENANT_KEY_LEN, &err), -1);
	assert_int_equal(tenant_key_parse(NULL, 0, &err), -1);
}

static void key__hash__deterministic_peppered_and_refuses_malformed(void **state)
{
	(void)state;
	struct gv_err err;
	const char *k = "gv_abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE";
	unsigned char h1[32], h2[32], h3[32], h4[32];
	assert_int_equal(tenant_key_hash(k, strlen(k), NULL, h1, &err), 0);
	assert_int_equal(tenant_key_hash(k, strlen(k), NULL, h2, &err), 0);
	assert_true(tenant_key_hash_equal(h1, h2));
	struct tenant_pepper p;
	assert_int_equal(tenant_pepper_parse("00112233445566778899aabbccddeeff", &p, &err), 0);
	assert_int_equal(p.len, 16);
	assert_int_equal(tenant_key_hash(k, strlen(k), &p, h3, &err), 0);
	assert_false(tenant_key_hash_equal(h1, h3));
	struct tenant_pepper none;
	assert_int_equal(tenant_pepper_parse("", &none, &err), 0);
	assert_int_equal(none.len, 0);
	assert_int_equal(tenant_key_hash(k, strlen(k), &none, h4, &err), 0);
	assert_true(tenant_key_hash_equal(h1, h4));
	const char *k2 = "gv_abcdefghijklmnopqrstuvwxyz0123456789-_ABCDI";
	assert_int_equal(tenant_key_hash(k2, strlen(k2), NULL, h2, &err), 0);
	assert_false(tenant_key_hash_equal(h1, h2));
	assert_int_equal(tenant_key_hash("gv_short", 8, NULL, h2, &err), -1);
	char param[TENANT_KEY_HASH_PARAM_BUF];
	tenant_key_hash_param(h1, param);
	assert_int_equal(strlen(param), 66);
	assert_int_equal(strncmp(param, "\\x", 2), 0);
}

static void pepper__parse__table(void **state)
{
	(void)state;
	static const struct {
		const char *hex;
		int ok;
		size_t len;
	} cases[] = {
		{ NULL, 1, 0 },
		{ "  ", 1, 0 },
		{ "00112233445566778899aabbccddeeff", 1, 16 },
		{ " 00112233445566778899AABBCCDDEEFF\n", 1, 16 },
		{ "00112233445566778899aabbccddee", 0, 0 },  /* 15 bytes */
		{ "00112233445566778899aabbccddeef", 0, 0 }, /* odd */
		{ "0011223344556677889gaabbccddeeff", 0, 0 },
	};
	struct gv_err err;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tenant_pepper p;
		int rc = tenant_pepper_parse(cases[i].hex, &p, &err);
		if ((rc == 0) != cases[i].ok)
			fail_msg("case %zu: rc %d", i, rc);
		if (rc == 0)
			assert_int_equal(p.len, cases[i].len);
		else
			assert_int_equal(err.code, GV_ECONFIG);
	}
}

static void auth__decide__table(void **state)
{
	(void)state;
	const int64_t now = 1700000000;
	static const struct {
		const char *name;
		struct tenant_auth_row row;
		enum tenant_auth_decision want;
		int status;
	} cases[] = {
		{ "not found", { .found = false }, TENANT_AUTH_UNKNOWN, 401 },
		{ "valid", { .found = true }, TENANT_AUTH_OK, 200 },
		{ "valid, expires later", { .found = true, .has_expiry = true, .expires_at_s = now + 1 }, TENANT_AUTH_OK, 200 },
		{ "expired now", { .found = true, .has_expiry = true, .expires_at_s = now }, TENANT_AUTH_EXPIRED, 401 },
		{ "expired before", { .found = true, .has_expiry = true, .expires_at_s = now - 100 }, TENANT_AUTH_EXPIRED, 401 },
		{ "revoked", { .found = true, .revoked = true, .revoked_at_s = now - 1 }, TENANT_AUTH_REVOKED, 401 },
		{ "revoked this second", { .found = true, .revoked = true, .revoked_at_s = now }, TENANT_AUTH_REVOKED, 401 },
		{ "disabled tenant", { .found = true, .tenant_disabled = true }, TENANT_AUTH_DISABLED, 403 },
		{ "revoked key of disabled tenant",
		  { .found = true, .tenant_disabled = true, .revoked = true, .revoked_at_s = now - 5 },
		  TENANT_AUTH_REVOKED, 401 },
		{ "expired key of disabled tenant",
		  { .found = true, .tenant_disabled = true, .has_expiry = true, .expires_at_s = now - 5 },
		  TENANT_AUTH_EXPIRED, 401 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum tenant_auth_decision d = tenant_auth_decide(&cases[i].row, now);
		if (d != cases[i].want)
			fail_msg("%s: got %s", cases[i].name, tenant_auth_decision_name(d));
		assert_int_equal(tenant_auth_http_status(d), cases[i].status);
	}
	assert_int_equal(tenant_auth_decide(NULL, now), TENANT_AUTH_UNKNOWN);
	assert_int_equal(tenant_auth_http_status(TENANT_AUTH_MISSING), 401);
	assert_int_equal(tenant_auth_http_status(TENANT_AUTH_MALFORMED), 401);
	assert_string_equal(tenant_auth_error_code(TENANT_AUTH_EXPIRED), "unauthorized");
	assert_string_equal(tenant_auth_error_code(TENANT_AUTH_DISABLED), "forbidden");
	/* Unknown and malformed read the same to the client: no oracle. */
	assert_string_equal(tenant_auth_message(TENANT_AUTH_UNKNOWN), tenant_auth_message(TENANT_AUTH_MALFORMED));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key__generate__format_and_uniqueness),
		cmocka_unit_test(key__parse__table),
		cmocka_unit_test(key__hash__deterministic_peppered_and_refuses_malformed),
		cmocka_unit_test(pepper__parse__table),
		cmocka_unit_test(auth__decide__table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
