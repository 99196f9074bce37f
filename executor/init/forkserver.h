/* The fork server of gavel-init (job record `fork_server`): a language's
 * runtime started once per submission, inside its sandbox, to a clean
 * point before any submission code, and forked once per test. Python
 * first (`fork_server:python`); every other language keeps one execve per
 * test. The security argument is in forkserver.c; the Python side is
 * forkserver_python.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "executor/init/job.h"

struct init_runner;
struct init_run_spec;

/* The template's argv for a Python run argv `[python, OPTION..., SCRIPT,
 * ARG...]`: `[python, OPTION..., -c, stub, SCRIPT, ARG...]`, written into
 * out (out_max entries with the NULL; the strings are borrowed from
 * run_argv and the stub). 0, or -1 when the run argv is not of that shape
 * (an option outside the allowlist, -m, -c, no script): the caller keeps
 * the execve path. Pure: no system call. */
int init_fork_python_argv(char *const *run_argv, const char *stub, char **out, size_t out_max);

/* The Python stub the template runs (forkserver_python.c). */
extern const char init_fork_python_stub[];

/* How a test's process ended, as the template reaped it. */
struct init_fork_exit {
	int status;          /* wait status */
	uint64_t cpu_us;     /* user + system, its reaped descendants included */
	uint64_t maxrss_kb;
};

struct init_forkserver {
	pid_t pid;        /* the template; 0: none (never started, or stopped) */
	int ctl_w;        /* init -> template: one byte per fork */
	int rep_r;        /* template and each test's process -> init */
	/* The current test's process: */
	int ready_seen;   /* it said it is set up ('R') */
	int failed_seen;  /* ... or that its set-up failed; failed_errno then */
	int failed_errno;
	const char *failed_step; /* static: which step of its set-up */
	int exited;       /* the template reaped it: exit */
	struct init_fork_exit exit;
};

/* Starts the template for the test runs of spec (its limits, policy and
 * stdio options are sent to it once; every test of the job shares them)
 * and waits until it says it is ready. 0, or -1 with err: nothing is left
 * of the template (killed, reaped, its output discarded) and the caller
 * runs tests through execve, as without a fork server. The runner spares
 * the template from its kills (r->spare_pid) until init_forkserver_stop. */
int init_forkserver_start(struct init_forkserver *fs, enum init_fork_kind kind, struct init_runner *r,
			  const struct init_run_spec *spec, struct gv_err *err) GV_MUST_CHECK;

/* Whether a template is there to fork from. */
int init_forkserver_alive(const struct init_forkserver *fs);

/* Asks the template for one test's process and returns its pid (the
 * template's child; init samples and kills it as its own). -1 with err
 * when the template is gone or broken. */
int init_forkserver_spawn(struct init_forkserver *fs, pid_t *pid, struct gv_err *err) GV_MUST_CHECK;

/* The fd to poll while the test's process runs: readable when the
 * template or the process has something to say. */
int init_forkserver_fd(const struct init_forkserver *fs);

/* Takes what is there to read without blocking: 1 when the process has
 * ended (fs->exit filled; fs->ready_seen says whether its set-up was
 * complete before it ended, fs->failed_seen whether it failed), 0 when
 * not yet, -1 with err when the template ended or broke the protocol. */
int init_forkserver_take(struct init_forkserver *fs, struct gv_err *err) GV_MUST_CHECK;

/* Ends the template (closing its request pipe, then SIGKILL) and reaps
 * it; the runner no longer spares anything. NULL-safe, idempotent. */
void init_forkserver_stop(struct init_forkserver *fs, struct init_runner *r);
