/* Driving runsc: every call is an argv vector run with a clean environment
 * and no inherited descriptors beyond stdio, never a shell. The executor
 * process is a child subreaper (PR_SET_CHILD_SUBREAPER): the sandbox and
 * gofer processes that `runsc create` leaves behind become our children, so
 * we wait4() the sandbox ourselves (runsc wait is racy) and reap the gofer,
 * without which `runsc delete` times out.
 *
 * Reaping: struct exec_reaper is the process's only waitpid(-1) caller. It
 * is not thread-safe; one engine per process, driven from one thread. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

#define EXEC_REAPER_MAX 64

/* Statuses of the children we care about; every other child (a gofer, a
 * runsc helper reparented to us) is reaped and forgotten. */
struct exec_reaper {
	size_t n;
	struct {
		pid_t pid;
		int status;
		bool done;
	} w[EXEC_REAPER_MAX];
};

/* Registers pid so that its status is kept when reaped. */
int exec_reaper_watch(struct exec_reaper *r, pid_t pid, struct gv_err *err) GV_MUST_CHECK;
/* Reaps every exited child without blocking. */
void exec_reaper_collect(struct exec_reaper *r);
/* True (and *status set) once pid was reaped; collects first. */
bool exec_reaper_done(struct exec_reaper *r, pid_t pid, int *status);
/* Stops tracking pid (after its status was consumed). */
void exec_reaper_forget(struct exec_reaper *r, pid_t pid);
/* Collects until pid is reaped or timeout_ms passes; true when reaped. */
bool exec_reaper_wait(struct exec_reaper *r, pid_t pid, int *status, long timeout_ms);

struct exec_runsc {
	const char *path;     /* absolute path of runsc */
	const char *root;     /* --root: state dir owned by this executor */
	const char *platform; /* NULL: runsc's default (ptrace) */
	bool file_access_exclusive; /* --file-access-mounts=exclusive */
	bool nvproxy;               /* --nvproxy: GPU proxy (executor/sandbox/gpu.h) */
	/* --network=host instead of --network=none: only for a sandbox whose
	 * bundle names its own network namespace
	 * (executor/sandbox/netpolicy.h), so that "host" is that namespace,
	 * never the executor's. */
	bool network_host;
	/* Join this user namespace before exec
	 * (executor/sandbox/sandbox_uid.h): the sandbox then runs as its own
	 * host uid. Only create/run need it. */
	bool join_userns;
	int userns_fd;
	/* Join this network namespace (the sandbox's own, netpolicy.h) before
	 * the user namespace: runsc, inside ours, may not join one the host
	 * owns. network_host requires it, so that "host" is never ours. */
	bool join_netns;
	int netns_fd;
	struct exec_reaper *reaper;
};

/* `runsc --version` runs and exits 0. */
int exec_runsc_check(const struct exec_runsc *r, struct gv_err *err) GV_MUST_CHECK;

/* `runsc create --bundle B --pid-file F ID` with stdio as the sandbox's
 * stdio (fd 0, 1, 2 of the container process). On success *sandbox_pid is
 * the sandbox process, now our child (watched in r->reaper). */
int exec_runsc_create(const struct exec_runsc *r, const char *bundle, const char *pid_file,
		      const char *id, const int stdio[3], pid_t *sandbox_pid,
		      struct gv_err *err) GV_MUST_CHECK;

/* `runsc run --detach`: create and start in one CLI call (one runsc start-up
 * less than create + start); otherwise as exec_runsc_create. */
int exec_runsc_run_detached(const struct exec_runsc *r, const char *bundle, const char *pid_file,
			    const char *id, const int stdio[3], pid_t *sandbox_pid,
			    struct gv_err *err) GV_MUST_CHECK;

/* Starts `runsc create` like exec_runsc_create without waiting for it:
 * *cli_pid (the runsc CLI) is watched in r->reaper; once it exited 0,
 * exec_runsc_read_pid_file gives the sandbox. Used to create sandboxes
 * ahead of demand (executor/sandbox/pool.h) off the caller's path. */
int exec_runsc_create_spawn(const struct exec_runsc *r, const char *bundle, const char *pid_file,
			    const char *id, const int stdio[3], pid_t *cli_pid, struct gv_err *err) GV_MUST_CHECK;
/* Reads the pid file runsc create wrote, checks the sandbox process is
 * alive (our child by the subreaper) and watches it in r->reaper. */
int exec_runsc_read_pid_file(const struct exec_runsc *r, const char *pid_file, pid_t *sandbox_pid,
			     struct gv_err *err) GV_MUST_CHECK;

int exec_runsc_start(const struct exec_runsc *r, const char *id, struct gv_err *err) GV_MUST_CHECK;

/* `runsc checkpoint --image-path DIR ID`: saves the running sandbox into
 * DIR (made by the caller) and ends it; a failed checkpoint ends it too
 * (runsc 20221219: --leave-running is broken). The sandbox process then
 * exits: the caller reaps it and deletes the container as for any end. */
int exec_runsc_checkpoint(const struct exec_runsc *r, const char *id, const char *image_dir,
			  struct gv_err *err) GV_MUST_CHECK;
/* `runsc restore --detach --image-path DIR`: a new sandbox ID from the
 * bundle, its processes those of the image (created and started in one
 * step); otherwise as exec_runsc_run_detached. */
int exec_runsc_restore_detached(const struct exec_runsc *r, const char *bundle, const char *pid_file,
				const char *image_dir, const char *id, const int stdio[3], pid_t *sandbox_pid,
				struct gv_err *err) GV_MUST_CHECK;
int exec_runsc_kill(const struct exec_runsc *r, const char *id, int sig, struct gv_err *err) GV_MUST_CHECK;
/* `runsc delete --force ID`: kills what is left and removes the state. */
int exec_runsc_delete(const struct exec_runsc *r, const char *id, struct gv_err *err) GV_MUST_CHECK;

/* Starts `runsc delete --force ID` without waiting (stdio on /dev/null):
 * *pid is watched in r->reaper; the caller collects its status there and
 * keeps reaping meanwhile (the gofer must be reaped for delete to finish). */
int exec_runsc_delete_start(const struct exec_runsc *r, const char *id, pid_t *pid,
			    struct gv_err *err) GV_MUST_CHECK;

/* `runsc list --quiet`: calls fn for each container id under --root. */
int exec_runsc_list(const struct exec_runsc *r, void (*fn)(const char *id, void *arg), void *arg,
		    struct gv_err *err) GV_MUST_CHECK;

/* Deletes (--force) every container under --root, then removes metadata
 * files that runsc can no longer load (a runsc killed mid-write); *n counts
 * the deleted containers. Fails if runsc still lists one after that. */
int exec_runsc_sweep(const struct exec_runsc *r, unsigned *n, struct gv_err *err) GV_MUST_CHECK;

/* Builds the global flags + subcommand argv into argv (cap entries,
 * NULL-terminated); extra is NULL-terminated. Pure; exposed for tests. */
int exec_runsc_argv(const struct exec_runsc *r, const char *const *extra, const char **argv,
		    size_t cap, struct gv_err *err) GV_MUST_CHECK;
