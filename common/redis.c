/* Redis connection helpers on hiredis 0.14.1; see redis.h. A context that
 * saw an I/O error is unusable in hiredis, so it is freed at once and the
 * next command reconnects; error replies leave the connection as it was. */
#include "common/redis.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "common/backoff.h"

struct gv_redis {
	redisContext *ctx;
	struct gv_redis_url url;
	struct gv_redis_opts opts;
	unsigned reconnects;
	unsigned seed;
	struct gv_redis_addr master; /* behind Sentinels: the server ctx is on */
	uint64_t master_check_ms;    /* when to ask them again */
};

/* Behind Sentinels, how often a connection asks them whether its server is
 * still the master. A planned failover (SENTINEL FAILOVER) promotes the
 * replica but leaves the old master a master until the Sentinels' next
 * look at it, ~10 s later (measured: 11 s): clients still on it neither
 * break nor meet READONLY, and all they write meanwhile is thrown away
 * when it becomes a replica. */
#define MASTER_RECHECK_MS 1000u
#define MASTER_RECHECK_TIMEOUT_MS 500
/* Sentinels that did not answer are asked again only after this: each try
 * can block a command for MASTER_RECHECK_TIMEOUT_MS per Sentinel. */
#define MASTER_RECHECK_AFTER_FAILURE_MS 10000u

/* ------------------------------------------------------------- URL parsing */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes in[0..len) into out (size outsz). */
static int pct_decode(const char *in, size_t len, char *out, size_t outsz, const char *what,
		      struct gv_err *err)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)in[i];
		if (c == '%') {
			int hi = i + 2 < len ? hexval(in[i + 1]) : -1;
			int lo = i + 2 < len ? hexval(in[i + 2]) : -1;
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return gv_err_set(err, GV_EINVAL, "bad percent-encoding in the %s", what);
			c = hi * 16 + lo;
			i += 2;
		}
		if (o + 1 >= outsz)
			return gv_err_set(err, GV_EINVAL, "%s longer than %zu bytes", what, outsz - 1);
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* Parses a decimal number of at most maxdigits digits in s[0..len). */
static int parse_uint(const char *s, size_t len, size_t maxdigits, long *out)
{
	if (len == 0 || len > maxdigits)
		return -1;
	long v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

static bool host_char_ok(char c, bool bracketed)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
	    c == '_')
		return true;
	return bracketed && (c == ':' || c == '%');
}

static int parse_userinfo(const char *ui, size_t len, struct gv_redis_url *out, struct gv_err *err)
{
	const char *colon = memchr(ui, ':', len);
	if (!colon) /* like redis-cli: a lone word is the password */
		return pct_decode(ui, len, out->password, sizeof(out->password), "password", err);
	if (pct_decode(ui, (size_t)(colon - ui), out->user, sizeof(out->user), "user name", err) != 0)
		return -1;
	return pct_decode(colon + 1, len - (size_t)(colon - ui) - 1, out->password, sizeof(out->password),
			  "password", err);
}

static int parse_db(const char *s, size_t len, struct gv_redis_url *out, struct gv_err *err)
{
	long db;
	if (parse_uint(s, len, 5, &db) != 0 || db > GV_REDIS_DB_MAX)
		return gv_err_set(err, GV_EINVAL, "database number '%.*s' is not a number in 0..%d",
				  (int)(len > 16 ? 16 : len), s, GV_REDIS_DB_MAX);
	out->db = (int)db;
	return 0;
}

/* host[:port] or [ipv6][:port] in hp[0..hplen) into *out (port stays as
 * the caller preset it when none is given). */
static int parse_hostport(const char *hp, size_t hplen, struct gv_redis_addr *out, struct gv_err *err)
{
	const char *host = hp, *port = NULL;
	size_t hostlen, portlen = 0;
	bool bracketed = hplen > 0 && hp[0] == '[';
	if (bracketed) {
		const char *close = memchr(hp, ']', hplen);
		if (!close)
			return gv_err_set(err, GV_EINVAL, "unclosed '[' in host");
		host = hp + 1;
		hostlen = (size_t)(close - host);
		const char *after = close + 1;
		size_t afterlen = hplen - (size_t)(after - hp);
		if (afterlen > 0) {
			if (after[0] != ':')
				return gv_err_set(err, GV_EINVAL, "unexpected text after ']'");
			port = after + 1;
			portlen = afterlen - 1;
		}
	} else {
		const char *colon = memchr(hp, ':', hplen);
		hostlen = colon ? (size_t)(colon - hp) : hplen;
		if (colon) {
			port = colon + 1;
			portlen = hplen - hostlen - 1;
		}
	}
	if (hostlen == 0)
		return gv_err_set(err, GV_EINVAL, "no host");
	if (hostlen >= sizeof(out->host))
		return gv_err_set(err, GV_EINVAL, "host longer than %zu bytes", sizeof(out->host) - 1);
	for (size_t i = 0; i < hostlen; i++)
		if (!host_char_ok(host[i], bracketed))
			return gv_err_set(err, GV_EINVAL, "bad character in host");
	memcpy(out->host, host, hostlen);
	out->host[hostlen] = '\0';
	if (port) {
		long p;
		if (parse_uint(port, portlen, 5, &p) != 0 || p < 1 || p > 65535)
			return gv_err_set(err, GV_EINVAL, "port '%.*s' is not a number in 1..65535",
					  (int)(portlen > 16 ? 16 : portlen), port);
		out->port = (int)p;
	}
	return 0;
}

/* userinfo@ at the start of rest[0..alen): parsed into out; *hp and
 * *hplen get what follows it. */
static int parse_authority(const char *rest, size_t alen, struct gv_redis_url *out, const char **hp,
			   size_t *hplen, struct gv_err *err)
{
	const char *at = NULL;
	for (size_t i = 0; i < alen; i++)
		if (rest[i] == '@')
			at = rest + i;
	*hp = rest;
	if (at) {
		if (parse_userinfo(rest, (size_t)(at - rest), out, err) != 0)
			return -1;
		*hp = at + 1;
	}
	*hplen = alen - (size_t)(*hp - rest);
	return 0;
}

static int parse_tcp(const char *rest, struct gv_redis_url *out, struct gv_err *err)
{
	size_t alen = strcspn(rest, "/?#");
	const char *hp;
	size_t hplen;
	if (parse_authority(rest, alen, out, &hp, &hplen, err) != 0)
		return -1;
	struct gv_redis_addr a = { .port = out->port };
	if (parse_hostport(hp, hplen, &a, err) != 0)
		return -1;
	memcpy(out->host, a.host, sizeof(out->host));
	out->port = a.port;
	const char *tail = rest + alen;
	if (tail[0] == '\0')
		return 0;
	if (tail[0] != '/')
		return gv_err_set(err, GV_EINVAL, "query strings and fragments are not supported");
	tail++;
	if (tail[0] == '\0')
		return 0;
	return parse_db(tail, strlen(tail), out, err);
}

static bool master_name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '-' || c == '_';
}

/* ?sentinel_user=U&sentinel_password=P (either, percent-encoded): what
 * the Sentinels themselves ask for (requirepass, or an ACL user). */
static int parse_sentinel_query(const char *q, struct gv_redis_url *out, struct gv_err *err)
{
	while (*q) {
		size_t len = strcspn(q, "&");
		const char *eq = memchr(q, '=', len);
		if (!eq)
			return gv_err_set(err, GV_EINVAL, "a query parameter without '='");
		size_t klen = (size_t)(eq - q), vlen = len - klen - 1;
		if (klen == 13 && strncmp(q, "sentinel_user", 13) == 0) {
			if (pct_decode(eq + 1, vlen, out->sentinel_user, sizeof(out->sentinel_user), "Sentinel user", err) != 0)
				return -1;
		} else if (klen == 17 && strncmp(q, "sentinel_password", 17) == 0) {
			if (pct_decode(eq + 1, vlen, out->sentinel_password, sizeof(out->sentinel_password),
				       "Sentinel password", err) != 0)
				return -1;
		} else {
			return gv_err_set(err, GV_EINVAL, "the only query parameters understood are sentinel_user and "
				   "sentinel_password");
		}
		q += len;
		if (*q == '&')
			q++;
	}
	if (out->sentinel_user[0] && !out->sentinel_password[0])
		return gv_err_set(err, GV_EINVAL, "sentinel_user without sentinel_password");
	return 0;
}

/* redis-sentinel://[userinfo@]h1[:p1],h2[:p2]/master[/db][?sentinel_...] */
static int parse_sentinel(const char *rest, struct gv_redis_url *out, struct gv_err *err)
{
	out->is_sentinel = true;
	out->port = 0;
	size_t alen = strcspn(rest, "/?#");
	const char *hp;
	size_t hplen;
	if (parse_authority(rest, alen, out, &hp, &hplen, err) != 0)
		return -1;
	for (size_t off = 0; off <= hplen;) {
		size_t len = strcspn(hp + off, ",/?#");
		if (len > hplen - off)
			len = hplen - off;
		if (out->n_sentinels == GV_REDIS_SENTINELS_MAX)
			return gv_err_set(err, GV_EINVAL, "more than %d Sentinels", GV_REDIS_SENTINELS_MAX);
		struct gv_redis_addr *a = &out->sentinels[out->n_sentinels];
		a->port = GV_REDIS_SENTINEL_PORT;
		if (parse_hostport(hp + off, len, a, err) != 0) {
			gv_err_prefix(err, "Sentinel %zu", out->n_sentinels + 1);
			return -1;
		}
		out->n_sentinels++;
		off += len + 1;
	}
	const char *tail = rest + alen;
	if (tail[0] != '/' || tail[1] == '\0' || tail[1] == '/' || tail[1] == '?')
		return gv_err_set(err, GV_EINVAL, "no master name after the Sentinels (redis-sentinel://h1,h2/NAME)");
	tail++;
	/* The path (NAME[/db]) ends where the Sentinels' credentials begin. */
	char path[GV_REDIS_MASTER_NAME_MAX + 16];
	size_t plen = strcspn(tail, "?#");
	if (tail[plen] == '#')
		return gv_err_set(err, GV_EINVAL, "fragments are not supported");
	if (tail[plen] == '?' && parse_sentinel_query(tail + plen + 1, out, err) != 0)
		return -1;
	if (plen >= sizeof(path))
		return gv_err_set(err, GV_EINVAL, "master name longer than %d bytes", GV_REDIS_MASTER_NAME_MAX);
	memcpy(path, tail, plen);
	path[plen] = '\0';
	tail = path;
	size_t nlen = strcspn(tail, "/");
	if (nlen > GV_REDIS_MASTER_NAME_MAX)
		return gv_err_set(err, GV_EINVAL, "master name longer than %d bytes", GV_REDIS_MASTER_NAME_MAX);
	for (size_t i = 0; i < nlen; i++)
		if (!master_name_char_ok(tail[i]))
			return gv_err_set(err, GV_EINVAL, "bad character in the master name");
	memcpy(out->master_name, tail, nlen);
	out->master_name[nlen] = '\0';
	tail += nlen;
	if (tail[0] == '\0' || (tail[0] == '/' && tail[1] == '\0'))
		return 0;
	return parse_db(tail + 1, strlen(tail + 1), out, err);
}

static int parse_unix(const char *rest, struct gv_redis_url *out, struct gv_err *err)
{
	out->is_unix = true;
	out->port = 0;
	size_t alen = strcspn(rest, "/");
	if (alen > 0) {
		if (rest[alen - 1] != '@')
			return gv_err_set(err, GV_EINVAL, "unix socket URL needs an absolute path (unix:///path)");
		const char *at = NULL;
		for (size_t i = 0; i < alen; i++)
			if (rest[i] == '@')
				at = rest + i;
		if (parse_userinfo(rest, (size_t)(at - rest), out, err) != 0)
			return -1;
	}
	const char *path = rest + alen;
	size_t plen = strcspn(path, "?#");
	if (plen <= 1)
		return gv_err_set(err, GV_EINVAL, "unix socket URL has no path");
	if (plen >= sizeof(out->path))
		return gv_err_set(err, GV_EINVAL, "socket path longer than %zu bytes", sizeof(out->path) - 1);
	memcpy(out->path, path, plen);
	out->path[plen] = '\0';
	const char *q = path + plen;
	if (q[0] == '\0')
		return 0;
	if (strncmp(q, "?db=", 4) != 0)
		return gv_err_set(err, GV_EINVAL, "the only query parameter understood is db=N");
	return parse_db(q + 4, strlen(q + 4), out, err);
}

int gv_redis_url_parse(const char *url, struct gv_redis_url *out, struct gv_err *err)
{
	if (!out)
		return gv_err_set(err, GV_EINTERNAL, "no output for the Redis URL");
	memset(out, 0, sizeof(*out));
	out->port = 6379;
	int rc;
	if (!url || !url[0])
		rc = gv_err_set(err, GV_EINVAL, "empty URL");
	else if (strncmp(url, "redis://", 8) == 0)
		rc = parse_tcp(url + 8, out, err);
	else if (strncmp(url, "unix://", 7) == 0)
		rc = parse_unix(url + 7, out, err);
	else if (strncmp(url, "redis-sentinel://", 17) == 0)
		rc = parse_sentinel(url + 17, out, err);
	else if (strncmp(url, "rediss://", 9) == 0)
		rc = gv_err_set(err, GV_EINVAL, "TLS (rediss://) is not supported");
	else
		rc = gv_err_set(err, GV_EINVAL, "URL must start with redis://, unix:// or redis-sentinel://");
	if (rc != 0) {
		explicit_bzero(out->password, sizeof(out->password));
		explicit_bzero(out->sentinel_password, sizeof(out->sentinel_password));
		gv_err_prefix(err, "Redis URL");
	}
	return rc;
}

/* -------------------------------------------------------------- connecting */

static struct timeval ms_to_tv(int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	return tv;
}

static void where_addr(const char *host, int port, char *buf, size_t size)
{
	if (strchr(host, ':'))
		snprintf(buf, size, "[%s]:%d", host, port);
	else
		snprintf(buf, size, "%s:%d", host, port);
}

/* Runs a setup command (AUTH, SELECT) and checks its reply. */
static int setup_command(redisContext *c, int argc, const char **argv, const char *what, struct gv_err *err)
{
	redisReply *reply = redisCommandArgv(c, argc, argv, NULL);
	if (!reply)
		return gv_err_set(err, GV_EREDIS, "%s: %s", what, c->errstr[0] ? c->errstr : "I/O error");
	int rc = 0;
	if (reply->type == REDIS_REPLY_ERROR)
		rc = gv_err_set(err, GV_EREDIS, "%s: %.*s", what, (int)(reply->len > 200 ? 200 : reply->len),
				reply->str);
	freeReplyObject(reply);
	return rc;
}

/* A TCP or unix connection with the command timeout set; no AUTH yet. */
static redisContext *open_context(const char *unix_path, const char *host, int port, int connect_timeout_ms,
				  int command_timeout_ms, const char *at, struct gv_err *err)
{
	struct timeval ctv = ms_to_tv(connect_timeout_ms > 0 ? connect_timeout_ms : 2000);
	redisContext *c = unix_path ? redisConnectUnixWithTimeout(unix_path, ctv) : redisConnectWithTimeout(host, port, ctv);
	if (!c) {
		gv_err_set(err, GV_EREDIS, "connect to Redis at %s: out of memory", at);
		return NULL;
	}
	if (c->err) {
		gv_err_set(err, GV_EREDIS, "connect to Redis at %s: %s", at, c->errstr);
		redisFree(c);
		return NULL;
	}
	if (command_timeout_ms > 0 && redisSetTimeout(c, ms_to_tv(command_timeout_ms)) != REDIS_OK) {
		gv_err_set(err, GV_EREDIS, "Redis at %s: set timeout: %s", at, c->errstr);
		redisFree(c);
		return NULL;
	}
	if (!unix_path)
		(void)redisEnableKeepAlive(c); /* best effort: dead peers are found sooner */
	return c;
}

bool gv_redis_reply_is_readonly(const redisReply *reply)
{
	return reply && reply->type == REDIS_REPLY_ERROR && reply->len >= 8 && strncmp(reply->str, "READONLY", 8) == 0;
}

/* One Sentinel's answer: 0 with *out filled, -1 with err set. */
static int ask_sentinel(const struct gv_redis_url *u, const struct gv_redis_addr *s, int timeout_ms,
			struct gv_redis_addr *out, struct gv_err *err)
{
	char at[GV_REDIS_HOST_MAX + 16];
	where_addr(s->host, s->port, at, sizeof(at));
	redisContext *c = open_context(NULL, s->host, s->port, timeout_ms, timeout_ms, at, err);
	if (!c)
		return -1;
	if (u->sentinel_password[0]) {
		const char *auth[] = { "AUTH", u->sentinel_user[0] ? u->sentinel_user : u->sentinel_password,
				       u->sentinel_password };
		if (setup_command(c, u->sentinel_user[0] ? 3 : 2, auth, "AUTH", err) != 0) {
			gv_err_prefix(err, "Sentinel %s", at);
			redisFree(c);
			return -1;
		}
	}
	const char *argv[] = { "SENTINEL", "get-master-addr-by-name", u->master_name };
	redisReply *rep = redisCommandArgv(c, 3, argv, NULL);
	int rc = -1;
	if (!rep)
		gv_err_set(err, GV_EREDIS, "Sentinel %s: %s", at, c->errstr[0] ? c->errstr : "I/O error");
	else if (rep->type == REDIS_REPLY_ERROR)
		gv_err_set(err, GV_EREDIS, "Sentinel %s: %.*s", at, (int)(rep->len > 200 ? 200 : rep->len), rep->str);
	else if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 || rep->element[0]->type != REDIS_REPLY_STRING ||
		 rep->element[1]->type != REDIS_REPLY_STRING)
		gv_err_set(err, GV_EREDIS, "Sentinel %s does not know a master named '%s'", at, u->master_name);
	else {
		long port = strtol(rep->element[1]->str, NULL, 10);
		if (rep->element[0]->len == 0 || (size_t)rep->element[0]->len >= sizeof(out->host) || port < 1 ||
		    port > 65535) {
			gv_err_set(err, GV_EREDIS, "Sentinel %s: a master address that is not one", at);
		} else {
			memcpy(out->host, rep->element[0]->str, (size_t)rep->element[0]->len + 1);
			out->port = (int)port;
			rc = 0;
		}
	}
	if (rep)
		freeReplyObject(rep);
	redisFree(c);
	return rc;
}

int gv_redis_sentinel_master(const struct gv_redis_url *u, int timeout_ms, struct gv_redis_addr *out,
			     struct gv_err *err)
{
	if (!u->is_sentinel || u->n_sentinels == 0)
		return gv_err_set(err, GV_EINTERNAL, "not a Sentinel URL");
	char why[GV_ERR_MSG_MAX] = "";
	size_t used = 0;
	for (size_t i = 0; i < u->n_sentinels; i++) {
		if (ask_sentinel(u, &u->sentinels[i], timeout_ms, out, err) == 0)
			return 0;
		int n = snprintf(why + used, sizeof(why) - used, "%s%s", used ? "; " : "", err->msg);
		if (n > 0)
			used = (size_t)n + used < sizeof(why) ? used + (size_t)n : sizeof(why) - 1;
	}
	return gv_err_set(err, GV_EREDIS, "no Sentinel named the master '%s': %s", u->master_name, why);
}

/* ROLE's first element must be "master". */
static int check_master(redisContext *c, const char *at, struct gv_err *err)
{
	redisReply *rep = redisCommand(c, "ROLE");
	int rc = 0;
	if (!rep)
		rc = gv_err_set(err, GV_EREDIS, "ROLE at %s: %s", at, c->errstr[0] ? c->errstr : "I/O error");
	else if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 || rep->element[0]->type != REDIS_REPLY_STRING ||
		 strcmp(rep->element[0]->str, "master") != 0)
		rc = gv_err_set(err, GV_EREDIS, "the server at %s that the Sentinels named is not a master (yet)", at);
	if (rep)
		freeReplyObject(rep);
	return rc;
}

/* gv_redis_connect_url, and which server it connected to. */
static redisContext *connect_url_at(const struct gv_redis_url *u, int connect_timeout_ms, int command_timeout_ms,
				    struct gv_redis_addr *used, struct gv_err *err)
{
	struct gv_redis_addr addr = { .port = u->port };
	if (u->is_sentinel) {
		if (gv_redis_sentinel_master(u, connect_timeout_ms > 0 ? connect_timeout_ms : 2000, &addr, err) != 0)
			return NULL;
	} else if (!u->is_unix) {
		memcpy(addr.host, u->host, sizeof(addr.host));
	}
	char at[GV_REDIS_PATH_MAX + GV_REDIS_HOST_MAX + 16];
	if (u->is_unix)
		snprintf(at, sizeof(at), "%s", u->path);
	else
		where_addr(addr.host, addr.port, at, sizeof(at));
	redisContext *c = open_context(u->is_unix ? u->path : NULL, addr.host, addr.port, connect_timeout_ms,
				       command_timeout_ms, at, err);
	if (!c)
		return NULL;
	if (u->password[0]) {
		const char *argv[] = { "AUTH", u->user[0] ? u->user : u->password, u->password };
		if (setup_command(c, u->user[0] ? 3 : 2, argv, "AUTH", err) != 0)
			goto fail;
	}
	if (u->is_sentinel && check_master(c, at, err) != 0) {
		redisFree(c);
		return NULL;
	}
	if (u->db > 0) {
		char db[16];
		snprintf(db, sizeof(db), "%d", u->db);
		const char *argv[] = { "SELECT", db };
		if (setup_command(c, 2, argv, "SELECT", err) != 0)
			goto fail;
	}
	if (used)
		*used = addr;
	return c;
fail:
	gv_err_prefix(err, "Redis at %s", at);
	redisFree(c);
	return NULL;
}

redisContext *gv_redis_connect_url(const struct gv_redis_url *u, int connect_timeout_ms, int command_timeout_ms,
				   struct gv_err *err)
{
	return connect_url_at(u, connect_timeout_ms, command_timeout_ms, NULL, err);
}

/* Whether the Sentinels now name another master than the one r is on,
 * asked at most every MASTER_RECHECK_MS. Sentinels that do not answer
 * leave the connection as it is (a broken one is found by its commands)
 * and are asked again after MASTER_RECHECK_AFTER_FAILURE_MS. */
static bool master_moved(struct gv_redis *r)
{
	uint64_t now = gv_mono_ms();
	if (!r->url.is_sentinel || now < r->master_check_ms)
		return false;
	struct gv_redis_addr named;
	struct gv_err err;
	if (gv_redis_sentinel_master(&r->url, MASTER_RECHECK_TIMEOUT_MS, &named, &err) != 0) {
		r->master_check_ms = gv_mono_ms() + MASTER_RECHECK_AFTER_FAILURE_MS;
		return false;
	}
	r->master_check_ms = gv_mono_ms() + MASTER_RECHECK_MS;
	return named.port != r->master.port || strcmp(named.host, r->master.host) != 0;
}

static int connect_with_backoff(struct gv_redis *r, struct gv_err *err)
{
	int timeout = r->opts.command_timeout_ms < 0 ? 0 : r->opts.command_timeout_ms;
	for (int attempt = 0; attempt < r->opts.max_attempts; attempt++) {
		if (attempt > 0) {
			long d = gv_backoff_delay_ms((unsigned)(attempt - 1), r->opts.backoff_initial_ms,
						     r->opts.backoff_max_ms);
			gv_backoff_sleep_ms(gv_backoff_jitter_ms(d, &r->seed));
		}
		r->ctx = connect_url_at(&r->url, r->opts.connect_timeout_ms, timeout, &r->master, err);
		if (r->ctx) {
			r->master_check_ms = gv_mono_ms() + MASTER_RECHECK_MS;
			return 0;
		}
	}
	gv_err_prefix(err, "Redis unreachable after %d attempt(s)", r->opts.max_attempts);
	return -1;
}

struct gv_redis *gv_redis_new(const struct gv_redis_opts *opts, struct gv_err *err)
{
	if (!opts || !opts->url) {
		gv_err_set(err, GV_ECONFIG, "no Redis URL given");
		return NULL;
	}
	struct gv_redis *r = calloc(1, sizeof(*r));
	if (!r) {
		gv_err_errno(err, "calloc");
		return NULL;
	}
	if (gv_redis_url_parse(opts->url, &r->url, err) != 0) {
		free(r);
		return NULL;
	}
	r->opts = *opts;
	r->opts.url = NULL; /* parsed copy kept in r->url */
	if (r->opts.connect_timeout_ms <= 0)
		r->opts.connect_timeout_ms = 2000;
	if (r->opts.command_timeout_ms == 0)
		r->opts.command_timeout_ms = 5000;
	if (r->opts.max_attempts <= 0)
		r->opts.max_attempts = 5;
	if (r->opts.backoff_initial_ms <= 0)
		r->opts.backoff_initial_ms = 100;
	if (r->opts.backoff_max_ms <= 0)
		r->opts.backoff_max_ms = 5000;
	r->seed = gv_backoff_seed();
	if (connect_with_backoff(r, err) != 0) {
		gv_redis_free(r);
		return NULL;
	}
	return r;
}

void gv_redis_free(struct gv_redis *r)
{
	if (!r)
		return;
	if (r->ctx)
		redisFree(r->ctx);
	explicit_bzero(&r->url, sizeof(r->url));
	free(r);
}

int gv_redis_ensure(struct gv_redis *r, struct gv_err *err)
{
	if (!r)
		return gv_err_set(err, GV_EINTERNAL, "no Redis handle");
	if (r->ctx && !r->ctx->err && !master_moved(r))
		return 0;
	if (r->ctx) {
		redisFree(r->ctx);
		r->ctx = NULL;
	}
	if (connect_with_backoff(r, err) != 0)
		return -1;
	r->reconnects++;
	return 0;
}

redisContext *gv_redis_context(struct gv_redis *r)
{
	return r ? r->ctx : NULL;
}

unsigned gv_redis_reconnects(const struct gv_redis *r)
{
	return r ? r->reconnects : 0;
}

/* Turns what hiredis returned into our convention; drops a broken context. */
static redisReply *check_reply(struct gv_redis *r, void *raw, struct gv_err *err)
{
	redisReply *reply = raw;
	if (!reply) {
		gv_err_set(err, GV_EREDIS, "Redis command failed: %s",
			   r->ctx && r->ctx->errstr[0] ? r->ctx->errstr : "I/O error");
		if (r->ctx) {
			redisFree(r->ctx);
			r->ctx = NULL;
		}
		return NULL;
	}
	if (reply->type == REDIS_REPLY_ERROR) {
		gv_err_set(err, GV_EREDIS, "Redis error reply: %.*s", (int)(reply->len > 300 ? 300 : reply->len),
			   reply->str);
		/* Writing to a replica: a failover demoted this server. The
		 * next command connects again, to the master of now. */
		if (gv_redis_reply_is_readonly(reply) && r->ctx) {
			redisFree(r->ctx);
			r->ctx = NULL;
		}
		freeReplyObject(reply);
		return NULL;
	}
	return reply;
}

static redisReply *vcommand(struct gv_redis *r, struct gv_err *err, const char *fmt, va_list ap)
{
	if (gv_redis_ensure(r, err) != 0)
		return NULL;
	return check_reply(r, redisvCommand(r->ctx, fmt, ap), err);
}

redisReply *gv_redis_command(struct gv_redis *r, struct gv_err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *reply = vcommand(r, err, fmt, ap);
	va_end(ap);
	return reply;
}

redisReply *gv_redis_commandv(struct gv_redis *r, int argc, const char **argv, const size_t *argvlen,
			      struct gv_err *err)
{
	if (argc <= 0 || !argv) {
		gv_err_set(err, GV_EINTERNAL, "empty Redis command");
		return NULL;
	}
	if (gv_redis_ensure(r, err) != 0)
		return NULL;
	return check_reply(r, redisCommandArgv(r->ctx, argc, argv, argvlen), err);
}

int gv_redis_exec(struct gv_redis *r, struct gv_err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *reply = vcommand(r, err, fmt, ap);
	va_end(ap);
	if (!reply)
		return -1;
	freeReplyObject(reply);
	return 0;
}

void gv_redis_reply_free(redisReply *reply)
{
	if (reply)
		freeReplyObject(reply);
}
