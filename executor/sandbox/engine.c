/* The engine: its start-up (checks that fail closed, the sweep of an
 * earlier run's leftovers), its end, and the tear-down of closed sessions
 * off the callers' critical path: reap, `runsc delete`, cgroups, work dir,
 * network and uid, in that order. */
#include "executor/sandbox/engine.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "executor/sandbox/session_internal.h"

enum { PENDING_REAP, PENDING_DELETE, PENDING_CLEANUP, PENDING_DONE };

#define PENDING_REAP_MS 5000     /* a SIGKILLed Sentry is reaped in ~3 ms */
#define PENDING_DELETE_MS 30000  /* then `runsc delete` is SIGKILLed */

/* Advances one closed session's tear-down; with block, waits until it is
 * done. Order matters: the sandbox is reaped (with the gofer, which exits
 * after it) before `runsc delete`, or delete times out; the cgroups go
 * after delete; the work dir last, with the no-follow removal. Failures
 * are logged: a leftover is swept at the next engine start. Security: the
 * Sentry was SIGKILLed by exec_session_close, so nothing of the sandbox
 * runs any more; what is left are host-side records of it. */
static void pending_step(struct exec_engine *e, struct exec_pending *p, bool block)
{
	struct gv_log_ctx ctx = {.sandbox = p->id};
	struct gv_err err;
	gv_err_clear(&err);
	for (;;) {
		int64_t now = exec_now_ms();
		switch (p->step) {
		case PENDING_REAP:
			if (p->sandbox_pid > 0) {
				long left = (long)(p->since + PENDING_REAP_MS - now);
				bool reaped = block ? exec_reaper_wait(&e->reaper, p->sandbox_pid, NULL,
								       left > 0 ? left : 0)
						    : exec_reaper_done(&e->reaper, p->sandbox_pid, NULL);
				if (!reaped && now < p->since + PENDING_REAP_MS)
					return;
				if (!reaped)
					gv_warn(&ctx, "sandbox process %d not reaped after SIGKILL",
						(int)p->sandbox_pid);
				exec_reaper_forget(&e->reaper, p->sandbox_pid);
				p->sandbox_pid = -1;
			}
			p->step = PENDING_DELETE;
			p->since = now;
			break;
		case PENDING_DELETE:
			if (p->created && p->delete_pid < 0) {
				if (exec_runtime_delete_start(e, p->id, &p->delete_pid, &err) != 0) {
					gv_warn(&ctx, "%s", err.msg);
					p->delete_pid = -1;
					p->step = PENDING_CLEANUP;
					break;
				}
			}
			if (p->delete_pid > 0) {
				int st = 0;
				bool done = block ? exec_reaper_wait(&e->reaper, p->delete_pid, &st, 1000)
						  : exec_reaper_done(&e->reaper, p->delete_pid, &st);
				if (!done) {
					if (!p->delete_killed && exec_now_ms() > p->since + PENDING_DELETE_MS) {
						gv_warn(&ctx, "runsc delete: timed out, killed");
						kill(p->delete_pid, SIGKILL);
						p->delete_killed = true;
					}
					if (!block)
						return;
					break;
				}
				exec_reaper_forget(&e->reaper, p->delete_pid);
				p->delete_pid = -1;
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
					gv_warn(&ctx, "runsc delete failed (%s %d)",
						WIFEXITED(st) ? "exit" : "signal",
						WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			}
			p->step = PENDING_CLEANUP;
			break;
		case PENDING_CLEANUP:
			if (p->cg_rel[0]) {
				if (e->cg.ops->remove(&e->cg, p->cg_rel, &err) != 0)
					gv_warn(&ctx, "%s", err.msg);
				exec_cgroup_remove_parent_if_empty(&e->cg, p->cg_rel);
			}
			if (p->dir_made && gv_remove_tree_at(e->work_root_fd, p->id, &err) != 0)
				gv_warn(&ctx, "could not remove work dir %s: %s", p->id, err.msg);
			if (p->has_net) {
				/* A leftover keeps its slot until the next
				 * engine start sweeps it. */
				if (exec_net_teardown(&e->cfg.net, &p->net, &err) != 0)
					gv_warn(&ctx, "%s", err.msg);
				else if (p->net.slot < EXEC_NET_SLOTS_MAX)
					e->net_slot_used[p->net.slot] = false;
				p->has_net = false;
			}
			/* Its processes are dead and reaped (or, past the
			 * bound, SIGKILLed and deleted): the uid is free. */
			if (p->has_uid)
				exec_uids_give(&e->uids, p->uid_slot);
			p->has_uid = false;
			p->step = PENDING_DONE;
			return;
		default:
			return;
		}
	}
}

static void pending_compact(struct exec_engine *e)
{
	size_t k = 0;
	for (size_t i = 0; i < e->n_pending; i++)
		if (e->pending[i].step != PENDING_DONE)
			e->pending[k++] = e->pending[i];
	e->n_pending = k;
}

struct exec_pending *exec_engine_pending_slot(struct exec_engine *e)
{
	if (e->n_pending == EXEC_PENDING_MAX) {
		/* Never more than this many tear-downs in flight: finish the
		 * oldest (its `runsc delete` has had the longest). */
		pending_step(e, &e->pending[0], true);
		pending_compact(e);
	}
	if (e->n_pending == EXEC_PENDING_MAX)
		exec_engine_drain(e);
	struct exec_pending *p = &e->pending[e->n_pending++];
	memset(p, 0, sizeof(*p));
	p->step = PENDING_REAP;
	return p;
}

void exec_engine_poll(struct exec_engine *e)
{
	if (!e)
		return;
	if (e->n_pending > 0) {
		for (size_t i = 0; i < e->n_pending; i++)
			pending_step(e, &e->pending[i], false);
		pending_compact(e);
	}
	if (e->pool)
		e->pool_hooks->tick(e->pool);
}

void exec_engine_drain(struct exec_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_pending; i++)
		pending_step(e, &e->pending[i], true);
	pending_compact(e);
}


/* Creates dir 0700 if missing and checks it is a root-owned directory,
 * not a link, writable by nobody else: runsc's state and our bundles hold
 * what decides how sandboxes are built. */
static int private_dir(const char *path, struct gv_err *err)
{
	if (!path || path[0] != '/')
		return gv_err_set(err, GV_ECONFIG, "%s: must be an absolute path", path ? path : "(null)");
	/* Missing parents are made private too (root, 0700); existing ones are
	 * left as they are. */
	if (gv_mkdir_parents(path, err) != 0)
		return -1;
	struct stat st;
	if (lstat(path, &st) != 0)
		return gv_err_errno(err, "stat %s", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return gv_err_set(err, GV_ECONFIG,
				  "%s must be a root-owned directory not writable by others", path);
	return 0;
}

static int check_init(const char *path, struct gv_err *err)
{
	struct stat st;
	if (!path || path[0] != '/')
		return gv_err_set(err, GV_ECONFIG, "gavel-init path must be absolute");
	if (stat(path, &st) != 0)
		return gv_err_errno(err, "gavel-init %s", path);
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0001) || (st.st_mode & 022) || st.st_uid != 0)
		return gv_err_set(err, GV_ECONFIG,
				  "gavel-init %s must be a root-owned file, executable by all, "
				  "writable by root only", path);
	return 0;
}

/* Removes stale work dirs "gv-*" under the work root (a crashed executor's
 * leftovers), with the same no-follow removal as a session close. */
static unsigned sweep_work_root(int fd)
{
	unsigned n = 0;
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	char names[256][40];
	size_t k = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL && k < 256)
		if (strncmp(de->d_name, "gv-", 3) == 0 && strlen(de->d_name) < sizeof(names[0]))
			memcpy(names[k++], de->d_name, strlen(de->d_name) + 1);
	closedir(d);
	for (size_t i = 0; i < k; i++)
		if (gv_remove_tree_at(fd, names[i], NULL) == 0)
			n++;
	return n;
}

/* What exec_engine_init made before a later step failed. */
static void engine_init_undo(struct exec_engine *e)
{
	exec_close_fd(&e->work_root_fd);
	exec_uids_fini(&e->uids);
	exec_uids_release_root(e->cfg.work_root, e->work_root_bound);
	e->work_root_bound = false;
}

int exec_engine_init(struct exec_engine *e, const struct exec_engine_config *cfg, struct gv_err *err)
{
	memset(e, 0, sizeof(*e));
	e->work_root_fd = -1;
	e->uids.dir_fd = -1; /* count 0: nothing else to undo before exec_uids_init */
	e->cfg = *cfg;
	struct exec_engine_config *c = &e->cfg;
	if (!c->tmp_size_kb)
		c->tmp_size_kb = 65536;
	if (!c->headroom_kb)
		c->headroom_kb = 65536;
	if (!c->session_wall_ms)
		c->session_wall_ms = 1800000;
	if (!c->cpu_quota_pct)
		c->cpu_quota_pct = 100;
	if (!c->pids_limit)
		c->pids_limit = 4096;
	if (!c->cgroup_parent)
		c->cgroup_parent = "gavel";
	if (c->pids_limit < EXEC_BUNDLE_MIN_PIDS)
		return gv_err_set(err, GV_ECONFIG, "pids_limit below %d panics the Sentry",
				  EXEC_BUNDLE_MIN_PIDS);
	if (c->cpu_quota_pct > 6400)
		return gv_err_set(err, GV_ECONFIG, "cpu_quota_pct out of range");
	if (geteuid() != 0)
		return gv_err_set(err, GV_ESANDBOX, "the executor must run as root to drive runsc");
	if (private_dir(c->runsc_root, err) != 0 || private_dir(c->work_root, err) != 0 ||
	    check_init(c->init_path, err) != 0)
		return -1;
	if (exec_cgroup_detect(&e->cg, c->cgroup_root, err) != 0)
		return -1;
	e->runsc = (struct exec_runsc){
		.path = c->runsc_path,
		.root = c->runsc_root,
		.platform = c->platform,
		.file_access_exclusive = !c->file_access_shared,
		.nvproxy = c->nvproxy,
		.reaper = &e->reaper,
	};
	/* The only runtime a configured engine gets (runtime.h). */
	e->rt = &exec_runtime_runsc;
	/* Orphans of runsc create (sandbox, gofer) must become our children:
	 * we wait4 the sandbox and reap the gofer. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		return gv_err_errno(err, "PR_SET_CHILD_SUBREAPER");
	/* A write to a dead sandbox's pipe must be an EPIPE, not our death. */
	signal(SIGPIPE, SIG_IGN);
	if (!c->skip_runsc_check && exec_runtime_check(e, err) != 0)
		return -1;
	if (exec_uids_prepare_root(c->work_root, &e->work_root_bound, err) != 0)
		return -1;
	e->work_root_fd = open(c->work_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (e->work_root_fd < 0) {
		gv_err_errno(err, "open %s", c->work_root);
		exec_uids_release_root(c->work_root, e->work_root_bound);
		return -1;
	}
	exec_bundle_default_etc_binds(e->etc_binds);
	exec_bundle_default_usr_dirs(e->usr_dirs);
	if (!e->usr_dirs[0]) {
		engine_init_undo(e);
		return gv_err_set(err, GV_EINVAL, "none of the toolchain folders of /usr exists on this host");
	}
	if (exec_uids_init(&e->uids, c->sandbox_uid_dir,
			   c->sandbox_uid_base ? c->sandbox_uid_base : EXEC_UIDS_DEFAULT_BASE,
			   c->sandbox_uid_count ? c->sandbox_uid_count : EXEC_UIDS_DEFAULT_COUNT, err) != 0) {
		engine_init_undo(e);
		return -1;
	}
	struct stat pch_st;
	/* Speed only: without the folder, compiles parse the headers. */
	e->pch_path = cfg->pch_dir && stat(cfg->pch_dir, &pch_st) == 0 && S_ISDIR(pch_st.st_mode) ? cfg->pch_dir : NULL;
	/* Leftovers of an earlier run: containers first (their processes hold
	 * the cgroups), then cgroups, then work dirs. */
	if (exec_runtime_sweep(e, &e->swept_containers, err) != 0 ||
	    exec_cgroup_sweep(&e->cg, c->cgroup_parent, &e->swept_cgroups, err) != 0) {
		engine_init_undo(e);
		gv_err_prefix(err, "sweeping leftovers");
		return -1;
	}
	exec_reaper_collect(&e->reaper);
	e->swept_dirs = sweep_work_root(e->work_root_fd);
	/* Sandbox networks of an earlier run (their sandboxes are gone). */
	if (exec_net_config_check(&c->net, err) != 0 || exec_net_sweep(&c->net, &e->swept_net, err) != 0) {
		engine_init_undo(e);
		gv_err_prefix(err, "sweeping sandbox networks");
		return -1;
	}
	return 0;
}

void exec_engine_fini(struct exec_engine *e)
{
	if (!e)
		return;
	if (e->pool)
		e->pool_hooks->detach(e->pool);
	exec_engine_drain(e);
	exec_close_fd(&e->work_root_fd);
	exec_reaper_collect(&e->reaper);
	exec_uids_fini(&e->uids);
	exec_uids_release_root(e->cfg.work_root, e->work_root_bound);
}
