/* The job record (/box/job) as gavel-init reads it: argv lists and limits,
 * parsed by one pure function over the shared record lexer. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define INIT_JOB_MAX_BYTES 65536  /* /box/job larger than this is refused */
#define INIT_JOB_MAX_ARGS 64      /* per argv list */
#define INIT_JOB_ARG_MAX 4096     /* bytes per argument */

/* Limits of one phase (compile or test). All sizes in the record's units. */
struct init_limits {
	uint64_t cpu_ms;
	uint64_t wall_ms;
	uint64_t idle_ms;        /* tests: idle (nothing runnable, CPU still) this long is TLE (0 in compile limits: none) */
	uint64_t memory_kb;
	uint64_t output_bytes;   /* stdout cap (compile: stdout + stderr together) */
	uint64_t stderr_bytes;   /* stderr capture cap (tests) */
	uint64_t stack_kb;       /* 0: leave as inherited */
	uint64_t procs;          /* RLIMIT_NPROC */
	uint64_t open_files;     /* RLIMIT_NOFILE */
	uint64_t fsize_kb;       /* RLIMIT_FSIZE */
	uint64_t sample_ms;      /* tests: how often the run is sampled (memory, CPU, idle) */
	int rlimit_as;           /* also set RLIMIT_AS = memory_kb */
};

/* The job record's `fork_server` (forkserver.h). */
enum init_fork_kind {
	INIT_FORK_NONE = 0,
	INIT_FORK_PYTHON, /* "python" */
};

struct init_job {
	char *compile_argv[INIT_JOB_MAX_ARGS + 1]; /* NULL-terminated; [0] NULL: no compile */
	char *run_argv[INIT_JOB_MAX_ARGS + 1];     /* NULL-terminated, at least one */
	struct init_limits compile;
	struct init_limits test;
	int feedback_dir; /* 1: a fresh writable /tmp/gv-feedback/ per test, its files sent back */
	int interactive;  /* 1: tests take stdin from `data` frames and stream stdout back as `data` */
	int network;      /* 1: the sandbox has a filtered network: AF_INET sockets allowed */
	int stderr_to_stdout; /* 1: tests' stderr is their stdout (not interactive ones) */
	int writable_box;     /* 1: /box is left writable for the program (one plain run) */
	/* File I/O tests (not interactive): each test's input is also
	 * /box/<input_file> (read-only), and what the program left in
	 * /box/<output_file> is its output instead of its stdout. NULL: none. */
	char *input_file;
	char *output_file;
	int fork_server; /* enum init_fork_kind: tests forked from a template of the runtime */
	char *strings;   /* owns every argv string */
};

/* Parses the job record in buf[0..len). Required: version:1, run_arg,
 * cpu_ms, wall_ms, memory_kb, output_bytes; compile_* limits when
 * compile_arg is present. Defaults and bounds are listed in PROTOCOL.md.
 * Fails with GV_EPROTO/GV_ELIMIT naming the key. On success job owns its
 * strings (init_job_free); on failure nothing is left allocated. */
int init_job_parse(const char *buf, size_t len, struct init_job *job,
		   struct gv_err *err) GV_MUST_CHECK;

/* NULL-safe; leaves job zeroed. */
void init_job_free(struct init_job *job);
