/* The webhook outbox row and the first scheduling of a delivery
 * (common/webhook_outbox.h). */
#include "common/webhook_outbox.h"

#include <stdio.h>

#include "common/pg.h"
#include "common/queue.h"

int gv_webhook_outbox_add(PGconn *c, const char *tid, const char *sid, bool *wanted, struct gv_err *err)
{
	*wanted = false;
	const char *p[] = { tid, sid };
	PGresult *res = gv_pg_query(c,
				    "INSERT INTO webhook_outbox (tenant_id, submission_id) "
				    "SELECT s.tenant_id, s.id FROM submissions s WHERE s.tenant_id = $1::uuid AND s.id = $2 "
				    "AND s.request->>'callback_url' IS NOT NULL ON CONFLICT DO NOTHING RETURNING 1",
				    2, p, err);
	if (!res) {
		gv_err_prefix(err, "webhook outbox");
		return -1;
	}
	*wanted = PQntuples(res) == 1;
	PQclear(res);
	return 0;
}

/* Scores are Redis server time, so that the nodes' clocks never matter.
 * KEYS[1] the queue; ARGV[1] member, ARGV[2] delay ms. */
static const char lua_schedule[] = "local t = redis.call('TIME');"
				   "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000);"
				   "return redis.call('ZADD', KEYS[1], 'NX', now + tonumber(ARGV[2]), ARGV[1])";

int gv_webhook_schedule(struct gv_redis *r, const char *member, long delay_ms, struct gv_err *err)
{
	char d[24];
	snprintf(d, sizeof(d), "%ld", delay_ms);
	const char *argv[] = { "EVAL", lua_schedule, "1", GV_WEBHOOK_QUEUE, member, d };
	redisReply *rep = gv_redis_commandv(r, 6, argv, NULL, err);
	if (!rep)
		return -1;
	int rc;
	if (rep->type == REDIS_REPLY_ERROR)
		rc = gv_err_set(err, GV_EREDIS, "scheduling a webhook: %s", rep->str);
	else
		rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	gv_redis_reply_free(rep);
	return rc;
}

int gv_webhook_enqueue(struct gv_redis *r, const char *tid, const char *sid, struct gv_err *err)
{
	char m[160];
	if (!gv_queue_tid_ok(tid) || !gv_queue_sid_ok(sid))
		return gv_err_set(err, GV_EINVAL, "bad tenant or submission id");
	snprintf(m, sizeof(m), "%s:%s:1", tid, sid);
	return gv_webhook_schedule(r, m, 0, err) < 0 ? -1 : 0;
}
