/* A notebook kernel as a job of this node (executor/kernels/README.md):
 * from the claimed row to its result. The kernel itself runs in
 * executor/kernels/kernel.c; here are its budgets from the stored request,
 * the node-lost rule, its audit records, usage and the acknowledgement. */
#include "executor/daemon/daemon_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "executor/kernels/kernel.h"
#include "executor/sandbox/cpu_ceiling.h"
#include "tenants/audit.h"
#include "tenants/db.h"
#include "tenants/usage.h"

#define KIN_TIMEOUT_MS 10000 /* BLPOP waits 5 s: the command timeout must exceed it */

bool exec_daemon_kernel_request(const char *request)
{
	json_t *j = json_loads(request, 0, NULL);
	bool k = j && json_is_object(j) && json_is_string(json_object_get(j, "kind")) &&
		 !strcmp(json_string_value(json_object_get(j, "kind")), "kernel");
	json_decref(j);
	return k;
}

struct kernel_job {
	struct worker *w;
	const struct gv_queue_token *t;
	struct gv_log_ctx ctx;
	bool start_gated; /* holds a place of the node's start gate until it answers */
};

#define START_GATE_WAIT_MS 600000 /* then it starts anyway: a bound on the wait, not on starts */

/* On a kernel node, as many fresh kernels start at once as its CPU
 * ceiling has whole CPUs (node_gate.c). */
int exec_daemon_start_places(const struct exec_daemon_config *cfg)
{
	int n = cfg->kernel_cpu_ceiling_pct / 100;
	return n > 0 ? n : 1;
}

/* An integer member of o within [min, max], or -1. */
static long member_in(const json_t *o, const char *name, long min, long max)
{
	const json_t *v = json_object_get(o, name);
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return -1;
	return (long)json_integer_value(v);
}

/* The budgets of the stored request (migration 0016's ranges). */
static int parse_budgets(const char *request, struct exec_kernel_spec *spec, struct gv_err *err)
{
	json_t *j = json_loads(request, 0, NULL);
	const json_t *k = j ? json_object_get(j, "kernel") : NULL;
	long life = k ? member_in(k, "lifetime_s", 10, 43200) : -1;
	long idle = k ? member_in(k, "idle_s", 10, 43200) : -1;
	long mem = k ? member_in(k, "memory_mb", 64, 65536) : -1;
	/* Optional: absent, the node's quota. */
	long cpu = k && json_object_get(k, "cpu_pct") ? member_in(k, "cpu_pct", 10, 6400) : 0;
	const json_t *name = k ? json_object_get(k, "name") : NULL;
	int rc = 0;
	if (life < 0 || idle < 0 || mem < 0 || cpu < 0)
		rc = gv_err_set(err, GV_EINVAL, "stored kernel request: budgets missing or out of range");
	else if (!json_is_string(name) || strcmp(json_string_value(name), "python3"))
		rc = gv_err_set(err, GV_EINVAL, "stored kernel request: unknown kernel spec");
	json_decref(j);
	if (rc == 0) {
		spec->lifetime_s = (uint32_t)life;
		spec->idle_s = (uint32_t)idle;
		spec->memory_mb = (uint32_t)mem;
		spec->cpu_pct = (uint32_t)cpu;
	}
	return rc;
}

/* One audit record in its own transaction; a failure is logged (the
 * kernel's end is recorded with its result whatever happens here). */
static void audit(void *arg, const char *action, const char *sandbox, const char *details)
{
	struct kernel_job *kj = arg;
	struct worker *w = kj->w;
	struct gv_err err;
	PGconn *c = gv_pg_ensure(w->pg, &err) == 0 ? gv_pg_conn(w->pg) : NULL;
	if (!c || tenant_tx_begin(c, kj->t->tid, &err) != 0 ||
	    tenant_audit_append(c, kj->t->tid, w->actor, action, kj->t->sid, w->d->node, sandbox, details, &err) != 0 ||
	    tenant_tx_commit(c, &err) != 0) {
		tenant_tx_rollback(c);
		gv_warn(&kj->ctx, "audit %s: %s", action, err.msg);
	}
	/* A kernel node runs a hundred kernels for hours: a connection
	 * each, held between their rare records, would pass PostgreSQL's
	 * max_connections. */
	if (w->d->cfg->kernel_memory_mb > 0)
		gv_pg_release(w->pg);
}

static void on_ready(void *arg, uint64_t ms)
{
	struct kernel_job *kj = arg;
	gv_info(&kj->ctx, "kernel answers %llu ms after its claim", (unsigned long long)ms);
	if (kj->start_gated)
		exec_gate_give(kj->w, EXEC_GATE_START);
	kj->start_gated = false;
}

/* The result row, usage and kernel.stopped in one transaction, only if
 * nothing finished the row before (a DELETE of a queued kernel). */
static int write_end(struct kernel_job *kj, const struct exec_kernel_outcome *o, struct gv_err *err)
{
	struct worker *w = kj->w;
	json_t *r = json_pack("{s:{s:s,s:s,s:I,s:I,s:I,s:i,s:i}}", "kernel", "reason", o->reason, "message",
			      o->message, "kernel_ms", (json_int_t)o->kernel_ms, "peak_memory_kb",
			      (json_int_t)o->peak_memory_kb, "cpu_ms", (json_int_t)o->cpu_ms, "restarts",
			      (int)o->restarts, "interrupts", (int)o->interrupts);
	json_t *d = json_deep_copy(json_object_get(r, "kernel"));
	char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
	char *details = d ? json_dumps(d, JSON_COMPACT) : NULL;
	json_decref(r);
	json_decref(d);
	int rc = -1;
	PGconn *c = NULL;
	if (!text || !details)
		gv_err_set(err, ENOMEM, "kernel result: out of memory");
	else if (gv_pg_ensure(w->pg, err) == 0 && tenant_tx_begin((c = gv_pg_conn(w->pg)), kj->t->tid, err) == 0) {
		const char *p[] = { kj->t->sid, text };
		PGresult *res = gv_pg_query(c,
					    "UPDATE submissions SET status = 'done', result = $2::jsonb, finished_at = now() "
					    "WHERE id = $1 AND kind = 'kernel' AND status <> 'done'",
					    2, p, err);
		bool mine = res && !strcmp(PQcmdTuples(res), "1");
		rc = res ? 0 : -1;
		PQclear(res);
		if (rc == 0 && mine)
			rc = tenant_usage_add_kernel(c, kj->t->tid, o->kernel_ms, o->cpu_ms, o->peak_memory_kb, err);
		if (rc == 0 && mine)
			rc = tenant_audit_append(c, kj->t->tid, w->actor, TENANT_AUDIT_KERNEL_STOPPED, kj->t->sid,
						 w->d->node, o->sandbox[0] ? o->sandbox : NULL, details, err);
		if (rc == 0)
			rc = tenant_tx_commit(c, err);
		else
			tenant_tx_rollback(c);
	}
	free(text);
	free(details);
	return rc;
}

/* Runs the kernel with a Redis connection of its own for its commands;
 * warm (owned from here on) as its first sandbox when not NULL. The
 * tenant's egress policy is in w->egress. */
static void log_start(struct kernel_job *kj, const struct exec_kernel_spec *spec, const char *how);

static void run(struct kernel_job *kj, struct exec_kernel_spec *spec, struct exec_kernel_warm *warm,
		const char *how, struct exec_kernel_outcome *o)
{
	struct worker *w = kj->w;
	struct gv_err err;
	struct gv_redis *rin = exec_daemon_redis_open(w->d->cfg, KIN_TIMEOUT_MS, &err);
	if (!rin) {
		exec_kernel_warm_free(warm);
		snprintf(o->reason, sizeof(o->reason), "error");
		snprintf(o->message, sizeof(o->message), "%.255s", err.msg);
		return;
	}
	spec->egress = w->egress_granted ? w->egress : NULL;
	struct exec_kernel_env env = {
		.engine = &w->engine, .r = w->r, .rin = rin, .bridge = w->bridge, .bridge_len = w->bridge_len, .node = w->d->node,
		.stop = w->d->stop, .log = &kj->ctx, .audit = audit, .audit_arg = kj, .ready = on_ready,
		.warm = warm,
	};
	const struct exec_daemon_config *cfg = w->d->cfg;
	/* A kernel this worker held ahead, adopted now, has started or is
	 * about to: its place goes to the next start. */
	exec_gate_give(w, EXEC_GATE_START);
	char image[KERNEL_IMAGE_PATH_MAX];
	bool restorable = !warm && kernel_images_find(w, spec, 0, image);
	if (!warm && cfg->kernel_memory_mb > 0) {
		/* A restore spends about a quarter of its time outside the
		 * ceiling (the runsc command, the sandbox's processes made):
		 * one more in flight keeps the ceiling's CPUs busy; a fresh
		 * start spends seconds inside it. */
		int places = exec_daemon_start_places(cfg) + (restorable ? 1 : 0);
		kj->start_gated = exec_gate_take(w, EXEC_GATE_START, places, START_GATE_WAIT_MS);
	}
	/* Restored from the node's image: about a fifth of a fresh start's
	 * CPU (kernel_images.c); it still passes the start gate. */
	if (restorable) {
		env.warm = kernel_images_restore_from(w, spec, image);
		if (!env.warm) /* remade while it waited at the gate */
			env.warm = kernel_images_restore(w, spec, 0);
		if (env.warm)
			how = "restored from the node's image";
	}
	log_start(kj, spec, how);
	if (exec_kernel_run(&env, spec, o, &err) != 0) {
		snprintf(o->reason, sizeof(o->reason), "error");
		snprintf(o->message, sizeof(o->message), "%.255s", err.msg);
		gv_error(&kj->ctx, "kernel did not start: %s", err.msg);
	}
	if (kj->start_gated)
		exec_gate_give(w, EXEC_GATE_START);
	kj->start_gated = false;
	gv_redis_free(rin);
}

/* The end: result, usage and audit recorded, then announced, then the
 * token acknowledged. */
static void finish(struct kernel_job *kj, const struct exec_kernel_outcome *o)
{
	struct worker *w = kj->w;
	struct gv_err err;
	if (strcmp(o->reason, "node_lost") != 0 && strcmp(o->reason, "error") != 0)
		gv_info(&kj->ctx, "kernel ended: %s (%llu ms, peak %llu KB)", o->reason, (unsigned long long)o->kernel_ms,
			(unsigned long long)o->peak_memory_kb);
	else
		gv_warn(&kj->ctx, "kernel ended: %s: %s", o->reason, o->message);
	if (write_end(kj, o, &err) != 0)
		gv_error(&kj->ctx, "recording the kernel's end: %s", err.msg);
	exec_kernel_announce_end(w->r, kj->t->sid, o->reason);
	exec_daemon_slot_claimed(w, false);
	if (gv_queue_complete(w->r, w->d->node, kj->t, &err) != 0)
		gv_warn(&kj->ctx, "acknowledging: %s", err.msg);
}

static void log_start(struct kernel_job *kj, const struct exec_kernel_spec *spec, const char *how)
{
	gv_info(&kj->ctx, "kernel starts (%u MB, %u%% CPU, lifetime %u s, idle %u s; %s)", spec->memory_mb,
		spec->cpu_pct, spec->lifetime_s, spec->idle_s, how);
}

void exec_daemon_kernel_run(struct worker *w, const struct gv_queue_token *t, const char *request, long attempts)
{
	struct kernel_job kj = { .w = w, .t = t, .ctx = { .tenant = t->tid, .job = t->sid, .node = w->d->node } };
	struct exec_kernel_spec spec = { .tenant = t->tid, .kid = t->sid };
	struct exec_kernel_outcome o;
	memset(&o, 0, sizeof(o));
	struct gv_err err;
	if (attempts > 1) {
		/* Its node died with it: never a fresh kernel in its place. */
		snprintf(o.reason, sizeof(o.reason), "node_lost");
		snprintf(o.message, sizeof(o.message), "the node running this kernel was lost");
	} else if (parse_budgets(request, &spec, &err) != 0 || exec_daemon_load_egress(w, t->tid, &err) != 0) {
		snprintf(o.reason, sizeof(o.reason), "error");
		snprintf(o.message, sizeof(o.message), "%.255s", err.msg);
	} else {
		const struct exec_daemon_config *cfg = w->d->cfg;
		if (cfg->kernel_memory_mb > 0)
			spec.cpu_pct = exec_cpu_ceiling_clamp(spec.cpu_pct, (unsigned)cfg->kernel_cpu_ceiling_pct);
		struct kernel_shape shape;
		kernel_pool_shape(&shape, &spec);
		kernel_pool_want(w, &shape);
		struct exec_kernel_warm *warm = NULL;
		if (!w->egress_granted) {
			warm = kernel_pool_take_own(w, &shape);
			char token[GV_QUEUE_TOKEN_MAX + 1];
			int to;
			if (!warm && gv_queue_token_format(token, sizeof(token), t, &err) == 0 &&
			    (to = kernel_pool_hand_over(w, token, &shape)) >= 0) {
				gv_info(&kj.ctx, "kernel handed to worker %d, which holds one started ahead", to);
				return;
			}
		}
		kernel_pool_drop(w);
		/* The claim is made: a fresh kernel's start (seconds) holds none
		 * of the node's few database connections (node_gate.c). One
		 * started ahead keeps it for its kernel.started record, written
		 * at once (audit() lets it go): a second connection made there
		 * was most of an adopted kernel's answer time in a class. */
		if (cfg->kernel_memory_mb > 0 && !warm)
			gv_pg_release(w->pg);
		run(&kj, &spec, warm, warm ? "started ahead" : "fresh sandbox", &o);
	}
	finish(&kj, &o);
}

void exec_daemon_kernel_run_handed(struct worker *w, const char *token, const struct kernel_shape *shape,
				   struct exec_kernel_warm *warm)
{
	struct gv_queue_token t;
	struct gv_err err;
	if (gv_queue_token_parse(token, strlen(token), &t, &err) != 0) {
		gv_error(&w->d->log, "worker %d: handed a bad token: %s", w->index, err.msg);
		exec_kernel_warm_free(warm);
		return;
	}
	struct kernel_job kj = { .w = w, .t = &t, .ctx = { .tenant = t.tid, .job = t.sid, .node = w->d->node } };
	/* Its taker claimed the row, checked the budgets against this
	 * shape and found no network in the tenant's policy. */
	struct exec_kernel_spec spec = { .tenant = t.tid, .kid = t.sid, .lifetime_s = shape->lifetime_s,
					 .idle_s = shape->idle_s, .memory_mb = shape->memory_mb,
					 .cpu_pct = shape->cpu_pct };
	struct exec_kernel_outcome o;
	memset(&o, 0, sizeof(o));
	w->egress_granted = false;
	if (strcmp(shape->tenant, t.tid) != 0) {
		/* Never: the shape was compared in full. Fail safe anyway. */
		gv_error(&kj.ctx, "handed a kernel of another tenant's shape: starting it fresh");
		exec_kernel_warm_free(warm);
		warm = NULL;
	}
	run(&kj, &spec, warm, warm ? "handed over, started ahead" : "handed over, fresh sandbox", &o);
	finish(&kj, &o);
}
