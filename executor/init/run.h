/* Running one command (compiler or program) under limits and measuring it:
 * spawn with rlimits + seccomp, capture stdout/stderr with caps, enforce the
 * wall clock, sample memory, then kill every leftover process and reap all. */
#pragma once

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "executor/init/job.h"
#include "executor/init/seccomp_policy.h"
#include "executor/init/verdict.h"

struct init_capture {
	char *buf;        /* owned; grows up to the cap */
	size_t len;       /* bytes kept */
	size_t alloc;
	uint64_t total;   /* bytes read, kept or not */
};

#define INIT_ORDER_SEGS 40 /* 40 segments of at most 11 characters and a comma fit EXEC_RECORD_ORDER_MAX */

/* State kept across runs so that a trivial test costs few syscalls. */
struct init_runner {
	int out_r, out_w;        /* stdout pipe, reused */
	int err_r, err_w;        /* stderr pipe, reused */
	int sigfd;               /* SIGCHLD */
	int in_rw, in_ro;        /* stdin: a memfd and a read-only reopening of it */
	struct init_capture out, err;
	/* The arrival order of the kept bytes of out and err this run, as
	 * segments; only the first INIT_ORDER_SEGS are told apart. */
	struct {
		char stream; /* 'o' or 'e' */
		uint64_t len;
	} seg[INIT_ORDER_SEGS];
	size_t nseg;
	uint64_t reaped_us;      /* CPU time (rusage, us) of every process init reaped since the run began */
	/* The fork server's template (forkserver.h), which the kills and tree
	 * walks of every run spare; 0: none. spare_lost: it was reaped during
	 * a run (it ended: the run's output may hold its last words). */
	pid_t spare_pid;
	int spare_lost;
};

/* The uid/gid of compilers and programs when init itself runs as root
 * inside the sandbox (the recommended bundle, see PROTOCOL.md). */
#define INIT_SANDBOX_UID 65534
#define INIT_SANDBOX_GID 65534

/* An interactive run (job record `interactive:1`, PROTOCOL.md): the
 * program's stdin is the read end of a pipe that the stream feeds from the
 * host's `data` frames, and its stdout goes to the stream as it comes
 * (never into r->out). The runner keeps its own loop (limits, sampling,
 * reaping) and calls the stream between polls. Backpressure: stdout is
 * read only while room() says the stream can take it, so every buffer
 * stays bounded. */
#define INIT_STREAM_MAX_FDS 3
struct init_stream {
	void *ctx;
	int stdin_fd;  /* the program's fd 0 (read end of a pipe); the parent closes it after the spawn */
	/* Bytes of stdout the stream takes now; 0 leaves them in the pipe. */
	size_t (*room)(void *ctx);
	/* Takes n (<= room) bytes of the program's stdout. */
	int (*out)(void *ctx, const char *data, size_t n, struct gv_err *err);
	/* Fills up to INIT_STREAM_MAX_FDS pollfds it waits on; returns the count. */
	int (*prepare)(void *ctx, struct pollfd *pf);
	/* Moves what it can, after each poll (revents of its pollfds). */
	int (*pump)(void *ctx, const struct pollfd *pf, int n, struct gv_err *err);
	/* Blocks until everything taken by out() reached the host. */
	int (*flush)(void *ctx, struct gv_err *err);
};

/* RLIMIT_NPROC of a program whose seccomp policy refuses new processes
 * (procs:1). gVisor counts every task (thread) against it, and let one
 * task more than the limit start (measured: under RLIMIT_NPROC 1 one fork
 * or one thread went through, the second thread got EAGAIN). A process
 * limit of 1 is about processes: threads are the program's own (their CPU
 * time and memory are the process's), up to this many. */
#define INIT_SINGLE_PROCESS_TASKS 64

struct init_run_spec {
	char *const *argv;
	const struct init_limits *lim;
	const struct init_bpf *bpf;
	int combined_cap;   /* compile: stdout + stderr together over output_bytes is OLE */
	int drop_to_sandbox_uid; /* init is uid 0: the child becomes INIT_SANDBOX_UID/GID */
	const struct init_stream *stream; /* interactive runs only; NULL: memfd stdin, captured stdout */
	int idle_is_tle;    /* tests: idle (nothing runnable, CPU still) for idle_ms ends the run as TLE */
	int no_rlimit_as;   /* tests: no RLIMIT_AS even with lim->rlimit_as; memory is the sampled resident size */
	int compile_phase;  /* a compiler: the process tree (procs > 1) is walked every 200 ms, not 20 */
	int single_process; /* the policy refuses new processes (procs:1): RLIMIT_NPROC then bounds
			     * threads only, at INIT_SINGLE_PROCESS_TASKS */
	int stderr_to_stdout; /* the child's fd 2 is its fd 1: one stream, in the order written */
	const char *cwd;      /* the child's working directory; NULL: init's own (/box) */
	/* Tests of a language with a fork server (forkserver.h): the
	 * program is forked from its template instead of exec'd; argv, bpf
	 * and the limits must be those the template was started with. */
	struct init_forkserver *fork;
};

/* Puts the program's stdout and stderr pipes at fds 1 and 2 of the caller,
 * replacing what is there: the caller has moved its own fds 1 and 2
 * elsewhere first. */
int init_runner_open(struct init_runner *r, struct gv_err *err) GV_MUST_CHECK;
void init_runner_close(struct init_runner *r);

/* Replaces the stdin content of the next run (copy of data[0..len)). */
int init_runner_input_reset(struct init_runner *r, struct gv_err *err) GV_MUST_CHECK;
int init_runner_input_append(struct init_runner *r, const char *data, size_t len, uint64_t off,
			     struct gv_err *err) GV_MUST_CHECK;

/* Runs spec once and fills o. On return no process but init is left and
 * r->out / r->err hold the captures. -1 only for init's own failures. */
int init_runner_run(struct init_runner *r, const struct init_run_spec *spec,
		    struct init_outcome *o, struct gv_err *err) GV_MUST_CHECK;

/* Empties init's capability bounding set (needs CAP_SETPCAP) and checks
 * that nothing is left in it; children inherit the empty set. Only when
 * init runs as root inside the sandbox. */
int init_empty_bounding_set(struct gv_err *err) GV_MUST_CHECK;

/* Empties init's supplementary groups (needs CAP_SETGID) and checks that
 * none is left; children inherit the empty list. Only as root. */
int init_drop_groups(struct gv_err *err) GV_MUST_CHECK;

/* Kills every process but init (and r->spare_pid) and reaps all children. */
int init_kill_all(struct init_runner *r, struct gv_err *err) GV_MUST_CHECK;
