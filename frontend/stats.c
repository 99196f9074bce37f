/* GET /v1/health, GET /metrics and Judge0's GET /workers: one Redis
 * script reads the executors and queues atomically, a SELECT 1 checks
 * PostgreSQL, and the answer is rendered for the route when both came
 * back (Prometheus text for /metrics, with the request counters of
 * metrics.c). */
#include "frontend/stats.h"

#include <event2/buffer.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/queue.h"
#include "frontend/api.h"
#include "frontend/metrics.h"

/* Statistics of the queues and executors, read atomically by one script:
 * {nodes, alive, capacity, running, queued_total, burst, assigned,
 * working, stale_slots, retried, kernel_nodes, kernel_slots, kernel_mb,
 * kernel_mb_held, kernels, tid1, len1, tid2, ...}. capacity and burst are
 * the regular and burst slots (common/queue.h) of the alive judging
 * executors, running the jobs they last said they run; assigned the jobs
 * waiting in the nodes' queues (gavel:nq:*, not started), working the
 * running jobs of each alive judging executor capped at its slots,
 * stale_slots the slots of registered executors whose heartbeat is too
 * old, retried the jobs in flight on a second or later assignment
 * (gavel:attempts above 1: an earlier attempt was lost). The alive kernel
 * nodes (kernel_mb > 0) count apart: their workers, the memory they offer
 * to kernels, the memory the kernels placed there hold (the ":k<mb>" of
 * their tokens) and those kernels. ARGV[1]: heartbeat timeout in ms. */
static const char STATS_LUA[] =
	GV_QUEUE_LUA_NOW
	"local nodes = redis.call('SMEMBERS', '" GV_QUEUE_EXECUTORS "') "
	"local alive, cap, run, burst, assigned, working, stale = 0, 0, 0, 0, 0, 0, 0 "
	"local knodes, kslots, kmb, kheld, kernels = 0, 0, 0, 0, 0 "
	"for _, n in ipairs(nodes) do "
	"  local h = " GV_QUEUE_LUA_EXEC_HMGET("'capacity', 'running', 'burst', 'kernel_mb'") " "
	"  local c, r, b = tonumber(h[2]) or 0, tonumber(h[3]) or 0, tonumber(h[4]) or 0 "
	"  local km = tonumber(h[5]) or 0 "
	"  assigned = assigned + redis.call('LLEN', '" GV_QUEUE_NQ_PREFIX "' .. n) "
	"  if " GV_QUEUE_LUA_ALIVE " and km > 0 then "
	"    knodes = knodes + 1; kslots = kslots + c; kmb = kmb + km "
	"    for _, l in ipairs({'" GV_QUEUE_NQ_PREFIX "', '" GV_QUEUE_INFLIGHT_PREFIX "'}) do "
	"      for _, t in ipairs(redis.call('LRANGE', l .. n, 0, -1)) do "
	"        local mb = tonumber(string.match(t, ':k(%d+)$')) "
	"        if mb then kheld = kheld + mb; kernels = kernels + 1 end end end "
	"  elseif " GV_QUEUE_LUA_ALIVE " then "
	"    alive = alive + 1; cap = cap + c; run = run + r; burst = burst + b "
	"    working = working + math.max(0, math.min(r, c + b)) "
	"  else stale = stale + c + b end "
	"end "
	"local retried = 0 "
	"for _, a in ipairs(redis.call('HVALS', '" GV_QUEUE_ATTEMPTS "')) do "
	"  if (tonumber(a) or 0) > 1 then retried = retried + 1 end end "
	"local out = {#nodes, alive, cap, run, 0, burst, assigned, working, stale, retried, "
	"  knodes, kslots, kmb, kheld, kernels} "
	"local total = 0 "
	"for _, tid in ipairs(redis.call('SMEMBERS', '" GV_QUEUE_BACKLOG "')) do "
	"  local l = redis.call('LLEN', '" GV_QUEUE_TQ_PREFIX "' .. tid) "
	"  total = total + l; table.insert(out, tid); table.insert(out, l) end "
	"out[5] = total "
	"return out";

#define STATS_FIXED 15 /* numbers before the tenant pairs */

struct fe_stats {
	bool redis_ok;
	long long nodes, alive, capacity, burst, running, queued;
	long long assigned, working, stale_slots, retried;
	long long kernel_nodes, kernel_slots, kernel_mb, kernel_mb_held, kernels;
	json_t *tenants; /* {tid: depth} */
	bool pg_ok;
	int pending;
};

static void stats_done(struct fe_req *r, struct fe_stats *st);

static void on_stats(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	struct fe_stats *st = r->stats;
	if (reply && reply->type == REDIS_REPLY_ARRAY && reply->elements >= STATS_FIXED) {
		st->redis_ok = true;
		st->nodes = reply->element[0]->integer;
		st->alive = reply->element[1]->integer;
		st->capacity = reply->element[2]->integer;
		st->running = reply->element[3]->integer;
		st->queued = reply->element[4]->integer;
		st->burst = reply->element[5]->integer;
		st->assigned = reply->element[6]->integer;
		st->working = reply->element[7]->integer;
		st->stale_slots = reply->element[8]->integer;
		st->retried = reply->element[9]->integer;
		st->kernel_nodes = reply->element[10]->integer;
		st->kernel_slots = reply->element[11]->integer;
		st->kernel_mb = reply->element[12]->integer;
		st->kernel_mb_held = reply->element[13]->integer;
		st->kernels = reply->element[14]->integer;
		for (size_t i = STATS_FIXED; i + 1 < reply->elements; i += 2)
			if (reply->element[i]->type == REDIS_REPLY_STRING)
				json_object_set_new(st->tenants, reply->element[i]->str,
						    json_integer(reply->element[i + 1]->integer));
	}
	if (--st->pending == 0)
		stats_done(r, st);
	fe_req_unref(r);
}

static void on_pg_ping(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	struct fe_stats *st = r->stats;
	st->pg_ok = !error && n == 1 && res[0];
	if (--st->pending == 0)
		stats_done(r, st);
	fe_req_unref(r);
}

void fe_handle_stats(struct fe_req *r)
{
	struct fe_stats *st = calloc(1, sizeof(*st));
	if (!st || !(st->tenants = json_object())) {
		free(st);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	r->stats = st; /* freed by stats_done, or by the cleanup if never done */
	st->pending = 2;
	struct gv_err err;
	char hb[24];
	snprintf(hb, sizeof(hb), "%d", GV_QUEUE_HEARTBEAT_TIMEOUT_MS);
	const char *argv[] = { "EVAL", STATS_LUA, "0", hb };
	fe_req_ref(r);
	if (fe_redis_command(r->w->redis, on_stats, r, 4, argv, NULL, &err) < 0) {
		st->pending--;
		fe_req_unref(r);
	}
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, "SELECT 1", 0);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, NULL, &s, 1, on_pg_ping, r, &err) < 0) {
		st->pending--;
		fe_req_unref(r);
	}
	if (st->pending == 0)
		stats_done(r, st);
}

static void stats_done(struct fe_req *r, struct fe_stats *st)
{
	struct fe_app *app = r->w->app;
	r->stats = NULL;
	switch (r->m.route->id) {
	case FE_ROUTE_V1_HEALTH: {
		bool ok = st->pg_ok && st->redis_ok;
		json_t *j = json_pack("{s:s,s:{s:b},s:{s:b},s:{s:I,s:I,s:I,s:I,s:I},s:{s:I,s:I,s:I,s:I,s:I},s:I}",
				      "status", !ok ? "unavailable" : st->alive > 0 ? "ok" : "degraded", "postgres",
				      "ok", st->pg_ok, "redis", "ok", st->redis_ok, "executors", "registered",
				      (json_int_t)st->nodes, "alive", (json_int_t)st->alive, "capacity",
				      (json_int_t)st->capacity, "burst", (json_int_t)st->burst, "running",
				      (json_int_t)st->running, "kernel_nodes", "alive", (json_int_t)st->kernel_nodes,
				      "slots", (json_int_t)st->kernel_slots, "memory_mb", (json_int_t)st->kernel_mb,
				      "memory_mb_held", (json_int_t)st->kernel_mb_held, "kernels",
				      (json_int_t)st->kernels, "queued", (json_int_t)st->queued);
		fe_reply_json(r, ok ? 200 : 503, j);
		break;
	}
	case FE_ROUTE_J0_WORKERS: {
		if (!st->redis_ok) {
			fe_reply_error(r, 503, "unavailable", "the queues (Redis) cannot be read");
			break;
		}
		struct fe_j0_workers w;
		fe_j0_workers_count(st->queued, st->assigned, st->capacity + st->burst, st->working, st->stale_slots,
				    st->retried, &w);
		fe_reply_json(r, 200,
			      json_pack("[{s:s,s:I,s:I,s:I,s:I,s:I,s:I}]", "queue", "default", "size", (json_int_t)w.size,
					"available", (json_int_t)w.available, "idle", (json_int_t)w.idle, "working",
					(json_int_t)w.working, "paused", (json_int_t)w.paused, "failed",
					(json_int_t)w.failed));
		break;
	}
	default: {
		struct evbuffer *b = evbuffer_new();
		if (!b) {
			fe_reply_error(r, 500, "internal", "out of memory");
			break;
		}
		fe_metrics_render(app->metrics, atomic_load(&app->connections), b);
		evbuffer_add_printf(b, "# HELP gavel_up_postgres PostgreSQL answered this frontend.\n"
				       "# TYPE gavel_up_postgres gauge\ngavel_up_postgres %d\n", st->pg_ok);
		evbuffer_add_printf(b, "# HELP gavel_up_redis Redis answered this frontend.\n"
				       "# TYPE gavel_up_redis gauge\ngavel_up_redis %d\n", st->redis_ok);
		evbuffer_add_printf(b, "# HELP gavel_executors Executors registered and alive.\n"
				       "# TYPE gavel_executors gauge\n"
				       "gavel_executors{state=\"registered\"} %lld\n"
				       "gavel_executors{state=\"alive\"} %lld\n", st->nodes, st->alive);
		evbuffer_add_printf(b, "# HELP gavel_executor_slots Sandbox slots of alive executors: capacity the regular ones "
				       "(executor.max_parallel), running the jobs in regular and burst slots.\n"
				       "# TYPE gavel_executor_slots gauge\n"
				       "gavel_executor_slots{state=\"capacity\"} %lld\n"
				       "gavel_executor_slots{state=\"running\"} %lld\n", st->capacity, st->running);
		evbuffer_add_printf(b, "# HELP gavel_executor_burst_slots Burst slots of alive executors "
				       "(executor.burst_slots): beyond capacity, only for tenants below their fair share.\n"
				       "# TYPE gavel_executor_burst_slots gauge\n"
				       "gavel_executor_burst_slots %lld\n", st->burst);
		evbuffer_add_printf(b, "# HELP gavel_kernel_nodes Alive kernel nodes (executor.kernel_memory_mb).\n"
				       "# TYPE gavel_kernel_nodes gauge\ngavel_kernel_nodes %lld\n"
				       "# HELP gavel_kernel_memory_mb Kernel nodes' memory for notebook kernels: offered, "
				       "and held by the budgets of the kernels placed there.\n"
				       "# TYPE gavel_kernel_memory_mb gauge\n"
				       "gavel_kernel_memory_mb{state=\"offered\"} %lld\n"
				       "gavel_kernel_memory_mb{state=\"held\"} %lld\n"
				       "# HELP gavel_kernel_node_kernels Kernels placed on kernel nodes, and their workers.\n"
				       "# TYPE gavel_kernel_node_kernels gauge\n"
				       "gavel_kernel_node_kernels{state=\"placed\"} %lld\n"
				       "gavel_kernel_node_kernels{state=\"slots\"} %lld\n",
				    st->kernel_nodes, st->kernel_mb, st->kernel_mb_held, st->kernels, st->kernel_slots);
		evbuffer_add_printf(b, "# HELP gavel_queue_depth Submissions waiting in a tenant's queue.\n"
				       "# TYPE gavel_queue_depth gauge\n");
		const char *tid;
		json_t *v;
		json_object_foreach(st->tenants, tid, v) {
			if (gv_queue_tid_ok(tid))
				evbuffer_add_printf(b, "gavel_queue_depth{tenant=\"%s\"} %lld\n", tid,
						    (long long)json_integer_value(v));
		}
		fe_reply_raw(r, 200, "text/plain; version=0.0.4", b);
		evbuffer_free(b);
	}
	}
	fe_stats_free(st);
}

void fe_stats_free(struct fe_stats *st)
{
	json_decref(st->tenants);
	free(st);
}
