/* Webhook delivery (executor/daemon/webhook.h): the SSRF address classifier,
 * the signature, the body, the Redis delay queue gavel:webhooks and one
 * delivery step of the per-node delivery process. */
#include "executor/daemon/webhook.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/backoff.h"
#include "common/feedback.h"
#include "common/json.h"
#include "common/pg.h"
#include "common/judge0.h"
#include "common/queue.h"
#include "tenants/db.h"

#define WEBHOOK_BODY_MAX (96u * 1024u * 1024u)

/* ---- address classification ---- */

static enum exec_webhook_addr_class classify_v4(uint32_t a)
{
	unsigned b0 = a >> 24, b1 = (a >> 16) & 0xffu;
	if (a == 0xa9fea9feu) /* 169.254.169.254: the cloud metadata service */
		return EXEC_WEBHOOK_ADDR_METADATA;
	if (b0 == 0)
		return EXEC_WEBHOOK_ADDR_THIS_NETWORK;
	if (b0 == 127)
		return EXEC_WEBHOOK_ADDR_LOOPBACK;
	if (b0 == 10 || (b0 == 172 && (b1 & 0xf0u) == 16) || (b0 == 192 && b1 == 168))
		return EXEC_WEBHOOK_ADDR_PRIVATE;
	if (b0 == 169 && b1 == 254)
		return EXEC_WEBHOOK_ADDR_LINK_LOCAL;
	if (b0 == 100 && (b1 & 0xc0u) == 64)
		return EXEC_WEBHOOK_ADDR_CGNAT;
	if ((b0 & 0xf0u) == 224)
		return EXEC_WEBHOOK_ADDR_MULTICAST;
	if ((b0 & 0xf0u) == 240) /* 240/4 and 255.255.255.255 */
		return EXEC_WEBHOOK_ADDR_RESERVED;
	uint32_t n24 = a & 0xffffff00u;
	if (n24 == 0xc0000000u || /* 192.0.0.0/24 IETF protocol assignments */
	    n24 == 0xc0000200u || /* 192.0.2.0/24 documentation */
	    n24 == 0xc0586300u || /* 192.88.99.0/24 6to4 relay anycast */
	    n24 == 0xc6336400u || /* 198.51.100.0/24 documentation */
	    n24 == 0xcb007100u || /* 203.0.113.0/24 documentation */
	    (a & 0xfffe0000u) == 0xc6120000u) /* 198.18.0.0/15 benchmarking */
		return EXEC_WEBHOOK_ADDR_RESERVED;
	return EXEC_WEBHOOK_ADDR_PUBLIC;
}

static uint32_t v4_at(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static enum exec_webhook_addr_class classify_v6(const unsigned char *b)
{
	static const unsigned char metadata[16] = { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02 };
	static const unsigned char nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	if (all_zero(b, 16))
		return EXEC_WEBHOOK_ADDR_THIS_NETWORK;
	if (all_zero(b, 15) && b[15] == 1)
		return EXEC_WEBHOOK_ADDR_LOOPBACK;
	/* Forms that carry an IPv4 address: judged by that address, so that
	 * ::ffff:127.0.0.1 is loopback and 64:ff9b::10.0.0.1 private. */
	if (all_zero(b, 10) && b[10] == 0xff && b[11] == 0xff) /* ::ffff:0:0/96 mapped */
		return classify_v4(v4_at(b + 12));
	if (all_zero(b, 12)) /* ::/96 IPv4-compatible (deprecated) */
		return classify_v4(v4_at(b + 12));
	if (memcmp(b, nat64, 12) == 0) /* 64:ff9b::/96 NAT64 */
		return classify_v4(v4_at(b + 12));
	if (b[0] == 0x20 && b[1] == 0x02) /* 2002::/16 6to4 */
		return classify_v4(v4_at(b + 2));
	if (b[0] == 0xff)
		return EXEC_WEBHOOK_ADDR_MULTICAST;
	if (b[0] == 0xfe && (b[1] & 0xc0u) == 0x80)
		return EXEC_WEBHOOK_ADDR_LINK_LOCAL;
	if (b[0] == 0xfe && (b[1] & 0xc0u) == 0xc0) /* fec0::/10 site-local (deprecated) */
		return EXEC_WEBHOOK_ADDR_PRIVATE;
	if (memcmp(b, metadata, 16) == 0) /* fd00:ec2::254: AWS's IPv6 metadata service */
		return EXEC_WEBHOOK_ADDR_METADATA;
	if ((b[0] & 0xfeu) == 0xfc)
		return EXEC_WEBHOOK_ADDR_UNIQUE_LOCAL;
	/* Only global unicast (2000::/3) may be public; inside it, the
	 * special-purpose blocks are refused. */
	if ((b[0] & 0xe0u) != 0x20)
		return EXEC_WEBHOOK_ADDR_RESERVED;
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) /* 2001:db8::/32 */
		return EXEC_WEBHOOK_ADDR_RESERVED;
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] < 0x02) /* 2001::/23: Teredo, ORCHID, ... */
		return EXEC_WEBHOOK_ADDR_RESERVED;
	if (b[0] == 0x3f && b[1] == 0xff && (b[2] & 0xf0u) == 0) /* 3fff::/20 documentation */
		return EXEC_WEBHOOK_ADDR_RESERVED;
	return EXEC_WEBHOOK_ADDR_PUBLIC;
}

enum exec_webhook_addr_class exec_webhook_addr_classify(const struct sockaddr *sa)
{
	if (!sa)
		return EXEC_WEBHOOK_ADDR_RESERVED;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
		return classify_v4(ntohl(in->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
		return classify_v6(in6->sin6_addr.s6_addr);
	}
	return EXEC_WEBHOOK_ADDR_RESERVED;
}

const char *exec_webhook_addr_class_name(enum exec_webhook_addr_class c)
{
	switch (c) {
	case EXEC_WEBHOOK_ADDR_PUBLIC: return "public";
	case EXEC_WEBHOOK_ADDR_LOOPBACK: return "loopback";
	case EXEC_WEBHOOK_ADDR_PRIVATE: return "private";
	case EXEC_WEBHOOK_ADDR_LINK_LOCAL: return "link-local";
	case EXEC_WEBHOOK_ADDR_UNIQUE_LOCAL: return "unique-local";
	case EXEC_WEBHOOK_ADDR_THIS_NETWORK: return "this-network";
	case EXEC_WEBHOOK_ADDR_CGNAT: return "shared (CGNAT)";
	case EXEC_WEBHOOK_ADDR_MULTICAST: return "multicast";
	case EXEC_WEBHOOK_ADDR_METADATA: return "metadata";
	case EXEC_WEBHOOK_ADDR_RESERVED: return "reserved";
	}
	return "reserved";
}

bool exec_webhook_addr_allowed(enum exec_webhook_addr_class c, bool allow_loopback)
{
	return c == EXEC_WEBHOOK_ADDR_PUBLIC || (allow_loopback && c == EXEC_WEBHOOK_ADDR_LOOPBACK);
}

/* ---- URL, signature, body, backoff, items ---- */

int exec_webhook_url_parse(const char *url, struct exec_webhook_target *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!url || !*url)
		return gv_err_set(err, GV_EINVAL, "empty callback_url");
	CURLU *h = curl_url();
	if (!h)
		return gv_err_set(err, ENOMEM, "out of memory");
	char *scheme = NULL, *host = NULL, *port = NULL;
	int rc = -1;
	if (curl_url_set(h, CURLUPART_URL, url, 0) != CURLUE_OK) {
		gv_err_set(err, GV_EINVAL, "callback_url is not a valid URL");
		goto out;
	}
	if (curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		gv_err_set(err, GV_EINVAL, "callback_url must be http or https");
		goto out;
	}
	if (curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
		gv_err_set(err, GV_EINVAL, "callback_url has no host");
		goto out;
	}
	char *zone = NULL;
	bool zoned = curl_url_get(h, CURLUPART_ZONEID, &zone, 0) == CURLUE_OK && zone && *zone;
	curl_free(zone);
	if (zoned) {
		gv_err_set(err, GV_EINVAL, "callback_url host is not acceptable");
		goto out;
	}
	if (curl_url_get(h, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		gv_err_set(err, GV_EINVAL, "callback_url has no port");
		goto out;
	}
	const char *hp = host;
	size_t hl = strlen(host);
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		hp++;
		hl -= 2;
	}
	/* A zone id (fe80::1%eth0) names an interface: never a public host. */
	if (hl == 0 || hl > EXEC_WEBHOOK_HOST_MAX || memchr(hp, '%', hl)) {
		gv_err_set(err, GV_EINVAL, "callback_url host is not acceptable");
		goto out;
	}
	memcpy(out->host, hp, hl);
	out->host[hl] = '\0';
	out->https = strcmp(scheme, "https") == 0;
	char *end = NULL;
	unsigned long p = strtoul(port, &end, 10);
	if (!end || *end || p == 0 || p > 65535) {
		gv_err_set(err, GV_EINVAL, "callback_url port is not acceptable");
		goto out;
	}
	out->port = (unsigned)p;
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(h);
	return rc;
}

void exec_webhook_sign(const unsigned char *key, size_t key_len, const char *body, size_t body_len,
		       char out[EXEC_WEBHOOK_SIG_MAX])
{
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_init(&st, key, key_len);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)body, body_len);
	crypto_auth_hmacsha256_final(&st, mac);
	memcpy(out, "sha256=", 7);
	sodium_bin2hex(out + 7, EXEC_WEBHOOK_SIG_MAX - 7, mac, sizeof(mac));
	sodium_memzero(&st, sizeof(st));
}

json_t *exec_webhook_body(const struct exec_webhook_row *row)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "id", row->id, "status", row->status, "language",
			      row->language, "created_at", row->created_at ? row->created_at : "");
	if (!o)
		return NULL;
	if (json_object_set_new(o, "verdict", row->verdict ? json_string(row->verdict) : json_null()) != 0 ||
	    json_object_set_new(o, "finished_at", row->finished_at ? json_string(row->finished_at) : json_null()) !=
		    0 ||
	    json_object_set_new(o, "result", row->result ? json_deep_copy(row->result) : json_null()) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *exec_webhook_judge0_body(const struct exec_webhook_row *row)
{
	const json_t *res = row->result;
	bool done = res && row->status && !strcmp(row->status, "done");
	const json_t *test0 = json_array_get(json_object_get(res, "tests"), 0);
	const json_t *ms = json_object_get(res, "time_ms"), *mem = json_object_get(res, "memory_kb");
	int sid = gv_judge0_status_id(row->status, row->verdict, res);
	/* As GET: after a compile error nothing ran, time and memory are null. */
	bool ran = done && sid != GV_JUDGE0_COMPILATION_ERROR;
	json_t *time = json_null();
	if (ran && json_is_integer(ms)) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%.3f", (double)json_integer_value(ms) / 1000.0);
		time = json_string(buf);
	}
	return json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:{s:i,s:s}}", "token", row->id, "time", time, "memory",
			 ran && json_is_integer(mem) ? json_integer(json_integer_value(mem)) : json_null(),
			 "stdout", gv_judge0_b64(test0 ? test0 : res, "stdout"),
			 "stderr", gv_judge0_b64(test0 ? test0 : res, "stderr"), "compile_output",
			 gv_judge0_b64(res, "compile_output"), "message", gv_judge0_b64(res, "message"), "status", "id",
			 sid, "description",
			 gv_judge0_status_description(sid));
}

long exec_webhook_retry_delay_ms(unsigned attempt, uint64_t base_ms, uint64_t max_ms)
{
	if (attempt < 1)
		attempt = 1;
	long cap = max_ms > (uint64_t)86400000 ? 86400000L : (long)max_ms;
	long base = base_ms > (uint64_t)cap ? cap : (long)base_ms;
	return gv_backoff_delay_ms(attempt - 1, base, cap);
}

int exec_webhook_item_parse(const char *s, struct exec_webhook_item *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	const char *c1 = s ? strchr(s, ':') : NULL;
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c1 || !c2 || (size_t)(c1 - s) >= sizeof(out->tid) || (size_t)(c2 - c1 - 1) >= sizeof(out->sid))
		return gv_err_set(err, GV_EPROTO, "bad webhook item");
	memcpy(out->tid, s, (size_t)(c1 - s));
	memcpy(out->sid, c1 + 1, (size_t)(c2 - c1 - 1));
	char *end = NULL;
	unsigned long a = strtoul(c2 + 1, &end, 10);
	if (!gv_queue_tid_ok(out->tid) || !gv_queue_sid_ok(out->sid) || c2[1] < '1' || c2[1] > '9' || !end || *end ||
	    a > EXEC_WEBHOOK_ATTEMPTS_MAX)
		return gv_err_set(err, GV_EPROTO, "bad webhook item");
	out->attempt = (unsigned)a;
	return 0;
}

/* ---- the Redis delay queue ---- */

/* Scores are Redis server time (ms), so that the nodes' clocks never
 * matter; items are added by gv_webhook_schedule (common/webhook_outbox.h).
 * Claims the earliest due member by moving it ARGV[1] ms into the future
 * (the lease); nil when none is due. */
static const char lua_claim[] = "local t = redis.call('TIME');"
				"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000);"
				"local m = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1);"
				"if #m == 0 then return false end;"
				"redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), m[1]);"
				"return m[1]";
/* Replaces ARGV[1] by ARGV[2] due in ARGV[3] ms (ARGV[2] '' : just drop);
 * only when ARGV[1] is still there (no other node took it over). */
static const char lua_next[] = "if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 and ARGV[2] ~= '' then "
			       "local t = redis.call('TIME');"
			       "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000);"
			       "redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2]) end;"
			       "return 1";

static redisReply *eval(struct gv_redis *r, const char *lua, const char *a1, const char *a2, const char *a3,
			struct gv_err *err)
{
	const char *argv[7] = { "EVAL", lua, "1", EXEC_WEBHOOK_QUEUE, a1, a2, a3 };
	int argc = a3 ? 7 : a2 ? 6 : 5;
	redisReply *rep = gv_redis_commandv(r, argc, argv, NULL, err);
	if (rep && rep->type == REDIS_REPLY_ERROR) {
		gv_err_set(err, GV_EREDIS, "%s", rep->str);
		gv_redis_reply_free(rep);
		return NULL;
	}
	return rep;
}

/* ---- the delivery process's privileges ---- */

int exec_webhook_user_resolve(const char *user, uid_t *uid, gid_t *gid, struct gv_err *err)
{
	if (!user || !*user)
		user = "nobody";
	char *end = NULL;
	errno = 0;
	unsigned long n = strtoul(user, &end, 10);
	if (end && !*end && user[0] >= '0' && user[0] <= '9') {
		if (errno || n >= (unsigned long)UINT32_MAX)
			return gv_err_set(err, GV_EINVAL, "webhook user %s: not a uid", user);
		struct passwd *pw = getpwuid((uid_t)n);
		*uid = (uid_t)n;
		*gid = pw ? pw->pw_gid : (gid_t)n;
	} else {
		struct passwd *pw = getpwnam(user);
		if (pw) {
			*uid = pw->pw_uid;
			*gid = pw->pw_gid;
		} else if (!strcmp(user, "nobody")) {
			*uid = 65534; /* the overflow ids: nobody/nogroup where no passwd names them */
			*gid = 65534;
		} else {
			return gv_err_set(err, GV_EINVAL, "webhook user %s: no such user", user);
		}
	}
	if (*uid == 0 || *gid == 0)
		return gv_err_set(err, GV_EINVAL, "webhook user %s: must not be root (uid/gid 0)", user);
	return 0;
}

static int caps_clear(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	memset(d, 0, sizeof(d));
	return (int)syscall(SYS_capset, &h, d);
}

static bool caps_empty(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return false;
	return true;
}

/* Security: the order is the fixed one (STYLE.md): the bounding and
 * ambient sets emptied while CAP_SETPCAP is still held, then setgid,
 * setgroups, no_new_privs, setresuid (which clears the permitted and
 * effective sets, keep-caps being off), the inheritable set cleared, and
 * everything verified. Any step failing is an error and the caller exits:
 * webhooks are never delivered with more. */
int exec_webhook_drop_privileges(uid_t uid, gid_t gid, struct gv_err *err)
{
	if (uid == 0 || gid == 0)
		return gv_err_set(err, GV_EINVAL, "refusing to deliver webhooks as uid/gid 0");
	bool root = geteuid() == 0;
	if (root) {
		for (unsigned long cap = 0; cap <= 63; cap++)
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
				return gv_err_errno(err, "prctl(PR_CAPBSET_DROP, %lu)", cap);
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0)
			return gv_err_errno(err, "prctl(PR_SET_KEEPCAPS)");
	}
	/* EINVAL: a kernel without ambient capabilities has none to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		return gv_err_errno(err, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
	if (root) {
		if (setresgid(gid, gid, gid) != 0)
			return gv_err_errno(err, "setresgid(%u)", (unsigned)gid);
		if (setgroups(0, NULL) != 0)
			return gv_err_errno(err, "setgroups");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return gv_err_errno(err, "prctl(PR_SET_NO_NEW_PRIVS)");
	if (root && setresuid(uid, uid, uid) != 0)
		return gv_err_errno(err, "setresuid(%u)", (unsigned)uid);
	if (caps_clear() != 0)
		return gv_err_errno(err, "capset");
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0)
		return gv_err_errno(err, "getresuid");
	if (!ru || !eu || !su || !rg || !eg || !sg || !caps_empty() || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 ||
	    (root && setresuid(0, 0, 0) == 0))
		return gv_err_set(err, GV_EINTERNAL, "privileges are still held after dropping them");
	return 0;
}

/* ---- the outbox (migration 0008) ---- */

int exec_webhook_recover(const struct exec_webhook_env *env, struct gv_err *err)
{
	if (gv_pg_ensure(env->pg, err) != 0)
		return -1;
	char after[24];
	snprintf(after, sizeof(after), "%llu", (unsigned long long)env->opts->recover_after_ms);
	const char *p[] = { after };
	PGresult *res = gv_pg_query(gv_pg_conn(env->pg),
				    "SELECT tenant_id, submission_id, attempt FROM gavel_webhook_outbox_due($1::int, 100)",
				    1, p, err);
	if (!res) {
		gv_err_prefix(err, "webhook outbox");
		return -1;
	}
	int added = 0;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *tid = PQgetvalue(res, i, 0), *sid = PQgetvalue(res, i, 1), *attempt = PQgetvalue(res, i, 2);
		char m[160];
		if (!gv_queue_tid_ok(tid) || !gv_queue_sid_ok(sid))
			continue;
		snprintf(m, sizeof(m), "%s:%s:%s", tid, sid, attempt);
		/* ZADD NX: an item Redis still holds (due, or leased by a
		 * deliverer) stays as it is. */
		int got = gv_webhook_schedule(env->r, m, 0, err);
		if (got < 0) {
			PQclear(res);
			return -1;
		}
		if (got == 1) {
			struct gv_log_ctx ctx = { .tenant = tid, .job = sid, .node = env->log ? env->log->node : NULL };
			gv_warn(&ctx, "webhook attempt %s was missing from Redis; scheduled again from the outbox", attempt);
			added++;
		}
	}
	PQclear(res);
	return added;
}

/* Moves on from member: next attempt (delay_ms >= 0) or drop (-1). */
static void move_on(const struct exec_webhook_env *env, const char *member, const struct exec_webhook_item *it,
		    unsigned next_attempt, long delay_ms)
{
	char next[160] = "", d[24];
	if (delay_ms >= 0)
		snprintf(next, sizeof(next), "%s:%s:%u", it->tid, it->sid, next_attempt);
	snprintf(d, sizeof(d), "%ld", delay_ms < 0 ? 0 : delay_ms);
	struct gv_err err;
	redisReply *rep = eval(env->r, lua_next, member, next, d, &err);
	if (!rep)
		gv_warn(env->log, "webhook queue: %s (the item comes back when its lease ends)", err.msg);
	gv_redis_reply_free(rep);
}

/* ---- one attempt ---- */

struct loaded {
	PGresult *res;         /* owns the row's strings */
	json_t *result;
	bool judge0;           /* made through the Judge0 API */
	char *url;             /* borrowed from res; NULL: none */
	unsigned char secret[EXEC_WEBHOOK_SECRET_MAX];
	size_t secret_len;
	bool gone;             /* no finished row (deleted, or not finished) */
	struct exec_webhook_row row;
};

static void loaded_free(struct loaded *l)
{
	PQclear(l->res);
	json_decref(l->result);
	sodium_memzero(l->secret, sizeof(l->secret));
}

static const char *val(PGresult *res, int col)
{
	return PQgetisnull(res, 0, col) ? NULL : PQgetvalue(res, 0, col);
}

/* Reads the row and the tenant's secret (creating the secret, with
 * libsodium's generator, when the tenant has none yet: the definer function
 * gavel_webhook_secret of migration 0006 stores it only if still NULL). */
static int load(const struct exec_webhook_env *env, const struct exec_webhook_item *it, struct loaded *l,
		struct gv_err *err)
{
	memset(l, 0, sizeof(*l));
	if (gv_pg_ensure(env->pg, err) != 0)
		return -1;
	PGconn *c = gv_pg_conn(env->pg);
	if (tenant_tx_begin(c, it->tid, err) != 0)
		return -1;
	const char *p[] = { it->sid };
	l->res = gv_pg_query(c,
			     "SELECT id, language, status, verdict, "
			     "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "
			     "to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "
			     "result::text, request->>'callback_url', api = 'judge0', "
			     /* The problem's feedback policy: the body is what GET
			      * shows, filtered as GET filters it. */
			     "(SELECT p.feedback::text FROM problems p WHERE p.tenant_id = submissions.tenant_id "
			     "AND p.id = submissions.problem_id) "
			     "FROM submissions WHERE id = $1 AND status = 'done'",
			     1, p, err);
	if (!l->res)
		goto fail;
	if (PQntuples(l->res) != 1) {
		l->gone = true;
		tenant_tx_rollback(c);
		return 0;
	}
	unsigned char fresh[EXEC_WEBHOOK_SECRET_LEN];
	char fresh_hex[2 * EXEC_WEBHOOK_SECRET_LEN + 1];
	randombytes_buf(fresh, sizeof(fresh));
	sodium_bin2hex(fresh_hex, sizeof(fresh_hex), fresh, sizeof(fresh));
	sodium_memzero(fresh, sizeof(fresh));
	const char *q[] = { fresh_hex };
	PGresult *s = gv_pg_query(c, "SELECT encode(gavel_webhook_secret(decode($1, 'hex')), 'hex')", 1, q, err);
	sodium_memzero(fresh_hex, sizeof(fresh_hex));
	if (!s)
		goto fail;
	const char *hex = PQntuples(s) == 1 && !PQgetisnull(s, 0, 0) ? PQgetvalue(s, 0, 0) : "";
	int bad = sodium_hex2bin(l->secret, sizeof(l->secret), hex, strlen(hex), NULL, &l->secret_len, NULL) != 0 ||
		  l->secret_len < 16;
	PQclear(s);
	if (bad) {
		gv_err_set(err, GV_EDB, "the tenant's webhook secret is unreadable");
		goto fail;
	}
	if (tenant_tx_commit(c, err) != 0)
		goto fail_nocommit;
	const char *rtext = val(l->res, 6);
	if (rtext && !(l->result = gv_json_parse(rtext, strlen(rtext), WEBHOOK_BODY_MAX, 0, err)))
		goto fail_nocommit;
	gv_feedback_filter(l->result, val(l->res, 9));
	l->judge0 = val(l->res, 8) && !strcmp(val(l->res, 8), "t");
	l->row = (struct exec_webhook_row){
		.id = val(l->res, 0),
		.language = val(l->res, 1),
		.status = val(l->res, 2),
		.verdict = val(l->res, 3),
		.created_at = val(l->res, 4),
		.finished_at = val(l->res, 5),
		.result = l->result,
	};
	l->url = (char *)val(l->res, 7);
	return 0;
fail:
	tenant_tx_rollback(c);
fail_nocommit:
	loaded_free(l);
	memset(l, 0, sizeof(*l));
	return -1;
}

enum outcome { OUT_DELIVERED, OUT_FAILED, OUT_REFUSED };
static const char *const outcome_names[] = { "delivered", "failed", "refused" };

/* Keeps the outbox row in step with the queue item, in the caller's
 * transaction: next attempt due in delay_ms, or (delay_ms < 0) gone. */
static int outbox_step(PGconn *c, const struct exec_webhook_item *it, unsigned next_attempt, long delay_ms,
		       struct gv_err *err)
{
	char attempt[16], delay[24];
	snprintf(attempt, sizeof(attempt), "%u", next_attempt);
	snprintf(delay, sizeof(delay), "%ld", delay_ms);
	const char *p[] = { it->tid, it->sid, attempt, delay };
	if (delay_ms < 0)
		return gv_pg_exec(c, "DELETE FROM webhook_outbox WHERE tenant_id = $1::uuid AND submission_id = $2", 2,
				  p, err);
	return gv_pg_exec(c,
			  "UPDATE webhook_outbox SET attempt = $3::int, "
			  "due_at = now() + make_interval(secs => $4::bigint / 1000.0) "
			  "WHERE tenant_id = $1::uuid AND submission_id = $2",
			  4, p, err);
}

/* Drops the outbox row of an item that needs no delivery (the submission is
 * gone). A failure leaves the row: the item comes back and is dropped again. */
static void outbox_drop(const struct exec_webhook_env *env, const struct exec_webhook_item *it)
{
	struct gv_err err;
	PGconn *c = gv_pg_ensure(env->pg, &err) == 0 ? gv_pg_conn(env->pg) : NULL;
	if (!c || tenant_tx_begin(c, it->tid, &err) != 0)
		goto fail;
	if (outbox_step(c, it, 0, -1, &err) != 0) {
		tenant_tx_rollback(c);
		goto fail;
	}
	if (tenant_tx_commit(c, &err) == 0)
		return;
fail:
	gv_warn(env->log, "webhook outbox of %s: %s", it->sid, err.msg);
}

/* Records one attempt, and moves the outbox row on in the same
 * transaction (next_attempt due in delay_ms, or gone when delay_ms < 0);
 * a failure to record is logged, not retried (the delivery itself
 * happened or not regardless; the outbox row then still names this
 * attempt, which at worst is made again: at-least-once). */
static void record(const struct exec_webhook_env *env, const struct exec_webhook_item *it, enum outcome o,
		   long status_code, const char *error, unsigned next_attempt, long delay_ms)
{
	struct gv_err err;
	if (gv_pg_ensure(env->pg, &err) != 0)
		goto fail;
	PGconn *c = gv_pg_conn(env->pg);
	if (tenant_tx_begin(c, it->tid, &err) != 0)
		goto fail;
	char attempt[16], code[16], msg[1024];
	snprintf(attempt, sizeof(attempt), "%u", it->attempt);
	snprintf(code, sizeof(code), "%ld", status_code);
	snprintf(msg, sizeof(msg), "%s", error ? error : "");
	const char *p[] = { it->tid, it->sid, attempt, outcome_names[o], status_code > 0 ? code : NULL,
			    error ? msg : NULL };
	if (gv_pg_exec(c,
		       "INSERT INTO webhook_deliveries (tenant_id, submission_id, attempt, outcome, status_code, error) "
		       "VALUES ($1::uuid, $2, $3::int, $4, $5::int, $6)",
		       6, p, &err) != 0) {
		tenant_tx_rollback(c);
		goto fail;
	}
	if (outbox_step(c, it, next_attempt, delay_ms, &err) != 0) {
		tenant_tx_rollback(c);
		goto fail;
	}
	if (tenant_tx_commit(c, &err) != 0)
		goto fail;
	return;
fail:
	gv_warn(env->log, "recording webhook attempt %u of %s: %s", it->attempt, it->sid, err.msg);
}

/* Resolves t->host and checks every address. 0 with the first address in
 * addr (numeric text), -1 with err: GV_EINVAL refused (an address is not
 * allowed), anything else a failure worth retrying. */
static int resolve_checked(const struct exec_webhook_target *t, bool allow_loopback, char *addr, size_t addrsz,
			   struct gv_err *err)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(t->host, NULL, &hints, &res);
	if (rc != 0)
		return gv_err_set(err, GV_ENOTFOUND, "resolving %s: %s", t->host, gai_strerror(rc));
	addr[0] = '\0';
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		char text[INET6_ADDRSTRLEN] = "?";
		const void *raw = ai->ai_family == AF_INET
					  ? (const void *)&((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr
					  : (const void *)&((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr;
		if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6)
			inet_ntop(ai->ai_family, raw, text, sizeof(text));
		enum exec_webhook_addr_class cls = exec_webhook_addr_classify(ai->ai_addr);
		if (!exec_webhook_addr_allowed(cls, allow_loopback)) {
			gv_err_set(err, GV_EINVAL, "refused: %s resolves to %s, a %s address", t->host, text,
				   exec_webhook_addr_class_name(cls));
			freeaddrinfo(res);
			return -1;
		}
		if (!addr[0])
			snprintf(addr, addrsz, "%s", text);
	}
	freeaddrinfo(res);
	if (!addr[0])
		return gv_err_set(err, GV_ENOTFOUND, "resolving %s: no address", t->host);
	return 0;
}

static size_t discard(char *ptr, size_t size, size_t n, void *arg)
{
	(void)ptr;
	size_t *seen = arg;
	*seen += size * n;
	return *seen > EXEC_WEBHOOK_RESPONSE_MAX ? 0 : size * n; /* 0 ends the transfer */
}

/* One POST. Returns the outcome; *code the HTTP status (0: none), errbuf
 * what failed. Security: the connection goes only to `addr`, which
 * resolve_checked approved: CURLOPT_RESOLVE pins host:port to it (curl
 * does not resolve again), CURLOPT_PROXY "" ignores *_proxy variables
 * (a proxy would connect for us, anywhere), redirects are not followed and
 * only http/https may be spoken. */
static enum outcome post(const struct exec_webhook_env *env, const char *url, const struct exec_webhook_target *t,
			 const char *addr, bool put, const char *body, size_t body_len, const char *sig,
			 const char *delivery, long *code, char *errbuf, size_t errsz)
{
	*code = 0;
	errbuf[0] = '\0';
	CURL *h = curl_easy_init();
	if (!h) {
		snprintf(errbuf, errsz, "curl_easy_init failed");
		return OUT_FAILED;
	}
	char pin[EXEC_WEBHOOK_HOST_MAX + INET6_ADDRSTRLEN + 16], sig_h[EXEC_WEBHOOK_SIG_MAX + 32], del_h[200];
	bool v6 = strchr(addr, ':') != NULL;
	snprintf(pin, sizeof(pin), "%s:%u:%s%s%s", t->host, t->port, v6 ? "[" : "", addr, v6 ? "]" : "");
	snprintf(sig_h, sizeof(sig_h), "X-Gavel-Signature: %s", sig);
	snprintf(del_h, sizeof(del_h), "X-Gavel-Delivery: %s", delivery);
	struct curl_slist *resolve = curl_slist_append(NULL, pin);
	struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	hdrs = hdrs ? curl_slist_append(hdrs, sig_h) : NULL;
	hdrs = hdrs ? curl_slist_append(hdrs, del_h) : NULL;
	hdrs = hdrs ? curl_slist_append(hdrs, "Expect:") : NULL; /* no 100-continue round trip */
	char cerr[CURL_ERROR_SIZE] = "";
	size_t seen = 0;
	long connect_ms = env->opts->timeout_ms < 3000 ? (long)env->opts->timeout_ms : 3000;
	enum outcome o = OUT_FAILED;
	if (!resolve || !hdrs) {
		snprintf(errbuf, errsz, "out of memory");
		goto out;
	}
	CURLcode rc = CURLE_OK;
#define SET(opt, v)                                             \
	do {                                                    \
		if (rc == CURLE_OK)                             \
			rc = curl_easy_setopt(h, opt, v);       \
	} while (0)
	SET(CURLOPT_URL, url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_PROXY, "");
	SET(CURLOPT_NOPROXY, "*");
	SET(CURLOPT_RESOLVE, resolve);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	SET(CURLOPT_TIMEOUT_MS, (long)env->opts->timeout_ms);
	SET(CURLOPT_HTTPHEADER, hdrs);
	SET(CURLOPT_USERAGENT, "gavel-webhook/1");
	SET(CURLOPT_POST, 1L);
	if (put) /* the body as for a POST, the method PUT (Judge0's callbacks) */
		SET(CURLOPT_CUSTOMREQUEST, "PUT");
	SET(CURLOPT_POSTFIELDS, body);
	SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	SET(CURLOPT_WRITEFUNCTION, discard);
	SET(CURLOPT_WRITEDATA, &seen);
	SET(CURLOPT_ERRORBUFFER, cerr);
	SET(CURLOPT_MAXREDIRS, 0L);
#undef SET
	if (rc != CURLE_OK) {
		snprintf(errbuf, errsz, "curl setup: %s", curl_easy_strerror(rc));
		goto out;
	}
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
	if (*code >= 200 && *code < 300) {
		/* A 2xx is a delivery even when we stopped reading a long body. */
		o = OUT_DELIVERED;
	} else if (rc != CURLE_OK) {
		snprintf(errbuf, errsz, "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
	} else {
		snprintf(errbuf, errsz, "HTTP %ld", *code);
	}
out:
	curl_slist_free_all(resolve);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	return o;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Every recover_after (at least every second), what Redis lost comes back
 * from the outbox. One delivery process per node: a static schedule. */
static void maybe_recover(const struct exec_webhook_env *env)
{
	static uint64_t next_ms;
	uint64_t now = mono_ms();
	if (!env->opts->recover_after_ms || now < next_ms)
		return;
	next_ms = now + (env->opts->recover_after_ms > 1000 ? env->opts->recover_after_ms : 1000);
	struct gv_err err;
	if (exec_webhook_recover(env, &err) < 0)
		gv_warn(env->log, "webhook outbox: %s (retried later)", err.msg);
}

int exec_webhook_step(const struct exec_webhook_env *env, struct gv_err *err)
{
	const struct exec_webhook_opts *o = env->opts;
	maybe_recover(env);
	/* The lease: longer than one attempt with its PostgreSQL work. */
	char lease[24];
	snprintf(lease, sizeof(lease), "%llu", (unsigned long long)(o->timeout_ms * 2 + 30000));
	redisReply *rep = eval(env->r, lua_claim, lease, NULL, NULL, err);
	if (!rep)
		return -1;
	if (rep->type != REDIS_REPLY_STRING) {
		gv_redis_reply_free(rep);
		return 0;
	}
	char member[160];
	snprintf(member, sizeof(member), "%s", rep->str);
	gv_redis_reply_free(rep);
	struct exec_webhook_item it;
	struct gv_err e2;
	if (exec_webhook_item_parse(member, &it, &e2) != 0) {
		char shown[64];
		gv_error(env->log, "dropping webhook item '%s': %s", gv_log_escape(shown, sizeof(shown), member,
										       strlen(member)),
			 e2.msg);
		move_on(env, member, &it, 0, -1);
		return 1;
	}
	struct gv_log_ctx ctx = { .tenant = it.tid, .job = it.sid, .node = env->log ? env->log->node : NULL };
	struct loaded l;
	if (load(env, &it, &l, &e2) != 0) {
		gv_warn(&ctx, "webhook attempt %u postponed: %s", it.attempt, e2.msg);
		move_on(env, member, &it, it.attempt, 5000);
		return 1;
	}
	if (l.gone || !l.url) {
		gv_info(&ctx, "webhook dropped: the submission is gone or has no callback_url");
		loaded_free(&l);
		outbox_drop(env, &it);
		move_on(env, member, &it, 0, -1);
		return 1;
	}
	enum outcome out = OUT_FAILED;
	long code = 0;
	char why[GV_ERR_MSG_MAX + 32] = "";
	struct exec_webhook_target t;
	char addr[INET6_ADDRSTRLEN];
	json_t *body = l.judge0 ? exec_webhook_judge0_body(&l.row) : exec_webhook_body(&l.row);
	size_t body_len = 0;
	char *text = body ? gv_json_dump(body, JSON_COMPACT, WEBHOOK_BODY_MAX, &body_len, &e2) : NULL;
	bool built = body != NULL;
	json_decref(body);
	if (!text) {
		snprintf(why, sizeof(why), "body: %s", built ? e2.msg : "out of memory");
	} else if (exec_webhook_url_parse(l.url, &t, &e2) != 0) {
		out = OUT_REFUSED;
		snprintf(why, sizeof(why), "refused: %s", e2.msg);
	} else if (resolve_checked(&t, o->allow_loopback, addr, sizeof(addr), &e2) != 0) {
		out = e2.code == GV_EINVAL ? OUT_REFUSED : OUT_FAILED;
		snprintf(why, sizeof(why), "%s", e2.msg);
	} else {
		char sig[EXEC_WEBHOOK_SIG_MAX], delivery[160];
		exec_webhook_sign(l.secret, l.secret_len, text, body_len, sig);
		snprintf(delivery, sizeof(delivery), "%s.%u", it.sid, it.attempt);
		out = post(env, l.url, &t, addr, l.judge0, text, body_len, sig, delivery, &code, why, sizeof(why));
	}
	free(text);
	loaded_free(&l);
	long delay = -1; /* next attempt's delay, -1: none */
	if (out == OUT_FAILED && it.attempt < o->max_attempts) {
		unsigned seed = gv_backoff_seed();
		delay = gv_backoff_jitter_ms(exec_webhook_retry_delay_ms(it.attempt, o->backoff_ms, o->backoff_max_ms),
					     &seed);
	}
	record(env, &it, out, code, out == OUT_DELIVERED ? NULL : why, it.attempt + 1, delay);
	if (out == OUT_DELIVERED)
		gv_info(&ctx, "webhook delivered (HTTP %ld, attempt %u)", code, it.attempt);
	else if (out == OUT_REFUSED)
		gv_warn(&ctx, "webhook refused: %s", why);
	else if (delay < 0)
		gv_warn(&ctx, "webhook given up after %u attempts: %s", it.attempt, why);
	else
		gv_info(&ctx, "webhook attempt %u failed (%s); next in %ld ms", it.attempt, why, delay);
	move_on(env, member, &it, it.attempt + 1, delay);
	return 1;
}
