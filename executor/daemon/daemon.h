/* gavel-executor's library: one node of the service. A supervisor process
 * probes the toolchains, registers the node (gavel:exec:<node>) and
 * heartbeats; `capacity` + `burst_slots` worker processes (the scheduler
 * fills burst slots only for tenants below their fair share), each with its own sandbox engine
 * (the engine is one per process: it is the process's child subreaper),
 * take jobs from the node queue (BLMOVE into gavel:inflight:<node>), run
 * them (executor/judge/judge_inline.h) and write the result, usage and audit
 * records in one PostgreSQL transaction, idempotently, before acknowledging
 * the job and publishing gavel:done. Keys: common/queue.h.
 *
 * Failure model: at-least-once. A worker that dies mid-job has its job
 * handed back to the front of its tenant queue by the supervisor; a node
 * that dies has it handed back by the scheduler; a job run twice is written
 * once (UPDATE ... WHERE status <> 'done'). A machinery failure is verdict
 * IE, never WA. SIGTERM: stop taking work, finish the jobs in hand, hand
 * back what was assigned but not started, deregister.
 *
 * GPUs (executor/sandbox/gpu.h): the node's devices are checked at start (real
 * ones need runsc --nvproxy, else the daemon refuses to start); a GPU job's
 * worker claims exact device ids in memory shared with the supervisor,
 * which frees a dead worker's; the ids go into the sandbox as
 * NVIDIA_VISIBLE_DEVICES, into its audit records, and device-seconds into
 * usage.
 *
 * Webhooks: after a result commits, the worker schedules its callback_url
 * delivery in Redis (one ZADD); a separate delivery process of the
 * supervisor delivers, retries and records them (executor/daemon/webhook.h). */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"

struct exec_daemon_config {
	int log_level;            /* enum gv_log_level */
	char *node_name;          /* empty: host name */
	int capacity;             /* regular slots (executor.max_parallel) */
	int burst_slots;          /* more workers, for tenants below their share */
	char *gpus;               /* executor.gpus: device ids, "" none */
	bool gpu_simulated;       /* TEST ONLY: executor/sandbox/gpu.h */
	/* Sandbox networks (executor/sandbox/netpolicy.h): the node's private
	 * address pool, shared out among the workers, and the name prefix of
	 * what they create (worker k: <prefix><k as 2 digits>); "" = no
	 * egress. */
	char *egress_pool;
	char *egress_ifprefix;
	uint64_t heartbeat_interval_ms;
	char *runsc_path;
	char *runsc_root;         /* per worker: <runsc_root>/<node>/w<k> */
	char *work_root;          /* per worker: <work_root>/<node>/w<k> */
	char *cgroup_parent;      /* per worker: <cgroup_parent>/<node>-w<k> */
	char *platform;           /* empty: runsc's default */
	char *languages_dir;
	char *pch_dir;            /* precompiled headers (languages/lang_pch.h); "" none */
	char *cpu_slots;          /* executor/sandbox/cpuslot.h: off, auto or a count */
	char *init_path;
	uint64_t probe_timeout_ms;
	char *database_url;       /* database.service_url */
	char *database_owner_url; /* database.url: used when service_url is empty */
	uint64_t db_connect_timeout_ms;
	uint64_t db_statement_timeout_ms;
	char *redis_url;
	uint64_t redis_connect_timeout_ms;
	uint64_t redis_command_timeout_ms;
	/* Webhooks (executor/daemon/webhook.h): one delivery process per
	 * node. */
	int webhook_max_attempts;
	uint64_t webhook_timeout_ms;
	uint64_t webhook_backoff_ms;
	uint64_t webhook_backoff_max_ms;
	bool webhook_allow_loopback; /* TEST ONLY */
	uint64_t webhook_recover_after_ms;
	char *webhook_user;
	/* Stored problems (executor/problems/problem_store.h,
	 * testdata_cache.h). */
	char *testdata_cache_dir;
	uint64_t testdata_cache_size; /* bytes; 0: no cache */
	uint64_t import_poll_interval_ms;
	/* Sandboxes created ahead of demand, per worker
	 * (executor/sandbox/pool.h). */
	int pool_size;            /* 0: no pool */
	/* Notebook kernels started ahead on the node
	 * (executor/daemon/kernel_pool.c). */
	int kernel_pool;          /* 0: none */
	uint64_t kernel_pool_idle_ms;
	/* Kernels restored from an image of a warmed template instead of
	 * started fresh (executor/daemon/kernel_images.c). */
	bool kernel_images;
	/* > 0: a kernel node, running only notebook kernels, admitted by the
	 * scheduler up to this much memory (MiB) and `capacity` at once, all
	 * of them under one CPU ceiling (executor/sandbox/cpu_ceiling.h). */
	int kernel_memory_mb;
	int kernel_cpu_ceiling_pct; /* of one CPU, for all kernels of the node */
	int kernel_cpu_weight_pct;  /* their share beside a judging sandbox's */
	int sandbox_uid_base;     /* sandboxes' host uids (executor/sandbox/sandbox_uid.h) */
	int sandbox_uid_count;
	uint64_t pool_idle_ms;
};

extern const struct gv_config_option exec_daemon_config_table[];
extern const size_t exec_daemon_config_table_len;

/* Runs the node until *stop is set (SIGTERM/SIGINT in main), then shuts
 * down gracefully. On SIGHUP (common/daemon.h) the supervisor reloads cfg
 * and, when the new values were applied, passes the signal to its workers,
 * which reload between two jobs, and restarts the webhook delivery process
 * (it holds no job) so that it starts again from the new values. Returns 0 after a clean shutdown, -1 with err when
 * start-up failed (no toolchain works, the engine cannot be set up, Redis
 * unreachable): fails closed, nothing registered. */
int exec_daemon_run(struct exec_daemon_config *cfg, volatile sig_atomic_t *stop,
		    struct gv_err *err) GV_MUST_CHECK;

/* `gavel-executor --prepare`: builds the node's precompiled headers and
 * class archives (languages/lang_pch.h) in cfg->pch_dir now and says so on
 * stdout, so that the node's first submissions need not wait for them; run
 * at install, before the node starts (a node warms in the background what
 * is missing). A language whose build fails is reported and compiles
 * without (speed only); -1 with err when the languages or the folder are
 * unusable. */
int exec_daemon_prepare(const struct exec_daemon_config *cfg, struct gv_err *err) GV_MUST_CHECK;
