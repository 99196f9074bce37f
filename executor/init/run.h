/* Running one command (compiler or program) under limits and measuring it:
 * spawn with rlimits + seccomp, capture stdout/stderr with caps, enforce the
 * wall clock, sample memory, then kill every leftover process and reap all. */
#pragma once

#include <stddef.h>
#include <stdint.h>

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

/* State kept across runs so that a trivial test costs few syscalls. */
struct init_runner {
	int out_r, out_w;        /* stdout pipe, reused */
	int err_r, err_w;        /* stderr pipe, reused */
	int exec_r, exec_w;      /* child -> parent exec-failure report */
	int sigfd;               /* SIGCHLD */
	int in_rw, in_ro;        /* stdin: a memfd and a read-only reopening of it */
	struct init_capture out, err;
};

/* The uid/gid of compilers and programs when init itself runs as root
 * inside the sandbox (the recommended bundle, see PROTOCOL.md). */
#define INIT_SANDBOX_UID 65534
#define INIT_SANDBOX_GID 65534

struct init_run_spec {
	char *const *argv;
	const struct init_limits *lim;
	const struct init_bpf *bpf;
	int combined_cap;   /* compile: stdout + stderr together over output_bytes is OLE */
	int drop_to_sandbox_uid; /* init is uid 0: the child becomes INIT_SANDBOX_UID/GID */
};

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

/* Kills every process but init and reaps all children. */
int init_kill_all(struct init_runner *r, struct gv_err *err) GV_MUST_CHECK;
