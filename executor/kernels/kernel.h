/* One notebook kernel from its sandbox's start to its end
 * (executor/kernels/README.md): a fresh interactive sandbox running the
 * bridge and ipykernel, the relay between it and Redis (commands from
 * gavel:kin:<kid>, frames to gavel:kout:<kid>, the model in
 * gavel:kstate:<kid>), interrupts, restarts in a fresh sandbox, and the
 * ends: client, idle, lifetime, the kernel's death, the node stopping.
 *
 * The daemon (executor/daemon/job.c) claims the job, writes the result,
 * the usage and the final audit record; this file knows nothing of
 * PostgreSQL. Threading: the engine's (one thread). */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/log.h"
#include "common/redis.h"
#include "executor/sandbox/engine.h"
#include "tenants/egress.h"

#define EXEC_KERNEL_CONNS_MAX 64      /* WebSocket connections per kernel */
#define EXEC_KERNEL_REASON_MAX 16

/* Budgets of one kernel, from its request (the frontend copied them from
 * the tenant's quotas; limits never come from a client). */
struct exec_kernel_spec {
	const char *tenant; /* tenant id: the sandbox's cgroup parent */
	const char *kid;    /* kernel id: a lower-case UUID */
	uint32_t lifetime_s, idle_s, memory_mb;
	uint32_t cpu_pct; /* the sandbox's CPU quota, % of one CPU; 0: the node's */
	/* The tenant's egress policy, as for its submissions (NULL: none). */
	const struct tenant_egress_policy *egress;
};

struct exec_kernel_env {
	struct exec_engine *engine;
	struct gv_redis *r;         /* PUBLISH, HSET, DEL */
	/* BLPOP gavel:kin:<kid> only: a connection of this kernel's own,
	 * which the caller frees after (a BLPOP may still be pending). */
	struct gv_redis *rin;
	/* The bridge's source (exec_kernel_bridge_load, once per process);
	 * borrowed. NULL: kernels cannot start (their end says so). */
	const char *bridge;
	size_t bridge_len;
	const char *node;
	volatile sig_atomic_t *stop; /* the daemon stops: the kernel ends (reason shutdown) */
	const struct gv_log_ctx *log;
	/* Audit of the kernel's life (kernel.started with the sandbox id,
	 * kernel.interrupted, kernel.restarted); NULL: none. details is a
	 * JSON object. */
	void (*audit)(void *arg, const char *action, const char *sandbox, const char *details);
	void *audit_arg;
	/* Called once the first sandbox answers (kernel_info works): for the
	 * start-up figure. NULL: none. */
	void (*ready)(void *arg, uint64_t ms_since_start);
	/* A kernel started ahead for this kernel's shape (below), which
	 * exec_kernel_run adopts as its first sandbox and owns from then on,
	 * whatever happens; NULL: a fresh sandbox is started now. */
	struct exec_kernel_warm *warm;
	/* A sandbox restored from an image that has not answered this long
	 * after its adoption is replaced by a fresh one, as one that ended
	 * is; 0: EXEC_KERNEL_CLONE_ANSWER_MS. */
	uint32_t clone_answer_ms;
};

#define EXEC_KERNEL_CLONE_ANSWER_MS 30000

struct exec_kernel_outcome {
	/* client, idle, lifetime, died, memory, error, shutdown */
	char reason[EXEC_KERNEL_REASON_MAX];
	char message[256];
	uint64_t kernel_ms;      /* from the first sandbox's start to the end */
	uint64_t peak_memory_kb; /* the highest of its sandboxes' cgroup peaks */
	uint64_t cpu_ms;         /* the host's count of its sandboxes' CPU */
	unsigned restarts, interrupts;
	char sandbox[40];        /* the last sandbox's id */
};

/* A kernel started ahead of demand (executor/daemon/kernel_pool.c): the
 * bridge and ipykernel started in a fresh sandbox made for exactly one
 * future kernel's shape (tenant, memory, CPU quota, lifetime; never a
 * network: kernels whose tenant grants egress always start fresh), before
 * its kernel id is known. No tenant code and no client message reaches it
 * before exec_kernel_run adopts it; it serves that one kernel and is
 * destroyed with it. Its sandbox's wall and CPU limits are the lifetime
 * plus max_wait_ms (the longest it may wait for adoption), and the relay
 * ends the kernel at its lifetime counted from adoption. */
struct exec_kernel_warm;

/* Opens the sandbox and starts the bridge; does not wait for it to
 * answer (exec_kernel_warm_step). spec->kid is not used. 0 with *out;
 * -1 with err. */
int exec_kernel_warm_start(struct exec_engine *e, const char *bridge, size_t bridge_len, const struct exec_kernel_spec *spec,
			   uint64_t max_wait_ms, struct exec_kernel_warm **out, struct gv_err *err) GV_MUST_CHECK;
/* Takes what the bridge sent, without blocking: 1 once it answered, 0
 * while it starts, -1 (err) when it died or broke the protocol (free it). */
int exec_kernel_warm_step(struct exec_kernel_warm *w, struct gv_err *err) GV_MUST_CHECK;
/* The sandbox's id (for logs). */
const char *exec_kernel_warm_sandbox(const struct exec_kernel_warm *w);
/* Closes its sandbox (NULL-safe). */
void exec_kernel_warm_free(struct exec_kernel_warm *w);
/* Whether it was restored from a template's image (kernel_image.h). */
bool exec_kernel_warm_restored(const struct exec_kernel_warm *w);

/* The bridge (executor/kernels/bridge.py, installed beside gavel-init) read
 * from path: a fresh buffer of *len bytes, or NULL with err. Read once at
 * the worker's start, not at each kernel's. */
char *exec_kernel_bridge_load(const char *path, size_t *len, struct gv_err *err);

/* Runs the kernel until it ends; out says why. -1 (err) only when its
 * first sandbox could not be made (nothing ran: the caller records an
 * internal error); every later failure is an end with reason error. */
int exec_kernel_run(const struct exec_kernel_env *env, const struct exec_kernel_spec *spec,
		    struct exec_kernel_outcome *out, struct gv_err *err) GV_MUST_CHECK;

/* Tells the kernel's clients it ended (`gone <reason>` on
 * gavel:kout:<kid>): the frontend closes their WebSockets. The caller
 * sends it once the end is recorded, so that a client that reconnects
 * finds the kernel gone (404). Best effort. */
void exec_kernel_announce_end(struct gv_redis *r, const char *kid, const char *reason);
