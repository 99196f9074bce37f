/* The reconciler: PostgreSQL is the truth, Redis only work in flight.
 * Every reconcile_interval the leader compares the unfinished submissions
 * older than reconcile_min_age with every sid Redis holds, and enqueues
 * again those Redis lost (a flush, a failover, a frontend's failed
 * enqueue). Separate from placement: it runs on its own period and reads
 * PostgreSQL in bulk. */
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

int sched_reconcile(struct sched *s, struct gv_err *err)
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
