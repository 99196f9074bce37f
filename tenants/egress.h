/* A tenant's egress policy: the grammar of tenant_quotas.egress_policy
 * (jsonb) parsed into a struct, and the address ranges no policy can open.
 * Pure: no I/O, no name resolution. The quota validation (tenants/quota.c)
 * and the executor's sandbox network set-up (executor/sandbox/netpolicy.c) both
 * read a policy through tenant_egress_parse, so what an operator can store
 * is exactly what the executor can apply.
 *
 * The JSON object:
 *   {"mode": "none"}                       no network at all (the default)
 *   {"mode": "allowlist",
 *    "allow": ["[tcp:|udp:]TARGET:PORT[-PORT]", ...],
 *    "rate_kbit": N,                        both directions, or per direction:
 *    "egress_kbit": N, "ingress_kbit": N}   sandbox -> world / world -> sandbox
 * TARGET is an IPv4 address or CIDR (a.b.c.d[/n]) or a host name that the
 * executor resolves (IPv4) when the sandbox starts. The protocol defaults to
 * tcp. A rate is required in each direction for an allowlist: no grant is
 * unshaped. IPv6 destinations are not supported (the sandbox gets no IPv6
 * address at all). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define TENANT_EGRESS_RULES_MAX 64
#define TENANT_EGRESS_HOST_MAX 253
#define TENANT_EGRESS_KBIT_MAX 10000000 /* 10 Gbit/s */

enum tenant_egress_proto { TENANT_EGRESS_TCP = 1, TENANT_EGRESS_UDP = 2 };

struct tenant_egress_rule {
	enum tenant_egress_proto proto;
	bool is_host;                          /* host name, resolved at sandbox start */
	char host[TENANT_EGRESS_HOST_MAX + 1]; /* when is_host: [A-Za-z0-9.-], lower case */
	uint32_t addr;                         /* when !is_host: network, host byte order */
	uint8_t prefix;                        /* 0..32 */
	uint16_t port_lo, port_hi;             /* 1..65535, lo <= hi */
};

struct tenant_egress_policy {
	bool grants;                           /* mode allowlist */
	size_t n_rules;
	struct tenant_egress_rule rules[TENANT_EGRESS_RULES_MAX];
	uint32_t egress_kbit, ingress_kbit;    /* sandbox -> world, world -> sandbox */
};

/* Parses the policy text (at most TENANT_EGRESS_POLICY_MAX bytes of JSON).
 * GV_EINVAL names the first bad field or entry. An address entry that lies
 * wholly inside an always-refused range is refused here already, so that an
 * operator learns at `gavel tenant update` that it would never work. Pure. */
int tenant_egress_parse(const char *text, struct tenant_egress_policy *out,
			struct gv_err *err) GV_MUST_CHECK;

/* The IPv4 ranges a sandbox can never reach, whatever its policy says:
 * "this network", RFC 1918, CGNAT, loopback, link-local (the cloud metadata
 * address 169.254.169.254 included), IETF protocol assignments, benchmark
 * networks, multicast, reserved and broadcast. The documentation ranges
 * TEST-NET-2/3 (198.51.100.0/24, 203.0.113.0/24) are not listed: they are
 * never routed on the Internet, so naming them opens nothing in production,
 * and the egress tests build their "world" there inside their own network
 * namespaces. */
struct tenant_egress_range {
	uint32_t addr;   /* host byte order */
	uint8_t prefix;
	const char *text;
};
extern const struct tenant_egress_range tenant_egress_refused[];
extern const size_t tenant_egress_refused_len;

/* True when addr (host byte order) is inside an always-refused range. */
bool tenant_egress_addr_refused(uint32_t addr);
