/* Creating submissions: POST /v1/submissions, Judge0's create and batch
 * create, Piston's execute. A request is parsed by its API (api_*.c),
 * checked against the tenant's per-job ceilings and, for GPU jobs, against
 * the largest live executor; its row is stored through the group commit
 * (commit.c), then enqueued in Redis; wait=true (and Piston) answers when
 * the run finishes or the wait times out. */
#include "frontend/submit.h"

#include <event2/buffer.h>
#include <hiredis/hiredis.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobspec.h"
#include "common/json.h"
#include "common/log.h"
#include "common/queue.h"
#include "frontend/api_problems.h"
#include "frontend/api_tenant.h"
#include "frontend/commit.h"
#include "frontend/metrics.h"
#include "frontend/rows.h"
#include "frontend/waiters.h"

json_t *fe_read_json_body(struct fe_req *r)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(r->req);
	size_t len = evbuffer_get_length(in);
	size_t max = r->w->app->cfg->max_body_size;
	if (len > max) {
		fe_reply_error(r, 413, "too_large", "request body over %zu bytes", max);
		return NULL;
	}
	if (len == 0) {
		fe_reply_error(r, 400, "invalid_json", "request body is empty; expected JSON");
		return NULL;
	}
	const char *buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
	if (!buf) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return NULL;
	}
	struct gv_err err;
	json_t *j = gv_json_parse(buf, len, max, 0, &err);
	if (!j) {
		fe_reply_error(r, err.code == GV_ELIMIT ? 413 : 400,
			       err.code == GV_ELIMIT ? "too_large" : "invalid_json", "malformed JSON: %s", err.msg);
		return NULL;
	}
	return j;
}

/* ---------------------------------------------------- wait=true answers */

static void on_wait_row(struct fe_req *r, struct fe_rowbuf *rb, const char *error)
{
	if (!r->waiting)
		return;
	if (error) {
		/* Keep waiting: the deadline answers if the database stays down. */
		gv_warn(NULL, "wait: %s", error);
		return;
	}
	if (!rb) {
		fe_wait_stop(r);
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	if (!fe_row_final(&rb->row))
		return;
	fe_wait_stop(r);
	fe_row_answer(r, r->api == FE_API_PISTON || r->api == FE_API_JOBE ? 200 : 201, rb);
}

static void wait_wake(struct fe_req *r)
{
	if (!r->fetching)
		fe_row_fetch(r, r->api == FE_API_JUDGE0, on_wait_row);
}

static void on_wait_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_req *r = arg;
	if (!r->waiting)
		return;
	fe_req_ref(r);
	fe_wait_stop(r);
	atomic_fetch_add(&r->w->app->metrics->waits_timed_out, 1);
	if (r->api == FE_API_PISTON)
		fe_reply_error(r, 504, "timeout", "the run did not finish within %llu ms (id %s)",
			       (unsigned long long)r->w->app->cfg->wait_timeout_ms, r->sid);
	else if (r->api == FE_API_JUDGE0)
		fe_reply_json(r, 202, json_pack("{s:s}", "token", r->sid));
	else if (r->api == FE_API_JOBE)
		fe_reply_json(r, 202, json_pack("{s:s}", "run_id", r->sid));
	else
		fe_reply_json(r, 202, json_pack("{s:s,s:s}", "id", r->sid, "status", "queued"));
	fe_req_unref(r);
}

/* ----------------------------------------------------------- creation */

static void answer_created(struct fe_req *r, bool wait)
{
	if (wait && r->batch_n == 1) {
		/* The waiter was registered before the enqueue; a fetch now
		 * covers a job that finished before we subscribed. */
		if (r->waiting)
			wait_wake(r);
		return;
	}
	if (r->api == FE_API_JUDGE0 && r->batch_result) {
		json_t *out = r->batch_result;
		r->batch_result = NULL;
		fe_reply_json(r, 201, out);
		return;
	}
	if (r->api == FE_API_JUDGE0)
		fe_reply_json(r, 201, json_pack("{s:s}", "token", r->batch_ids[0]));
	else
		fe_reply_json(r, 201, json_pack("{s:s,s:s}", "id", r->batch_ids[0], "status", "queued"));
}

static void on_enqueued(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	if (!reply || reply->type != REDIS_REPLY_ARRAY) {
		/* Stored in PostgreSQL: the scheduler's reconciler enqueues it. */
		atomic_fetch_add(&r->w->app->metrics->enqueue_failures, 1);
		gv_warn(NULL, "enqueue failed: %s", reply && reply->type == REDIS_REPLY_ERROR ? reply->str : "redis down");
	}
	answer_created(r, r->waiting);
	fe_req_unref(r);
}

static void enqueue(struct fe_req *r)
{
	struct fe_redis *rd = r->w->redis;
	struct gv_err err;
	const char *multi[] = { "MULTI" }, *exec[] = { "EXEC" };
	if (fe_redis_command(rd, NULL, NULL, 1, multi, NULL, &err) < 0)
		goto fail;
	for (size_t i = 0; i < r->batch_n; i++) {
		struct gv_queue_argv a;
		if (gv_queue_enqueue_argv(&a, r->tenant_id, r->batch_ids[i], false, &err) < 0)
			goto discard;
		for (int k = 0; k < 3; k++)
			if (fe_redis_command(rd, NULL, NULL, a.argc[k], a.argv[k], a.argvlen[k], &err) < 0)
				goto fail;
	}
	for (int k = 0; k < 2; k++)
		if (fe_redis_command(rd, NULL, NULL, gv_queue_wake_queued_argc[k], (const char **)gv_queue_wake_queued_argv[k],
				     NULL, &err) < 0)
			goto fail;
	fe_req_ref(r);
	if (fe_redis_command(rd, on_enqueued, r, 1, exec, NULL, &err) == 0)
		return;
	fe_req_unref(r);
	goto fail;
discard: {
	const char *d[] = { "DISCARD" };
	struct gv_err derr;
	if (fe_redis_command(rd, NULL, NULL, 1, d, NULL, &derr) < 0)
		gv_warn(NULL, "redis DISCARD: %s", derr.msg);
}
fail:
	atomic_fetch_add(&r->w->app->metrics->enqueue_failures, 1);
	gv_warn(NULL, "enqueue failed: %s (the reconciler re-enqueues)", err.msg);
	answer_created(r, r->waiting);
}

/* The end of a submission's INSERT (commit.h's fe_store_done_fn). */
static void on_inserted(struct fe_req *r, int rows, const char *error, bool unavailable)
{
	if (unavailable || error || rows < 0) {
		if (r->waiting)
			fe_wait_stop(r);
		if (unavailable)
			fe_reply_error(r, 503, "unavailable", "%s", error ? error : "database unavailable");
		else
			fe_reply_db_error(r, error ? error : "no result");
		fe_req_unref(r);
		return;
	}
	if ((size_t)rows != r->batch_n) {
		if (r->waiting)
			fe_wait_stop(r);
		fe_reply_error(r, 429, "quota_exceeded", "max_queued: at most %d queued submissions",
			       r->quota.max_queued);
		fe_req_unref(r);
		return;
	}
	atomic_fetch_add(&r->w->app->metrics->submissions_created, r->batch_n);
	enqueue(r);
	fe_req_unref(r);
}

/* A limit the client left to the default is lowered to the tenant's
 * ceiling; one it asked for explicitly is checked against it (422). */
static void clamp_default(json_t *limits, const char *key, uint32_t *eff, int64_t ceiling)
{
	if (json_integer_value(json_object_get(limits, key)) == 0 && ceiling > 0 && *eff > ceiling) {
		*eff = (uint32_t)ceiling;
		json_object_set_new(limits, key, json_integer(ceiling));
	}
}

/* Checks the tenant's per-job ceilings; 0 ok, -1 with e (422). */
static int check_quota(struct fe_req *r, struct fe_job *job, struct fe_apierr *e)
{
	json_t *limits = json_object_get(job->spec, "limits");
	if (limits) {
		clamp_default(limits, "time_ms", &job->time_ms, r->quota.max_cpu_ms);
		clamp_default(limits, "wall_ms", &job->wall_ms, r->quota.max_wall_ms);
		clamp_default(limits, "memory_mb", &job->memory_mb, r->quota.max_memory_mb);
		clamp_default(limits, "output_kb", &job->output_kb, r->quota.max_output_kb);
	}
	struct tenant_job_request q = {
		.language = job->lang->id,
		.cpu_ms = job->time_ms,
		.wall_ms = job->wall_ms,
		.memory_mb = job->memory_mb,
		.output_kb = job->output_kb,
		.gpus = json_integer_value(json_object_get(job->spec, "gpus")),
	};
	struct tenant_quota_violation v;
	if (tenant_quota_check_job(&r->quota, &q, &v) != 0) {
		fe_audit_refusal(r, v.limit, 422, v.requested, v.allowed);
		if (r->api == FE_API_JUDGE0) {
			fe_j0_quota_error(&v, e);
			return -1;
		}
		return fe_apierr_set(e, 422, "quota_exceeded", "%s", v.message);
	}
	struct gv_jobspec spec;
	struct gv_err err;
	int rc = gv_jobspec_from_json(job->spec, &spec, &err);
	gv_jobspec_free(&spec);
	if (rc < 0)
		return fe_apierr_set(e, err.code == GV_ELIMIT ? 413 : 400,
				     err.code == GV_ELIMIT ? "too_large" : "invalid_request", "%s", err.msg);
	return 0;
}

/* Stores jobs (already validated; ids in r->batch_ids) in one statement,
 * then enqueues them. */
static void store(struct fe_req *r, json_t *rows, bool wait)
{
	struct gv_err err;
	char *text = gv_json_dump(rows, JSON_COMPACT, 512u * 1024 * 1024, NULL, &err);
	json_decref(rows);
	if (!text) {
		fe_reply_error(r, 500, "internal", "%s", err.msg);
		return;
	}
	struct fe_store *it = fe_store_new(r, text, on_inserted);
	if (!it) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	if (wait) {
		snprintf(r->sid, sizeof(r->sid), "%s", r->batch_ids[0]);
		fe_wait_start(r, wait_wake);
		if (fe_wait_timer(r, r->w->app->cfg->wait_timeout_ms, on_wait_timeout) < 0) {
			fe_wait_stop(r);
			fe_store_free(it);
			fe_reply_error(r, 500, "internal", "timer setup failed");
			return;
		}
	}
	fe_req_ref(r);
	fe_store_submit(r->w, it);
}

static json_t *row_of(const char *sid, const struct fe_job *job)
{
	return json_pack("{s:s,s:s,s:O}", "id", sid, "language", job->lang->id, "request", job->spec);
}

/* The most GPUs one alive executor declares (gavel:exec:<node> gpus,
 * heartbeat younger than ARGV[1] ms): a job asking for more can never be
 * placed, so it is refused at submit time (422), not left queued. */
static const char GPU_LARGEST_LUA[] =
	GV_QUEUE_LUA_NOW
	"local best = 0 "
	"for _, n in ipairs(redis.call('SMEMBERS', '" GV_QUEUE_EXECUTORS "')) do "
	"  local h = " GV_QUEUE_LUA_EXEC_HMGET("'gpus'") " "
	"  if " GV_QUEUE_LUA_ALIVE " and (tonumber(h[2]) or 0) > best then "
	"    best = tonumber(h[2]) end "
	"end "
	"return best";

struct gpu_check {
	struct fe_req *r;
	json_t *rows;
	bool wait;
	json_int_t gpus;
};

static void on_gpu_largest(void *arg, redisReply *reply)
{
	struct gpu_check *g = arg;
	struct fe_req *r = g->r;
	if (!reply || reply->type != REDIS_REPLY_INTEGER) {
		json_decref(g->rows);
		fe_reply_error(r, 503, "unavailable", "the executor registry (Redis) cannot be read: GPU jobs are "
			       "not accepted now");
	} else if (g->gpus > reply->integer) {
		json_decref(g->rows);
		fe_audit_refusal(r, "node_gpus", 422, g->gpus, reply->integer);
		fe_reply_error(r, 422, "quota_exceeded", "gpus: requested %lld, the largest executor node has %lld",
			       (long long)g->gpus, (long long)reply->integer);
	} else {
		store(r, g->rows, g->wait);
	}
	free(g);
	fe_req_unref(r);
}

static void gpu_node_check(struct fe_req *r, json_t *rows, bool wait, json_int_t gpus)
{
	struct gpu_check *g = calloc(1, sizeof(*g));
	if (!g) {
		json_decref(rows);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	*g = (struct gpu_check){ .r = r, .rows = rows, .wait = wait, .gpus = gpus };
	struct gv_err err;
	char hb[24];
	snprintf(hb, sizeof(hb), "%d", GV_QUEUE_HEARTBEAT_TIMEOUT_MS);
	const char *argv[] = { "EVAL", GPU_LARGEST_LUA, "0", hb };
	fe_req_ref(r);
	if (fe_redis_command(r->w->redis, on_gpu_largest, g, 4, argv, NULL, &err) < 0)
		on_gpu_largest(g, NULL);
}

static void submit_checked(struct fe_req *r, struct fe_job *job, bool wait);

void fe_handle_create(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	json_t *body = fe_read_json_body(r);
	if (!body)
		return;
	struct fe_job job;
	struct fe_apierr e;
	int rc;
	bool wait = false;
	if (r->api == FE_API_JUDGE0) {
		r->j0_base64 = fe_query_bool(r, "base64_encoded");
		wait = fe_query_bool(r, "wait");
		if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
			json_decref(body);
			fe_reply_apierr(r, &e);
			return;
		}
		rc = fe_j0_parse(body, r->j0_base64, &app->cat, &app->bounds, &job, &e);
	} else if (r->api == FE_API_PISTON) {
		wait = true;
		rc = fe_piston_parse(body, &app->cat, &app->bounds, &job, &e);
	} else {
		wait = fe_query_bool(r, "wait");
		rc = fe_native_parse(body, &app->cat, &app->bounds, &job, &e);
	}
	json_decref(body);
	/* A playground's anonymous submission calls nobody back (a callback
	 * would let anyone make the service send requests) and judges against
	 * none of the tenant's stored problems. */
	if (rc == 0 && r->anonymous &&
	    (json_object_get(job.spec, "callback_url") || json_object_get(job.spec, "problem_id"))) {
		rc = -1;
		fe_apierr_set(&e, 403, "forbidden", "%s is not accepted from anonymous (playground) requests",
			      json_object_get(job.spec, "callback_url") ? "callback_url" : "problem_id");
		fe_job_clear(&job);
	}
	if (rc < 0 || check_quota(r, &job, &e) < 0) {
		if (rc == 0)
			fe_job_clear(&job);
		fe_reply_apierr(r, &e);
		return;
	}
	submit_checked(r, &job, wait);
}

/* Stores and enqueues one checked job (taken). */
static void submit_checked(struct fe_req *r, struct fe_job *job, bool wait)
{
	r->lang = job->lang;
	r->batch_ids = calloc(1, sizeof(char *));
	char sid[FE_SID_BUF];
	fe_new_id(sid);
	if (!r->batch_ids || !(r->batch_ids[0] = strdup(sid))) {
		fe_job_clear(job);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	r->batch_n = 1;
	json_int_t gpus = json_integer_value(json_object_get(job->spec, "gpus"));
	json_t *rows = json_pack("[o]", row_of(sid, job));
	fe_job_clear(job);
	if (!rows) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	if (json_object_get(json_object_get(json_array_get(rows, 0), "request"), "problem_id"))
		fe_problem_submission_check(r, rows, wait);
	else if (gpus > 0)
		gpu_node_check(r, rows, wait, gpus);
	else
		store(r, rows, wait);
}

void fe_submit_job(struct fe_req *r, struct fe_job *job, bool wait)
{
	struct fe_apierr e;
	if (check_quota(r, job, &e) < 0) {
		fe_job_clear(job);
		fe_reply_apierr(r, &e);
		return;
	}
	submit_checked(r, job, wait);
}

void fe_submission_store(struct fe_req *r, json_t *rows, bool wait)
{
	store(r, rows, wait);
}

void fe_handle_batch_create(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	struct fe_apierr e;
	r->j0_base64 = fe_query_bool(r, "base64_encoded");
	json_t *body = fe_read_json_body(r);
	if (!body)
		return;
	json_t *subs = json_object_get(body, "submissions");
	if (!json_is_array(subs) || json_array_size(subs) == 0) {
		json_decref(body);
		fe_reply_error(r, 400, "invalid_request", "field 'submissions': expected a non-empty array");
		return;
	}
	size_t n = json_array_size(subs);
	if (n > app->bounds.max_batch) {
		json_decref(body);
		fe_reply_error(r, 413, "too_large", "number of submissions in a batch should be less than or equal to %zu",
			       app->bounds.max_batch);
		return;
	}
	r->batch_result = json_array();
	r->batch_ids = calloc(n, sizeof(char *));
	json_t *rows = json_array();
	if (!r->batch_result || !r->batch_ids || !rows) {
		json_decref(body);
		json_decref(rows);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct fe_job job;
		if (fe_j0_parse(json_array_get(subs, i), r->j0_base64, &app->cat, &app->bounds, &job, &e) < 0 ||
		    check_quota(r, &job, &e) < 0) {
			if (job.spec)
				fe_job_clear(&job);
			/* Judge0 lists an invalid item's errors in its place. */
			json_array_append_new(r->batch_result, fe_j0_error_body(e.status, e.msg));
			continue;
		}
		char sid[FE_SID_BUF];
		fe_new_id(sid);
		r->batch_ids[r->batch_n] = strdup(sid);
		if (!r->batch_ids[r->batch_n]) {
			fe_job_clear(&job);
			continue;
		}
		r->batch_n++;
		json_array_append_new(rows, row_of(sid, &job));
		json_array_append_new(r->batch_result, json_pack("{s:s}", "token", sid));
		fe_job_clear(&job);
	}
	json_decref(body);
	if (r->batch_n == 0) {
		json_decref(rows);
		json_t *out = r->batch_result;
		r->batch_result = NULL;
		fe_reply_json(r, 422, out);
		return;
	}
	store(r, rows, false);
}

