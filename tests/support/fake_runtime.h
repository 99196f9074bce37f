/* A fake sandbox runtime for the engine's unit tests: no runsc, no root,
 * no cgroups. Its "sandbox" is a forked child of the test that runs a
 * stand-in for gavel-init (a function of the test) on the session's own
 * pipes, speaking the protocol of executor/PROTOCOL.md; its "cgroup"
 * reports the CPU time and OOM kills the stand-in writes into memory
 * shared with the test. Linked into the test binaries only (tests/support):
 * no configuration of a real engine can select it. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "executor/sandbox/session.h"

/* Shared between the test and its stand-ins (MAP_SHARED). */
struct fake_shared {
	volatile uint64_t cpu_ns;    /* the sandbox cgroup's CPU time */
	volatile uint64_t oom_kills; /* its OOM kill counter */
	volatile int cpu_unreadable; /* cpu_usage fails */
};

struct fake_runtime {
	/* The stand-in for gavel-init, run in the "sandbox" process with
	 * commands on in, frames out on out (init's fd 0 and 1), and box the
	 * bundle's /box on the host. It returns the process's exit status. */
	int (*init)(int in, int out, const char *box, struct fake_shared *sh);
	struct fake_shared *sh;
	bool fail_run;               /* the run op fails (like runsc run) */
	bool no_run;                 /* the runtime has no run op */
	unsigned runs, deletes;      /* run and delete_start calls */
	char work_root[PATH_MAX];
};

/* Makes a fake engine on a fresh work root under /tmp: e is usable with
 * exec_session_open/run_test/close; session_wall_ms 0: the engine's
 * default. */
int fake_engine_init(struct exec_engine *e, struct fake_runtime *f, uint64_t session_wall_ms,
		     struct gv_err *err) GV_MUST_CHECK;
/* exec_engine_fini, then removes the work root (which must be empty). */
void fake_engine_fini(struct exec_engine *e, struct fake_runtime *f);

/* For stand-ins: reads one frame (kind, a malloc'd payload) from fd;
 * -1 at EOF or on a bad frame. */
int fake_read_frame(int fd, char kind[17], char **payload, size_t *len);
/* Writes one frame; -1 on a failed write. */
int fake_send(int fd, const char *kind, const void *payload, size_t len);
/* Sends stdout, stderr and a result record of phase (EXEC_PHASE_*),
 * index, status and limit (EXEC_*), and time_ms. */
int fake_send_phase(int fd, const char *out, int phase, uint32_t index, int status, int limit,
		    uint64_t time_ms);
