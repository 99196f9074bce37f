/* The fork server of gavel-init: for a language that opts in (job record
 * `fork_server`), its runtime is started once per submission, after the
 * compile and the lock of /box, as a template process; each test then
 * gets a fresh process forked from it instead of an execve of the runtime.
 * The protocol between init and the template is two pipes: on fd 3 a
 * set-up message once, then one request byte per test; on fd 4 replies of
 * 32 bytes (struct fork_msg): 'H' when the template is ready, 'P'+pid per
 * forked process ('X'+errno when the fork failed), from each forked
 * process 'R' once its set-up is complete, right before the submission's
 * code runs ('E'+errno when its set-up failed), and 'W' from the template
 * when it has reaped that process (its wait status, CPU time and peak
 * memory: this gVisor ignores CLONE_PARENT, so the process is the
 * template's child and init learns its end from its reaper).
 *
 * Security argument.
 * - No submission code ever runs in the template. It is started like a
 *   program (clean environment, fds 0 1 2 as every program's, nothing else
 *   open but its two pipes) but as init's uid 0, unfiltered, in / (not
 *   /box), with its language's own isolation of the import path (Python:
 *   the stub drops the current-directory entry before it imports
 *   anything), and it is started after the compile and before the first
 *   test: it never reads a test's input (its fd 0 is the runner's stdin
 *   file, which it never reads) and nothing of a test flows back into it.
 *   Its only input is init's set-up message and request bytes.
 * - The template holds no secret: its memory is the runtime's start plus
 *   the set-up message (limits, uid, the seccomp program: all known to
 *   the submission's author), so a forked process that can read its own
 *   memory learns nothing it could not know.
 * - Each test's process is measured and killed by init as an execve'd
 *   program is (/proc samples, SIGKILL from init, which is root); its
 *   wait status and rusage come from its parent, the template, which
 *   runs no submission code and so reports them as wait4 gave them. Its
 *   own children re-parent to init when it ends, and init kills every
 *   process but the template after each run. Before any submission
 *   code it sets, in child.c's order, a new session, the rlimits, the
 *   stdio redirections, its working directory, gid then uid 65534 (checked
 *   after, and its capabilities checked empty: the bounding set was
 *   emptied by init and no_new_privs is inherited), then loads the same
 *   seccomp program as an execve'd program, says 'R', and closes both
 *   pipes. A set-up failure is an internal error of the test, never a run
 *   with less.
 * - The test's process cannot reach the template: another uid (65534
 *   against 0), so no signal, ptrace or /proc/<pid>/{mem,fd,environ} of
 *   it (and the program policy denies ptrace and process_vm_*); its pipe
 *   ends are closed before the submission's code runs, and it only ever
 *   wrote to them. What a test changes in its own process (modules, fds,
 *   environment, signal dispositions, cwd) dies with it; the next test is
 *   forked from the untouched template. Files it leaves are wiped after
 *   it as before; processes it leaves are killed (every one but init and
 *   the template, reap.c).
 * - A template that cannot start, or is gone before a test, leaves the
 *   execve path for the rest of the job (the same policy and limits). */
#include "executor/init/forkserver.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"
#include "executor/init/run_internal.h"

#define FORK_CTL_FD 3  /* the template's request pipe */
#define FORK_REP_FD 4  /* the template's (and each forked process's) reply pipe */
#define FORK_FD_MIN 16 /* init's ends and the template's ends before they move to 3 and 4 */
#define FORK_START_MS 20000 /* the template's start: an interpreter's, on a loaded node */
#define FORK_REPLY_MS 10000 /* one fork */

/* One reply, as the stub packs it (`=c3xiqqq`). */
struct fork_msg {
	char kind;
	char pad[3];
	int32_t a;         /* pid, errno or wait status */
	int64_t b, c, d;   /* 'W': CPU time (us), peak resident size (kB) */
};
_Static_assert(sizeof(struct fork_msg) == 32, "the stub's layout");
#define FORK_ARGV_MAX (INIT_JOB_MAX_ARGS + 4)

/* The interpreter options a forked run accepts: those that take no
 * argument and change only how the interpreter starts, the same in the
 * template as in an execve'd run; -W with its filter in the same word.
 * Anything else (-m, -c, -X, an option with a separate argument) keeps
 * the execve path. */
static const char *const python_options[] = { "-B", "-E", "-s", "-S", "-u", "-O", "-OO", "-I",
					      "-b", "-bb", "-q", NULL };

static int python_option_ok(const char *a)
{
	if (a[0] == '-' && a[1] == 'W' && a[2] != '\0')
		return 1;
	for (size_t i = 0; python_options[i]; i++)
		if (strcmp(a, python_options[i]) == 0)
			return 1;
	return 0;
}

int init_fork_python_argv(char *const *run_argv, const char *stub, char **out, size_t out_max)
{
	size_t n = 0, i = 0;
	if (!run_argv[0] || out_max < 5)
		return -1;
	out[n++] = run_argv[i++];
	for (; run_argv[i] && run_argv[i][0] == '-'; i++) {
		if (!python_option_ok(run_argv[i]) || n + 4 >= out_max)
			return -1;
		out[n++] = run_argv[i];
	}
	if (!run_argv[i] || run_argv[i][0] == '\0')
		return -1; /* no script */
	out[n++] = "-c";
	out[n++] = (char *)stub;
	for (; run_argv[i]; i++) {
		if (n + 1 >= out_max)
			return -1;
		out[n++] = run_argv[i];
	}
	out[n] = NULL;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* What the template's clone child needs; prepared before clone (the
 * child only makes raw system calls). */
struct tmpl_args {
	char *argv[FORK_ARGV_MAX];
	const char *path;
	int stdin_fd, ctl_r, rep_w;
	struct rlimit stack;
	int set_stack;
	volatile int failed_errno;
};

/* The template's child from clone to execve. Security argument: as
 * child.c's, but it keeps init's uid and has no seccomp filter of its
 * own, which is what lets it fork each test's process and drop that to
 * 65534 under the program's filter; it runs only the runtime's start and
 * the stub. Fds: 0 the runner's stdin file (read-only), 1 and 2 the
 * program pipes, 3 and 4 its pipes; init's others are O_CLOEXEC. RLIMIT_STACK
 * is the test's: a runtime's main stack is sized at execve. */
static int tmpl_main(void *arg)
{
	struct tmpl_args *a = arg;
	sigset_t none;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || setsid() < 0 || dup2(a->stdin_fd, 0) < 0 ||
	    dup2(a->ctl_r, FORK_CTL_FD) < 0 || dup2(a->rep_w, FORK_REP_FD) < 0 || chdir("/") < 0 ||
	    (a->set_stack && setrlimit(RLIMIT_STACK, &a->stack) < 0))
		goto fail;
	execve(a->path, a->argv, init_child_envp());
fail:
	a->failed_errno = errno;
	_exit(127);
}

/* The set-up steps of a forked process, as the stub numbers them in
 * its 'E' message. */
static const char *const fork_steps[] = { "session", "rlimits", "stdio", "cwd", "gid", "uid", "capabilities",
					  "no_new_privs", "dumpable", "seccomp", "fds" };

/* Reads one reply within ms; 0, or -1 with err (EOF: the template ended). */
static int read_reply(struct init_forkserver *fs, struct fork_msg *m, int ms, struct gv_err *err)
{
	size_t got = 0;
	while (got < sizeof(*m)) {
		struct pollfd pf = { .fd = fs->rep_r, .events = POLLIN };
		int pr = poll(&pf, 1, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return gv_err_errno(err, "fork server: poll");
		if (pr == 0)
			return gv_err_set(err, GV_ESANDBOX, "fork server: no reply in %d ms", ms);
		ssize_t n = read(fs->rep_r, (char *)m + got, sizeof(*m) - got);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return gv_err_errno(err, "fork server: read");
		if (n == 0)
			return gv_err_set(err, GV_ESANDBOX, "fork server: the template ended");
		got += (size_t)n;
	}
	return 0;
}

/* Notes a test process's own message or its end; 0 when m was one of
 * those, 1 otherwise. */
static int note_child_msg(struct init_forkserver *fs, const struct fork_msg *m)
{
	switch (m->kind) {
	case 'R':
		fs->ready_seen = 1;
		return 0;
	case 'E':
		fs->failed_seen = 1;
		fs->failed_errno = m->a > 0 ? m->a : EPERM;
		fs->failed_step = m->b >= 0 && m->b < (int64_t)(sizeof(fork_steps) / sizeof(fork_steps[0])) ? fork_steps[m->b]
														: "?";
		return 0;
	case 'W':
		fs->exited = 1;
		fs->exit.status = m->a;
		fs->exit.cpu_us = m->b > 0 ? (uint64_t)m->b : 0;
		fs->exit.maxrss_kb = m->c > 0 ? (uint64_t)m->c : 0;
		return 0;
	default:
		return 1;
	}
}

/* The set-up message (the stub's `=4sIIIQQQQQQII` header, then the work
 * dir and the seccomp program): every test's process applies it. */
static int send_setup(struct init_forkserver *fs, const struct init_run_spec *spec, struct gv_err *err)
{
	const struct init_limits *lim = spec->lim;
	struct init_child_rlimits rl;
	init_child_rlimits(spec, &rl);
	const char *cwd = spec->cwd ? spec->cwd : "/box";
	uint32_t u32[3] = { INIT_SANDBOX_UID, INIT_SANDBOX_GID, spec->stderr_to_stdout ? 1u : 0u };
	uint64_t u64[6] = { (uint64_t)rl.cpu.rlim_cur, (uint64_t)rl.cpu.rlim_max, lim->open_files, rl.nproc,
			    lim->fsize_kb * 1024, lim->stack_kb * 1024 };
	uint32_t tail[2] = { (uint32_t)strlen(cwd), (uint32_t)spec->bpf->len * (uint32_t)sizeof(struct sock_filter) };
	static unsigned char msg[4 + sizeof(u32) + sizeof(u64) + sizeof(tail) + 4096];
	size_t n = 0;
	if (tail[0] >= 4096)
		return gv_err_set(err, GV_EINVAL, "fork server: work dir name too long");
	memcpy(msg + n, "GVF1", 4), n += 4;
	memcpy(msg + n, u32, sizeof(u32)), n += sizeof(u32);
	memcpy(msg + n, u64, sizeof(u64)), n += sizeof(u64);
	memcpy(msg + n, tail, sizeof(tail)), n += sizeof(tail);
	memcpy(msg + n, cwd, tail[0]), n += tail[0];
	if (gv_write_all(fs->ctl_w, msg, n) != 0 || gv_write_all(fs->ctl_w, spec->bpf->insns, tail[1]) != 0)
		return gv_err_errno(err, "fork server: send set-up");
	return 0;
}

/* A pipe whose ends sit at FORK_FD_MIN or above, O_CLOEXEC: dup2 onto 3
 * and 4 in the template's child can neither clobber one another nor land
 * on itself (which would keep O_CLOEXEC). */
static int high_pipe(int p[2])
{
	int lo[2];
	if (pipe2(lo, O_CLOEXEC) < 0)
		return -1;
	p[0] = fcntl(lo[0], F_DUPFD_CLOEXEC, FORK_FD_MIN);
	p[1] = p[0] < 0 ? -1 : fcntl(lo[1], F_DUPFD_CLOEXEC, FORK_FD_MIN);
	int e = errno;
	close(lo[0]);
	close(lo[1]);
	if (p[1] < 0) {
		if (p[0] >= 0)
			close(p[0]);
		errno = e;
		return -1;
	}
	return 0;
}

int init_forkserver_alive(const struct init_forkserver *fs)
{
	return fs && fs->pid > 0;
}

int init_forkserver_start(struct init_forkserver *fs, enum init_fork_kind kind, struct init_runner *r,
			  const struct init_run_spec *spec, struct gv_err *err)
{
	static struct tmpl_args a;
	memset(fs, 0, sizeof(*fs));
	fs->ctl_w = fs->rep_r = -1;
	if (kind != INIT_FORK_PYTHON)
		return gv_err_set(err, GV_EINVAL, "fork server: unknown kind");
	memset(&a, 0, sizeof(a));
	if (init_fork_python_argv(spec->argv, init_fork_python_stub, a.argv, FORK_ARGV_MAX) < 0)
		return gv_err_set(err, GV_EINVAL, "fork server: the run command is not `python [OPTION...] SCRIPT [ARG...]`");
	if (!strchr(spec->argv[0], '/'))
		return gv_err_set(err, GV_EINVAL, "fork server: the interpreter is not a path");
	a.path = spec->argv[0];
	if (spec->lim->stack_kb) {
		a.stack = (struct rlimit){ (rlim_t)spec->lim->stack_kb * 1024, (rlim_t)spec->lim->stack_kb * 1024 };
		a.set_stack = 1;
	}
	int ctl[2] = { -1, -1 }, rep[2] = { -1, -1 };
	if (high_pipe(ctl) < 0 || high_pipe(rep) < 0) {
		gv_err_errno(err, "fork server: pipe");
		goto fail_fds;
	}
	a.stdin_fd = r->in_ro;
	a.ctl_r = ctl[0];
	a.rep_w = rep[1];
	static char stack[64 * 1024] __attribute__((aligned(16)));
	pid_t pid = clone(tmpl_main, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	close_fd(&ctl[0]);
	close_fd(&rep[1]);
	if (pid < 0) {
		gv_err_errno(err, "fork server: clone");
		goto fail_fds;
	}
	fs->pid = pid;
	fs->ctl_w = ctl[1];
	fs->rep_r = rep[0];
	r->spare_pid = pid;
	r->spare_lost = 0;
	if (a.failed_errno) {
		errno = a.failed_errno;
		gv_err_errno(err, "fork server: start %s", a.path);
		goto fail;
	}
	if (send_setup(fs, spec, err) < 0)
		goto fail;
	struct fork_msg m;
	if (read_reply(fs, &m, FORK_START_MS, err) < 0)
		goto fail;
	if (m.kind != 'H' || m.a != pid) {
		gv_err_set(err, GV_EPROTO, "fork server: template said '%c'", m.kind);
		goto fail;
	}
	return 0;
fail:
	init_forkserver_stop(fs, r);
	/* What a failing template wrote went to the program pipes: no run
	 * owns it, so it is dropped before the first test's run. */
	for (;;) {
		static char sink[4096];
		ssize_t o = read(r->out_r, sink, sizeof(sink)), e = read(r->err_r, sink, sizeof(sink));
		if (o <= 0 && e <= 0)
			break;
	}
	return -1;
fail_fds:
	close_fd(&ctl[0]), close_fd(&ctl[1]), close_fd(&rep[0]), close_fd(&rep[1]);
	return -1;
}

int init_forkserver_spawn(struct init_forkserver *fs, pid_t *pid, struct gv_err *err)
{
	fs->ready_seen = fs->failed_seen = fs->exited = 0;
	fs->failed_errno = 0;
	if (gv_write_all(fs->ctl_w, "F", 1) != 0)
		return gv_err_errno(err, "fork server: request");
	for (;;) {
		struct fork_msg m;
		if (read_reply(fs, &m, FORK_REPLY_MS, err) < 0)
			return -1;
		if ((m.kind == 'R' || m.kind == 'E') && note_child_msg(fs, &m) == 0)
			continue; /* the process was quicker than the template's reply */
		if (m.kind == 'P' && m.a > 0) {
			*pid = (pid_t)m.a;
			return 0;
		}
		if (m.kind == 'X')
			return gv_err_set(err, m.a > 0 ? m.a : GV_ESANDBOX, "fork server: fork: %s",
					  strerror(m.a > 0 ? m.a : EIO));
		return gv_err_set(err, GV_EPROTO, "fork server: unexpected reply '%c'", m.kind);
	}
}

int init_forkserver_fd(const struct init_forkserver *fs)
{
	return fs->rep_r;
}

int init_forkserver_take(struct init_forkserver *fs, struct gv_err *err)
{
	while (!fs->exited) {
		struct pollfd pf = { .fd = fs->rep_r, .events = POLLIN };
		int pr = poll(&pf, 1, 0);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return gv_err_errno(err, "fork server: poll");
		if (pr == 0)
			break;
		struct fork_msg m;
		if (read_reply(fs, &m, FORK_REPLY_MS, err) < 0)
			return -1;
		if (note_child_msg(fs, &m) != 0)
			return gv_err_set(err, GV_EPROTO, "fork server: unexpected reply '%c'", m.kind);
	}
	return fs->exited;
}

void init_forkserver_stop(struct init_forkserver *fs, struct init_runner *r)
{
	if (!fs)
		return;
	close_fd(&fs->ctl_w);
	close_fd(&fs->rep_r);
	/* A template the runner reaped already (it ended by itself) is not
	 * signalled: its pid may be another process's now. */
	if (fs->pid > 0 && (!r || r->spare_pid == fs->pid)) {
		kill(fs->pid, SIGKILL);
		while (waitpid(fs->pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	fs->pid = 0;
	if (r) {
		r->spare_pid = 0;
		r->spare_lost = 0;
	}
}
