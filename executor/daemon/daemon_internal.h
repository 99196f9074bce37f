/* Private to executor/daemon/: what the supervisor (daemon.c), its worker
 * processes (worker.c, job.c), the language probe (languages.c) and the
 * webhook delivery process (webhook_process.c) share. Not for other
 * folders: executor/daemon/daemon.h is the daemon's interface. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "common/log.h"
#include "common/pg.h"
#include "common/queue.h"
#include "common/redis.h"
#include "executor/daemon/daemon.h"
#include "executor/kernels/kernel.h"
#include "executor/problems/problem_judge.h"
#include "executor/problems/problem_store.h"
#include "executor/problems/testdata_cache.h"
#include "executor/sandbox/gpu.h"
#include "executor/sandbox/session.h"
#include "languages/lang.h"
#include "tenants/egress.h"

#define DAEMON_MAX_WORKERS 256
#define DAEMON_MAX_BURST 8
#define DAEMON_LANGS_MAX 1024
#define KERNEL_BRIDGE_NAME "gavel-kernel-bridge.py" /* beside gavel-init */

/* What a notebook kernel started ahead is made for (kernel_pool.c). */
struct kernel_shape {
	char tenant[GV_QUEUE_TID_MAX + 1];
	uint32_t memory_mb, cpu_pct, lifetime_s, idle_s;
};

/* A worker's part of the node's kernel pool (kernel_pool.c), in its slot. */
struct kernel_pool_slot {
	/* The shape of the last kernel this worker claimed; written by the
	 * worker only, under a sequence count (odd while written). */
	unsigned wanted_seq;
	struct kernel_shape wanted;
	int64_t wanted_ms;        /* CLOCK_MONOTONIC, the same for every process */
	int warm_state;           /* compare-and-swap only (kernel_pool.c) */
	struct kernel_shape warm; /* the held kernel's; written by its worker in state none */
	char handoff[GV_QUEUE_TOKEN_MAX + 1]; /* written by the taker in state claimed */
};

/* What courses asked to have warm now (tenants/kernel_warm.h), read from
 * PostgreSQL by a kernel node's supervisor every few seconds and shared
 * with its workers (MAP_SHARED) under a sequence count (odd while
 * written): each a shape as this node's kernels of that tenant get it, and
 * how many. */
#define KERNEL_WARM_ASKS_MAX 64
struct kernel_warm_ask {
	struct kernel_shape shape;
	uint32_t kernels;
};
struct kernel_warm_asks {
	unsigned seq;
	unsigned n;
	struct kernel_warm_ask ask[KERNEL_WARM_ASKS_MAX];
};

/* Shared between the supervisor and the workers (MAP_SHARED). */
struct worker_slot {
	volatile int state; /* 0 starting, 1 ready, 2 failed */
	char token[GV_QUEUE_TOKEN_MAX + 1];
	/* 1 from the job's claim in PostgreSQL to its acknowledgement: the
	 * supervisor keeps token in the node's in-flight list meanwhile. */
	volatile int claimed;
	char error[GV_ERR_MSG_MAX];
	struct kernel_pool_slot kpool;
	/* node_gate.c: 1 while this worker holds a place of that gate. */
	int gate_held[2];
};

/* The supervisor's state; each worker and the webhook process inherit a
 * copy at fork (slots and gpu_table stay shared). */
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
	struct kernel_warm_asks *warm_asks; /* MAP_SHARED with the workers */
	char gpu_ids[EXEC_GPU_IDS_TEXT_MAX]; /* "0,1": reported in the registry */
	struct gv_log_ctx log;
	volatile sig_atomic_t *stop;
};

/* One worker process: lives on worker_main's stack until the process
 * exits. */
struct worker {
	struct daemon *d;
	int index;
	struct exec_engine engine;
	/* The engine's folders and names (the engine keeps these pointers). */
	char runsc_root[4096];
	char work_root[4096];
	char cgroup[256];
	char net_prefix[EXEC_NET_PREFIX_MAX + 1];
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
	/* sandbox.started records of the current job that PostgreSQL did not
	 * take when the sandbox opened (a failover): written with its result. */
	struct deferred_audit {
		char sandbox_id[128];
		char details[512];
	} deferred[8];
	size_t n_deferred;
	/* Notebook kernels: the bridge beside gavel-init, and the kernel
	 * this worker holds started ahead (kernel_pool.c). */
	char *bridge;      /* its source, read at the worker's start; NULL: unreadable (logged) */
	size_t bridge_len;
	struct exec_kernel_warm *warm;
	struct kernel_shape warm_shape;
	int64_t warm_made_ms, warm_retry_ms;
	int64_t warm_over_ms;   /* since when the node's kernels pass its memory (0: they do not) */
	int64_t image_retry_ms; /* a kernel image failed: not tried again before */
};

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t exec_daemon_mono_ms(void);

/* Connections from the daemon's options; NULL with err. The caller frees
 * them (gv_redis_free, gv_pg_free). */
struct gv_redis *exec_daemon_redis_open(const struct exec_daemon_config *c, int command_timeout_ms,
					struct gv_err *err);
struct gv_pg *exec_daemon_pg_open(const struct exec_daemon_config *c, bool lazy, struct gv_err *err);
/* A kernel node worker's: connected at first use, under the node's gate
 * (node_gate.c). */
struct gv_pg *exec_daemon_pg_open_gated(struct worker *w, struct gv_err *err);

/* languages.c: loads the language files, makes the precompiled headers'
 * folder (warm.c fills it) and probes every toolchain into d->offered,
 * d->versions and d->languages; -1 with err when none works. */
int exec_daemon_probe_languages(struct daemon *d, struct gv_err *err) GV_MUST_CHECK;
/* languages.c: publishes the probed versions (one heartbeat's worth). */
void exec_daemon_publish_languages(struct daemon *d, struct gv_redis *r);

/* warm.c: starts the process that builds the node's precompiled headers
 * and class archives while the node serves (0 when there is nothing to
 * build or the fork failed, logged). */
pid_t exec_daemon_warm_spawn(struct daemon *d);
/* warm.c: reaps the warm-up process when it ended (*pid set to 0); with
 * stop, ends it first and waits (its compiler goes with it). */
void exec_daemon_warm_reap(pid_t *pid, bool stop);

/* worker.c: worker k's process; never returns. */
void exec_daemon_worker_main(struct daemon *d, int k) __attribute__((noreturn));

/* job.c: takes one job (its token already moved to this node's in-flight
 * list) from the claim to the acknowledgement; every failure is logged,
 * the job recorded as IE or handed back. */
void exec_daemon_job_run(struct worker *w, const char *token);

/* job.c: puts a token this worker took back in front of its tenant queue
 * (logged; when that fails the scheduler does it once the node is gone). */
void exec_daemon_hand_back(struct worker *w, const char *token, const char *why);
/* The supervisor's check of the node's in-flight list (daemon.c) runs this
 * often and counts its rounds in the node's registry hash under this
 * field; a claim waits two rounds before it takes over a job whose node is
 * alive (job.c). */
#define EXEC_INFLIGHT_HEAL_MS 1000u
#define EXEC_HEAL_ROUNDS_FIELD "heal_rounds"
/* Marks this worker's job claimed (running here) or not. */
void exec_daemon_slot_claimed(struct worker *w, bool claimed);

/* job.c: the tenant's current egress policy into w->egress (never from
 * the request); w->egress_granted tells whether it grants a network. -1
 * (err) when it cannot be loaded: the job must not run. */
int exec_daemon_load_egress(struct worker *w, const char *tid, struct gv_err *err) GV_MUST_CHECK;

/* kernel_job.c: whether a claimed request is a notebook kernel's
 * ({"kind":"kernel",...}; executor/kernels/README.md). */
bool exec_daemon_kernel_request(const char *request);
/* kernel_job.c: runs a claimed kernel until it ends (attempts: the
 * claim's count; above 1 its node was lost and it is not started again),
 * then writes its result, usage and audit and acknowledges the token. */
void exec_daemon_kernel_run(struct worker *w, const struct gv_queue_token *t, const char *request, long attempts);

/* kernel_job.c: runs a kernel whose job another worker claimed and handed
 * over (kernel_pool.c) with the kernel this worker held for its shape
 * (NULL: a fresh one), to its end, as exec_daemon_kernel_run. */
void exec_daemon_kernel_run_handed(struct worker *w, const char *token, const struct kernel_shape *shape,
				   struct exec_kernel_warm *warm);

/* kernel_pool.c: the node's notebook kernels started ahead. */
void kernel_pool_shape(struct kernel_shape *out, const struct exec_kernel_spec *spec);
/* Records that this worker's node wanted a kernel of shape now. */
void kernel_pool_want(struct worker *w, const struct kernel_shape *shape);
/* Between two jobs: runs a kernel handed to this worker (until it ends),
 * or moves the held kernel on (started, died, expired), or starts one
 * ahead for the most recently wanted shape the node holds none of. */
void kernel_pool_tick(struct worker *w);
/* True while this worker holds a kernel ahead or is being handed one: it
 * then looks at its slot often (TAKE_WAIT_WARM_S in worker.c). */
bool kernel_pool_busy(const struct worker *w);
/* True while a taker is handing this worker a kernel job: a job it has
 * just taken goes back to the queue rather than keep that kernel waiting. */
bool kernel_pool_handover_pending(const struct worker *w);
/* This worker's own kernel of shape, taken out of the pool; or NULL. */
struct exec_kernel_warm *kernel_pool_take_own(struct worker *w, const struct kernel_shape *shape);
/* Hands the kernel job token to an idle worker holding a kernel of shape;
 * its index once that worker adopted it, or -1 (none, or it did not take
 * it within 3 s: the caller runs the kernel itself). */
int kernel_pool_hand_over(struct worker *w, const char *token, const struct kernel_shape *shape);
/* Drops the held kernel, if any (the worker stops, or starts a kernel of
 * another shape, which would keep it unwatched for hours). */
void kernel_pool_drop(struct worker *w);

/* node_gate.c: bounds on what a kernel node's workers do at once, each a
 * place per worker in its shared slot (freed with the slot when a worker
 * dies). EXEC_GATE_PG: at most EXEC_PG_GATE_MAX hold a PostgreSQL
 * connection (a class's kernels claimed at once would each open one: "too
 * many clients" for every daemon); the gate of worker w for struct
 * gv_pg_opts. EXEC_GATE_START: kernels starting fresh, as many as the
 * CPU ceiling has whole CPUs (at least one): side by side under the
 * ceiling, 30 starts all took 195 s; one after another, each its ~4 s. */
enum exec_gate { EXEC_GATE_PG, EXEC_GATE_START };
#define EXEC_PG_GATE_MAX 8
/* true once w holds a place (false: none within wait_ms, or stopping). */
bool exec_gate_take(struct worker *w, enum exec_gate g, int places, uint64_t wait_ms);
void exec_gate_give(struct worker *w, enum exec_gate g);
bool exec_pg_gate_take(void *worker);
void exec_pg_gate_give(void *worker);
/* The start gate's places on a kernel node (kernel_job.c). */
int exec_daemon_start_places(const struct exec_daemon_config *cfg);

/* kernel_images.c. Empties (and makes) the node's folder of kernel
 * images, by the supervisor before any worker starts. */
int kernel_images_reset(const struct daemon *d, struct gv_err *err) GV_MUST_CHECK;
/* A kernel for spec restored from the node's image (it answers once its
 * `ready` comes), for a kernel that may wait waits_ms before its
 * lifetime starts; NULL when there is none to use or the restore failed
 * (logged): the caller starts it fresh. */
struct exec_kernel_warm *kernel_images_restore(struct worker *w, const struct exec_kernel_spec *spec,
					       uint64_t waits_ms);
/* The two halves of kernel_images_restore: the image a kernel for spec
 * (waiting waits_ms first) may be restored from, into image (false: none
 * to use); and the restore from it (NULL: failed, logged). */
#define KERNEL_IMAGE_PATH_MAX 4400
bool kernel_images_find(const struct worker *w, const struct exec_kernel_spec *spec, uint64_t waits_ms,
			char image[KERNEL_IMAGE_PATH_MAX]);
struct exec_kernel_warm *kernel_images_restore_from(struct worker *w, const struct exec_kernel_spec *spec,
						    const char *image);
/* An idle worker's turn: makes the image of the first budget in wanted_mb
 * that has none made within the hour (seconds; one worker at a time per
 * budget). True when it made one. */
bool kernel_images_tick(struct worker *w, const uint32_t *wanted_mb, size_t n);

/* kernel_warm_asks.c. The shared table, mapped at start; unmapped. */
int kernel_warm_asks_map(struct daemon *d, struct gv_err *err) GV_MUST_CHECK;
void kernel_warm_asks_unmap(struct daemon *d);
/* The supervisor of a kernel node, every few seconds (*next_ms): the asks
 * of now into the table, through *pg (opened on first use), each ask's
 * count cut to this node's part of the live kernel nodes' memory (the
 * registry, through r). A failure keeps the last table and is logged
 * once until a refresh works. */
void kernel_warm_asks_refresh(struct daemon *d, struct gv_pg **pg, struct gv_redis *r, uint64_t now,
			      uint64_t *next_ms);
/* A consistent copy of the table into out (KERNEL_WARM_ASKS_MAX); the
 * count, or -1 while it is being written (the next tick reads it). */
int kernel_warm_asks_read(const struct daemon *d, struct kernel_warm_ask *out);

/* webhook_process.c: forks the webhook delivery process; its pid, or -1
 * (logged). */
pid_t exec_daemon_webhook_spawn(struct daemon *d);
