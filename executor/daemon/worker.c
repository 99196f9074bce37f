/* A worker process of the executor (executor/daemon/daemon_internal.h): it
 * sets up its own sandbox engine (the engine is one per process: it is the
 * process's child subreaper), its pool of sandboxes created ahead, its
 * Redis and PostgreSQL connections and its share of stored problems, then
 * takes one job at a time from the node queue until SIGTERM, importing
 * problem packages while idle. The token it holds is in shared memory
 * (struct worker_slot), so that the supervisor can hand it back when the
 * worker dies. */
#include "executor/daemon/daemon_internal.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/backoff.h"
#include "common/daemon.h"
#include "executor/sandbox/cpuslot.h"
#include "executor/sandbox/pool.h"

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

/* Imports the next waiting problem package, at most once per
 * import_poll_interval while there is none. */
static void problems_import_tick(struct worker *w)
{
	uint64_t now = exec_daemon_mono_ms();
	if (now < w->next_import_ms)
		return;
	struct gv_err err;
	int rc = exec_problem_import_step(&w->penv, &err);
	if (rc < 0)
		gv_error(&w->d->log, "worker %d: problem import: %s", w->index, err.msg);
	/* Right away again after an import: more may be waiting. */
	w->next_import_ms = rc == 1 ? now : now + w->d->cfg->import_poll_interval_ms;
}

#define TAKE_WAIT_WARM_S 0.1

static volatile sig_atomic_t worker_stop;
static void worker_on_term(int sig)
{
	(void)sig;
	worker_stop = 1;
}

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


/* Start-up failed: the reason goes to the supervisor through the slot
 * (which refuses to register the node), and the process ends. */
static void __attribute__((noreturn)) worker_start_failed(struct worker *w, const struct gv_err *err,
							   bool engine_up)
{
	struct worker_slot *slot = &w->d->slots[w->index];
	snprintf(slot->error, sizeof(slot->error), "%s", err->msg);
	slot->state = 2;
	if (engine_up)
		exec_engine_fini(&w->engine);
	_exit(3);
}

/* The worker's own engine: runsc root, work folder and cgroup of its own
 * (<...>/<node>/w<k>), its share of the sandbox networks. */
static int worker_engine_init(struct worker *w, struct gv_err *err)
{
	const struct daemon *d = w->d;
	const struct exec_daemon_config *c = d->cfg;
	int k = w->index;
	snprintf(w->runsc_root, sizeof(w->runsc_root), "%s/%s/w%d", c->runsc_root, d->node, k);
	snprintf(w->work_root, sizeof(w->work_root), "%s/%s/w%d", c->work_root, d->node, k);
	/* A kernel node's workers sit in one folder: its CPU ceiling. */
	snprintf(w->cgroup, sizeof(w->cgroup), c->kernel_memory_mb > 0 ? "%s/%s/w%d" : "%s/%s-w%d", c->cgroup_parent,
		 d->cg_node, k);
	struct exec_engine_config ec = {
		.runsc_path = c->runsc_path,
		.runsc_root = w->runsc_root,
		.work_root = w->work_root,
		.init_path = c->init_path,
		.cgroup_parent = w->cgroup,
		.platform = c->platform && *c->platform ? c->platform : NULL,
		.nvproxy = d->gpu.n > 0 && !d->gpu.simulated,
		.pch_dir = c->pch_dir && *c->pch_dir ? c->pch_dir : NULL,
		.sandbox_uid_base = (uint32_t)c->sandbox_uid_base,
		.sandbox_uid_count = (uint32_t)c->sandbox_uid_count,
	};
	if (exec_cpuslot_parse(c->cpu_slots, &ec.cpu_slots, err) != 0)
		ec.cpu_slots = 0; /* refused before any worker starts */
	w->egress = calloc(1, sizeof(*w->egress));
	if (!w->egress)
		gv_err_set(err, ENOMEM, "out of memory");
	if (!w->egress || worker_net_config(d, k, w->net_prefix, &ec.net, err) != 0 ||
	    exec_engine_init(&w->engine, &ec, err) != 0) {
		gv_err_prefix(err, "engine");
		return -1;
	}
	return 0;
}

/* Whether token is a kernel's, placed by memory ("...:k<mb>"). */
static bool token_is_kernel(const char *token)
{
	struct gv_queue_token t;
	struct gv_err err;
	return gv_queue_token_parse(token, strlen(token), &t, &err) == 0 && t.kernel_mb > 0;
}

/* Takes jobs until SIGTERM; between two, reloads the options on SIGHUP,
 * imports problem packages and moves the engine's pending tear-downs on. */
static void worker_loop(struct worker *w)
{
	struct daemon *d = w->d;
	struct worker_slot *slot = &d->slots[w->index];
	struct gv_err err;
	gv_err_clear(&err);
	uint64_t last_err = 0;
	while (!worker_stop) {
		/* Between two jobs: the options a reload may change are read per job. */
		if (gv_daemon_reload_asked)
			(void)gv_daemon_reload(d->cfg, sizeof(*d->cfg));
		bool kernel_node = d->cfg->kernel_memory_mb > 0;
		if (!kernel_node)
			problems_import_tick(w);
		char token[GV_QUEUE_TOKEN_MAX + 1];
		/* While a finished sandbox's tear-down is pending, wait briefly:
		 * each poll moves it on, and reaps the gofer that its `runsc
		 * delete` waits for (a zombie counts as running to runsc). */
		kernel_pool_tick(w);
		/* Holding a kernel started ahead, look at the slot often: a job
		 * for it may be handed over (kernel_pool.c). */
		double wait_s = w->engine.n_pending > 0 ? 0.05 : kernel_pool_busy(w) ? TAKE_WAIT_WARM_S : 1.0;
		int got = gv_queue_take(w->r, d->node, wait_s, token, sizeof(token), &err);
		if (got < 0) {
			if (exec_daemon_mono_ms() - last_err > 5000) {
				gv_error(&d->log, "worker %d: taking work: %s", w->index, err.msg);
				last_err = exec_daemon_mono_ms();
			}
			gv_backoff_sleep_ms(500);
			continue;
		}
		if (got == 0) {
			exec_engine_poll(&w->engine);
			continue;
		}
		if (kernel_pool_handover_pending(w)) {
			exec_daemon_hand_back(w, token, "a kernel job is being handed to this worker");
			continue;
		}
		if (kernel_node && !token_is_kernel(token)) {
			/* The scheduler places only kernels here, with their memory. */
			exec_daemon_hand_back(w, token, "a kernel node runs only notebook kernels");
			gv_backoff_sleep_ms(1000);
			continue;
		}
		snprintf(slot->token, sizeof(slot->token), "%s", token);
		exec_daemon_job_run(w, token);
		exec_daemon_slot_claimed(w, false);
		slot->token[0] = '\0';
		/* A kernel node's many workers wait long between queries: none
		 * holds a database connection while it waits. */
		if (kernel_node)
			gv_pg_release(w->pg);
	}
}

void exec_daemon_worker_main(struct daemon *d, int k)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = worker_on_term;
	sa.sa_flags = SA_RESTART; /* the engine's own syscalls must not see EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* This process's copy of the daemon: the supervisor's flag is never
	 * set here, and a kernel watching it ran on after SIGTERM (its
	 * lifetime, hours), holding the node's shutdown. */
	d->stop = &worker_stop;
	struct worker w;
	memset(&w, 0, sizeof(w));
	w.d = d;
	w.index = k;
	snprintf(w.actor, sizeof(w.actor), "system:executor@%s", d->node);
	const struct exec_daemon_config *c = d->cfg;
	struct gv_err err;
	gv_err_clear(&err);
	if (worker_engine_init(&w, &err) != 0)
		worker_start_failed(&w, &err, false);
	/* BLMOVE blocks up to 1 s: the command timeout must be above it. */
	if (!(w.r = exec_daemon_redis_open(c, (int)c->redis_command_timeout_ms + 2000, &err)) ||
	    !(w.pg = c->kernel_memory_mb > 0 ? exec_daemon_pg_open_gated(&w, &err) : exec_daemon_pg_open(c, false, &err)))
		worker_start_failed(&w, &err, true);
	/* Refilled from the engine's poll: at each job's close, and in the
	 * loop while no work comes (executor/sandbox/pool.h). */
	struct exec_pool pool;
	/* A kernel node judges nothing: no judging sandboxes ahead there. */
	struct exec_pool_config pool_cfg = { .size = c->kernel_memory_mb > 0 ? 0u : (unsigned)c->pool_size,
					     .idle_ms = c->pool_idle_ms,
					     .has_spare = node_has_spare, .spare_arg = &w };
	if (exec_pool_attach(&pool, &w.engine, &pool_cfg, &err) != 0 || problems_init(&w, &err) != 0)
		worker_start_failed(&w, &err, true);
	/* The kernel bridge, read once: every kernel's sandbox gets it. */
	char dir[4096], bridge_path[4200];
	snprintf(dir, sizeof(dir), "%s", c->init_path);
	snprintf(bridge_path, sizeof(bridge_path), "%s/%s", dirname(dir), KERNEL_BRIDGE_NAME);
	if (!(w.bridge = exec_kernel_bridge_load(bridge_path, &w.bridge_len, &err)))
		gv_warn(&d->log, "worker %d: no notebook kernels: %s", k, err.msg);
	d->slots[k].state = 1;
	worker_loop(&w);
	kernel_pool_drop(&w);
	free(w.bridge);
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
