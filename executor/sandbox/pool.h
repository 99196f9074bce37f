/* Sandboxes created ahead of demand, so that a job does not wait for a
 * gVisor boot (`runsc create`, ~150 ms): the job's own sandbox is then only
 * started (`runsc start`, ~50 ms) once its files are in /box.
 *
 * One pool per engine (per executor worker), keyed by the sandbox's shape
 * (executor/sandbox/session.h: tenant, memcg limit, RLIMIT_FSIZE backstop): a
 * pooled sandbox already sits in its tenant's cgroup with exactly the
 * limits of the jobs that will take it, so per-tenant accounting stays
 * honest and nothing is changed on a sandbox after it was created. The
 * pool keeps one sandbox for each of the `size` most recently wanted
 * shapes; a shape not wanted for `idle_ms` is forgotten and its sandbox
 * destroyed, and so is a sandbox that waited longer than that.
 *
 * Security argument: a pooled sandbox is still used for exactly one
 * submission. It is created with an empty /box and nothing inside runs
 * until a job adopts it: the job's files are written then, the sandbox is
 * started, and it is destroyed by exec_session_close like any other. No
 * sandbox of one shape is ever handed to a job of another shape (checked
 * again at adoption).
 *
 * Refills happen from exec_engine_poll while the engine has no job's
 * session open (the creation's CPU never competes with a running job of
 * this worker; a job's session counts as open from exec_session_open
 * on, its first phase included), one `runsc create` in flight at a time,
 * in the background (the CLI is a child collected by the engine's
 * reaper). Not thread-safe: the engine's thread only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "executor/sandbox/session.h"

#define EXEC_POOL_MAX 16

struct exec_pool_config {
	unsigned size;     /* sandboxes held ahead at most (= shapes remembered); 0: no pool */
	uint64_t idle_ms;  /* forget a shape, and destroy a sandbox, unused this long [60000] */
	/* Asked before each creation; NULL: always yes. A pooled sandbox is
	 * two runsc calls per job (create ahead, start) where a job without
	 * one makes one (run): ~40 ms more CPU per job, well spent while the
	 * node has idle CPUs (the boot is hidden), lost throughput when every
	 * CPU is busy with jobs. The executor says no while most of its
	 * workers are busy (node_has_spare, executor/daemon/worker.c). */
	bool (*has_spare)(void *arg);
	void *spare_arg;
};

struct exec_pool_stats {
	uint64_t hits, misses, created, expired, failed;
};

struct exec_pool {
	struct exec_engine *e;
	struct exec_pool_config cfg;
	struct exec_session *held[EXEC_POOL_MAX];  /* created or being created */
	size_t n_held;
	struct {
		struct exec_sandbox_shape shape;
		int64_t last_wanted;
	} wanted[EXEC_POOL_MAX];                   /* most recently wanted first */
	size_t n_wanted;
	int64_t retry_after;                       /* after a failed creation */
	bool ticking;                              /* a close inside tick polls the engine again */
	struct exec_pool_stats stats;
};

/* Attaches a pool to engine e (e->pool = p, and e->pool_hooks, through
 * which the engine and its sessions call the three functions below; p
 * owned by the caller, living until exec_pool_detach). With cfg->size 0
 * nothing is attached. */
int exec_pool_attach(struct exec_pool *p, struct exec_engine *e, const struct exec_pool_config *cfg,
		     struct gv_err *err) GV_MUST_CHECK;

/* Records that a job of shape wants a sandbox now, and hands over the
 * pool's sandbox of that shape (created, or still being created), or NULL.
 * The caller owns the session returned (exec_session_open adopts it). */
struct exec_session *exec_pool_take(struct exec_pool *p, const struct exec_sandbox_shape *shape);

/* Collects finished creations, destroys dead and expired sandboxes and,
 * while no job's session is open, starts creating the next missing one.
 * Never blocks. Called by exec_engine_poll. */
void exec_pool_tick(struct exec_pool *p);

/* Destroys every pooled sandbox (their tear-down goes on in the engine:
 * exec_engine_drain/fini) and detaches the pool. NULL-safe. */
void exec_pool_detach(struct exec_pool *p);
