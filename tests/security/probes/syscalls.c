/* syscalls — privileged and kernel-attack-surface system calls must fail.
 *
 * stdin: "GROUP <name>" (the driver runs each group as its own test; "all"
 * runs every group) and "SKIP <n>" (see attempt()); each call runs in a forked child (attempt()), so a
 * seccomp policy that returns EPERM/ENOSYS and one that kills with SIGSYS
 * both read as BLOCKED. Success of any call is an escape: the sandbox
 * promises a non-root uid, no capabilities, noNewPrivileges and a seccomp
 * allowlist that leaves out the kernel's rarely-needed attack surface. */
#include "probe.h"

#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#endif
#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#define X32_BIT 0x40000000L

/* Raw syscalls return -errno; turn that into the -1/errno convention. */
static long raw_ret(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* ---- ptrace and access to other processes ---- */
static long a_traceme(long a) { (void)a; return ptrace(PTRACE_TRACEME, 0, 0, 0); }
static long a_attach(long pid) { return ptrace(PTRACE_ATTACH, (pid_t)pid, 0, 0); }
static long a_seize(long pid) { return ptrace(PTRACE_SEIZE, (pid_t)pid, 0, 0); }
static long a_vm_readv(long pid)
{
	char buf[64];
	struct iovec local = { buf, sizeof buf }, remote = { (void *)0x400000, sizeof buf };
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
}
static long a_pidfd_getfd(long pid)
{
	long pfd = syscall(__NR_pidfd_open, (pid_t)pid, 0);
	if (pfd < 0)
		return -1;
	return syscall(__NR_pidfd_getfd, (int)pfd, 1, 0); /* init's fd 1: the result pipe */
}

static void g_ptrace(void)
{
	attempt("ptrace(PTRACE_TRACEME)", a_traceme, 0);
	attempt("ptrace(PTRACE_ATTACH, 1)", a_attach, 1);
	attempt("ptrace(PTRACE_SEIZE, 1)", a_seize, 1);
	attempt("process_vm_readv(1)", a_vm_readv, 1);
	attempt("pidfd_getfd(pidfd_open(1), 1)", a_pidfd_getfd, 1);
}

/* ---- mounts ---- */
static long a_mount_tmpfs(long a) { (void)a; return mount("tmpfs", "/tmp", "tmpfs", 0, "size=1m"); }
static long a_mount_bind(long a) { (void)a; return mount("/", "/tmp", NULL, MS_BIND | MS_REC, NULL); }
static long a_remount_root(long a) { (void)a; return mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL); }
static long a_remount_usr(long a) { (void)a; return mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL); }
static long a_mount_proc(long a) { (void)a; return mount("proc", "/tmp", "proc", 0, NULL); }
static long a_fsopen(long a) { (void)a; return syscall(__NR_fsopen, "tmpfs", 0); }
static long a_open_tree(long a) { (void)a; return syscall(__NR_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */); }

static void g_mount(void)
{
	attempt("mount(tmpfs, /tmp)", a_mount_tmpfs, 0);
	attempt("mount(/, /tmp, MS_BIND)", a_mount_bind, 0);
	attempt("mount(MS_REMOUNT, /)", a_remount_root, 0);
	attempt("mount(MS_REMOUNT, /usr)", a_remount_usr, 0);
	attempt("mount(proc, /tmp)", a_mount_proc, 0);
	attempt("fsopen(tmpfs)", a_fsopen, 0);
	attempt("open_tree(/, OPEN_TREE_CLONE)", a_open_tree, 0);
}

static long a_umount(long path) { return umount2((const char *)path, MNT_DETACH); }

static void g_umount(void)
{
	attempt("umount2(/box)", a_umount, (long)"/box");
	attempt("umount2(/tmp)", a_umount, (long)"/tmp");
	attempt("umount2(/proc)", a_umount, (long)"/proc");
	attempt("umount2(/usr)", a_umount, (long)"/usr");
	attempt("umount2(/etc)", a_umount, (long)"/etc");
}

/* ---- namespaces ---- */
static long a_unshare(long flags) { return unshare((int)flags); }

static void g_unshare(void)
{
	attempt("unshare(CLONE_NEWUSER)", a_unshare, CLONE_NEWUSER);
	attempt("unshare(CLONE_NEWUSER|CLONE_NEWNS)", a_unshare, CLONE_NEWUSER | CLONE_NEWNS);
	attempt("unshare(CLONE_NEWNS)", a_unshare, CLONE_NEWNS);
	attempt("unshare(CLONE_NEWNET)", a_unshare, CLONE_NEWNET);
	attempt("unshare(CLONE_NEWPID)", a_unshare, CLONE_NEWPID);
	attempt("unshare(CLONE_NEWUTS)", a_unshare, CLONE_NEWUTS);
	attempt("unshare(CLONE_NEWIPC)", a_unshare, CLONE_NEWIPC);
	attempt("unshare(CLONE_NEWCGROUP)", a_unshare, CLONE_NEWCGROUP);
}

static long a_setns(long path)
{
	int fd = open((const char *)path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	return setns(fd, 0);
}

static void g_setns(void)
{
	attempt("setns(/proc/1/ns/mnt)", a_setns, (long)"/proc/1/ns/mnt");
	attempt("setns(/proc/1/ns/pid)", a_setns, (long)"/proc/1/ns/pid");
	attempt("setns(/proc/1/ns/net)", a_setns, (long)"/proc/1/ns/net");
	attempt("setns(/proc/self/ns/user)", a_setns, (long)"/proc/self/ns/user");
	attempt("setns(/proc/self/ns/mnt)", a_setns, (long)"/proc/self/ns/mnt");
}

static long a_clone_flags(long flags)
{
	long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	return r;
}

static void g_clone_ns(void)
{
	attempt("clone(CLONE_NEWPID)", a_clone_flags, CLONE_NEWPID);
	attempt("clone(CLONE_NEWUSER)", a_clone_flags, CLONE_NEWUSER);
	attempt("clone(CLONE_NEWUSER|CLONE_NEWPID)", a_clone_flags, CLONE_NEWUSER | CLONE_NEWPID);
	attempt("clone(CLONE_NEWNET)", a_clone_flags, CLONE_NEWNET);
	attempt("clone(CLONE_NEWNS)", a_clone_flags, CLONE_NEWNS);
}

static long a_clone3(long flags)
{
	struct clone_args ca;
	memset(&ca, 0, sizeof ca);
	ca.flags = (uint64_t)flags;
	ca.exit_signal = SIGCHLD;
	long r = syscall(__NR_clone3, &ca, sizeof ca);
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	return r;
}

static void g_clone3(void)
{
	attempt("clone3(CLONE_NEWUSER)", a_clone3, CLONE_NEWUSER);
	attempt("clone3(CLONE_NEWPID)", a_clone3, CLONE_NEWPID);
	attempt("clone3(CLONE_NEWNS)", a_clone3, CLONE_NEWNS);
}

/* ---- identity ---- */
static long a_setuid0(long a) { (void)a; return setuid(0); }
static long a_setreuid0(long a) { (void)a; return setreuid(0, 0); }
static long a_setresuid0(long a) { (void)a; return setresuid(0, 0, 0); }
static long a_setgid0(long a) { (void)a; return setgid(0); }
static long a_setresgid0(long a) { (void)a; return setresgid(0, 0, 0); }
static long a_setgroups0(long a) { (void)a; gid_t g = 0; return setgroups(1, &g); }
static long a_setfsuid0(long a)
{
	(void)a;
	setfsuid(0);
	if ((int)setfsuid((uid_t)-1) == 0)
		return 0;
	errno = EPERM;
	return -1;
}
static long a_ambient(long a)
{
	(void)a;
	return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 21 /* CAP_SYS_ADMIN */, 0, 0);
}
static long a_capset(long a)
{
	(void)a;
	struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
	struct { uint32_t eff, perm, inh; } data[2];
	memset(data, 0xff, sizeof data);
	return syscall(SYS_capset, &hdr, data);
}

static void g_setuid(void)
{
	info("ids: uid=%d euid=%d gid=%d egid=%d", (int)getuid(), (int)geteuid(), (int)getgid(), (int)getegid());
	attempt("setuid(0)", a_setuid0, 0);
	attempt("setreuid(0, 0)", a_setreuid0, 0);
	attempt("setresuid(0, 0, 0)", a_setresuid0, 0);
	attempt("setgid(0)", a_setgid0, 0);
	attempt("setresgid(0, 0, 0)", a_setresgid0, 0);
	attempt("setgroups([0])", a_setgroups0, 0);
	attempt("setfsuid(0)", a_setfsuid0, 0);
	attempt("capset(all)", a_capset, 0);
	attempt("prctl(PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN)", a_ambient, 0);
}

/* ---- devices ---- */
static long a_mknod(long which)
{
	switch (which) {
	case 0: return mknod("/tmp/gv_null", S_IFCHR | 0666, makedev(1, 3));
	case 1: return mknod("gv_mem", S_IFCHR | 0666, makedev(1, 1)); /* in the work dir */
	default: return mknod("/tmp/gv_sda", S_IFBLK | 0666, makedev(8, 0));
	}
}

static void g_mknod(void)
{
	attempt("mknod(/tmp/gv_null, char 1:3)", a_mknod, 0);
	attempt("mknod(./gv_mem, char 1:1)", a_mknod, 1);
	attempt("mknod(/tmp/gv_sda, block 8:0)", a_mknod, 2);
	unlink("/tmp/gv_null");
	unlink("gv_mem");
	unlink("/tmp/gv_sda");
}

/* ---- kernel modules, kexec, reboot, swap, I/O ports ---- */
static long a_init_module(long a) { (void)a; return syscall(SYS_init_module, NULL, 0, ""); }
static long a_finit_module(long a) { (void)a; return syscall(SYS_finit_module, 0, "", 0); }
static long a_delete_module(long a) { (void)a; return syscall(SYS_delete_module, "ext4", O_NONBLOCK); }

static void g_modules(void)
{
	attempt("init_module", a_init_module, 0);
	attempt("finit_module", a_finit_module, 0);
	attempt("delete_module(ext4)", a_delete_module, 0);
}

static long a_kexec_load(long a) { (void)a; return syscall(SYS_kexec_load, 0, 0, NULL, 0); }
static long a_kexec_file_load(long a) { (void)a; return syscall(SYS_kexec_file_load, -1, -1, 0, "", 2); }

static void g_kexec(void)
{
	attempt("kexec_load", a_kexec_load, 0);
	attempt("kexec_file_load", a_kexec_file_load, 0);
}

/* CAD_OFF: the most harmless command reboot(2) has. */
static long a_reboot(long a)
{
	(void)a;
	return syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2, LINUX_REBOOT_CMD_CAD_OFF, 0);
}

static void g_reboot(void) { attempt("reboot(LINUX_REBOOT_CMD_CAD_OFF)", a_reboot, 0); }

static long a_swapon(long a) { (void)a; return syscall(SYS_swapon, "/tmp/gv_swap", 0); }
static long a_swapoff(long a) { (void)a; return syscall(SYS_swapoff, "/tmp/gv_swap"); }

static void g_swapon(void)
{
	int fd = open("/tmp/gv_swap", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		static char zero[65536];
		if (write(fd, zero, sizeof zero) < 0)
			info("write /tmp/gv_swap: %s", strerror(errno));
		close(fd);
	}
	attempt("swapon(/tmp/gv_swap)", a_swapon, 0);
	attempt("swapoff(/tmp/gv_swap)", a_swapoff, 0);
	unlink("/tmp/gv_swap");
}

/* If either succeeds the probe does no port I/O: success alone is the escape. */
static long a_iopl(long a) { (void)a; return syscall(SYS_iopl, 3); }
static long a_ioperm(long a) { (void)a; return syscall(SYS_ioperm, 0x80, 1, 1); }

static void g_ioperm(void)
{
	attempt("iopl(3)", a_iopl, 0);
	attempt("ioperm(0x80, 1, 1)", a_ioperm, 0);
}

static long a_chroot(long path) { return chroot((const char *)path); }

static void g_chroot(void)
{
	attempt("chroot(/tmp)", a_chroot, (long)"/tmp");
	attempt("chroot(/)", a_chroot, (long)"/");
}

static long a_pivot_root(long a)
{
	(void)a;
	mkdir("/tmp/gv_pr", 0700);
	mkdir("/tmp/gv_pr/old", 0700);
	return syscall(SYS_pivot_root, "/tmp/gv_pr", "/tmp/gv_pr/old");
}
static long a_pivot_root_dot(long a) { (void)a; return syscall(SYS_pivot_root, ".", "."); }

static void g_pivot_root(void)
{
	attempt("pivot_root(/tmp/gv_pr, /tmp/gv_pr/old)", a_pivot_root, 0);
	attempt("pivot_root(., .)", a_pivot_root_dot, 0);
	rmdir("/tmp/gv_pr/old");
	rmdir("/tmp/gv_pr");
}

/* ---- newer kernel surface ---- */
static long a_bpf_map(long a)
{
	(void)a;
	union bpf_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	return syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
}
static long a_bpf_prog(long a)
{
	(void)a;
	struct bpf_insn insns[2];
	memset(insns, 0, sizeof insns);
	insns[0].code = 0xb7; /* BPF_ALU64 | BPF_MOV | BPF_K: r0 = 0 */
	insns[1].code = 0x95; /* BPF_JMP | BPF_EXIT */
	union bpf_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insn_cnt = 2;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	return syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
}

static void g_bpf(void)
{
	attempt("bpf(BPF_MAP_CREATE)", a_bpf_map, 0);
	attempt("bpf(BPF_PROG_LOAD)", a_bpf_prog, 0);
}

static long a_io_uring(long a)
{
	(void)a;
	static char params[256]; /* struct io_uring_params, zeroed */
	return syscall(__NR_io_uring_setup, 4, params);
}

static void g_io_uring(void) { attempt("io_uring_setup(4)", a_io_uring, 0); }

static long a_add_key(long a)
{
	(void)a;
	return syscall(SYS_add_key, "user", "gavelprobe", "x", 1, KEY_SPEC_PROCESS_KEYRING);
}
static long a_keyctl(long a)
{
	(void)a;
	return syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "gavelprobe");
}
static long a_request_key(long a)
{
	(void)a;
	return syscall(SYS_request_key, "user", "gavelprobe", NULL, 0);
}

static void g_keyctl(void)
{
	attempt("add_key(user)", a_add_key, 0);
	attempt("keyctl(KEYCTL_JOIN_SESSION_KEYRING)", a_keyctl, 0);
	attempt("request_key(user)", a_request_key, 0);
}

static long a_userfaultfd(long a) { (void)a; return syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK); }
static long a_dev_userfaultfd(long a) { (void)a; return open("/dev/userfaultfd", O_RDWR | O_CLOEXEC); }

static void g_userfaultfd(void)
{
	attempt("userfaultfd()", a_userfaultfd, 0);
	attempt("open(/dev/userfaultfd)", a_dev_userfaultfd, 0);
}

static long a_perf(long hw)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	attr.config = hw ? PERF_COUNT_HW_INSTRUCTIONS : PERF_COUNT_SW_CPU_CLOCK;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static void g_perf_event(void)
{
	attempt("perf_event_open(software)", a_perf, 0);
	attempt("perf_event_open(hardware)", a_perf, 1);
}

/* ---- other ABIs: the allowlist must not be bypassable through the i386
 * (int $0x80) or x32 syscall tables. Even a harmless call that works there
 * shows the filter does not pin the architecture. ---- */
static sigjmp_buf int80_fault;

static void int80_on_segv(int sig)
{
	(void)sig;
	siglongjmp(int80_fault, 1);
}

/* A host without i386 emulation (ia32_emulation=0, or a platform that does
 * not route the gate) answers int $0x80 with SIGSEGV: no i386 table is
 * reachable at all, which is the refusal this group looks for, so it reads
 * as ENOSYS rather than ending the probe. */
static long int80(long nr, long a1, long a2, long a3)
{
	struct sigaction on_segv = { .sa_handler = int80_on_segv }, before;
	sigemptyset(&on_segv.sa_mask);
	if (sigaction(SIGSEGV, &on_segv, &before) != 0)
		return -EINVAL;
	volatile long ret = -ENOSYS;
	if (sigsetjmp(int80_fault, 1) == 0) {
		long r;
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a1), "c"(a2), "d"(a3) : "memory");
		ret = r;
	} else {
		info("int $0x80 nr %ld raised SIGSEGV: no i386 entry on this host", nr);
	}
	sigaction(SIGSEGV, &before, NULL);
	return ret;
}

/* i386 getuid32 (199) / getuid (24): the i386 table was used only if the
 * answer is our uid. gVisor reads int $0x80 with the 64-bit numbers (24 is
 * sched_yield there, 199 fremovexattr), which the filter also sees as
 * 64-bit: consistent, so not a bypass. */
static long a_int80_getuid(long nr)
{
	long r = int80(nr, 0, 0, 0);
	if (r == (long)getuid())
		return r;
	info("int $0x80 nr %ld returned %ld: not the i386 getuid", nr, r);
	errno = r < 0 && r > -4096 ? (int)-r : EINVAL;
	return -1;
}

static long a_int80(long nr)
{
	long arg = nr == 310 ? CLONE_NEWUSER : 0; /* 310: i386 unshare */
	return raw_ret(int80(nr, arg, 0, 0));
}

/* i386 exit(42): succeeds only if the grandchild ends with status 42. */
static long a_int80_exit(long a)
{
	(void)a;
	pid_t pid = fork();
	if (pid < 0) {
		/* No fork: exit(42) from this process if the call goes through,
		 * which the driver sees as exit code 42 right after the TRY line. */
		long r = int80(1, 42, 0, 0);
		return raw_ret(r < 0 ? r : -ENOSYS);
	}
	if (pid == 0) {
		int80(1, 42, 0, 0);
		_exit(7); /* int $0x80 returned: the call was refused */
	}
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 42)
		return 0;
	if (WIFSIGNALED(st))
		info("int $0x80 exit: killed by signal %d", WTERMSIG(st));
	errno = ENOSYS;
	return -1;
}

static void g_int80(void)
{
	attempt("int $0x80 getuid32 (199)", a_int80_getuid, 199);
	attempt("int $0x80 getuid (24)", a_int80_getuid, 24);
	attempt("int $0x80 unshare(CLONE_NEWUSER) (310)", a_int80, 310);
	attempt("int $0x80 exit(42) (1)", a_int80_exit, 0);
}

static long a_x32(long nr)
{
	long arg = (nr & ~X32_BIT) == SYS_unshare ? CLONE_NEWUSER : 0;
	return syscall(nr, arg, 0, 0);
}

static void g_x32(void)
{
	attempt("x32 getuid", a_x32, SYS_getuid | X32_BIT);
	attempt("x32 getpid", a_x32, SYS_getpid | X32_BIT);
	attempt("x32 unshare(CLONE_NEWUSER)", a_x32, SYS_unshare | X32_BIT);
}

/* ---- the "shocker" escape: open a file by handle, bypassing paths ---- */
static long a_open_by_handle(long a)
{
	(void)a;
	struct {
		struct file_handle fh;
		unsigned char bytes[8];
	} h;
	memset(&h, 0, sizeof h);
	h.fh.handle_bytes = 8;
	h.fh.handle_type = 1; /* FILEID_INO32_GEN */
	h.bytes[0] = 2;       /* inode 2: the root of an ext filesystem */
	int mfd = open("/", O_RDONLY | O_DIRECTORY);
	if (mfd < 0)
		return -1;
	return open_by_handle_at(mfd, &h.fh, O_RDONLY);
}

static void g_open_by_handle(void) { attempt("open_by_handle_at(inode 2)", a_open_by_handle, 0); }

/* ---- assorted CAP_SYS_* operations ---- */
static long a_clock_settime(long a)
{
	(void)a;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return clock_settime(CLOCK_REALTIME, &ts);
}
static long a_sethostname(long a) { (void)a; return sethostname("gavelprobe", 10); }
static long a_acct(long a) { (void)a; return syscall(SYS_acct, "/tmp/gv_acct"); }
static long a_fanotify(long a) { (void)a; return syscall(SYS_fanotify_init, 0, O_RDONLY); }
static long a_nnp_off(long a)
{
	(void)a;
	if (prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0) < 0)
		return -1;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0)
		return 0;
	errno = EPERM;
	return -1;
}
static long a_vhangup(long a) { (void)a; return syscall(SYS_vhangup); }
static long a_quotactl(long a) { (void)a; return syscall(SYS_quotactl, 0x800002 /* Q_GETQUOTA */, "/", 0, NULL); }
/* Real-time scheduling: the policy allows sched_setscheduler to
 * SCHED_OTHER only (libzmq sets what its threads already have). */
static long a_sched_policy(long policy)
{
	struct sched_param sp = { .sched_priority = policy == SCHED_IDLE ? 0 : 1 };
	return sched_setscheduler(0, (int)policy, &sp);
}

static void g_privileged_misc(void)
{
	attempt("clock_settime(CLOCK_REALTIME)", a_clock_settime, 0);
	attempt("sethostname", a_sethostname, 0);
	attempt("acct(/tmp/gv_acct)", a_acct, 0);
	attempt("fanotify_init", a_fanotify, 0);
	attempt("prctl(PR_SET_NO_NEW_PRIVS, 0)", a_nnp_off, 0);
	attempt("vhangup", a_vhangup, 0);
	attempt("quotactl(Q_GETQUOTA, /)", a_quotactl, 0);
	attempt("sched_setscheduler(SCHED_FIFO, 1)", a_sched_policy, SCHED_FIFO);
	attempt("sched_setscheduler(SCHED_RR, 1)", a_sched_policy, SCHED_RR);
	attempt("sched_setscheduler(SCHED_IDLE)", a_sched_policy, SCHED_IDLE);
}

static const struct {
	const char *name;
	void (*run)(void);
} groups[] = {
	{ "ptrace", g_ptrace },
	{ "mount", g_mount },
	{ "umount", g_umount },
	{ "unshare", g_unshare },
	{ "setns", g_setns },
	{ "clone_ns", g_clone_ns },
	{ "clone3", g_clone3 },
	{ "setuid", g_setuid },
	{ "mknod", g_mknod },
	{ "modules", g_modules },
	{ "kexec", g_kexec },
	{ "reboot", g_reboot },
	{ "swapon", g_swapon },
	{ "ioperm", g_ioperm },
	{ "chroot", g_chroot },
	{ "pivot_root", g_pivot_root },
	{ "bpf", g_bpf },
	{ "io_uring", g_io_uring },
	{ "keyctl", g_keyctl },
	{ "userfaultfd", g_userfaultfd },
	{ "perf_event", g_perf_event },
	{ "int80", g_int80 },
	{ "x32", g_x32 },
	{ "open_by_handle", g_open_by_handle },
	{ "privileged_misc", g_privileged_misc },
};

int main(void)
{
	char params[1024], in[64];
	probe_params(params, sizeof params);
	if (param(params, "GROUP", in, sizeof in) < 0) {
		snprintf(in, sizeof in, "%.63s", params);
		in[strcspn(in, " \r\n")] = 0;
	}
	int ran = 0;
	for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
		if (strcmp(in, "all") == 0 || strcmp(in, groups[i].name) == 0) {
			info("group %s", groups[i].name);
			groups[i].run();
			ran++;
		}
	}
	if (!ran) {
		printf("unknown group '%s'\n", in);
		return 2;
	}
	return finish();
}
