/* The executor's supervisor (executor/daemon/daemon.h): it checks the
 * node's settings and GPUs, probes the languages, starts the worker
 * processes (worker.c) and the webhook delivery process
 * (webhook_process.c) and the warm-up process that builds the precompiled
 * headers meanwhile (warm.c), registers the node only once every worker's engine
 * is up, then heartbeats, respawns what dies (handing back a dead worker's
 * job and freeing its GPUs), passes a reload (SIGHUP) on, and on SIGTERM
 * shuts down gracefully. The supervisor never runs a sandbox. */
#include "executor/daemon/daemon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/backoff.h"
#include "common/daemon.h"
#include "executor/daemon/daemon_internal.h"
#include "executor/sandbox/cpu_ceiling.h"
#include "executor/sandbox/cpuslot.h"

uint64_t exec_daemon_mono_ms(void)
{
	return gv_mono_ms();
}

struct gv_redis *exec_daemon_redis_open(const struct exec_daemon_config *c, int command_timeout_ms,
					struct gv_err *err)
{
	struct gv_redis_opts o = {
		.url = c->redis_url,
		.connect_timeout_ms = (int)c->redis_connect_timeout_ms,
		.command_timeout_ms = command_timeout_ms,
		.max_attempts = 3,
	};
	return gv_redis_new(&o, err);
}

static struct gv_pg *pg_open(const struct exec_daemon_config *c, bool lazy, struct worker *gated, struct gv_err *err)
{
	const char *url = c->database_url && *c->database_url ? c->database_url : c->database_owner_url;
	struct gv_pg_opts po = {
		.url = url,
		.connect_timeout_s = (int)((c->db_connect_timeout_ms + 999) / 1000),
		.statement_timeout_ms = (int)c->db_statement_timeout_ms,
		.max_attempts = 3,
		.lazy = lazy,
		.gate_take = gated ? exec_pg_gate_take : NULL,
		.gate_give = gated ? exec_pg_gate_give : NULL,
		.gate_arg = gated,
	};
	return gv_pg_new(&po, err);
}

struct gv_pg *exec_daemon_pg_open(const struct exec_daemon_config *c, bool lazy, struct gv_err *err)
{
	return pg_open(c, lazy, NULL, err);
}

struct gv_pg *exec_daemon_pg_open_gated(struct worker *w, struct gv_err *err)
{
	return pg_open(w->d->cfg, true, w, err);
}

/* The supervisor's Redis connection and the node's two lists. */
struct supervisor {
	struct daemon *d;
	struct gv_redis *r;
	char inflight[GV_QUEUE_KEY_MAX];
	char node_queue[GV_QUEUE_KEY_MAX];
	pid_t webhook_pid;
	uint64_t webhook_respawn_ms;
	uint64_t next_heartbeat_ms;
	uint64_t next_heal_ms;
	bool heal_failing; /* said once until a round works again */
	/* A kernel node's: what courses asked to have warm, read every few
	 * seconds (kernel_warm_asks.c). */
	struct gv_pg *pg;
	uint64_t next_warm_asks_ms;
	pid_t warm_pid; /* the precompiled headers' builder (warm.c); 0: done */
};

static pid_t spawn(struct daemon *d, int k)
{
	memset(&d->slots[k], 0, sizeof(d->slots[k]));
	pid_t pid = fork();
	if (pid == 0)
		exec_daemon_worker_main(d, k);
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

static void heartbeat(struct supervisor *s)
{
	struct daemon *d = s->d;
	const struct exec_daemon_config *cfg = d->cfg;
	struct gv_err err;
	struct gv_queue_node_report rep = {
		.capacity = (unsigned)cfg->capacity, .burst = (unsigned)cfg->burst_slots, .running = busy(d),
		.gpus = d->gpu.n, .gpu_ids = d->gpu_ids, .languages = d->languages, .pid = (long)getpid(),
		.kernel_mb = (unsigned)cfg->kernel_memory_mb,
	};
	if (gv_queue_heartbeat(s->r, d->node, &rep, &err) != 0)
		gv_warn(&d->log, "heartbeat: %s", err.msg);
}

/* The node's name (executor.node_name or the host name), its slots and
 * its GPUs, checked before anything is started. */
static int check_node(struct daemon *d, struct gv_err *err)
{
	const struct exec_daemon_config *cfg = d->cfg;
	if (cfg->node_name && *cfg->node_name) {
		snprintf(d->node, sizeof(d->node), "%s", cfg->node_name);
	} else if (gethostname(d->node, sizeof(d->node) - 1) != 0) {
		return gv_err_errno(err, "gethostname");
	}
	if (!gv_queue_node_ok(d->node))
		return gv_err_set(err, GV_ECONFIG, "node name '%s' is not [A-Za-z0-9_.-]{1,64}", d->node);
	snprintf(d->cg_node, sizeof(d->cg_node), "%s", d->node);
	for (char *p = d->cg_node; *p; p++)
		if (*p == '.')
			*p = '_';
	d->log.node = d->node;
	if (cfg->capacity < 1 || cfg->capacity > DAEMON_MAX_WORKERS)
		return gv_err_set(err, GV_ECONFIG, "executor.max_parallel must be 1..%d", DAEMON_MAX_WORKERS);
	if (cfg->burst_slots < 0 || cfg->burst_slots > DAEMON_MAX_BURST)
		return gv_err_set(err, GV_ECONFIG, "executor.burst_slots must be 0..%d", DAEMON_MAX_BURST);
	if (cfg->kernel_memory_mb > 0 && (cfg->burst_slots != 0 || (cfg->gpus && cfg->gpus[0])))
		return gv_err_set(err, GV_ECONFIG, "a kernel node (executor.kernel_memory_mb) has no burst slots and "
						    "no GPUs: set executor.burst_slots = 0 and executor.gpus empty");
	d->workers = cfg->capacity + cfg->burst_slots;
	uint32_t cpu_slots;
	if (exec_cpuslot_parse(cfg->cpu_slots, &cpu_slots, err) != 0)
		return -1;
	if (exec_gpu_inventory_init(&d->gpu, cfg->gpus, cfg->gpu_simulated, cfg->runsc_path, "/dev", err) != 0)
		return -1;
	if (exec_gpu_ids_text(d->gpu.ids, d->gpu.n, d->gpu_ids, sizeof(d->gpu_ids)) != 0)
		return gv_err_set(err, GV_ECONFIG, "executor.gpus: too long");
	if (d->gpu.simulated)
		gv_warn(&d->log, "SIMULATED GPU inventory (executor.gpu_simulated, a TEST setting): %u device(s) "
				 "declared, none exists; jobs get NVIDIA_VISIBLE_DEVICES and no device node",
			d->gpu.n);
	else if (d->gpu.n)
		gv_info(&d->log, "%u GPU(s), runsc --nvproxy", d->gpu.n);
	return 0;
}

/* A kernel node's start: its workers' cgroups, under
 * <cgroup_parent>/<node>, get the node's CPU ceiling before any kernel
 * starts (without it the node does not start: fail closed), and the
 * database is tried once. */
static int kernel_node_start(struct daemon *d, struct gv_err *err)
{
	const struct exec_daemon_config *cfg = d->cfg;
	if (cfg->kernel_memory_mb <= 0)
		return 0;
	/* Its workers connect only when they need to (many wait on a kernel
	 * each): the database is tried once here, so that a wrong URL stops
	 * the node at its start, as it stops a judging node. */
	struct gv_pg *pg = exec_daemon_pg_open(cfg, false, err);
	if (!pg)
		return -1;
	gv_pg_free(pg);
	struct exec_cgroup cg;
	char rel[512];
	if (snprintf(rel, sizeof(rel), "%s/%s", cfg->cgroup_parent, d->cg_node) >= (int)sizeof(rel))
		return gv_err_set(err, GV_ECONFIG, "executor.cgroup_parent is too long");
	if (exec_cgroup_detect(&cg, NULL, err) != 0 ||
	    exec_cpu_ceiling_apply(&cg, rel, (unsigned)cfg->kernel_cpu_ceiling_pct,
				   (unsigned)cfg->kernel_cpu_weight_pct, err) != 0) {
		gv_err_prefix(err, "the kernels' CPU ceiling");
		return -1;
	}
	return 0;
}

/* Kills and reaps every worker and unmaps the shared memory: start-up
 * failed. */
static void workers_abort(struct daemon *d)
{
	for (int k = 0; k < d->workers; k++)
		if (d->pids[k] > 0) {
			kill(d->pids[k], SIGKILL);
			waitpid(d->pids[k], NULL, 0);
		}
	if (d->slots)
		munmap(d->slots, sizeof(*d->slots) * (size_t)d->workers);
	if (d->gpu_table)
		munmap(d->gpu_table, sizeof(*d->gpu_table));
	kernel_warm_asks_unmap(d);
	d->slots = NULL;
	d->gpu_table = NULL;
}

/* Waits until every worker's engine is up: fail closed, the node is
 * registered only then. -1 with err when one failed or died, or none came
 * up within two minutes. */
static int workers_wait_ready(struct daemon *d, struct gv_err *err)
{
	for (uint64_t t0 = exec_daemon_mono_ms();;) {
		int ready = 0;
		for (int k = 0; k < d->workers; k++) {
			if (d->slots[k].state == 2)
				return gv_err_set(err, GV_ESANDBOX, "worker %d: %s", k, d->slots[k].error);
			ready += d->slots[k].state == 1;
			int st;
			if (d->slots[k].state == 0 && waitpid(d->pids[k], &st, WNOHANG) == d->pids[k]) {
				d->pids[k] = 0;
				return gv_err_set(err, GV_ESANDBOX, "worker %d exited during start-up", k);
			}
		}
		if (ready == d->workers)
			return 0;
		if (exec_daemon_mono_ms() - t0 > 120000 || *d->stop)
			return gv_err_set(err, GV_ESANDBOX, "workers did not start");
		gv_backoff_sleep_ms(50);
	}
}

/* Maps the memory shared with the workers (their slots, the GPU table),
 * starts them and waits until all are ready; on failure nothing is left
 * running or mapped. */
static int workers_start(struct daemon *d, struct gv_err *err)
{
	d->slots = mmap(NULL, sizeof(*d->slots) * (size_t)d->workers, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (d->slots == MAP_FAILED) {
		d->slots = NULL;
		return gv_err_errno(err, "mmap");
	}
	d->gpu_table = mmap(NULL, sizeof(*d->gpu_table), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (d->gpu_table == MAP_FAILED) {
		d->gpu_table = NULL;
		gv_err_errno(err, "mmap");
		goto fail;
	}
	exec_gpu_table_init(d->gpu_table, &d->gpu);
	/* Images a former executor made hold its binaries and /usr of then. */
	if (kernel_warm_asks_map(d, err) != 0 || kernel_images_reset(d, err) != 0)
		goto fail;
	for (int k = 0; k < d->workers; k++) {
		d->pids[k] = spawn(d, k);
		if (d->pids[k] < 0) {
			gv_err_errno(err, "fork");
			goto fail;
		}
	}
	if (workers_wait_ready(d, err) != 0)
		goto fail;
	return 0;
fail:
	workers_abort(d);
	return -1;
}

/* A reload (SIGHUP) whose values were applied: the workers reload between
 * two jobs; the delivery process, which holds no job, is restarted to
 * start again from the new values. */
static void reload(struct supervisor *s)
{
	struct daemon *d = s->d;
	if (!gv_daemon_reload_asked || !gv_daemon_reload(d->cfg, sizeof(*d->cfg)))
		return;
	for (int k = 0; k < d->workers; k++)
		if (d->pids[k] > 0)
			kill(d->pids[k], SIGHUP);
	if (s->webhook_pid > 0)
		kill(s->webhook_pid, SIGTERM);
}

/* Restarts the delivery process when it ended: after a second, and at
 * most once per five seconds. */
static void webhook_watch(struct supervisor *s, uint64_t now)
{
	int wst;
	if (s->webhook_pid > 0 && waitpid(s->webhook_pid, &wst, WNOHANG) == s->webhook_pid) {
		gv_warn(&s->d->log, "webhook delivery process ended (%s %d); restarting it",
			WIFSIGNALED(wst) ? "signal" : "exit", WIFSIGNALED(wst) ? WTERMSIG(wst) : WEXITSTATUS(wst));
		s->webhook_pid = 0;
		s->webhook_respawn_ms = now + 1000;
	}
	if (s->webhook_pid <= 0 && now >= s->webhook_respawn_ms) {
		s->webhook_pid = exec_daemon_webhook_spawn(s->d);
		s->webhook_respawn_ms = now + 5000;
	}
}

/* Respawns a worker that died, after handing its job back to the front of
 * its tenant queue and freeing its GPUs. */
static void workers_watch(struct supervisor *s)
{
	struct daemon *d = s->d;
	for (int k = 0; k < d->workers; k++) {
		int st;
		if (d->pids[k] > 0 && waitpid(d->pids[k], &st, WNOHANG) == d->pids[k]) {
			d->pids[k] = 0;
			gv_error(&d->log, "worker %d died (%s %d)%s%s", k, WIFSIGNALED(st) ? "signal" : "exit",
				 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
				 d->slots[k].token[0] ? "; handing back " : "", d->slots[k].token);
			exec_gpu_release(d->gpu_table, k);
			if (d->slots[k].token[0]) {
				/* The slot lets go first: a claim on this node takes
				 * over a running job only when no worker's slot holds
				 * it (job.c), and the job may come back at once. */
				char token[sizeof(d->slots[k].token)];
				memcpy(token, d->slots[k].token, sizeof(token));
				d->slots[k].token[0] = '\0';
				struct gv_err err;
				if (gv_queue_requeue_token(s->r, NULL, s->inflight, token, &err) < 0)
					gv_error(&d->log, "hand-back: %s", err.msg);
			}
			gv_backoff_sleep_ms(1000);
			d->pids[k] = spawn(d, k);
		}
	}
}

/* Puts back in the node's in-flight list the token of each job a worker
 * here has claimed and still runs, where Redis lost it: a Sentinel
 * failover can undo the BLMOVE that took it, and then the scheduler would
 * count the slot free and another node's claim would take the running job
 * over. Each round, done or not, counts in the node's registry
 * (EXEC_HEAL_ROUNDS_FIELD), in the same script: a claim waits for two
 * rounds before it believes the list (job.c). A job acknowledged between
 * the slots' read and the script has its copy taken out again; one missed
 * that way is the reconciler's (it drops tokens of finished jobs). */
static void inflight_heal(struct supervisor *s)
{
	static const char lua[] =
		"local have = {};"
		"for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do have[v] = true end;"
		"local put = {};"
		"for _, t in ipairs(ARGV) do"
		"  if not have[t] then redis.call('LPUSH', KEYS[1], t); have[t] = true; put[#put + 1] = t end end;"
		"if redis.call('EXISTS', KEYS[2]) == 1 then"
		"  redis.call('HINCRBY', KEYS[2], '" EXEC_HEAL_ROUNDS_FIELD "', 1) end;"
		"return put";
	struct daemon *d = s->d;
	char exec_key[GV_QUEUE_KEY_MAX];
	char tokens[DAEMON_MAX_WORKERS + DAEMON_MAX_BURST][GV_QUEUE_TOKEN_MAX + 1];
	const char *argv[5 + DAEMON_MAX_WORKERS + DAEMON_MAX_BURST] = { "EVAL", lua, "2", s->inflight, exec_key };
	int argc = 5;
	struct gv_err err;
	if (gv_queue_key_exec(exec_key, sizeof(exec_key), d->node, &err) != 0)
		return;
	for (int k = 0; k < d->workers; k++) {
		const struct worker_slot *slot = &d->slots[k];
		if (d->pids[k] <= 0 || !__atomic_load_n(&slot->claimed, __ATOMIC_ACQUIRE))
			continue;
		memcpy(tokens[k], (const char *)slot->token, sizeof(tokens[k]));
		tokens[k][sizeof(tokens[k]) - 1] = '\0';
		if (tokens[k][0])
			argv[argc++] = tokens[k];
	}
	redisReply *put = gv_redis_commandv(s->r, argc, argv, NULL, &err);
	if (!put) {
		if (!s->heal_failing)
			gv_warn(&d->log, "checking %s: %s", s->inflight, err.msg);
		s->heal_failing = true;
		return;
	}
	s->heal_failing = false;
	for (size_t i = 0; put->type == REDIS_REPLY_ARRAY && i < put->elements; i++) {
		const char *token = put->element[i]->str;
		if (put->element[i]->type != REDIS_REPLY_STRING)
			continue;
		bool still = false;
		for (int k = 0; k < d->workers && !still; k++)
			still = __atomic_load_n(&d->slots[k].claimed, __ATOMIC_ACQUIRE) &&
				strcmp((const char *)d->slots[k].token, token) == 0;
		if (still)
			gv_warn(&d->log, "%s put back in %s: Redis had lost it while a worker here runs the job", token,
				s->inflight);
		else
			gv_redis_reply_free(gv_redis_command(s->r, &err, "LREM %s 1 %s", s->inflight, token));
	}
	gv_redis_reply_free(put);
}

/* The supervisor's loop, until *stop. */
static void supervise(struct supervisor *s)
{
	struct daemon *d = s->d;
	while (!*d->stop) {
		reload(s);
		uint64_t now = exec_daemon_mono_ms();
		webhook_watch(s, now);
		workers_watch(s);
		exec_daemon_warm_reap(&s->warm_pid, false);
		if (now >= s->next_heartbeat_ms) {
			heartbeat(s);
			exec_daemon_publish_languages(d, s->r);
			s->next_heartbeat_ms = now + d->cfg->heartbeat_interval_ms;
		}
		if (now >= s->next_heal_ms) {
			inflight_heal(s);
			s->next_heal_ms = now + EXEC_INFLIGHT_HEAL_MS;
		}
		kernel_warm_asks_refresh(d, &s->pg, s->r, now, &s->next_warm_asks_ms);
		gv_backoff_sleep_ms(100);
	}
}

/* SIGTERM: the workers finish the jobs in hand (the node heartbeats
 * meanwhile), the delivery process its current attempt; then the node
 * deregisters and hands back what was assigned but not started. */
static void shut_down(struct supervisor *s)
{
	struct daemon *d = s->d;
	gv_info(&d->log, "stopping: finishing the jobs in hand");
	exec_daemon_warm_reap(&s->warm_pid, true);
	if (s->webhook_pid > 0)
		kill(s->webhook_pid, SIGTERM);
	for (int k = 0; k < d->workers; k++)
		if (d->pids[k] > 0)
			kill(d->pids[k], SIGTERM);
	for (int k = 0; k < d->workers; k++) {
		while (d->pids[k] > 0) {
			int st;
			pid_t p = waitpid(d->pids[k], &st, WNOHANG);
			if (p == d->pids[k] && (WIFSIGNALED(st) || WEXITSTATUS(st) != 0))
				gv_warn(&d->log, "worker %d ended by %s %d while stopping", k,
					WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			if (p == d->pids[k] || (p < 0 && errno == ECHILD)) {
				d->pids[k] = 0;
				break;
			}
			/* Keep the node alive in the registry while jobs finish. */
			heartbeat(s);
			gv_backoff_sleep_ms(200);
		}
	}
	/* The delivery process ends after its current attempt (at most
	 * webhook_timeout); one left over is killed. */
	for (uint64_t t0 = exec_daemon_mono_ms(); s->webhook_pid > 0;) {
		pid_t p = waitpid(s->webhook_pid, NULL, WNOHANG);
		if (p == s->webhook_pid || (p < 0 && errno == ECHILD))
			break;
		if (exec_daemon_mono_ms() - t0 > d->cfg->webhook_timeout_ms + 5000) {
			kill(s->webhook_pid, SIGKILL);
			waitpid(s->webhook_pid, NULL, 0);
			break;
		}
		gv_backoff_sleep_ms(100);
	}
	struct gv_err err;
	if (gv_queue_deregister(s->r, d->node, &err) != 0)
		gv_warn(&d->log, "deregistering: %s", err.msg);
	list_requeue_all(s->r, s->node_queue, "assigned but not started at shutdown", d);
	list_requeue_all(s->r, s->inflight, "left at shutdown", d);
}

int exec_daemon_run(struct exec_daemon_config *cfg, volatile sig_atomic_t *stop, struct gv_err *err)
{
	struct daemon d;
	memset(&d, 0, sizeof(d));
	d.cfg = cfg;
	d.stop = stop;
	if (check_node(&d, err) != 0)
		return -1;
	if (geteuid() != 0)
		return gv_err_set(err, EPERM, "gavel-executor needs root for runsc and cgroups");
	struct supervisor s = { .d = &d };
	if (exec_daemon_probe_languages(&d, err) != 0)
		goto fail;
	/* Forked before any connection is open: it inherits none. */
	s.warm_pid = exec_daemon_warm_spawn(&d);
	if (!(s.r = exec_daemon_redis_open(cfg, (int)cfg->redis_command_timeout_ms, err)))
		goto fail;
	if (gv_queue_key_inflight(s.inflight, sizeof(s.inflight), d.node, err) != 0 ||
	    gv_queue_key_node(s.node_queue, sizeof(s.node_queue), d.node, err) != 0)
		goto fail;
	/* Whatever this node held when it last stopped is not running now. */
	list_requeue_all(s.r, s.inflight, "left by an earlier run of this node", &d);
	if (kernel_node_start(&d, err) != 0 || workers_start(&d, err) != 0)
		goto fail;
	if (cfg->kernel_memory_mb > 0)
		gv_info(&d.log, "kernel node %s up: %d workers, %d MiB for kernels, all under %d%% of a CPU", d.node,
			d.workers, cfg->kernel_memory_mb, cfg->kernel_cpu_ceiling_pct);
	else
		gv_info(&d.log, "node %s up: %d workers (%d regular slots, %d burst)", d.node, d.workers,
			cfg->capacity, cfg->burst_slots);
	s.webhook_pid = exec_daemon_webhook_spawn(&d);
	supervise(&s);
	shut_down(&s);
	gv_redis_free(s.r);
	gv_pg_free(s.pg);
	munmap(d.slots, sizeof(*d.slots) * (size_t)d.workers);
	munmap(d.gpu_table, sizeof(*d.gpu_table));
	kernel_warm_asks_unmap(&d);
	free(d.offered);
	free(d.versions);
	lang_registry_free(&d.langs);
	gv_info(&d.log, "stopped");
	return 0;

fail:
	exec_daemon_warm_reap(&s.warm_pid, true);
	gv_redis_free(s.r);
	free(d.offered);
	free(d.versions);
	lang_registry_free(&d.langs);
	return -1;
}
