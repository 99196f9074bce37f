/* The runner of gavel-init: one command under limits, measured.
 *
 * Security argument. The child is created with clone(CLONE_VM|CLONE_VFORK)
 * (what posix_spawn does: no address-space copy, which is costly under
 * gVisor's ptrace platform) and, before execve, only makes raw system calls:
 * new session, the read-only stdin onto fd 0, rlimits, uid drop, then the
 * seccomp filter compiled once by the parent (no_new_privs, RLIMIT_CORE 0,
 * no groups and an empty bounding set it inherits from init, which set them
 * once at start). Every fd of init is O_CLOEXEC but 1 and 2, which are the
 * program's stdout and stderr pipes, so the program inherits exactly fds 0,
 * 1, 2. The
 * environment is built from scratch. Leftover processes are killed with
 * kill(-1, SIGKILL), from which init (PID 1) is exempt, repeated until
 * wait4 says no child is left: orphans re-parent to init, so ECHILD means
 * nothing of the run survives.
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK 65536
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
#define PATH_CANDIDATES 3

/* The program's environment: these three, plus NVIDIA_VISIBLE_DEVICES
 * when the executor assigned GPUs to the job (it is the only variable the
 * OCI spec adds to init's own constant environment; it is passed on only
 * when it is digits and commas). Filled once by init_runner_open, before
 * any child exists. */
static char gpu_env[64];
static char *clean_envp[] = {
	"PATH=/usr/bin:/bin",
	"LANG=C.UTF-8",
	"HOME=/tmp",
	NULL,
	NULL,
};

static void gpu_env_init(void)
{
	const char *v = getenv("NVIDIA_VISIBLE_DEVICES");
	size_t n = v ? strlen(v) : 0;
	if (n == 0 || n >= sizeof(gpu_env) - sizeof("NVIDIA_VISIBLE_DEVICES=") ||
	    strspn(v, "0123456789,") != n)
		return;
	snprintf(gpu_env, sizeof(gpu_env), "NVIDIA_VISIBLE_DEVICES=%s", v);
	clean_envp[3] = gpu_env;
}

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
	gpu_env_init();
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

/* ---- the child ---------------------------------------------------------- */

/* What failed in the child before (or at) execve. The child shares our
 * memory until execve (CLONE_VM) and CLONE_VFORK holds us until it has
 * exec'd or exited, so it leaves its report here rather than in a pipe
 * (what posix_spawn does too): no pipe read after every spawn. */
struct child_report {
	int stage;   /* what failed; 0: nothing */
	int err;     /* errno */
};

struct child_args {
	const struct init_runner *r;
	const struct init_run_spec *spec;
	char paths[PATH_CANDIDATES][4096];
	int npaths;
	struct rlimit rl_cpu, rl_as;
	int set_as;  /* RLIMIT_AS = rl_as */
	uint64_t nproc; /* RLIMIT_NPROC */
	volatile struct child_report report;
};

enum { STAGE_SETUP = 1, STAGE_RLIMIT, STAGE_SETUID, STAGE_SECCOMP, STAGE_EXEC };

static _Noreturn void child_fail(struct child_args *a, int stage, int e)
{
	a->report.err = e;
	a->report.stage = stage;
	_exit(127);
}

static int set_limit(int res, uint64_t v)
{
	struct rlimit rl = { (rlim_t)v, (rlim_t)v };
	return setrlimit(res, &rl);
}

static int child_main(void *arg)
{
	struct child_args *a = arg;
	const struct init_limits *lim = a->spec->lim;
	sigset_t none;
	sigemptyset(&none);
	/* Every disposition is already the default (init blocks signals, it
	 * ignores none): unblocking is all that is left to do. */
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || setsid() < 0)
		child_fail(a, STAGE_SETUP, errno);
	/* Stdout and stderr are already fds 1 and 2 (init_runner_open). */
	if (dup2(a->spec->stream ? a->spec->stream->stdin_fd : a->r->in_ro, 0) < 0)
		child_fail(a, STAGE_SETUP, errno);
	if (setrlimit(RLIMIT_CPU, &a->rl_cpu) < 0 ||
	    set_limit(RLIMIT_NOFILE, lim->open_files) < 0 ||
	    set_limit(RLIMIT_NPROC, a->nproc) < 0 ||
	    set_limit(RLIMIT_FSIZE, lim->fsize_kb * 1024) < 0 ||
	    (lim->stack_kb && set_limit(RLIMIT_STACK, lim->stack_kb * 1024) < 0) ||
	    (a->set_as && setrlimit(RLIMIT_AS, &a->rl_as) < 0))
		child_fail(a, STAGE_RLIMIT, errno);
	/* Privilege drop in the fixed order: gid, uid, then verify. Raw
	 * syscalls: they must change this task only, not every thread of the
	 * address space as glibc's setxid broadcast would. */
	if (a->spec->drop_to_sandbox_uid) {
		/* The bounding set is already empty and the supplementary groups
		 * too: init emptied its own (init_empty_bounding_set,
		 * init_drop_groups) and clone copied them here. */
		if (syscall(SYS_setresgid, INIT_SANDBOX_GID, INIT_SANDBOX_GID, INIT_SANDBOX_GID) < 0 ||
		    syscall(SYS_setresuid, INIT_SANDBOX_UID, INIT_SANDBOX_UID, INIT_SANDBOX_UID) < 0)
			child_fail(a, STAGE_SETUID, errno);
		uid_t ru, eu, su;
		gid_t rg, eg, sg;
		if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 ||
		    ru == 0 || eu == 0 || su == 0 || rg == 0 || eg == 0 || sg == 0)
			child_fail(a, STAGE_SETUID, EPERM);
	}
	int rc = init_seccomp_load(a->spec->bpf);
	if (rc < 0)
		child_fail(a, STAGE_SECCOMP, -rc);
	int e = ENOENT;
	for (int i = 0; i < a->npaths; i++) {
		execve(a->paths[i], a->spec->argv, clean_envp);
		if (errno != ENOENT || i == 0)
			e = errno;
		if (errno != ENOENT && errno != ENOTDIR)
			break;
	}
	child_fail(a, STAGE_EXEC, e);
}

/* Security argument: with an empty bounding set nothing a child of init
 * execs can ever hold a capability, whatever its uid. Done once in init
 * (which needs CAP_SETPCAP for it) rather than in every child: init never
 * execs, so its effective and permitted sets, which it still needs, are
 * untouched; every child inherits the empty set through clone, and a
 * bounding set can never grow again. 63 covers every capability a kernel
 * or gVisor knows; EINVAL marks those past the last. Verified after. */
int init_empty_bounding_set(struct gv_err *err)
{
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return gv_err_errno(err, "PR_CAPBSET_DROP %d", cap);
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1)
			return gv_err_set(err, GV_ESANDBOX, "capability %d still in the bounding set", cap);
	return 0;
}

/* Once in init rather than in every child (one system call less per run):
 * children inherit the empty list, and once they have dropped to 65534
 * they hold no CAP_SETGID to get any group back. Verified after. */
int init_drop_groups(struct gv_err *err)
{
	if (syscall(SYS_setgroups, 0, NULL) < 0)
		return gv_err_errno(err, "setgroups(0)");
	int n = getgroups(0, NULL);
	if (n != 0)
		return n < 0 ? gv_err_errno(err, "getgroups")
			     : gv_err_set(err, GV_ESANDBOX, "%d supplementary groups left", n);
	return 0;
}

static int resolve_paths(struct child_args *a, const char *name, struct gv_err *err)
{
	static const char *const dirs[] = { "/usr/bin", "/bin" };
	size_t n = strlen(name);
	if (n == 0 || n >= sizeof(a->paths[0]) - 16)
		return gv_err_set(err, GV_EINVAL, "bad program name");
	if (strchr(name, '/')) {
		memcpy(a->paths[0], name, n + 1);
		a->npaths = 1;
		return 0;
	}
	a->npaths = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		snprintf(a->paths[a->npaths++], sizeof(a->paths[0]), "%s/%s", dirs[i], name);
	return 0;
}

/* ---- the parent --------------------------------------------------------- */

static int capture_add(struct init_capture *c, const char *data, size_t n, uint64_t cap)
{
	c->total += n;
	size_t room = c->len < cap ? (size_t)(cap - c->len) : 0;
	size_t keep = n < room ? n : room;
	if (keep == 0)
		return 0;
	if (c->len + keep > c->alloc) {
		size_t want = c->alloc ? c->alloc : 65536;
		while (want < c->len + keep)
			want *= 2;
		if (want > cap)
			want = (size_t)cap;
		char *nb = realloc(c->buf, want);
		if (!nb)
			return -1;
		c->buf = nb;
		c->alloc = want;
	}
	memcpy(c->buf + c->len, data, keep);
	c->len += keep;
	return 0;
}

/* Reads what is available on fd into c; returns 0 (EAGAIN), or -1. */
static int drain(int fd, struct init_capture *c, uint64_t cap, char *scratch, struct gv_err *err)
{
	for (;;) {
		ssize_t n = read(fd, scratch, READ_CHUNK);
		if (n > 0) {
			if (capture_add(c, scratch, (size_t)n, cap) < 0)
				return gv_err_set(err, ENOMEM, "capture: out of memory");
			if (n < READ_CHUNK)
				return 0;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n == 0)
			return 0; /* cannot happen: we hold the write end */
		return gv_err_errno(err, "read capture pipe");
	}
}

/* Interactive runs: moves what is in the stdout pipe to the stream, at most
 * what it has room for (final: everything, flushing the stream as often as
 * needed). Counts every byte in c->total for the output cap. */
static int stream_drain(int fd, struct init_capture *c, const struct init_stream *st, int final,
			char *scratch, struct gv_err *err)
{
	for (;;) {
		size_t room = st->room(st->ctx);
		if (room == 0) {
			if (!final)
				return 0;
			if (st->flush(st->ctx, err) < 0)
				return -1;
			continue;
		}
		ssize_t n = read(fd, scratch, room < READ_CHUNK ? room : READ_CHUNK);
		if (n > 0) {
			c->total += (uint64_t)n;
			if (st->out(st->ctx, scratch, (size_t)n, err) < 0)
				return -1;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return final ? st->flush(st->ctx, err) : 0;
		if (n == 0)
			return 0; /* cannot happen: we hold the write end */
		return gv_err_errno(err, "read stdout pipe");
	}
}

static uint64_t rusage_us(const struct rusage *ru)
{
	return ((uint64_t)ru->ru_utime.tv_sec + (uint64_t)ru->ru_stime.tv_sec) * 1000000ull +
	       (uint64_t)ru->ru_utime.tv_usec + (uint64_t)ru->ru_stime.tv_usec;
}

/* Empties the signalfd. SIGCHLD is a standard signal, pending at most once:
 * a read that did not fill the buffer took everything, no second read. */
static void flush_sigfd(int sigfd)
{
	struct signalfd_siginfo si[8];
	while (read(sigfd, si, sizeof(si)) == (ssize_t)sizeof(si))
		;
}

int init_kill_all(struct init_runner *r, struct gv_err *err)
{
	/* The common case first: the program left nothing. Every process
	 * inside descends from init and orphans re-parent to it, so ECHILD
	 * from wait4 means none is left, alive or zombie, and none can appear
	 * (only init spawns): no kill(-1), no signalfd read. __WALL: children
	 * whatever their exit signal (a child with another than SIGCHLD is
	 * invisible to a plain wait4, which would say ECHILD). */
	struct rusage ru;
	for (;;) {
		pid_t p = wait4(-1, NULL, WNOHANG | __WALL, &ru);
		if (p > 0)
			r->reaped_us += rusage_us(&ru);
		if (p > 0 || (p < 0 && errno == EINTR))
			continue;
		if (p < 0 && errno == ECHILD)
			return 0;
		if (p < 0)
			return gv_err_errno(err, "wait4");
		break;
	}
	for (int round = 0;; round++) {
		if (kill(-1, SIGKILL) < 0 && errno != ESRCH)
			return gv_err_errno(err, "kill(-1)");
		for (;;) {
			pid_t p = wait4(-1, NULL, WNOHANG | __WALL, &ru);
			if (p > 0) {
				/* An orphan (or a process the program started): its
				 * CPU time, with that of what it reaped, is the run's. */
				r->reaped_us += rusage_us(&ru);
				continue;
			}
			if (p < 0 && errno == EINTR)
				continue;
			if (p < 0 && errno == ECHILD) {
				flush_sigfd(r->sigfd);
				return 0;
			}
			if (p < 0)
				return gv_err_errno(err, "wait4");
			break; /* children left, none exited yet */
		}
		if (round > 2000)
			return gv_err_set(err, GV_ESANDBOX, "processes survive kill(-1, SIGKILL)");
		struct pollfd pf = { .fd = r->sigfd, .events = POLLIN };
		if (poll(&pf, 1, round < 10 ? 1 : 10) < 0 && errno != EINTR)
			return gv_err_errno(err, "poll");
		flush_sigfd(r->sigfd);
	}
}

static void take_max(const char *buf, const char *key, size_t klen, uint64_t *max)
{
	const char *p = strstr(buf, key);
	if (!p)
		return;
	uint64_t v = strtoull(p + klen, NULL, 10);
	if (v > *max)
		*max = v;
}

static uint64_t clock_ticks(void)
{
	static uint64_t ticks;
	if (!ticks) {
		long t = sysconf(_SC_CLK_TCK);
		ticks = t > 0 ? (uint64_t)t : 100;
	}
	return ticks;
}

/* One /proc/<pid>/stat, the fields after the last ')' (the comm field may
 * hold spaces and parentheses). CPU times in clock ticks, rss in pages. */
struct proc_stat {
	char state;  /* R running or runnable, S sleeping, D, Z, T... */
	unsigned long long utime, stime, cutime, cstime, rss;
};

static int parse_stat(char *buf, struct proc_stat *ps)
{
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime(14) stime cutime cstime priority nice num_threads
	 * itrealvalue starttime vsize rss(24). */
	if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu %*d %*d %*d %*d %*u %*u %llu",
		   &ps->state, &ps->utime, &ps->stime, &ps->cutime, &ps->cstime, &ps->rss) != 6)
		return -1;
	return 0;
}

/* CPU time (ms) used so far by the process (all its threads); -1 when
 * unreadable. *runnable: its state is R. */
static int64_t sample_cpu_ms(int fd, int *runnable)
{
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	struct proc_stat ps;
	if (parse_stat(buf, &ps) < 0)
		return -1;
	*runnable = ps.state == 'R';
	return (int64_t)((ps.utime + ps.stime) * 1000u / clock_ticks());
}

/* The whole process tree of a run that may start processes (procs > 1).
 * Every process inside but init (pid 1) belongs to the run: only init
 * spawns, and init_kill_all leaves none between runs. gVisor 20221219
 * accounts like Linux (measured: a node parent's wait4 rusage included
 * the python grandchild its sh child reaped), so at any instant a
 * process's CPU time sits in exactly one place: its own utime + stime
 * while it exists (zombies too), its reaper's cutime + cstime once reaped
 * by a process of the run, or runner->reaped_us once reaped by init. The
 * sum of those is the tree's CPU time, reaped or not, orphans included.
 * Memory is the sum of the resident sizes: pages shared between processes
 * (copy-on-write after fork) count once per process, the stricter reading.
 * Cost per sample: lseek + getdents64 on /proc, then open, read, close per
 * process (~25 us each under ptrace). */
struct tree_sample {
	uint64_t cpu_ms;  /* of the processes alive now, reaped children included */
	uint64_t rss_kb;
	int procs;
	int runnable;     /* some process is in state R */
};

static int sample_tree(int procfd, struct tree_sample *t)
{
	static char dents[16384];
	memset(t, 0, sizeof(*t));
	if (lseek(procfd, 0, SEEK_SET) < 0)
		return -1;
	uint64_t ticks = 0, pages = 0;
	for (;;) {
		long n = syscall(SYS_getdents64, procfd, dents, sizeof(dents));
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; } *d =
				(void *)(dents + off);
			off += d->reclen;
			const char *name = d->name;
			if (name[0] < '1' || name[0] > '9' || strspn(name, "0123456789") != strlen(name) ||
			    strcmp(name, "1") == 0 || strlen(name) > 10)
				continue;
			char path[32], buf[1024];
			snprintf(path, sizeof(path), "%s/stat", name);
			int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue; /* gone meanwhile: its time is with its reaper */
			ssize_t got = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			struct proc_stat ps;
			if (got <= 0)
				continue;
			buf[got] = '\0';
			if (parse_stat(buf, &ps) < 0)
				continue;
			ticks += ps.utime + ps.stime + ps.cutime + ps.cstime;
			pages += ps.rss;
			t->procs++;
			if (ps.state == 'R')
				t->runnable = 1;
		}
	}
	static uint64_t page_kb;
	if (!page_kb)
		page_kb = sysconf(_SC_PAGESIZE) > 0 ? (uint64_t)sysconf(_SC_PAGESIZE) / 1024 : 4;
	t->cpu_ms = ticks * 1000u / clock_ticks();
	t->rss_kb = pages * page_kb;
	return 0;
}

/* Peak address space and resident size (kB) from /proc/<pid>/status. Linux
 * has VmPeak/VmHWM; gVisor 20221219 only VmSize/VmRSS, whose maxima over
 * the samples stand in for them. */
static void sample_memory(int fd, uint64_t *vmpeak, uint64_t *hwm)
{
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	take_max(buf, "\nVmPeak:", 8, vmpeak);
	take_max(buf, "\nVmSize:", 8, vmpeak);
	take_max(buf, "\nVmHWM:", 7, hwm);
	take_max(buf, "\nVmRSS:", 7, hwm);
}

int init_runner_run(struct init_runner *r, const struct init_run_spec *spec,
		    struct init_outcome *o, struct gv_err *err)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	static struct child_args args;
	static char scratch[READ_CHUNK];
	const struct init_limits *lim = spec->lim;

	memset(o, 0, sizeof(*o));
	r->out.len = r->err.len = 0;
	r->out.total = r->err.total = 0;
	memset(&args, 0, sizeof(args));
	args.r = r;
	args.spec = spec;
	args.report.stage = 0;
	if (resolve_paths(&args, spec->argv[0], err) < 0)
		return -1;
	rlim_t cpu_s = (rlim_t)((lim->cpu_ms + 999) / 1000) + 1;
	args.rl_cpu = (struct rlimit){ cpu_s, cpu_s + 1 };
	/* Tests run without RLIMIT_AS: a refused allocation is invisible
	 * from outside (the program reports it its own way: NULL, bad_alloc,
	 * MemoryError), so a program that asks for more than its limit must be
	 * allowed the address space and stopped when its resident memory
	 * reaches the limit (sampling below; measured: gVisor faults in at most
	 * ~200 MB/s under ptrace, so a 5 ms sample lets through ~1 MB). What a
	 * single system call could fault in at once (MAP_POPULATE, a big read)
	 * is bounded by the host memcg, which kills the sandbox (host: MLE).
	 * Compilers keep it (compile_rlimit_as: `#include "/dev/zero"`). */
	args.set_as = lim->rlimit_as && !spec->no_rlimit_as;
	o->as_limit_kb = args.set_as ? init_as_limit_kb(lim) : 0;
	rlim_t as = (rlim_t)init_as_limit_kb(lim) * 1024;
	args.rl_as = (struct rlimit){ as, as };
	r->reaped_us = 0;
	args.nproc = spec->single_process && lim->procs < INIT_SINGLE_PROCESS_TASKS ? INIT_SINGLE_PROCESS_TASKS
										   : lim->procs;
	if (lseek(r->in_ro, 0, SEEK_SET) < 0)
		return gv_err_errno(err, "rewind stdin");

	uint64_t start = now_ns();
	uint64_t deadline = start + lim->wall_ms * 1000000ull;
	const struct init_stream *strm = spec->stream;
	pid_t pid = clone(child_main, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
	if (strm) {
		/* The program holds the read end now; ours would keep its
		 * stdin open after the stream closed the write end. */
		close(strm->stdin_fd);
	}
	if (pid < 0)
		return gv_err_errno(err, "clone");
	/* CLONE_VFORK: the child has exec'd or died; a report is already here. */
	struct child_report rep = { args.report.stage, args.report.err };
	if (rep.stage != 0) {
		if (rep.stage == STAGE_EXEC && args.set_as &&
		    (rep.err == ENOMEM || rep.err == E2BIG)) {
			o->exec_enomem = 1;
		} else {
			static const char *const stages[] = { "?", "setup", "rlimit", "setuid", "seccomp", "execve" };
			int e = rep.err;
			if (init_kill_all(r, err) < 0)
				return -1;
			return gv_err_set(err, e, "child %s of %s: %s",
					  stages[rep.stage >= 1 && rep.stage <= 5 ? rep.stage : 0],
					  spec->argv[0], strerror(e));
		}
	}

	int status = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	int done = 0, killed = 0, memfd = -1, cpufd = -1, procfd = -1;
	/* procs:1 leaves no room for a second process (the program policy
	 * refuses fork): the program's own figures are the tree's. Otherwise
	 * the whole tree is sampled. */
	int tree = lim->procs > 1;
	unsigned tree_every = spec->compile_phase ? TREE_SAMPLE_EVERY_COMPILE : TREE_SAMPLE_EVERY;
	unsigned tree_tick = tree_every - 1; /* the first sample walks the tree */
	struct init_idle idle;
	init_idle_start(&idle);
	if (tree) {
		procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (procfd < 0) {
			/* Fail closed: without it the limits would bind one process only. */
			gv_err_errno(err, "open /proc");
			goto fail;
		}
	}
	uint64_t next_sample = start + SAMPLE_FIRST_MS * 1000000ull;
	uint64_t out_cap = lim->output_bytes;
	uint64_t err_cap = spec->combined_cap ? lim->output_bytes : lim->stderr_bytes;
	while (!done) {
		uint64_t now = now_ns();
		if (!killed && now >= deadline) {
			o->killed_wall = 1;
			kill(pid, SIGKILL);
			killed = 1;
		}
		if (now >= next_sample) {
			if (memfd < 0) {
				char path[64];
				snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
				memfd = open(path, O_RDONLY | O_CLOEXEC);
			}
			if (memfd >= 0)
				sample_memory(memfd, &o->vmpeak_kb, &o->hwm_kb);
			int64_t cpu_now = -1;
			int runnable = 0, walked = 0;
			if (tree && ++tree_tick % tree_every == 0) {
				struct tree_sample ts;
				if (sample_tree(procfd, &ts) != 0) {
					/* Fail closed: without the walk the limits
					 * would bind the first process only. */
					gv_err_errno(err, "walk the process tree");
					goto fail;
				}
				walked = 1;
				cpu_now = (int64_t)(ts.cpu_ms + r->reaped_us / 1000u);
				runnable = ts.runnable;
				if (ts.rss_kb > o->tree_rss_kb)
					o->tree_rss_kb = ts.rss_kb;
			} else {
				/* RLIMIT_CPU works in whole seconds and a program may
				 * ignore SIGXCPU: the CPU limit itself is enforced here,
				 * to within a sample period. */
				if (cpufd < 0) {
					char path[64];
					snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
					cpufd = open(path, O_RDONLY | O_CLOEXEC);
				}
				if (cpufd >= 0)
					cpu_now = sample_cpu_ms(cpufd, &runnable);
			}
			if (!killed && (o->hwm_kb >= lim->memory_kb || o->tree_rss_kb >= lim->memory_kb)) {
				o->killed_memory = 1;
				kill(pid, SIGKILL);
				killed = 1;
			}
			if (!killed && cpu_now >= 0 && (uint64_t)cpu_now >= lim->cpu_ms) {
				o->killed_cpu = 1;
				kill(pid, SIGKILL);
				killed = 1;
			}
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
			if (!tree || walked)
				init_idle_sample(&idle, cpu_now, runnable, now, tree ? 1 : 2);
			o->idle_ms = idle.idle_ms;
			if (!killed && spec->idle_is_tle && lim->idle_ms && o->idle_ms >= lim->idle_ms) {
				o->killed_idle = 1;
				kill(pid, SIGKILL);
				killed = 1;
			}
			next_sample = now + SAMPLE_EVERY_MS * 1000000ull;
		}
		uint64_t until = next_sample < deadline || killed ? next_sample : deadline;
		uint64_t wait_ns = until > now ? until - now : 0;
		struct timespec ts = { (time_t)(wait_ns / 1000000000ull), (long)(wait_ns % 1000000000ull) };
		struct pollfd pf[3 + INIT_STREAM_MAX_FDS] = {
			{ .fd = r->sigfd, .events = POLLIN },
			/* A stream without room: leave stdout in the pipe. */
			{ .fd = strm && strm->room(strm->ctx) == 0 ? -1 : r->out_r, .events = POLLIN },
			{ .fd = r->err_r, .events = POLLIN },
		};
		int nst = strm ? strm->prepare(strm->ctx, pf + 3) : 0;
		int pr = ppoll(pf, 3 + (nfds_t)nst, &ts, NULL);
		if (pr < 0 && errno != EINTR) {
			gv_err_errno(err, "ppoll");
			goto fail;
		}
		if (strm && strm->pump(strm->ctx, pf + 3, nst, err) < 0)
			goto fail;
		if (pr <= 0)
			continue;
		if ((pf[1].revents & POLLIN) && !strm && drain(r->out_r, &r->out, out_cap, scratch, err) < 0)
			goto fail;
		if ((pf[1].revents & POLLIN) && strm && stream_drain(r->out_r, &r->out, strm, 0, scratch, err) < 0)
			goto fail;
		if ((pf[2].revents & POLLIN) && drain(r->err_r, &r->err, err_cap, scratch, err) < 0)
			goto fail;
		uint64_t over = spec->combined_cap ? r->out.total + r->err.total : r->out.total;
		if (!killed && over > out_cap) {
			o->killed_output = 1;
			kill(pid, SIGKILL);
			killed = 1;
		}
		if (pf[0].revents & POLLIN) {
			flush_sigfd(r->sigfd);
			for (;;) {
				int st;
				struct rusage rus;
				pid_t p = wait4(-1, &st, WNOHANG, &rus);
				if (p > 0)
					r->reaped_us += rusage_us(&rus);
				if (p == pid) {
					status = st;
					ru = rus;
					done = 1;
				} else if (p > 0) {
					continue; /* an orphan of an earlier process */
				} else if (p < 0 && errno == EINTR) {
					continue;
				}
				if (p <= 0 || done)
					break;
			}
		}
	}
	uint64_t wall_ns = now_ns() - start;
	o->wall_ms = wall_ns / 1000000ull;
	o->wall_us = wall_ns / 1000ull;
	if (memfd >= 0)
		close(memfd);
	if (cpufd >= 0)
		close(cpufd);
	if (procfd >= 0)
		close(procfd);
	if (init_kill_all(r, err) < 0)
		return -1;
	/* Everything that could write is dead: take what is left in the pipes. */
	if ((strm ? stream_drain(r->out_r, &r->out, strm, 1, scratch, err)
		: drain(r->out_r, &r->out, out_cap, scratch, err)) < 0 ||
	    drain(r->err_r, &r->err, err_cap, scratch, err) < 0)
		return -1;
	uint64_t over = spec->combined_cap ? r->out.total + r->err.total : r->out.total;
	if (over > out_cap)
		o->killed_output = 1;
	o->stdout_bytes = r->out.total;
	o->stderr_bytes = r->err.total;
	/* Every process of the run is reaped now, by init or by a process
	 * init reaped: reaped_us holds the whole tree's CPU time (the
	 * program's wait4 rusage included). */
	o->cpu_ms = r->reaped_us / 1000u;
	o->maxrss_kb = ru.ru_maxrss > 0 ? (uint64_t)ru.ru_maxrss : 0;
	if (WIFEXITED(status)) {
		o->exited = 1;
		o->exit_code = WEXITSTATUS(status);
	} else {
		o->exited = 0;
		o->term_signal = WTERMSIG(status);
	}
	return 0;
fail:
	if (memfd >= 0)
		close(memfd);
	if (cpufd >= 0)
		close(cpufd);
	if (procfd >= 0)
		close(procfd);
	{
		struct gv_err ignored;
		if (init_kill_all(r, &ignored) < 0) {
			/* the first error is the one reported */
		}
	}
	return -1;
}
