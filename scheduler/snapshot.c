/* The start of every pass: one Lua script reads everything a pass needs
 * from Redis (executors with their node lists, backlogged tenants with
 * their scheduling config and queue head), live executors become the
 * pass's nodes, and an executor whose heartbeat is older than
 * scheduler.node_heartbeat_timeout has its jobs put back at the front of
 * their queues. Separate from placement: it is the registry side of the
 * scheduler (who is alive, what is queued), placement only reads its
 * result. */
#include "scheduler/sched_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenants/db.h"
#include "tenants/quota.h"

static struct sched_tenant *tenant_get(struct sched *s, const char *tid)
{
	for (size_t i = 0; i < s->n_tenants; i++)
		if (strcmp(s->tenants[i].tid, tid) == 0)
			return &s->tenants[i];
	if (s->n_tenants >= SCHED_MAX_TENANTS || !gv_queue_tid_ok(tid))
		return NULL;
	struct sched_tenant *t = &s->tenants[s->n_tenants++];
	memset(t, 0, sizeof(*t));
	strcpy(t->tid, tid);
	t->weight = GV_QUEUE_DEFAULT_WEIGHT;
	t->max_running = GV_QUEUE_DEFAULT_MAX_RUNNING;
	t->max_gpus = -1;
	return t;
}

/* Moves every token of list key back to the front of its tenant queue. */
static int requeue_list(struct sched *s, const char *key, unsigned *moved, struct gv_err *err)
{
	const char *argv[] = { "LRANGE", key, "0", "-1" };
	redisReply *rep = sched_cmd(s, err, 4, argv);
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
			gv_redis_reply_free(sched_cmd(s, err, 4, lrem));
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
		gv_redis_reply_free(sched_cmd(s, err, 3, srem));
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
static void count_tokens(struct sched *s, struct sched_node *n, const redisReply *list)
{
	for (size_t i = 0; i < list->elements; i++) {
		const redisReply *e = list->element[i];
		struct gv_queue_token t;
		struct gv_err terr;
		n->used++;
		if (e->type != REDIS_REPLY_STRING || gv_queue_token_parse(e->str, e->len, &t, &terr) != 0)
			continue;
		n->gpus_used += t.gpus;
		n->kernel_used_mb += t.kernel_mb;
		/* A kernel on a kernel node takes none of its tenant's judging
		 * share: max_kernels and the node's memory bound those. */
		struct sched_tenant *tn = t.kernel_mb ? NULL : tenant_get(s, t.tid);
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

/* A backlogged tenant's gavel:tenantcfg hash is gone (a Redis flush or
 * loss; the CLI publishes it only on create/update/sync): publish it again
 * from PostgreSQL, the truth, so that the tenant's weight and caps keep
 * applying instead of the defaults. 1: published (t updated), 0: no such
 * tenant, -1: failed (the caller keeps the defaults for this tick). */
static int restore_tenant_cfg(struct sched *s, struct sched_tenant *t, struct gv_err *err)
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
 *           {nq tokens}, {inflight tokens}, kernel_mb}, ...},
 *         {{tid, queued, weight, max_running, max_gpus, head sid,
 *           head's attempts}, ...}}
 * with nil for a missing field. Keys as in common/queue.h. */
static const char SNAPSHOT_LUA[] =
	GV_QUEUE_LUA_NOW
	"local nodes, tenants = {}, {} "
	"for _, n in ipairs(redis.call('SMEMBERS', '" GV_QUEUE_EXECUTORS "')) do "
	"  local h = " GV_QUEUE_LUA_EXEC_HMGET("'capacity', 'burst', 'gpus', 'languages', 'kernel_mb'") " "
	"  nodes[#nodes + 1] = {n, h[1], h[2], h[3], h[4], h[5], "
	"    redis.call('LRANGE', '" GV_QUEUE_NQ_PREFIX "' .. n, 0, -1), "
	"    redis.call('LRANGE', '" GV_QUEUE_INFLIGHT_PREFIX "' .. n, 0, -1), h[6]} "
	"end "
	"for _, tid in ipairs(redis.call('SMEMBERS', '" GV_QUEUE_BACKLOG "')) do "
	"  local len = redis.call('LLEN', '" GV_QUEUE_TQ_PREFIX "' .. tid) "
	"  local c = redis.call('HMGET', '" GV_QUEUE_TENANTCFG_PREFIX "' .. tid, 'weight', 'max_running', 'max_gpus') "
	"  local head = redis.call('LINDEX', '" GV_QUEUE_TQ_PREFIX "' .. tid, 0) "
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
		if (n->type != REDIS_REPLY_ARRAY || n->elements != 9 || n->element[0]->type != REDIS_REPLY_STRING ||
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
	struct sched_node *n = &s->nodes[s->n_nodes++];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->capacity = sched_to_uint(reply_str(e->element[2]), 0, 100000);
	n->burst = sched_to_uint(reply_str(e->element[3]), 0, 1000);
	n->gpus = sched_to_uint(reply_str(e->element[4]), 0, 1024);
	const char *langs = reply_str(e->element[5]);
	snprintf(n->languages, sizeof(n->languages), "%s", langs ? langs : "");
	n->kernel_mb = sched_to_uint(reply_str(e->element[8]), 0, GV_QUEUE_KERNEL_MB_MAX);
	count_tokens(s, n, e->element[6]);
	count_tokens(s, n, e->element[7]);
	return 0;
}

/* One backlogged tenant of the snapshot: its queue length, scheduling
 * config (published again from PostgreSQL when Redis lost it) and head. */
static void scan_tenant(struct sched *s, const redisReply *e)
{
	struct sched_tenant *t = tenant_get(s, e->element[0]->str);
	if (!t)
		return;
	t->backlogged = true;
	t->queued = e->element[1]->integer > 0 ? (unsigned)e->element[1]->integer : 0;
	const char *w = reply_str(e->element[2]), *m = reply_str(e->element[3]), *g = reply_str(e->element[4]);
	t->weight = sched_to_uint(w, GV_QUEUE_DEFAULT_WEIGHT, 1000000);
	if (t->weight == 0)
		t->weight = 1;
	t->max_running = sched_to_uint(m, GV_QUEUE_DEFAULT_MAX_RUNNING, 1000000);
	/* Fail closed: without a published GPU quota a tenant holds none
	 * (tenant_quota_defaults' max_gpus is 0 as well). */
	t->max_gpus = g ? (long)sched_to_uint(g, 0, 1024) : 0;
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
int sched_scan(struct sched *s, struct gv_err *err)
{
	for (int round = 0;; round++) {
		const char *argv[] = { "EVAL", SNAPSHOT_LUA, "0" };
		redisReply *rep = sched_cmd(s, err, 3, argv);
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
