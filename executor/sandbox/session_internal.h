/* What the files of a session share and nobody else may see: the session
 * itself, the host's grace periods, and the steps one file of the engine
 * calls in another (executor/sandbox/session.c is the lifecycle,
 * session_phase.c the phase runner, session_relay.c the interactive relay,
 * session_proto.c the frames of the init protocol, session_job.c the job
 * record and the files staged into /box, engine.c the engine and the
 * tear-down of closed sessions). Not for use outside executor/sandbox/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "executor/sandbox/record.h"
#include "executor/sandbox/session.h"

#define EXEC_DIAG_CAP (64u << 10)        /* init's own fd 2, per PROTOCOL.md */
#define EXEC_BACKSTOP_GRACE_MS 5000      /* host backstop beyond init's wall limit */

struct exec_session {
	struct exec_engine *e;
	char id[40];
	char cg_rel[256];
	char dir[4096];     /* absolute bundle dir */
	struct exec_limits compile_limits, run_limits;
	pid_t pid;          /* the sandbox process, our child */
	int pidfd;
	int in_fd, out_fd, err_fd; /* host ends: commands, results, init's diagnostics */
	struct exec_frame_decoder dec;
	struct exec_frame_cap caps[5];
	bool feedback_dir, interactive;
	char *diag;         /* init's stderr, DIAG_CAP bytes at most */
	size_t diag_len;
	int64_t deadline;   /* whole sandbox, monotonic ms */
	uint32_t tests_run;
	/* The sandbox cgroup's CPU time (ns) when the current phase began
	 * (host-side accounting, executor/sandbox/cputime.h); starved: the last
	 * phase's guest clock ran past init's loose limit while the host
	 * figure stayed below the real one (no verdict from that run). */
	uint64_t cpu0_ns;
	/* The sandbox cgroup's CPU time just before the sandbox started (0
	 * for one created and started at once): where its compile is counted
	 * from, since init compiles as soon as it boots. */
	uint64_t boot_cpu_ns;
	int64_t cpu_next_ms; /* the next host CPU check of the running phase (monotonic ms) */
	bool starved;
	bool dir_made, created, reaped, dead, out_eof, err_eof;
	int wait_status;
	struct exec_sandbox_shape shape;
	/* Created ahead of demand (exec_session_precreate): `runsc create`
	 * in flight (-1 when none) and the child ends of the stdio pipes,
	 * held until it exits; started once a job adopted it. */
	pid_t create_pid;
	int child_fd[3];
	int64_t created_at;
	bool started, counted;
	/* A network of its own (tenant egress policy,
	 * executor/sandbox/netpolicy.h); its slot is held until the clean-up
	 * removed it. */
	bool has_net;
	struct exec_net net;
	/* Its own host uid (executor/sandbox/sandbox_uid.h), held until the
	 * clean-up after `runsc delete`. */
	bool has_uid;
	unsigned uid_slot;
	/* GPUs of a fresh sandbox's job (exec_job), read by build_bundle;
	 * borrowed from the job while the sandbox is opened. */
	const char *gpu_visible;
	const struct exec_gpu_node *gpu_nodes;
	size_t n_gpu_nodes;
};

static inline int64_t exec_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void exec_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* ---- session_proto.c: results and frames ---- */

void exec_result_init(struct exec_phase_result *r);
void exec_result_set(struct exec_phase_result *r, const char *status, const char *limit, const char *msg);
/* Writes buf[*off..len) to the non-blocking fd as far as it takes now,
 * advancing *off: 1 all of it is written, 0 the pipe is full, -1 the
 * reader is gone (EPIPE) or another write error. */
int exec_write_some(int fd, const char *buf, size_t len, size_t *off);
/* Copies a frame's payload into *dst (NUL-terminated; the old one freed). */
int exec_result_copy_payload(char **dst, size_t *dst_len, const struct exec_frame *f);
/* Keeps one `feedback` frame (already bounded by its cap). */
int exec_result_add_feedback(struct exec_phase_result *r, const struct exec_frame *f, struct gv_err *err);
/* Fills r from a parsed result record. */
void exec_result_fill(struct exec_phase_result *r, const struct exec_record *rec);
/* Drains init's diagnostics pipe into s->diag (capped). */
void exec_session_read_diag(struct exec_session *s);
/* The last line of init's diagnostics, escaped, for error messages. */
const char *exec_session_diag_tail(const struct exec_session *s, char *out, size_t outsz);
/* Sets the frame caps of one phase of s. */
void exec_phase_caps(struct exec_session *s, const struct exec_limits *l, bool compile);
/* The command that starts one test (owned by the caller); NULL with err
 * and out's status IE. */
char *exec_test_command(const struct exec_file *files, size_t nfiles, const void *input, size_t len,
			size_t *cmd_len, struct exec_phase_result *out, struct gv_err *err);
/* The same, and before the test seeds (`feedback` frames) files into its
 * feedback dir (jobs with feedback_dir only). */
char *exec_test_command_seeded(const struct exec_file *files, size_t nfiles, const struct exec_file *seeds,
			       size_t nseeds, const void *input, size_t len, size_t *cmd_len,
			       struct exec_phase_result *out, struct gv_err *err);

/* ---- session_job.c: the job record and /box ---- */

int exec_job_check(const struct exec_job *job, struct gv_err *err) GV_MUST_CHECK;
int exec_job_write_files(struct exec_session *s, const struct exec_job *job, struct gv_err *err) GV_MUST_CHECK;

/* ---- session_phase.c: the phase runner ---- */

/* How a phase ended. EXEC_PH_CPU: the host's count of the sandbox's CPU
 * passed the phase's limit (exec_cpu_host_kill_ns). */
enum exec_phase_end { EXEC_PH_RESULT, EXEC_PH_DIED, EXEC_PH_TIMEOUT, EXEC_PH_PROTO, EXEC_PH_CPU };

void exec_session_kill(struct exec_session *s);
void exec_session_wait(struct exec_session *s, long timeout_ms);
void exec_session_mark_dead(struct exec_session *s);
int exec_session_cpu_ns(struct exec_session *s, uint64_t *ns, struct gv_err *err) GV_MUST_CHECK;
enum exec_phase_end exec_phase_cpu_check(struct exec_session *s, uint64_t kill_ns, int *wait_ms,
					 struct gv_err *err);
int exec_phase_cpu_start(struct exec_session *s, struct exec_phase_result *r, struct gv_err *err) GV_MUST_CHECK;
int exec_phase_run(struct exec_session *s, const char *cmd, size_t cmd_len, const struct exec_limits *l,
		   bool compile, struct exec_phase_result *r, struct gv_err *err) GV_MUST_CHECK;
int exec_phase_finish(struct exec_session *s, enum exec_phase_end end, const struct exec_limits *l,
		      struct exec_phase_result *r, struct gv_err *err);
int exec_phase_starved_error(struct exec_session *s, struct exec_phase_result *r, struct gv_err *err);

/* ---- engine.c: the tear-down ---- */

/* A free entry of e->pending (making room by finishing the oldest
 * tear-downs when all are in use), zeroed; the caller fills it. */
struct exec_pending *exec_engine_pending_slot(struct exec_engine *e);
