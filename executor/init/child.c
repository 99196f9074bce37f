/* The child of gavel-init's runner, from clone to execve, and the
 * privileges init gives up once at start so that every child inherits
 * their loss.
 *
 * Security argument. The child is created with clone(CLONE_VM|CLONE_VFORK)
 * (what posix_spawn does: no address-space copy, which is costly under
 * gVisor's ptrace platform) and, before execve, only makes raw system calls:
 * new session, the read-only stdin onto fd 0, rlimits, uid drop, then the
 * seccomp filter compiled once by the parent (no_new_privs, RLIMIT_CORE 0,
 * no groups and an empty bounding set it inherits from init, which set them
 * once at start). Every fd of init is O_CLOEXEC but 1 and 2, which are the
 * program's stdout and stderr pipes, so the program inherits exactly fds 0,
 * 1, 2. The environment is built from scratch. */
#include "executor/init/run_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The highest capability number a kernel or gVisor may know; the bounding
 * set is emptied and checked up to it. */
#define INIT_CAP_LAST 63

/* The program's environment: PATH, LANG and HOME, plus NVIDIA_VISIBLE_DEVICES
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

/* gVisor 20221219 serves /proc/<pid>/environ world-readable, straight from
 * the process's memory, whatever its dumpable flag says: every program
 * could read init's. Once init has taken what it needs, the strings are
 * overwritten in place (clearenv would only drop the pointers), so
 * /proc/1/environ reads as NUL bytes. */
static void wipe_own_environment(void)
{
	extern char **environ;
	for (char **e = environ; e && *e; e++)
		explicit_bzero(*e, strlen(*e));
	environ = NULL;
}

void init_child_env_init(void)
{
	const char *v = getenv("NVIDIA_VISIBLE_DEVICES");
	size_t n = v ? strlen(v) : 0;
	if (n > 0 && n < sizeof(gpu_env) - sizeof("NVIDIA_VISIBLE_DEVICES=") && strspn(v, "0123456789,") == n) {
		snprintf(gpu_env, sizeof(gpu_env), "NVIDIA_VISIBLE_DEVICES=%s", v);
		clean_envp[3] = gpu_env;
	}
	wipe_own_environment();
}

char *const *init_child_envp(void)
{
	return clean_envp;
}

void init_child_rlimits(const struct init_run_spec *spec, struct init_child_rlimits *rl)
{
	const struct init_limits *lim = spec->lim;
	rlim_t cpu_s = (rlim_t)((lim->cpu_ms + 999) / 1000) + 1;
	rl->cpu = (struct rlimit){ cpu_s, cpu_s + 1 };
	rl->nproc = spec->single_process && lim->procs < INIT_SINGLE_PROCESS_TASKS ? INIT_SINGLE_PROCESS_TASKS
										   : lim->procs;
}

static _Noreturn void child_fail(struct init_child_args *a, int stage, int e)
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

int init_child_main(void *arg)
{
	struct init_child_args *a = arg;
	const struct init_limits *lim = a->spec->lim;
	sigset_t none;
	sigemptyset(&none);
	/* Every disposition is already the default (init blocks signals, it
	 * ignores none): unblocking is all that is left to do. */
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || setsid() < 0)
		child_fail(a, INIT_STAGE_SETUP, errno);
	/* Stdout and stderr are already fds 1 and 2 (init_runner_open). */
	if (dup2(a->spec->stream ? a->spec->stream->stdin_fd : a->r->in_ro, 0) < 0 ||
	    (a->spec->stderr_to_stdout && dup2(1, 2) < 0) || (a->spec->cwd && chdir(a->spec->cwd) < 0))
		child_fail(a, INIT_STAGE_SETUP, errno);
	if (setrlimit(RLIMIT_CPU, &a->rl_cpu) < 0 ||
	    set_limit(RLIMIT_NOFILE, lim->open_files) < 0 ||
	    set_limit(RLIMIT_NPROC, a->nproc) < 0 ||
	    set_limit(RLIMIT_FSIZE, lim->fsize_kb * 1024) < 0 ||
	    (lim->stack_kb && set_limit(RLIMIT_STACK, lim->stack_kb * 1024) < 0) ||
	    (a->set_as && setrlimit(RLIMIT_AS, &a->rl_as) < 0))
		child_fail(a, INIT_STAGE_RLIMIT, errno);
	/* Privilege drop in the fixed order: gid, uid, then verify. Raw
	 * syscalls: they must change this task only, not every thread of the
	 * address space as glibc's setxid broadcast would. */
	if (a->spec->drop_to_sandbox_uid) {
		/* The bounding set is already empty and the supplementary groups
		 * too: init emptied its own (init_empty_bounding_set,
		 * init_drop_groups) and clone copied them here. */
		if (syscall(SYS_setresgid, INIT_SANDBOX_GID, INIT_SANDBOX_GID, INIT_SANDBOX_GID) < 0 ||
		    syscall(SYS_setresuid, INIT_SANDBOX_UID, INIT_SANDBOX_UID, INIT_SANDBOX_UID) < 0)
			child_fail(a, INIT_STAGE_SETUID, errno);
		uid_t ru, eu, su;
		gid_t rg, eg, sg;
		if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 ||
		    ru == 0 || eu == 0 || su == 0 || rg == 0 || eg == 0 || sg == 0)
			child_fail(a, INIT_STAGE_SETUID, EPERM);
	}
	int rc = init_seccomp_load(a->spec->bpf);
	if (rc < 0)
		child_fail(a, INIT_STAGE_SECCOMP, -rc);
	int e = ENOENT;
	for (int i = 0; i < a->npaths; i++) {
		execve(a->paths[i], a->spec->argv, clean_envp);
		if (errno != ENOENT || i == 0)
			e = errno;
		if (errno != ENOENT && errno != ENOTDIR)
			break;
	}
	child_fail(a, INIT_STAGE_EXEC, e);
}

/* Security argument: with an empty bounding set nothing a child of init
 * execs can ever hold a capability, whatever its uid. Done once in init
 * (which needs CAP_SETPCAP for it) rather than in every child: init never
 * execs, so its effective and permitted sets, which it still needs, are
 * untouched; every child inherits the empty set through clone, and a
 * bounding set can never grow again. INIT_CAP_LAST covers every capability
 * a kernel or gVisor knows; EINVAL marks those past the last. Verified after. */
int init_empty_bounding_set(struct gv_err *err)
{
	for (int cap = 0; cap <= INIT_CAP_LAST; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return gv_err_errno(err, "PR_CAPBSET_DROP %d", cap);
	for (int cap = 0; cap <= INIT_CAP_LAST; cap++)
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

int init_child_resolve_paths(struct init_child_args *a, const char *name, struct gv_err *err)
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
