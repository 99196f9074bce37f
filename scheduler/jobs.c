/* A job as PostgreSQL holds it: its status, language, GPUs and whether it
 * is judged, read before placement; finishing it as IE when nothing can
 * run it; its attempt count in Redis. Separate from placement: these are
 * the only writes the scheduler makes to a submission. */
#include "scheduler/sched_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/webhook_outbox.h"
#include "tenants/db.h"

int sched_job_load(struct sched *s, const char *tid, const char *sid, struct sched_job *m, struct gv_err *err)
{
	memset(m, 0, sizeof(*m));
	if (gv_pg_ensure(s->pg, err) != 0)
		return -1;
	const char *p[] = { sid };
	PGresult *res = tenant_tx_query(gv_pg_conn(s->pg), tid,
					"SELECT status, language, COALESCE((request->>'gpus')::int, 0), "
					"COALESCE(jsonb_typeof(request->'tests') = 'array', false), "
					"CASE WHEN kind = 'kernel' THEN GREATEST(COALESCE("
					"(request->'kernel'->>'memory_mb')::bigint, 1), 1) ELSE 0 END "
					"FROM submissions WHERE id = $1",
					1, p, err);
	if (!res)
		return -1;
	if (PQntuples(res) == 1) {
		m->found = true;
		snprintf(m->status, sizeof(m->status), "%s", PQgetvalue(res, 0, 0));
		snprintf(m->language, sizeof(m->language), "%s", PQgetvalue(res, 0, 1));
		m->gpus = sched_to_uint(PQgetvalue(res, 0, 2), 0, 1024);
		m->judged = PQgetvalue(res, 0, 3)[0] == 't';
		m->kernel_mb = sched_to_uint(PQgetvalue(res, 0, 4), 0, GV_QUEUE_KERNEL_MB_MAX);
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
int sched_job_finish_ie(struct sched *s, const char *tid, const char *sid, bool judged, const char *why,
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
		gv_redis_reply_free(sched_cmd(s, err, 3, a));
	}
	const char *b[] = { "PUBLISH", GV_QUEUE_DONE_CHANNEL, sid };
	gv_redis_reply_free(sched_cmd(s, err, 3, b));
	gv_warn(&ctx, "finished as IE: %s", why);
	return 0;
}

long sched_job_attempts(struct sched *s, const char *sid, struct gv_err *err)
{
	const char *a[] = { "HGET", GV_QUEUE_ATTEMPTS, sid };
	redisReply *rep = sched_cmd(s, err, 3, a);
	if (!rep)
		return -1;
	long v = rep->type == REDIS_REPLY_STRING ? strtol(rep->str, NULL, 10) : 0;
	gv_redis_reply_free(rep);
	return v;
}
