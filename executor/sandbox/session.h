/* The sandbox engine the rest of Gavel uses: one session = one fresh runsc
 * sandbox for one submission. exec_session_open builds the work dir, the
 * OCI bundle and the cgroup, creates and starts the sandbox and returns the
 * compile phase's result; exec_session_run_test runs one test; and
 * exec_session_close kills the sandbox and leaves the rest of its removal
 * to the engine (exec_engine_poll/drain/fini). The security model is in
 * executor/SECURITY.md.
 *
 * Two channels: what the program did (TLE, MLE, RE, ...) is data in struct
 * exec_phase_result; a failure of our machinery (runsc, cgroups, a broken
 * protocol) is an error (-1 with gv_err), which callers turn into verdict IE.
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
#include "executor/sandbox/sandbox_uid.h"

/* run_test on a session whose sandbox is gone (whole-sandbox OOM, host
 * wall-clock backstop, a protocol failure): the caller opens a fresh
 * session for the remaining tests. */
#define EXEC_EDEAD (GV_EBASE + 100)

/* Limits of one phase. 0 means "init's default" where PROTOCOL.md gives
 * one; cpu_ms, wall_ms and memory_kb are required. */
struct exec_limits {
	uint64_t cpu_ms, wall_ms, memory_kb, output_bytes, stderr_bytes, stack_kb, fsize_kb;
	uint32_t procs, open_files;
	bool rlimit_as;
};

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
 * Internal to the engine (session.c). */
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

/* Owned by the caller (embed or allocate); filled by exec_engine_init. */
struct exec_engine {
	struct exec_engine_config cfg; /* strings borrowed from the caller's config */
	struct exec_cgroup cg;
	struct exec_reaper reaper;
	struct exec_runsc runsc;
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
	 * none. Set by exec_pool_attach; open takes from it, poll refills
	 * it. */
	struct exec_pool *pool;
	unsigned n_open;     /* sessions opened and not closed yet */
	/* Sandbox network slots in use (netpolicy), and the blocked
	 * connection attempts of every networked sandbox closed since the
	 * caller last reset net_blocked (the daemon: per job, for audit). */
	bool net_slot_used[EXEC_NET_SLOTS_MAX];
	uint64_t net_blocked;
	unsigned swept_net;
};

struct exec_file {
	const char *name; /* one path component of [A-Za-z0-9._-], not "job" */
	const void *data;
	size_t len;
	/* Job files only: written 0755 instead of 0644 (still root-owned, so
	 * never writable inside), for a program of ours that the job runs,
	 * e.g. gavel-unpack (executor/problems/problem_import.c). */
	bool executable;
};

struct exec_job {
	const char *tenant;               /* [A-Za-z0-9_-]{1,64} */
	/* Output validators: every test gets a fresh, empty, writable
	 * /tmp/gv-feedback/ whose regular files come back in
	 * exec_phase_result.feedback (PROTOCOL.md, `feedback_dir`). */
	bool feedback_dir;
	/* Interactive problems: every test's stdin and stdout are streamed
	 * through the host while the program runs (exec_session_interact;
	 * PROTOCOL.md, `interactive`); run_test is refused. */
	bool interactive;
	const char *const *compile_argv;  /* NULL: no compile step */
	const char *const *run_argv;
	const struct exec_file *files;
	size_t n_files;
	struct exec_limits compile_limits, run_limits;
	/* GPUs of the job (executor/sandbox/gpu.h): NVIDIA_VISIBLE_DEVICES
	 * inside ("0,1"; NULL: none) and, on a node with real GPUs under runsc
	 * --nvproxy, the device nodes to expose (none when simulated). */
	const char *gpu_visible;
	const struct exec_gpu_node *gpu_nodes;
	size_t n_gpu_nodes;
	/* The tenant's current egress policy (tenants/egress.h), loaded by the
	 * executor, never taken from the request; NULL or not granting: no
	 * network at all. Host names are resolved when the sandbox opens.
	 * Borrowed for exec_session_open. */
	const struct tenant_egress_policy *egress;
};

/* Caps of what a validator's feedback dir sends back (init enforces them,
 * the host checks them again). */
#define EXEC_FEEDBACK_MAX 16
#define EXEC_FEEDBACK_FILE_MAX 65536
/* Payload cap of one `data` frame, both directions (interactive jobs). */
#define EXEC_DATA_FRAME_MAX 65536
/* Files placed for one test (exec_session_run_test_files). */
#define EXEC_TEST_FILES_MAX 8

struct exec_feedback_file {
	char name[65];    /* [A-Za-z0-9._-]{1,64} */
	char *data;       /* owned; NUL-terminated, len bytes (<= EXEC_FEEDBACK_FILE_MAX) */
	size_t len;
};

struct exec_phase_result {
	char status[8];   /* "OK","RE","SG","TLE","WLE","MLE","OLE","IE" */
	int exit_code, signal;
	uint64_t time_ms, wall_ms, memory_kb, stdout_bytes, stderr_bytes;
	uint64_t wall_us; /* wall_ms in microseconds as gavel-init measured it (0: not reported) */
	/* time_ms is min(guest_time_ms, host_cpu_us / 1000)
	 * (executor/sandbox/cputime.h): guest_time_ms is gavel-init's figure,
	 * which counts the time the program waited for a host CPU; host_cpu_us
	 * is the host kernel's CPU time of the whole sandbox (program, Sentry,
	 * gofer, init) over the phase. A test the host stopped for CPU (TLE,
	 * message naming the host's count) has host_cpu_us only; both are 0
	 * when the phase ended otherwise without a result record (IE, WLE by
	 * the backstop). */
	uint64_t guest_time_ms, host_cpu_us;
	char limit[16];   /* "cpu","wall","memory","output","none" */
	char message[256];
	char *out;        /* captured stdout (owned; NUL-terminated), out_len bytes */
	size_t out_len;
	char *err_out;    /* captured stderr (owned; NUL-terminated) */
	size_t err_len;
	struct exec_feedback_file feedback[EXEC_FEEDBACK_MAX]; /* jobs with feedback_dir */
	size_t n_feedback;
};

/* The feedback file called name, or NULL; borrowed from r. */
const struct exec_feedback_file *exec_phase_feedback(const struct exec_phase_result *r, const char *name);

struct exec_session;

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

/* Opens a fresh sandbox for job and runs its compile phase (a trivial OK
 * phase when compile_argv is NULL) into *compile. On success *out is a new
 * session the caller closes; the session may already be dead (compile hit
 * the sandbox OOM or the host backstop). On error nothing is left behind.
 * compile is always initialised; free it with exec_phase_result_free. */
int exec_session_open(struct exec_engine *e, const struct exec_job *job, struct exec_session **out,
		      struct exec_phase_result *compile, struct gv_err *err) GV_MUST_CHECK;

/* Runs the program once on input (len bytes, <= 64 MiB). 0: *out holds the
 * result (a whole-sandbox OOM gives MLE, the host wall backstop WLE; both
 * leave the session dead). -1: err filled (EXEC_EDEAD when the session was
 * already dead, GV_ESANDBOX/GV_EPROTO when it just broke; out->status is
 * then "IE"). out is always initialised. */
int exec_session_run_test(struct exec_session *s, const void *input, size_t len,
			  struct exec_phase_result *out, struct gv_err *err) GV_MUST_CHECK;

/* Like exec_session_run_test, and first places files (at most
 * EXEC_TEST_FILES_MAX, names [A-Za-z0-9._-]{1,64}, each <= 64 MiB) as
 * read-only /tmp/gv-files/<name> for this test only: init wipes them with
 * /tmp after it. For validator sandboxes (answers, the submission's
 * output), never for a submission's. */
int exec_session_run_test_files(struct exec_session *s, const struct exec_file *files, size_t nfiles,
				const void *input, size_t len, struct exec_phase_result *out,
				struct gv_err *err) GV_MUST_CHECK;

/* What the relay of one interactive test saw (exec_session_interact). */
struct exec_interaction {
	/* The interactor's result reached the host before the submission's
	 * (who ended first decides the verdict, exec_interactive_outcome). */
	bool interactor_first;
	uint64_t to_interactor_bytes, to_submission_bytes; /* relayed payload */
	uint32_t to_interactor_frames, to_submission_frames;
	uint64_t wall_ms;                                  /* both commands sent → both results in */
};

/* Runs one interactive test: the submission's program (session sub) and
 * the interactor (session itr, which first gets files, e.g. input and
 * answer, as for exec_session_run_test_files) start together; the host
 * relays the submission's stdout to the interactor's stdin and back, one
 * bounded `data` frame at a time each way (backpressure: a side's output
 * is read only when the other side took the previous frame). When one side
 * ends, the other's stdin is closed (an empty `data` frame). Each side's
 * wall limit is enforced by its init and by the host backstop. Both
 * sessions must have been opened with job.interactive. 0: both results
 * and *ia filled (a side's whole-sandbox OOM or backstop leaves that
 * session dead, as for run_test). -1: err filled (EXEC_EDEAD when a
 * session was already dead; a broken protocol or dead sandbox otherwise:
 * both sessions are then dead and the results' status is "IE"). Results
 * are always initialised; free them with exec_phase_result_free. */
int exec_session_interact(struct exec_session *sub, struct exec_session *itr,
			  const struct exec_file *itr_files, size_t n_itr_files,
			  struct exec_phase_result *sub_out, struct exec_phase_result *itr_out,
			  struct exec_interaction *ia, struct gv_err *err) GV_MUST_CHECK;

/* False once the sandbox is gone; run_test then fails with EXEC_EDEAD. */
bool exec_session_alive(const struct exec_session *s);
/* The sandbox's id (runsc container id, cgroup leaf); owned by s. */
const char *exec_session_id(const struct exec_session *s);
/* The sandbox cgroup's path relative to each controller; owned by s. */
const char *exec_session_cgroup(const struct exec_session *s);
/* The sandbox's own network (names, addresses), or NULL when it has none;
 * owned by s. */
const struct exec_net *exec_session_net(const struct exec_session *s);

/* Ends the sandbox at once (SIGKILL of the Sentry: nothing inside runs
 * after this returns) and frees s. The rest of the tear-down (reaping it
 * and the gofer, `runsc delete`, removing its cgroups, bundle and work
 * dir) continues in the background of the engine: exec_engine_poll,
 * exec_engine_drain, the next open and exec_engine_fini complete it, and
 * exec_engine_init sweeps whatever a crash left. NULL-safe. */
void exec_session_close(struct exec_session *s);

/* ---- sandboxes created ahead of demand (for executor/sandbox/pool.c) ----
 *
 * What a sandbox is built with before it knows its job: the tenant (its
 * cgroup sits under the tenant's parent), the memcg limit and the
 * RLIMIT_FSIZE backstop of the bundle. Everything else in a bundle is the
 * engine's. Two jobs of one shape get identical bundles, so a sandbox
 * created for a shape has exactly the limits a job of that shape needs. */
struct exec_sandbox_shape {
	char tenant[65];
	uint64_t memory_limit_bytes;
	uint64_t fsize_bytes;
};

/* The shape of job's sandbox (job as checked by open). */
void exec_job_shape(const struct exec_engine *e, const struct exec_job *job, struct exec_sandbox_shape *out);
bool exec_shape_equal(const struct exec_sandbox_shape *a, const struct exec_sandbox_shape *b);

/* Starts creating a sandbox of shape: work dir, bundle with an empty
 * /box, cgroup, and `runsc create` running in the background (nothing
 * inside runs before adopt starts it). *out is a session no job owns yet;
 * exec_session_close destroys it. */
int exec_session_precreate(struct exec_engine *e, const struct exec_sandbox_shape *shape,
			   struct exec_session **out, struct gv_err *err) GV_MUST_CHECK;
/* Without blocking: 1 when the sandbox is created and can be adopted, 0
 * while `runsc create` runs, -1 (err) when creation failed. */
int exec_session_precreate_poll(struct exec_session *s, struct gv_err *err) GV_MUST_CHECK;
/* The shape s was created with; owned by s. */
const struct exec_sandbox_shape *exec_session_shape(const struct exec_session *s);
/* Monotonic ms when s was created (pool expiry). */
int64_t exec_session_created_ms(const struct exec_session *s);

/* Frees out/err_out; NULL-safe; leaves r zeroed. */
void exec_phase_result_free(struct exec_phase_result *r);
