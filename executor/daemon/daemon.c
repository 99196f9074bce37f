/* The executor daemon (executor/daemon/daemon.h): a supervisor and its worker
 * processes. The supervisor never runs a sandbox; each worker owns one
 * engine, one Redis and one PostgreSQL connection and runs one job at a
 * time. The token a worker holds is kept in shared memory so that the
 * supervisor can hand it back when the worker dies. */
#include "executor/daemon/daemon.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sodium.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/backoff.h"
#include "common/daemon.h"
#include "common/jobspec.h"
#include "common/json.h"
#include "common/log.h"
#include "common/pg.h"
#include "common/queue.h"
#include "common/redis.h"
#include "executor/sandbox/cpuslot.h"
#include "executor/sandbox/gpu.h"
#include "executor/judge/judge_inline.h"
#include "executor/problems/problem_judge.h"
#include "executor/problems/problem_store.h"
#include "executor/sandbox/pool.h"
#include "executor/sandbox/session.h"
#include "executor/daemon/webhook.h"
#include "languages/lang.h"
#include "languages/lang_pch.h"
#include "tenants/audit.h"
#include "tenants/db.h"
#include "tenants/egress.h"
#include "tenants/usage.h"

#define DAEMON_MAX_WORKERS 64
#define DAEMON_MAX_BURST 8
#define DAEMON_LANGS_MAX 1024
#define DAEMON_RESULT_MAX (96u * 1024u * 1024u)

const struct gv_config_option exec_daemon_config_table[] = {
	{ .name = "log.level", .type = GV_CONFIG_ENUM, GV_CONFIG_FIELD(struct exec_daemon_config, log_level),
	  .def = "info", .choices = gv_log_level_names, .flags = GV_CONFIG_RELOADABLE,
	  .doc = "lowest level written: debug, info, warn or error" },
	{ .name = "executor.node_name", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, node_name), .max = GV_QUEUE_NODE_MAX,
	  .doc = "node name in the registry; empty: the host name" },
	{ .name = "executor.max_parallel", .type = GV_CONFIG_INT, GV_CONFIG_FIELD(struct exec_daemon_config, capacity),
	  .def = "2", .min = 1, .max = DAEMON_MAX_WORKERS, .doc = "sandboxes at once (worker processes)" },
	{ .name = "executor.burst_slots", .type = GV_CONFIG_INT, GV_CONFIG_FIELD(struct exec_daemon_config, burst_slots),
	  .def = "1", .min = 0, .max = DAEMON_MAX_BURST,
	  .doc = "extra sandboxes only a tenant below its fair share may use (scheduler/fairshare.h)" },
	{ .name = "executor.gpus", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct exec_daemon_config, gpus),
	  .def = "", .max = EXEC_GPU_IDS_TEXT_MAX,
	  .doc = "GPU device ids of this node, e.g. 0,1 (needs runsc --nvproxy); empty: none" },
	{ .name = "executor.gpu_simulated", .type = GV_CONFIG_BOOL,
	  GV_CONFIG_FIELD(struct exec_daemon_config, gpu_simulated), .def = "false",
	  .doc = "TEST ONLY: executor.gpus is a simulated inventory (no devices, no GPU proxy)" },
	{ .name = "executor.heartbeat_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, heartbeat_interval_ms), .def = "5s", .min = 100, .max = 86400000,
	  .doc = "registry heartbeat period" },
	{ .name = "executor.runsc_path", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, runsc_path), .def = "/usr/bin/runsc", .doc = "runsc binary" },
	{ .name = "executor.runsc_root", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, runsc_root), .def = "/run/gavel/runsc", .doc = "runsc --root" },
	{ .name = "executor.work_root", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, work_root), .def = "/var/lib/gavel/work",
	  .doc = "bundles and work dirs" },
	{ .name = "executor.cgroup_parent", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, cgroup_parent), .def = "gavel", .doc = "parent cgroup" },
	{ .name = "executor.platform", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, platform), .def = "", .doc = "runsc platform; empty: default" },
	{ .name = "executor.languages_dir", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, languages_dir), .def = "languages", .doc = "language files" },
	{ .name = "executor.cpu_slots", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, cpu_slots), .def = "auto",
	  .doc = "tests hold one of these CPU slots while they run (off, auto: one per CPU, or a count)" },
	{ .name = "executor.pch_dir", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, pch_dir), .def = LANG_PCH_DEFAULT_DIR,
	  .doc = "precompiled headers built at start, mounted read-only in sandboxes; empty: none" },
	{ .name = "executor.init_path", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, init_path), .def = "build/gavel-init", .doc = "gavel-init" },
	{ .name = "executor.probe_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, probe_timeout_ms), .def = "20s", .min = 100, .max = 86400000,
	  .doc = "time a toolchain's version command may take at start" },
	{ .name = "executor.sandbox_uid_base", .type = GV_CONFIG_INT,
	  GV_CONFIG_FIELD(struct exec_daemon_config, sandbox_uid_base), .def = "1500000000", .min = 65536,
	  .max = 2147483647,
	  .doc = "first host uid of sandboxes: each live sandbox of the node runs as one of its own, never nobody" },
	{ .name = "executor.sandbox_uid_count", .type = GV_CONFIG_INT,
	  GV_CONFIG_FIELD(struct exec_daemon_config, sandbox_uid_count), .def = "1024", .min = 1, .max = EXEC_UIDS_MAX,
	  .doc = "host uids reserved for sandboxes from sandbox_uid_base (no user or service may use them)" },
	{ .name = "executor.pool_size", .type = GV_CONFIG_INT, GV_CONFIG_FIELD(struct exec_daemon_config, pool_size),
	  .def = "1", .min = 0, .max = EXEC_POOL_MAX,
	  .doc = "sandboxes each worker creates ahead of demand, one per recently seen (tenant, limits); 0: none" },
	{ .name = "executor.pool_idle", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, pool_idle_ms), .def = "60s", .min = 1000, .max = 86400000,
	  .doc = "a pooled sandbox, and the (tenant, limits) it was made for, are dropped after this long unused" },
	{ .name = "executor.egress_pool", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, egress_pool), .def = "10.213.0.0/16", .max = 18,
	  .doc = "private IPv4 pool for sandbox networks (/30 each), split among the workers" },
	{ .name = "executor.egress_ifprefix", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, egress_ifprefix), .def = "gva", .max = EXEC_NET_PREFIX_MAX - 2,
	  .doc = "name prefix of sandbox netns/veth/nft tables, unique per node on a host; empty: no egress here" },
	{ .name = "database.url", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, database_owner_url), .flags = GV_CONFIG_SECRET,
	  .doc = "owner URL (used only when service_url is empty)" },
	{ .name = "database.service_url", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, database_url), .flags = GV_CONFIG_SECRET,
	  .doc = "URL of the gavel_executor role" },
	{ .name = "database.connect_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, db_connect_timeout_ms), .def = "5s", .doc = "per connection" },
	{ .name = "database.statement_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, db_statement_timeout_ms), .def = "30s", .doc = "per statement" },
	{ .name = "redis.url", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct exec_daemon_config, redis_url),
	  .def = "redis://127.0.0.1:6379/0", .flags = GV_CONFIG_SECRET, .doc = "Redis URL" },
	{ .name = "redis.connect_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, redis_connect_timeout_ms), .def = "2s", .doc = "per connection" },
	{ .name = "executor.redis_command_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, redis_command_timeout_ms), .def = "5s", .doc = "per command" },
	{ .name = "executor.webhook_max_attempts", .type = GV_CONFIG_INT,
	  GV_CONFIG_FIELD(struct exec_daemon_config, webhook_max_attempts), .def = "5", .min = 1,
	  .max = EXEC_WEBHOOK_ATTEMPTS_MAX, .doc = "delivery attempts per callback_url" },
	{ .name = "executor.webhook_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, webhook_timeout_ms), .def = "5s", .min = 100, .max = 60000,
	  .doc = "time allowed for one delivery attempt, connection included" },
	{ .name = "executor.webhook_backoff", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, webhook_backoff_ms), .def = "2s", .min = 10, .max = 3600000,
	  .doc = "delay after a failed attempt, doubling for each further one" },
	{ .name = "executor.webhook_backoff_max", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, webhook_backoff_max_ms), .def = "5m", .min = 10,
	  .max = 86400000, .doc = "longest delay between two attempts" },
	{ .name = "executor.webhook_recover_after", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, webhook_recover_after_ms), .def = "30s", .min = 1000,
	  .max = 86400000, .doc = "a pending webhook this far past due and missing from Redis is rescheduled from the outbox" },
	{ .name = "executor.webhook_user", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, webhook_user), .def = "nobody", .max = 64,
	  .doc = "user (name or uid) the webhook delivery process runs as; its gid, no capabilities" },
	{ .name = "executor.webhook_allow_loopback", .type = GV_CONFIG_BOOL,
	  GV_CONFIG_FIELD(struct exec_daemon_config, webhook_allow_loopback), .def = "false",
	  .doc = "TEST ONLY: allow callback_url on 127.0.0.0/8 and ::1" },
	{ .name = "executor.testdata_cache_dir", .type = GV_CONFIG_STRING,
	  GV_CONFIG_FIELD(struct exec_daemon_config, testdata_cache_dir), .def = "/var/lib/gavel/testdata",
	  .doc = "local cache of problem files by hash (same file system as work_root: hard links)" },
	{ .name = "executor.testdata_cache_size", .type = GV_CONFIG_SIZE,
	  GV_CONFIG_FIELD(struct exec_daemon_config, testdata_cache_size), .def = "2g",
	  .doc = "size cap of the test-data cache, least recently used files evicted; 0: no cache" },
	{ .name = "executor.import_poll_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct exec_daemon_config, import_poll_interval_ms), .def = "1s", .min = 50,
	  .max = 3600000, .doc = "how often an idle worker looks for a problem package to import" },
};
const size_t exec_daemon_config_table_len = sizeof(exec_daemon_config_table) / sizeof(exec_daemon_config_table[0]);

/* Shared between the supervisor and the workers (MAP_SHARED). */
struct worker_slot {
	volatile int state; /* 0 starting, 1 ready, 2 failed */
	char token[GV_QUEUE_TOKEN_MAX + 1];
	char error[GV_ERR_MSG_MAX];
};

struct daemon {
	struct exec_daemon_config *cfg; /* written only by a reload (SIGHUP) */
	char node[GV_QUEUE_NODE_MAX + 1];
	char cg_node[GV_QUEUE_NODE_MAX + 1]; /* node with '.' made '_' for cgroup names */
	struct lang_registry langs;
	bool *offered;        /* per langs.defs[i]: the probe passed */
	/* per langs.defs[i]: the clean version the probe found, published to
	 * Redis at each heartbeat (gv_queue_publish_language) */
	char (*versions)[LANG_VERSION_MAX];
	char languages[DAEMON_LANGS_MAX];
	struct worker_slot *slots;
	pid_t pids[DAEMON_MAX_WORKERS + DAEMON_MAX_BURST];
	int workers;          /* capacity + burst_slots */
	struct exec_gpu_inventory gpu;
	struct exec_gpu_table *gpu_table; /* MAP_SHARED with the workers */
	char gpu_ids[EXEC_GPU_IDS_TEXT_MAX]; /* "0,1": reported in the registry */
	struct gv_log_ctx log;
	volatile sig_atomic_t *stop;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct gv_redis *redis_open(const struct exec_daemon_config *c, int command_timeout_ms, struct gv_err *err)
{
	struct gv_redis_opts o = {
		.url = c->redis_url,
		.connect_timeout_ms = (int)c->redis_connect_timeout_ms,
		.command_timeout_ms = command_timeout_ms,
		.max_attempts = 3,
	};
	return gv_redis_new(&o, err);
}

static struct gv_pg *pg_open(const struct exec_daemon_config *c, struct gv_err *err)
{
	const char *url = c->database_url && *c->database_url ? c->database_url : c->database_owner_url;
	struct gv_pg_opts po = {
		.url = url,
		.connect_timeout_s = (int)((c->db_connect_timeout_ms + 999) / 1000),
		.statement_timeout_ms = (int)c->db_statement_timeout_ms,
		.max_attempts = 3,
	};
	return gv_pg_new(&po, err);
}

/* ---- worker ---- */

struct worker {
	struct daemon *d;
	int index;
	struct exec_engine engine;
	struct gv_redis *r;
	struct gv_pg *pg;
	char actor[128];
	/* Stored problems: imports and judging against them. */
	struct exec_testdata_cache cache;
	struct exec_import_limits import_limits;
	char scratch[4096];
	struct exec_problem_env penv;
	struct gv_log_ctx plog;
	uint64_t next_import_ms;
	/* The current job's egress (tenant policy loaded when it starts) and
	 * the blocked connection attempts of its sandboxes, for its audit. */
	struct tenant_egress_policy *egress;
	bool egress_granted;
	uint64_t egress_blocked;
};

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

/* Worker k's share of the node's sandbox network pool and its name prefix
 * (<egress_ifprefix><k as 2 digits>, into prefix); none when the node
 * grants no egress (empty prefix). */
static int worker_net_config(const struct daemon *d, int k, char prefix[EXEC_NET_PREFIX_MAX + 1],
			     struct exec_net_config *out, struct gv_err *err)
{
	const struct exec_daemon_config *c = d->cfg;
	memset(out, 0, sizeof(*out));
	if (!c->egress_ifprefix || !*c->egress_ifprefix)
		return 0;
	uint32_t pool, slots;
	if (exec_net_pool_parse(c->egress_pool, &pool, &slots, err) != 0)
		return -1;
	uint32_t per = slots / (uint32_t)d->workers;
	if (per > EXEC_NET_SLOTS_MAX)
		per = EXEC_NET_SLOTS_MAX;
	if (per == 0)
		return gv_err_set(err, GV_ECONFIG, "executor.egress_pool is too small for %d workers", d->workers);
	if (snprintf(prefix, EXEC_NET_PREFIX_MAX + 1, "%s%02d", c->egress_ifprefix, k) > EXEC_NET_PREFIX_MAX)
		return gv_err_set(err, GV_ECONFIG, "executor.egress_ifprefix is too long");
	*out = (struct exec_net_config){ .prefix = prefix, .pool = pool + (uint32_t)k * per * 4u, .slots = per };
	return exec_net_config_check(out, err);
}

/* The tenant's current egress policy, from PostgreSQL (never from the
 * request) into w->egress; w->egress_granted tells whether it grants a
 * network. A policy that cannot be loaded or parsed is an error: the job
 * is IE rather than run with a network it may not have. */
static int load_egress(struct worker *w, const char *tid, struct gv_err *err)
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
 * limits it applies. A failure is logged and the job goes on: the
 * `sandbox.finished` record, written with the result, stays the one the
 * result cannot exist without. */
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
		gv_warn(&w->d->log, "audit sandbox.started of %s (sandbox %s): %s", p->sid, sandbox_id, err.msg);
	}
}

/* Marks the row running and returns its request text (caller frees), or
 * NULL with *gone set when there is nothing to run (finished, missing).
 * One statement in one pipelined transaction: the claim is on the path of
 * every job, so it costs one round trip to PostgreSQL, not five. */
static char *claim(struct worker *w, const struct gv_queue_token *t, char *status, size_t stsz, bool *gone,
		   struct gv_err *err)
{
	*gone = false;
	if (gv_pg_ensure(w->pg, err) != 0)
		return NULL;
	const char *p[] = { t->sid, w->d->node };
	/* The second branch reads the row as it was before the UPDATE: the
	 * status that kept it from being claimed. */
	PGresult *res = tenant_tx_query(gv_pg_conn(w->pg), t->tid,
					"WITH claimed AS (UPDATE submissions SET status = 'running', started_at = now(), "
					"node = $2, attempts = attempts + 1 WHERE id = $1 AND status IN ('queued', "
					"'running') RETURNING request::text AS request) "
					"SELECT true, request, NULL FROM claimed UNION ALL "
					"SELECT false, NULL, status FROM submissions WHERE id = $1 "
					"AND NOT EXISTS (SELECT 1 FROM claimed)",
					2, p, err);
	if (!res)
		return NULL;
	char *req = NULL;
	if (PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't') {
		/* A row without a request (an old frontend) is run as nothing:
		 * not expected; IE with a reason. */
		req = strdup(PQgetisnull(res, 0, 1) ? "" : PQgetvalue(res, 0, 1));
		if (!req)
			gv_err_set(err, ENOMEM, "out of memory");
	} else {
		*gone = true;
		snprintf(status, stsz, "%s", PQntuples(res) == 1 ? PQgetvalue(res, 0, 2) : "missing");
	}
	PQclear(res);
	return req;
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
	return 0;
fail:
	tenant_tx_rollback(c);
	return -1;
}

static void hand_back(struct worker *w, const char *token, const char *why)
{
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
	g->since_ms = mono_ms();
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

static void run_job(struct worker *w, const char *token)
{
	struct gv_queue_token t;
	struct gv_err err;
	gv_err_clear(&err);
	w->egress_granted = false;
	w->egress_blocked = 0;
	if (gv_queue_token_parse(token, strlen(token), &t, &err) != 0) {
		gv_error(&w->d->log, "dropping a bad token: %s", err.msg);
		char inf[GV_QUEUE_KEY_MAX];
		if (gv_queue_key_inflight(inf, sizeof(inf), w->d->node, &err) == 0) {
			redisReply *rep = gv_redis_command(w->r, &err, "LREM %s 1 %s", inf, token);
			gv_redis_reply_free(rep);
		}
		return;
	}
	struct gv_log_ctx ctx = { .tenant = t.tid, .job = t.sid, .node = w->d->node };
	char status[32] = "";
	bool gone = false;
	char *req = claim(w, &t, status, sizeof(status), &gone, &err);
	if (!req && !gone) {
		hand_back(w, token, err.msg);
		gv_backoff_sleep_ms(1000);
		return;
	}
	if (gone) {
		gv_info(&ctx, "nothing to run (status %s)", status);
		if (gv_queue_complete(w->r, w->d->node, &t, &err) != 0)
			gv_warn(&ctx, "acknowledging: %s", err.msg);
		return;
	}
	uint64_t t0 = mono_ms();
	struct gv_jobspec spec;
	struct exec_inline_summary sum;
	memset(&sum, 0, sizeof(sum));
	json_t *result = NULL;
	const char *language = "";
	char gpu_ids[EXEC_GPU_IDS_TEXT_MAX] = "";
	uint64_t gpu_ms = 0;
	if (gv_jobspec_parse(req, strlen(req), &spec, &err) != 0) {
		char msg[GV_ERR_MSG_MAX + 32];
		snprintf(msg, sizeof(msg), "stored request: %s", err.msg);
		result = gv_result_internal_error(NULL, msg);
		snprintf(sum.verdict, sizeof(sum.verdict), "IE");
	} else {
		language = spec.language;
		const struct lang_def *lang = lang_find(&w->d->langs, spec.language);
		bool ok = lang && w->d->offered[lang - w->d->langs.defs];
		struct job_gpus g;
		int gpu_rc = ok ? job_gpus_take(w, spec.gpus, &g, &err) : 0;
		if (gpu_rc > 0) {
			/* A stale placement: hand it back for a node with free GPUs. */
			free(req);
			gv_jobspec_free(&spec);
			hand_back(w, token, err.msg);
			gv_backoff_sleep_ms(1000);
			return;
		}
		if (!ok || gpu_rc < 0) {
			char msg[GV_ERR_MSG_MAX];
			snprintf(msg, sizeof(msg), "%s", ok ? err.msg : "language not available on this node");
			result = gv_result_internal_error(spec.has_tests ? "judge" : "run", msg);
			snprintf(sum.verdict, sizeof(sum.verdict), "IE");
		} else {
			struct progress_arg pa = { .w = w, .sid = t.sid, .tid = t.tid, .gpu_ids = g.ids_text };
			struct exec_inline_opts o = {
				.tenant = t.tid,
				.node = w->d->node,
				.progress = on_progress,
				.progress_arg = &pa,
				.sandbox_started = on_sandbox_started,
				.sandbox_arg = &pa,
				.gpu_visible = g.n ? g.ids_text : NULL,
				.gpu_nodes = g.nodes,
				.n_gpu_nodes = g.n_nodes,
			};
			struct exec_problem_judge_opts po = {
				.tenant = t.tid, .sid = t.sid, .node = w->d->node,
				.progress = on_progress, .progress_arg = &pa,
			};
			if (spec.problem_id)
				result = exec_problem_judge_run(&w->penv, lang, &spec, &po, &sum, &err);
			else if (load_egress(w, t.tid, &err) != 0) {
				result = gv_result_internal_error(spec.has_tests ? "judge" : "run", err.msg);
				snprintf(sum.verdict, sizeof(sum.verdict), "IE");
			} else {
				o.egress = w->egress_granted ? w->egress : NULL;
				w->engine.net_blocked = 0;
				result = exec_inline_run(&w->engine, lang, &spec, &o, &sum, &err);
				w->egress_blocked = w->engine.net_blocked;
			}
			if (g.n) {
				/* GPU time: every device held, from assignment to the end. */
				gpu_ms = (mono_ms() - g.since_ms) * g.n;
				snprintf(gpu_ids, sizeof(gpu_ids), "%s", g.ids_text);
				exec_gpu_release(w->d->gpu_table, w->index);
			}
		}
	}
	free(req);
	char *text = result ? gv_json_dump(result, JSON_COMPACT, DAEMON_RESULT_MAX, NULL, &err) : NULL;
	json_decref(result);
	if (!text) {
		/* Too large or out of memory: record an IE rather than nothing. */
		json_t *ie = gv_result_internal_error(spec.has_tests ? "judge" : "run", "result too large to store");
		text = ie ? gv_json_dump(ie, JSON_COMPACT, 1 << 20, NULL, &err) : NULL;
		json_decref(ie);
		snprintf(sum.verdict, sizeof(sum.verdict), "IE");
	}
	const char *verdict = gv_result_verdict_ok(sum.verdict) ? sum.verdict : "IE";
	bool recorded = false;
	int rc = -1;
	for (unsigned attempt = 0; text && attempt < 5; attempt++) {
		if ((rc = write_result(w, &t, verdict, text, &sum, language, gpu_ids, gpu_ms, &recorded, &err)) == 0)
			break;
		gv_warn(&ctx, "writing the result: %s", err.msg);
		gv_backoff_sleep_ms(gv_backoff_delay_ms(attempt, 200, 3000));
	}
	free(text);
	if (rc != 0) {
		hand_back(w, token, "the result could not be stored");
		gv_jobspec_free(&spec);
		return;
	}
	/* The outbox row committed with the result; a crash or a Redis
	 * failure before this ZADD delays the webhook until the delivery
	 * process recovers it from the outbox (executor/daemon/webhook.h). */
	if (recorded && spec.callback_url && gv_webhook_enqueue(w->r, t.tid, t.sid, &err) != 0)
		gv_warn(&ctx, "scheduling the webhook: %s; the outbox brings it back", err.msg);
	if (gv_queue_complete(w->r, w->d->node, &t, &err) != 0)
		gv_warn(&ctx, "acknowledging: %s (the scheduler re-queues it; the result stands)", err.msg);
	gv_info(&ctx, "%s %s in %llu ms%s", language, verdict, (unsigned long long)(mono_ms() - t0),
		recorded ? "" : " (already finished by an earlier run)");
	gv_jobspec_free(&spec);
}

/* The worker's share of stored problems: its cache handle (the folder is
 * shared by the node's workers), a private scratch folder for imports and
 * package folders, and the import queue's poll. */
static int problems_init(struct worker *w, struct gv_err *err)
{
	const struct exec_daemon_config *c = w->d->cfg;
	if (exec_testdata_cache_init(&w->cache, c->testdata_cache_dir, c->testdata_cache_size, err) != 0)
		return -1;
	exec_problem_import_limits_default(&w->import_limits);
	snprintf(w->scratch, sizeof(w->scratch), "%s/%s/problems-w%d", c->work_root, w->d->node, w->index);
	w->plog = (struct gv_log_ctx){ .node = w->d->node };
	w->penv = (struct exec_problem_env){
		.engine = &w->engine, .langs = &w->d->langs, .pg = w->pg, .r = w->r, .cache = &w->cache,
		.node = w->d->node, .scratch_dir = w->scratch, .limits = &w->import_limits, .log = &w->plog,
	};
	return 0;
}

static void problems_import_tick(struct worker *w)
{
	uint64_t now = mono_ms();
	if (now < w->next_import_ms)
		return;
	struct gv_err err;
	int rc = exec_problem_import_step(&w->penv, &err);
	if (rc < 0)
		gv_error(&w->d->log, "worker %d: problem import: %s", w->index, err.msg);
	/* Right away again after an import: more may be waiting. */
	w->next_import_ms = rc == 1 ? now : now + w->d->cfg->import_poll_interval_ms;
}

static volatile sig_atomic_t worker_stop;
static void worker_on_term(int sig)
{
	(void)sig;
	worker_stop = 1;
}

/* The worker process: never returns. */
/* Whether this node has capacity to spare for creating sandboxes ahead
 * (executor/sandbox/pool.h): at least half of its workers idle, counting from
 * the other workers' slots in shared memory (a racy read: a wrong answer only
 * moves one creation). */
static bool node_has_spare(void *arg)
{
	const struct worker *w = arg;
	int busy = 0;
	for (int k = 0; k < w->d->workers; k++)
		if (k != w->index && ((const volatile char *)w->d->slots[k].token)[0])
			busy++;
	return busy * 2 < w->d->workers;
}

static void worker_main(struct daemon *d, int k)
{
	struct worker_slot *slot = &d->slots[k];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = worker_on_term;
	sa.sa_flags = SA_RESTART; /* the engine's own syscalls must not see EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	struct worker w;
	memset(&w, 0, sizeof(w));
	w.d = d;
	w.index = k;
	snprintf(w.actor, sizeof(w.actor), "system:executor@%s", d->node);
	const struct exec_daemon_config *c = d->cfg;
	char runsc_root[4096], work_root[4096], cg[256];
	struct gv_err err;
	gv_err_clear(&err);
	snprintf(runsc_root, sizeof(runsc_root), "%s/%s/w%d", c->runsc_root, d->node, k);
	snprintf(work_root, sizeof(work_root), "%s/%s/w%d", c->work_root, d->node, k);
	snprintf(cg, sizeof(cg), "%s/%s-w%d", c->cgroup_parent, d->cg_node, k);
	struct exec_engine_config ec = {
		.runsc_path = c->runsc_path,
		.runsc_root = runsc_root,
		.work_root = work_root,
		.init_path = c->init_path,
		.cgroup_parent = cg,
		.platform = c->platform && *c->platform ? c->platform : NULL,
		.nvproxy = d->gpu.n > 0 && !d->gpu.simulated,
		.pch_dir = c->pch_dir && *c->pch_dir ? c->pch_dir : NULL,
		.sandbox_uid_base = (uint32_t)c->sandbox_uid_base,
		.sandbox_uid_count = (uint32_t)c->sandbox_uid_count,
	};
	if (exec_cpuslot_parse(c->cpu_slots, &ec.cpu_slots, &err) != 0)
		ec.cpu_slots = 0; /* refused before any worker starts */
	char net_prefix[EXEC_NET_PREFIX_MAX + 1] = "";
	w.egress = calloc(1, sizeof(*w.egress));
	if (!w.egress)
		gv_err_set(&err, ENOMEM, "out of memory");
	if (!w.egress || worker_net_config(d, k, net_prefix, &ec.net, &err) != 0 ||
	    exec_engine_init(&w.engine, &ec, &err) != 0) {
		gv_err_prefix(&err, "engine");
		snprintf(slot->error, sizeof(slot->error), "%s", err.msg);
		slot->state = 2;
		_exit(3);
	}
	/* BLMOVE blocks up to 1 s: the command timeout must be above it. */
	if (!(w.r = redis_open(c, (int)c->redis_command_timeout_ms + 2000, &err)) || !(w.pg = pg_open(c, &err))) {
		snprintf(slot->error, sizeof(slot->error), "%s", err.msg);
		slot->state = 2;
		exec_engine_fini(&w.engine);
		_exit(3);
	}
	/* Refilled from the engine's poll: at each job's close, and below
	 * while no work comes (executor/sandbox/pool.h). */
	struct exec_pool pool;
	struct exec_pool_config pool_cfg = { .size = (unsigned)c->pool_size, .idle_ms = c->pool_idle_ms,
					     .has_spare = node_has_spare, .spare_arg = &w };
	if (exec_pool_attach(&pool, &w.engine, &pool_cfg, &err) != 0) {
		snprintf(slot->error, sizeof(slot->error), "%s", err.msg);
		slot->state = 2;
		exec_engine_fini(&w.engine);
		_exit(3);
	}
	if (problems_init(&w, &err) != 0) {
		snprintf(slot->error, sizeof(slot->error), "%s", err.msg);
		slot->state = 2;
		exec_engine_fini(&w.engine);
		_exit(3);
	}
	slot->state = 1;
	uint64_t last_err = 0;
	while (!worker_stop) {
		/* Between two jobs: the options a reload may change are read per job. */
		if (gv_daemon_reload_asked)
			(void)gv_daemon_reload(d->cfg, sizeof(*d->cfg));
		problems_import_tick(&w);
		char token[GV_QUEUE_TOKEN_MAX + 1];
		/* While a finished sandbox's tear-down is pending, wait briefly:
		 * each poll moves it on, and reaps the gofer that its `runsc
		 * delete` waits for (a zombie counts as running to runsc). */
		double wait_s = w.engine.n_pending > 0 ? 0.05 : 1.0;
		int got = gv_queue_take(w.r, d->node, wait_s, token, sizeof(token), &err);
		if (got < 0) {
			if (mono_ms() - last_err > 5000) {
				gv_error(&d->log, "worker %d: taking work: %s", k, err.msg);
				last_err = mono_ms();
			}
			gv_backoff_sleep_ms(500);
			continue;
		}
		if (got == 0) {
			exec_engine_poll(&w.engine);
			continue;
		}
		snprintf(slot->token, sizeof(slot->token), "%s", token);
		run_job(&w, token);
		slot->token[0] = '\0';
	}
	gv_redis_free(w.r);
	gv_pg_free(w.pg);
	exec_pool_detach(&pool);
	gv_info(&d->log, "worker %d: pool hits %llu, misses %llu, created %llu, expired %llu, failed %llu", k,
		(unsigned long long)pool.stats.hits, (unsigned long long)pool.stats.misses,
		(unsigned long long)pool.stats.created, (unsigned long long)pool.stats.expired,
		(unsigned long long)pool.stats.failed);
	exec_engine_fini(&w.engine);
	_exit(0);
}

/* ---- webhook delivery process ---- */

/* Delivers webhooks until SIGTERM (executor/daemon/webhook.h). A process of its
 * own so that a slow receiver or a hung DNS lookup never delays the
 * supervisor's heartbeats or a worker's jobs; it holds no job, so the
 * supervisor may kill and respawn it at any time (an item it held comes
 * back when its lease ends). It runs no sandbox and never returns. */
static void webhook_main(struct daemon *d)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = worker_on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	const struct exec_daemon_config *c = d->cfg;
	struct gv_err err;
	gv_err_clear(&err);
	prctl(PR_SET_NAME, "gavel-webhook");
	/* Before any tenant URL or response is touched: an unprivileged
	 * user, no capabilities, no_new_privs, only stdio inherited. The
	 * Redis connection alone is opened before the drop, to the
	 * operator's configured URL (no tenant input): a local Redis socket
	 * may admit only the executor's user (deploy/local/gavel-local lets
	 * no other user than the service user and root reach it), and the
	 * delivery user is not meant to reach it. */
	uid_t wuid;
	gid_t wgid;
	if (close_range(3, ~0u, 0) != 0 || exec_webhook_user_resolve(c->webhook_user, &wuid, &wgid, &err) != 0) {
		gv_error(&d->log, "webhooks: %s; not delivering", err.code ? err.msg : strerror(errno));
		gv_backoff_sleep_ms(5000);
		_exit(3);
	}
	struct gv_redis *r = redis_open(c, (int)c->redis_command_timeout_ms, &err);
	if (!r) {
		gv_error(&d->log, "webhooks: %s; retrying", err.msg);
		gv_backoff_sleep_ms(5000);
		_exit(3);
	}
	if (exec_webhook_drop_privileges(wuid, wgid, &err) != 0) {
		gv_error(&d->log, "webhooks: %s; not delivering", err.msg);
		gv_backoff_sleep_ms(5000);
		_exit(3);
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || sodium_init() < 0) {
		gv_error(&d->log, "webhooks: libcurl or libsodium did not initialise");
		_exit(3);
	}
	struct gv_pg *pg = pg_open(c, &err);
	if (!pg) {
		gv_error(&d->log, "webhooks: %s; retrying", err.msg);
		gv_redis_free(r);
		gv_backoff_sleep_ms(5000);
		_exit(3);
	}
	struct exec_webhook_opts o = {
		.max_attempts = (unsigned)c->webhook_max_attempts,
		.timeout_ms = c->webhook_timeout_ms,
		.backoff_ms = c->webhook_backoff_ms,
		.backoff_max_ms = c->webhook_backoff_max_ms,
		.allow_loopback = c->webhook_allow_loopback,
		.recover_after_ms = c->webhook_recover_after_ms,
	};
	if (o.allow_loopback)
		gv_warn(&d->log, "webhooks: executor.webhook_allow_loopback is on: a test setting, never for production");
	struct exec_webhook_env env = { .opts = &o, .r = r, .pg = pg, .log = &d->log };
	uint64_t last_err = 0;
	while (!worker_stop) {
		int got = exec_webhook_step(&env, &err);
		if (got < 0 && !gv_redis_context(r) && gv_redis_ensure(r, &err) != 0) {
			/* Redis lost, and not reachable again as the delivery
			 * user (a socket only the executor's user may open): a
			 * new process connects before its drop. */
			gv_error(&d->log, "webhooks: %s; the executor starts a new delivery process", err.msg);
			break;
		}
		if (got < 0) {
			if (mono_ms() - last_err > 5000) {
				gv_error(&d->log, "webhooks: %s", err.msg);
				last_err = mono_ms();
			}
			gv_backoff_sleep_ms(1000);
		} else if (got == 0) {
			gv_backoff_sleep_ms(200);
		}
	}
	bool lost = !worker_stop;
	gv_redis_free(r);
	gv_pg_free(pg);
	curl_global_cleanup();
	_exit(lost ? 3 : 0);
}

static pid_t spawn_webhook(struct daemon *d)
{
	pid_t pid = fork();
	if (pid == 0)
		webhook_main(d);
	if (pid < 0)
		gv_error(&d->log, "fork (webhook delivery): %s", strerror(errno));
	return pid;
}

/* ---- supervisor ---- */

static int probe_languages(struct daemon *d, struct gv_err *err)
{
	if (lang_registry_load(&d->langs, d->cfg->languages_dir, err) != 0) {
		gv_err_prefix(err, "languages from %s", d->cfg->languages_dir);
		return -1;
	}
	if (d->cfg->pch_dir && *d->cfg->pch_dir) {
		/* Before the workers start, so that their engines find the
		 * folder; a failure costs speed only. */
		unsigned built = 0;
		char report[1024];
		struct gv_err perr;
		uint64_t t0 = mono_ms();
		if (lang_pch_prepare(&d->langs, d->cfg->pch_dir, &built, report, sizeof(report), &perr) != 0)
			gv_warn(&d->log, "precompiled headers in %s: %s", d->cfg->pch_dir, perr.msg);
		else if (report[0])
			gv_warn(&d->log, "precompiled headers not built: %s", report);
		if (built)
			gv_info(&d->log, "precompiled headers built for %u languages in %s (%lld ms)", built,
				d->cfg->pch_dir, (long long)(mono_ms() - t0));
	}
	d->offered = calloc(d->langs.n ? d->langs.n : 1, sizeof(*d->offered));
	d->versions = calloc(d->langs.n ? d->langs.n : 1, sizeof(*d->versions));
	if (!d->offered || !d->versions)
		return gv_err_set(err, ENOMEM, "out of memory");
	size_t len = 0;
	for (size_t i = 0; i < d->langs.n; i++) {
		const struct lang_def *l = &d->langs.defs[i];
		char *version = d->versions[i];
		struct gv_err perr;
		if (lang_probe(l, (int)d->cfg->probe_timeout_ms, version, LANG_VERSION_MAX, &perr) != 0) {
			gv_warn(&d->log, "language %s not offered: %s", l->id, perr.msg);
			continue;
		}
		size_t idl = strlen(l->id);
		if (len + idl + 2 > sizeof(d->languages)) {
			gv_warn(&d->log, "language %s not offered: list too long", l->id);
			continue;
		}
		if (len)
			d->languages[len++] = ',';
		memcpy(d->languages + len, l->id, idl + 1);
		len += idl;
		d->offered[i] = true;
		gv_info(&d->log, "language %s: %s %s", l->id, l->name, version);
	}
	if (len == 0)
		return gv_err_set(err, GV_ECONFIG, "no language's toolchain works on this host");
	gv_info(&d->log, "languages offered: %s", d->languages);
	return 0;
}

/* Publishes the probed version of every offered language, living three
 * heartbeats (at least GV_QUEUE_HEARTBEAT_TIMEOUT_MS, after which the
 * frontend counts a node as gone): the frontend lists only languages some
 * live executor offers, with the version it really runs. */
static void publish_languages(struct daemon *d, struct gv_redis *r)
{
	uint64_t ttl = d->cfg->heartbeat_interval_ms * 3;
	if (ttl < GV_QUEUE_HEARTBEAT_TIMEOUT_MS)
		ttl = GV_QUEUE_HEARTBEAT_TIMEOUT_MS;
	for (size_t i = 0; i < d->langs.n; i++) {
		if (!d->offered[i] || !d->versions[i][0])
			continue;
		struct gv_err err;
		if (gv_queue_publish_language(r, d->langs.defs[i].id, d->versions[i],
					      ttl > UINT32_MAX ? UINT32_MAX : (unsigned)ttl, &err) != 0) {
			gv_warn(&d->log, "publishing language %s: %s", d->langs.defs[i].id, err.msg);
			return;
		}
	}
}

static pid_t spawn(struct daemon *d, int k)
{
	memset(&d->slots[k], 0, sizeof(d->slots[k]));
	pid_t pid = fork();
	if (pid == 0)
		worker_main(d, k);
	return pid;
}

static int list_requeue_all(struct gv_redis *r, const char *key, const char *why, struct daemon *d)
{
	struct gv_err err;
	redisReply *rep = gv_redis_command(r, &err, "LRANGE %s 0 -1", key);
	if (!rep) {
		gv_error(&d->log, "reading %s: %s", key, err.msg);
		return -1;
	}
	unsigned moved = 0;
	for (size_t i = rep->elements; i-- > 0;) {
		if (rep->element[i]->type != REDIS_REPLY_STRING)
			continue;
		if (gv_queue_requeue_token(r, NULL, key, rep->element[i]->str, &err) > 0)
			moved++;
	}
	gv_redis_reply_free(rep);
	if (moved)
		gv_warn(&d->log, "%u jobs of %s handed back to their queues (%s)", moved, key, why);
	return 0;
}

static unsigned busy(const struct daemon *d)
{
	unsigned n = 0;
	for (int k = 0; k < d->workers; k++)
		if (d->pids[k] > 0 && d->slots[k].token[0])
			n++;
	return n;
}

int exec_daemon_run(struct exec_daemon_config *cfg, volatile sig_atomic_t *stop, struct gv_err *err)
{
	struct daemon d;
	memset(&d, 0, sizeof(d));
	d.cfg = cfg;
	d.stop = stop;
	if (cfg->node_name && *cfg->node_name) {
		snprintf(d.node, sizeof(d.node), "%s", cfg->node_name);
	} else if (gethostname(d.node, sizeof(d.node) - 1) != 0) {
		return gv_err_errno(err, "gethostname");
	}
	if (!gv_queue_node_ok(d.node))
		return gv_err_set(err, GV_ECONFIG, "node name '%s' is not [A-Za-z0-9_.-]{1,64}", d.node);
	snprintf(d.cg_node, sizeof(d.cg_node), "%s", d.node);
	for (char *p = d.cg_node; *p; p++)
		if (*p == '.')
			*p = '_';
	d.log.node = d.node;
	if (cfg->capacity < 1 || cfg->capacity > DAEMON_MAX_WORKERS)
		return gv_err_set(err, GV_ECONFIG, "executor.max_parallel must be 1..%d", DAEMON_MAX_WORKERS);
	if (cfg->burst_slots < 0 || cfg->burst_slots > DAEMON_MAX_BURST)
		return gv_err_set(err, GV_ECONFIG, "executor.burst_slots must be 0..%d", DAEMON_MAX_BURST);
	d.workers = cfg->capacity + cfg->burst_slots;
	uint32_t cpu_slots;
	if (exec_cpuslot_parse(cfg->cpu_slots, &cpu_slots, err) != 0)
		return -1;
	if (exec_gpu_inventory_init(&d.gpu, cfg->gpus, cfg->gpu_simulated, cfg->runsc_path, "/dev", err) != 0)
		return -1;
	if (exec_gpu_ids_text(d.gpu.ids, d.gpu.n, d.gpu_ids, sizeof(d.gpu_ids)) != 0)
		return gv_err_set(err, GV_ECONFIG, "executor.gpus: too long");
	if (d.gpu.simulated)
		gv_warn(&d.log, "SIMULATED GPU inventory (executor.gpu_simulated, a TEST setting): %u device(s) "
				"declared, none exists; jobs get NVIDIA_VISIBLE_DEVICES and no device node",
			d.gpu.n);
	else if (d.gpu.n)
		gv_info(&d.log, "%u GPU(s), runsc --nvproxy", d.gpu.n);
	if (geteuid() != 0)
		return gv_err_set(err, EPERM, "gavel-executor needs root for runsc and cgroups");
	if (probe_languages(&d, err) != 0)
		goto fail;
	struct gv_redis *r = redis_open(cfg, (int)cfg->redis_command_timeout_ms, err);
	if (!r)
		goto fail;
	char inf[GV_QUEUE_KEY_MAX], nq[GV_QUEUE_KEY_MAX];
	if (gv_queue_key_inflight(inf, sizeof(inf), d.node, err) != 0 || gv_queue_key_node(nq, sizeof(nq), d.node, err) != 0)
		goto fail_r;
	/* Whatever this node held when it last stopped is not running now. */
	list_requeue_all(r, inf, "left by an earlier run of this node", &d);
	d.slots = mmap(NULL, sizeof(*d.slots) * (size_t)d.workers, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (d.slots == MAP_FAILED) {
		d.slots = NULL;
		gv_err_errno(err, "mmap");
		goto fail_r;
	}
	d.gpu_table = mmap(NULL, sizeof(*d.gpu_table), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (d.gpu_table == MAP_FAILED) {
		d.gpu_table = NULL;
		gv_err_errno(err, "mmap");
		goto fail_workers;
	}
	exec_gpu_table_init(d.gpu_table, &d.gpu);
	for (int k = 0; k < d.workers; k++) {
		d.pids[k] = spawn(&d, k);
		if (d.pids[k] < 0) {
			gv_err_errno(err, "fork");
			goto fail_workers;
		}
	}
	/* Fail closed: register only once every worker's engine is up. */
	for (uint64_t t0 = mono_ms();;) {
		int ready = 0;
		for (int k = 0; k < d.workers; k++) {
			if (d.slots[k].state == 2) {
				gv_err_set(err, GV_ESANDBOX, "worker %d: %s", k, d.slots[k].error);
				goto fail_workers;
			}
			ready += d.slots[k].state == 1;
			int st;
			if (d.slots[k].state == 0 && waitpid(d.pids[k], &st, WNOHANG) == d.pids[k]) {
				d.pids[k] = 0;
				gv_err_set(err, GV_ESANDBOX, "worker %d exited during start-up", k);
				goto fail_workers;
			}
		}
		if (ready == d.workers)
			break;
		if (mono_ms() - t0 > 120000 || *stop) {
			gv_err_set(err, GV_ESANDBOX, "workers did not start");
			goto fail_workers;
		}
		gv_backoff_sleep_ms(50);
	}
	gv_info(&d.log, "node %s up: %d workers (%d regular slots, %d burst)", d.node, d.workers, cfg->capacity,
		cfg->burst_slots);
	pid_t webhook_pid = spawn_webhook(&d);
	uint64_t next_hb = 0, webhook_respawn = 0;
	while (!*stop) {
		if (gv_daemon_reload_asked && gv_daemon_reload(cfg, sizeof(*cfg))) {
			for (int k = 0; k < d.workers; k++)
				if (d.pids[k] > 0)
					kill(d.pids[k], SIGHUP);
			if (webhook_pid > 0)
				kill(webhook_pid, SIGTERM);
		}
		uint64_t now = mono_ms();
		int wst;
		if (webhook_pid > 0 && waitpid(webhook_pid, &wst, WNOHANG) == webhook_pid) {
			gv_warn(&d.log, "webhook delivery process ended (%s %d); restarting it",
				WIFSIGNALED(wst) ? "signal" : "exit", WIFSIGNALED(wst) ? WTERMSIG(wst) : WEXITSTATUS(wst));
			webhook_pid = 0;
			webhook_respawn = now + 1000;
		}
		if (webhook_pid <= 0 && now >= webhook_respawn) {
			webhook_pid = spawn_webhook(&d);
			webhook_respawn = now + 5000;
		}
		for (int k = 0; k < d.workers; k++) {
			int st;
			if (d.pids[k] > 0 && waitpid(d.pids[k], &st, WNOHANG) == d.pids[k]) {
				d.pids[k] = 0;
				gv_error(&d.log, "worker %d died (%s %d)%s%s", k, WIFSIGNALED(st) ? "signal" : "exit",
					 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
					 d.slots[k].token[0] ? "; handing back " : "", d.slots[k].token);
				exec_gpu_release(d.gpu_table, k);
				if (d.slots[k].token[0]) {
					struct gv_err e2;
					if (gv_queue_requeue_token(r, NULL, inf, d.slots[k].token, &e2) < 0)
						gv_error(&d.log, "hand-back: %s", e2.msg);
				}
				gv_backoff_sleep_ms(1000);
				d.pids[k] = spawn(&d, k);
			}
		}
		if (now >= next_hb) {
			struct gv_err e2;
			if (gv_queue_heartbeat(r, d.node, (unsigned)cfg->capacity, (unsigned)cfg->burst_slots, busy(&d),
					       d.gpu.n, d.gpu_ids, d.languages,
					       (long)getpid(), &e2) != 0)
				gv_warn(&d.log, "heartbeat: %s", e2.msg);
			publish_languages(&d, r);
			next_hb = now + cfg->heartbeat_interval_ms;
		}
		gv_backoff_sleep_ms(100);
	}
	gv_info(&d.log, "stopping: finishing the jobs in hand");
	if (webhook_pid > 0)
		kill(webhook_pid, SIGTERM);
	for (int k = 0; k < d.workers; k++)
		if (d.pids[k] > 0)
			kill(d.pids[k], SIGTERM);
	for (int k = 0; k < d.workers; k++) {
		while (d.pids[k] > 0) {
			int st;
			pid_t p = waitpid(d.pids[k], &st, WNOHANG);
			if (p == d.pids[k] || (p < 0 && errno == ECHILD)) {
				d.pids[k] = 0;
				break;
			}
			/* Keep the node alive in the registry while jobs finish. */
			struct gv_err e2;
			if (gv_queue_heartbeat(r, d.node, (unsigned)cfg->capacity, (unsigned)cfg->burst_slots, busy(&d),
					       d.gpu.n, d.gpu_ids, d.languages,
					       (long)getpid(), &e2) != 0)
				gv_warn(&d.log, "heartbeat: %s", e2.msg);
			gv_backoff_sleep_ms(200);
		}
	}
	/* The delivery process ends after its current attempt (at most
	 * webhook_timeout); one left over is killed. */
	for (uint64_t t0 = mono_ms(); webhook_pid > 0;) {
		pid_t p = waitpid(webhook_pid, NULL, WNOHANG);
		if (p == webhook_pid || (p < 0 && errno == ECHILD))
			break;
		if (mono_ms() - t0 > cfg->webhook_timeout_ms + 5000) {
			kill(webhook_pid, SIGKILL);
			waitpid(webhook_pid, NULL, 0);
			break;
		}
		gv_backoff_sleep_ms(100);
	}
	struct gv_err e3;
	if (gv_queue_deregister(r, d.node, &e3) != 0)
		gv_warn(&d.log, "deregistering: %s", e3.msg);
	list_requeue_all(r, nq, "assigned but not started at shutdown", &d);
	list_requeue_all(r, inf, "left at shutdown", &d);
	gv_redis_free(r);
	munmap(d.slots, sizeof(*d.slots) * (size_t)d.workers);
	munmap(d.gpu_table, sizeof(*d.gpu_table));
	free(d.offered);
	free(d.versions);
	lang_registry_free(&d.langs);
	gv_info(&d.log, "stopped");
	return 0;

fail_workers:
	for (int k = 0; k < d.workers; k++)
		if (d.pids[k] > 0) {
			kill(d.pids[k], SIGKILL);
			waitpid(d.pids[k], NULL, 0);
		}
	munmap(d.slots, sizeof(*d.slots) * (size_t)d.workers);
	if (d.gpu_table)
		munmap(d.gpu_table, sizeof(*d.gpu_table));
fail_r:
	gv_redis_free(r);
fail:
	free(d.offered);
	free(d.versions);
	lang_registry_free(&d.langs);
	return -1;
}
