/* The scheduler loop (scheduler/sched.h). Everything the leader changes in
 * Redis goes through the fenced scripts of common/queue.c, so a leader that
 * lost its lock (a long pause, a partition) cannot move a job after its
 * successor took over. The leader keeps no state between ticks that Redis
 * does not hold: running counts are recomputed from the node lists on every
 * tick, so a crash at any point leaves nothing to repair. */
#include "scheduler/sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/backoff.h"
#include "common/jobspec.h"
#include "common/json.h"
#include "common/log.h"
#include "common/pg.h"
#include "common/queue.h"
#include "common/redis.h"
#include "common/webhook_outbox.h"
#include "scheduler/fairshare.h"
#include "tenants/db.h"
#include "tenants/quota.h"
#include "tenants/retention.h"

#define SCHED_MAX_NODES 1024
#define SCHED_MAX_TENANTS 4096
#define SCHED_LANGS_MAX 1024
#define SCHED_RECONCILE_ROWS 10000

const struct gv_config_option sched_config_table[] = {
	{ .name = "log.level", .type = GV_CONFIG_ENUM, GV_CONFIG_FIELD(struct sched_config, log_level),
	  .def = "info", .choices = gv_log_level_names, .doc = "lowest level written: debug, info, warn or error" },
	{ .name = "database.url", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct sched_config, database_owner_url),
	  .flags = GV_CONFIG_SECRET, .doc = "owner role URL (used only when service_url is empty)" },
	{ .name = "database.service_url", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct sched_config, database_url),
	  .flags = GV_CONFIG_SECRET, .doc = "URL of the gavel_scheduler role" },
	{ .name = "database.connect_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, db_connect_timeout_ms), .def = "5s", .doc = "per connection" },
	{ .name = "database.statement_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, db_statement_timeout_ms), .def = "30s", .doc = "per statement" },
	{ .name = "redis.url", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct sched_config, redis_url),
	  .def = "redis://127.0.0.1:6379/0", .flags = GV_CONFIG_SECRET, .doc = "Redis URL" },
	{ .name = "redis.connect_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, redis_connect_timeout_ms), .def = "2s", .doc = "per connection" },
	{ .name = "scheduler.redis_command_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, redis_command_timeout_ms), .def = "5s", .doc = "per command" },
	{ .name = "scheduler.node_heartbeat_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, node_heartbeat_timeout_ms), .def = "15s", .min = 1, .max = 86400000,
	  .flags = GV_CONFIG_RELOADABLE, .doc = "an executor silent this long is dead" },
	{ .name = "scheduler.leader_lock_ttl", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, leader_lock_ttl_ms), .def = "10s", .min = 300, .max = 86400000,
	  .doc = "leader lock lifetime; renewed every third" },
	{ .name = "scheduler.tick_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, tick_interval_ms), .def = "100ms", .min = 1, .max = 86400000,
	  .flags = GV_CONFIG_RELOADABLE, .doc = "placement period" },
	{ .name = "scheduler.wake_min_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, wake_min_interval_ms), .def = "2ms", .min = 0, .max = 60000,
	  .doc = "a queued job or a freed slot starts a pass at once, but passes are at least this far apart" },
	{ .name = "scheduler.reconcile_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, reconcile_interval_ms), .def = "30s", .min = 1, .max = 86400000,
	  .doc = "PostgreSQL vs Redis check period" },
	{ .name = "scheduler.reconcile_min_age", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, reconcile_min_age_ms), .def = "10s",
	  .doc = "only submissions older than this are re-enqueued" },
	{ .name = "scheduler.retention_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, retention_interval_ms), .def = "1h", .min = 0, .max = 604800000,
	  .doc = "period of the retention job (old finished submissions deleted); 0: never" },
	{ .name = "scheduler.instance", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct sched_config, instance),
	  .doc = "name in the leader lock; empty: host name and pid" },
};
const size_t sched_config_table_len = sizeof(sched_config_table) / sizeof(sched_config_table[0]);

struct node {
	char name[GV_QUEUE_NODE_MAX + 1];
	unsigned capacity, burst, used, gpus, gpus_used;
	char languages[SCHED_LANGS_MAX];
};

struct tenant {
	char tid[GV_QUEUE_TID_MAX + 1];
	unsigned running, queued, weight, max_running;
	long max_gpus; /* -1: no cap */
	unsigned gpus_used;
	bool blocked, backlogged;
	/* The queue's head and its attempts as the pass's snapshot read them
	 * ("": not read, or used already: ask Redis). */
	char head[GV_QUEUE_SID_MAX + 1];
	long head_attempts;
};

struct sched {
	const struct sched_config *cfg;
	struct gv_redis *r;
	struct gv_pg *pg;
	char instance[128];
	char lock[256];
	bool leader;
	uint64_t last_renew_ms, last_renew_ok_ms, next_reconcile_ms;
	/* Retention: a pass walks the tenants in id order over as many ticks
	 * as it needs (cursor: the last tenant done, "" before the first). */
	uint64_t next_retention_ms;
	bool retention_active;
	char retention_cursor[40];
	int64_t retention_deleted;
	struct node *nodes;
	size_t n_nodes;
	struct tenant *tenants;
	size_t n_tenants;
	struct gv_log_ctx log;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct sched *sched_new(const struct sched_config *cfg, struct gv_err *err)
{
	struct sched *s = calloc(1, sizeof(*s));
	if (!s) {
		gv_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	s->cfg = cfg;
	s->nodes = calloc(SCHED_MAX_NODES, sizeof(*s->nodes));
	s->tenants = calloc(SCHED_MAX_TENANTS, sizeof(*s->tenants));
	if (!s->nodes || !s->tenants) {
		sched_free(s);
		gv_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	if (cfg->instance && *cfg->instance) {
		snprintf(s->instance, sizeof(s->instance), "%s", cfg->instance);
	} else {
		char host[64] = "host";
		gethostname(host, sizeof(host) - 1);
		snprintf(s->instance, sizeof(s->instance), "%s-%ld", host, (long)getpid());
	}
	s->log.node = s->instance;
	const char *url = cfg->database_url && *cfg->database_url ? cfg->database_url : cfg->database_owner_url;
	if (!url || !*url) {
		sched_free(s);
		gv_err_set(err, GV_ECONFIG, "database.service_url (or database.url) is required");
		return NULL;
	}
	struct gv_redis_opts ro = {
		.url = cfg->redis_url,
		.connect_timeout_ms = (int)cfg->redis_connect_timeout_ms,
		.command_timeout_ms = (int)cfg->redis_command_timeout_ms,
		.max_attempts = 3,
	};
	struct gv_pg_opts po = {
		.url = url,
		.connect_timeout_s = (int)((cfg->db_connect_timeout_ms + 999) / 1000),
		.statement_timeout_ms = (int)cfg->db_statement_timeout_ms,
		.max_attempts = 3,
	};
	if (!(s->r = gv_redis_new(&ro, err))) {
		gv_err_prefix(err, "redis");
		sched_free(s);
		return NULL;
	}
	if (!(s->pg = gv_pg_new(&po, err))) {
		gv_err_prefix(err, "postgresql");
		sched_free(s);
		return NULL;
	}
	return s;
}

void sched_free(struct sched *s)
{
	if (!s)
		return;
	if (s->leader && s->r) {
		struct gv_err err;
		if (gv_queue_lock_release(s->r, s->lock, &err) != 0)
			gv_warn(&s->log, "releasing the leader lock: %s", err.msg);
	}
	gv_redis_free(s->r);
	gv_pg_free(s->pg);
	free(s->nodes);
	free(s->tenants);
	free(s);
}

bool sched_is_leader(const struct sched *s)
{
	return s->leader;
}

/* ---- small Redis helpers ---- */

static redisReply *cmd(struct sched *s, struct gv_err *err, int argc, const char **argv)
{
	return gv_redis_commandv(s->r, argc, argv, NULL, err);
}

static struct tenant *tenant_get(struct sched *s, const char *tid)
{
	for (size_t i = 0; i < s->n_tenants; i++)
		if (strcmp(s->tenants[i].tid, tid) == 0)
			return &s->tenants[i];
	if (s->n_tenants >= SCHED_MAX_TENANTS || !gv_queue_tid_ok(tid))
		return NULL;
	struct tenant *t = &s->tenants[s->n_tenants++];
	memset(t, 0, sizeof(*t));
	strcpy(t->tid, tid);
	t->weight = GV_QUEUE_DEFAULT_WEIGHT;
	t->max_running = GV_QUEUE_DEFAULT_MAX_RUNNING;
	t->max_gpus = -1;
	return t;
}

static bool lang_offered(const struct node *n, const char *lang)
{
	size_t len = strlen(lang);
	for (const char *p = n->languages; *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == len && strncmp(p, lang, len) == 0)
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

/* Moves every token of list key back to the front of its tenant queue. */
static int requeue_list(struct sched *s, const char *key, unsigned *moved, struct gv_err *err)
{
	const char *argv[] = { "LRANGE", key, "0", "-1" };
	redisReply *rep = cmd(s, err, 4, argv);
	if (!rep)
		return -1;
	int rc = 0;
	/* Reverse order: each goes to the front, so the list's first token
	 * ends up first. */
	for (size_t i = rep->elements; i-- > 0;) {
		redisReply *e = rep->element[i];
		if (e->type != REDIS_REPLY_STRING)
			continue;
		int m = gv_queue_requeue_token(s->r, s->lock, key, e->str, err);
		if (m < 0) {
			if (err->code == GV_EQUEUE_FENCED || err->code == GV_EREDIS) {
				rc = -1;
				break;
			}
			/* A malformed token: drop it rather than loop on it. */
			gv_warn(&s->log, "dropping bad token in %s: %s", key, err->msg);
			const char *lrem[] = { "LREM", key, "1", e->str };
			gv_redis_reply_free(cmd(s, err, 4, lrem));
			continue;
		}
		*moved += (unsigned)m;
	}
	gv_redis_reply_free(rep);
	return rc;
}

static int node_dead(struct sched *s, const char *name, struct gv_err *err)
{
	char nq[GV_QUEUE_KEY_MAX], inf[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_node(nq, sizeof(nq), name, err) != 0 ||
	    gv_queue_key_inflight(inf, sizeof(inf), name, err) != 0) {
		const char *srem[] = { "SREM", GV_QUEUE_EXECUTORS, name };
		gv_redis_reply_free(cmd(s, err, 3, srem));
		return 0;
	}
	unsigned moved = 0;
	if (requeue_list(s, inf, &moved, err) != 0 || requeue_list(s, nq, &moved, err) != 0)
		return -1;
	if (gv_queue_deregister(s->r, name, err) != 0)
		return -1;
	gv_warn(&s->log, "executor %s stopped heartbeating: %u jobs back to the front of their queues", name, moved);
	return 0;
}

/* Counts the tokens of one node list into the node and tenant figures. */
static void count_tokens(struct sched *s, struct node *n, const redisReply *list)
{
	for (size_t i = 0; i < list->elements; i++) {
		const redisReply *e = list->element[i];
		struct gv_queue_token t;
		struct gv_err terr;
		n->used++;
		if (e->type != REDIS_REPLY_STRING || gv_queue_token_parse(e->str, e->len, &t, &terr) != 0)
			continue;
		n->gpus_used += t.gpus;
		struct tenant *tn = tenant_get(s, t.tid);
		if (tn) {
			tn->running++;
			tn->gpus_used += t.gpus;
		}
	}
}

/* A bulk string element of a script reply, or NULL (nil or any other type). */
static const char *reply_str(const redisReply *r)
{
	return r->type == REDIS_REPLY_STRING ? r->str : NULL;
}

static unsigned to_uint(const char *s, unsigned dflt, unsigned max)
{
	if (!s || !*s)
		return dflt;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || v > max || s[0] == '-')
		return dflt;
	return (unsigned)v;
}

/* A backlogged tenant's gavel:tenantcfg hash is gone (a Redis flush or
 * loss; the CLI publishes it only on create/update/sync): publish it again
 * from PostgreSQL, the truth, so that the tenant's weight and caps keep
 * applying instead of the defaults. 1: published (t updated), 0: no such
 * tenant, -1: failed (the caller keeps the defaults for this tick). */
static int restore_tenant_cfg(struct sched *s, struct tenant *t, struct gv_err *err)
{
	if (gv_pg_ensure(s->pg, err) != 0)
		return -1;
	const char *p[] = { t->tid };
	PGresult *res = tenant_tx_query(gv_pg_conn(s->pg), t->tid,
					"SELECT t.disabled, " TENANT_QUOTA_COLUMNS
					" FROM tenants t JOIN tenant_quotas q ON q.tenant_id = t.id WHERE t.id = $1::uuid",
					1, p, err);
	if (!res)
		return -1;
	struct tenant_quota q;
	bool found = PQntuples(res) == 1, disabled = false;
	int rc = 0;
	if (found) {
		disabled = PQgetvalue(res, 0, 0)[0] == 't';
		rc = tenant_quota_from_pg(res, 0, 1, &q, err);
	}
	PQclear(res);
	if (rc != 0)
		return -1;
	if (!found)
		return 0;
	if (tenant_sched_cfg_publish(s->r, t->tid, &q, disabled, err) != 0)
		return -1;
	t->weight = q.weight >= 1 ? (unsigned)q.weight : 1;
	t->max_running = q.max_running >= 1 ? (unsigned)q.max_running : GV_QUEUE_DEFAULT_MAX_RUNNING;
	t->max_gpus = q.max_gpus >= 0 ? q.max_gpus : -1;
	struct gv_log_ctx ctx = { .tenant = t->tid, .node = s->instance };
	gv_warn(&ctx, "scheduling config was missing from Redis: published again from PostgreSQL "
		      "(weight %d, max_running %d)",
		q.weight, q.max_running);
	return 1;
}

/* Everything a pass reads, in one script, so that a pass costs one round
 * trip to Redis before its first placement, not a dozen (on a host whose
 * CPUs are busy with sandboxes each round trip waits for a core; this is
 * what a job of an idle tenant waits for while another has a backlog).
 * Reply: {now_ms (Redis server time),
 *         {{node, heartbeat_ms, capacity, burst, gpus, languages,
 *           {nq tokens}, {inflight tokens}}, ...},
 *         {{tid, queued, weight, max_running, max_gpus, head sid,
 *           head's attempts}, ...}}
 * with nil for a missing field. Keys as in common/queue.h. */
static const char SNAPSHOT_LUA[] =
	"local t = redis.call('TIME') "
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
	"local nodes, tenants = {}, {} "
	"for _, n in ipairs(redis.call('SMEMBERS', '" GV_QUEUE_EXECUTORS "')) do "
	"  local h = redis.call('HMGET', 'gavel:exec:' .. n, 'heartbeat_ms', 'capacity', 'burst', 'gpus', "
	"    'languages') "
	"  nodes[#nodes + 1] = {n, h[1], h[2], h[3], h[4], h[5], redis.call('LRANGE', 'gavel:nq:' .. n, 0, -1), "
	"    redis.call('LRANGE', 'gavel:inflight:' .. n, 0, -1)} "
	"end "
	"for _, tid in ipairs(redis.call('SMEMBERS', '" GV_QUEUE_BACKLOG "')) do "
	"  local len = redis.call('LLEN', 'gavel:tq:' .. tid) "
	"  local c = redis.call('HMGET', 'gavel:tenantcfg:' .. tid, 'weight', 'max_running', 'max_gpus') "
	"  local head = redis.call('LINDEX', 'gavel:tq:' .. tid, 0) "
	"  local attempts = false "
	"  if head then attempts = redis.call('HGET', '" GV_QUEUE_ATTEMPTS "', head) end "
	"  tenants[#tenants + 1] = {tid, len, c[1], c[2], c[3], head, attempts} "
	"end "
	"return {now, nodes, tenants}";

static bool snapshot_shape_ok(const redisReply *rep)
{
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 3 || rep->element[0]->type != REDIS_REPLY_INTEGER ||
	    rep->element[1]->type != REDIS_REPLY_ARRAY || rep->element[2]->type != REDIS_REPLY_ARRAY)
		return false;
	for (size_t i = 0; i < rep->element[1]->elements; i++) {
		const redisReply *n = rep->element[1]->element[i];
		if (n->type != REDIS_REPLY_ARRAY || n->elements != 8 || n->element[0]->type != REDIS_REPLY_STRING ||
		    n->element[6]->type != REDIS_REPLY_ARRAY || n->element[7]->type != REDIS_REPLY_ARRAY)
			return false;
	}
	for (size_t i = 0; i < rep->element[2]->elements; i++) {
		const redisReply *t = rep->element[2]->element[i];
		if (t->type != REDIS_REPLY_ARRAY || t->elements != 7 || t->element[0]->type != REDIS_REPLY_STRING ||
		    t->element[1]->type != REDIS_REPLY_INTEGER)
			return false;
	}
	return true;
}

/* One executor of the snapshot: a live one into s->nodes; a silent one's
 * work back to the queues (*died set). */
static int scan_node(struct sched *s, int64_t now, const redisReply *e, bool *died, struct gv_err *err)
{
	const char *name = e->element[0]->str;
	const char *hb = reply_str(e->element[1]);
	if (!gv_queue_node_ok(name) || !hb || now - strtoll(hb, NULL, 10) > (int64_t)s->cfg->node_heartbeat_timeout_ms) {
		*died = true;
		return node_dead(s, name, err);
	}
	if (s->n_nodes >= SCHED_MAX_NODES)
		return 0;
	struct node *n = &s->nodes[s->n_nodes++];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->capacity = to_uint(reply_str(e->element[2]), 0, 100000);
	n->burst = to_uint(reply_str(e->element[3]), 0, 1000);
	n->gpus = to_uint(reply_str(e->element[4]), 0, 1024);
	const char *langs = reply_str(e->element[5]);
	snprintf(n->languages, sizeof(n->languages), "%s", langs ? langs : "");
	count_tokens(s, n, e->element[6]);
	count_tokens(s, n, e->element[7]);
	return 0;
}

/* One backlogged tenant of the snapshot: its queue length, scheduling
 * config (published again from PostgreSQL when Redis lost it) and head. */
static void scan_tenant(struct sched *s, const redisReply *e)
{
	struct tenant *t = tenant_get(s, e->element[0]->str);
	if (!t)
		return;
	t->backlogged = true;
	t->queued = e->element[1]->integer > 0 ? (unsigned)e->element[1]->integer : 0;
	const char *w = reply_str(e->element[2]), *m = reply_str(e->element[3]), *g = reply_str(e->element[4]);
	t->weight = to_uint(w, GV_QUEUE_DEFAULT_WEIGHT, 1000000);
	if (t->weight == 0)
		t->weight = 1;
	t->max_running = to_uint(m, GV_QUEUE_DEFAULT_MAX_RUNNING, 1000000);
	/* Fail closed: without a published GPU quota a tenant holds none
	 * (tenant_quota_defaults' max_gpus is 0 as well). */
	t->max_gpus = g ? (long)to_uint(g, 0, 1024) : 0;
	if (!w && !m && !g) {
		struct gv_err rerr;
		if (restore_tenant_cfg(s, t, &rerr) < 0)
			gv_warn(&s->log, "tenant %s: scheduling config missing from Redis and not restored (%s); "
				"defaults apply", t->tid, rerr.msg);
	}
	/* A malformed head is left to gv_queue_peek, which reports and drops it. */
	const char *head = reply_str(e->element[5]);
	if (head && gv_queue_sid_ok(head)) {
		snprintf(t->head, sizeof(t->head), "%s", head);
		const char *a = reply_str(e->element[6]);
		t->head_attempts = a ? strtol(a, NULL, 10) : 0;
	}
}

/* Fills s->nodes and s->tenants for a pass from one snapshot. A node found
 * dead has its jobs put back at the front of their queues, which changes
 * the heads and lengths just read: then the snapshot is taken again. */
static int scan(struct sched *s, struct gv_err *err)
{
	for (int round = 0;; round++) {
		const char *argv[] = { "EVAL", SNAPSHOT_LUA, "0" };
		redisReply *rep = cmd(s, err, 3, argv);
		if (!rep)
			return -1;
		if (!snapshot_shape_ok(rep)) {
			gv_redis_reply_free(rep);
			return gv_err_set(err, GV_EPROTO, "scheduler snapshot: unexpected reply shape");
		}
		s->n_nodes = 0;
		s->n_tenants = 0;
		bool died = false;
		int rc = 0;
		const redisReply *nodes = rep->element[1], *tenants = rep->element[2];
		for (size_t i = 0; i < nodes->elements && rc == 0; i++)
			rc = scan_node(s, rep->element[0]->integer, nodes->element[i], &died, err);
		if (rc == 0 && (!died || round > 0))
			for (size_t i = 0; i < tenants->elements; i++)
				scan_tenant(s, tenants->element[i]);
		gv_redis_reply_free(rep);
		if (rc != 0 || !died || round > 0)
			return rc;
	}
}

/* ---- PostgreSQL ---- */

struct job_meta {
	bool found;
	char status[16];
	char language[GV_JOBSPEC_LANGUAGE_MAX + 1];
	unsigned gpus;
	bool judged;
};

static int load_meta(struct sched *s, const char *tid, const char *sid, struct job_meta *m, struct gv_err *err)
{
	memset(m, 0, sizeof(*m));
	if (gv_pg_ensure(s->pg, err) != 0)
		return -1;
	const char *p[] = { sid };
	PGresult *res = tenant_tx_query(gv_pg_conn(s->pg), tid,
					"SELECT status, language, COALESCE((request->>'gpus')::int, 0), "
					"COALESCE(jsonb_typeof(request->'tests') = 'array', false) "
					"FROM submissions WHERE id = $1",
					1, p, err);
	if (!res)
		return -1;
	if (PQntuples(res) == 1) {
		m->found = true;
		snprintf(m->status, sizeof(m->status), "%s", PQgetvalue(res, 0, 0));
		snprintf(m->language, sizeof(m->language), "%s", PQgetvalue(res, 0, 1));
		m->gpus = to_uint(PQgetvalue(res, 0, 2), 0, 1024);
		m->judged = PQgetvalue(res, 0, 3)[0] == 't';
	}
	PQclear(res);
	return 0;
}

/* Finishes a submission as IE (attempts exhausted, nothing can run it).
 * Like an executor's result, the finish commits with the submission's
 * webhook outbox row, when its request named a callback_url, and the first
 * delivery is scheduled after COMMIT (common/webhook_outbox.h): a client
 * waiting on its callback learns of the failure. Only the transaction that
 * moved the row to done adds the outbox row, so a job an executor finished
 * meanwhile is not called back twice. */
static int finish_ie(struct sched *s, const char *tid, const char *sid, bool judged, const char *why,
		     struct gv_err *err)
{
	json_t *r = gv_result_internal_error(judged ? "judge" : "run", why);
	char *text = r ? gv_json_dump(r, JSON_COMPACT, 1 << 20, NULL, err) : NULL;
	json_decref(r);
	if (!text)
		return -1;
	if (gv_pg_ensure(s->pg, err) != 0) {
		free(text);
		return -1;
	}
	PGconn *c = gv_pg_conn(s->pg);
	bool webhook = false;
	int rc = tenant_tx_begin(c, tid, err);
	if (rc == 0) {
		const char *p[] = { sid, text };
		PGresult *res = gv_pg_query(c,
					    "UPDATE submissions SET status = 'done', verdict = 'IE', result = $2::jsonb, "
					    "finished_at = now() WHERE id = $1 AND status <> 'done' RETURNING 1",
					    2, p, err);
		bool finished = res && PQntuples(res) == 1;
		rc = res ? 0 : -1;
		PQclear(res);
		if (rc == 0 && finished)
			rc = gv_webhook_outbox_add(c, tid, sid, &webhook, err);
		if (rc == 0)
			rc = tenant_tx_commit(c, err);
		else
			tenant_tx_rollback(c);
	}
	free(text);
	if (rc != 0)
		return -1;
	struct gv_log_ctx ctx = { .tenant = tid, .job = sid, .node = s->instance };
	struct gv_err werr;
	if (webhook && gv_webhook_enqueue(s->r, tid, sid, &werr) != 0)
		gv_warn(&ctx, "scheduling the webhook: %s; the outbox brings it back", werr.msg);
	char ev[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_events(ev, sizeof(ev), sid, err) == 0) {
		const char *a[] = { "PUBLISH", ev, "{\"event\":\"done\"}" };
		gv_redis_reply_free(cmd(s, err, 3, a));
	}
	const char *b[] = { "PUBLISH", GV_QUEUE_DONE_CHANNEL, sid };
	gv_redis_reply_free(cmd(s, err, 3, b));
	gv_warn(&ctx, "finished as IE: %s", why);
	return 0;
}

static long get_attempts(struct sched *s, const char *sid, struct gv_err *err)
{
	const char *a[] = { "HGET", GV_QUEUE_ATTEMPTS, sid };
	redisReply *rep = cmd(s, err, 3, a);
	if (!rep)
		return -1;
	long v = rep->type == REDIS_REPLY_STRING ? strtol(rep->str, NULL, 10) : 0;
	gv_redis_reply_free(rep);
	return v;
}

/* ---- placement ---- */

/* Free slots of a node: regular ones, and with burst_ok its burst ones
 * too (scheduler/fairshare.h says who may take those). */
static unsigned node_free(const struct node *n, bool burst_ok)
{
	unsigned cap = n->capacity + (burst_ok ? n->burst : 0);
	return n->used < cap ? cap - n->used : 0;
}

/* The node with the most free regular slots that can take the job, else
 * (burst_ok) the one with the most free burst slots. */
static struct node *choose_node(struct sched *s, const struct job_meta *m, bool burst_ok, bool *anyone)
{
	struct node *best = NULL;
	*anyone = false;
	for (size_t i = 0; i < s->n_nodes; i++) {
		struct node *n = &s->nodes[i];
		if (!lang_offered(n, m->language) || n->gpus < m->gpus)
			continue;
		*anyone = true;
		if (node_free(n, burst_ok) == 0 || n->gpus - n->gpus_used < m->gpus)
			continue;
		if (!best || node_free(n, false) > node_free(best, false) ||
		    (node_free(n, false) == node_free(best, false) && node_free(n, true) > node_free(best, true)))
			best = n;
	}
	return best;
}

/* A tenant whose head job waits for GPUs (free ones on a node, or room in
 * its GPU quota) must not hold back its jobs that need none: the first
 * SCHED_SKIP_AHEAD entries behind the head are searched for a queued
 * job without GPUs that a node can take now, and that one is assigned out
 * of order. Only jobs without GPUs pass the waiting one, so a GPU job is
 * never starved by smaller GPU jobs behind it. 1: one assigned; 0: none;
 * -1: failed. */
#define SCHED_SKIP_AHEAD 8
static int assign_behind_gpu_head(struct sched *s, struct tenant *t, bool burst_ok, struct node **placed,
				  struct gv_err *err)
{
	char tq[GV_QUEUE_KEY_MAX], last[8];
	if (gv_queue_key_tenant(tq, sizeof(tq), t->tid, err) != 0)
		return -1;
	snprintf(last, sizeof(last), "%d", SCHED_SKIP_AHEAD);
	const char *argv[] = { "LRANGE", tq, "1", last };
	redisReply *rep = cmd(s, err, 4, argv);
	if (!rep)
		return -1;
	int rc = 0;
	for (size_t k = 0; k < rep->elements && rc == 0; k++) {
		const char *sid = rep->element[k]->type == REDIS_REPLY_STRING ? rep->element[k]->str : NULL;
		if (!sid || !gv_queue_sid_ok(sid))
			continue;
		struct job_meta m;
		if (load_meta(s, t->tid, sid, &m, err) != 0) {
			rc = -1;
			break;
		}
		if (!m.found || strcmp(m.status, "queued") != 0 || m.gpus > 0)
			continue;
		long attempts = get_attempts(s, sid, err);
		if (attempts < 0) {
			rc = -1;
			break;
		}
		if (attempts >= GV_QUEUE_MAX_ATTEMPTS)
			continue; /* finished as IE when it reaches the head */
		bool anyone;
		struct node *n = choose_node(s, &m, burst_ok, &anyone);
		if (!n)
			continue;
		long a = 0;
		int ok = gv_queue_assign_behind(s->r, s->lock, t->tid, sid, 0, n->name, &a, err);
		if (ok < 0) {
			rc = -1;
			break;
		}
		if (ok == 0)
			continue;
		*placed = n;
		struct gv_log_ctx ctx = { .tenant = t->tid, .job = sid, .node = s->instance };
		gv_debug(&ctx, "assigned to %s past a GPU job waiting at the head (attempt %ld)", n->name, a);
		rc = 1;
	}
	gv_redis_reply_free(rep);
	return rc;
}

static int place(struct sched *s, struct gv_err *err)
{
	size_t free_slots = 0, regular = 0;
	for (size_t i = 0; i < s->n_nodes; i++) {
		free_slots += node_free(&s->nodes[i], true);
		regular += s->nodes[i].capacity;
	}
	if (free_slots == 0 || s->n_tenants == 0)
		return 0;
	struct sched_fs_tenant *fs = calloc(s->n_tenants, sizeof(*fs));
	if (!fs)
		return gv_err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n_tenants; i++)
		fs[i] = (struct sched_fs_tenant){
			.weight = s->tenants[i].weight,
			.running = s->tenants[i].running,
			.max_running = s->tenants[i].max_running,
			.queued = s->tenants[i].queued,
		};
	int rc = 0;
	size_t guard = free_slots * 4 + 64;
	while (free_slots > 0 && guard-- > 0) {
		/* Regular slots by weighted fair share while any is free; then
		 * the burst slots, only to tenants below their share. */
		bool regular_free = false;
		for (size_t k = 0; k < s->n_nodes && !regular_free; k++)
			regular_free = node_free(&s->nodes[k], false) > 0;
		int i = regular_free ? sched_fairshare_pick(fs, s->n_tenants)
				     : sched_fairshare_pick_burst(fs, s->n_tenants, regular);
		if (i < 0)
			break;
		bool burst_ok = sched_fairshare_below_share(fs, s->n_tenants, (size_t)i, regular);
		struct tenant *t = &s->tenants[i];
		struct gv_log_ctx ctx = { .tenant = t->tid, .node = s->instance };
		char sid[GV_QUEUE_SID_MAX + 1];
		long attempts = -1;
		int got;
		if (t->head[0]) {
			/* Once: whatever happens to it, the tenant's next pick asks. */
			memcpy(sid, t->head, sizeof(sid));
			attempts = t->head_attempts;
			t->head[0] = '\0';
			got = 1;
		} else {
			got = gv_queue_peek(s->r, t->tid, sid, sizeof(sid), err);
		}
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0 || !gv_queue_sid_ok(sid)) {
			if (got == 1) {
				gv_warn(&ctx, "dropping a malformed submission id from the tenant queue");
				if (gv_queue_drop_head(s->r, s->lock, t->tid, sid, err) < 0) {
					rc = -1;
					break;
				}
				fs[i].queued--;
				continue;
			}
			fs[i].queued = 0;
			continue;
		}
		ctx.job = sid;
		struct job_meta m;
		if (load_meta(s, t->tid, sid, &m, err) != 0) {
			rc = -1;
			break;
		}
		if (!m.found || strcmp(m.status, "queued") != 0) {
			if (!m.found || strcmp(m.status, "running") != 0) {
				/* Finished, cancelled or gone: nothing to run. */
				if (gv_queue_drop_head(s->r, s->lock, t->tid, sid, err) < 0) {
					rc = -1;
					break;
				}
				gv_info(&ctx, "dropped from the queue: %s", m.found ? m.status : "not in PostgreSQL");
				fs[i].queued--;
				continue;
			}
		}
		if (attempts < 0)
			attempts = get_attempts(s, sid, err);
		if (attempts < 0) {
			rc = -1;
			break;
		}
		if (attempts >= GV_QUEUE_MAX_ATTEMPTS) {
			char why[128];
			snprintf(why, sizeof(why), "the job failed %ld attempts (executors lost while running it)",
				 attempts);
			if (finish_ie(s, t->tid, sid, m.judged, why, err) != 0 ||
			    gv_queue_drop_head(s->r, s->lock, t->tid, sid, err) < 0) {
				rc = -1;
				break;
			}
			fs[i].queued--;
			continue;
		}
		bool anyone;
		struct node *n = choose_node(s, &m, burst_ok, &anyone);
		bool over_gpu_quota = t->max_gpus >= 0 && m.gpus > 0 &&
				      t->gpus_used + m.gpus > (unsigned long)t->max_gpus;
		if (m.gpus > 0 && anyone && (!n || over_gpu_quota)) {
			struct node *other = NULL;
			int got2 = assign_behind_gpu_head(s, t, burst_ok, &other, err);
			if (got2 < 0) {
				rc = -1;
				break;
			}
			if (got2 == 0) {
				fs[i].blocked = true; /* the GPU job keeps its place at the head */
				continue;
			}
			other->used++;
			fs[i].running++;
			fs[i].queued--;
			t->running++;
			free_slots--;
			continue;
		}
		if (!n) {
			if (!anyone && s->n_nodes > 0) {
				char why[160];
				snprintf(why, sizeof(why), "no executor offers language '%s'%s", m.language,
					 m.gpus ? " with that many GPUs" : "");
				if (finish_ie(s, t->tid, sid, m.judged, why, err) != 0 ||
				    gv_queue_drop_head(s->r, s->lock, t->tid, sid, err) < 0) {
					rc = -1;
					break;
				}
				fs[i].queued--;
				continue;
			}
			fs[i].blocked = true; /* head-of-line waits for a fitting node */
			continue;
		}
		if (t->max_gpus >= 0 && m.gpus > 0 && t->gpus_used + m.gpus > (unsigned long)t->max_gpus) {
			fs[i].blocked = true;
			continue;
		}
		long a = 0;
		int ok = gv_queue_assign(s->r, s->lock, t->tid, sid, m.gpus, n->name, &a, err);
		if (ok < 0) {
			rc = -1;
			break;
		}
		if (ok == 0)
			continue; /* the head changed under us: look again */
		n->used++;
		n->gpus_used += m.gpus;
		t->gpus_used += m.gpus;
		fs[i].running++;
		fs[i].queued--;
		t->running++;
		free_slots--;
		gv_debug(&ctx, "assigned to %s (attempt %ld)", n->name, a);
	}
	free(fs);
	return rc;
}

static int publish_running(struct sched *s, struct gv_err *err)
{
	static const char lua[] = "redis.call('DEL', KEYS[1]);"
				  "for i = 1, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1]) end;"
				  "return 1";
	size_t n = 0;
	for (size_t i = 0; i < s->n_tenants; i++)
		if (s->tenants[i].running)
			n++;
	if (n > 256)
		n = 256;
	const char **argv = calloc(4 + 2 * n, sizeof(*argv));
	char(*nums)[16] = calloc(n ? n : 1, sizeof(*nums));
	if (!argv || !nums) {
		free(argv);
		free(nums);
		return gv_err_set(err, ENOMEM, "out of memory");
	}
	int argc = 0;
	argv[argc++] = "EVAL";
	argv[argc++] = lua;
	argv[argc++] = "1";
	argv[argc++] = GV_QUEUE_RUNNING;
	size_t k = 0;
	for (size_t i = 0; i < s->n_tenants && k < n; i++) {
		if (!s->tenants[i].running)
			continue;
		snprintf(nums[k], sizeof(nums[k]), "%u", s->tenants[i].running);
		argv[argc++] = s->tenants[i].tid;
		argv[argc++] = nums[k++];
	}
	redisReply *rep = cmd(s, err, argc, argv);
	free(argv);
	free(nums);
	if (!rep)
		return -1;
	gv_redis_reply_free(rep);
	return 0;
}

/* ---- reconciler ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every sid Redis knows about, in one atomic snapshot. The keys are found
 * with a full SCAN inside the script (atomic like the rest of it; a key
 * seen twice only repeats sids, which the caller's lookup tolerates), not
 * KEYS: the scheduler's Redis user may not run KEYS (deploy/redis/). */
static redisReply *redis_sids(struct sched *s, struct gv_err *err)
{
	static const char lua[] =
		"local function keys(pat) local c, ks = '0', {};"
		"  repeat local r = redis.call('SCAN', c, 'MATCH', pat, 'COUNT', 1000); c = r[1];"
		"    for _, k in ipairs(r[2]) do ks[#ks+1] = k end until c == '0';"
		"  return ks end;"
		"local out = {};"
		"for _, k in ipairs(keys('gavel:tq:*')) do"
		"  for _, v in ipairs(redis.call('LRANGE', k, 0, -1)) do out[#out+1] = v end end;"
		"for _, pat in ipairs({'gavel:nq:*', 'gavel:inflight:*'}) do"
		"  for _, k in ipairs(keys(pat)) do"
		"    for _, v in ipairs(redis.call('LRANGE', k, 0, -1)) do"
		"      local a, b = string.find(v, ':[^:]*:');"
		"      if a then out[#out+1] = string.sub(v, a + 1, b - 1) end end end end;"
		"return out";
	const char *argv[] = { "EVAL", lua, "0" };
	return cmd(s, err, 3, argv);
}

static int reconcile(struct sched *s, struct gv_err *err)
{
	if (gv_pg_ensure(s->pg, err) != 0)
		return -1;
	char age[32], rows[32];
	snprintf(age, sizeof(age), "%llu", (unsigned long long)s->cfg->reconcile_min_age_ms);
	snprintf(rows, sizeof(rows), "%d", SCHED_RECONCILE_ROWS);
	const char *p[] = { age, rows };
	PGresult *res = gv_pg_query(gv_pg_conn(s->pg),
				    "SELECT id, tenant_id::text, status FROM gavel_unfinished_submissions($1::int, $2::int)",
				    2, p, err);
	if (!res)
		return -1;
	redisReply *known = redis_sids(s, err);
	if (!known) {
		PQclear(res);
		return -1;
	}
	const char **set = calloc(known->elements ? known->elements : 1, sizeof(*set));
	if (!set) {
		PQclear(res);
		gv_redis_reply_free(known);
		return gv_err_set(err, ENOMEM, "out of memory");
	}
	size_t n = 0;
	for (size_t i = 0; i < known->elements; i++)
		if (known->element[i]->type == REDIS_REPLY_STRING)
			set[n++] = known->element[i]->str;
	qsort(set, n, sizeof(*set), cmp_str);
	int rc = 0;
	unsigned requeued = 0;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *sid = PQgetvalue(res, i, 0), *tid = PQgetvalue(res, i, 1);
		if (bsearch(&sid, set, n, sizeof(*set), cmp_str))
			continue;
		if (gv_queue_enqueue(s->r, tid, sid, false, err) != 0) {
			if (err->code == GV_EINVAL)
				continue;
			rc = -1;
			break;
		}
		requeued++;
	}
	free(set);
	gv_redis_reply_free(known);
	PQclear(res);
	if (requeued)
		gv_warn(&s->log, "reconciler: %u unfinished submissions were missing from Redis and are queued again",
			requeued);
	return rc;
}

/* One slice of a retention pass: tenants after the cursor, one at a time,
 * until budget_ms is spent, so that a long pass never keeps the leader
 * from renewing its lock. Each tenant's deletion is batched and audited
 * (tenant_retention_run); the job runs as gavel_scheduler, scoped to one
 * tenant per transaction. */
static int retention_step(struct sched *s, uint64_t budget_ms, struct gv_err *err)
{
	uint64_t t0 = mono_ms();
	if (gv_pg_ensure(s->pg, err) != 0)
		return -1;
	PGconn *c = gv_pg_conn(s->pg);
	if (!s->retention_active) {
		s->retention_active = true;
		s->retention_cursor[0] = '\0';
		s->retention_deleted = 0;
	}
	while (mono_ms() - t0 < budget_ms) {
		const char *p[] = { s->retention_cursor[0] ? s->retention_cursor : NULL };
		PGresult *res = gv_pg_query(c,
					    "SELECT t::text FROM gavel_tenant_ids() t WHERE $1::uuid IS NULL OR t > $1::uuid "
					    "ORDER BY t LIMIT 1",
					    1, p, err);
		if (!res)
			return -1;
		if (PQntuples(res) == 0) {
			PQclear(res);
			s->retention_active = false;
			if (s->retention_deleted)
				gv_info(&s->log, "retention: %lld old submissions deleted",
					(long long)s->retention_deleted);
			return 0;
		}
		snprintf(s->retention_cursor, sizeof(s->retention_cursor), "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
		struct tenant_retention_report rep;
		if (tenant_retention_run(c, s->retention_cursor, "system:retention", &rep, err) != 0)
			return -1;
		s->retention_deleted += rep.deleted;
	}
	return 0;
}

int sched_tick(struct sched *s, struct gv_err *err)
{
	if (scan(s, err) != 0 || place(s, err) != 0 || publish_running(s, err) != 0)
		return -1;
	uint64_t m = mono_ms();
	if (m >= s->next_reconcile_ms) {
		s->next_reconcile_ms = m + s->cfg->reconcile_interval_ms;
		if (reconcile(s, err) != 0) {
			gv_err_prefix(err, "reconciler");
			return -1;
		}
	}
	if (s->cfg->retention_interval_ms > 0 && (s->retention_active || m >= s->next_retention_ms)) {
		if (!s->retention_active)
			s->next_retention_ms = m + s->cfg->retention_interval_ms;
		uint64_t budget = s->cfg->leader_lock_ttl_ms / 6 ? s->cfg->leader_lock_ttl_ms / 6 : 1;
		if (retention_step(s, budget, err) != 0) {
			/* Start over at the next period; the batches done stay done. */
			s->retention_active = false;
			gv_err_prefix(err, "retention");
			return -1;
		}
	}
	return 0;
}

static void sleep_until(uint64_t deadline, volatile sig_atomic_t *stop)
{
	while (!*stop) {
		uint64_t now = mono_ms();
		if (now >= deadline)
			return;
		uint64_t d = deadline - now;
		gv_backoff_sleep_ms((long)(d > 100 ? 100 : d));
	}
}

/* Between passes: until the next tick, or earlier when a job is queued
 * while a slot is free or a running job ends, so that neither waits for
 * the tick; but no sooner than wake_min_interval after the last pass, so
 * that a flood of enqueues does not become a flood of passes. */
static void wait_for_wake(struct sched *s, uint64_t tick_start, volatile sig_atomic_t *stop)
{
	const struct sched_config *c = s->cfg;
	uint64_t deadline = tick_start + c->tick_interval_ms;
	bool any_free = false;
	for (size_t i = 0; i < s->n_nodes && !any_free; i++)
		any_free = node_free(&s->nodes[i], true) > 0;
	while (!*stop) {
		uint64_t now = mono_ms();
		if (now >= deadline)
			return;
		/* Short waits: a stop signal is seen within a second. */
		uint64_t d = deadline - now < 1000 ? deadline - now : 1000;
		struct gv_err err;
		int woken = gv_queue_wait_wake(s->r, any_free, (double)d / 1000.0, &err);
		if (woken < 0) {
			/* The next pass reports Redis's state. */
			sleep_until(deadline, stop);
			return;
		}
		if (woken == 1) {
			sleep_until(tick_start + c->wake_min_interval_ms, stop);
			return;
		}
	}
}

void sched_run(struct sched *s, volatile sig_atomic_t *stop)
{
	const struct sched_config *c = s->cfg;
	uint64_t third = c->leader_lock_ttl_ms / 3;
	uint64_t standby_poll = c->leader_lock_ttl_ms / 5 < 1000 ? c->leader_lock_ttl_ms / 5 : 1000;
	struct gv_err err;
	uint64_t last_error_log = 0;
	while (!*stop) {
		uint64_t now = mono_ms();
		if (!s->leader) {
			int got = gv_queue_lock_acquire(s->r, s->instance, (long)c->leader_lock_ttl_ms, s->lock,
							sizeof(s->lock), &err);
			if (got == 1) {
				s->leader = true;
				s->last_renew_ms = s->last_renew_ok_ms = now;
				s->next_reconcile_ms = now; /* a new leader checks at once */
				gv_info(&s->log, "now the leader (lock %s)", s->lock);
			} else {
				if (got < 0 && now - last_error_log > 5000) {
					gv_warn(&s->log, "standby: %s", err.msg);
					last_error_log = now;
				}
				sleep_until(now + standby_poll, stop);
				continue;
			}
		}
		if (now - s->last_renew_ms >= third) {
			s->last_renew_ms = now;
			int r = gv_queue_lock_renew(s->r, s->lock, (long)c->leader_lock_ttl_ms, &err);
			if (r == 1) {
				s->last_renew_ok_ms = now;
			} else if (r == 0 || now - s->last_renew_ok_ms >= c->leader_lock_ttl_ms) {
				gv_warn(&s->log, "lost the leader lock%s%s; standing by", r < 0 ? ": " : "",
					r < 0 ? err.msg : "");
				s->leader = false;
				continue;
			}
		}
		if (sched_tick(s, &err) != 0) {
			if (err.code == GV_EQUEUE_FENCED) {
				gv_warn(&s->log, "fenced: another scheduler holds the lock; standing by");
				s->leader = false;
				continue;
			}
			if (now - last_error_log > 2000) {
				gv_error(&s->log, "tick: %s", err.msg);
				last_error_log = now;
			}
			sleep_until(now + 500, stop);
			continue;
		}
		wait_for_wake(s, now, stop);
	}
}
