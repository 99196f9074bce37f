/* The sandbox engine: one per process, owning what every session of it
 * shares (the runsc root and work root, the host cgroups, the reaper of
 * the sandbox processes, the host uids and networks of sandboxes, the pool
 * of sandboxes created ahead of demand) and the tear-down of closed
 * sessions, which it finishes off the callers' critical path
 * (executor/sandbox/engine.c). Sessions are in executor/sandbox/session.h.
 *
 * Threading: one engine per process, all its sessions driven from one
 * thread. The engine makes the process a child subreaper and is the only
 * caller of waitpid(-1); it ignores SIGPIPE process-wide. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "executor/sandbox/bundle.h"
#include "executor/sandbox/cgroup.h"
#include "executor/sandbox/netpolicy.h"
#include "executor/sandbox/runsc.h"
#include "executor/sandbox/runtime.h"
#include "executor/sandbox/sandbox_uid.h"

struct exec_engine_config {
	const char *runsc_path;     /* absolute, e.g. /usr/bin/runsc */
	const char *runsc_root;     /* runsc --root, owned by this executor only */
	const char *work_root;      /* bundles and work dirs, on a real disk */
	const char *init_path;      /* absolute path of the built gavel-init */
	const char *cgroup_parent;  /* relative, e.g. "gavel" */
	const char *platform;       /* NULL: runsc's default (ptrace) */
	/* Bound mounts (/usr, /etc, /box...) are opened with runsc
	 * --file-access-mounts=exclusive unless this is set: the Sentry then
	 * trusts its own dentry cache instead of asking the gofer again on
	 * every path walk (execve, the dynamic loader). Safe because nothing
	 * on the host changes those mounts while a sandbox lives: /box is
	 * written before the sandbox exists, the rest is read-only software.
	 * Set it only for hosts that update /usr under running sandboxes. */
	bool file_access_shared;
	/* Skip `runsc --version` at init (~60 ms): a broken runsc then fails
	 * the first sandbox, with runsc's own message, instead of the init.
	 * The CLI sets it; a daemon should know at start. */
	bool skip_runsc_check;
	/* Report gavel-init's CPU figure as it is and send it the real CPU
	 * limit, without the host-side accounting of executor/sandbox/cputime.h
	 * (whose figure does not grow with the node's load). Only the
	 * benchmarks set it, to measure that accounting against what it
	 * replaces. */
	bool guest_cpu_time;
	/* CPU slots (executor/sandbox/cpuslot.h): with cpu_slots > 0 a test
	 * phase runs only while it holds one of cpu_slots lock files under
	 * cpu_slot_dir [/run/gavel/cpu-slots], shared by every engine on the
	 * node. 0: off. The executor and the CLI default to one per CPU
	 * (executor.cpu_slots, GAVEL_CPU_SLOTS). */
	const char *cpu_slot_dir;
	uint32_t cpu_slots;
	/* Folder of precompiled headers (languages/lang_pch.h), bound
	 * read-only into every sandbox when it exists at init; NULL: none. */
	const char *pch_dir;
	/* The host uids of sandboxes (executor/sandbox/sandbox_uid.h): count
	 * from base, locked under dir, shared by every engine of the node;
	 * 0/NULL: EXEC_UIDS_DEFAULT_BASE, _COUNT, EXEC_UIDS_DIR. */
	uint32_t sandbox_uid_base, sandbox_uid_count;
	const char *sandbox_uid_dir;
	/* runsc --nvproxy (its GPU proxy) for every sandbox: set only on a
	 * node with real GPUs, after executor/sandbox/gpu.c found the flag. */
	bool nvproxy;
	/* Optional (0/NULL: the default in brackets). */
	const char *cgroup_root;    /* [/sys/fs/cgroup] */
	uint64_t tmp_size_kb;       /* tmpfs /tmp [65536] */
	uint64_t headroom_kb;       /* sandbox memcg over the program limit [65536] */
	uint64_t session_wall_ms;   /* whole-sandbox deadline [1800000] */
	uint32_t cpu_quota_pct;     /* CPU quota of the sandbox, % of one CPU [100] */
	uint32_t pids_limit;        /* host threads backstop [4096], >= 1024 */
	/* Sandbox networks for jobs whose tenant policy grants egress
	 * (executor/sandbox/netpolicy.h); net.prefix NULL: none granted
	 * here. */
	struct exec_net_config net;
};

/* A closed session whose sandbox is being taken down off the caller's
 * critical path: reaped, `runsc delete`d, cgroups and work dir removed.
 * Internal to the engine (engine.c). */
struct exec_pending {
	char id[40];
	char cg_rel[256];
	pid_t sandbox_pid;   /* killed, not yet reaped; -1 when done */
	pid_t delete_pid;    /* `runsc delete` in flight; -1 when none */
	int64_t since;       /* start of the current step, monotonic ms */
	int step;
	bool created, dir_made, delete_killed;
	bool has_net;        /* net (its slot held) is removed in the clean-up */
	struct exec_net net;
	bool has_uid;        /* uid_slot (executor/sandbox/sandbox_uid.h) is given back in the clean-up */
	unsigned uid_slot;
};
#define EXEC_PENDING_MAX 16

struct exec_pool;
struct exec_sandbox_shape;
struct exec_session;

/* What the engine and the sessions ask of a pool of sandboxes created ahead
 * of demand. The pool (executor/sandbox/pool.c) sits above the engine and
 * the sessions and installs these with itself in exec_pool_attach, so that
 * neither calls into it by name. */
struct exec_pool_hooks {
	/* exec_pool_take: the pool's sandbox of shape, or NULL (exec_session_open). */
	struct exec_session *(*take)(struct exec_pool *p, const struct exec_sandbox_shape *shape);
	/* exec_pool_tick: collect, expire, refill (exec_engine_poll). */
	void (*tick)(struct exec_pool *p);
	/* exec_pool_detach: empty the pool and detach it (exec_engine_fini). */
	void (*detach)(struct exec_pool *p);
};

/* Owned by the caller (embed or allocate); filled by exec_engine_init. */
struct exec_engine {
	struct exec_engine_config cfg; /* strings borrowed from the caller's config */
	struct exec_cgroup cg;
	struct exec_reaper reaper;
	struct exec_runsc runsc;
	/* The sandbox runtime (runtime.h): exec_engine_init sets runsc's,
	 * driven through runsc above; only the unit tests install another. */
	const struct exec_runtime_ops *rt;
	struct exec_uids uids;  /* each sandbox's own host uid */
	bool work_root_bound;   /* exec_uids_prepare_root bound cfg.work_root */
	const char *etc_binds[EXEC_BUNDLE_MAX_ETC_BINDS + 1];
	const char *usr_dirs[EXEC_BUNDLE_MAX_USR_DIRS + 1];
	const char *pch_path; /* cfg.pch_dir when it was a folder at init, else NULL */
	int work_root_fd;
	unsigned swept_containers, swept_cgroups, swept_dirs;
	struct exec_pending pending[EXEC_PENDING_MAX];
	size_t n_pending;
	/* Sandboxes created ahead of demand (executor/sandbox/pool.h); NULL:
	 * none. Set with pool_hooks by exec_pool_attach; open takes from it,
	 * poll refills it, fini empties it. */
	struct exec_pool *pool;
	const struct exec_pool_hooks *pool_hooks; /* set while pool is */
	unsigned n_open;     /* sessions opened and not closed yet (but those set not counted) */
	/* Sandbox network slots in use (netpolicy), and the blocked
	 * connection attempts of every networked sandbox closed since the
	 * caller last reset net_blocked (the daemon: per job, for audit). */
	bool net_slot_used[EXEC_NET_SLOTS_MAX];
	uint64_t net_blocked;
	unsigned swept_net;
};

/* Checks that runsc is present and runs, that we are root, the runsc root
 * and the work root (made, with missing parents, root-owned 0700 when
 * absent; refused when writable by others), gavel-init and the cgroup
 * controllers; makes the process a
 * child subreaper; sweeps stale containers, cgroups and work dirs of an
 * earlier run. Fails closed: any check failing is an error. cfg's strings
 * are borrowed for the engine's lifetime. */
int exec_engine_init(struct exec_engine *e, const struct exec_engine_config *cfg,
		     struct gv_err *err) GV_MUST_CHECK;
/* Finishes the tear-down of every closed session (blocking), then
 * releases the engine (sessions must be closed first). NULL-safe. */
void exec_engine_fini(struct exec_engine *e);

/* Advances the tear-down of closed sessions without blocking: reaps,
 * starts or collects `runsc delete`, removes cgroups and work dirs. The
 * engine calls it itself from open, run_test and close; an idle caller may
 * call it now and then so that nothing waits for the next job. */
void exec_engine_poll(struct exec_engine *e);

/* Blocks until every closed session is fully torn down (container
 * deleted, cgroups and work dir removed). */
void exec_engine_drain(struct exec_engine *e);
