/* The syscall allowlist of sandboxed code, as a table.
 *
 * Security argument. gVisor is the boundary; this filter shrinks what the
 * program can ask the Sentry for, and keeps a same-uid program away from
 * the levers that would let it touch gavel-init or the next test:
 * - no ptrace, process_vm_*, no prlimit64 on another pid (init shares the
 *   uid), no setpriority/sched_setaffinity, sched_setscheduler only to
 *   SCHED_OTHER (what every task has), no signal
 *   to pid 1 (gVisor does not protect a namespace's init from them);
 * - no chmod/chown/rename/link/symlink for the program, so the work dir that
 *   init made read-only by mode (0555/0444) stays so, and nothing can be
 *   renamed into or out of it; except for a program that runs toolchains
 *   (the `toolchain` option below), whose work dir is not /box;
 * - no namespaces (unshare, setns, clone with CLONE_NEW*; clone3 answers
 *   ENOSYS so glibc falls back to clone, whose flags the filter can see),
 *   no mount family, no keyrings, bpf, perf, userfaultfd, io_uring,
 *   module, reboot, kexec, chroot, pivot_root, swap, clock setting;
 * - sockets of AF_UNIX only (the sandbox has no network either), plus
 *   AF_INET for a job whose tenant's egress policy grants a network;
 * - personality() only to query or to set PER_LINUX;
 * - with a process limit of 1 (procs:1), no new process at all: fork,
 *   vfork and clone without CLONE_THREAD answer EAGAIN (RLIMIT_NPROC does
 *   not stop a fork on gVisor 20221219), so the CPU and memory init
 *   measures for the program are all the test used.
 *
 * A program that runs other programs (the `toolchain` option: the job
 * record's writable_box, which only Jobe runs set: a CodeRunner template
 * compiles the student's answer with gcc and runs it) gets the compile
 * policy's file calls too: chmod, rename, link, symlink, utimes (a linker
 * marks its output executable with chmod, a build renames temporaries).
 * Why that is safe there: the run is still in the same gVisor sandbox,
 * as uid 65534 with no capability, no_new_privs and a read-only root; the
 * calls change only what that uid owns or may write, and in that job it
 * may write only /tmp: its work dir is the copy in /tmp/gv-work and init
 * closes /box itself (mode 0700, init's) before the run starts
 * (workcopy.c), so a chmod cannot reopen what the compile left in /box
 * for the program's uid, and nothing reaches the host's disk. Execute
 * and setuid bits matter only inside the sandbox: /tmp is nosuid, the
 * program could already create a file of mode 0755 with open(), and an
 * exec under no_new_privs never gains a privilege. The job has one run
 * (a second `test` is a protocol error) and /tmp is wiped after it
 * without following links, so nothing the calls made outlives it. Every
 * other line of the policy (the hostile list, namespaces, sockets,
 * signals to init) stays as it is.
 *
 * Default action EPERM rather than KILL: language runtimes (glibc, the JVM,
 * Go, node, Rust std) probe newer syscalls (rseq, statx, clone3, pidfd_*,
 * io_uring, membarrier, close_range...) and fall back when they fail; a kill
 * would turn every runtime upgrade into wrong verdicts. The syscalls that no
 * runtime probes but an attack needs are killed instead (SIGSYS), so the
 * attempt is visible to the host as "forbidden system call". Only the native
 * x86-64 ABI is allowed: i386 (int 0x80) and x32 numbers kill. */
#include "executor/init/seccomp_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum rule {
	ALLOW,    /* both policies */
	COMPILE,  /* compile policy (toolchains chmod, rename, link), and a
		   * program with the toolchain option */
	KILL,     /* hostile: kill the process in both policies */
	NOSYS,    /* answer ENOSYS so callers fall back to an older syscall */
};

struct entry {
	const char *name;
	enum rule rule;
};

static const struct entry table[] = {
	/* file descriptors and I/O */
	{ "read", ALLOW }, { "write", ALLOW }, { "readv", ALLOW }, { "writev", ALLOW },
	{ "pread64", ALLOW }, { "pwrite64", ALLOW }, { "preadv", ALLOW }, { "pwritev", ALLOW },
	{ "preadv2", ALLOW }, { "pwritev2", ALLOW }, { "lseek", ALLOW }, { "close", ALLOW },
	{ "close_range", ALLOW }, { "dup", ALLOW }, { "dup2", ALLOW }, { "dup3", ALLOW },
	{ "fcntl", ALLOW }, { "ioctl", ALLOW }, { "pipe", ALLOW }, { "pipe2", ALLOW },
	{ "poll", ALLOW }, { "ppoll", ALLOW }, { "select", ALLOW }, { "pselect6", ALLOW },
	{ "epoll_create", ALLOW }, { "epoll_create1", ALLOW }, { "epoll_ctl", ALLOW },
	{ "epoll_wait", ALLOW }, { "epoll_pwait", ALLOW }, { "epoll_pwait2", ALLOW },
	{ "eventfd", ALLOW }, { "eventfd2", ALLOW }, { "signalfd", ALLOW }, { "signalfd4", ALLOW },
	{ "timerfd_create", ALLOW }, { "timerfd_settime", ALLOW }, { "timerfd_gettime", ALLOW },
	{ "sendfile", ALLOW }, { "splice", ALLOW }, { "tee", ALLOW }, { "copy_file_range", ALLOW },
	{ "fsync", ALLOW }, { "fdatasync", ALLOW }, { "flock", ALLOW }, { "fadvise64", ALLOW },
	{ "fallocate", ALLOW }, { "ftruncate", ALLOW }, { "truncate", ALLOW },
	{ "memfd_create", ALLOW },
	/* paths (write access is decided by modes: /box is read-only for the program) */
	{ "open", ALLOW }, { "openat", ALLOW }, { "creat", ALLOW }, { "stat", ALLOW },
	{ "fstat", ALLOW }, { "lstat", ALLOW }, { "newfstatat", ALLOW }, { "statx", ALLOW },
	{ "statfs", ALLOW }, { "fstatfs", ALLOW }, { "access", ALLOW }, { "faccessat", ALLOW },
	{ "faccessat2", ALLOW }, { "readlink", ALLOW }, { "readlinkat", ALLOW },
	{ "getdents", ALLOW }, { "getdents64", ALLOW }, { "getcwd", ALLOW }, { "chdir", ALLOW },
	{ "fchdir", ALLOW }, { "mkdir", ALLOW }, { "mkdirat", ALLOW }, { "rmdir", ALLOW },
	{ "unlink", ALLOW }, { "unlinkat", ALLOW }, { "umask", ALLOW },
	{ "getxattr", ALLOW }, { "lgetxattr", ALLOW }, { "fgetxattr", ALLOW },
	{ "listxattr", ALLOW }, { "llistxattr", ALLOW }, { "flistxattr", ALLOW },
	{ "utimensat", COMPILE }, { "utimes", COMPILE }, { "utime", COMPILE }, { "futimesat", COMPILE },
	{ "chmod", COMPILE }, { "fchmod", COMPILE }, { "fchmodat", COMPILE },
	{ "rename", COMPILE }, { "renameat", COMPILE }, { "renameat2", COMPILE },
	{ "link", COMPILE }, { "linkat", COMPILE }, { "symlink", COMPILE }, { "symlinkat", COMPILE },
	/* memory */
	{ "brk", ALLOW }, { "mmap", ALLOW }, { "munmap", ALLOW }, { "mprotect", ALLOW },
	{ "mremap", ALLOW }, { "madvise", ALLOW }, { "msync", ALLOW }, { "mincore", ALLOW },
	{ "membarrier", ALLOW },
	/* processes and threads (clone is added with an argument check below) */
	{ "execve", ALLOW }, { "fork", ALLOW }, { "vfork", ALLOW }, { "clone3", NOSYS },
	{ "exit", ALLOW }, { "exit_group", ALLOW }, { "wait4", ALLOW }, { "waitid", ALLOW },
	{ "getpid", ALLOW }, { "getppid", ALLOW }, { "gettid", ALLOW }, { "getpgrp", ALLOW },
	{ "getpgid", ALLOW }, { "setpgid", ALLOW }, { "getsid", ALLOW }, { "setsid", ALLOW },
	{ "getuid", ALLOW }, { "geteuid", ALLOW }, { "getgid", ALLOW }, { "getegid", ALLOW },
	{ "getgroups", ALLOW }, { "getresuid", ALLOW }, { "getresgid", ALLOW },
	{ "getrlimit", ALLOW }, { "setrlimit", ALLOW }, { "getrusage", ALLOW }, { "times", ALLOW },
	{ "getpriority", ALLOW }, { "capget", ALLOW },
	{ "futex", ALLOW }, { "futex_waitv", ALLOW }, { "set_robust_list", ALLOW },
	{ "get_robust_list", ALLOW }, { "set_tid_address", ALLOW }, { "arch_prctl", ALLOW },
	{ "rseq", ALLOW }, { "sched_yield", ALLOW }, { "sched_getaffinity", ALLOW },
	{ "sched_getparam", ALLOW }, { "sched_getscheduler", ALLOW },
	{ "sched_get_priority_max", ALLOW }, { "sched_get_priority_min", ALLOW },
	{ "sched_rr_get_interval", ALLOW }, { "getcpu", ALLOW },
	/* signals and time */
	{ "rt_sigaction", ALLOW }, { "rt_sigprocmask", ALLOW }, { "rt_sigreturn", ALLOW },
	{ "rt_sigpending", ALLOW }, { "rt_sigtimedwait", ALLOW }, { "rt_sigsuspend", ALLOW },
	{ "sigaltstack", ALLOW }, { "pause", ALLOW }, { "alarm", ALLOW }, { "setitimer", ALLOW },
	{ "getitimer", ALLOW }, { "timer_create", ALLOW }, { "timer_settime", ALLOW },
	{ "timer_gettime", ALLOW }, { "timer_getoverrun", ALLOW }, { "timer_delete", ALLOW },
	{ "nanosleep", ALLOW }, { "clock_nanosleep", ALLOW }, { "clock_gettime", ALLOW },
	{ "clock_getres", ALLOW }, { "gettimeofday", ALLOW }, { "time", ALLOW },
	{ "restart_syscall", ALLOW },
	/* system information */
	{ "uname", ALLOW }, { "sysinfo", ALLOW }, { "getrandom", ALLOW },
	/* sockets: socket/socketpair are added with an AF_UNIX check below */
	{ "connect", ALLOW }, { "bind", ALLOW }, { "listen", ALLOW }, { "accept", ALLOW },
	{ "accept4", ALLOW }, { "sendto", ALLOW }, { "recvfrom", ALLOW }, { "sendmsg", ALLOW },
	{ "recvmsg", ALLOW }, { "sendmmsg", ALLOW }, { "recvmmsg", ALLOW }, { "shutdown", ALLOW },
	{ "getsockname", ALLOW }, { "getpeername", ALLOW }, { "setsockopt", ALLOW },
	{ "getsockopt", ALLOW },
	/* hostile: no runtime probes these; an attack does */
	{ "ptrace", KILL }, { "process_vm_readv", KILL }, { "process_vm_writev", KILL },
	{ "mount", KILL }, { "umount2", KILL }, { "pivot_root", KILL }, { "chroot", KILL },
	{ "unshare", KILL }, { "setns", KILL }, { "open_tree", KILL }, { "move_mount", KILL },
	{ "fsopen", KILL }, { "fsconfig", KILL }, { "fsmount", KILL }, { "fspick", KILL },
	{ "mount_setattr", KILL }, { "kexec_load", KILL }, { "kexec_file_load", KILL },
	{ "reboot", KILL }, { "init_module", KILL }, { "finit_module", KILL },
	{ "delete_module", KILL }, { "bpf", KILL }, { "perf_event_open", KILL },
	{ "keyctl", KILL }, { "add_key", KILL }, { "request_key", KILL },
	{ "userfaultfd", KILL }, { "swapon", KILL }, { "swapoff", KILL }, { "acct", KILL },
	{ "quotactl", KILL }, { "syslog", KILL }, { "iopl", KILL }, { "ioperm", KILL },
	{ "open_by_handle_at", KILL }, { "name_to_handle_at", KILL },
	{ "settimeofday", KILL }, { "clock_settime", KILL }, { "clock_adjtime", KILL },
	{ "adjtimex", KILL }, { "vhangup", KILL }, { "kcmp", KILL }, { "pidfd_getfd", KILL },
	{ "lookup_dcookie", KILL },
	/* everything else, e.g. io_uring_*, setuid family, mknod, chown family,
	 * setxattr, mlock, pidfd_open, seccomp: EPERM by default */
};

static const int prctl_allowed[] = {
	PR_SET_NAME, PR_GET_NAME, PR_SET_PDEATHSIG, PR_GET_PDEATHSIG, PR_GET_DUMPABLE,
	PR_GET_SECCOMP, PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS, PR_CAPBSET_READ,
	PR_SET_TIMERSLACK, PR_GET_TIMERSLACK, PR_GET_THP_DISABLE, PR_SET_THP_DISABLE,
	PR_GET_TID_ADDRESS, PR_SET_VMA,
};

/* clone() flags that create namespaces. CLONE_NEWTIME is left out: it
 * shares its bit with the exit signal of clone() and is clone3-only. */
#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
		  CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif

static int resolve(const char *name, int *nr, struct gv_err *err)
{
	*nr = seccomp_syscall_resolve_name(name);
	if (*nr == __NR_SCMP_ERROR)
		return gv_err_set(err, GV_ESANDBOX, "seccomp: unknown syscall name %s", name);
	return 0;
}

/* libseccomp returns -errno. */
static int check(int rc, const char *what, const char *name, struct gv_err *err)
{
	if (rc == 0)
		return 0;
	return gv_err_set(err, -rc, "seccomp: %s %s: %s", what, name, strerror(-rc));
}

/* Allows syscall nr unless the low 32 bits of its first argument are 1.
 * gVisor 20221219 does not shield PID 1 from its namespace's signals (a
 * same-uid kill(1, SIGTERM) ended gavel-init), so kill, tkill and tgkill
 * must not reach pid 1. The kernel reads a pid as 32 bits, so the test must
 * ignore the upper half (0x100000001 is pid 1 too); libseccomp has no
 * masked "not equal", hence: bit 0 clear, or any of bits 1..31 set. */
static int add_not_pid1(scmp_filter_ctx ctx, const char *name, struct gv_err *err)
{
	int nr;
	if (resolve(name, &nr, err) < 0)
		return -1;
	if (check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, 1, 0)),
		  "rule", name, err) < 0)
		return -1;
	for (unsigned bit = 1; bit < 32; bit++) {
		scmp_datum_t m = (scmp_datum_t)1 << bit;
		if (check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, m, m)),
			  "rule", name, err) < 0)
			return -1;
	}
	return 0;
}

/* Process creation when the job allows one process only (procs:1). A
 * "process" is a thread group: threads (clone with CLONE_THREAD) stay
 * allowed, their CPU time is the process's own and wait4 counts it;
 * fork, vfork and clone without CLONE_THREAD (posix_spawn's
 * CLONE_VM|CLONE_VFORK included) answer EAGAIN, what a process limit gives.
 * RLIMIT_NPROC cannot say this: gVisor 20221219 let a fork through under
 * RLIMIT_NPROC 1 (measured), and it would count threads too. */
static int add_clone(scmp_filter_ctx ctx, bool single_process, struct gv_err *err)
{
	int nr;
	if (resolve("clone", &nr, err) < 0)
		return -1;
	if (!single_process)
		return check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					      SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0)), "rule", "clone", err);
	if (check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				   SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS | CLONE_THREAD, CLONE_THREAD)),
		  "rule", "clone thread", err) < 0 ||
	    check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAGAIN), nr, 1,
				   SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)), "rule", "clone process", err) < 0)
		return -1;
	const char *const forks[] = { "fork", "vfork" };
	for (size_t i = 0; i < 2; i++)
		if (resolve(forks[i], &nr, err) < 0 ||
		    check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAGAIN), nr, 0), "rule", forks[i], err) < 0)
			return -1;
	return 0;
}

static int add_rules(scmp_filter_ctx ctx, enum init_policy policy, const struct init_seccomp_opts *opt,
		     struct gv_err *err)
{
	bool single = opt->single_process;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct entry *e = &table[i];
		int nr;
		if (resolve(e->name, &nr, err) < 0)
			return -1;
		uint32_t action;
		switch (e->rule) {
		case ALLOW: action = SCMP_ACT_ALLOW; break;
		case COMPILE:
			action = policy == INIT_POLICY_COMPILE || opt->toolchain ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPERM);
			break;
		case KILL: action = SCMP_ACT_KILL_PROCESS; break;
		case NOSYS: action = SCMP_ACT_ERRNO(ENOSYS); break;
		default: return gv_err_set(err, GV_EINTERNAL, "seccomp: bad rule");
		}
		if (action == SCMP_ACT_ERRNO(EPERM))
			continue; /* the default already */
		if (single && (!strcmp(e->name, "fork") || !strcmp(e->name, "vfork")))
			continue; /* add_clone */
		if (check(seccomp_rule_add(ctx, action, nr, 0), "rule", e->name, err) < 0)
			return -1;
	}
	if (add_not_pid1(ctx, "kill", err) < 0 || add_not_pid1(ctx, "tkill", err) < 0 ||
	    add_not_pid1(ctx, "tgkill", err) < 0)
		return -1;
	if (add_clone(ctx, single, err) < 0)
		return -1;
	int nr;
	if (resolve("socket", &nr, err) < 0 ||
	    check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX)),
		  "rule", "socket", err) < 0)
		return -1;
	/* IPv4 sockets only for a job whose tenant was granted egress: its
	 * sandbox has a network namespace of its own, filtered by the host
	 * (executor/sandbox/netpolicy.c). Never raw sockets: no CAP_NET_RAW
	 * inside. */
	if (opt->inet && check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, AF_INET)),
			  "rule", "socket inet", err) < 0)
		return -1;
	if (resolve("socketpair", &nr, err) < 0 ||
	    check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX)),
		  "rule", "socketpair", err) < 0)
		return -1;
	/* Only the calling process: init shares the uid and must keep its limits. */
	if (resolve("prlimit64", &nr, err) < 0 ||
	    check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, 0)),
		  "rule", "prlimit64", err) < 0)
		return -1;
	/* Setting the normal policy, which every task already has: libzmq
	 * (Jupyter kernels) sets its threads' policy to the one it read and
	 * aborts on EPERM. Real-time and other policies stay refused. */
	if (resolve("sched_setscheduler", &nr, err) < 0 ||
	    check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				   SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, SCHED_OTHER)),
		  "rule", "sched_setscheduler", err) < 0)
		return -1;
	if (resolve("personality", &nr, err) < 0 ||
	    check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				   SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0xffffffffu)),
		  "rule", "personality query", err) < 0 ||
	    check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				   SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, PER_LINUX)),
		  "rule", "personality", err) < 0)
		return -1;
	if (resolve("prctl", &nr, err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(prctl_allowed) / sizeof(prctl_allowed[0]); i++)
		if (check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					   SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)prctl_allowed[i])),
			  "rule", "prctl", err) < 0)
			return -1;
	return 0;
}

static int build_ctx(enum init_policy policy, const struct init_seccomp_opts *opt, scmp_filter_ctx *out,
		     struct gv_err *err)
{
	/* libseccomp probes the kernel for SECCOMP_RET_KILL_PROCESS with
	 * seccomp(SECCOMP_GET_ACTION_AVAIL), which gVisor 20221219 does not
	 * answer, although its Sentry implements the action. We only export
	 * the BPF (no flags, no TSYNC, no notify), so the API level only gates
	 * which actions libseccomp accepts: raise it to 3 (KILL_PROCESS). The
	 * probe tests check that the action really kills the process. */
	unsigned api = seccomp_api_get();
	if (api < 3 && seccomp_api_set(3) != 0)
		return gv_err_set(err, GV_ESANDBOX, "seccomp: API level %u, cannot raise it to 3", api);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return gv_err_set(err, GV_ESANDBOX, "seccomp_init failed");
	int rc;
	/* The filter is installed by the child itself (init_seccomp_apply). */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) != 0) {
		seccomp_release(ctx);
		return check(rc, "attr", "CTL_NNP", err);
	}
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) != 0) {
		seccomp_release(ctx);
		return check(rc, "attr", "ACT_BADARCH", err);
	}
	if (add_rules(ctx, policy, opt, err) < 0) {
		seccomp_release(ctx);
		return -1;
	}
	*out = ctx;
	return 0;
}

int init_seccomp_build(enum init_policy policy, struct init_bpf *out, struct gv_err *err)
{
	return init_seccomp_build_net(policy, false, out, err);
}

int init_seccomp_build_net(enum init_policy policy, bool inet, struct init_bpf *out, struct gv_err *err)
{
	struct init_seccomp_opts opt = { .inet = inet };
	return init_seccomp_build_opts(policy, &opt, out, err);
}

int init_seccomp_build_opts(enum init_policy policy, const struct init_seccomp_opts *opt, struct init_bpf *out,
			    struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	scmp_filter_ctx ctx;
	if (build_ctx(policy, opt, &ctx, err) < 0)
		return -1;
	int fd = memfd_create("gv-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		seccomp_release(ctx);
		return gv_err_errno(err, "seccomp: memfd_create");
	}
	int rc = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (rc != 0) {
		close(fd);
		return check(rc, "export", "bpf", err);
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return gv_err_errno(err, "seccomp: fstat");
	}
	size_t n = (size_t)st.st_size;
	if (n == 0 || n % sizeof(struct sock_filter) || n / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		close(fd);
		return gv_err_set(err, GV_ESANDBOX, "seccomp: exported filter of %zu bytes", n);
	}
	out->insns = malloc(n);
	if (!out->insns) {
		close(fd);
		return gv_err_set(err, ENOMEM, "seccomp: out of memory");
	}
	ssize_t got = pread(fd, out->insns, n, 0);
	close(fd);
	if (got < 0 || (size_t)got != n) {
		init_bpf_free(out);
		return gv_err_set(err, GV_ESANDBOX, "seccomp: short read of the exported filter");
	}
	out->len = (unsigned short)(n / sizeof(struct sock_filter));
	return 0;
}

void init_bpf_free(struct init_bpf *bpf)
{
	if (!bpf)
		return;
	free(bpf->insns);
	bpf->insns = NULL;
	bpf->len = 0;
}

int init_seccomp_load(const struct init_bpf *bpf)
{
	struct sock_fprog prog = { .len = bpf->len, .filter = bpf->insns };
	if (syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0L, 0L) != 0)
		return -errno;
	return 0;
}

int init_seccomp_apply(const struct init_bpf *bpf)
{
	if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0)
		return -errno;
	return init_seccomp_load(bpf);
}

int init_no_new_privs(struct gv_err *err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0)
		return gv_err_errno(err, "prctl(PR_SET_NO_NEW_PRIVS)");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0L, 0L, 0L, 0L) != 1)
		return gv_err_set(err, GV_ESANDBOX, "no_new_privs did not stick");
	return 0;
}

int init_seccomp_dump(enum init_policy policy, int fd, struct gv_err *err)
{
	struct init_seccomp_opts opt = { 0 };
	scmp_filter_ctx ctx;
	if (build_ctx(policy, &opt, &ctx, err) < 0)
		return -1;
	int rc = seccomp_export_pfc(ctx, fd);
	seccomp_release(ctx);
	return check(rc, "export", "pfc", err);
}
