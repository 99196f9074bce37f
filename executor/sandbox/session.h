/* Sessions of the sandbox engine: one session = one fresh runsc sandbox
 * for one submission. exec_session_open builds the work dir, the
 * OCI bundle and the cgroup, creates and starts the sandbox and returns the
 * compile phase's result; exec_session_run_test runs one test; and
 * exec_session_close kills the sandbox and leaves the rest of its removal
 * to the engine (executor/sandbox/engine.h: exec_engine_poll/drain/fini).
 * Interactive tests are in executor/sandbox/session_relay.h. The security
 * model is in executor/SECURITY.md.
 *
 * Two channels: what the program did (TLE, MLE, RE, ...) is data in struct
 * exec_phase_result; a failure of our machinery (runsc, cgroups, a broken
 * protocol) is an error (-1 with gv_err), which callers turn into verdict IE.
 *
 * Threading: the engine's (one thread drives an engine and its sessions). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "executor/sandbox/engine.h"
#include "executor/sandbox/gpu.h"
#include "executor/sandbox/netpolicy.h"

/* run_test on a session whose sandbox is gone (whole-sandbox OOM, host
 * wall-clock backstop, a protocol failure): the caller opens a fresh
 * session for the remaining tests. */
#define EXEC_EDEAD (GV_EBASE + 100)

/* Limits of one phase. 0 means "init's default" where PROTOCOL.md gives
 * one; cpu_ms, wall_ms and memory_kb are required. */
struct exec_limits {
	uint64_t cpu_ms, wall_ms, memory_kb, output_bytes, stderr_bytes, stack_kb, fsize_kb;
	/* Tests: init's sampling period (PROTOCOL.md `sample_ms`); 0: its 5 ms. */
	uint32_t sample_ms;
	uint32_t procs, open_files;
	bool rlimit_as;
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
	/* The program's stderr is its stdout: one pipe, one stream in the
	 * order written, under the output cap (PROTOCOL.md,
	 * `stderr_to_stdout`). Compiles keep theirs apart. */
	bool stderr_to_stdout;
	/* A plain run of one test (Jobe): /box is not made read-only after
	 * the compile (PROTOCOL.md, `writable_box`). */
	bool writable_box;
	/* File I/O tasks (not interactive): each test's input is also the
	 * read-only file /box/<input_file>, and the program's output is what
	 * it leaves in /box/<output_file> (its stdout is dropped); PROTOCOL.md,
	 * `input_file` / `output_file`. NULL: none. Names as job files'. */
	const char *input_file, *output_file;
	/* The language's fork server (languages/lang.h `fork_server`,
	 * PROTOCOL.md): gavel-init forks tests from a template of the
	 * runtime. NULL: none. */
	const char *fork_server;
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
	/* CPU quota of the sandbox in % of one CPU (1..6400); 0: the
	 * engine's cpu_quota_pct. Notebook kernels take their tenant's. */
	uint32_t cpu_quota_pct;
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
	char order[512];  /* arrival order of out and err_out (record.h `order`); "" unknown */
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

/* Like exec_session_run_test_files, and first seeds the files seeds (at
 * most EXEC_FEEDBACK_MAX, each <= EXEC_FEEDBACK_SEED_MAX bytes) into the
 * test's feedback dir, writable by the program (sessions with
 * feedback_dir only): a multi-pass validator's state from its previous
 * pass. */
int exec_session_run_test_seeded(struct exec_session *s, const struct exec_file *files, size_t nfiles,
				 const struct exec_file *seeds, size_t nseeds, const void *input, size_t len,
				 struct exec_phase_result *out, struct gv_err *err) GV_MUST_CHECK;

/* False once the sandbox is gone; run_test then fails with EXEC_EDEAD. */
bool exec_session_alive(const struct exec_session *s);
/* Whether s counts as a job's open session for the engine's pool of
 * sandboxes created ahead (executor/sandbox/pool.h: no creation while
 * one is open). Every session counts from exec_session_open; a notebook
 * kernel started ahead (executor/kernels/kernel.h) does not while it waits
 * for a kernel to adopt it, so that its worker's pool still refills. */
void exec_session_set_counted(struct exec_session *s, bool counted);
/* The sandbox's id (runsc container id, cgroup leaf); owned by s. */
const char *exec_session_id(const struct exec_session *s);
/* The sandbox cgroup's path relative to each controller; owned by s. */
const char *exec_session_cgroup(const struct exec_session *s);
/* The sandbox's own network (names, addresses), or NULL when it has none;
 * owned by s. */
const struct exec_net *exec_session_net(const struct exec_session *s);

/* ---- images of sandboxes (runsc checkpoint / restore) ----
 *
 * For notebook kernels started from a warmed template
 * (executor/kernels/kernel_image.h). An image holds whatever the
 * sandbox's memory held: only sandboxes that never ran a tenant's code are
 * saved, and each restore is a new sandbox (its own id, uid, cgroup, /box
 * and pipes) for one job. */

/* Saves s's sandbox into image_dir (an empty folder of the caller's) and
 * ends it: s is dead afterwards whatever the outcome (close it). Its
 * interactive phase must be quiet: what init wrote that the host did not
 * read is lost, and restores continue from the image. */
int exec_session_checkpoint(struct exec_session *s, const char *image_dir, struct gv_err *err) GV_MUST_CHECK;
/* A new session for job whose sandbox is made from image_dir: job must be
 * the one the image's sandbox ran (same record and files; its tenant and
 * CPU quota may differ: they are the bundle's), interactive, with no
 * compile step, and the image saved during its stream
 * (exec_stream_resume continues it). */
int exec_session_restore(struct exec_engine *e, const struct exec_job *job, const char *image_dir,
			 struct exec_session **out, struct gv_err *err) GV_MUST_CHECK;

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
 * RLIMIT_FSIZE backstop of the bundle and the CPU quota. Everything else in a bundle is the
 * engine's. Two jobs of one shape get identical bundles, so a sandbox
 * created for a shape has exactly the limits a job of that shape needs. */
struct exec_sandbox_shape {
	char tenant[65];
	uint64_t memory_limit_bytes;
	uint64_t fsize_bytes;
	uint32_t cpu_quota_pct; /* the sandbox's CPU quota, % of one CPU */
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
