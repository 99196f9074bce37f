/* Private to gavel-init's runner (executor/init/run.h): the pieces
 * init_runner_run is made of. child.c is the child between clone and
 * execve; capture.c moves the program's output out of its pipes; reap.c
 * kills and reaps what a run leaves; proc_sample.c reads /proc for the
 * limits enforced by sampling. None of them pulls in code outside
 * executor/init/ (gavel-init links statically with a fixed list). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "common/err.h"
#include "executor/init/run.h"

#define INIT_READ_CHUNK 65536
#define INIT_PATH_CANDIDATES 3

/* ---- child.c ---- */

/* What failed in the child before (or at) execve. The child shares our
 * memory until execve (CLONE_VM) and CLONE_VFORK holds us until it has
 * exec'd or exited, so it leaves its report here rather than in a pipe
 * (what posix_spawn does too): no pipe read after every spawn. */
struct init_child_report {
	int stage;   /* what failed (enum init_child_stage); 0: nothing */
	int err;     /* errno */
};

enum init_child_stage {
	INIT_STAGE_SETUP = 1,
	INIT_STAGE_RLIMIT,
	INIT_STAGE_SETUID,
	INIT_STAGE_SECCOMP,
	INIT_STAGE_EXEC,
	INIT_STAGE_COUNT /* one past the last */
};

/* Everything the child needs, prepared by the parent before clone. */
struct init_child_args {
	const struct init_runner *r;
	const struct init_run_spec *spec;
	char paths[INIT_PATH_CANDIDATES][4096];
	int npaths;
	struct rlimit rl_cpu, rl_as;
	int set_as;  /* RLIMIT_AS = rl_as */
	uint64_t nproc; /* RLIMIT_NPROC */
	volatile struct init_child_report report;
};

/* The rlimits a program's child sets that are derived from its spec
 * (the others are the limits' own values). */
struct init_child_rlimits {
	struct rlimit cpu;
	uint64_t nproc;
};
void init_child_rlimits(const struct init_run_spec *spec, struct init_child_rlimits *rl);

/* The program's environment, built once (init_child_env_init). */
char *const *init_child_envp(void);

/* The clone entry of the child: never returns (execve or _exit(127) with
 * a report in the args). */
int init_child_main(void *arg);

/* The candidate paths of argv[0] into a->paths: itself when it holds a
 * '/', else under /usr/bin and /bin, the
 * directories of the program's PATH. */
int init_child_resolve_paths(struct init_child_args *a, const char *name, struct gv_err *err) GV_MUST_CHECK;

/* Adds NVIDIA_VISIBLE_DEVICES to the program's environment when init's
 * own holds a valid one, then overwrites init's own environment (nothing
 * reads it after). Once, before any child exists. */
void init_child_env_init(void);

/* ---- capture.c ---- */

/* Reads what is available on fd into c, keeping at most cap bytes (every
 * byte counted in c->total); 0 (EAGAIN), or -1. scratch holds
 * INIT_READ_CHUNK bytes. */
int init_capture_drain(int fd, struct init_capture *c, uint64_t cap, char *scratch,
		       struct gv_err *err) GV_MUST_CHECK;

/* Interactive runs: moves what is in the stdout pipe to the stream, at most
 * what it has room for (final: everything, flushing the stream as often as
 * needed). Counts every byte in c->total for the output cap. */
int init_capture_stream_drain(int fd, struct init_capture *c, const struct init_stream *st, int final,
			      char *scratch, struct gv_err *err) GV_MUST_CHECK;

/* ---- reap.c ---- */

/* User + system time of a rusage, in microseconds. */
uint64_t init_rusage_us(const struct rusage *ru);

/* Empties the SIGCHLD signalfd. */
void init_flush_sigfd(int sigfd);

/* ---- proc_sample.c ---- */

/* CPU time (ms) used so far by the process whose /proc/<pid>/stat is fd
 * (all its threads); -1 when unreadable. *runnable: its state is R. */
int64_t init_sample_cpu_ms(int fd, int *runnable);

/* The whole process tree of a run that may start processes (procs > 1);
 * see proc_sample.c for why the sum is the tree's CPU time. */
struct init_tree_sample {
	uint64_t cpu_ms;  /* of the processes alive now, reaped children included */
	uint64_t rss_kb;
	int procs;
	int runnable;     /* some process is in state R */
};

/* Walks procfd (an open /proc) over every process but init and spare
 * (the fork server's template; 0: none); -1 when /proc cannot be read. */
int init_sample_tree(int procfd, pid_t spare, struct init_tree_sample *t);

/* Kills (SIGKILL) every process but init and spare; the number of
 * processes, zombies included, it found; -1 when /proc cannot be read. */
int init_kill_others(int procfd, pid_t spare);

/* Raises *vmpeak and *hwm (kB) from the /proc/<pid>/status open as fd. */
void init_sample_memory(int fd, uint64_t *vmpeak, uint64_t *hwm);
