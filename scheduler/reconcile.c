/* The reconciler: PostgreSQL is the truth, Redis only work in flight.
 * Every reconcile_interval the leader compares the unfinished submissions
 * older than reconcile_min_age with every sid Redis holds, and enqueues
 * again those Redis lost (a flush, a failover, a frontend's failed
 * enqueue). Separate from placement: it runs on its own period and reads
 * PostgreSQL in bulk.
 *
 * The other way round too: a token left in a node's in-flight list for a
 * job PostgreSQL shows finished would hold that node's slot for good (an
 * acknowledgement that failed while Redis was down, or one that a failover
 * undid because the replica never received it). Such tokens are removed. */
#include "scheduler/sched_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		"for _, k in ipairs(keys('" GV_QUEUE_TQ_PREFIX "*')) do"
		"  for _, v in ipairs(redis.call('LRANGE', k, 0, -1)) do out[#out+1] = v end end;"
		"for _, pat in ipairs({'" GV_QUEUE_NQ_PREFIX "*', '" GV_QUEUE_INFLIGHT_PREFIX "*'}) do"
		"  for _, k in ipairs(keys(pat)) do"
		"    for _, v in ipairs(redis.call('LRANGE', k, 0, -1)) do"
		"      local a, b = string.find(v, ':[^:]*:');"
		"      if a then out[#out+1] = string.sub(v, a + 1, b - 1) end end end end;"
		"return out";
	const char *argv[] = { "EVAL", lua, "0" };
	return sched_cmd(s, err, 3, argv);
}

/* Every (in-flight list, token) pair, flat, in one atomic snapshot. */
static redisReply *redis_inflight(struct sched *s, struct gv_err *err)
{
	static const char lua[] =
		"local c, out = '0', {};"
		"repeat local r = redis.call('SCAN', c, 'MATCH', '" GV_QUEUE_INFLIGHT_PREFIX "*', 'COUNT', 1000); c = r[1];"
		"  for _, k in ipairs(r[2]) do"
		"    for _, v in ipairs(redis.call('LRANGE', k, 0, -1)) do out[#out+1] = k; out[#out+1] = v end end "
		"until c == '0';"
		"return out";
	const char *argv[] = { "EVAL", lua, "0" };
	return sched_cmd(s, err, 3, argv);
}

/* Removes in-flight tokens of finished jobs; how many in *dropped. A job
 * not found, or whose status cannot be read, keeps its token. */
static int drop_finished_inflight(struct sched *s, unsigned *dropped, struct gv_err *err)
{
	*dropped = 0;
	redisReply *pairs = redis_inflight(s, err);
	if (!pairs)
		return -1;
	int rc = 0;
	for (size_t i = 0; pairs->type == REDIS_REPLY_ARRAY && i + 1 < pairs->elements; i += 2) {
		const redisReply *key = pairs->element[i], *tok = pairs->element[i + 1];
		struct gv_queue_token t;
		struct gv_err terr;
		if (key->type != REDIS_REPLY_STRING || tok->type != REDIS_REPLY_STRING ||
		    gv_queue_token_parse(tok->str, (size_t)tok->len, &t, &terr) != 0)
			continue;
		struct sched_job job;
		if (sched_job_load(s, t.tid, t.sid, &job, err) != 0) {
			rc = -1;
			break;
		}
		if (!job.found || strcmp(job.status, "queued") == 0 || strcmp(job.status, "running") == 0)
			continue;
		const char *lrem[] = { "LREM", key->str, "1", tok->str };
		redisReply *r = sched_cmd(s, err, 4, lrem);
		if (!r) {
			rc = -1;
			break;
		}
		*dropped += r->type == REDIS_REPLY_INTEGER && r->integer > 0;
		gv_redis_reply_free(r);
	}
	gv_redis_reply_free(pairs);
	return rc;
}

int sched_reconcile(struct sched *s, struct gv_err *err)
{
	unsigned dropped = 0;
	if (drop_finished_inflight(s, &dropped, err) != 0)
		return -1;
	if (dropped)
		gv_warn(&s->log, "reconciler: %u in-flight tokens of finished submissions removed (an acknowledgement "
			"Redis lost)", dropped);
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
