/* The Redis side of Gavel's work flow: key names, the element formats and
 * the exact command sequences that the frontend, the scheduler and the
 * executor share. PostgreSQL is the truth; everything here is work in flight
 * and can be rebuilt from PostgreSQL by the scheduler's reconciler.
 *
 * Keys (tid = tenant uuid, sid = submission id, node = executor node name):
 *   gavel:tq:<tid>        LIST   sids queued for a tenant, FIFO (RPUSH tail,
 *                                LPOP head; re-queued work goes LPUSH head)
 *   gavel:backlog         SET    tids whose tq may be non-empty
 *   gavel:nq:<node>       LIST   job tokens assigned to a node, not started
 *   gavel:inflight:<node> LIST   job tokens a node is running (BLMOVE from nq)
 *   gavel:exec:<node>     HASH   capacity, burst (slots only a tenant below
 *                                its fair share may take), running, gpus,
 *                                gpu_ids (executor/sandbox/gpu.h), languages
 *                                (comma-separated ids), heartbeat_ms (Redis
 *                                server time, ms), pid, started_ms,
 *                                kernel_mb (> 0: a kernel node, the memory
 *                                it offers to notebook kernels)
 *   gavel:executors       SET    node names that registered
 *   gavel:sched:lock      STRING leader lock, value "<instance>:<epoch>", PX
 *   gavel:sched:epoch     STRING fencing epoch, INCR on every new leader
 *   gavel:tenantcfg:<tid> HASH   weight (int >= 1, default 1), max_running
 *                                (int >= 1, default GV_QUEUE_DEFAULT_MAX_RUNNING),
 *                                max_gpus (int >= 0, default 0: no GPU);
 *                                written by tenants/, read by the scheduler
 *   gavel:running         HASH   tid -> jobs assigned or running (derived by
 *                                the leader each tick from nq+inflight; read
 *                                it for metrics, never write it)
 *   gavel:attempts        HASH   sid -> assignments so far
 *   gavel:done            PUBSUB channel, message = sid, after the result
 *                                row committed
 *   gavel:ev:<sid>        PUBSUB channel, progress, message = JSON
 *                                {"event":"queued|compiling|running|done",
 *                                 "test":k,"of":n}  (test/of on "running"
 *                                of a judged job: k is 1-based)
 *
 * Job token (elements of nq and inflight): "<tid>:<sid>:<gpus>". tq elements
 * are bare sids.
 *
 * Enqueue (the frontend, after its INSERT committed), one MULTI/EXEC:
 *   MULTI; RPUSH gavel:tq:<tid> <sid>; SADD gavel:backlog <tid>;
 *   PUBLISH gavel:ev:<sid> {"event":"queued"}; EXEC
 * gv_queue_enqueue_argv() builds the three inner commands for hiredis async.
 * Re-queue (at the front) is the same with LPUSH.
 *
 * Everything else (assignment, node death, completion) is done by Lua scripts
 * in this module, so each step is atomic; the scheduler's scripts check the
 * leader lock value first (fencing: a deposed leader's writes are refused). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/redis.h"

#define GV_QUEUE_KEY_MAX 192
#define GV_QUEUE_NODE_MAX 64   /* bytes of a node name: [A-Za-z0-9_.-] */
#define GV_QUEUE_SID_MAX 64    /* submissions.id: [A-Za-z0-9_-]{16,64} */
#define GV_QUEUE_TID_MAX 64    /* tenant uuid (36), room to spare */
#define GV_QUEUE_TOKEN_MAX (GV_QUEUE_TID_MAX + GV_QUEUE_SID_MAX + 16)
#define GV_QUEUE_MAX_ATTEMPTS 3
#define GV_QUEUE_DEFAULT_WEIGHT 1
#define GV_QUEUE_DEFAULT_MAX_RUNNING 8

/* Prefixes of the per-id keys above (the key builders below add the id). */
#define GV_QUEUE_TQ_PREFIX "gavel:tq:"
#define GV_QUEUE_NQ_PREFIX "gavel:nq:"
#define GV_QUEUE_INFLIGHT_PREFIX "gavel:inflight:"
#define GV_QUEUE_EXEC_PREFIX "gavel:exec:"
#define GV_QUEUE_TENANTCFG_PREFIX "gavel:tenantcfg:"
#define GV_QUEUE_EV_PREFIX "gavel:ev:"
/* Notebook kernels (executor/kernels/README.md): commands to a kernel
 * (LIST), its frames to clients (PUBSUB), its model (HASH). */
#define GV_QUEUE_KIN_PREFIX "gavel:kin:"
#define GV_QUEUE_KOUT_PREFIX "gavel:kout:"
#define GV_QUEUE_KSTATE_PREFIX "gavel:kstate:"

#define GV_QUEUE_BACKLOG "gavel:backlog"
#define GV_QUEUE_EXECUTORS "gavel:executors"
#define GV_QUEUE_SCHED_LOCK "gavel:sched:lock"
#define GV_QUEUE_SCHED_EPOCH "gavel:sched:epoch"
#define GV_QUEUE_RUNNING "gavel:running"
#define GV_QUEUE_ATTEMPTS "gavel:attempts"
#define GV_QUEUE_DONE_CHANNEL "gavel:done"
/* Wake-ups of the scheduler, each a list of at most one element: producers
 * LPUSH then LTRIM it to one, the scheduler BLPOPs. "queued" after an
 * enqueue (worth a pass only while a slot is free), "freed" after a job
 * completes (a slot became free). */
#define GV_QUEUE_WAKE_QUEUED "gavel:sched:wake:queued"
#define GV_QUEUE_WAKE_FREED "gavel:sched:wake:freed"

/* How long an executor may stay silent and still count as alive: the
 * default of scheduler.node_heartbeat_timeout. The frontend's health,
 * metrics and GPU check use this constant; they cannot read the
 * scheduler's option (each binary's config table only takes its own
 * sections' keys), so a deployment that changes the option changes only
 * the scheduler's view. */
#define GV_QUEUE_HEARTBEAT_TIMEOUT_MS 15000
#define GV_QUEUE_HEARTBEAT_TIMEOUT_TEXT "15s"

/* Lua pieces for scripts that read the executor registry, so that every
 * script names the keys and the liveness rule the one same way:
 *   GV_QUEUE_LUA_NOW               sets `now` to Redis server time, in ms
 *   GV_QUEUE_LUA_EXEC_HMGET(fields) `redis.call('HMGET', <exec key of n>,
 *                                  'heartbeat_ms', fields)`: an expression,
 *                                  h[1] is the heartbeat
 *   GV_QUEUE_LUA_ALIVE             `h[1]` younger than ARGV[1] ms: an
 *                                  expression (h from the HMGET above) */
#define GV_QUEUE_LUA_NOW                                                                            \
	"local t = redis.call('TIME') "                                                             \
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
#define GV_QUEUE_LUA_EXEC_HMGET(fields) "redis.call('HMGET', '" GV_QUEUE_EXEC_PREFIX "' .. n, 'heartbeat_ms', " fields ")"
#define GV_QUEUE_LUA_ALIVE "h[1] and now - tonumber(h[1]) < tonumber(ARGV[1])"

/* Key builders: write the key into out (size >= GV_QUEUE_KEY_MAX is always
 * enough for valid ids); -1 (GV_EINVAL) when the id is not a valid one, so
 * tenant text can never make a key outside its family. */
int gv_queue_key_tenant(char *out, size_t size, const char *tid, struct gv_err *err) GV_MUST_CHECK;
int gv_queue_key_node(char *out, size_t size, const char *node, struct gv_err *err) GV_MUST_CHECK;
int gv_queue_key_inflight(char *out, size_t size, const char *node, struct gv_err *err) GV_MUST_CHECK;
int gv_queue_key_exec(char *out, size_t size, const char *node, struct gv_err *err) GV_MUST_CHECK;
int gv_queue_key_tenantcfg(char *out, size_t size, const char *tid, struct gv_err *err) GV_MUST_CHECK;
int gv_queue_key_events(char *out, size_t size, const char *sid, struct gv_err *err) GV_MUST_CHECK;

/* Validators. Pure. */
bool gv_queue_sid_ok(const char *sid);   /* [A-Za-z0-9_-]{16,64} */
bool gv_queue_tid_ok(const char *tid);   /* [A-Za-z0-9_-]{1,64} (a uuid) */
bool gv_queue_node_ok(const char *node); /* [A-Za-z0-9_.-]{1,64}, not "." or ".." */

/* Job tokens: "<tid>:<sid>:<gpus>", and for a notebook kernel placed on a
 * kernel node by memory "<tid>:<sid>:<gpus>:k<kernel_mb>": the memory the
 * kernel holds there, which the scheduler sums per node from the tokens it
 * sees, as it sums GPUs. */
#define GV_QUEUE_KERNEL_MB_MAX 1048576u
struct gv_queue_token {
	char tid[GV_QUEUE_TID_MAX + 1];
	char sid[GV_QUEUE_SID_MAX + 1];
	unsigned gpus;
	unsigned kernel_mb; /* 0: not a kernel placed by memory */
};
int gv_queue_token_format(char *out, size_t size, const struct gv_queue_token *t, struct gv_err *err) GV_MUST_CHECK;
int gv_queue_token_parse(const char *s, size_t len, struct gv_queue_token *out, struct gv_err *err) GV_MUST_CHECK;

/* The argv of the three commands inside the enqueue MULTI/EXEC, for hiredis
 * async (redisAsyncCommandArgv): argv[i][0..argc[i]) with the lengths in
 * argvlen[i]. Strings point into bufs (caller storage) and the arguments.
 * front: LPUSH (re-queue) instead of RPUSH. */
struct gv_queue_argv {
	int argc[3];
	const char *argv[3][3];
	size_t argvlen[3][3];
	char tq_key[GV_QUEUE_KEY_MAX];
	char ev_key[GV_QUEUE_KEY_MAX];
};
int gv_queue_enqueue_argv(struct gv_queue_argv *a, const char *tid, const char *sid, bool front,
			  struct gv_err *err) GV_MUST_CHECK;

/* The two commands that wake the scheduler after enqueues, for callers
 * that pipeline them after gv_queue_enqueue_argv's (once per batch):
 * LPUSH gavel:sched:wake:queued 1, LTRIM it to one element. */
extern const char *const gv_queue_wake_queued_argv[2][4];
extern const int gv_queue_wake_queued_argc[2];

/* Blocking enqueue with the sequence above, wake-up included (scheduler
 * reconciler, tests, CLI). */
int gv_queue_enqueue(struct gv_redis *r, const char *tid, const char *sid, bool front,
		     struct gv_err *err) GV_MUST_CHECK;

/* Publishes a progress event on gavel:ev:<sid>: event is one of queued,
 * compiling, running, done; test/of only when of > 0. Best effort is the
 * caller's choice: it returns -1 on failure. */
int gv_queue_publish_event(struct gv_redis *r, const char *sid, const char *event, size_t test, size_t of,
			   struct gv_err *err) GV_MUST_CHECK;

/* ---- Scheduler side (leader-fenced; lock_value is the value the leader
 * holds in gavel:sched:lock). Each returns -1 with GV_EINVAL "not the leader"
 * (err->code GV_EQUEUE_FENCED) when the lock is no longer ours. ---- */
#define GV_EQUEUE_FENCED (GV_EBASE + 200)

/* Tries to become leader: when the lock is free, INCR the epoch and SET the
 * lock "<instance>:<epoch>" with PX ttl_ms. 1: now leader, value in out;
 * 0: someone else holds it; -1: Redis failed. */
int gv_queue_lock_acquire(struct gv_redis *r, const char *instance, long ttl_ms, char *out, size_t size,
			  struct gv_err *err) GV_MUST_CHECK;
/* Renews our lock. 1: renewed; 0: lost; -1: Redis failed. */
int gv_queue_lock_renew(struct gv_redis *r, const char *value, long ttl_ms, struct gv_err *err) GV_MUST_CHECK;
/* Releases our lock (graceful shutdown); no-op if not ours. */
int gv_queue_lock_release(struct gv_redis *r, const char *value, struct gv_err *err) GV_MUST_CHECK;

/* Atomically: LINDEX gavel:tq:<tid> 0; when the queue is empty, SREM the
 * tenant from the backlog (an enqueue racing with it re-adds it, as both run
 * atomically). 1 with the head sid in out, 0 when empty. */
int gv_queue_peek(struct gv_redis *r, const char *tid, char *out, size_t size, struct gv_err *err) GV_MUST_CHECK;
/* Atomically (fenced): the head of gavel:tq:<tid> must still be sid; LPOP
 * it, HINCRBY attempts, RPUSH the token t onto gavel:nq:<node>; when the
 * tenant queue becomes empty, SREM it from the backlog. *attempts gets the
 * attempt number of this assignment (1 for the first). 1: assigned; 0: the
 * head changed (nothing done). */
int gv_queue_assign(struct gv_redis *r, const char *lock_value, const struct gv_queue_token *t, const char *node,
		    long *attempts, struct gv_err *err) GV_MUST_CHECK;
/* Like gv_queue_assign, but sid may stand anywhere in the tenant queue
 * (LREM instead of the head check): the scheduler passes a GPU job that
 * waits at the head with a job that needs no GPUs. 1: assigned; 0: sid was
 * not in the queue any more. */
int gv_queue_assign_behind(struct gv_redis *r, const char *lock_value, const struct gv_queue_token *t,
			   const char *node, long *attempts, struct gv_err *err) GV_MUST_CHECK;
/* Atomically (fenced): drop the head sid of a tenant queue (a submission
 * that no longer needs running: missing from PostgreSQL or already
 * finished). 1 done, 0 head changed. */
int gv_queue_drop_head(struct gv_redis *r, const char *lock_value, const char *tid, const char *sid,
		       struct gv_err *err) GV_MUST_CHECK;

/* ---- Shared by the scheduler (dead node) and the executor (hand-back). ----
 * Atomically: LREM token from list_key (an nq or inflight key) and, when it
 * was there, LPUSH its sid to the front of its tenant queue and SADD the
 * backlog. 1 moved, 0 it was not in the list (someone else handled it).
 * lock_value NULL: unfenced (the executor handing back its own work). */
int gv_queue_requeue_token(struct gv_redis *r, const char *lock_value, const char *list_key, const char *token,
			   struct gv_err *err) GV_MUST_CHECK;

/* ---- Executor side. ---- */

/* What a node says of itself at each heartbeat (gavel:exec:<node>). */
struct gv_queue_node_report {
	unsigned capacity, burst, running, gpus;
	const char *gpu_ids, *languages;
	long pid;
	unsigned kernel_mb; /* > 0: a kernel node offering this much memory to kernels */
};
/* Registers or refreshes gavel:exec:<node> (heartbeat_ms = Redis TIME) and
 * SADDs the node to gavel:executors. languages and gpu_ids ("0,1", may be
 * NULL) are comma-separated. */
int gv_queue_heartbeat(struct gv_redis *r, const char *node, const struct gv_queue_node_report *n,
		       struct gv_err *err) GV_MUST_CHECK;
/* "gavel:lang:<id>": the clean version of language id that a live executor
 * probed ("18.19.0"), set with a TTL at every heartbeat, so that the
 * frontend lists what executors really run and drops a language no live
 * executor offers. Executors with different versions of one language: the
 * latest heartbeat wins. */
#define GV_QUEUE_LANG_PREFIX "gavel:lang:"
#define GV_QUEUE_LANG_VERSION_MAX 64 /* bytes of a published version, with the NUL */
/* id is a language id ([a-z0-9_+-], at most 32 bytes); version printable
 * ASCII shorter than GV_QUEUE_LANG_VERSION_MAX. */
int gv_queue_publish_language(struct gv_redis *r, const char *id, const char *version, unsigned ttl_ms,
			      struct gv_err *err) GV_MUST_CHECK;

/* Removes the registration (graceful shutdown). */
int gv_queue_deregister(struct gv_redis *r, const char *node, struct gv_err *err) GV_MUST_CHECK;
/* BLMOVE gavel:nq:<node> -> gavel:inflight:<node> (LEFT RIGHT) with a
 * timeout. 1 with the token in out; 0 on timeout. */
int gv_queue_take(struct gv_redis *r, const char *node, double timeout_s, char *out, size_t size,
		  struct gv_err *err) GV_MUST_CHECK;
/* After the result row committed: atomically LREM the token from
 * gavel:inflight:<node>, HDEL attempts, PUBLISH gavel:done <sid> and the
 * "done" event, and wake the scheduler (a slot is free). */
int gv_queue_complete(struct gv_redis *r, const char *node, const struct gv_queue_token *t,
		      struct gv_err *err) GV_MUST_CHECK;

/* Scheduler side: waits up to timeout_s for a wake-up, on both lists or,
 * when no slot is free (a new job could not be placed anyway), on "freed"
 * only. 1: woken; 0: timed out; -1: Redis failed. */
int gv_queue_wait_wake(struct gv_redis *r, bool any_free, double timeout_s, struct gv_err *err) GV_MUST_CHECK;

