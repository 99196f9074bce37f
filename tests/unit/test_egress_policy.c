/* Unit tests of the egress policy grammar (tenants/egress.c) and the pure
 * parts of the sandbox network (executor/sandbox/netpolicy.c): names, the pool,
 * the nft ruleset, the bundle's network namespace and runsc's flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "executor/sandbox/bundle.h"
#include "executor/sandbox/netpolicy.h"
#include "executor/sandbox/runsc.h"
#include "tenants/egress.h"
#include "tenants/quota.h"

static struct tenant_egress_policy pol;

static void egress__parse__table(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int ok;
		const char *err_has; /* part of the message when refused */
	} cases[] = {
		{"{\"mode\":\"none\"}", 1, NULL},
		{"{\"mode\":\"none\",\"allow\":[\"198.51.100.1:80\"]}", 0, "none"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1:80\"],\"rate_kbit\":1000}", 1, NULL},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1:80\"]}", 0, "rate"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1:80\"],\"egress_kbit\":5}", 0, "rate"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1:80\"],\"egress_kbit\":5,\"ingress_kbit\":7}", 1, NULL},
		{"{\"mode\":\"allowlist\",\"allow\":[],\"rate_kbit\":1000}", 0, "non-empty"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"10.1.2.3:80\"],\"rate_kbit\":1000}", 0, "always refused"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"169.254.169.254:80\"],\"rate_kbit\":1000}", 0, "always refused"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"127.0.0.1:5432\"],\"rate_kbit\":1000}", 0, "always refused"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"100.64.0.0/16:80\"],\"rate_kbit\":1000}", 0, "always refused"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"224.0.0.1:80\"],\"rate_kbit\":1000}", 0, "always refused"},
		/* A wider net that contains refused ranges is allowed: the filter
		 * refuses those first, whatever the allow list says. */
		{"{\"mode\":\"allowlist\",\"allow\":[\"0.0.0.0/0:443\"],\"rate_kbit\":1000}", 1, NULL},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1/24:80\"],\"rate_kbit\":1000}", 0, "host bits"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.0/24:80-90\"],\"rate_kbit\":1000}", 1, NULL},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.0/24:90-80\"],\"rate_kbit\":1000}", 0, "port range"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1:0\"],\"rate_kbit\":1000}", 0, "bad port"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1:65536\"],\"rate_kbit\":1000}", 0, "bad port"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1\"],\"rate_kbit\":1000}", 0, "TARGET:PORT"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"udp:203.0.113.5:53\"],\"rate_kbit\":1000}", 1, NULL},
		{"{\"mode\":\"allowlist\",\"allow\":[\"api.Example.com:443\"],\"rate_kbit\":1000}", 1, NULL},
		{"{\"mode\":\"allowlist\",\"allow\":[\"localhost:443\"],\"rate_kbit\":1000}", 0, "loopback"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"[::1]:443\"],\"rate_kbit\":1000}", 0, "IPv6"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"bad host:443\"],\"rate_kbit\":1000}", 0, "host name"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"a;b:443\"],\"rate_kbit\":1000}", 0, "host name"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"1.2.3:443\"],\"rate_kbit\":1000}", 0, "host name"},
		{"{\"mode\":\"allowlist\",\"allow\":[7],\"rate_kbit\":1000}", 0, "strings"},
		{"{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1:80\"],\"rate_kbit\":0}", 0, NULL},
		{"{\"mode\":\"open\"}", 0, "mode"},
		{"{\"mode\":\"none\",\"surprise\":1}", 0, NULL},
		{"[1]", 0, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gv_err err;
		int rc = tenant_egress_parse(cases[i].text, &pol, &err);
		if ((rc == 0) != cases[i].ok)
			fail_msg("case %zu (%s): rc %d: %s", i, cases[i].text, rc, rc ? err.msg : "");
		if (!cases[i].ok && cases[i].err_has && !strstr(err.msg, cases[i].err_has))
			fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg, cases[i].err_has);
	}
}

static void egress__parse__fields(void **state)
{
	(void)state;
	struct gv_err err;
	assert_int_equal(tenant_egress_parse("{\"mode\":\"allowlist\",\"allow\":[\"udp:203.0.113.0/24:53-54\","
					     "\"Api.example.com:443\"],\"rate_kbit\":2000,\"ingress_kbit\":9000}",
					     &pol, &err),
			 0);
	assert_true(pol.grants);
	assert_int_equal(pol.n_rules, 2);
	assert_int_equal(pol.rules[0].proto, TENANT_EGRESS_UDP);
	assert_int_equal(pol.rules[0].addr, 0xcb007100u);
	assert_int_equal(pol.rules[0].prefix, 24);
	assert_int_equal(pol.rules[0].port_lo, 53);
	assert_int_equal(pol.rules[0].port_hi, 54);
	assert_true(pol.rules[1].is_host);
	assert_string_equal(pol.rules[1].host, "api.example.com");
	assert_int_equal(pol.rules[1].proto, TENANT_EGRESS_TCP);
	assert_int_equal(pol.egress_kbit, 2000);
	assert_int_equal(pol.ingress_kbit, 9000);
	assert_int_equal(tenant_egress_parse("{\"mode\":\"none\"}", &pol, &err), 0);
	assert_false(pol.grants);
}

static void egress__refused_ranges__cover_private_and_metadata(void **state)
{
	(void)state;
	static const uint32_t refused[] = {0x7f000001u, 0x0a000001u, 0xac100001u, 0xc0a80101u, 0xa9fea9feu,
					   0x64400001u, 0xe0000001u, 0xffffffffu, 0x00000000u};
	static const uint32_t open[] = {0x08080808u, 0xc6336401u, 0xcb007101u, 0x01010101u};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_true(tenant_egress_addr_refused(refused[i]));
	for (size_t i = 0; i < sizeof(open) / sizeof(open[0]); i++)
		assert_false(tenant_egress_addr_refused(open[i]));
}

static void egress__quota__validates_with_the_same_grammar(void **state)
{
	(void)state;
	struct tenant_quota q;
	struct gv_err err;
	tenant_quota_defaults(&q);
	assert_int_not_equal(tenant_quota_set(&q, "egress_policy",
					      "{\"mode\":\"allowlist\",\"allow\":[\"192.168.1.1:22\"],\"rate_kbit\":10}", &err),
			     0);
	assert_int_equal(tenant_quota_set(&q, "egress_policy",
					  "{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.1:22\"],\"rate_kbit\":10}", &err),
			 0);
}

static const struct exec_net_config cfg = {.prefix = "gva01", .pool = 0x0ad50000u, .slots = 64};

static void netpolicy__names__slot_addresses_and_prefix(void **state)
{
	(void)state;
	struct exec_net n;
	struct gv_err err;
	assert_int_equal(exec_net_names(&cfg, 10, &n, &err), 0);
	assert_string_equal(n.base, "gva0100a");
	assert_string_equal(n.host_if, "gva0100ah");
	assert_string_equal(n.peer_if, "gva0100ap");
	assert_string_equal(n.ifb_if, "gva0100ai");
	assert_string_equal(n.netns_path, "/run/netns/gva0100a");
	assert_int_equal(n.host_addr, 0x0ad50029u);
	assert_int_equal(n.sandbox_addr, 0x0ad5002au);
	assert_int_not_equal(exec_net_names(&cfg, 64, &n, &err), 0);
	struct exec_net_config bad = cfg;
	bad.prefix = "GV-1";
	assert_int_not_equal(exec_net_config_check(&bad, &err), 0);
	bad = cfg;
	bad.pool = 0x0ad50002u;
	assert_int_not_equal(exec_net_config_check(&bad, &err), 0);
	assert_int_equal(exec_net_config_check(&cfg, &err), 0);
	uint32_t pool, slots;
	assert_int_equal(exec_net_pool_parse("10.213.0.0/16", &pool, &slots, &err), 0);
	assert_int_equal(pool, 0x0ad50000u);
	assert_int_equal(slots, 16384);
	assert_int_not_equal(exec_net_pool_parse("10.213.0.1/16", &pool, &slots, &err), 0);
	assert_int_not_equal(exec_net_pool_parse("10.213.0.0", &pool, &slots, &err), 0);
}

static void netpolicy__ruleset__refused_ranges_before_the_allowlist(void **state)
{
	(void)state;
	struct gv_err err;
	assert_int_equal(tenant_egress_parse("{\"mode\":\"allowlist\",\"allow\":[\"0.0.0.0/0:443\","
					     "\"udp:203.0.113.5:53\",\"198.51.100.0/24:8000-8080\",\"example.org:80\"],"
					     "\"rate_kbit\":1000}",
					     &pol, &err),
			 0);
	struct exec_net n;
	assert_int_equal(exec_net_names(&cfg, 3, &n, &err), 0);
	char *r = exec_net_ruleset(&cfg, &n, &pol);
	assert_non_null(r);
	const char *refused = strstr(r, "169.254.0.0/16");
	const char *pool = strstr(r, "ip daddr 10.213.0.0/24 counter name blocked reject");
	const char *wide = strstr(r, "ip daddr 0.0.0.0/0 tcp dport 443 accept");
	assert_non_null(refused);
	assert_non_null(pool);
	assert_non_null(wide);
	assert_true(refused < wide && pool < wide);
	assert_non_null(strstr(r, "ip daddr 203.0.113.5/32 udp dport 53 accept"));
	assert_non_null(strstr(r, "ip daddr 198.51.100.0/24 tcp dport 8000-8080 accept"));
	/* An unresolved name opens nothing. */
	assert_null(strstr(r, "example.org"));
	assert_non_null(strstr(r, "ip saddr != 10.213.0.14 counter name blocked drop"));
	assert_non_null(strstr(r, "iifname \"gva01003h\" counter name blocked reject"));
	assert_non_null(strstr(r, "meta nfproto != ipv4 counter name blocked drop"));
	/* The last rule of from_sandbox refuses the rest. */
	const char *last = strstr(r, "\t\tcounter name blocked reject with icmpx admin-prohibited\n\t}");
	assert_non_null(last);
	assert_true(last > wide);
	free(r);
}

static void netpolicy__bundle_and_runsc__network_only_with_its_namespace(void **state)
{
	(void)state;
	struct exec_bundle_params p = {
		.hostname = "gavel", .cgroups_path = "/gavel/t/s", .init_path = "/init", .etc_path = "/b/etc",
		.box_path = "/b/box", .memory_limit_bytes = 1 << 28, .pids_limit = 4096, .tmp_size_bytes = 1 << 20,
		.nofile = 64, .nproc = 64, .fsize_bytes = 1 << 20, .netns_path = "/run/netns/gva01003",
	};
	struct gv_err err;
	json_t *c = exec_bundle_config(&p, &err);
	assert_non_null(c);
	json_t *ns = json_object_get(json_object_get(c, "linux"), "namespaces");
	bool found = false;
	size_t i;
	json_t *v;
	/* No network entry: runsc stays in the namespace its spawner joined
	 * (executor/sandbox/runsc.h, join_netns), never a new or the host's
	 * one. */
	json_array_foreach(ns, i, v) {
		if (strcmp(json_string_value(json_object_get(v, "type")), "network") == 0)
			found = true;
	}
	assert_false(found);
	assert_int_equal(json_array_size(ns), 4);
	json_decref(c);
	p.netns_path = "/proc/1/ns/net";
	assert_null(exec_bundle_config(&p, &err));
	p.netns_path = "/run/netns/../x";
	assert_null(exec_bundle_config(&p, &err));
	struct exec_runsc r = {.path = "/usr/bin/runsc", .root = "/run/x"};
	const char *extra[] = {"list", NULL};
	const char *argv[32];
	assert_int_equal(exec_runsc_argv(&r, extra, argv, 32, &err), 0);
	assert_string_equal(argv[3], "--network=none");
	/* The host network only from inside the sandbox's own namespace. */
	r.network_host = true;
	assert_int_equal(exec_runsc_argv(&r, extra, argv, 32, &err), -1);
	r.join_netns = true;
	r.netns_fd = 3;
	assert_int_equal(exec_runsc_argv(&r, extra, argv, 32, &err), 0);
	assert_string_equal(argv[3], "--network=host");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(egress__parse__table),
		cmocka_unit_test(egress__parse__fields),
		cmocka_unit_test(egress__refused_ranges__cover_private_and_metadata),
		cmocka_unit_test(egress__quota__validates_with_the_same_grammar),
		cmocka_unit_test(netpolicy__names__slot_addresses_and_prefix),
		cmocka_unit_test(netpolicy__ruleset__refused_ranges_before_the_allowlist),
		cmocka_unit_test(netpolicy__bundle_and_runsc__network_only_with_its_namespace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
