/* One job in a worker (executor/daemon/daemon_internal.h): claims its row,
 * runs it on the worker's engine (inline, or against a stored problem)
 * with the GPUs and the network egress its tenant may have, then writes
 * the result, usage and audit records in one transaction, schedules its
 * webhook and acknowledges it. A failure of our machinery is verdict IE or
 * a hand-back, never a lost job. */
#include "executor/daemon/daemon_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/jobspec.h"
#include "common/json.h"
#include "executor/daemon/webhook.h"
#include "executor/judge/judge_inline.h"
#include "tenants/audit.h"
#include "tenants/db.h"
#include "tenants/usage.h"

#define DAEMON_RESULT_MAX (96u * 1024u * 1024u)

/* Adds "egress":{"blocked":N} (blocked connection attempts of the job's
 * sandboxes) to the audit details object in buf, when the job had a
 * network. */
static void append_egress_details(const struct worker *w, char *buf, size_t size)
{
	size_t len = strlen(buf);
	if (!w->egress_granted || len < 2 || buf[len - 1] != '}')
		return;
	char tail[64];
	int n = snprintf(tail, sizeof(tail), ",\"egress\":{\"granted\":true,\"blocked\":%llu}}",
			 (unsigned long long)w->egress_blocked);
	if (n > 0 && len - 1 + (size_t)n < size)
		memcpy(buf + len - 1, tail, (size_t)n + 1);
}

/* The tenant's current egress policy, from PostgreSQL (never from the
 * request) into w->egress; w->egress_granted tells whether it grants a
 * network. A policy that cannot be loaded or parsed is an error: the job
 * is IE rather than run with a network it may not have. */
int exec_daemon_load_egress(struct worker *w, const char *tid, struct gv_err *err)
{
	w->egress_granted = false;
	w->egress_blocked = 0;
	if (gv_pg_ensure(w->pg, err) != 0)
		return -1;
	PGconn *c = gv_pg_conn(w->pg);
	if (tenant_tx_begin(c, tid, err) != 0)
		return -1;
	const char *p[] = { tid };
	PGresult *res = gv_pg_query(c, "SELECT egress_policy::text FROM tenant_quotas WHERE tenant_id = $1::uuid", 1,
				    p, err);
	int rc = -1;
	if (res) {
		rc = PQntuples(res) == 0 ? tenant_egress_parse("{\"mode\":\"none\"}", w->egress, err)
					 : tenant_egress_parse(PQgetvalue(res, 0, 0), w->egress, err);
		PQclear(res);
	}
	if (rc != 0 || tenant_tx_commit(c, err) != 0) {
		tenant_tx_rollback(c);
		gv_err_prefix(err, "tenant egress policy");
		return -1;
	}
	w->egress_granted = w->egress->grants;
	return 0;
}

struct progress_arg {
	struct worker *w;
	const char *sid;
	const char *tid;
	const char *gpu_ids; /* "0,1" assigned to the job; "" none */
};

static void on_progress(const char *event, size_t test, size_t of, void *arg)
{
	struct progress_arg *p = arg;
	struct gv_err err;
	if (gv_queue_publish_event(p->w->r, p->sid, event, test, of, &err) != 0)
		gv_debug(&p->w->d->log, "progress event: %s", err.msg);
}

/* The `sandbox.started` audit record, in its own small transaction when
 * the engine has opened a sandbox for the job: node, sandbox id and the
 * limits it applies. When PostgreSQL cannot take it the job goes on and
 * the record waits in the worker, to be written in the result's
 * transaction (write_result), so a failover delays it but loses it only
 * when more sandboxes than the worker keeps fail so. */
static void on_sandbox_started(const char *sandbox_id, const struct exec_limits *l, void *arg)
{
	struct progress_arg *p = arg;
	struct worker *w = p->w;
	struct gv_err err;
	char details[384 + EXEC_GPU_IDS_TEXT_MAX];
	snprintf(details, sizeof(details),
		 "{\"limits\":{\"cpu_ms\":%llu,\"wall_ms\":%llu,\"memory_kb\":%llu,\"output_bytes\":%llu,"
		 "\"stack_kb\":%llu,\"fsize_kb\":%llu,\"procs\":%u,\"open_files\":%u},\"gpus\":[%s]}",
		 (unsigned long long)l->cpu_ms, (unsigned long long)l->wall_ms, (unsigned long long)l->memory_kb,
		 (unsigned long long)l->output_bytes, (unsigned long long)l->stack_kb,
		 (unsigned long long)l->fsize_kb, l->procs, l->open_files, p->gpu_ids ? p->gpu_ids : "");
	PGconn *c = gv_pg_ensure(w->pg, &err) == 0 ? gv_pg_conn(w->pg) : NULL;
	if (!c || tenant_tx_begin(c, p->tid, &err) != 0 ||
	    tenant_audit_append(c, p->tid, w->actor, TENANT_AUDIT_SANDBOX_STARTED, p->sid, w->d->node, sandbox_id,
				details, &err) != 0 ||
	    tenant_tx_commit(c, &err) != 0) {
		tenant_tx_rollback(c);
		size_t n = w->n_deferred;
		if (n < sizeof(w->deferred) / sizeof(w->deferred[0]) && strlen(sandbox_id) < sizeof(w->deferred[n].sandbox_id) &&
		    strlen(details) < sizeof(w->deferred[n].details)) {
			snprintf(w->deferred[n].sandbox_id, sizeof(w->deferred[n].sandbox_id), "%s", sandbox_id);
			snprintf(w->deferred[n].details, sizeof(w->deferred[n].details), "%s", details);
			w->n_deferred++;
			gv_warn(&w->d->log, "audit sandbox.started of %s (sandbox %s): %s; written with the result",
				p->sid, sandbox_id, err.msg);
		} else {
			gv_error(&w->d->log, "audit sandbox.started of %s (sandbox %s) lost: %s", p->sid, sandbox_id,
				 err.msg);
		}
	}
}

/* How long a worker keeps trying to claim a job, and to store a finished
 * job's result, while PostgreSQL is unreachable: longer than a standby's
 * promotion takes, so that a failover costs a wait, not a run. After that
 * the job is handed back. */
#define CLAIM_RETRY_MS 60000u
#define RESULT_RETRY_MS 120000u
#define ACK_RETRY_MS 15000u

/* Whether another worker of this node holds token: then the job's row
 * says 'running' here because that worker runs it. */
static bool held_by_other_worker(const struct worker *w, const char *token)
{
	for (int k = 0; k < w->d->workers; k++)
		if (k != w->index && strcmp((const char *)w->d->slots[k].token, token) == 0)
			return true;
	return false;
}

/* How many copies of token node's in-flight list in Redis holds (each
 * stands for a run of the job on that node); -1 when Redis failed. */
static long inflight_copies(struct worker *w, const char *node, const char *token, struct gv_err *err)
{
	char key[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_inflight(key, sizeof(key), node, err) != 0)
		return -1;
	const char *argv[] = { "LRANGE", key, "0", "-1" };
	redisReply *rep = gv_redis_commandv(w->r, 4, argv, NULL, err);
	if (!rep)
		return -1;
	long copies = 0;
	for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++)
		copies += rep->element[i]->type == REDIS_REPLY_STRING && strcmp(rep->element[i]->str, token) == 0;
	gv_redis_reply_free(rep);
	return copies;
}

#define NODE_GONE (-2) /* the script's -2 too */

/* The node's count of in-flight checks (EXEC_HEAL_ROUNDS_FIELD, 0 before
 * its first); NODE_GONE when it is not registered (declared dead, or
 * gone), -1 when Redis failed. */
static long heal_rounds(struct worker *w, const char *node, struct gv_err *err)
{
	char key[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_exec(key, sizeof(key), node, err) != 0)
		return -1;
	/* A script: the executor's Redis user may run EXISTS and HGET, not
	 * HMGET (deploy/redis/). */
	static const char lua[] = "if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end;"
				  "return tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')";
	const char *argv[] = { "EVAL", lua, "1", key, EXEC_HEAL_ROUNDS_FIELD };
	redisReply *rep = gv_redis_commandv(w->r, 5, argv, NULL, err);
	if (!rep)
		return -1;
	long n = rep->type == REDIS_REPLY_INTEGER ? (long)rep->integer : NODE_GONE;
	gv_redis_reply_free(rep);
	return n;
}

/* A node alive whose in-flight list lacks a job it runs (its BLMOVE undone
 * by a failover) puts the token back in its next check (daemon.c): waits
 * until two checks have run since now, the node is gone, or HEAL_WAIT_MS
 * passed (a node that does not check: stuck). -1 when Redis failed. */
#define HEAL_WAIT_MS 10000u
static int other_node_heal_wait(struct worker *w, const char *node, struct gv_err *err)
{
	long first = heal_rounds(w, node, err);
	if (first < 0)
		return first == NODE_GONE ? 0 : -1;
	uint64_t until = exec_daemon_mono_ms() + HEAL_WAIT_MS;
	while (exec_daemon_mono_ms() < until) {
		gv_backoff_sleep_ms(EXEC_INFLIGHT_HEAL_MS / 4);
		long now = heal_rounds(w, node, err);
		if (now == -1)
			return -1;
		if (now == NODE_GONE || now >= first + 2)
			return 0;
	}
	return 0;
}

void exec_daemon_slot_claimed(struct worker *w, bool claimed)
{
	__atomic_store_n(&w->d->slots[w->index].claimed, claimed ? 1 : 0, __ATOMIC_RELEASE);
}

/* One claim statement: marks the row running on this node and returns
 * (true, request, NULL, attempts, NULL), or (false, NULL, status, NULL,
 * node) as the row was when it could not be claimed. A row is claimed when
 * it is queued, or running on takeover_node: a node whose run of it is
 * known to be gone. One statement in one pipelined transaction: the claim
 * is on the path of every job, so it costs one round trip to PostgreSQL. */
static PGresult *claim_once(struct worker *w, const struct gv_queue_token *t, const char *takeover_node,
			    struct gv_err *err)
{
	if (gv_pg_ensure(w->pg, err) != 0)
		return NULL;
	const char *p[] = { t->sid, w->d->node, takeover_node };
	/* The second branch reads the row as it was before the UPDATE. */
	return tenant_tx_query(gv_pg_conn(w->pg), t->tid,
			       "WITH claimed AS (UPDATE submissions SET status = 'running', started_at = now(), "
			       "node = $2, attempts = attempts + 1 WHERE id = $1 AND (status = 'queued' OR "
			       "(status = 'running' AND node = $3))"
			       " RETURNING request::text AS request, attempts) "
			       "SELECT true, request, NULL, attempts, NULL FROM claimed UNION ALL "
			       "SELECT false, NULL, status, NULL, node FROM submissions WHERE id = $1 "
			       "AND NOT EXISTS (SELECT 1 FROM claimed)",
			       3, p, err);
}

/* Marks the row running and returns its request text (caller frees), or
 * NULL with *gone set when there is nothing to run here: finished,
 * missing, or running elsewhere.
 *
 * The claim is the fence that keeps a job from being judged twice when
 * Redis hands out a token again (a failover that lost a BLMOVE, a
 * reconcile): a row already running is taken over only when its run is
 * known to be gone: on this node, when no other worker here holds the
 * token (this node's worker died, or this node restarted); on another
 * node, when that node's in-flight list no longer holds it (the node was
 * declared dead and its jobs handed back, or its worker handed this one
 * back), read again after two of that node's checks while it is alive
 * (a failover can undo its BLMOVE; its supervisor puts the token back).
 * A PostgreSQL failure is retried for CLAIM_RETRY_MS with the same
 * rule, which also makes a retry after a claim whose commit was lost in a
 * failover find its own claim. */
static char *claim(struct worker *w, const char *token, const struct gv_queue_token *t, char *status,
		   size_t stsz, bool *gone, long *attempts, struct gv_err *err)
{
	*gone = false;
	*attempts = 0;
	struct gv_backoff_window tries;
	gv_backoff_window_start(&tries, CLAIM_RETRY_MS, 200, 3000);
	PGresult *res = NULL;
	for (;;) {
		const char *here = held_by_other_worker(w, token) ? NULL : w->d->node;
		res = claim_once(w, t, here, err);
		if (res && PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 'f' &&
		    strcmp(PQgetvalue(res, 0, 2), "running") == 0 && !PQgetisnull(res, 0, 4) &&
		    strcmp(PQgetvalue(res, 0, 4), w->d->node) != 0) {
			char other[GV_QUEUE_NODE_MAX + 1];
			snprintf(other, sizeof(other), "%s", PQgetvalue(res, 0, 4));
			long held = inflight_copies(w, other, token, err);
			if (held == 0 && other_node_heal_wait(w, other, err) != 0)
				held = -1;
			else if (held == 0)
				held = inflight_copies(w, other, token, err);
			if (held == 0) {
				gv_warn(&w->d->log, "%s: taking it over from %s (running there, not in its in-flight list)",
					t->sid, other);
				PQclear(res);
				res = claim_once(w, t, other, err);
			} else if (held < 0) {
				PQclear(res);
				res = NULL;
			}
		}
		if (res)
			break;
		gv_warn(&w->d->log, "claiming %s: %s; trying again", t->sid, err->msg);
		if (!gv_backoff_window_next(&tries))
			break;
	}
	if (!res)
		return NULL;
	char *req = NULL;
	if (PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't') {
		/* A row without a request (an old frontend) is run as nothing:
		 * not expected; IE with a reason. */
		req = strdup(PQgetisnull(res, 0, 1) ? "" : PQgetvalue(res, 0, 1));
		*attempts = strtol(PQgetvalue(res, 0, 3), NULL, 10);
		if (!req)
			gv_err_set(err, ENOMEM, "out of memory");
	} else {
		*gone = true;
		snprintf(status, stsz, "%s", PQntuples(res) == 1 ? PQgetvalue(res, 0, 2) : "missing");
	}
	PQclear(res);
	return req;
}

/* exec_daemon_load_egress, tried again for CLAIM_RETRY_MS while the
 * failure is PostgreSQL being away (a failover), not the policy: the job
 * waits rather than ending IE. */
static int load_egress_retrying(struct worker *w, const char *tid, struct gv_err *err)
{
	struct gv_backoff_window tries;
	gv_backoff_window_start(&tries, CLAIM_RETRY_MS, 200, 3000);
	while (exec_daemon_load_egress(w, tid, err) != 0)
		if (!gv_pg_away(w->pg) || !gv_backoff_window_next(&tries))
			return -1;
	return 0;
}

/* A token for a job that runs elsewhere leaves this node's in-flight
 * list, unless it is the list's only copy and the run is on this node:
 * then the run's own copy was lost (a Redis failover undid its BLMOVE)
 * and this one stands for it until that run acknowledges. */
static void drop_duplicate_token(struct worker *w, const char *token, bool runs_here, struct gv_err *err)
{
	char key[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_inflight(key, sizeof(key), w->d->node, err) != 0 ||
	    (runs_here && inflight_copies(w, w->d->node, token, err) < 2))
		return;
	const char *argv[] = { "LREM", key, "1", token };
	redisReply *rep = gv_redis_commandv(w->r, 4, argv, NULL, err);
	if (!rep)
		gv_warn(&w->d->log, "dropping a second token of a running job: %s", err->msg);
	gv_redis_reply_free(rep);
}

/* The result, usage and audit records in one transaction; written only if
 * no earlier run of the same job already finished it. *recorded tells
 * whether this write was the one. */
static int write_result(struct worker *w, const struct gv_queue_token *t, const char *verdict,
			const char *result_text, const struct exec_inline_summary *sum, const char *language,
			const char *gpu_ids, uint64_t gpu_ms, bool *recorded, struct gv_err *err)
{
	*recorded = false;
	if (gv_pg_ensure(w->pg, err) != 0)
		return -1;
	PGconn *c = gv_pg_conn(w->pg);
	if (tenant_tx_begin(c, t->tid, err) != 0)
		return -1;
	const char *p[] = { t->sid, verdict, result_text };
	PGresult *res = gv_pg_query(c,
				    "UPDATE submissions SET status = 'done', verdict = $2, result = $3::jsonb, "
				    "finished_at = now() WHERE id = $1 AND status <> 'done'",
				    3, p, err);
	if (!res)
		goto fail;
	*recorded = strcmp(PQcmdTuples(res), "1") == 0;
	PQclear(res);
	/* This run's sandboxes happened whoever wrote the result. */
	for (size_t i = 0; i < w->n_deferred; i++)
		if (tenant_audit_append(c, t->tid, w->actor, TENANT_AUDIT_SANDBOX_STARTED, t->sid, w->d->node,
					w->deferred[i].sandbox_id, w->deferred[i].details, err) != 0)
			goto fail;
	if (*recorded) {
		struct tenant_usage_delta u = { .submissions = 1, .sandbox_cpu_ms = (int64_t)sum->cpu_ms,
						.gpu_ms = (int64_t)gpu_ms };
		if (tenant_usage_add(c, t->tid, &u, err) != 0)
			goto fail;
		char details[512 + EXEC_GPU_IDS_TEXT_MAX];
		snprintf(details, sizeof(details),
			 "{\"language\":\"%s\",\"verdict\":\"%s\",\"time_ms\":%llu,\"memory_kb\":%llu,"
			 "\"cpu_ms\":%llu,\"sandboxes\":%u,\"limit\":\"%s\",\"gpus\":[%s],\"gpu_ms\":%llu}",
			 language, verdict, (unsigned long long)sum->max_time_ms,
			 (unsigned long long)sum->max_memory_kb, (unsigned long long)sum->cpu_ms, sum->sandboxes,
			 sum->limit, gpu_ids, (unsigned long long)gpu_ms);
		append_egress_details(w, details, sizeof(details));
		/* The single audit call site of the executor: the sandbox's end,
		 * with what it was given and what it used. */
		if (tenant_audit_append(c, t->tid, w->actor, TENANT_AUDIT_SANDBOX_FINISHED, t->sid, w->d->node, NULL,
					details, err) != 0)
			goto fail;
		/* The pending webhook commits with the result (the outbox). */
		bool webhook;
		if (gv_webhook_outbox_add(c, t->tid, t->sid, &webhook, err) != 0)
			goto fail;
	}
	if (tenant_tx_commit(c, err) != 0)
		return -1;
	w->n_deferred = 0;
	return 0;
fail:
	tenant_tx_rollback(c);
	return -1;
}

void exec_daemon_hand_back(struct worker *w, const char *token_in, const char *why)
{
	/* This worker's slot lets go first (token_in may be the slot's own
	 * text): another worker here may get the job back at once, and its
	 * claim takes over a running job only when no slot holds it. */
	char token[GV_QUEUE_TOKEN_MAX + 1];
	snprintf(token, sizeof(token), "%s", token_in);
	struct worker_slot *slot = &w->d->slots[w->index];
	exec_daemon_slot_claimed(w, false);
	if (strcmp(slot->token, token) == 0)
		slot->token[0] = '\0';
	char inf[GV_QUEUE_KEY_MAX];
	struct gv_err err;
	if (gv_queue_key_inflight(inf, sizeof(inf), w->d->node, &err) != 0 ||
	    gv_queue_requeue_token(w->r, NULL, inf, token, &err) < 0)
		gv_error(&w->d->log, "could not hand back %s (%s): %s; the scheduler will once this node is gone",
			 token, why, err.msg);
	else
		gv_warn(&w->d->log, "handed back %s: %s", token, why);
}

/* The GPUs of one job, assigned by job_gpus_take. */
struct job_gpus {
	unsigned n;
	unsigned ids[EXEC_GPU_MAX];
	char ids_text[EXEC_GPU_IDS_TEXT_MAX];
	struct exec_gpu_node nodes[EXEC_GPU_NODES_MAX]; /* real GPUs only */
	size_t n_nodes;
	uint64_t since_ms;
};

/* Assigns want GPUs of this node to the worker's job. 0: done (none when
 * want is 0); 1: not enough free (a stale placement: hand the job back);
 * -1: the job cannot run here (no GPU on this node, device nodes gone),
 * err says why. Fail closed: real GPUs only with the proxy, which the
 * inventory check made sure of at start. */
static int job_gpus_take(struct worker *w, unsigned want, struct job_gpus *g, struct gv_err *err)
{
	memset(g, 0, sizeof(*g));
	if (want == 0)
		return 0;
	const struct daemon *d = w->d;
	if (d->gpu.n == 0)
		return gv_err_set(err, GV_EINVAL, "this node has no GPU support (no executor.gpus, or no runsc "
						  "--nvproxy)");
	if (want > d->gpu.n)
		return gv_err_set(err, GV_ELIMIT, "%u GPUs asked, this node has %u", want, d->gpu.n);
	if (exec_gpu_claim(d->gpu_table, w->index, want, g->ids, err) != 0)
		return 1;
	g->n = want;
	g->since_ms = exec_daemon_mono_ms();
	int rc = 0;
	if (exec_gpu_ids_text(g->ids, g->n, g->ids_text, sizeof(g->ids_text)) != 0)
		rc = gv_err_set(err, GV_ELIMIT, "GPU ids too long");
	else if (!d->gpu.simulated)
		rc = exec_gpu_device_nodes("/dev", g->ids, g->n, g->nodes, EXEC_GPU_NODES_MAX, &g->n_nodes, err);
	if (rc != 0) {
		exec_gpu_release(d->gpu_table, w->index);
		g->n = 0;
	}
	return rc;
}

/* One job from its token to its acknowledgement. */
struct job {
	const char *token;
	struct gv_queue_token t;
	struct gv_log_ctx ctx;
	struct gv_jobspec spec;
	/* What running it produced. */
	json_t *result;
	struct exec_inline_summary sum;
	const char *language; /* borrowed from spec; "" when it did not parse */
	char gpu_ids[EXEC_GPU_IDS_TEXT_MAX];
	uint64_t gpu_ms;
};

static void job_internal_error(struct job *j, const char *phase, const char *msg)
{
	j->result = gv_result_internal_error(phase, msg);
	snprintf(j->sum.verdict, sizeof(j->sum.verdict), "IE");
}

/* Removes a token that does not parse from the in-flight list: there is
 * no job to run or to hand back. */
static void drop_bad_token(struct worker *w, const char *token, struct gv_err *err)
{
	gv_error(&w->d->log, "dropping a bad token: %s", err->msg);
	char inf[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_inflight(inf, sizeof(inf), w->d->node, err) == 0) {
		redisReply *rep = gv_redis_command(w->r, err, "LREM %s 1 %s", inf, token);
		gv_redis_reply_free(rep);
	}
}

/* Runs the sandboxes of a job whose language this node offers, with the
 * GPUs g holds (released here, their time counted into j->gpu_ms). The
 * tenant's egress policy is read from PostgreSQL for an inline job; a
 * stored problem's judge runs without a network. */
static void job_execute(struct worker *w, struct job *j, const struct lang_def *lang, struct job_gpus *g,
			struct gv_err *err)
{
	struct progress_arg pa = { .w = w, .sid = j->t.sid, .tid = j->t.tid, .gpu_ids = g->ids_text };
	struct exec_inline_opts o = {
		.tenant = j->t.tid,
		.node = w->d->node,
		.progress = on_progress,
		.progress_arg = &pa,
		.sandbox_started = on_sandbox_started,
		.sandbox_arg = &pa,
		.gpu_visible = g->n ? g->ids_text : NULL,
		.gpu_nodes = g->nodes,
		.n_gpu_nodes = g->n_nodes,
	};
	struct exec_problem_judge_opts po = {
		.tenant = j->t.tid, .sid = j->t.sid, .node = w->d->node,
		.progress = on_progress, .progress_arg = &pa,
	};
	if (j->spec.problem_id)
		j->result = exec_problem_judge_run(&w->penv, lang, &j->spec, &po, &j->sum, err);
	else if (load_egress_retrying(w, j->t.tid, err) != 0) {
		job_internal_error(j, j->spec.has_tests ? "judge" : "run", err->msg);
	} else {
		o.egress = w->egress_granted ? w->egress : NULL;
		w->engine.net_blocked = 0;
		j->result = exec_inline_run(&w->engine, lang, &j->spec, &o, &j->sum, err);
		w->egress_blocked = w->engine.net_blocked;
	}
	if (g->n) {
		/* GPU time: every device held, from assignment to the end. */
		j->gpu_ms = (exec_daemon_mono_ms() - g->since_ms) * g->n;
		snprintf(j->gpu_ids, sizeof(j->gpu_ids), "%s", g->ids_text);
		exec_gpu_release(w->d->gpu_table, w->index);
	}
}

/* Runs a parsed job into j->result: 0 when there is a result (IE when the
 * job cannot run on this node), 1 when it must be handed back instead (a
 * stale GPU placement; err says why). */
static int job_run_spec(struct worker *w, struct job *j, struct gv_err *err)
{
	j->language = j->spec.language;
	const struct lang_def *lang = lang_find(&w->d->langs, j->spec.language);
	bool ok = lang && w->d->offered[lang - w->d->langs.defs];
	struct job_gpus g;
	int gpu_rc = ok ? job_gpus_take(w, j->spec.gpus, &g, err) : 0;
	if (gpu_rc > 0)
		return 1; /* a stale placement: for a node with free GPUs */
	if (!ok || gpu_rc < 0) {
		char msg[GV_ERR_MSG_MAX];
		snprintf(msg, sizeof(msg), "%s", ok ? err->msg : "language not available on this node");
		job_internal_error(j, j->spec.has_tests ? "judge" : "run", msg);
		return 0;
	}
	job_execute(w, j, lang, &g, err);
	return 0;
}

/* The result document as the text of its row (caller frees), consuming
 * j->result: an IE document when it is too large to store or memory ran
 * out, NULL only when even that could not be made. */
static char *job_result_text(struct job *j, struct gv_err *err)
{
	char *text = j->result ? gv_json_dump(j->result, JSON_COMPACT, DAEMON_RESULT_MAX, NULL, err) : NULL;
	if (!text && j->result && err->code == GV_ELIMIT) {
		/* The exact-bytes twins are what a result holds beyond its text
		 * forms: without them it may still fit, as the text alone. */
		gv_result_drop_twins(j->result);
		text = gv_json_dump(j->result, JSON_COMPACT, DAEMON_RESULT_MAX, NULL, err);
	}
	json_decref(j->result);
	j->result = NULL;
	if (!text) {
		/* Too large or out of memory: record an IE rather than nothing. */
		json_t *ie = gv_result_internal_error(j->spec.has_tests ? "judge" : "run", "result too large to store");
		text = ie ? gv_json_dump(ie, JSON_COMPACT, 1 << 20, NULL, err) : NULL;
		json_decref(ie);
		snprintf(j->sum.verdict, sizeof(j->sum.verdict), "IE");
	}
	return text;
}

/* Acknowledges a finished job, trying again for ACK_RETRY_MS while Redis
 * is away (a Sentinel failover takes seconds): until then the token holds
 * one of this node's slots. After that the scheduler's reconciler removes
 * it, seeing the job finished in PostgreSQL. */
static void acknowledge(struct worker *w, const struct gv_queue_token *t, const struct gv_log_ctx *ctx,
			struct gv_err *err)
{
	struct gv_backoff_window tries;
	gv_backoff_window_start(&tries, ACK_RETRY_MS, 200, 2000);
	exec_daemon_slot_claimed(w, false);
	while (gv_queue_complete(w->r, w->d->node, t, err) != 0) {
		if (!gv_backoff_window_next(&tries)) {
			gv_warn(ctx, "acknowledging: %s (the result stands; the reconciler frees the slot)", err->msg);
			return;
		}
	}
}

/* Stores the result (a few attempts), schedules its webhook and
 * acknowledges the job; hands the job back when the result cannot be
 * stored. Consumes j->result. */
static void job_finish(struct worker *w, struct job *j, uint64_t t0, struct gv_err *err)
{
	char *text = job_result_text(j, err);
	const char *verdict = gv_result_verdict_ok(j->sum.verdict) ? j->sum.verdict : "IE";
	bool recorded = false;
	int rc = -1;
	/* Written at most once whatever happens (write_result), so a retry
	 * after a commit lost with its connection is safe. */
	struct gv_backoff_window tries;
	gv_backoff_window_start(&tries, RESULT_RETRY_MS, 200, 3000);
	while (text && (rc = write_result(w, &j->t, verdict, text, &j->sum, j->language, j->gpu_ids, j->gpu_ms,
					  &recorded, err)) != 0) {
		gv_warn(&j->ctx, "writing the result: %s", err->msg);
		if (!gv_backoff_window_next(&tries))
			break;
	}
	free(text);
	if (rc != 0) {
		exec_daemon_hand_back(w, j->token, "the result could not be stored");
		return;
	}
	/* The outbox row committed with the result; a crash or a Redis
	 * failure before this ZADD delays the webhook until the delivery
	 * process recovers it from the outbox (executor/daemon/webhook.h). */
	if (recorded && j->spec.callback_url && gv_webhook_enqueue(w->r, j->t.tid, j->t.sid, err) != 0)
		gv_warn(&j->ctx, "scheduling the webhook: %s; the outbox brings it back", err->msg);
	acknowledge(w, &j->t, &j->ctx, err);
	gv_info(&j->ctx, "%s %s in %llu ms%s", j->language, verdict, (unsigned long long)(exec_daemon_mono_ms() - t0),
		recorded ? "" : " (already finished by an earlier run)");
}

void exec_daemon_job_run(struct worker *w, const char *token)
{
	struct job j;
	struct gv_err err;
	memset(&j, 0, sizeof(j));
	gv_err_clear(&err);
	w->egress_granted = false;
	w->egress_blocked = 0;
	j.token = token;
	j.language = "";
	w->n_deferred = 0;
	if (gv_queue_token_parse(token, strlen(token), &j.t, &err) != 0) {
		drop_bad_token(w, token, &err);
		return;
	}
	j.ctx = (struct gv_log_ctx){ .tenant = j.t.tid, .job = j.t.sid, .node = w->d->node };
	char status[32] = "";
	bool gone = false;
	long attempts = 0;
	char *req = claim(w, token, &j.t, status, sizeof(status), &gone, &attempts, &err);
	if (!req && !gone) {
		exec_daemon_hand_back(w, token, err.msg);
		gv_backoff_sleep_ms(1000);
		return;
	}
	if (req)
		exec_daemon_slot_claimed(w, true);
	if (gone && strcmp(status, "running") == 0) {
		gv_warn(&j.ctx, "not run again: another worker or node is running it (a token given out twice)");
		drop_duplicate_token(w, token, held_by_other_worker(w, token), &err);
		return;
	}
	if (gone) {
		gv_info(&j.ctx, "nothing to run (status %s)", status);
		if (gv_queue_complete(w->r, w->d->node, &j.t, &err) != 0)
			gv_warn(&j.ctx, "acknowledging: %s", err.msg);
		return;
	}
	if (exec_daemon_kernel_request(req)) {
		exec_daemon_kernel_run(w, &j.t, req, attempts);
		free(req);
		return;
	}
	uint64_t t0 = exec_daemon_mono_ms();
	if (gv_jobspec_parse(req, strlen(req), &j.spec, &err) != 0) {
		char msg[GV_ERR_MSG_MAX + 32];
		snprintf(msg, sizeof(msg), "stored request: %s", err.msg);
		job_internal_error(&j, NULL, msg);
	} else if (job_run_spec(w, &j, &err) > 0) {
		free(req);
		gv_jobspec_free(&j.spec);
		exec_daemon_hand_back(w, token, err.msg);
		gv_backoff_sleep_ms(1000);
		return;
	}
	free(req);
	job_finish(w, &j, t0, &err);
	gv_jobspec_free(&j.spec);
}
