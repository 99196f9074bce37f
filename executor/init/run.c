/* The runner of gavel-init: one command under limits, measured. It
 * prepares and spawns the child (child.c), then watches the run: the wall
 * clock, the CPU, memory and idle limits enforced by sampling /proc
 * (proc_sample.c), the output caps (capture.c), the child's exit; at the
 * end it kills and reaps every process left (reap.c) and fills the
 * outcome.
 *
 * Security argument: the child's is in child.c (what it sets up before
 * execve, as which uid, with which rlimits and seccomp filter), the
 * leftovers' in reap.c (nothing of a run survives it). The limits
 * enforced here fail closed: a process tree that cannot be walked ends
 * the run with an error, never with limits that bind one process only.
 *
 * Cost: under gVisor's ptrace platform every system call of init or of the
 * child costs ~25 us, so a trivial test's overhead is counted in system
 * calls; each one made here is needed (tests/bench/README.md). */
#include "executor/init/run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executor/init/forkserver.h"
#include "executor/init/run_internal.h"

#ifndef SAMPLE_FIRST_MS
#define SAMPLE_FIRST_MS 10 /* opening /proc/<pid>/status costs ~1 ms under ptrace */
#endif
#define SAMPLE_EVERY_MS 5
/* The tree walk (procs > 1) costs a few system calls per process
 * (measured inside: 4.3 ms per walk against 0.53 ms for one pread on a
 * node with a load of 22 on 2 cores): every 4th sample (20 ms) in tests;
 * faulting memory in costs ~25 us a page under ptrace, so 20 ms let
 * through ~4 MiB, and the program's own VmRSS is still read every sample.
 * Compilers (seconds of limits, and the host's own CPU count) every 40th
 * (200 ms). */
#define TREE_SAMPLE_EVERY 4
#define TREE_SAMPLE_EVERY_COMPILE 40

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Moves *fd to target, without O_CLOEXEC. */
static int install_fd(int *fd, int target)
{
	if (dup3(*fd, target, 0) < 0)
		return -1;
	close(*fd);
	*fd = target;
	return 0;
}

int init_runner_open(struct init_runner *r, struct gv_err *err)
{
	memset(r, 0, sizeof(*r));
	init_child_env_init();
	r->out_r = r->out_w = r->err_r = r->err_w = -1;
	r->sigfd = r->in_rw = r->in_ro = -1;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		goto fail_errno;
	r->out_r = p[0], r->out_w = p[1];
	if (pipe2(p, O_CLOEXEC) < 0)
		goto fail_errno;
	r->err_r = p[0], r->err_w = p[1];
	if (fcntl(r->out_r, F_SETFL, O_NONBLOCK) < 0 || fcntl(r->err_r, F_SETFL, O_NONBLOCK) < 0)
		goto fail_errno;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		goto fail_errno;
	r->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->sigfd < 0)
		goto fail_errno;
	/* No MFD_ALLOW_SEALING: the program cannot seal its stdin against our
	 * next write. It gets a read-only reopening of it. */
	r->in_rw = memfd_create("gv_stdin", MFD_CLOEXEC);
	if (r->in_rw < 0)
		goto fail_errno;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->in_rw);
	r->in_ro = open(path, O_RDONLY | O_CLOEXEC);
	if (r->in_ro < 0)
		goto fail_errno;
	/* The program's stdout and stderr pipes live at 1 and 2 in init
	 * itself, the only fds of init without O_CLOEXEC: every child inherits
	 * them in place and needs no dup2 for them (two system calls less per
	 * run). Through /proc/1/fd they give the program nothing it does not
	 * have (its own pipes; opening them again is refused). Stdin stays
	 * O_CLOEXEC and dup2-ed per run: a memfd may be reopened for writing
	 * through /proc, and init's fd 0 is the host's command pipe. */
	if (install_fd(&r->out_w, 1) < 0 || install_fd(&r->err_w, 2) < 0)
		goto fail_errno;
	return 0;
fail_errno:
	gv_err_errno(err, "runner setup");
	init_runner_close(r);
	return -1;
}

void init_runner_close(struct init_runner *r)
{
	close_fd(&r->out_r), close_fd(&r->out_w), close_fd(&r->err_r), close_fd(&r->err_w);
	close_fd(&r->sigfd);
	close_fd(&r->in_rw), close_fd(&r->in_ro);
	free(r->out.buf);
	free(r->err.buf);
	r->out.buf = r->err.buf = NULL;
}

int init_runner_input_reset(struct init_runner *r, struct gv_err *err)
{
	if (ftruncate(r->in_rw, 0) < 0)
		return gv_err_errno(err, "truncate stdin");
	return 0;
}

int init_runner_input_append(struct init_runner *r, const char *data, size_t len, uint64_t off,
			     struct gv_err *err)
{
	while (len > 0) {
		ssize_t n = pwrite(r->in_rw, data, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return gv_err_errno(err, "write stdin");
		}
		data += n, len -= (size_t)n, off += (uint64_t)n;
	}
	return 0;
}

/* The child's arguments for spec, prepared before clone (the child may
 * only make raw system calls): program paths, rlimits, the process count. */
static int prepare_child(struct init_runner *r, const struct init_run_spec *spec, struct init_child_args *args,
			 struct init_outcome *o, struct gv_err *err)
{
	const struct init_limits *lim = spec->lim;
	memset(args, 0, sizeof(*args));
	args->r = r;
	args->spec = spec;
	args->report.stage = 0;
	if (init_child_resolve_paths(args, spec->argv[0], err) < 0)
		return -1;
	struct init_child_rlimits rl;
	init_child_rlimits(spec, &rl);
	args->rl_cpu = rl.cpu;
	/* Tests run without RLIMIT_AS: a refused allocation is invisible
	 * from outside (the program reports it its own way: NULL, bad_alloc,
	 * MemoryError), so a program that asks for more than its limit must be
	 * allowed the address space and stopped when its resident memory
	 * reaches the limit (sampling below; measured: gVisor faults in at most
	 * ~200 MB/s under ptrace, so a 5 ms sample lets through ~1 MB). What a
	 * single system call could fault in at once (MAP_POPULATE, a big read)
	 * is bounded by the host memcg, which kills the sandbox (host: MLE).
	 * Compilers keep it (compile_rlimit_as: `#include "/dev/zero"`). */
	args->set_as = lim->rlimit_as && !spec->no_rlimit_as;
	o->as_limit_kb = args->set_as ? init_as_limit_kb(lim) : 0;
	rlim_t as = (rlim_t)init_as_limit_kb(lim) * 1024;
	args->rl_as = (struct rlimit){ as, as };
	r->reaped_us = 0;
	args->nproc = rl.nproc;
	if (lseek(r->in_ro, 0, SEEK_SET) < 0)
		return gv_err_errno(err, "rewind stdin");
	return 0;
}

/* Clones the child; *pid is the program once it has exec'd. A child that
 * failed before execve is an error of init (everything killed), but for
 * an exec refused for want of memory under RLIMIT_AS, which is the
 * program's (o->exec_enomem). */
static int spawn_child(struct init_runner *r, const struct init_run_spec *spec, struct init_child_args *args,
		       pid_t *pid, struct init_outcome *o, struct gv_err *err)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	if (spec->fork)
		return init_forkserver_spawn(spec->fork, pid, err);
	*pid = clone(init_child_main, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, args);
	if (spec->stream) {
		/* The program holds the read end now; ours would keep its
		 * stdin open after the stream closed the write end. */
		close(spec->stream->stdin_fd);
	}
	if (*pid < 0)
		return gv_err_errno(err, "clone");
	/* CLONE_VFORK: the child has exec'd or died; a report is already here. */
	struct init_child_report rep = { args->report.stage, args->report.err };
	if (rep.stage == 0)
		return 0;
	if (rep.stage == INIT_STAGE_EXEC && args->set_as && (rep.err == ENOMEM || rep.err == E2BIG)) {
		o->exec_enomem = 1;
		return 0;
	}
	static const char *const stages[INIT_STAGE_COUNT] = {
		[0] = "?",
		[INIT_STAGE_SETUP] = "setup",
		[INIT_STAGE_RLIMIT] = "rlimit",
		[INIT_STAGE_SETUID] = "setuid",
		[INIT_STAGE_SECCOMP] = "seccomp",
		[INIT_STAGE_EXEC] = "execve",
	};
	int e = rep.err;
	if (init_kill_all(r, err) < 0)
		return -1;
	int stage = rep.stage > 0 && rep.stage < INIT_STAGE_COUNT ? rep.stage : 0;
	return gv_err_set(err, e, "child %s of %s: %s", stages[stage], spec->argv[0], strerror(e));
}

/* One run while its program lives. */
struct watch {
	pid_t pid;
	uint64_t start, deadline, next_sample;
	int done, killed;
	int status;       /* the program's, once done */
	struct rusage ru; /* the program's, once done */
	int memfd, cpufd, procfd;
	/* procs:1 leaves no room for a second process (the program policy
	 * refuses fork): the program's own figures are the tree's. Otherwise
	 * the whole tree is sampled. */
	int tree;
	unsigned tree_every, tree_tick;
	struct init_idle idle;
	uint64_t out_cap, err_cap;
};

/* Ends the run for the reason *why (set to 1) points to. */
static void watch_kill(struct watch *w, int *why)
{
	*why = 1;
	kill(w->pid, SIGKILL);
	w->killed = 1;
}

static void watch_close(struct watch *w)
{
	if (w->memfd >= 0)
		close(w->memfd);
	if (w->cpufd >= 0)
		close(w->cpufd);
	if (w->procfd >= 0)
		close(w->procfd);
	w->memfd = w->cpufd = w->procfd = -1;
}

/* The CPU time of the run so far (-1: unknown) and whether some process
 * of it is runnable; *walked: the tree was walked for it. */
static int sample_cpu(struct init_runner *r, struct watch *w, struct init_outcome *o, int64_t *cpu_now,
		      int *runnable, int *walked, struct gv_err *err)
{
	*cpu_now = -1;
	*runnable = *walked = 0;
	if (w->tree && ++w->tree_tick % w->tree_every == 0) {
		struct init_tree_sample ts;
		if (init_sample_tree(w->procfd, r->spare_pid, &ts) != 0) {
			/* Fail closed: without the walk the limits
			 * would bind the first process only. */
			return gv_err_errno(err, "walk the process tree");
		}
		*walked = 1;
		*cpu_now = (int64_t)(ts.cpu_ms + r->reaped_us / 1000u);
		*runnable = ts.runnable;
		if (ts.rss_kb > o->tree_rss_kb)
			o->tree_rss_kb = ts.rss_kb;
		return 0;
	}
	/* RLIMIT_CPU works in whole seconds and a program may
	 * ignore SIGXCPU: the CPU limit itself is enforced here,
	 * to within a sample period. */
	if (w->cpufd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)w->pid);
		w->cpufd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (w->cpufd >= 0)
		*cpu_now = init_sample_cpu_ms(w->cpufd, runnable);
	return 0;
}

/* One sample: memory, CPU and idle time against their limits. */
static int watch_sample(struct init_runner *r, const struct init_run_spec *spec, struct watch *w,
			struct init_outcome *o, uint64_t now, struct gv_err *err)
{
	const struct init_limits *lim = spec->lim;
	if (w->memfd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/status", (int)w->pid);
		w->memfd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (w->memfd >= 0)
		init_sample_memory(w->memfd, &o->vmpeak_kb, &o->hwm_kb);
	int64_t cpu_now;
	int runnable, walked;
	if (sample_cpu(r, w, o, &cpu_now, &runnable, &walked, err) < 0)
		return -1;
	if (!w->killed && (o->hwm_kb >= lim->memory_kb || o->tree_rss_kb >= lim->memory_kb))
		watch_kill(w, &o->killed_memory);
	if (!w->killed && cpu_now >= 0 && (uint64_t)cpu_now >= lim->cpu_ms)
		watch_kill(w, &o->killed_cpu);
	/* Idle: time in which no process of the run was runnable
	 * (state R) and the CPU time did not move over a window of
	 * at least a clock tick (10 ms: two samples, or one tree
	 * sample). Not wall minus CPU: a program starved of a host
	 * CPU is runnable, not idle (measured: with a load of 22 on
	 * 2 cores gVisor counted only part of a spin's wall time as
	 * CPU time); the CPU window keeps a program whose main
	 * thread sleeps while others work out of it. A run that
	 * may start processes is judged idle on its tree walks
	 * alone (20 ms apart): the samples between them see the
	 * first process only, whose main thread may wait on
	 * threads or children that work (the JVM's launcher). */
	if (!w->tree || walked)
		init_idle_sample(&w->idle, cpu_now, runnable, now, w->tree ? 1 : 2);
	o->idle_ms = w->idle.idle_ms;
	if (!w->killed && spec->idle_is_tle && lim->idle_ms && o->idle_ms >= lim->idle_ms)
		watch_kill(w, &o->killed_idle);
	w->next_sample = now + (lim->sample_ms ? lim->sample_ms : SAMPLE_EVERY_MS) * 1000000ull;
	return 0;
}

/* Reaps what exited after a SIGCHLD: the program (the run is done) or an
 * orphan of an earlier process, its CPU time counted either way. */
static void watch_reap(struct init_runner *r, struct watch *w)
{
	init_flush_sigfd(r->sigfd);
	for (;;) {
		int st;
		struct rusage rus;
		pid_t p = wait4(-1, &st, WNOHANG, &rus);
		if (p > 0 && p == r->spare_pid) {
			/* The fork server's template ended: not the run's. */
			r->spare_pid = 0;
			r->spare_lost = 1;
			continue;
		}
		if (p > 0)
			r->reaped_us += init_rusage_us(&rus);
		if (p == w->pid) {
			w->status = st;
			w->ru = rus;
			w->done = 1;
		} else if (p > 0) {
			continue; /* an orphan of an earlier process */
		} else if (p < 0 && errno == EINTR) {
			continue;
		}
		if (p <= 0 || w->done)
			break;
	}
}

/* The forked program's end, as its parent the template reaped it: its
 * status and rusage, the program's as wait4 would give them to init. */
static int watch_forked(struct init_runner *r, struct init_forkserver *fs, struct watch *w, struct gv_err *err)
{
	int ended = init_forkserver_take(fs, err);
	if (ended < 0)
		return -1;
	if (ended) {
		w->status = fs->exit.status;
		memset(&w->ru, 0, sizeof(w->ru));
		w->ru.ru_maxrss = (long)fs->exit.maxrss_kb;
		r->reaped_us += fs->exit.cpu_us;
		w->done = 1;
	}
	return 0;
}

/* Notes that len more kept bytes of stream ('o' or 'e') arrived. */
static void order_note(struct init_runner *r, char stream, uint64_t len)
{
	if (len == 0)
		return;
	if (r->nseg > 0 && r->seg[r->nseg - 1].stream == stream) {
		r->seg[r->nseg - 1].len += len;
		return;
	}
	if (r->nseg == INIT_ORDER_SEGS)
		return; /* the rest of each stream comes after the segments */
	r->seg[r->nseg].stream = stream;
	r->seg[r->nseg].len = len;
	r->nseg++;
}

/* Drains the stdout (stream 'o') or stderr ('e') pipe into its capture,
 * noting the order of what it kept. */
static int drain_noted(struct init_runner *r, char stream, uint64_t cap, char *scratch, struct gv_err *err)
{
	struct init_capture *c = stream == 'o' ? &r->out : &r->err;
	size_t before = c->len;
	if (init_capture_drain(stream == 'o' ? r->out_r : r->err_r, c, cap, scratch, err) < 0)
		return -1;
	order_note(r, stream, c->len - before);
	return 0;
}

/* The segments as the record's `order`, when both streams kept bytes. */
static void order_format(const struct init_runner *r, struct init_outcome *o)
{
	o->order[0] = '\0';
	if (r->out.len == 0 || r->err.len == 0)
		return;
	size_t used = 0;
	for (size_t i = 0; i < r->nseg; i++) {
		int n = snprintf(o->order + used, sizeof(o->order) - used, "%s%c%llu", i ? "," : "", r->seg[i].stream,
				 (unsigned long long)r->seg[i].len);
		if (n < 0 || (size_t)n >= sizeof(o->order) - used) {
			o->order[0] = '\0'; /* cannot happen: INIT_ORDER_SEGS is sized for it */
			return;
		}
		used += (size_t)n;
	}
}

/* Waits until the next sample or the deadline for output, the stream or
 * SIGCHLD, and moves what came: output into its capture (or the stream),
 * over the output cap ends the run. */
static int watch_io(struct init_runner *r, const struct init_run_spec *spec, struct watch *w,
		    struct init_outcome *o, uint64_t now, char *scratch, struct gv_err *err)
{
	const struct init_stream *strm = spec->stream;
	uint64_t until = w->next_sample < w->deadline || w->killed ? w->next_sample : w->deadline;
	uint64_t wait_ns = until > now ? until - now : 0;
	struct timespec ts = { (time_t)(wait_ns / 1000000000ull), (long)(wait_ns % 1000000000ull) };
	struct pollfd pf[3 + INIT_STREAM_MAX_FDS] = {
		{ .fd = r->sigfd, .events = POLLIN },
		/* A stream without room: leave stdout in the pipe. */
		{ .fd = strm && strm->room(strm->ctx) == 0 ? -1 : r->out_r, .events = POLLIN },
		{ .fd = r->err_r, .events = POLLIN },
	};
	int nst = strm ? strm->prepare(strm->ctx, pf + 3) : 0;
	if (spec->fork) {
		/* A forked program's end comes from its parent, the template. */
		pf[3] = (struct pollfd){ .fd = init_forkserver_fd(spec->fork), .events = POLLIN };
		nst = 1;
	}
	int pr = ppoll(pf, 3 + (nfds_t)nst, &ts, NULL);
	if (pr < 0 && errno != EINTR)
		return gv_err_errno(err, "ppoll");
	if (strm && strm->pump(strm->ctx, pf + 3, nst, err) < 0)
		return -1;
	if (pr <= 0)
		return 0;
	if (spec->fork && pf[3].revents && watch_forked(r, spec->fork, w, err) < 0)
		return -1;
	if ((pf[1].revents & POLLIN) && !strm && drain_noted(r, 'o', w->out_cap, scratch, err) < 0)
		return -1;
	if ((pf[1].revents & POLLIN) && strm &&
	    init_capture_stream_drain(r->out_r, &r->out, strm, 0, scratch, err) < 0)
		return -1;
	if ((pf[2].revents & POLLIN) && drain_noted(r, 'e', w->err_cap, scratch, err) < 0)
		return -1;
	uint64_t over = spec->combined_cap ? r->out.total + r->err.total : r->out.total;
	if (!w->killed && over > w->out_cap)
		watch_kill(w, &o->killed_output);
	if (pf[0].revents & POLLIN)
		watch_reap(r, w);
	return 0;
}

/* Watches the run until the program has exited and been reaped: wall
 * clock, samples, output. */
static int watch_run(struct init_runner *r, const struct init_run_spec *spec, struct watch *w,
		     struct init_outcome *o, char *scratch, struct gv_err *err)
{
	w->tree = spec->lim->procs > 1;
	w->tree_every = spec->compile_phase ? TREE_SAMPLE_EVERY_COMPILE : TREE_SAMPLE_EVERY;
	w->tree_tick = w->tree_every - 1; /* the first sample walks the tree */
	init_idle_start(&w->idle);
	if (w->tree) {
		w->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (w->procfd < 0) {
			/* Fail closed: without it the limits would bind one process only. */
			return gv_err_errno(err, "open /proc");
		}
	}
	w->next_sample = w->start + SAMPLE_FIRST_MS * 1000000ull;
	/* A streamed run's output_bytes 0: no cap on what it streams
	 * (kernels, bounded by the host's back-pressure and the wall). */
	w->out_cap = spec->stream && !spec->lim->output_bytes ? UINT64_MAX : spec->lim->output_bytes;
	w->err_cap = spec->combined_cap ? spec->lim->output_bytes : spec->lim->stderr_bytes;
	while (!w->done) {
		uint64_t now = now_ns();
		if (!w->killed && now >= w->deadline)
			watch_kill(w, &o->killed_wall);
		if (now >= w->next_sample && watch_sample(r, spec, w, o, now, err) < 0)
			return -1;
		if (watch_io(r, spec, w, o, now, scratch, err) < 0)
			return -1;
	}
	return 0;
}

/* The program is reaped: kills and reaps what it left, takes what is left
 * in the pipes and fills the rest of o. */
static int finish_run(struct init_runner *r, const struct init_run_spec *spec, const struct watch *w,
		      struct init_outcome *o, char *scratch, struct gv_err *err)
{
	const struct init_stream *strm = spec->stream;
	if (init_kill_all(r, err) < 0)
		return -1;
	/* Everything that could write is dead: take what is left in the pipes. */
	if ((strm ? init_capture_stream_drain(r->out_r, &r->out, strm, 1, scratch, err)
		  : drain_noted(r, 'o', w->out_cap, scratch, err)) < 0 ||
	    drain_noted(r, 'e', w->err_cap, scratch, err) < 0)
		return -1;
	order_format(r, o);
	uint64_t over = spec->combined_cap ? r->out.total + r->err.total : r->out.total;
	if (over > w->out_cap)
		o->killed_output = 1;
	o->stdout_bytes = r->out.total;
	o->stderr_bytes = r->err.total;
	/* Every process of the run is reaped now, by init or by a process
	 * init reaped: reaped_us holds the whole tree's CPU time (the
	 * program's wait4 rusage included). */
	o->cpu_ms = r->reaped_us / 1000u;
	o->maxrss_kb = w->ru.ru_maxrss > 0 ? (uint64_t)w->ru.ru_maxrss : 0;
	if (WIFEXITED(w->status)) {
		o->exited = 1;
		o->exit_code = WEXITSTATUS(w->status);
	} else {
		o->exited = 0;
		o->term_signal = WTERMSIG(w->status);
	}
	return 0;
}

/* A forked run (spec->fork) counts only if its process said it was set
 * up ('R', sent after its seccomp filter and before any submission code)
 * or if a limit ended it first (a set-up slowed down by the node is the
 * program's time, as an execve is). A set-up that failed, or a template
 * that ended meanwhile (whose last words may be in this run's output), is
 * an error of init: never a result of a run with less than its sandbox. */
static int check_forked(struct init_runner *r, const struct init_run_spec *spec, struct init_outcome *o,
			struct gv_err *err)
{
	int ready = spec->fork->ready_seen, failed_errno = spec->fork->failed_seen ? spec->fork->failed_errno : 0;
	if (r->spare_lost)
		return gv_err_set(err, GV_ESANDBOX, "fork server: the template ended during the run");
	if (failed_errno)
		return gv_err_set(err, failed_errno, "fork server: set-up (%s) of %s: %s", spec->fork->failed_step,
				  spec->argv[0], strerror(failed_errno));
	int limited = o->killed_output || o->killed_memory || o->killed_wall || o->killed_cpu || o->killed_idle;
	if (!ready && !limited)
		return gv_err_set(err, GV_ESANDBOX, "fork server: the process of %s ended before its set-up", spec->argv[0]);
	return 0;
}

int init_runner_run(struct init_runner *r, const struct init_run_spec *spec,
		    struct init_outcome *o, struct gv_err *err)
{
	static struct init_child_args args;
	static char scratch[INIT_READ_CHUNK];

	memset(o, 0, sizeof(*o));
	r->out.len = r->err.len = 0;
	r->out.total = r->err.total = 0;
	r->nseg = 0;
	if (prepare_child(r, spec, &args, o, err) < 0)
		return -1;
	struct watch w;
	memset(&w, 0, sizeof(w));
	w.memfd = w.cpufd = w.procfd = -1;
	w.start = now_ns();
	w.deadline = w.start + spec->lim->wall_ms * 1000000ull;
	if (spawn_child(r, spec, &args, &w.pid, o, err) < 0)
		return -1;
	if (watch_run(r, spec, &w, o, scratch, err) < 0) {
		watch_close(&w);
		struct gv_err ignored;
		if (init_kill_all(r, &ignored) < 0) {
			/* the first error is the one reported */
		}
		return -1;
	}
	uint64_t wall_ns = now_ns() - w.start;
	o->wall_ms = wall_ns / 1000000ull;
	o->wall_us = wall_ns / 1000ull;
	watch_close(&w);
	if (finish_run(r, spec, &w, o, scratch, err) < 0)
		return -1;
	return spec->fork ? check_forked(r, spec, o, err) : 0;
}
