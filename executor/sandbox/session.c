/* The lifecycle of a session: a fresh sandbox made for a job (work dir,
 * bundle, cgroup, pipes, `runsc run`), one created ahead of demand and
 * adopted by a job (executor/sandbox/pool.h), the compile phase that
 * opens it, and its close, which kills the sandbox and hands the rest of
 * its removal to the engine (executor/sandbox/engine.c). The phases are
 * run by session_phase.c, the interactive relay by session_relay.c. */
#include "executor/sandbox/session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "executor/sandbox/session_internal.h"

#define KB 1024ull
#define CLOSE_REAP_MS 50         /* exec_session_close waits this long for the Sentry */

bool exec_session_alive(const struct exec_session *s)
{
	return s && !s->dead;
}

const char *exec_session_id(const struct exec_session *s)
{
	return s->id;
}

const char *exec_session_cgroup(const struct exec_session *s)
{
	return s->cg_rel;
}

const struct exec_net *exec_session_net(const struct exec_session *s)
{
	return s->has_net ? &s->net : NULL;
}

static int make_id(char *out, size_t outsz, struct gv_err *err)
{
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return gv_err_errno(err, "getrandom");
	int n = snprintf(out, outsz, "gv-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
			 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	return n > 0 && (size_t)n < outsz ? 0 : gv_err_set(err, GV_EINTERNAL, "sandbox id");
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void exec_job_shape(const struct exec_engine *e, const struct exec_job *job, struct exec_sandbox_shape *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->tenant, sizeof(out->tenant), "%s", job->tenant ? job->tenant : "");
	uint64_t prog_kb = max_u64(job->run_limits.memory_kb,
				   job->compile_argv ? job->compile_limits.memory_kb : 0);
	uint64_t fsize_kb = max_u64(max_u64(job->run_limits.fsize_kb, job->compile_limits.fsize_kb),
				    256 * 1024);
	/* Program + tmpfs contents (held in Sentry memory) + gVisor's own
	 * overhead (measured ~20 MB; default headroom 64 MiB). */
	out->memory_limit_bytes = (prog_kb + e->cfg.tmp_size_kb + e->cfg.headroom_kb) * KB;
	out->fsize_bytes = fsize_kb * KB;
	out->cpu_quota_pct = job->cpu_quota_pct ? job->cpu_quota_pct : e->cfg.cpu_quota_pct;
}

bool exec_shape_equal(const struct exec_sandbox_shape *a, const struct exec_sandbox_shape *b)
{
	return strcmp(a->tenant, b->tenant) == 0 && a->memory_limit_bytes == b->memory_limit_bytes &&
	       a->fsize_bytes == b->fsize_bytes && a->cpu_quota_pct == b->cpu_quota_pct;
}

const struct exec_sandbox_shape *exec_session_shape(const struct exec_session *s)
{
	return &s->shape;
}

int64_t exec_session_created_ms(const struct exec_session *s)
{
	return s->created_at;
}

/* Builds the bundle in the fresh dir s->dir (fd bfd): skeleton, /etc, an
 * empty work dir, config.json with the limits of s->shape. */
static int build_bundle(struct exec_session *s, int bfd, struct gv_err *err)
{
	const struct exec_engine_config *c = &s->e->cfg;
	if (exec_bundle_write_skeleton(bfd, s->e->etc_binds, s->e->usr_dirs, err) != 0)
		return -1;
	/* /box: root's, mode 0777 (PROTOCOL.md): the compile (uid 65534)
	 * writes its output there, then gavel-init locks it read-only. Root
	 * owns it, not the sandbox user, so that no program can ever change
	 * its mode back: a Jobe run, whose toolchains may chmod, finds it
	 * closed (workcopy.c) for good. chmod acts on the fd of the
	 * directory we just created, never on a path. The files written into
	 * it later (exec_job_write_files) are root-owned 0644: readable
	 * inside, never writable there. */
	if (mkdirat(bfd, "box", 0700) != 0)
		return gv_err_errno(err, "mkdir box");
	int box = openat(bfd, "box", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (box < 0)
		return gv_err_errno(err, "open box");
	int rc = 0;
	if (fchmod(box, 0777) != 0)
		rc = gv_err_errno(err, "chmod box");
	close(box);
	if (rc != 0)
		return -1;

	char etc[4200], boxp[4200];
	snprintf(etc, sizeof(etc), "%s/etc", s->dir);
	snprintf(boxp, sizeof(boxp), "%s/box", s->dir);
	struct exec_bundle_params p = {
		.hostname = "gavel",
		.cgroups_path = NULL,
		.init_path = c->init_path,
		.etc_path = etc,
		.box_path = boxp,
		.memory_limit_bytes = s->shape.memory_limit_bytes,
		.pids_limit = c->pids_limit,
		.cpu_quota_us = (uint64_t)s->shape.cpu_quota_pct * 1000,
		.cpu_period_us = 100000,
		.tmp_size_bytes = c->tmp_size_kb * KB,
		.nofile = 4096,
		.nproc = 4096,
		.fsize_bytes = s->shape.fsize_bytes,
		.etc_binds = s->e->etc_binds,
		.usr_dirs = s->e->usr_dirs,
		.pch_path = s->e->pch_path,
		.seccomp = true,
		.netns_path = s->has_net ? s->net.netns_path : NULL,
		.gpu_visible = s->gpu_visible,
		.gpu_nodes = s->gpu_nodes,
		.n_gpu_nodes = s->n_gpu_nodes,
	};
	char cgpath[300];
	snprintf(cgpath, sizeof(cgpath), "/%s", s->cg_rel);
	p.cgroups_path = cgpath;
	json_t *cfg = exec_bundle_config(&p, err);
	if (!cfg)
		return -1;
	rc = exec_bundle_write_config(bfd, cfg, err);
	json_decref(cfg);
	return rc;
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* The sandbox's stdio: three fresh pipes. Our ends are close-on-exec, so
 * no other sandbox or runsc ever holds them; the child ends go to runsc
 * and are closed by close_child_fds once it has them. */
static int make_pipes(struct exec_session *s, struct gv_err *err)
{
	int in[2], out[2], er[2];
	if (pipe2(in, O_CLOEXEC) != 0)
		return gv_err_errno(err, "pipe");
	if (pipe2(out, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		return gv_err_errno(err, "pipe");
	}
	if (pipe2(er, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		return gv_err_errno(err, "pipe");
	}
	s->in_fd = in[1];
	s->out_fd = out[0];
	s->err_fd = er[0];
	s->child_fd[0] = in[0];
	s->child_fd[1] = out[1];
	s->child_fd[2] = er[1];
	set_nonblock(s->in_fd);
	set_nonblock(s->out_fd);
	set_nonblock(s->err_fd);
	return 0;
}

static void close_child_fds(struct exec_session *s)
{
	for (int i = 0; i < 3; i++)
		exec_close_fd(&s->child_fd[i]);
}

static int open_pidfd(struct exec_session *s, struct gv_err *err)
{
	s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	if (s->pidfd < 0)
		return gv_err_errno(err, "pidfd_open %d", (int)s->pid);
	return 0;
}

/* What the runtime gets for s: its bundle, pid file and stdio, its own
 * user namespace (the sandbox's host uid) and no network namespace (the
 * caller opens the sandbox's own where it has one). */
static struct exec_runtime_sandbox sandbox_spec(const struct exec_session *s, const char *pid_file)
{
	return (struct exec_runtime_sandbox){
		.id = s->id,
		.bundle = s->dir,
		.pid_file = pid_file,
		.stdio = s->child_fd,
		.userns_fd = s->has_uid ? exec_uids_userns(&s->e->uids, s->uid_slot) : -1,
		.netns_fd = -1,
	};
}

/* Creates and starts the sandbox in one `runsc run --detach`, or, with
 * image_dir, one `runsc restore --detach` from that image. */
static int start_sandbox(struct exec_session *s, const char *image_dir, struct gv_err *err)
{
	if (make_pipes(s, err) != 0)
		return -1;
	char pidf[4200];
	snprintf(pidf, sizeof(pidf), "%s/pid", s->dir);
	int64_t t0 = exec_now_ms();
	/* One `run --detach` instead of create + start: one runsc start-up
	 * (~25 ms of CLI) less per submission. */
	/* --network=host only with the bundle naming the sandbox's own
	 * network namespace (build_bundle); every other sandbox: none. */
	struct exec_runtime_sandbox sb = sandbox_spec(s, pidf);
	if (s->has_net) {
		sb.netns_fd = open(s->net.netns_path, O_RDONLY | O_CLOEXEC);
		if (sb.netns_fd < 0) {
			close_child_fds(s);
			return gv_err_errno(err, "open %s", s->net.netns_path);
		}
	}
	int rc = image_dir ? exec_runtime_restore(s->e, &sb, image_dir, &s->pid, err)
			   : exec_runtime_run(s->e, &sb, &s->pid, err);
	if (sb.netns_fd >= 0)
		close(sb.netns_fd);
	int64_t t1 = exec_now_ms();
	/* runsc always "created" something worth a delete --force. */
	s->created = true;
	s->started = true;
	close_child_fds(s);
	if (rc != 0) {
		char tail[256];
		exec_session_read_diag(s);
		gv_err_prefix(err, "%s", exec_session_diag_tail(s, tail, sizeof(tail)));
		return -1;
	}
	if (open_pidfd(s, err) != 0)
		return -1;
	struct gv_log_ctx ctx = {.sandbox = s->id};
	gv_debug(&ctx, "runsc %s --detach %lld ms, pidfd %lld ms", image_dir ? "restore" : "run", (long long)(t1 - t0),
		 (long long)(exec_now_ms() - t1));
	return 0;
}

/* A session with no sandbox yet; NULL when out of memory. */
static struct exec_session *session_new(struct exec_engine *e)
{
	struct exec_session *s = calloc(1, sizeof(*s));
	char *diag = malloc(EXEC_DIAG_CAP);
	if (!s || !diag) {
		free(s);
		free(diag);
		return NULL;
	}
	s->e = e;
	s->diag = diag;
	s->pid = -1;
	s->create_pid = -1;
	s->pidfd = s->in_fd = s->out_fd = s->err_fd = -1;
	s->child_fd[0] = s->child_fd[1] = s->child_fd[2] = -1;
	s->deadline = exec_now_ms() + (int64_t)e->cfg.session_wall_ms;
	s->created_at = exec_now_ms();
	/* Until a job sets its own caps: stdout, stderr, result. */
	exec_frame_decoder_init(&s->dec, s->caps, 3);
	return s;
}

/* The job's side of a session: its limits, its flags and the frame kinds
 * its phases may send. */
static void session_set_job(struct exec_session *s, const struct exec_job *job)
{
	s->compile_limits = job->compile_limits;
	s->run_limits = job->run_limits;
	s->feedback_dir = job->feedback_dir;
	s->interactive = job->interactive;
	/* `feedback` frames are accepted from validator sandboxes only,
	 * `data` from interactive ones (and only inside exec_session_interact). */
	exec_frame_decoder_free(&s->dec);
	exec_frame_decoder_init(&s->dec, s->caps, 3 + (job->feedback_dir ? 1 : 0) + (job->interactive ? 1 : 0));
}

/* Id, cgroup path, work dir and bundle (with an empty /box) of s->shape. */
static int session_setup(struct exec_session *s, struct gv_err *err)
{
	struct exec_engine *e = s->e;
	if (make_id(s->id, sizeof(s->id), err) != 0 ||
	    exec_cgroup_path(s->cg_rel, sizeof(s->cg_rel), e->cfg.cgroup_parent, s->shape.tenant, s->id,
			     err) != 0)
		return -1;
	int n = snprintf(s->dir, sizeof(s->dir), "%s/%s", e->cfg.work_root, s->id);
	if (n < 0 || (size_t)n >= sizeof(s->dir))
		return gv_err_set(err, GV_ELIMIT, "work dir path too long");
	/* Fail closed: no uid of its own, no sandbox (every runtime but the
	 * unit tests' fake, runtime.h). */
	if (exec_runtime_own_uid(e)) {
		if (exec_uids_take(&e->uids, &s->uid_slot, err) != 0)
			return -1;
		s->has_uid = true;
	}
	if (mkdirat(e->work_root_fd, s->id, 0700) != 0)
		return gv_err_errno(err, "mkdir %s", s->dir);
	s->dir_made = true;
	int bfd = openat(e->work_root_fd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0)
		return gv_err_errno(err, "open %s", s->dir);
	int rc = build_bundle(s, bfd, err);
	close(bfd);
	return rc;
}

/* The compile phase (trivially OK without a compile step) comes by
 * itself, before any command. */
static int first_phase(struct exec_session *s, const struct exec_job *job, struct exec_phase_result *compile,
		       struct gv_err *err)
{
	const struct exec_limits *cl = job->compile_argv ? &job->compile_limits : &job->run_limits;
	if (exec_phase_run(s, NULL, 0, cl, true, compile, err) != 0)
		return -1;
	/* init runs the compile phase once, by itself: it cannot be rerun. */
	return s->starved ? exec_phase_starved_error(s, compile, err) : 0;
}

int exec_session_precreate(struct exec_engine *e, const struct exec_sandbox_shape *shape,
			   struct exec_session **out, struct gv_err *err)
{
	*out = NULL;
	if (!exec_cgroup_name_ok(shape->tenant))
		return gv_err_set(err, GV_EINVAL, "tenant name not usable for a sandbox");
	struct exec_session *s = session_new(e);
	if (!s)
		return gv_err_set(err, ENOMEM, "session: out of memory");
	s->shape = *shape;
	char pidf[4200];
	if (session_setup(s, err) != 0 || make_pipes(s, err) != 0)
		goto fail;
	snprintf(pidf, sizeof(pidf), "%s/pid", s->dir);
	struct exec_runtime_sandbox sb = sandbox_spec(s, pidf);
	if (exec_runtime_create_spawn(e, &sb, &s->create_pid, err) != 0)
		goto fail;
	s->created = true;
	*out = s;
	return 0;
fail:
	gv_err_prefix(err, "sandbox %s (ahead of demand)", s->id[0] ? s->id : "(none)");
	exec_session_close(s);
	return -1;
}

int exec_session_precreate_poll(struct exec_session *s, struct gv_err *err)
{
	if (s->dead)
		return gv_err_set(err, GV_ESANDBOX, "sandbox %s: creation failed earlier", s->id);
	if (s->create_pid < 0) {
		/* Created: still there? (A created sandbox idles; its death is
		 * the host's doing, e.g. the OOM killer.) */
		if (s->pid > 0 && !s->reaped && exec_reaper_done(&s->e->reaper, s->pid, &s->wait_status)) {
			s->reaped = true;
			exec_reaper_forget(&s->e->reaper, s->pid);
		}
		if (s->reaped) {
			s->dead = true;
			return gv_err_set(err, GV_ESANDBOX, "sandbox %s died before it was used", s->id);
		}
		return 1;
	}
	int st = 0;
	if (!exec_reaper_done(&s->e->reaper, s->create_pid, &st))
		return 0;
	exec_reaper_forget(&s->e->reaper, s->create_pid);
	s->create_pid = -1;
	/* runsc has passed the child ends on to the sandbox. */
	close_child_fds(s);
	char pidf[4200];
	snprintf(pidf, sizeof(pidf), "%s/pid", s->dir);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		s->dead = true;
		char tail[256];
		exec_session_read_diag(s);
		return gv_err_set(err, GV_ESANDBOX, "sandbox %s: runsc create failed (%s %d): %s", s->id,
				  WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
				  exec_session_diag_tail(s, tail, sizeof(tail)));
	}
	if (exec_runtime_read_pid_file(s->e, pidf, &s->pid, err) != 0 || open_pidfd(s, err) != 0) {
		s->dead = true;
		gv_err_prefix(err, "sandbox %s", s->id);
		return -1;
	}
	return 1;
}

#define ADOPT_CREATE_WAIT_MS 60000

/* Gives the created sandbox s to job: waits for `runsc create` if it is
 * still running, writes the job into /box, `runsc start`, and runs the
 * compile phase into *compile. -1 with *fresh_ok when the job never
 * reached the sandbox (creation or start failed): the caller may open a
 * fresh one instead. s is closed on every failure. */
static int session_adopt(struct exec_session *s, const struct exec_job *job, struct exec_phase_result *compile,
			 bool *fresh_ok, struct gv_err *err)
{
	*fresh_ok = true;
	struct exec_sandbox_shape want;
	exec_job_shape(s->e, job, &want);
	int ready = 0;
	int64_t until = exec_now_ms() + ADOPT_CREATE_WAIT_MS;
	while ((ready = exec_session_precreate_poll(s, err)) == 0 && exec_now_ms() < until)
		exec_reaper_wait(&s->e->reaper, s->create_pid, NULL, 10);
	if (ready == 0)
		gv_err_set(err, GV_ESANDBOX, "runsc create still running after %d ms", ADOPT_CREATE_WAIT_MS);
	/* A pool hands out only its shape's sandboxes; checked again since a
	 * sandbox with other limits must never run this job. */
	if (ready == 1 && !exec_shape_equal(&want, &s->shape))
		ready = gv_err_set(err, GV_EINTERNAL, "sandbox of another shape");
	if (ready == 1 && s->dead)
		ready = gv_err_set(err, GV_ESANDBOX, "sandbox died while waiting");
	if (ready != 1)
		goto fail;
	session_set_job(s, job);
	if (exec_job_write_files(s, job, err) != 0)
		goto fail;
	int64_t t0 = exec_now_ms();
	/* Created ahead, its cgroup has counted its creation and its idle
	 * time: the compile is counted from here (fails closed). */
	if (!s->e->cfg.guest_cpu_time && exec_session_cpu_ns(s, &s->boot_cpu_ns, err) != 0)
		goto fail;
	if (exec_runtime_start(s->e, s->id, err) != 0)
		goto fail;
	s->started = true;
	*fresh_ok = false;
	s->deadline = exec_now_ms() + (int64_t)s->e->cfg.session_wall_ms;
	struct gv_log_ctx ctx = {.sandbox = s->id};
	gv_debug(&ctx, "pooled sandbox: runsc start %lld ms", (long long)(exec_now_ms() - t0));
	if (first_phase(s, job, compile, err) != 0)
		goto fail;
	return 0;
fail:
	gv_err_prefix(err, "sandbox %s (created ahead)", s->id);
	if (!compile->status[0])
		exec_result_set(compile, "IE", "none", "sandbox could not be set up");
	exec_session_close(s);
	return -1;
}

/* Gives s a network of its own under policy (resolving its host names
 * now), in a free slot of the engine's pool. Fails closed: the job does
 * not run without the filter and shaping it was promised. */
static int session_net_open(struct exec_session *s, const struct tenant_egress_policy *policy,
			    struct gv_err *err)
{
	struct exec_engine *e = s->e;
	unsigned slot = 0;
	while (slot < e->cfg.net.slots && slot < EXEC_NET_SLOTS_MAX && e->net_slot_used[slot])
		slot++;
	if (!e->cfg.net.prefix || !e->cfg.net.prefix[0])
		return gv_err_set(err, GV_ESANDBOX, "egress granted, but this executor has no egress pool");
	if (slot >= e->cfg.net.slots || slot >= EXEC_NET_SLOTS_MAX)
		return gv_err_set(err, GV_ELIMIT, "no free sandbox network slot");
	struct tenant_egress_policy *resolved = malloc(sizeof(*resolved));
	if (!resolved)
		return gv_err_set(err, ENOMEM, "egress: out of memory");
	int rc = exec_net_resolve(policy, resolved, err);
	if (rc == 0) {
		rc = exec_net_setup(&e->cfg.net, slot, resolved, &s->net, err);
		if (rc == 0)
			s->has_net = true;
		/* A failed set-up that could not remove all it made keeps its
		 * slot until the next engine start sweeps it. */
		if (rc == 0 || s->net.made)
			e->net_slot_used[slot] = true;
	}
	free(resolved);
	return rc;
}

int exec_session_open(struct exec_engine *e, const struct exec_job *job, struct exec_session **out,
		      struct exec_phase_result *compile, struct gv_err *err)
{
	exec_result_init(compile);
	*out = NULL;
	exec_engine_poll(e);
	if (exec_job_check(job, err) != 0) {
		exec_result_set(compile, "IE", "none", "invalid job");
		return -1;
	}
	struct exec_sandbox_shape shape;
	exec_job_shape(e, job, &shape);
	/* Sandboxes created ahead of demand have no network and no devices:
	 * a job granted egress or GPUs always gets a fresh one. */
	bool wants_net = job->egress && job->egress->grants;
	bool wants_gpu = job->gpu_visible || job->n_gpu_nodes > 0;
	struct exec_session *pooled =
		e->pool && !wants_net && !wants_gpu ? e->pool_hooks->take(e->pool, &shape) : NULL;
	if (pooled) {
		bool fresh_ok = false;
		/* Counted as open from here (a failed adoption's close uncounts
		 * it): the engine polls while the job's first phase runs, and
		 * the pool must not start a creation next to it. */
		pooled->counted = true;
		e->n_open++;
		if (session_adopt(pooled, job, compile, &fresh_ok, err) == 0) {
			*out = pooled;
			return 0;
		}
		if (!fresh_ok)
			return -1;
		struct gv_log_ctx ctx = {.tenant = job->tenant};
		gv_warn(&ctx, "%s; opening a fresh sandbox instead", err->msg);
		exec_result_init(compile);
		gv_err_clear(err);
	}
	struct exec_session *s = session_new(e);
	if (!s) {
		exec_result_set(compile, "IE", "none", "out of memory");
		return gv_err_set(err, ENOMEM, "session: out of memory");
	}
	s->shape = shape;
	s->counted = true; /* as above: no pool creation next to its first phase */
	e->n_open++;
	session_set_job(s, job);
	s->gpu_visible = job->gpu_visible;
	s->gpu_nodes = job->gpu_nodes;
	s->n_gpu_nodes = job->n_gpu_nodes;
	if ((wants_net && session_net_open(s, job->egress, err) != 0) || session_setup(s, err) != 0 ||
	    exec_job_write_files(s, job, err) != 0 || start_sandbox(s, NULL, err) != 0 ||
	    first_phase(s, job, compile, err) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	gv_err_prefix(err, "sandbox %s", s->id[0] ? s->id : "(none)");
	if (!compile->status[0])
		exec_result_set(compile, "IE", "none", "sandbox could not be set up");
	exec_session_close(s);
	return -1;
}

int exec_session_checkpoint(struct exec_session *s, const char *image_dir, struct gv_err *err)
{
	if (!s || s->dead || !s->started)
		return gv_err_set(err, EXEC_EDEAD, "sandbox is gone");
	int rc = exec_runtime_checkpoint(s->e, s->id, image_dir, err);
	/* Saved or not, runsc has ended it. */
	exec_session_mark_dead(s);
	if (rc != 0)
		gv_err_prefix(err, "sandbox %s", s->id);
	return rc;
}

/* What gavel-init's lock of /box after the compile phase did in the
 * image's sandbox (its files are root-owned 0644 already): restored, init
 * never locks it again, so this sandbox's /box is locked on the host. */
static int lock_box_host(struct exec_session *s, struct gv_err *err)
{
	int box = openat(s->e->work_root_fd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int fd = box >= 0 ? openat(box, "box", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	int rc = fd >= 0 && fchmod(fd, 0555) == 0 ? 0 : gv_err_errno(err, "lock %s/box", s->dir);
	if (fd >= 0)
		close(fd);
	if (box >= 0)
		close(box);
	return rc;
}

int exec_session_restore(struct exec_engine *e, const struct exec_job *job, const char *image_dir,
			 struct exec_session **out, struct gv_err *err)
{
	*out = NULL;
	exec_engine_poll(e);
	if (exec_job_check(job, err) != 0)
		return -1;
	/* An image has no network and no devices: such jobs start fresh. */
	if ((job->egress && job->egress->grants) || job->gpu_visible || job->n_gpu_nodes > 0)
		return gv_err_set(err, GV_EINVAL, "a job with a network or GPUs is never restored from an image");
	if (!job->interactive || job->compile_argv)
		return gv_err_set(err, GV_EINVAL, "only an interactive job without a compile step is restored");
	struct exec_session *s = session_new(e);
	if (!s)
		return gv_err_set(err, ENOMEM, "session: out of memory");
	exec_job_shape(e, job, &s->shape);
	s->counted = true;
	e->n_open++;
	session_set_job(s, job);
	if (session_setup(s, err) != 0 || exec_job_write_files(s, job, err) != 0 || lock_box_host(s, err) != 0 ||
	    start_sandbox(s, image_dir, err) != 0) {
		gv_err_prefix(err, "sandbox %s (restored)", s->id[0] ? s->id : "(none)");
		exec_session_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

void exec_session_set_counted(struct exec_session *s, bool counted)
{
	if (counted == s->counted)
		return;
	s->counted = counted;
	if (counted)
		s->e->n_open++;
	else if (s->e->n_open > 0)
		s->e->n_open--;
}

/* Kills the sandbox now and hands the rest of the tear-down to the engine
 * (engine.c). Security: SIGKILL of the Sentry ends every process
 * inside at once, so the program cannot outlive close; the OOM counter was
 * read after every phase, while the cgroup existed. */
void exec_session_close(struct exec_session *s)
{
	if (!s)
		return;
	struct exec_engine *e = s->e;
	if (s->counted && e->n_open > 0)
		e->n_open--;
	if (s->create_pid > 0) {
		/* Closed while `runsc create` runs (a pool emptied at shutdown):
		 * let it finish, bounded, so that the sandbox it leaves is ours
		 * to kill; past the bound, `runsc delete --force` below ends it. */
		int st = 0;
		bool done = exec_reaper_wait(&e->reaper, s->create_pid, &st, 10000);
		if (!done) {
			kill(s->create_pid, SIGKILL);
			exec_reaper_wait(&e->reaper, s->create_pid, NULL, 5000);
		}
		exec_reaper_forget(&e->reaper, s->create_pid);
		s->create_pid = -1;
		char pidf[4200];
		snprintf(pidf, sizeof(pidf), "%s/pid", s->dir);
		struct gv_err ignored;
		if (done && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
		    exec_runtime_read_pid_file(e, pidf, &s->pid, &ignored) != 0)
			s->pid = -1;
	}
	close_child_fds(s);
	exec_session_kill(s);
	/* A SIGKILLed Sentry is reaped in ~3 ms: waiting that long here lets
	 * the poll below start `runsc delete` at once, rather than at the
	 * next poll (up to a second later in an idle worker), so a finished
	 * sandbox is not listed next to the pool's refill. Bounded: a slow
	 * death is left to the tear-down's own reap step. */
	exec_session_wait(s, CLOSE_REAP_MS);
	exec_close_fd(&s->pidfd);
	exec_close_fd(&s->in_fd);
	exec_close_fd(&s->out_fd);
	exec_close_fd(&s->err_fd);
	struct exec_pending *p = exec_engine_pending_slot(e);
	snprintf(p->id, sizeof(p->id), "%s", s->id);
	snprintf(p->cg_rel, sizeof(p->cg_rel), "%s", s->cg_rel);
	p->sandbox_pid = s->pid > 0 && !s->reaped ? s->pid : -1;
	p->delete_pid = -1;
	p->since = exec_now_ms();
	p->created = s->created;
	p->dir_made = s->dir_made;
	p->has_uid = s->has_uid;
	p->uid_slot = s->uid_slot;
	if (s->has_net) {
		/* Its blocked connection attempts, read while its filter
		 * exists (the clean-up removes it). */
		uint64_t blocked = 0;
		struct gv_err nerr;
		if (exec_net_blocked(&e->cfg.net, &s->net, &blocked, &nerr) == 0)
			e->net_blocked += blocked;
		else
			gv_warn(&(struct gv_log_ctx){.sandbox = s->id}, "%s", nerr.msg);
		p->has_net = true;
		p->net = s->net;
	}
	exec_frame_decoder_free(&s->dec);
	free(s->diag);
	free(s);
	exec_engine_poll(e);
}
