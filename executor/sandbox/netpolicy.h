/* The network of a sandbox whose tenant's egress policy grants one
 * (tenants/egress.h): its own network namespace and veth pair, an address
 * from this executor's private pool, a default-deny nftables table that
 * allows only the policy's destinations (and never the always-refused
 * ranges, the host itself or another sandbox), and tc shaping of the host
 * side of the veth in both directions (tbf on its egress; its ingress
 * redirected to an ifb device shaped by another tbf). Sandboxes without a
 * grant get none of this: runsc --network=none.
 *
 * Everything is created by spawning ip, tc and nft with argv vectors and a
 * constant environment; the batch text they read on stdin is generated
 * here from parsed, bounded values (no tenant text reaches it but
 * validated addresses, ports and rates). Every object is named
 * <prefix><slot as 3 hex digits>[h|p|i], the prefix unique per executor
 * (worker) on the host, so that exec_net_sweep removes what an earlier run
 * of this executor left and nothing else.
 *
 * Security argument: the filter lives in the executor's network namespace,
 * outside the sandbox's, so nothing inside can change it (the sandbox's
 * processes run under gVisor, which has no capability over either
 * namespace). Set-up fails closed: any step failing removes what was made
 * and the job does not run. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "tenants/egress.h"

#define EXEC_NET_PREFIX_MAX 8
#define EXEC_NET_SLOTS_MAX 256

struct exec_net_config {
	/* [a-z0-9]{1,8}; NULL or "": this executor grants no network, and a
	 * job whose policy grants one fails (IE). */
	const char *prefix;
	uint32_t pool;   /* first address of the pool, host byte order, /30 aligned */
	uint32_t slots;  /* /30 blocks in the pool, 1..EXEC_NET_SLOTS_MAX */
	/* Tools; NULL: /usr/sbin/{ip,tc,nft}. */
	const char *ip_path, *tc_path, *nft_path;
};

/* One sandbox's network. */
struct exec_net {
	unsigned slot;
	char base[EXEC_NET_PREFIX_MAX + 4]; /* prefix + slot: netns and nft table name */
	char host_if[16], peer_if[16], ifb_if[16];
	char netns_path[64];                /* /run/netns/<base>, for the OCI spec */
	uint32_t host_addr, sandbox_addr;
	bool made;                          /* anything may exist: tear down */
};

/* Checks cfg (prefix, pool alignment, slots). */
int exec_net_config_check(const struct exec_net_config *cfg, struct gv_err *err) GV_MUST_CHECK;

/* Parses "a.b.c.d/n" into a pool of /30 slots (at most max_slots). */
int exec_net_pool_parse(const char *cidr, uint32_t *pool, uint32_t *slots, struct gv_err *err) GV_MUST_CHECK;

/* Resolves the policy's host names (IPv4, getaddrinfo) into address rules;
 * resolved addresses inside an always-refused range are dropped (they are
 * refused by the filter anyway). A name that does not resolve is an error:
 * the job does not run rather than run with a destination missing that it
 * was promised. out may not alias in. */
int exec_net_resolve(const struct tenant_egress_policy *in, struct tenant_egress_policy *out,
		     struct gv_err *err) GV_MUST_CHECK;

/* The names and addresses of slot (pure). */
int exec_net_names(const struct exec_net_config *cfg, unsigned slot, struct exec_net *out,
		   struct gv_err *err) GV_MUST_CHECK;

/* The nft ruleset (nft -f - input) of the sandbox n under policy p (its
 * host names already resolved). Pure; a new string the caller frees, or
 * NULL when out of memory. */
char *exec_net_ruleset(const struct exec_net_config *cfg, const struct exec_net *n,
		       const struct tenant_egress_policy *p);

/* Creates the namespace, veth, address, filter and shaping of slot for the
 * resolved policy p. On failure removes what it made. */
int exec_net_setup(const struct exec_net_config *cfg, unsigned slot, const struct tenant_egress_policy *p,
		   struct exec_net *out, struct gv_err *err) GV_MUST_CHECK;

/* Packets refused from the sandbox so far (its blocked connection
 * attempts: one per refused TCP SYN or UDP/ICMP packet). */
int exec_net_blocked(const struct exec_net_config *cfg, const struct exec_net *n, uint64_t *count,
		     struct gv_err *err) GV_MUST_CHECK;

/* Removes everything of n (the veth takes its qdiscs with it). Best effort:
 * 0 when all is gone, -1 with err naming what was left (the next sweep
 * takes it). */
int exec_net_teardown(const struct exec_net_config *cfg, struct exec_net *n, struct gv_err *err) GV_MUST_CHECK;

/* Removes every namespace, link and nft table named with cfg->prefix (what
 * a killed executor left); *n counts the objects removed. */
int exec_net_sweep(const struct exec_net_config *cfg, unsigned *n, struct gv_err *err) GV_MUST_CHECK;

/* Counts the objects exec_net_sweep would remove (tests). */
int exec_net_count(const struct exec_net_config *cfg, unsigned *n, struct gv_err *err) GV_MUST_CHECK;
