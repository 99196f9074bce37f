/* The OCI bundle of one sandbox. exec_bundle_config is a pure function from
 * parameters to config.json so that every property the security model relies
 * on is checked by unit tests: gavel-init as uid 0 of gVisor's user
 * namespace with exactly six capabilities (SETUID, SETGID, SETPCAP, KILL,
 * FOWNER, DAC_OVERRIDE; none inheritable or ambient) and noNewPrivileges,
 * so that the programs it drops to uid 65534 hold none; a read-only root;
 * the mount list. The write functions lay out the skeleton root and the
 * generated /etc with dirfds and O_NOFOLLOW only. */
#include "executor/sandbox/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "languages/lang.h"
#include "languages/lang_pch.h"

/* The process environment inside, exactly. Nothing of the host's. */
static const char *const sandbox_env[] = {
	"PATH=/usr/bin:/bin",
	"LANG=C.UTF-8",
	"HOME=/tmp",
};

/* Allowlist of the OCI seccomp filter that gVisor applies (with
 * --oci-seccomp) to gavel-init and everything below it. It is the outer,
 * coarse layer: what init, compilers, interpreters and JVMs need. gavel-init
 * applies its own, stricter filter to the user program. Deliberately absent:
 * mount/umount2/pivot_root/chroot/unshare/setns (namespace and mount games),
 * ptrace/process_vm_*, bpf, perf_event_open, userfaultfd, io_uring_*,
 * keyctl/add_key/request_key, kexec_*, *_module, reboot, swapon/off, acct,
 * quotactl, syslog, personality, settimeofday/clock_settime/clock_adjtime,
 * sethostname/setdomainname, open_by_handle_at/name_to_handle_at, vhangup,
 * fanotify_init, kcmp. Denied calls fail with EPERM. */
static const char *const seccomp_allow[] = {
	"accept", "accept4", "access", "alarm", "arch_prctl", "bind", "brk",
	"capget", "capset", "chdir", "chmod", "chown", "clock_getres",
	"clock_gettime", "clock_nanosleep", "clone", "clone3", "close",
	"close_range", "connect", "copy_file_range", "creat", "dup", "dup2",
	"dup3", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait",
	"epoll_pwait2", "epoll_wait", "eventfd", "eventfd2", "execve",
	"execveat", "exit", "exit_group", "faccessat", "faccessat2",
	"fadvise64", "fallocate", "fchdir", "fchmod", "fchmodat", "fchown",
	"fchownat", "fcntl", "fdatasync", "fgetxattr", "flistxattr", "flock",
	"fork", "fremovexattr", "fsetxattr", "fstat", "fstatfs", "fsync",
	"ftruncate", "futex", "futimesat", "get_mempolicy", "get_robust_list",
	"getcpu", "getcwd", "getdents", "getdents64", "getegid", "geteuid",
	"getgid", "getgroups", "getitimer", "getpeername", "getpgid",
	"getpgrp", "getpid", "getppid", "getpriority", "getrandom",
	"getresgid", "getresuid", "getrlimit", "getrusage", "getsid",
	"getsockname", "getsockopt", "gettid", "gettimeofday", "getuid",
	"getxattr", "inotify_add_watch", "inotify_init", "inotify_init1",
	"inotify_rm_watch", "io_cancel", "io_destroy", "io_getevents",
	"io_setup", "io_submit", "ioctl", "kill", "lchown", "lgetxattr",
	"link", "linkat", "listen", "listxattr", "llistxattr", "lremovexattr",
	"lseek", "lsetxattr", "lstat", "madvise", "mbind", "membarrier",
	"memfd_create", "mincore", "mkdir", "mkdirat", "mknod", "mknodat",
	"mlock", "mlock2", "mlockall", "mmap", "mprotect", "mremap",
	"msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock",
	"munlockall", "munmap", "nanosleep", "newfstatat", "open", "openat",
	"pause", "pidfd_open", "pipe", "pipe2", "poll", "ppoll", "prctl",
	"pread64", "preadv", "preadv2", "prlimit64", "pselect6", "pwrite64",
	"pwritev", "pwritev2", "read", "readahead", "readlink", "readlinkat",
	"readv", "recvfrom", "recvmmsg", "recvmsg", "removexattr", "rename",
	"renameat", "renameat2", "restart_syscall", "rmdir", "rseq",
	"rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
	"rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
	"rt_tgsigqueueinfo", "sched_get_priority_max",
	"sched_get_priority_min", "sched_getaffinity", "sched_getparam",
	"sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity",
	"sched_setparam", "sched_setscheduler", "sched_yield", "seccomp",
	"select", "semctl", "semget", "semop", "semtimedop", "sendfile",
	"sendmmsg", "sendmsg", "sendto", "set_mempolicy", "set_robust_list",
	"set_tid_address", "setfsgid", "setfsuid", "setgid", "setgroups",
	"setitimer", "setpgid", "setpriority", "setregid", "setresgid",
	"setresuid", "setreuid", "setrlimit", "setsid", "setsockopt",
	"setuid", "setxattr", "shmat", "shmctl", "shmdt", "shmget",
	"shutdown", "sigaltstack", "signalfd", "signalfd4", "socket",
	"socketpair", "splice", "stat", "statfs", "statx", "symlink",
	"symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo", "tee",
	"tgkill", "time", "timer_create", "timer_delete", "timer_getoverrun",
	"timer_gettime", "timer_settime", "timerfd_create", "timerfd_gettime",
	"timerfd_settime", "times", "tkill", "truncate", "umask", "uname",
	"unlink", "unlinkat", "utime", "utimensat", "utimes", "vfork",
	"vmsplice", "wait4", "waitid", "write", "writev",
};

static json_t *str_array(const char *const *v, size_t n)
{
	json_t *a = json_array();
	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (json_array_append_new(a, json_string(v[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* One mount entry. Every bind is nosuid+nodev: nothing the sandbox can
 * reach through a mount can raise privileges or open a host device. */
static json_t *mount_entry(const char *dest, const char *type, const char *src,
			   const char *const *opts, size_t nopts)
{
	return json_pack("{s:s, s:s, s:s, s:o}", "destination", dest, "type", type,
			 "source", src, "options", str_array(opts, nopts));
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The mount list. Security argument: the root itself is a read-only
 * skeleton with nothing in it; the only host paths visible are the
 * toolchain folders of /usr (public software from the distribution,
 * read-only; never /usr/local, where sites keep their own configuration
 * and package managers' tokens), a generated /etc (no host secrets: only
 * passwd/group/hosts/nsswitch/ld.so.cache), the JVM's read-only config dirs,
 * gavel-init (read-only) and the job's own work dir. /tmp is a size-capped
 * tmpfs held in the Sentry's memory (so charged to the sandbox memcg). /sys
 * is not mounted at all; /proc is gVisor's own emulation; /dev is gVisor's
 * minimal device set (null, zero, full, random, urandom, tty, ptmx). */
static json_t *build_mounts(const struct exec_bundle_params *p)
{
	static const char *const ro[] = {"bind", "ro", "nosuid", "nodev"};
	static const char *const rw[] = {"bind", "rw", "nosuid", "nodev"};
	static const char *const proc_opts[] = {"nosuid", "noexec", "nodev"};
	char tmp_opts0[96];
	snprintf(tmp_opts0, sizeof(tmp_opts0), "size=%" PRIu64, p->tmp_size_bytes);
	const char *tmp_opts[] = {"nosuid", "nodev", "mode=1777", tmp_opts0};

	json_t *m = json_array();
	if (!m)
		return NULL;
	int rc = 0;
	rc |= json_array_append_new(m, mount_entry("/proc", "proc", "proc", proc_opts, N(proc_opts)));
	for (size_t i = 0; p->usr_dirs && p->usr_dirs[i]; i++)
		rc |= json_array_append_new(m, mount_entry(p->usr_dirs[i], "bind", p->usr_dirs[i], ro, N(ro)));
	rc |= json_array_append_new(m, mount_entry("/etc", "bind", p->etc_path, ro, N(ro)));
	for (size_t i = 0; p->etc_binds && p->etc_binds[i]; i++)
		rc |= json_array_append_new(m, mount_entry(p->etc_binds[i], "bind", p->etc_binds[i], ro, N(ro)));
	if (p->pch_path)
		rc |= json_array_append_new(m, mount_entry(LANG_PCH_MOUNT, "bind", p->pch_path, ro, N(ro)));
	rc |= json_array_append_new(m, mount_entry("/tmp", "tmpfs", "tmpfs", tmp_opts, N(tmp_opts)));
	rc |= json_array_append_new(m, mount_entry("/box", "bind", p->box_path, rw, N(rw)));
	rc |= json_array_append_new(m, mount_entry("/gavel-init", "bind", p->init_path, ro, N(ro)));
	if (rc != 0) {
		json_decref(m);
		return NULL;
	}
	return m;
}

static json_t *rlimit(const char *type, uint64_t v)
{
	return json_pack("{s:s, s:I, s:I}", "type", type, "hard", (json_int_t)v, "soft", (json_int_t)v);
}

/* Process rlimits: a backstop under gavel-init's own per-program limits.
 * RLIMIT_CPU is ignored by this runsc (init sets it inside), so it is not
 * relied on here; NOFILE, NPROC (enforced by gVisor per uid), FSIZE, CORE
 * and MEMLOCK bound what even init's children can do. */
static json_t *build_rlimits(const struct exec_bundle_params *p)
{
	json_t *a = json_array();
	if (!a)
		return NULL;
	int rc = 0;
	rc |= json_array_append_new(a, rlimit("RLIMIT_NOFILE", p->nofile));
	rc |= json_array_append_new(a, rlimit("RLIMIT_NPROC", p->nproc));
	rc |= json_array_append_new(a, rlimit("RLIMIT_FSIZE", p->fsize_bytes));
	rc |= json_array_append_new(a, rlimit("RLIMIT_CORE", 0));
	rc |= json_array_append_new(a, rlimit("RLIMIT_MEMLOCK", 64 * 1024));
	if (rc != 0) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *build_seccomp(void)
{
	json_t *names = str_array(seccomp_allow, N(seccomp_allow));
	return json_pack("{s:s, s:[s], s:[{s:o, s:s}]}",
			 "defaultAction", "SCMP_ACT_ERRNO",
			 "architectures", "SCMP_ARCH_X86_64",
			 "syscalls", "names", names, "action", "SCMP_ACT_ALLOW");
}

static int check_params(const struct exec_bundle_params *p, struct gv_err *err)
{
	if (!p->hostname || !p->cgroups_path || !p->init_path || !p->etc_path || !p->box_path)
		return gv_err_set(err, GV_EINVAL, "bundle: missing path parameter");
	if (p->cgroups_path[0] != '/' || p->init_path[0] != '/' || p->etc_path[0] != '/' ||
	    p->box_path[0] != '/')
		return gv_err_set(err, GV_EINVAL, "bundle: paths must be absolute");
	if (p->memory_limit_bytes == 0 || p->tmp_size_bytes == 0)
		return gv_err_set(err, GV_EINVAL, "bundle: memory and tmpfs limits are required");
	if (p->pids_limit < EXEC_BUNDLE_MIN_PIDS)
		return gv_err_set(err, GV_EINVAL, "bundle: pids limit %" PRIu64 " below %d panics the Sentry",
				  p->pids_limit, EXEC_BUNDLE_MIN_PIDS);
	if (p->nofile == 0 || p->nproc == 0 || p->fsize_bytes == 0)
		return gv_err_set(err, GV_EINVAL, "bundle: rlimit backstops are required");
	if (p->cpu_quota_us && !p->cpu_period_us)
		return gv_err_set(err, GV_EINVAL, "bundle: cpu quota without period");
	if (p->gpu_visible) {
		size_t n = strlen(p->gpu_visible);
		if (n == 0 || n > EXEC_GPU_IDS_TEXT_MAX || strspn(p->gpu_visible, "0123456789,") != n)
			return gv_err_set(err, GV_EINVAL, "bundle: GPU ids must be digits and commas");
	}
	if (p->n_gpu_nodes && (!p->gpu_visible || !p->gpu_nodes || p->n_gpu_nodes > EXEC_GPU_NODES_MAX))
		return gv_err_set(err, GV_EINVAL, "bundle: GPU device nodes without GPU ids");
	if (p->netns_path && (strncmp(p->netns_path, "/run/netns/", 11) != 0 || strlen(p->netns_path) > 64 ||
			      strchr(p->netns_path + 11, '/') || p->netns_path[11] == '\0' ||
			      p->netns_path[11] == '.'))
		return gv_err_set(err, GV_EINVAL, "bundle: network namespace must be /run/netns/<name>");
	if (p->memory_limit_bytes > INT64_MAX || p->tmp_size_bytes > INT64_MAX ||
	    p->fsize_bytes > INT64_MAX || p->pids_limit > INT64_MAX)
		return gv_err_set(err, GV_EINVAL, "bundle: limit out of range");
	return 0;
}

/* The constant environment, plus NVIDIA_VISIBLE_DEVICES for a GPU job
 * (checked to be digits and commas by check_params). */
static json_t *build_env(const struct exec_bundle_params *p)
{
	json_t *env = str_array(sandbox_env, N(sandbox_env));
	if (env && p->gpu_visible) {
		char v[32 + EXEC_GPU_IDS_TEXT_MAX];
		snprintf(v, sizeof(v), "NVIDIA_VISIBLE_DEVICES=%s", p->gpu_visible);
		if (json_array_append_new(env, json_string(v)) != 0) {
			json_decref(env);
			return NULL;
		}
	}
	return env;
}

/* linux.devices: exactly the assigned GPUs and their control nodes. */
static json_t *gpu_devices(const struct exec_bundle_params *p)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < p->n_gpu_nodes; i++) {
		const struct exec_gpu_node *d = &p->gpu_nodes[i];
		if (json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:I, s:i, s:i, s:i}", "path", d->path, "type",
							"c", "major", (json_int_t)d->major, "minor",
							(json_int_t)d->minor, "fileMode", (int)d->mode, "uid", 0,
							"gid", 0)) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* linux.resources.devices: deny everything, then allow those nodes. */
static json_t *gpu_device_rules(const struct exec_bundle_params *p)
{
	json_t *a = json_pack("[{s:b, s:s}]", "allow", 0, "access", "rwm");
	for (size_t i = 0; a && i < p->n_gpu_nodes; i++) {
		const struct exec_gpu_node *d = &p->gpu_nodes[i];
		if (json_array_append_new(a, json_pack("{s:b, s:s, s:I, s:I, s:s}", "allow", 1, "type", "c",
							"major", (json_int_t)d->major, "minor", (json_int_t)d->minor,
							"access", "rw")) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The capabilities of gavel-init (see the security argument below); the
 * programs it starts hold none. */
const char *const exec_bundle_init_caps[EXEC_BUNDLE_INIT_NCAPS] = {
	"CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL", "CAP_FOWNER", "CAP_DAC_OVERRIDE",
};

/* Security argument of the spec as a whole: the sandbox's PID 1 is
 * gavel-init, which runs as uid 0 *of gVisor's own user namespace* (the
 * Sentry itself runs unprivileged on the host, as a uid of its own:
 * executor/sandbox/sandbox_uid.h) holding only the six capabilities it needs to
 * supervise: SETUID/SETGID to drop every compiler
 * and program to 65534:65534 before they start, SETPCAP to empty their
 * bounding set first, KILL to end what they leave
 * behind, FOWNER/DAC_OVERRIDE to lock /box and wipe what they wrote. The
 * inheritable and ambient sets are empty and noNewPrivileges is set, so the
 * program, once init has dropped to 65534, holds no capability at all and
 * cannot regain one through execve. Running init under another uid than the
 * program is what keeps the program out of init's pipes to the host:
 * measured on this runsc, a same-uid program opens /proc/1/fd/0 despite
 * PR_SET_DUMPABLE 0. init refuses to run a program if any id is still 0
 * after the drop (fail closed). The environment is built here from
 * constants; every namespace the runtime can create is new (pid, ipc, uts,
 * mount, network; runsc runs with --network=none so the network namespace
 * has loopback only, except for a sandbox granted egress, whose network
 * namespace is its own, made and filtered by executor/sandbox/netpolicy.c, with
 * no route to the host or another sandbox); memory (with swap equal to memory, i.e. no swap), pids
 * and CPU are bounded by the host cgroup the runtime creates at
 * cgroupsPath. */
json_t *exec_bundle_config(const struct exec_bundle_params *p, struct gv_err *err)
{
	if (check_params(p, err) != 0)
		return NULL;
	json_t *empty_caps = json_array();
	json_t *init_caps = str_array(exec_bundle_init_caps, N(exec_bundle_init_caps));
	json_t *caps = json_pack("{s:O, s:O, s:O, s:O, s:O}", "bounding", init_caps, "effective",
				 init_caps, "inheritable", empty_caps, "permitted", init_caps,
				 "ambient", empty_caps);
	json_decref(empty_caps);
	json_decref(init_caps);

	json_t *resources = json_pack(
		"{s:{s:I, s:I}, s:{s:I}}", "memory", "limit", (json_int_t)p->memory_limit_bytes,
		"swap", (json_int_t)p->memory_limit_bytes, "pids", "limit", (json_int_t)p->pids_limit);
	if (resources && p->cpu_quota_us) {
		json_object_set_new(resources, "cpu",
				    json_pack("{s:I, s:I}", "quota", (json_int_t)p->cpu_quota_us,
					      "period", (json_int_t)p->cpu_period_us));
	}

	/* A sandbox with a network of its own gets no network entry: runsc
	 * --network=host then stays in the namespace its spawner joined
	 * before entering the sandbox's user namespace
	 * (executor/sandbox/runsc.h, join_netns), from which it could not join
	 * a host-owned one. */
	json_t *ns = p->netns_path
			     ? json_pack("[{s:s}, {s:s}, {s:s}, {s:s}]", "type", "pid", "type", "ipc", "type",
					 "uts", "type", "mount")
			     : json_pack("[{s:s}, {s:s}, {s:s}, {s:s}, {s:s}]", "type", "pid", "type", "ipc", "type",
					 "uts", "type", "mount", "type", "network");

	if (resources && p->n_gpu_nodes)
		json_object_set_new(resources, "devices", gpu_device_rules(p));

	json_t *linux_ = json_pack("{s:o, s:s, s:o}", "namespaces", ns, "cgroupsPath",
				   p->cgroups_path, "resources", resources);
	if (linux_ && p->n_gpu_nodes)
		json_object_set_new(linux_, "devices", gpu_devices(p));
	if (linux_ && p->seccomp)
		json_object_set_new(linux_, "seccomp", build_seccomp());

	json_t *cfg = json_pack(
		"{s:s, s:s,"
		" s:{s:b, s:{s:i, s:i, s:[]}, s:[s], s:o, s:s, s:o, s:o, s:b},"
		" s:{s:s, s:b}, s:o, s:o}",
		"ociVersion", "1.0.2", "hostname", p->hostname,
		"process", "terminal", 0, "user", "uid", EXEC_BUNDLE_INIT_UID, "gid", EXEC_BUNDLE_INIT_UID,
		"additionalGids", "args", "/gavel-init", "env",
		build_env(p), "cwd", "/box", "capabilities", caps,
		"rlimits", build_rlimits(p), "noNewPrivileges", 1,
		"root", "path", "rootfs", "readonly", 1,
		"mounts", build_mounts(p), "linux", linux_);
	if (!cfg)
		return gv_err_set(err, ENOMEM, "bundle: building config.json failed"), NULL;
	/* json_pack's "o" steals even on failure, but a NULL member makes the
	 * pack fail; check the optional members set with json_object_set_new. */
	json_t *l = json_object_get(cfg, "linux");
	if ((p->n_gpu_nodes && (!json_object_get(l, "devices") ||
				!json_object_get(json_object_get(l, "resources"), "devices"))) ||
	    (p->seccomp && !json_object_get(l, "seccomp")) ||
	    (p->cpu_quota_us && !json_object_get(json_object_get(l, "resources"), "cpu"))) {
		json_decref(cfg);
		return gv_err_set(err, ENOMEM, "bundle: building config.json failed"), NULL;
	}
	return cfg;
}

static int write_file_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
			 struct gv_err *err)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return gv_err_errno(err, "create %s", name);
	if (gv_write_all(fd, data, len) != 0) {
		gv_err_errno(err, "write %s", name);
		close(fd);
		return -1;
	}
	if (fchmod(fd, mode) != 0) {
		gv_err_errno(err, "chmod %s", name);
		close(fd);
		return -1;
	}
	if (close(fd) != 0)
		return gv_err_errno(err, "close %s", name);
	return 0;
}

static int write_str_at(int dirfd, const char *name, const char *s, struct gv_err *err)
{
	return write_file_at(dirfd, name, s, strlen(s), 0644, err);
}

/* Copies the host's /etc/<name> (a trusted, public host file, read with
 * O_NOFOLLOW) into the generated /etc. optional: a missing file is
 * skipped. */
static int copy_etc_file(int etc_fd, const char *name, bool optional, struct gv_err *err)
{
	enum { MAX_FILE = 16 << 20 };
	char path[64];
	snprintf(path, sizeof(path), "/etc/%s", name);
	int in = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0 && optional && errno == ENOENT)
		return 0;
	if (in < 0)
		return gv_err_errno(err, "open %s", path);
	struct stat st;
	if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE) {
		close(in);
		return gv_err_set(err, GV_ESANDBOX, "%s is not a regular file of sane size", path);
	}
	int out = openat(etc_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return gv_err_errno(err, "create etc/%s", name);
	}
	char buf[65536];
	int rc = 0;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = gv_err_errno(err, "read %s", path);
			break;
		}
		if (n == 0)
			break;
		if (gv_write_all(out, buf, (size_t)n) != 0) {
			rc = gv_err_errno(err, "write etc/%s", name);
			break;
		}
	}
	close(in);
	if (fchmod(out, 0644) != 0 && rc == 0)
		rc = gv_err_errno(err, "chmod etc/%s", name);
	if (close(out) != 0 && rc == 0)
		rc = gv_err_errno(err, "close etc/%s", name);
	return rc;
}

/* Creates dir (and missing parents) below dirfd, never following links:
 * used for mount points of the /etc binds inside the generated /etc. */
static int mkdir_p_at(int dirfd, const char *rel, struct gv_err *err)
{
	char buf[256];
	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return gv_err_set(err, GV_EINVAL, "mount point path too long");
	int fd = dup(dirfd);
	if (fd < 0)
		return gv_err_errno(err, "dup");
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0) {
			close(fd);
			return gv_err_set(err, GV_EINVAL, "mount point %s has a dot component", rel);
		}
		if (mkdirat(fd, c, 0755) != 0 && errno != EEXIST) {
			gv_err_errno(err, "mkdir %s", rel);
			close(fd);
			return -1;
		}
		int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return gv_err_errno(err, "open %s", rel);
		fd = next;
	}
	close(fd);
	return 0;
}

/* The skeleton root: empty directories and the merged-/usr symlinks, all
 * created here by us in a fresh directory, so nothing in it comes from
 * outside. It is mounted read-only; the mount points (usr etc tmp box proc
 * dev sys pch, the gavel-init file) exist so that gVisor need not create them.
 * The generated /etc holds no host secret: fixed passwd/group/hosts/
 * nsswitch and a copy of the loader cache. */
int exec_bundle_write_skeleton(int bundle_fd, const char *const *etc_binds, const char *const *usr_dirs,
			       struct gv_err *err)
{
	static const char *const dirs[] = {"usr", "etc", "tmp", "box", "proc", "dev", "sys", LANG_PCH_MOUNT_NAME};
	/* Debian's merged /usr; a link to a folder that is not mounted dangles
	 * harmlessly. */
	static const char *const links[][2] = {
		{"bin", "usr/bin"}, {"lib", "usr/lib"}, {"lib64", "usr/lib64"},
	};
	if (mkdirat(bundle_fd, "rootfs", 0755) != 0)
		return gv_err_errno(err, "mkdir rootfs");
	int root = openat(bundle_fd, "rootfs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0)
		return gv_err_errno(err, "open rootfs");
	int rc = 0;
	for (size_t i = 0; i < N(dirs) && rc == 0; i++)
		if (mkdirat(root, dirs[i], 0755) != 0)
			rc = gv_err_errno(err, "mkdir rootfs/%s", dirs[i]);
	for (size_t i = 0; i < N(links) && rc == 0; i++)
		if (symlinkat(links[i][1], root, links[i][0]) != 0)
			rc = gv_err_errno(err, "symlink rootfs/%s", links[i][0]);
	for (size_t i = 0; rc == 0 && usr_dirs && usr_dirs[i]; i++) {
		if (strncmp(usr_dirs[i], "/usr/", 5) != 0 || strchr(usr_dirs[i] + 5, '/') ||
		    !usr_dirs[i][5] || usr_dirs[i][5] == '.')
			rc = gv_err_set(err, GV_EINVAL, "usr folder %s is not a folder of /usr", usr_dirs[i]);
		else if (mkdirat(root, usr_dirs[i] + 1, 0755) != 0)
			rc = gv_err_errno(err, "mkdir rootfs%s", usr_dirs[i]);
	}
	if (rc == 0)
		rc = write_file_at(root, "gavel-init", "", 0, 0755, err);
	close(root);
	if (rc != 0)
		return rc;

	if (mkdirat(bundle_fd, "etc", 0755) != 0)
		return gv_err_errno(err, "mkdir etc");
	int etc = openat(bundle_fd, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (etc < 0)
		return gv_err_errno(err, "open etc");
	rc = write_str_at(etc, "passwd",
			  "root:x:0:0:root:/root:/usr/sbin/nologin\n"
			  "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", err);
	if (rc == 0)
		rc = write_str_at(etc, "group", "root:x:0:\nnogroup:x:65534:\n", err);
	if (rc == 0)
		rc = write_str_at(etc, "hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n", err);
	if (rc == 0)
		rc = write_str_at(etc, "nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n", err);
	if (rc == 0)
		rc = write_str_at(etc, "hostname", "gavel\n", err);
	if (rc == 0)
		rc = copy_etc_file(etc, "ld.so.cache", false, err); /* the loader finds /usr's libraries */
	if (rc == 0) /* matplotlib's defaults (Debian links mpl-data/matplotlibrc here): notebook kernels */
		rc = copy_etc_file(etc, "matplotlibrc", true, err);
	for (size_t i = 0; rc == 0 && etc_binds && etc_binds[i]; i++) {
		if (strncmp(etc_binds[i], "/etc/", 5) != 0) {
			rc = gv_err_set(err, GV_EINVAL, "etc bind %s is not under /etc", etc_binds[i]);
			break;
		}
		rc = mkdir_p_at(etc, etc_binds[i] + 5, err);
	}
	close(etc);
	return rc;
}

int exec_bundle_write_config(int bundle_fd, json_t *config, struct gv_err *err)
{
	char *s = json_dumps(config, JSON_INDENT(1) | JSON_SORT_KEYS);
	if (!s)
		return gv_err_set(err, ENOMEM, "serialising config.json");
	int rc = write_file_at(bundle_fd, "config.json", s, strlen(s), 0600, err);
	free(s);
	return rc;
}

/* Java needs its config dir, and /usr/bin/java is a link into
 * /etc/alternatives. Both are host directories of public, root-owned
 * package configuration: bound read-only, they leak nothing a tenant could
 * not read from Debian's packages. Binding the alternatives dir (rather than
 * resolving links into the generated /etc) keeps every alternative that
 * /usr links to working. */
/* Stat of a host path that must be a real directory, not a link. */
static bool is_plain_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void exec_bundle_default_etc_binds(const char *out[EXEC_BUNDLE_MAX_ETC_BINDS + 1])
{
	static const char *const candidates[] = {"/etc/java-17-openjdk", "/etc/alternatives"};
	_Static_assert(N(candidates) <= EXEC_BUNDLE_MAX_ETC_BINDS, "too many etc binds");
	size_t n = 0;
	for (size_t i = 0; i < N(candidates); i++)
		if (is_plain_dir(candidates[i]))
			out[n++] = candidates[i];
	out[n] = NULL;
}

/* languages/lang.h says which folders and why. */
void exec_bundle_default_usr_dirs(const char *out[EXEC_BUNDLE_MAX_USR_DIRS + 1])
{
	size_t n = 0;
	for (size_t i = 0; lang_toolchain_dirs[i] && n < EXEC_BUNDLE_MAX_USR_DIRS; i++)
		if (is_plain_dir(lang_toolchain_dirs[i]))
			out[n++] = lang_toolchain_dirs[i];
	out[n] = NULL;
}
