/* The sandbox runtime behind the engine: the few operations a session
 * needs from whatever creates, starts and deletes a sandbox from its OCI
 * bundle. The engine's only production runtime is runsc
 * (exec_runtime_runsc, executor/sandbox/runtime_runsc.c), set by
 * exec_engine_init and not configurable; the unit tests link a fake of
 * their own (tests/support/fake_runtime.c) and install it themselves.
 *
 * Security argument: the ops struct adds no choice a configuration, a
 * tenant or a job can make. Every op is fallible and the session treats
 * a missing op (NULL) like a failed one: the sandbox is not made or not
 * started, the job gets IE (fail closed). What a sandbox is built with
 * (bundle, cgroup, uid, network namespace) is decided by the session code
 * before an op is called and handed to it in struct exec_runtime_sandbox;
 * the runtime only carries it out. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "common/err.h"

struct exec_engine;

/* One sandbox as the session hands it to the runtime. */
struct exec_runtime_sandbox {
	const char *id;       /* container id, [A-Za-z0-9_-] */
	const char *bundle;   /* absolute bundle dir (config.json, rootfs, box) */
	const char *pid_file; /* where the runtime writes the sandbox's pid */
	const int *stdio;     /* fd 0, 1 and 2 of the container process */
	/* Join this user namespace before exec (the sandbox's own host uid,
	 * executor/sandbox/sandbox_uid.h); -1: none. */
	int userns_fd;
	/* The sandbox's own network namespace (netpolicy.h), joined before
	 * the user namespace, with "host" networking meaning that namespace;
	 * -1: no network at all. */
	int netns_fd;
};

struct exec_runtime_ops {
	const char *name; /* "runsc"; tests' fakes name themselves */
	/* True when each sandbox runs as a host uid of its own
	 * (sandbox_uid.h): the session then takes one before the bundle is
	 * made and fails closed without it. Only a test fake, which runs its
	 * stand-in as the test's own user, may say false. */
	bool own_uid;
	/* The runtime works (runsc --version), at engine init. */
	int (*check)(struct exec_engine *e, struct gv_err *err);
	/* Deletes every sandbox an earlier run left; *n counts them. */
	int (*sweep)(struct exec_engine *e, unsigned *n, struct gv_err *err);
	/* Creates and starts sb in one step. On success *sandbox_pid is the
	 * sandbox process, our child, watched in e->reaper. */
	int (*run)(struct exec_engine *e, const struct exec_runtime_sandbox *sb, pid_t *sandbox_pid,
		   struct gv_err *err);
	/* Starts creating sb without waiting: *cli_pid, watched in e->reaper,
	 * exits 0 once the sandbox is created (not started); read_pid_file
	 * then gives the sandbox process. */
	int (*create_spawn)(struct exec_engine *e, const struct exec_runtime_sandbox *sb, pid_t *cli_pid,
			    struct gv_err *err);
	/* The pid a creation wrote, checked alive and watched in e->reaper. */
	int (*read_pid_file)(struct exec_engine *e, const char *pid_file, pid_t *sandbox_pid,
			     struct gv_err *err);
	/* Starts the created sandbox id. */
	int (*start)(struct exec_engine *e, const char *id, struct gv_err *err);
	/* Starts deleting id (forced) without waiting: *pid, watched in
	 * e->reaper, exits 0 once it is gone; -1 when nothing is left to
	 * wait for. */
	int (*delete_start)(struct exec_engine *e, const char *id, pid_t *pid, struct gv_err *err);
	/* Saves the running sandbox id into image_dir and ends it (whether
	 * or not the save worked). Optional: without it no image is made. */
	int (*checkpoint)(struct exec_engine *e, const char *id, const char *image_dir, struct gv_err *err);
	/* Makes and starts sb from the image in image_dir instead of from
	 * its process spec; otherwise as run. Optional, as checkpoint. */
	int (*restore)(struct exec_engine *e, const struct exec_runtime_sandbox *sb, const char *image_dir,
		       pid_t *sandbox_pid, struct gv_err *err);
};

/* runsc (executor/sandbox/runsc.h), driven through e->runsc. */
extern const struct exec_runtime_ops exec_runtime_runsc;

/* The engine's calls through e->rt: a missing runtime or op is an error
 * (GV_ESANDBOX), never a skipped step (executor/sandbox/runtime.c). */
bool exec_runtime_own_uid(const struct exec_engine *e); /* true without a runtime */
int exec_runtime_check(struct exec_engine *e, struct gv_err *err) GV_MUST_CHECK;
int exec_runtime_sweep(struct exec_engine *e, unsigned *n, struct gv_err *err) GV_MUST_CHECK;
int exec_runtime_run(struct exec_engine *e, const struct exec_runtime_sandbox *sb, pid_t *sandbox_pid,
		     struct gv_err *err) GV_MUST_CHECK;
int exec_runtime_create_spawn(struct exec_engine *e, const struct exec_runtime_sandbox *sb, pid_t *cli_pid,
			      struct gv_err *err) GV_MUST_CHECK;
int exec_runtime_read_pid_file(struct exec_engine *e, const char *pid_file, pid_t *sandbox_pid,
			       struct gv_err *err) GV_MUST_CHECK;
int exec_runtime_start(struct exec_engine *e, const char *id, struct gv_err *err) GV_MUST_CHECK;
int exec_runtime_delete_start(struct exec_engine *e, const char *id, pid_t *pid, struct gv_err *err) GV_MUST_CHECK;
int exec_runtime_checkpoint(struct exec_engine *e, const char *id, const char *image_dir,
			    struct gv_err *err) GV_MUST_CHECK;
int exec_runtime_restore(struct exec_engine *e, const struct exec_runtime_sandbox *sb, const char *image_dir,
			 pid_t *sandbox_pid, struct gv_err *err) GV_MUST_CHECK;
