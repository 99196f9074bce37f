/* executor/daemon/webhook.c's pure parts: the SSRF address classifier (a table
 * of IPv4 and IPv6 cases), callback URL parsing, the signature (RFC 4231
 * vectors), the body (equal to what GET /v1/submissions/{id} answers; the
 * Judge0 callback's equal to Judge0's GET with base64 and default fields),
 * queue items and the retry delay. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "executor/daemon/webhook.h"
#include "frontend/api.h"

static enum exec_webhook_addr_class classify_text(const char *text)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	if (strchr(text, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, text, &in6->sin6_addr) != 1)
			fail_msg("bad test address %s", text);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		if (inet_pton(AF_INET, text, &in->sin_addr) != 1)
			fail_msg("bad test address %s", text);
	}
	return exec_webhook_addr_classify((const struct sockaddr *)&ss);
}

static void addr_classify__table(void **state)
{
	(void)state;
	static const struct {
		const char *addr;
		enum exec_webhook_addr_class want;
	} cases[] = {
		/* IPv4 */
		{ "8.8.8.8", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "1.1.1.1", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "93.184.216.34", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "127.0.0.1", EXEC_WEBHOOK_ADDR_LOOPBACK },
		{ "127.255.255.254", EXEC_WEBHOOK_ADDR_LOOPBACK },
		{ "10.0.0.1", EXEC_WEBHOOK_ADDR_PRIVATE },
		{ "10.255.255.255", EXEC_WEBHOOK_ADDR_PRIVATE },
		{ "172.16.0.1", EXEC_WEBHOOK_ADDR_PRIVATE },
		{ "172.31.255.255", EXEC_WEBHOOK_ADDR_PRIVATE },
		{ "172.15.255.255", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "172.32.0.0", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "192.168.1.1", EXEC_WEBHOOK_ADDR_PRIVATE },
		{ "192.169.0.1", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "169.254.0.1", EXEC_WEBHOOK_ADDR_LINK_LOCAL },
		{ "169.254.169.254", EXEC_WEBHOOK_ADDR_METADATA },
		{ "169.253.255.255", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "0.0.0.0", EXEC_WEBHOOK_ADDR_THIS_NETWORK },
		{ "0.1.2.3", EXEC_WEBHOOK_ADDR_THIS_NETWORK },
		{ "100.64.0.1", EXEC_WEBHOOK_ADDR_CGNAT },
		{ "100.100.100.200", EXEC_WEBHOOK_ADDR_CGNAT }, /* Alibaba's metadata service */
		{ "100.127.255.255", EXEC_WEBHOOK_ADDR_CGNAT },
		{ "100.63.255.255", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "100.128.0.0", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "224.0.0.1", EXEC_WEBHOOK_ADDR_MULTICAST },
		{ "239.255.255.250", EXEC_WEBHOOK_ADDR_MULTICAST },
		{ "240.0.0.1", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "255.255.255.255", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "192.0.0.170", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "192.0.2.1", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "198.18.0.1", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "198.19.255.255", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "198.20.0.0", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "198.51.100.7", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "203.0.113.9", EXEC_WEBHOOK_ADDR_RESERVED },
		/* IPv6 */
		{ "2606:4700:4700::1111", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "2a00:1450:4001:80b::200e", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "::1", EXEC_WEBHOOK_ADDR_LOOPBACK },
		{ "::", EXEC_WEBHOOK_ADDR_THIS_NETWORK },
		{ "fe80::1", EXEC_WEBHOOK_ADDR_LINK_LOCAL },
		{ "febf:ffff::1", EXEC_WEBHOOK_ADDR_LINK_LOCAL },
		{ "fec0::1", EXEC_WEBHOOK_ADDR_PRIVATE },
		{ "fc00::1", EXEC_WEBHOOK_ADDR_UNIQUE_LOCAL },
		{ "fd12:3456:789a::1", EXEC_WEBHOOK_ADDR_UNIQUE_LOCAL },
		{ "fd00:ec2::254", EXEC_WEBHOOK_ADDR_METADATA },
		{ "ff02::1", EXEC_WEBHOOK_ADDR_MULTICAST },
		{ "ff05::fb", EXEC_WEBHOOK_ADDR_MULTICAST },
		{ "::ffff:127.0.0.1", EXEC_WEBHOOK_ADDR_LOOPBACK },
		{ "::ffff:10.1.2.3", EXEC_WEBHOOK_ADDR_PRIVATE },
		{ "::ffff:169.254.169.254", EXEC_WEBHOOK_ADDR_METADATA },
		{ "::ffff:8.8.8.8", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "::127.0.0.1", EXEC_WEBHOOK_ADDR_LOOPBACK },
		{ "64:ff9b::7f00:1", EXEC_WEBHOOK_ADDR_LOOPBACK },
		{ "64:ff9b::192.168.0.1", EXEC_WEBHOOK_ADDR_PRIVATE },
		{ "64:ff9b::8.8.8.8", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "2002:7f00:1::", EXEC_WEBHOOK_ADDR_LOOPBACK },
		{ "2002:a9fe:a9fe::1", EXEC_WEBHOOK_ADDR_METADATA },
		{ "2002:808:808::1", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "2001:db8::1", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "2001::1", EXEC_WEBHOOK_ADDR_RESERVED },   /* Teredo */
		{ "2001:1ff::1", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "2001:200::1", EXEC_WEBHOOK_ADDR_PUBLIC },
		{ "3fff::1", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "100::1", EXEC_WEBHOOK_ADDR_RESERVED },
		{ "4000::1", EXEC_WEBHOOK_ADDR_RESERVED }, /* outside 2000::/3 */
		{ "::2", EXEC_WEBHOOK_ADDR_THIS_NETWORK }, /* IPv4-compatible 0.0.0.2 */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum exec_webhook_addr_class got = classify_text(cases[i].addr);
		if (got != cases[i].want)
			fail_msg("%s: got %s, want %s", cases[i].addr, exec_webhook_addr_class_name(got),
				 exec_webhook_addr_class_name(cases[i].want));
	}
	struct sockaddr unix_sa = { .sa_family = AF_UNIX };
	assert_int_equal(exec_webhook_addr_classify(&unix_sa), EXEC_WEBHOOK_ADDR_RESERVED);
	assert_int_equal(exec_webhook_addr_classify(NULL), EXEC_WEBHOOK_ADDR_RESERVED);
}

static void addr_allowed__only_public_and_test_loopback(void **state)
{
	(void)state;
	assert_true(exec_webhook_addr_allowed(EXEC_WEBHOOK_ADDR_PUBLIC, false));
	assert_false(exec_webhook_addr_allowed(EXEC_WEBHOOK_ADDR_LOOPBACK, false));
	assert_true(exec_webhook_addr_allowed(EXEC_WEBHOOK_ADDR_LOOPBACK, true));
	for (int c = EXEC_WEBHOOK_ADDR_PRIVATE; c <= EXEC_WEBHOOK_ADDR_RESERVED; c++) {
		assert_false(exec_webhook_addr_allowed((enum exec_webhook_addr_class)c, false));
		assert_false(exec_webhook_addr_allowed((enum exec_webhook_addr_class)c, true));
	}
}

static void url_parse__table(void **state)
{
	(void)state;
	static const struct {
		const char *url;
		int ok;
		int https;
		const char *host;
		unsigned port;
	} cases[] = {
		{ "http://example.com/hook", 1, 0, "example.com", 80 },
		{ "https://example.com/hook?x=1", 1, 1, "example.com", 443 },
		{ "https://example.com:8443/", 1, 1, "example.com", 8443 },
		{ "HTTP://Example.com/", 1, 0, "Example.com", 80 },
		{ "http://[2606:4700::1]:8080/x", 1, 0, "2606:4700::1", 8080 },
		{ "http://user:pw@example.com/", 1, 0, "example.com", 80 },
		{ "http://127.0.0.1:9/", 1, 0, "127.0.0.1", 9 },
		{ "ftp://example.com/", 0, 0, NULL, 0 },
		{ "file:///etc/passwd", 0, 0, NULL, 0 },
		{ "gopher://example.com/", 0, 0, NULL, 0 },
		{ "dict://127.0.0.1:6379/", 0, 0, NULL, 0 },
		{ "example.com/hook", 0, 0, NULL, 0 },
		{ "http://", 0, 0, NULL, 0 },
		{ "", 0, 0, NULL, 0 },
		{ "http://[fe80::1%25eth0]/", 0, 0, NULL, 0 },
		{ "http://example.com:0/", 0, 0, NULL, 0 },
		{ "http://example.com:70000/", 0, 0, NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct exec_webhook_target t;
		struct gv_err err = { 0 };
		int rc = exec_webhook_url_parse(cases[i].url, &t, &err);
		if ((rc == 0) != cases[i].ok)
			fail_msg("%s: rc %d (%s), want %s", cases[i].url, rc, err.msg, cases[i].ok ? "ok" : "refused");
		if (!cases[i].ok) {
			assert_int_equal(err.code, GV_EINVAL);
			continue;
		}
		assert_int_equal(t.https, cases[i].https);
		assert_string_equal(t.host, cases[i].host);
		assert_int_equal(t.port, cases[i].port);
	}
	struct exec_webhook_target t;
	struct gv_err err = { 0 };
	assert_int_equal(exec_webhook_url_parse(NULL, &t, &err), -1);
}

static void sign__rfc4231_vectors(void **state)
{
	(void)state;
	char sig[EXEC_WEBHOOK_SIG_MAX];
	/* RFC 4231 test case 2: a short key. */
	const char *data = "what do ya want for nothing?";
	exec_webhook_sign((const unsigned char *)"Jefe", 4, data, strlen(data), sig);
	assert_string_equal(sig, "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	/* Test case 1: 20 bytes of 0x0b, "Hi There". */
	unsigned char key[20];
	memset(key, 0x0b, sizeof(key));
	exec_webhook_sign(key, sizeof(key), "Hi There", 8, sig);
	assert_string_equal(sig, "sha256=b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	/* Test case 6: a key longer than the block (131 bytes of 0xaa). */
	unsigned char big[131];
	memset(big, 0xaa, sizeof(big));
	const char *d6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	exec_webhook_sign(big, sizeof(big), d6, strlen(d6), sig);
	assert_string_equal(sig, "sha256=60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	/* The signature covers every byte: one changed byte changes it. */
	char a[EXEC_WEBHOOK_SIG_MAX], b[EXEC_WEBHOOK_SIG_MAX];
	exec_webhook_sign(key, sizeof(key), "{\"id\":\"x\"}", 10, a);
	exec_webhook_sign(key, sizeof(key), "{\"id\":\"y\"}", 10, b);
	assert_string_not_equal(a, b);
}

static void body__equals_the_native_get(void **state)
{
	(void)state;
	json_t *result = json_pack("{s:s,s:s,s:i}", "kind", "run", "verdict", "AC", "time_ms", 12);
	json_t *request = json_pack("{s:s}", "language", "python3");
	struct exec_webhook_row row = {
		.id = "abcdefghijklmnop",
		.language = "python3",
		.status = "done",
		.verdict = "AC",
		.created_at = "2024-01-02T03:04:05.678Z",
		.finished_at = "2024-01-02T03:04:06.000Z",
		.result = result,
	};
	struct fe_subrow fr = {
		.id = row.id,
		.language = row.language,
		.status = row.status,
		.verdict = row.verdict,
		.created_at = row.created_at,
		.finished_at = row.finished_at,
		.request = request,
		.result = result,
	};
	json_t *ours = exec_webhook_body(&row), *theirs = fe_native_render(&fr);
	assert_non_null(ours);
	assert_true(json_equal(ours, theirs));
	json_decref(ours);
	json_decref(theirs);
	/* Nulls where the API has nulls. */
	row.verdict = NULL;
	row.finished_at = NULL;
	row.result = NULL;
	fr.verdict = NULL;
	fr.finished_at = NULL;
	fr.result = NULL;
	ours = exec_webhook_body(&row);
	theirs = fe_native_render(&fr);
	assert_true(json_equal(ours, theirs));
	assert_true(json_is_null(json_object_get(ours, "verdict")));
	json_decref(ours);
	json_decref(theirs);
	json_decref(result);
	json_decref(request);
}

static void judge0_body__equals_the_judge0_get_base64_default_fields(void **state)
{
	(void)state;
	struct lang_registry reg;
	memset(&reg, 0, sizeof(reg));
	struct fe_catalog cat = { .reg = &reg };
	json_t *request = json_pack("{s:s}", "language", "python3");
	json_t *results[] = {
		json_pack("{s:s,s:s,s:s,s:s,s:i,s:i}", "kind", "run", "verdict", "AC", "stdout", "42\n", "stderr", "",
			  "time_ms", 12, "memory_kb", 5120),
		json_pack("{s:s,s:s,s:i,s:s,s:[{s:s,s:s,s:s}]}", "kind", "judge", "verdict", "WA", "time_ms", 1500,
			  "stderr", "not the test's", "tests", "verdict", "WA", "stdout", "\xc3\xa9 not utf-8 safe? fine",
			  "stderr", "the test's own"),
		/* A compile error ran nothing: Judge0 has null time and memory. */
		json_pack("{s:s,s:s,s:s,s:s,s:i,s:i}", "kind", "run", "verdict", "CE", "status", "CE", "compile_output",
			  "a.c:1: error", "time_ms", 0, "memory_kb", 0),
		json_pack("{s:s,s:s,s:i}", "kind", "run", "verdict", "RE", "signal", 11),
		/* Output that is not text: the exact bytes of the _b64 twins. */
		json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "kind", "run", "verdict", "AC", "stdout", "a\xef\xbf\xbd",
			  "stdout_b64", "YQA=", "stderr", "\xef\xbf\xbd", "stderr_b64", "/w==", "compile_output", "w",
			  "compile_output_b64", "dwA="),
		NULL,
	};
	const char *verdicts[] = { "AC", "WA", "CE", "RE", "AC", NULL };
	const char *statuses[] = { "done", "done", "done", "done", "done", "done" };
	for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++) {
		struct exec_webhook_row row = {
			.id = "abcdefghijklmnop",
			.language = "python3",
			.status = statuses[i],
			.verdict = verdicts[i],
			.created_at = "2024-01-02T03:04:05.678Z",
			.finished_at = "2024-01-02T03:04:06.000Z",
			.result = results[i],
		};
		struct fe_subrow fr = {
			.id = row.id,
			.language = row.language,
			.status = row.status,
			.verdict = row.verdict,
			.created_at = row.created_at,
			.finished_at = row.finished_at,
			.request = request,
			.result = results[i],
		};
		json_t *ours = exec_webhook_judge0_body(&row);
		json_t *theirs = fe_j0_render(&fr, fe_j0_default_fields(), true, &cat);
		assert_non_null(ours);
		if (!json_equal(ours, theirs)) {
			char *a = json_dumps(ours, JSON_SORT_KEYS), *b = json_dumps(theirs, JSON_SORT_KEYS);
			print_error("case %zu:\n ours   %s\n theirs %s\n", i, a, b);
			free(a);
			free(b);
			fail();
		}
		if (i == 4)
			assert_string_equal(json_string_value(json_object_get(ours, "stdout")), "YQA=");
		json_decref(ours);
		json_decref(theirs);
		json_decref(results[i]);
	}
	json_decref(request);
}

static void user_resolve__never_root(void **state)
{
	(void)state;
	struct gv_err err;
	uid_t u = 0;
	gid_t g = 0;
	assert_int_equal(exec_webhook_user_resolve("nobody", &u, &g, &err), 0);
	assert_true(u != 0 && g != 0);
	assert_int_equal(exec_webhook_user_resolve(NULL, &u, &g, &err), 0);
	assert_true(u != 0 && g != 0);
	assert_int_equal(exec_webhook_user_resolve("65534", &u, &g, &err), 0);
	assert_int_equal(u, 65534);
	assert_true(g != 0);
	assert_int_equal(exec_webhook_user_resolve("0", &u, &g, &err), -1);
	assert_int_equal(exec_webhook_user_resolve("root", &u, &g, &err), -1);
	assert_int_equal(exec_webhook_user_resolve("no-such-user-gavel", &u, &g, &err), -1);
	assert_int_equal(exec_webhook_user_resolve("12x", &u, &g, &err), -1);
	assert_int_equal(exec_webhook_user_resolve("99999999999", &u, &g, &err), -1);
}

static void item_parse__table(void **state)
{
	(void)state;
	struct exec_webhook_item it;
	struct gv_err err = { 0 };
	assert_int_equal(exec_webhook_item_parse("0b5c2f7e-1d3a-4b8e-9f00-123456789abc:abcdefghijklmnop:3", &it, &err),
			 0);
	assert_string_equal(it.tid, "0b5c2f7e-1d3a-4b8e-9f00-123456789abc");
	assert_string_equal(it.sid, "abcdefghijklmnop");
	assert_int_equal(it.attempt, 3);
	static const char *const bad[] = {
		"", "t:abcdefghijklmnop", "t:short:1", "t:abcdefghijklmnop:0", "t:abcdefghijklmnop:21",
		"t:abcdefghijklmnop:1x", "t:abcdefghijklmnop:-1", "t:abcdefghijklmnop: 1", "t t:abcdefghijklmnop:1",
		"t:abcdefghijklmnop:", ":abcdefghijklmnop:1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (exec_webhook_item_parse(bad[i], &it, &err) == 0)
			fail_msg("'%s' was accepted", bad[i]);
}

static void retry_delay__doubles_up_to_the_cap(void **state)
{
	(void)state;
	assert_int_equal(exec_webhook_retry_delay_ms(1, 2000, 300000), 2000);
	assert_int_equal(exec_webhook_retry_delay_ms(2, 2000, 300000), 4000);
	assert_int_equal(exec_webhook_retry_delay_ms(4, 2000, 300000), 16000);
	assert_int_equal(exec_webhook_retry_delay_ms(19, 2000, 300000), 300000);
	assert_int_equal(exec_webhook_retry_delay_ms(0, 2000, 300000), 2000);
	assert_int_equal(exec_webhook_retry_delay_ms(3, 5000, 1000), 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(addr_classify__table),
		cmocka_unit_test(addr_allowed__only_public_and_test_loopback),
		cmocka_unit_test(url_parse__table),
		cmocka_unit_test(sign__rfc4231_vectors),
		cmocka_unit_test(body__equals_the_native_get),
		cmocka_unit_test(judge0_body__equals_the_judge0_get_base64_default_fields),
		cmocka_unit_test(user_resolve__never_root),
		cmocka_unit_test(item_parse__table),
		cmocka_unit_test(retry_delay__doubles_up_to_the_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
