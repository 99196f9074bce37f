/* Unit tests of the request-head scanner (frontend/reqscan.c): what it
 * reads of a head is the same for every split of the bytes, it picks the
 * key evhttp's headers would give, finds the route's method and path, and
 * flags a head that holds a NUL or another control byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "frontend/reqscan.h"

struct head_case {
	const char *head;
	size_t len;           /* 0: strlen(head) */
	bool done;
	const char *key;
	enum fe_method method;
	const char *path;     /* NULL: no target */
	const char *query;
	bool bad_byte;
};

#define H(s) s, sizeof(s) - 1

static const struct head_case cases[] = {
	{ H("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"), true, "", FE_M_GET, "/v1/health", "", false },
	{ H("POST /v1/submissions?wait=true HTTP/1.1\r\nX-Auth-Token: abc\r\n\r\n"), true, "abc", FE_M_POST,
	  "/v1/submissions", "wait=true", false },
	/* Bare LF line ends, as evhttp accepts them. */
	{ H("GET /a HTTP/1.1\nAuthorization: Bearer k1\n\n"), true, "k1", FE_M_GET, "/a", "", false },
	/* X-Auth-Token wins over Authorization, whatever the order. */
	{ H("GET /a HTTP/1.1\r\nAuthorization: Bearer k1\r\nx-auth-token:  k2 \r\n\r\n"), true, "k2", FE_M_GET,
	  "/a", "", false },
	{ H("GET /a HTTP/1.1\r\nX-Auth-Token: k2\r\nX-Auth-Token: k3\r\n\r\n"), true, "k2", FE_M_GET, "/a", "",
	  false },
	/* Jobe's X-API-KEY: the key when neither of the others is sent. */
	{ H("POST /jobe/index.php/restapi/runs HTTP/1.1\r\nX-API-KEY: j1\r\n\r\n"), true, "j1", FE_M_POST,
	  "/jobe/index.php/restapi/runs", "", false },
	{ H("GET /a HTTP/1.1\r\nX-API-KEY: j1\r\nAuthorization: Bearer k1\r\n\r\n"), true, "k1", FE_M_GET, "/a",
	  "", false },
	{ H("GET /a HTTP/1.1\r\nX-API-KEY: j1\r\nX-Auth-Token: k2\r\nAuthorization: Bearer k1\r\n\r\n"), true,
	  "k2", FE_M_GET, "/a", "", false },
	{ H("GET /a HTTP/1.1\r\nAuthorization: Bearer k1\r\nX-API-KEY: j1\r\n\r\n"), true, "k1", FE_M_GET, "/a",
	  "", false },
	/* Not a bearer: no key. */
	{ H("GET /a HTTP/1.1\r\nAuthorization: Basic dTpw\r\n\r\n"), true, "", FE_M_GET, "/a", "", false },
	/* An absolute-form target is routed by its path. */
	{ H("PUT http://h.example/v1/problems/p HTTP/1.1\r\n\r\n"), true, "", FE_M_PUT, "/v1/problems/p", "",
	  false },
	{ H("BREW /pot HTTP/1.1\r\n\r\n"), true, "", FE_M_OTHER, "/pot", "", false },
	/* Head not finished: no target yet. */
	{ H("GET /a HTTP/1.1\r\nHost: x\r\n"), false, "", FE_M_GET, NULL, NULL, false },
	/* No version: not a request line we route. */
	{ H("GET /a\r\n\r\n"), true, "", FE_M_GET, NULL, NULL, false },
	/* A key followed by a NUL and junk: flagged (evhttp would read "key"). */
	{ H("GET /a HTTP/1.1\r\nX-Auth-Token: key\0junk\r\n\r\n"), true, "", FE_M_GET, "/a", "", true },
	{ H("GET /a HTTP/1.1\r\nX-Note: a\x01" "b\r\n\r\n"), true, "", FE_M_GET, "/a", "", true },
	{ H("GET /a HTTP/1.1\r\nX-Note: a\x7f\r\n\r\n"), true, "", FE_M_GET, "/a", "", true },
	{ H("GET /a\0b HTTP/1.1\r\n\r\n"), true, "", FE_M_GET, NULL, NULL, true },
	/* HT and obs-text are allowed in a field value. */
	{ H("GET /a HTTP/1.1\r\nX-Note: a\tb\xc3\xa9\r\n\r\n"), true, "", FE_M_GET, "/a", "", false },
};

static void check_case(const struct head_case *c, size_t split_every)
{
	struct fe_reqscan s;
	fe_reqscan_reset(&s);
	size_t off = 0;
	while (off < c->len && !fe_reqscan_done(&s)) {
		size_t n = c->len - off < split_every ? c->len - off : split_every;
		off += fe_reqscan_feed(&s, c->head + off, n);
	}
	if (fe_reqscan_done(&s) != c->done)
		fail_msg("%.40s (split %zu): done %d", c->head, split_every, fe_reqscan_done(&s));
	if (!c->done)
		return;
	assert_int_equal(s.head_bytes, c->len);
	if (s.bad_byte != c->bad_byte)
		fail_msg("%.40s (split %zu): bad_byte %d", c->head, split_every, s.bad_byte);
	if (!c->bad_byte)
		assert_string_equal(fe_reqscan_key(&s), c->key);
	enum fe_method m;
	char path[64], query[64];
	bool has = fe_reqscan_target(&s, &m, path, sizeof(path), query, sizeof(query));
	if (!c->path) {
		assert_false(has);
		return;
	}
	if (!has)
		fail_msg("%.40s (split %zu): no target", c->head, split_every);
	assert_int_equal(m, c->method);
	assert_string_equal(path, c->path);
	assert_string_equal(query, c->query);
}

static void reqscan__table__same_for_every_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t split = 1; split <= cases[i].len; split++)
			check_case(&cases[i], split);
}

/* Bytes after the empty line belong to the body: the scanner stops there. */
static void reqscan__body_after_head__not_consumed(void **state)
{
	(void)state;
	static const char req[] = "POST /v1/submissions HTTP/1.1\r\nContent-Length: 3\r\n\r\n\0\0\0";
	struct fe_reqscan s;
	fe_reqscan_reset(&s);
	size_t took = fe_reqscan_feed(&s, req, sizeof(req) - 1);
	assert_true(fe_reqscan_done(&s));
	assert_int_equal(took, sizeof(req) - 1 - 3);
	assert_false(s.bad_byte);
}

/* A key longer than any real one is not kept; a header line longer than
 * the scanner's buffer is skipped whole, not cut into a key. */
static void reqscan__long_key__not_kept(void **state)
{
	(void)state;
	char head[FE_REQSCAN_HDR_MAX * 2 + 128];
	char key[TENANT_KEY_PRESENTED_MAX + 2];
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	int n = snprintf(head, sizeof(head), "GET /a HTTP/1.1\r\nX-Auth-Token: %s\r\n\r\n", key);
	struct fe_reqscan s;
	fe_reqscan_reset(&s);
	fe_reqscan_feed(&s, head, (size_t)n);
	assert_true(fe_reqscan_done(&s));
	assert_string_equal(fe_reqscan_key(&s), "");
}

/* A reset starts a fresh head: nothing of the last one stays. */
static void reqscan__reset__forgets_everything(void **state)
{
	(void)state;
	static const char bad[] = "GET /a HTTP/1.1\r\nX-Auth-Token: k\x01\r\n\r\n";
	static const char good[] = "GET /b HTTP/1.1\r\n\r\n";
	struct fe_reqscan s;
	fe_reqscan_reset(&s);
	fe_reqscan_feed(&s, bad, sizeof(bad) - 1);
	assert_true(s.bad_byte);
	fe_reqscan_reset(&s);
	fe_reqscan_feed(&s, good, sizeof(good) - 1);
	assert_false(s.bad_byte);
	assert_string_equal(fe_reqscan_key(&s), "");
	assert_int_equal(s.head_bytes, sizeof(good) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reqscan__table__same_for_every_split),
		cmocka_unit_test(reqscan__body_after_head__not_consumed),
		cmocka_unit_test(reqscan__long_key__not_kept),
		cmocka_unit_test(reqscan__reset__forgets_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
