/* Unit tests of frontend/client_addr.c: the trusted-proxy list's grammar
 * and the client picked from a peer and its X-Forwarded-For or Forwarded
 * header: spoofed headers from an untrusted peer are ignored, the hops are
 * read from the right skipping trusted proxies, a hop that is no address
 * stops the walk at the proxy that handed it on; the PROXY protocol v1
 * line. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/client_addr.h"

static void sockaddr_of(const char *text, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(40000);
	} else if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(40000);
	} else {
		fail_msg("bad test address %s", text);
	}
}

static void text_of(const struct sockaddr_storage *ss, char *out, size_t size)
{
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, out, (socklen_t)size);
	else if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, out, (socklen_t)size);
	else
		snprintf(out, size, "none");
}

static void client_addr__proxies__grammar(void **state)
{
	(void)state;
	struct fe_proxies p;
	struct gv_err err;
	assert_int_equal(fe_proxies_parse("", "X-Forwarded-For", &p, &err), 0);
	assert_int_equal(p.n, 0);
	assert_int_equal(fe_proxies_parse(" 10.0.0.0/8, 192.0.2.7 ,2001:db8::/32,::1", "forwarded", &p, &err), 0);
	assert_int_equal(p.n, 4);
	assert_true(p.forwarded);
	static const char *const bad[] = { "10.0.0.0/33", "2001:db8::/129", "10.0.0.1/", "10.0.0.1/x", "example.com",
					   "10.0.0.1/-1", "10.0.0.0/8 10.1.0.0/16", "*", "10.0.0.1/0008" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (fe_proxies_parse(bad[i], "X-Forwarded-For", &p, &err) == 0)
			fail_msg("'%s' parsed", bad[i]);
	assert_int_not_equal(fe_proxies_parse("10.0.0.1", "X-Real-IP", &p, &err), 0);
	/* At most FE_PROXIES_MAX items. */
	char many[2048] = "";
	for (int i = 0; i <= FE_PROXIES_MAX; i++) {
		char one[24];
		snprintf(one, sizeof(one), "%s10.0.%d.1", i ? "," : "", i);
		strcat(many, one);
	}
	assert_int_not_equal(fe_proxies_parse(many, "X-Forwarded-For", &p, &err), 0);
}

static void client_addr__trust__ranges_and_mapped(void **state)
{
	(void)state;
	struct fe_proxies p;
	struct gv_err err;
	assert_int_equal(fe_proxies_parse("10.1.0.0/16, 2001:db8::/32, 192.0.2.7", NULL, &p, &err), 0);
	static const struct {
		const char *addr;
		bool trusted;
	} cases[] = {
		{ "10.1.2.3", true },	   { "10.2.0.1", false },    { "192.0.2.7", true },
		{ "192.0.2.8", false },	   { "2001:db8:1::5", true }, { "2001:db9::1", false },
		{ "::ffff:10.1.9.9", true }, { "::ffff:10.3.9.9", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sockaddr_storage ss;
		sockaddr_of(cases[i].addr, &ss);
		if (fe_proxies_trust(&p, (struct sockaddr *)&ss) != cases[i].trusted)
			fail_msg("%s: trusted should be %d", cases[i].addr, cases[i].trusted);
	}
	assert_false(fe_proxies_trust(&p, NULL));
}

struct pick_case {
	const char *peer;
	const char *hdr; /* NULL: no header */
	const char *want;
};

static void run_picks(const char *proxies, const char *header, const struct pick_case *c, size_t n)
{
	struct fe_proxies p;
	struct gv_err err;
	assert_int_equal(fe_proxies_parse(proxies, header, &p, &err), 0);
	for (size_t i = 0; i < n; i++) {
		struct sockaddr_storage peer, out;
		char got[INET6_ADDRSTRLEN];
		sockaddr_of(c[i].peer, &peer);
		fe_client_pick(&p, (struct sockaddr *)&peer, c[i].hdr, &out);
		text_of(&out, got, sizeof(got));
		if (strcmp(got, c[i].want))
			fail_msg("peer %s, %s: '%s' -> %s, want %s", c[i].peer, header, c[i].hdr ? c[i].hdr : "(none)",
				 got, c[i].want);
	}
}

static void client_addr__xff__rule(void **state)
{
	(void)state;
	static const struct pick_case cases[] = {
		/* An untrusted peer is itself, whatever it claims. */
		{ "203.0.113.9", "198.51.100.1", "203.0.113.9" },
		{ "203.0.113.9", NULL, "203.0.113.9" },
		/* A trusted proxy without the header: the proxy. */
		{ "10.0.0.2", NULL, "10.0.0.2" },
		/* The client the proxy appended. */
		{ "10.0.0.2", "198.51.100.1", "198.51.100.1" },
		/* A spoofed hop in front is never reached: the rightmost
		 * untrusted one is the client. */
		{ "10.0.0.2", "1.2.3.4, 198.51.100.1", "198.51.100.1" },
		/* Through two trusted proxies. */
		{ "10.0.0.2", "198.51.100.1, 10.0.0.3", "198.51.100.1" },
		{ "10.0.0.2", "6.6.6.6,198.51.100.1,10.0.0.3,10.0.0.4", "198.51.100.1" },
		/* All trusted: the leftmost. */
		{ "10.0.0.2", "10.0.0.5, 10.0.0.3", "10.0.0.5" },
		/* Garbage stops the walk at the proxy that handed it on. */
		{ "10.0.0.2", "unknown", "10.0.0.2" },
		{ "10.0.0.2", "198.51.100.1, 10.0.0.3, garbage", "10.0.0.2" },
		{ "10.0.0.2", "198.51.100.1, nonsense, 10.0.0.3", "10.0.0.3" },
		{ "10.0.0.2", "300.1.1.1", "10.0.0.2" },
		{ "10.0.0.2", "198.51.100.1:", "10.0.0.2" },
		{ "10.0.0.2", "198.51.100.1:x", "10.0.0.2" },
		/* Ports, brackets, IPv6, mapped, empty items. */
		{ "10.0.0.2", "198.51.100.1:5555", "198.51.100.1" },
		{ "10.0.0.2", "2001:db8::7", "2001:db8::7" },
		{ "10.0.0.2", "[2001:db8::7]:443", "2001:db8::7" },
		{ "10.0.0.2", "[2001:db8::7", "10.0.0.2" },
		{ "10.0.0.2", "::ffff:198.51.100.3", "198.51.100.3" },
		{ "10.0.0.2", "198.51.100.1, , ", "198.51.100.1" },
		{ "10.0.0.2", "", "10.0.0.2" },
		{ "::ffff:10.0.0.2", "198.51.100.1", "198.51.100.1" },
	};
	run_picks("10.0.0.0/24", "X-Forwarded-For", cases, sizeof(cases) / sizeof(cases[0]));
}

static void client_addr__forwarded__rule(void **state)
{
	(void)state;
	static const struct pick_case cases[] = {
		{ "203.0.113.9", "for=198.51.100.1", "203.0.113.9" },
		{ "10.0.0.2", "for=198.51.100.1", "198.51.100.1" },
		{ "10.0.0.2", "for=6.6.6.6, for=198.51.100.1;proto=https;by=10.0.0.2", "198.51.100.1" },
		{ "10.0.0.2", "proto=http;For=\"[2001:db8:cafe::17]:4711\"", "2001:db8:cafe::17" },
		{ "10.0.0.2", "for=198.51.100.1, for=10.0.0.3", "198.51.100.1" },
		{ "10.0.0.2", "for=unknown", "10.0.0.2" },
		{ "10.0.0.2", "for=_hidden, for=10.0.0.3", "10.0.0.3" },
		{ "10.0.0.2", "proto=https", "10.0.0.2" },
		{ "10.0.0.2", "for=\"198.51.100.1:80\"", "198.51.100.1" },
		/* X-Forwarded-For's syntax is not Forwarded's. */
		{ "10.0.0.2", "198.51.100.1", "10.0.0.2" },
	};
	run_picks("10.0.0.0/24", "Forwarded", cases, sizeof(cases) / sizeof(cases[0]));
}

static void client_addr__no_proxies__peer_always(void **state)
{
	(void)state;
	static const struct pick_case cases[] = {
		{ "127.0.0.1", "198.51.100.1", "127.0.0.1" },
		{ "::1", "198.51.100.1", "::1" },
	};
	run_picks("", "X-Forwarded-For", cases, sizeof(cases) / sizeof(cases[0]));
	struct sockaddr_storage out;
	fe_client_pick(NULL, NULL, "1.2.3.4", &out);
	assert_int_equal(out.ss_family, AF_UNSPEC);
}

static void client_addr__proxy_line__table(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int rc;
		const char *want;
	} cases[] = {
		{ "PROXY TCP4 198.51.100.22 203.0.113.7 35646 80\r\n", 1, "198.51.100.22" },
		{ "PROXY TCP6 2001:db8::1 2001:db8::2 35646 443\r\n", 1, "2001:db8::1" },
		{ "PROXY TCP6 ::ffff:198.51.100.3 ::1 1 65535\r\n", 1, "198.51.100.3" },
		{ "PROXY UNKNOWN\r\n", 0, "none" },
		{ "PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n", 0, "none" },
		{ "PROXY TCP4 198.51.100.22 203.0.113.7 35646 80\n", -1, NULL },
		{ "PROXY TCP4 198.51.100.22 203.0.113.7 35646\r\n", -1, NULL },
		{ "PROXY TCP4 198.51.100.22 203.0.113.7 35646 80 9\r\n", -1, NULL },
		{ "PROXY TCP4 198.51.100.22  203.0.113.7 35646 80\r\n", -1, NULL },
		{ "PROXY TCP4 2001:db8::1 203.0.113.7 35646 80\r\n", -1, NULL },
		{ "PROXY TCP6 198.51.100.22 203.0.113.7 35646 80\r\n", -1, NULL },
		{ "PROXY TCP4 198.51.100.22 203.0.113.7 65536 80\r\n", -1, NULL },
		{ "PROXY TCP4 198.51.100.22 203.0.113.7 080 80\r\n", -1, NULL },
		{ "PROXY TCP4 198.51.100.22 203.0.113.7 -1 80\r\n", -1, NULL },
		{ "PROXY UDP4 198.51.100.22 203.0.113.7 1 80\r\n", -1, NULL },
		{ "PROXY UNKNOWNX\r\n", -1, NULL },
		{ "proxy TCP4 198.51.100.22 203.0.113.7 1 80\r\n", -1, NULL },
		{ "GET / HTTP/1.1\r\n", -1, NULL },
		{ "\r\n", -1, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sockaddr_storage out;
		char got[INET6_ADDRSTRLEN];
		int rc = fe_proxy_line_parse(cases[i].line, strlen(cases[i].line), &out);
		if (rc != cases[i].rc)
			fail_msg("'%s': rc %d, want %d", cases[i].line, rc, cases[i].rc);
		if (rc == 1) {
			text_of(&out, got, sizeof(got));
			if (strcmp(got, cases[i].want))
				fail_msg("'%s': %s, want %s", cases[i].line, got, cases[i].want);
		}
	}
	/* A NUL inside, and a line over the protocol's 107 bytes. */
	assert_int_equal(fe_proxy_line_parse("PROXY UNKNOWN\0x\r\n", 17, &(struct sockaddr_storage){ 0 }), -1);
	char longl[200];
	memset(longl, ' ', sizeof(longl));
	memcpy(longl, "PROXY UNKNOWN", 13);
	memcpy(longl + 106, "\r\n", 2);
	assert_int_equal(fe_proxy_line_parse(longl, 108, &(struct sockaddr_storage){ 0 }), -1);
	assert_int_equal(fe_proxy_line_parse(longl, 107 - 2, &(struct sockaddr_storage){ 0 }), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(client_addr__proxies__grammar),
		cmocka_unit_test(client_addr__trust__ranges_and_mapped),
		cmocka_unit_test(client_addr__xff__rule),
		cmocka_unit_test(client_addr__forwarded__rule),
		cmocka_unit_test(client_addr__no_proxies__peer_always),
		cmocka_unit_test(client_addr__proxy_line__table),
	};
	return cmocka_run_group_tests_name("client_addr", tests, NULL, NULL);
}
