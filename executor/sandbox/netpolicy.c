/* A granted sandbox's network: namespace, veth, ifb, nftables table and
 * tc qdiscs, made and removed with ip/tc/nft spawned from argv vectors; see
 * netpolicy.h. */
#include "executor/sandbox/netpolicy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOOL_TIMEOUT_MS 10000
#define TOOL_OUT_MAX (256u << 10)
#define RESOLVE_ADDRS_MAX 8 /* addresses kept per host name */
#define NETNS_DIR "/run/netns"

static const char *ip_tool(const struct exec_net_config *c)
{
	return c->ip_path ? c->ip_path : "/usr/sbin/ip";
}
static const char *tc_tool(const struct exec_net_config *c)
{
	return c->tc_path ? c->tc_path : "/usr/sbin/tc";
}
static const char *nft_tool(const struct exec_net_config *c)
{
	return c->nft_path ? c->nft_path : "/usr/sbin/nft";
}

/* ---- configuration and names ---- */

static bool prefix_ok(const char *p)
{
	size_t n = p ? strlen(p) : 0;
	return n >= 1 && n <= EXEC_NET_PREFIX_MAX && strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789") == n;
}

int exec_net_config_check(const struct exec_net_config *c, struct gv_err *err)
{
	if (!c->prefix || !c->prefix[0])
		return 0;
	if (!prefix_ok(c->prefix))
		return gv_err_set(err, GV_ECONFIG, "egress interface prefix must be [a-z0-9]{1,%d}", EXEC_NET_PREFIX_MAX);
	if (c->pool & 3)
		return gv_err_set(err, GV_ECONFIG, "egress pool must be /30 aligned");
	if (c->slots < 1 || c->slots > EXEC_NET_SLOTS_MAX || (uint64_t)c->pool + 4ull * c->slots > 0x100000000ull)
		return gv_err_set(err, GV_ECONFIG, "egress pool: 1..%d slots of 4 addresses", EXEC_NET_SLOTS_MAX);
	return 0;
}

int exec_net_pool_parse(const char *cidr, uint32_t *pool, uint32_t *slots, struct gv_err *err)
{
	char buf[32];
	if (!cidr || snprintf(buf, sizeof(buf), "%s", cidr) >= (int)sizeof(buf))
		return gv_err_set(err, GV_ECONFIG, "egress pool: expected a.b.c.d/n");
	char *slash = strchr(buf, '/');
	if (!slash)
		return gv_err_set(err, GV_ECONFIG, "egress pool: expected a.b.c.d/n");
	*slash = '\0';
	char *end;
	long plen = strtol(slash + 1, &end, 10);
	struct in_addr a;
	if (*end || plen < 8 || plen > 30 || inet_pton(AF_INET, buf, &a) != 1)
		return gv_err_set(err, GV_ECONFIG, "egress pool %s: expected a.b.c.d/n with n in 8..30", cidr);
	uint32_t addr = ntohl(a.s_addr);
	uint32_t mask = 0xffffffffu << (32 - plen);
	if (addr & ~mask)
		return gv_err_set(err, GV_ECONFIG, "egress pool %s: host bits set", cidr);
	*pool = addr;
	*slots = (uint32_t)((1ull << (32 - plen)) / 4);
	return 0;
}

int exec_net_names(const struct exec_net_config *c, unsigned slot, struct exec_net *n, struct gv_err *err)
{
	memset(n, 0, sizeof(*n));
	if (!prefix_ok(c->prefix) || slot >= c->slots || slot > 0xfff)
		return gv_err_set(err, GV_EINVAL, "egress slot %u out of range", slot);
	n->slot = slot;
	snprintf(n->base, sizeof(n->base), "%s%03x", c->prefix, slot);
	snprintf(n->host_if, sizeof(n->host_if), "%sh", n->base);
	snprintf(n->peer_if, sizeof(n->peer_if), "%sp", n->base);
	snprintf(n->ifb_if, sizeof(n->ifb_if), "%si", n->base);
	snprintf(n->netns_path, sizeof(n->netns_path), NETNS_DIR "/%s", n->base);
	n->host_addr = c->pool + 4u * slot + 1u;
	n->sandbox_addr = c->pool + 4u * slot + 2u;
	return 0;
}

/* True when name is one of ours: prefix, three hex digits, and nothing or
 * one of the suffixes. */
static bool own_name(const struct exec_net_config *c, const char *name, const char *suffixes)
{
	size_t pl = strlen(c->prefix);
	if (strncmp(name, c->prefix, pl) != 0)
		return false;
	const char *r = name + pl;
	if (strspn(r, "0123456789abcdef") < 3)
		return false;
	r += 3;
	if (*r == '\0')
		return strchr(suffixes, '-') != NULL;
	return r[1] == '\0' && strchr(suffixes, *r) != NULL && *r != '-';
}

static void addr_str(uint32_t a, char out[16])
{
	snprintf(out, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

/* ---- resolution ---- */

int exec_net_resolve(const struct tenant_egress_policy *in, struct tenant_egress_policy *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	out->grants = in->grants;
	out->egress_kbit = in->egress_kbit;
	out->ingress_kbit = in->ingress_kbit;
	for (size_t i = 0; i < in->n_rules; i++) {
		const struct tenant_egress_rule *r = &in->rules[i];
		if (!r->is_host) {
			if (out->n_rules == TENANT_EGRESS_RULES_MAX)
				return gv_err_set(err, GV_ELIMIT, "egress policy: too many destinations");
			out->rules[out->n_rules++] = *r;
			continue;
		}
		struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
		struct addrinfo *res = NULL;
		int rc = getaddrinfo(r->host, NULL, &hints, &res);
		if (rc != 0)
			return gv_err_set(err, GV_ESANDBOX, "egress policy: cannot resolve %s: %s", r->host,
					  gai_strerror(rc));
		unsigned kept = 0;
		for (struct addrinfo *ai = res; ai && kept < RESOLVE_ADDRS_MAX; ai = ai->ai_next) {
			uint32_t a = ntohl(((const struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr);
			if (tenant_egress_addr_refused(a))
				continue;
			bool dup = false;
			for (size_t k = 0; k < out->n_rules && !dup; k++)
				dup = !out->rules[k].is_host && out->rules[k].addr == a && out->rules[k].prefix == 32 &&
				      out->rules[k].proto == r->proto && out->rules[k].port_lo == r->port_lo &&
				      out->rules[k].port_hi == r->port_hi;
			if (dup)
				continue;
			if (out->n_rules == TENANT_EGRESS_RULES_MAX) {
				freeaddrinfo(res);
				return gv_err_set(err, GV_ELIMIT, "egress policy: too many destinations");
			}
			struct tenant_egress_rule *o = &out->rules[out->n_rules++];
			*o = *r;
			o->is_host = false;
			o->host[0] = '\0';
			o->addr = a;
			o->prefix = 32;
			kept++;
		}
		freeaddrinfo(res);
	}
	return 0;
}

/* ---- the ruleset ---- */

struct text {
	char *p;
	size_t len, cap;
	bool oom;
};

GV_PRINTF(2, 3) static void add(struct text *t, const char *fmt, ...)
{
	if (t->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = true;
			return;
		}
		if (t->p && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t ncap = (t->cap + (size_t)n + 1) * 2;
		char *np = realloc(t->p, ncap);
		if (!np) {
			t->oom = true;
			return;
		}
		t->p = np;
		t->cap = ncap;
	}
}

/* Security argument of the ruleset: every packet the sandbox sends through
 * its veth is judged by from_sandbox in order: not IPv4, or a source that
 * is not the sandbox's own address, is dropped; a destination in an
 * always-refused range or in this executor's pool (another sandbox) is
 * refused before any allow rule is looked at, so no policy can open them;
 * then only the listed protocol/address/port combinations pass, and
 * everything else is refused and counted. Packets to the host itself
 * (input: its services on any address) are refused and counted. Towards
 * the sandbox only replies of connections it opened pass. Traffic it may
 * send leaves masqueraded behind the host's address. The table's chains
 * have policy accept only so that they do not judge other interfaces'
 * traffic: every rule is keyed on this sandbox's interface. */
char *exec_net_ruleset(const struct exec_net_config *c, const struct exec_net *n,
		       const struct tenant_egress_policy *p)
{
	struct text t = {0};
	char sb[16], pool[16];
	addr_str(n->sandbox_addr, sb);
	addr_str(c->pool, pool);
	unsigned pool_prefix = 32;
	while (pool_prefix > 0 && (1ull << (32 - pool_prefix)) < 4ull * c->slots)
		pool_prefix--;
	add(&t, "table inet %s {\n", n->base);
	add(&t, "\tcounter blocked { }\n");
	add(&t, "\tchain forward {\n\t\ttype filter hook forward priority -10; policy accept;\n");
	add(&t, "\t\tiifname \"%s\" jump from_sandbox\n", n->host_if);
	add(&t, "\t\toifname \"%s\" jump to_sandbox\n\t}\n", n->host_if);
	add(&t, "\tchain from_sandbox {\n");
	add(&t, "\t\tmeta nfproto != ipv4 counter name blocked drop\n");
	add(&t, "\t\tip saddr != %s counter name blocked drop\n", sb);
	add(&t, "\t\tip daddr { ");
	for (size_t i = 0; i < tenant_egress_refused_len; i++)
		add(&t, "%s%s", i ? ", " : "", tenant_egress_refused[i].text);
	add(&t, " } counter name blocked reject with icmpx admin-prohibited\n");
	add(&t, "\t\tip daddr %s/%u counter name blocked reject with icmpx admin-prohibited\n", pool, pool_prefix);
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct tenant_egress_rule *r = &p->rules[i];
		if (r->is_host)
			continue; /* unresolved: never allowed */
		char a[16];
		addr_str(r->addr, a);
		const char *proto = r->proto == TENANT_EGRESS_UDP ? "udp" : "tcp";
		if (r->port_lo == r->port_hi)
			add(&t, "\t\tip daddr %s/%u %s dport %u accept\n", a, r->prefix, proto, r->port_lo);
		else
			add(&t, "\t\tip daddr %s/%u %s dport %u-%u accept\n", a, r->prefix, proto, r->port_lo,
			    r->port_hi);
	}
	add(&t, "\t\tcounter name blocked reject with icmpx admin-prohibited\n\t}\n");
	add(&t, "\tchain to_sandbox {\n\t\tct state established,related accept\n\t\tdrop\n\t}\n");
	add(&t, "\tchain input {\n\t\ttype filter hook input priority -10; policy accept;\n");
	add(&t, "\t\tiifname \"%s\" counter name blocked reject with icmpx admin-prohibited\n\t}\n", n->host_if);
	add(&t, "\tchain postrouting {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n");
	add(&t, "\t\tip saddr %s oifname != \"%s\" masquerade\n\t}\n}\n", sb, n->host_if);
	if (t.oom) {
		free(t.p);
		return NULL;
	}
	return t.p;
}

/* ---- running the tools ---- */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs argv[0] with argv, input on stdin, stdout+stderr captured into out
 * (bounded, NUL-terminated; may be NULL). Security argument: fork+execve
 * with a constant environment and only the three pipes as descriptors; the
 * input is text we generated. Waits for this one child only (waitpid of
 * its pid), so the engine's reaper never loses a status to us. */
static int run_tool(const char *const *argv, const char *input, char *out, size_t outsz, struct gv_err *err)
{
	static char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
	int in[2] = {-1, -1}, op[2] = {-1, -1};
	if (pipe2(in, O_CLOEXEC) != 0)
		return gv_err_errno(err, "%s: pipe", argv[0]);
	if (pipe2(op, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		return gv_err_errno(err, "%s: pipe", argv[0]);
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (dup2(in[0], 0) < 0 || dup2(op[1], 1) < 0 || dup2(op[1], 2) < 0)
			_exit(127);
		if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
			for (int fd = 3; fd < 1024; fd++)
				close(fd);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		execve(argv[0], (char *const *)argv, env);
		_exit(127);
	}
	int e = errno;
	close(in[0]);
	close(op[1]);
	if (pid < 0) {
		close(in[1]);
		close(op[0]);
		errno = e;
		return gv_err_errno(err, "%s: fork", argv[0]);
	}
	char local[2048];
	if (!out) {
		out = local;
		outsz = sizeof(local);
	}
	size_t used = 0;
	out[0] = '\0';
	const char *ip = input ? input : "";
	size_t left = strlen(ip);
	int64_t deadline = now_ms() + TOOL_TIMEOUT_MS;
	bool killed = false;
	int wfd = in[1];
	if (left == 0) {
		close(wfd);
		wfd = -1;
	} else {
		fcntl(wfd, F_SETFL, O_NONBLOCK);
	}
	for (;;) {
		struct pollfd pf[2] = {{op[0], POLLIN, 0}, {wfd, POLLOUT, 0}};
		int64_t wait = deadline - now_ms();
		if (wait <= 0) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		if (poll(pf, wfd >= 0 ? 2 : 1, (int)wait) < 0 && errno != EINTR)
			break;
		if (wfd >= 0 && (pf[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(wfd, ip, left);
			if (w > 0) {
				ip += w;
				left -= (size_t)w;
			}
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || left == 0) {
				close(wfd);
				wfd = -1;
			}
		}
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[4096];
			ssize_t r = read(op[0], buf, sizeof(buf));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			size_t k = (size_t)r < outsz - 1 - used ? (size_t)r : outsz - 1 - used;
			memcpy(out + used, buf, k);
			used += k;
			out[used] = '\0';
		}
	}
	if (wfd >= 0)
		close(wfd);
	close(op[0]);
	int st = 0;
	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
	if (killed)
		return gv_err_set(err, GV_ESANDBOX, "%s %s: timed out", argv[0], argv[1] ? argv[1] : "");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		for (char *p = out; *p; p++)
			if (*p == '\n')
				*p = ' ';
		return gv_err_set(err, GV_ESANDBOX, "%s %s failed (%s %d): %.300s", argv[0], argv[1] ? argv[1] : "",
				  WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
				  out);
	}
	return 0;
}

/* ---- set-up and tear-down ---- */

static int enable_forwarding(struct gv_err *err)
{
	int fd = open("/proc/sys/net/ipv4/ip_forward", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return gv_err_errno(err, "open /proc/sys/net/ipv4/ip_forward");
	char cur = '0';
	int rc = 0;
	if (read(fd, &cur, 1) != 1 || (cur != '1' && pwrite(fd, "1\n", 2, 0) != 2))
		rc = gv_err_errno(err, "enable IPv4 forwarding");
	close(fd);
	return rc;
}

/* tbf burst: 20 ms at the rate, at least a few full frames. */
static uint64_t burst_bytes(uint32_t kbit)
{
	uint64_t b = (uint64_t)kbit * 1000 / 8 / 50;
	return b < 4096 ? 4096 : b;
}

int exec_net_setup(const struct exec_net_config *c, unsigned slot, const struct tenant_egress_policy *p,
		   struct exec_net *n, struct gv_err *err)
{
	if (!c->prefix || !c->prefix[0])
		return gv_err_set(err, GV_ESANDBOX, "egress granted but this executor has no egress pool configured");
	if (!p->grants || !p->egress_kbit || !p->ingress_kbit)
		return gv_err_set(err, GV_EINVAL, "egress: policy grants nothing or has no rate");
	if (exec_net_names(c, slot, n, err) != 0)
		return -1;
	char h[16], s[16];
	addr_str(n->host_addr, h);
	addr_str(n->sandbox_addr, s);
	char *rules = exec_net_ruleset(c, n, p);
	char host_batch[1024], ns_batch[512], tc_batch[1024];
	int k1 = snprintf(host_batch, sizeof(host_batch),
			  "netns add %s\n"
			  "link add %s type veth peer name %s netns %s\n"
			  "addr add %s/30 dev %s\n"
			  "link set %s up\n"
			  "link add %s type ifb\n"
			  "link set %s up\n",
			  n->base, n->host_if, n->peer_if, n->base, h, n->host_if, n->host_if, n->ifb_if, n->ifb_if);
	int k2 = snprintf(ns_batch, sizeof(ns_batch),
			  "link set lo up\n"
			  "addr add %s/30 dev %s\n"
			  "link set %s up\n"
			  "route add default via %s\n",
			  s, n->peer_if, n->peer_if, h);
	/* Towards the sandbox: tbf on the host veth's egress. From it: the
	 * veth's ingress redirected to the ifb, whose egress has the other
	 * tbf (this kernel has no act_police). */
	int k3 = snprintf(tc_batch, sizeof(tc_batch),
			  "qdisc add dev %s root tbf rate %ukbit burst %" PRIu64 " latency 50ms\n"
			  "qdisc add dev %s handle ffff: ingress\n"
			  "filter add dev %s parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev %s\n"
			  "qdisc add dev %s root tbf rate %ukbit burst %" PRIu64 " latency 50ms\n",
			  n->host_if, p->ingress_kbit, burst_bytes(p->ingress_kbit), n->host_if, n->host_if, n->ifb_if,
			  n->ifb_if, p->egress_kbit, burst_bytes(p->egress_kbit));
	if (!rules || k1 >= (int)sizeof(host_batch) || k2 >= (int)sizeof(ns_batch) || k3 >= (int)sizeof(tc_batch)) {
		free(rules);
		return gv_err_set(err, ENOMEM, "egress: building the set-up");
	}
	const char *ip_host[] = {ip_tool(c), "-batch", "-", NULL};
	const char *ip_ns[] = {ip_tool(c), "-n", n->base, "-batch", "-", NULL};
	const char *tc[] = {tc_tool(c), "-batch", "-", NULL};
	const char *nft[] = {nft_tool(c), "-f", "-", NULL};
	n->made = true;
	int rc = enable_forwarding(err);
	/* The filter first: no packet can pass the veth before it exists. */
	if (rc == 0)
		rc = run_tool(nft, rules, NULL, 0, err);
	if (rc == 0)
		rc = run_tool(ip_host, host_batch, NULL, 0, err);
	if (rc == 0)
		rc = run_tool(ip_ns, ns_batch, NULL, 0, err);
	if (rc == 0)
		rc = run_tool(tc, tc_batch, NULL, 0, err);
	free(rules);
	if (rc != 0) {
		struct gv_err e2;
		gv_err_prefix(err, "egress set-up of %s", n->base);
		/* n->made stays set when something could not be removed: the
		 * caller then keeps the slot for the next sweep. */
		if (exec_net_teardown(c, n, &e2) != 0)
			gv_err_prefix(err, "clean-up incomplete (%.100s)", e2.msg);
		return -1;
	}
	return 0;
}

int exec_net_blocked(const struct exec_net_config *c, const struct exec_net *n, uint64_t *count, struct gv_err *err)
{
	*count = 0;
	const char *argv[] = {nft_tool(c), "list", "counter", "inet", n->base, "blocked", NULL};
	char out[1024];
	if (run_tool(argv, NULL, out, sizeof(out), err) != 0)
		return -1;
	const char *p = strstr(out, "packets ");
	if (!p)
		return gv_err_set(err, GV_EPROTO, "nft list counter: no packet count");
	*count = strtoull(p + 8, NULL, 10);
	return 0;
}

/* In the executor's own namespace (if_nametoindex asks through a socket
 * of the calling process's namespace). */
static bool link_exists(const char *name)
{
	return if_nametoindex(name) != 0;
}

int exec_net_teardown(const struct exec_net_config *c, struct exec_net *n, struct gv_err *err)
{
	if (!n->made)
		return 0;
	int rc = 0;
	struct gv_err e;
	/* Each object separately: one missing must not keep the others. The
	 * host veth takes its peer and both qdiscs with it; the namespace goes
	 * when its bind mount is removed (no process of the sandbox is left). */
	const char *del_veth[] = {ip_tool(c), "link", "del", n->host_if, NULL};
	const char *del_ifb[] = {ip_tool(c), "link", "del", n->ifb_if, NULL};
	const char *del_ns[] = {ip_tool(c), "netns", "del", n->base, NULL};
	const char *del_tab[] = {nft_tool(c), "delete", "table", "inet", n->base, NULL};
	if (link_exists(n->host_if) && run_tool(del_veth, NULL, NULL, 0, &e) != 0)
		rc = -1, *err = e;
	if (link_exists(n->ifb_if) && run_tool(del_ifb, NULL, NULL, 0, &e) != 0)
		rc = -1, *err = e;
	char path[80];
	snprintf(path, sizeof(path), NETNS_DIR "/%s", n->base);
	if (access(path, F_OK) == 0 && run_tool(del_ns, NULL, NULL, 0, &e) != 0)
		rc = -1, *err = e;
	char out[256];
	const char *list_tab[] = {nft_tool(c), "list", "table", "inet", n->base, NULL};
	if (run_tool(list_tab, NULL, out, sizeof(out), &e) == 0 && run_tool(del_tab, NULL, NULL, 0, &e) != 0)
		rc = -1, *err = e;
	if (rc == 0)
		n->made = false;
	return rc;
}

/* ---- sweeping ---- */

#define SWEEP_MAX 1024

struct names {
	char (*v)[32];
	size_t n;
};

static void names_add(struct names *s, const char *name, size_t len)
{
	if (s->n < SWEEP_MAX && len < 32) {
		memcpy(s->v[s->n], name, len);
		s->v[s->n][len] = '\0';
		s->n++;
	}
}

/* Ours among the links of this namespace (`ip -o link show`: "N: NAME[@PEER]: ..."),
 * the named namespaces and the inet tables. */
static int collect(const struct exec_net_config *c, struct names *links, struct names *nss, struct names *tabs,
		   struct gv_err *err)
{
	char *out = malloc(TOOL_OUT_MAX);
	if (!out)
		return gv_err_set(err, ENOMEM, "egress sweep: out of memory");
	const char *ip_links[] = {ip_tool(c), "-o", "link", "show", NULL};
	int rc = run_tool(ip_links, NULL, out, TOOL_OUT_MAX, err);
	for (char *save = NULL, *l = rc == 0 ? strtok_r(out, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(l, ": ");
		if (!p)
			continue;
		p += 2;
		size_t len = strcspn(p, "@:");
		char name[32];
		if (len >= sizeof(name))
			continue;
		memcpy(name, p, len);
		name[len] = '\0';
		if (own_name(c, name, "hi"))
			names_add(links, name, len);
	}
	const char *nft_tabs[] = {nft_tool(c), "list", "tables", "inet", NULL};
	if (rc == 0)
		rc = run_tool(nft_tabs, NULL, out, TOOL_OUT_MAX, err);
	for (char *save = NULL, *l = rc == 0 ? strtok_r(out, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "table inet ", 11) == 0 && own_name(c, l + 11, "-"))
			names_add(tabs, l + 11, strlen(l + 11));
	}
	free(out);
	if (rc != 0)
		return -1;
	const char *ip_ns[] = {ip_tool(c), "netns", "list", NULL};
	char nsout[64 << 10];
	if (run_tool(ip_ns, NULL, nsout, sizeof(nsout), err) != 0)
		return -1;
	for (char *save = NULL, *l = strtok_r(nsout, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t len = strcspn(l, " ");
		l[len] = '\0';
		if (own_name(c, l, "-"))
			names_add(nss, l, len);
	}
	return 0;
}

static int with_names(const struct exec_net_config *c, unsigned *count, bool remove, struct gv_err *err)
{
	*count = 0;
	if (!c->prefix || !c->prefix[0])
		return 0;
	struct names links = {calloc(SWEEP_MAX, 32), 0}, nss = {calloc(SWEEP_MAX, 32), 0},
		     tabs = {calloc(SWEEP_MAX, 32), 0};
	int rc = -1;
	if (!links.v || !nss.v || !tabs.v) {
		gv_err_set(err, ENOMEM, "egress sweep: out of memory");
		goto out;
	}
	if (collect(c, &links, &nss, &tabs, err) != 0)
		goto out;
	*count = (unsigned)(links.n + nss.n + tabs.n);
	rc = 0;
	if (!remove || *count == 0)
		goto out;
	for (size_t i = 0; i < links.n; i++) {
		const char *argv[] = {ip_tool(c), "link", "del", links.v[i], NULL};
		/* A host veth's ifb or peer may already be gone with it. */
		if (link_exists(links.v[i]) && run_tool(argv, NULL, NULL, 0, err) != 0)
			rc = -1;
	}
	for (size_t i = 0; i < nss.n; i++) {
		const char *argv[] = {ip_tool(c), "netns", "del", nss.v[i], NULL};
		if (run_tool(argv, NULL, NULL, 0, err) != 0)
			rc = -1;
	}
	for (size_t i = 0; i < tabs.n; i++) {
		const char *argv[] = {nft_tool(c), "delete", "table", "inet", tabs.v[i], NULL};
		if (run_tool(argv, NULL, NULL, 0, err) != 0)
			rc = -1;
	}
out:
	free(links.v);
	free(nss.v);
	free(tabs.v);
	return rc;
}

int exec_net_sweep(const struct exec_net_config *c, unsigned *n, struct gv_err *err)
{
	return with_names(c, n, true, err);
}

int exec_net_count(const struct exec_net_config *c, unsigned *n, struct gv_err *err)
{
	return with_names(c, n, false, err);
}
