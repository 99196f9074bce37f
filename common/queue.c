/* Redis key names, element formats and the atomic queue operations of
 * common/queue.h. Multi-key steps are Lua scripts, so a crash between two
 * commands can never lose or duplicate a job token; the leader's scripts
 * check the lock value first, which is the fencing: a scheduler that lost
 * the lock (paused, partitioned) cannot write after its successor started. */
#include "common/queue.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool charset_ok(const char *s, size_t min, size_t max, bool dots)
{
	size_t n = s ? strlen(s) : 0;
	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || (dots && c == '.')))
			return false;
	}
	return true;
}

bool gv_queue_sid_ok(const char *sid)
{
	return charset_ok(sid, 16, GV_QUEUE_SID_MAX, false);
}

bool gv_queue_tid_ok(const char *tid)
{
	return charset_ok(tid, 1, GV_QUEUE_TID_MAX, false);
}

bool gv_queue_node_ok(const char *node)
{
	return charset_ok(node, 1, GV_QUEUE_NODE_MAX, true) && strcmp(node, ".") != 0 && strcmp(node, "..") != 0;
}

static int key(char *out, size_t size, const char *prefix, const char *id, bool ok, const char *what,
	       struct gv_err *err)
{
	if (!ok)
		return gv_err_set(err, GV_EINVAL, "not a valid %s", what);
	int n = snprintf(out, size, "%s%s", prefix, id);
	if (n < 0 || (size_t)n >= size)
		return gv_err_set(err, GV_ELIMIT, "key buffer too small");
	return 0;
}

int gv_queue_key_tenant(char *out, size_t size, const char *tid, struct gv_err *err)
{
	return key(out, size, GV_QUEUE_TQ_PREFIX, tid, gv_queue_tid_ok(tid), "tenant id", err);
}

int gv_queue_key_node(char *out, size_t size, const char *node, struct gv_err *err)
{
	return key(out, size, GV_QUEUE_NQ_PREFIX, node, gv_queue_node_ok(node), "node name", err);
}

int gv_queue_key_inflight(char *out, size_t size, const char *node, struct gv_err *err)
{
	return key(out, size, GV_QUEUE_INFLIGHT_PREFIX, node, gv_queue_node_ok(node), "node name", err);
}

int gv_queue_key_exec(char *out, size_t size, const char *node, struct gv_err *err)
{
	return key(out, size, GV_QUEUE_EXEC_PREFIX, node, gv_queue_node_ok(node), "node name", err);
}

int gv_queue_key_tenantcfg(char *out, size_t size, const char *tid, struct gv_err *err)
{
	return key(out, size, GV_QUEUE_TENANTCFG_PREFIX, tid, gv_queue_tid_ok(tid), "tenant id", err);
}

int gv_queue_key_events(char *out, size_t size, const char *sid, struct gv_err *err)
{
	return key(out, size, GV_QUEUE_EV_PREFIX, sid, gv_queue_sid_ok(sid), "submission id", err);
}

int gv_queue_token_format(char *out, size_t size, const struct gv_queue_token *t, struct gv_err *err)
{
	if (!gv_queue_tid_ok(t->tid) || !gv_queue_sid_ok(t->sid))
		return gv_err_set(err, GV_EINVAL, "not a valid tenant or submission id");
	if (t->gpus > 1024 || t->kernel_mb > GV_QUEUE_KERNEL_MB_MAX)
		return gv_err_set(err, GV_EINVAL, "job token: GPUs or kernel memory out of range");
	int n = t->kernel_mb ? snprintf(out, size, "%s:%s:%u:k%u", t->tid, t->sid, t->gpus, t->kernel_mb)
			     : snprintf(out, size, "%s:%s:%u", t->tid, t->sid, t->gpus);
	if (n < 0 || (size_t)n >= size)
		return gv_err_set(err, GV_ELIMIT, "token buffer too small");
	return 0;
}

/* A decimal number of at most max, digits only. */
static bool token_number(const char *s, unsigned long max, unsigned *out)
{
	if (*s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

int gv_queue_token_parse(const char *s, size_t len, struct gv_queue_token *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	char buf[GV_QUEUE_TOKEN_MAX + 1];
	if (len > GV_QUEUE_TOKEN_MAX)
		return gv_err_set(err, GV_EPROTO, "job token too long");
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *a = strchr(buf, ':');
	char *b = a ? strchr(a + 1, ':') : NULL;
	if (!a || !b)
		return gv_err_set(err, GV_EPROTO, "malformed job token");
	char *c = strchr(b + 1, ':');
	*a = *b = '\0';
	if (c)
		*c = '\0';
	if (!gv_queue_tid_ok(buf) || !gv_queue_sid_ok(a + 1) || !token_number(b + 1, 1024, &out->gpus) ||
	    (c && (c[1] != 'k' || !token_number(c + 2, GV_QUEUE_KERNEL_MB_MAX, &out->kernel_mb) || !out->kernel_mb))) {
		memset(out, 0, sizeof(*out));
		return gv_err_set(err, GV_EPROTO, "malformed job token");
	}
	strcpy(out->tid, buf);
	strcpy(out->sid, a + 1);
	return 0;
}

int gv_queue_enqueue_argv(struct gv_queue_argv *a, const char *tid, const char *sid, bool front,
			  struct gv_err *err)
{
	memset(a, 0, sizeof(*a));
	if (gv_queue_key_tenant(a->tq_key, sizeof(a->tq_key), tid, err) != 0 ||
	    gv_queue_key_events(a->ev_key, sizeof(a->ev_key), sid, err) != 0)
		return -1;
	static const char queued[] = "{\"event\":\"queued\"}";
	const char *v[3][3] = {
		{ front ? "LPUSH" : "RPUSH", a->tq_key, sid },
		{ "SADD", GV_QUEUE_BACKLOG, tid },
		{ "PUBLISH", a->ev_key, queued },
	};
	for (int i = 0; i < 3; i++) {
		a->argc[i] = 3;
		for (int j = 0; j < 3; j++) {
			a->argv[i][j] = v[i][j];
			a->argvlen[i][j] = strlen(v[i][j]);
		}
	}
	return 0;
}

static int expect_ok(redisReply *rep, const char *what, struct gv_err *err)
{
	if (!rep)
		return -1;
	int rc = 0;
	if (rep->type == REDIS_REPLY_ERROR)
		rc = gv_err_set(err, GV_EREDIS, "%s: %s", what, rep->str);
	gv_redis_reply_free(rep);
	return rc;
}

const char *const gv_queue_wake_queued_argv[2][4] = {
	{ "LPUSH", GV_QUEUE_WAKE_QUEUED, "1", NULL },
	{ "LTRIM", GV_QUEUE_WAKE_QUEUED, "0", "0" },
};
const int gv_queue_wake_queued_argc[2] = { 3, 4 };

int gv_queue_enqueue(struct gv_redis *r, const char *tid, const char *sid, bool front, struct gv_err *err)
{
	struct gv_queue_argv a;
	if (gv_queue_enqueue_argv(&a, tid, sid, front, err) != 0)
		return -1;
	/* One script instead of MULTI/EXEC: the blocking helper owns one
	 * connection and a failed MULTI would leave it mid-transaction. */
	static const char lua[] = "redis.call(ARGV[1], KEYS[1], ARGV[2]);"
				  "redis.call('SADD', KEYS[2], ARGV[3]);"
				  "redis.call('PUBLISH', KEYS[3], ARGV[4]);"
				  "redis.call('LPUSH', KEYS[4], '1'); redis.call('LTRIM', KEYS[4], 0, 0); return 1";
	const char *argv[] = { "EVAL", lua, "4", a.tq_key, GV_QUEUE_BACKLOG, a.ev_key, GV_QUEUE_WAKE_QUEUED,
			       a.argv[0][0], sid, tid, a.argv[2][2] };
	redisReply *rep = gv_redis_commandv(r, 11, argv, NULL, err);
	return expect_ok(rep, "enqueue", err);
}

int gv_queue_publish_event(struct gv_redis *r, const char *sid, const char *event, size_t test, size_t of,
			   struct gv_err *err)
{
	char k[GV_QUEUE_KEY_MAX], msg[128];
	if (gv_queue_key_events(k, sizeof(k), sid, err) != 0)
		return -1;
	if (of > 0)
		snprintf(msg, sizeof(msg), "{\"event\":\"%s\",\"test\":%zu,\"of\":%zu}", event, test, of);
	else
		snprintf(msg, sizeof(msg), "{\"event\":\"%s\"}", event);
	const char *argv[] = { "PUBLISH", k, msg };
	return expect_ok(gv_redis_commandv(r, 3, argv, NULL, err), "publish", err);
}

/* Runs a script; returns the reply (caller frees) or NULL with err. A
 * "FENCED" error reply becomes GV_EQUEUE_FENCED. */
static redisReply *eval(struct gv_redis *r, const char *lua, int nkeys, const char *const *keys, int nargs,
			const char *const *args, struct gv_err *err)
{
	const char *argv[16];
	char nk[8];
	if (2 + nkeys + nargs > 16) {
		gv_err_set(err, GV_EINTERNAL, "too many script arguments");
		return NULL;
	}
	snprintf(nk, sizeof(nk), "%d", nkeys);
	int argc = 0;
	argv[argc++] = "EVAL";
	argv[argc++] = lua;
	argv[argc++] = nk;
	for (int i = 0; i < nkeys; i++)
		argv[argc++] = keys[i];
	for (int i = 0; i < nargs; i++)
		argv[argc++] = args[i];
	redisReply *rep = gv_redis_commandv(r, argc, argv, NULL, err);
	if (!rep) {
		if (strstr(err->msg, "FENCED"))
			err->code = GV_EQUEUE_FENCED;
		return NULL;
	}
	if (rep->type == REDIS_REPLY_ERROR) {
		int code = strstr(rep->str, "FENCED") ? GV_EQUEUE_FENCED : GV_EREDIS;
		gv_err_set(err, code, "%s", code == GV_EQUEUE_FENCED ? "not the leader any more" : rep->str);
		gv_redis_reply_free(rep);
		return NULL;
	}
	return rep;
}

static int int_reply(redisReply *rep, long long *out)
{
	if (!rep)
		return -1;
	*out = rep->type == REDIS_REPLY_INTEGER ? rep->integer : 0;
	gv_redis_reply_free(rep);
	return 0;
}

/* Copies a string reply into out (size bytes, NUL-terminated) and frees
 * the reply: 1 when it was a string, 0 when nil (or another type), -1 on a
 * failed command, an error reply, or a string that does not fit. */
static int str_reply(redisReply *rep, char *out, size_t size, const char *what, struct gv_err *err)
{
	if (!rep)
		return -1;
	int rc = 0;
	if (rep->type == REDIS_REPLY_STRING) {
		if (rep->len >= size) {
			rc = gv_err_set(err, GV_ELIMIT, "%s too long", what);
		} else {
			memcpy(out, rep->str, rep->len);
			out[rep->len] = '\0';
			rc = 1;
		}
	} else if (rep->type == REDIS_REPLY_ERROR) {
		rc = gv_err_set(err, GV_EREDIS, "%s: %s", what, rep->str);
	}
	gv_redis_reply_free(rep);
	return rc;
}

#define FENCE "if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('FENCED') end;"

int gv_queue_lock_acquire(struct gv_redis *r, const char *instance, long ttl_ms, char *out, size_t size,
			  struct gv_err *err)
{
	static const char lua[] = "if redis.call('EXISTS', KEYS[1]) == 1 then return false end;"
				  "local e = redis.call('INCR', KEYS[2]);"
				  "local v = ARGV[1] .. ':' .. e;"
				  "redis.call('SET', KEYS[1], v, 'PX', tonumber(ARGV[2]));"
				  "return v";
	char ttl[32];
	snprintf(ttl, sizeof(ttl), "%ld", ttl_ms);
	const char *keys[] = { GV_QUEUE_SCHED_LOCK, GV_QUEUE_SCHED_EPOCH };
	const char *args[] = { instance, ttl };
	return str_reply(eval(r, lua, 2, keys, 2, args, err), out, size, "lock value", err);
}

int gv_queue_lock_renew(struct gv_redis *r, const char *value, long ttl_ms, struct gv_err *err)
{
	static const char lua[] = "if redis.call('GET', KEYS[1]) == ARGV[1] then "
				  "redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) return 1 end return 0";
	char ttl[32];
	snprintf(ttl, sizeof(ttl), "%ld", ttl_ms);
	const char *keys[] = { GV_QUEUE_SCHED_LOCK };
	const char *args[] = { value, ttl };
	long long v;
	if (int_reply(eval(r, lua, 1, keys, 2, args, err), &v) != 0)
		return -1;
	return v == 1;
}

int gv_queue_lock_release(struct gv_redis *r, const char *value, struct gv_err *err)
{
	static const char lua[] = "if redis.call('GET', KEYS[1]) == ARGV[1] then "
				  "redis.call('DEL', KEYS[1]) return 1 end return 0";
	const char *keys[] = { GV_QUEUE_SCHED_LOCK };
	const char *args[] = { value };
	long long v;
	return int_reply(eval(r, lua, 1, keys, 1, args, err), &v);
}

int gv_queue_peek(struct gv_redis *r, const char *tid, char *out, size_t size, struct gv_err *err)
{
	static const char lua[] = "local id = redis.call('LINDEX', KEYS[1], 0);"
				  "if not id then redis.call('SREM', KEYS[2], ARGV[1]) end;"
				  "return id";
	char tq[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_tenant(tq, sizeof(tq), tid, err) != 0)
		return -1;
	const char *keys[] = { tq, GV_QUEUE_BACKLOG };
	const char *args[] = { tid };
	return str_reply(eval(r, lua, 2, keys, 1, args, err), out, size, "queue element", err);
}

#define ASSIGN_REST                                                                                          \
	"if redis.call('LLEN', KEYS[2]) == 0 then redis.call('SREM', KEYS[3], ARGV[4]) end;"                 \
	"local a = redis.call('HINCRBY', KEYS[4], ARGV[2], 1);"                                              \
	"redis.call('RPUSH', KEYS[5], ARGV[3]);"                                                             \
	"return a"

static int assign(struct gv_redis *r, const char *lua, const char *lock_value, const struct gv_queue_token *t,
		  const char *node, long *attempts, struct gv_err *err)
{
	char tq[GV_QUEUE_KEY_MAX], nq[GV_QUEUE_KEY_MAX], tok[GV_QUEUE_TOKEN_MAX + 1];
	if (gv_queue_key_tenant(tq, sizeof(tq), t->tid, err) != 0 ||
	    gv_queue_key_node(nq, sizeof(nq), node, err) != 0 || gv_queue_token_format(tok, sizeof(tok), t, err) != 0)
		return -1;
	const char *keys[] = { GV_QUEUE_SCHED_LOCK, tq, GV_QUEUE_BACKLOG, GV_QUEUE_ATTEMPTS, nq };
	const char *args[] = { lock_value, t->sid, tok, t->tid };
	long long v;
	if (int_reply(eval(r, lua, 5, keys, 4, args, err), &v) != 0)
		return -1;
	if (attempts)
		*attempts = (long)v;
	return v > 0;
}

int gv_queue_assign(struct gv_redis *r, const char *lock_value, const struct gv_queue_token *t, const char *node,
		    long *attempts, struct gv_err *err)
{
	static const char lua[] = FENCE
		"if redis.call('LINDEX', KEYS[2], 0) ~= ARGV[2] then return 0 end;"
		"redis.call('LPOP', KEYS[2]);" ASSIGN_REST;
	return assign(r, lua, lock_value, t, node, attempts, err);
}

int gv_queue_assign_behind(struct gv_redis *r, const char *lock_value, const struct gv_queue_token *t,
			   const char *node, long *attempts, struct gv_err *err)
{
	static const char lua[] = FENCE "if redis.call('LREM', KEYS[2], 1, ARGV[2]) == 0 then return 0 end;" ASSIGN_REST;
	return assign(r, lua, lock_value, t, node, attempts, err);
}

int gv_queue_drop_head(struct gv_redis *r, const char *lock_value, const char *tid, const char *sid,
		       struct gv_err *err)
{
	static const char lua[] = FENCE
		"if redis.call('LINDEX', KEYS[2], 0) ~= ARGV[2] then return 0 end;"
		"redis.call('LPOP', KEYS[2]);"
		"redis.call('HDEL', KEYS[4], ARGV[2]);"
		"if redis.call('LLEN', KEYS[2]) == 0 then redis.call('SREM', KEYS[3], ARGV[3]) end;"
		"return 1";
	char tq[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_tenant(tq, sizeof(tq), tid, err) != 0)
		return -1;
	const char *keys[] = { GV_QUEUE_SCHED_LOCK, tq, GV_QUEUE_BACKLOG, GV_QUEUE_ATTEMPTS };
	const char *args[] = { lock_value, sid, tid };
	long long v;
	if (int_reply(eval(r, lua, 4, keys, 3, args, err), &v) != 0)
		return -1;
	return v > 0;
}

int gv_queue_requeue_token(struct gv_redis *r, const char *lock_value, const char *list_key, const char *token,
			   struct gv_err *err)
{
	static const char lua[] = FENCE
		"if redis.call('LREM', KEYS[2], 1, ARGV[2]) == 0 then return 0 end;"
		"redis.call('LPUSH', KEYS[3], ARGV[3]);"
		"redis.call('SADD', KEYS[4], ARGV[4]);"
		"return 1";
	struct gv_queue_token t;
	char tq[GV_QUEUE_KEY_MAX];
	if (gv_queue_token_parse(token, strlen(token), &t, err) != 0 ||
	    gv_queue_key_tenant(tq, sizeof(tq), t.tid, err) != 0)
		return -1;
	const char *keys[] = { GV_QUEUE_SCHED_LOCK, list_key, tq, GV_QUEUE_BACKLOG };
	const char *args[] = { lock_value ? lock_value : "", token, t.sid, t.tid };
	long long v;
	if (int_reply(eval(r, lua, 4, keys, 4, args, err), &v) != 0)
		return -1;
	return v > 0;
}

int gv_queue_heartbeat(struct gv_redis *r, const char *node, const struct gv_queue_node_report *n,
		       struct gv_err *err)
{
	static const char lua[] = "local t = redis.call('TIME');"
				  "local ms = t[1] * 1000 + math.floor(t[2] / 1000);"
				  "redis.call('HSET', KEYS[1], 'capacity', ARGV[1], 'running', ARGV[2], 'gpus', ARGV[3],"
				  " 'languages', ARGV[4], 'pid', ARGV[5], 'heartbeat_ms', ms, 'burst', ARGV[7],"
				  " 'gpu_ids', ARGV[8], 'kernel_mb', ARGV[9]);"
				  "redis.call('HSETNX', KEYS[1], 'started_ms', ms);"
				  "redis.call('SADD', KEYS[2], ARGV[6]);"
				  "return ms";
	char k[GV_QUEUE_KEY_MAX], cap[16], bu[16], run[16], g[16], p[24], km[16];
	if (gv_queue_key_exec(k, sizeof(k), node, err) != 0)
		return -1;
	snprintf(cap, sizeof(cap), "%u", n->capacity);
	snprintf(bu, sizeof(bu), "%u", n->burst);
	snprintf(run, sizeof(run), "%u", n->running);
	snprintf(g, sizeof(g), "%u", n->gpus);
	snprintf(p, sizeof(p), "%ld", n->pid);
	snprintf(km, sizeof(km), "%u", n->kernel_mb);
	const char *keys[] = { k, GV_QUEUE_EXECUTORS };
	const char *args[] = { cap, run, g, n->languages ? n->languages : "", p, node, bu,
			       n->gpu_ids ? n->gpu_ids : "", km };
	long long v;
	return int_reply(eval(r, lua, 2, keys, 9, args, err), &v);
}

int gv_queue_publish_language(struct gv_redis *r, const char *id, const char *version, unsigned ttl_ms,
			      struct gv_err *err)
{
	size_t idl = strlen(id), vl = strlen(version);
	if (idl == 0 || idl > 32 || strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789_+-") != idl)
		return gv_err_set(err, GV_EINVAL, "not a valid language id");
	if (vl == 0 || vl >= GV_QUEUE_LANG_VERSION_MAX)
		return gv_err_set(err, GV_EINVAL, "language %s: version empty or too long", id);
	for (size_t i = 0; i < vl; i++)
		if ((unsigned char)version[i] < 0x20 || (unsigned char)version[i] >= 0x7f)
			return gv_err_set(err, GV_EINVAL, "language %s: version not printable ASCII", id);
	char k[GV_QUEUE_KEY_MAX], ttl[16];
	snprintf(k, sizeof(k), "%s%s", GV_QUEUE_LANG_PREFIX, id);
	snprintf(ttl, sizeof(ttl), "%u", ttl_ms ? ttl_ms : 1);
	const char *argv[] = { "SET", k, version, "PX", ttl };
	redisReply *rep = gv_redis_commandv(r, 5, argv, NULL, err);
	if (!rep)
		return -1;
	gv_redis_reply_free(rep);
	return 0;
}

int gv_queue_deregister(struct gv_redis *r, const char *node, struct gv_err *err)
{
	char k[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_exec(k, sizeof(k), node, err) != 0)
		return -1;
	static const char lua[] = "redis.call('DEL', KEYS[1]); redis.call('SREM', KEYS[2], ARGV[1]); return 1";
	const char *keys[] = { k, GV_QUEUE_EXECUTORS };
	const char *args[] = { node };
	long long v;
	return int_reply(eval(r, lua, 2, keys, 1, args, err), &v);
}

int gv_queue_take(struct gv_redis *r, const char *node, double timeout_s, char *out, size_t size,
		  struct gv_err *err)
{
	char nq[GV_QUEUE_KEY_MAX], inf[GV_QUEUE_KEY_MAX], to[32];
	if (gv_queue_key_node(nq, sizeof(nq), node, err) != 0 ||
	    gv_queue_key_inflight(inf, sizeof(inf), node, err) != 0)
		return -1;
	snprintf(to, sizeof(to), "%.3f", timeout_s);
	const char *argv[] = { "BLMOVE", nq, inf, "LEFT", "RIGHT", to };
	return str_reply(gv_redis_commandv(r, 6, argv, NULL, err), out, size, "BLMOVE job token", err);
}

int gv_queue_complete(struct gv_redis *r, const char *node, const struct gv_queue_token *t, struct gv_err *err)
{
	static const char lua[] = "local n = redis.call('LREM', KEYS[1], 1, ARGV[1]);"
				  "redis.call('HDEL', KEYS[2], ARGV[2]);"
				  "redis.call('PUBLISH', KEYS[3], '{\"event\":\"done\"}');"
				  "redis.call('PUBLISH', KEYS[4], ARGV[2]);"
				  "redis.call('LPUSH', KEYS[5], '1'); redis.call('LTRIM', KEYS[5], 0, 0);"
				  "return n";
	char inf[GV_QUEUE_KEY_MAX], ev[GV_QUEUE_KEY_MAX], tok[GV_QUEUE_TOKEN_MAX + 1];
	if (gv_queue_key_inflight(inf, sizeof(inf), node, err) != 0 ||
	    gv_queue_key_events(ev, sizeof(ev), t->sid, err) != 0 ||
	    gv_queue_token_format(tok, sizeof(tok), t, err) != 0)
		return -1;
	const char *keys[] = { inf, GV_QUEUE_ATTEMPTS, ev, GV_QUEUE_DONE_CHANNEL, GV_QUEUE_WAKE_FREED };
	const char *args[] = { tok, t->sid };
	long long v;
	return int_reply(eval(r, lua, 5, keys, 2, args, err), &v);
}

int gv_queue_wait_wake(struct gv_redis *r, bool any_free, double timeout_s, struct gv_err *err)
{
	char to[32];
	snprintf(to, sizeof(to), "%.3f", timeout_s > 0.001 ? timeout_s : 0.001);
	const char *both[] = { "BLPOP", GV_QUEUE_WAKE_FREED, GV_QUEUE_WAKE_QUEUED, to };
	const char *freed[] = { "BLPOP", GV_QUEUE_WAKE_FREED, to };
	redisReply *rep = any_free ? gv_redis_commandv(r, 4, both, NULL, err) : gv_redis_commandv(r, 3, freed, NULL, err);
	if (!rep)
		return -1;
	int rc = rep->type == REDIS_REPLY_ARRAY ? 1 : rep->type == REDIS_REPLY_NIL ? 0 : -1;
	if (rc < 0)
		gv_err_set(err, GV_EPROTO, "BLPOP wake-up: unexpected reply");
	gv_redis_reply_free(rep);
	return rc;
}
