/* Driving runsc with argv vectors, a constant environment and only stdio
 * inherited; plus the reaper that owns every waitpid(-1) of the process. */
#include "executor/sandbox/runsc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executor/sandbox/cgroup.h"

/* ---- reaper ---- */

int exec_reaper_watch(struct exec_reaper *r, pid_t pid, struct gv_err *err)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->w[i].pid == pid)
			return 0;
	if (r->n == EXEC_REAPER_MAX)
		return gv_err_set(err, GV_ELIMIT, "too many children to watch");
	r->w[r->n].pid = pid;
	r->w[r->n].status = 0;
	r->w[r->n].done = false;
	r->n++;
	return 0;
}

void exec_reaper_collect(struct exec_reaper *r)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);
		if (pid <= 0) {
			if (pid < 0 && errno == EINTR)
				continue;
			return;
		}
		for (size_t i = 0; i < r->n; i++) {
			if (r->w[i].pid == pid) {
				r->w[i].status = status;
				r->w[i].done = true;
			}
		}
	}
}

bool exec_reaper_done(struct exec_reaper *r, pid_t pid, int *status)
{
	exec_reaper_collect(r);
	for (size_t i = 0; i < r->n; i++) {
		if (r->w[i].pid != pid)
			continue;
		if (!r->w[i].done) {
			/* Not our child any more (reaped by someone else, which
			 * the one-reaper rule forbids): report it gone rather
			 * than wait forever; the status is unknown. */
			siginfo_t si;
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 &&
			    errno == ECHILD) {
				r->w[i].done = true;
				r->w[i].status = 0;
			}
		}
		if (r->w[i].done) {
			if (status)
				*status = r->w[i].status;
			return true;
		}
	}
	return false;
}

void exec_reaper_forget(struct exec_reaper *r, pid_t pid)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->w[i].pid == pid) {
			r->w[i] = r->w[r->n - 1];
			r->n--;
			return;
		}
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool exec_reaper_wait(struct exec_reaper *r, pid_t pid, int *status, long timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	for (;;) {
		if (exec_reaper_done(r, pid, status))
			return true;
		if (now_ms() >= end)
			return false;
		struct timespec ts = {0, 2 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

/* ---- argv ---- */

int exec_runsc_argv(const struct exec_runsc *r, const char *const *extra, const char **argv,
		    size_t cap, struct gv_err *err)
{
	size_t n = 0;
#define PUSH(s)                                                                   \
	do {                                                                      \
		if (n + 1 >= cap)                                                 \
			return gv_err_set(err, GV_ELIMIT, "runsc argv too long"); \
		argv[n++] = (s);                                                  \
	} while (0)
	PUSH(r->path);
	PUSH("--root");
	PUSH(r->root);
	/* No network stack inside at all, unless the sandbox was granted one:
	 * then gVisor uses the network namespace the bundle names (made and
	 * filtered by executor/sandbox/netpolicy.c), never the host's. The OCI
	 * seccomp section is applied (without this flag runsc silently ignores
	 * it). */
	if (r->network_host && !r->join_netns)
		return gv_err_set(err, GV_ESANDBOX, "runsc --network=host without the sandbox's own network namespace");
	PUSH(r->network_host ? "--network=host" : "--network=none");
	PUSH("--oci-seccomp");
	if (r->platform && r->platform[0]) {
		PUSH("--platform");
		PUSH(r->platform);
	}
	if (r->file_access_exclusive)
		PUSH("--file-access-mounts=exclusive");
	if (r->nvproxy)
		PUSH("--nvproxy");
	for (size_t i = 0; extra[i]; i++)
		PUSH(extra[i]);
#undef PUSH
	argv[n] = NULL;
	return 0;
}

/* ---- spawning ---- */

static char *const clean_env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};

/* fork + execve of runsc. Security argument: the child gets exactly the
 * three stdio descriptors (everything else is closed with close_range, so
 * no executor socket, database connection or other sandbox's pipe leaks
 * into runsc or the sandbox it creates), a constant environment, default
 * signal dispositions and an empty signal mask. Only async-signal-safe
 * calls run between fork and exec. It joins the network namespace of ns
 * (when set) and then its user namespace (when set), or exits 126
 * without running runsc (fail closed: never a sandbox as the shared host
 * nobody, never one on the executor's own network). */
struct spawn_ns {
	int netns_fd, userns_fd; /* -1: none */
};

static struct spawn_ns ns_of(const struct exec_runsc *r)
{
	return (struct spawn_ns){ r->join_netns ? r->netns_fd : -1, r->join_userns ? r->userns_fd : -1 };
}

static pid_t spawn(const char *path, const char **argv, int in, int out, int errfd, struct spawn_ns ns)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	if (ns.netns_fd >= 0 && setns(ns.netns_fd, CLONE_NEWNET) != 0)
		_exit(126);
	if (ns.userns_fd >= 0 && setns(ns.userns_fd, CLONE_NEWUSER) != 0)
		_exit(126);
	int fds[3] = {in, out, errfd};
	for (int i = 0; i < 3; i++) {
		fds[i] = fcntl(fds[i], F_DUPFD, 10);
		if (fds[i] < 0)
			_exit(127);
	}
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			_exit(127);
	if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	execve(path, (char *const *)argv, clean_env);
	_exit(127);
}

struct capture {
	char *buf;
	size_t cap, len;
};

static void drain(int fd, struct capture *c, bool *eof)
{
	char tmp[4096];
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			*eof = true;
			return;
		}
		if (n < 0)
			return;
		if (c && c->buf && c->len + 1 < c->cap) {
			size_t k = (size_t)n < c->cap - 1 - c->len ? (size_t)n : c->cap - 1 - c->len;
			memcpy(c->buf + c->len, tmp, k);
			c->len += k;
			c->buf[c->len] = '\0';
		}
	}
}

/* Runs one runsc command to completion within timeout_ms. With stdio ==
 * NULL its stdin is /dev/null and stdout/stderr are captured (bounded);
 * otherwise stdio are handed over as they are. While waiting it keeps
 * reaping, so a gofer or sandbox that exits meanwhile never blocks runsc. */
static int run_cli(const struct exec_runsc *r, const char *const *extra, const int stdio[3],
		   struct capture *out, struct capture *errc, long timeout_ms, int *status,
		   struct gv_err *err)
{
	const char *argv[48];
	if (exec_runsc_argv(r, extra, argv, sizeof(argv) / sizeof(argv[0]), err) != 0)
		return -1;
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, devnull = -1;
	int rc = -1;
	pid_t pid = -1;
	if (!stdio) {
		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (devnull < 0 || pipe2(outp, O_CLOEXEC | O_NONBLOCK) != 0 ||
		    pipe2(errp, O_CLOEXEC | O_NONBLOCK) != 0) {
			gv_err_errno(err, "runsc %s: pipes", extra[0]);
			goto out;
		}
		pid = spawn(r->path, argv, devnull, outp[1], errp[1], ns_of(r));
	} else {
		pid = spawn(r->path, argv, stdio[0], stdio[1], stdio[2], ns_of(r));
	}
	if (pid < 0) {
		gv_err_errno(err, "runsc %s: fork", extra[0]);
		goto out;
	}
	if (exec_reaper_watch(r->reaper, pid, err) != 0) {
		kill(pid, SIGKILL);
		exec_reaper_wait(r->reaper, pid, NULL, 5000);
		goto out;
	}
	if (outp[1] >= 0) {
		close(outp[1]);
		close(errp[1]);
		outp[1] = errp[1] = -1;
	}
	/* runsc's own exit wakes us at once (the pidfd); the 5 ms slices keep
	 * reaping other children meanwhile (a gofer that runsc waits for). */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int64_t deadline = now_ms() + timeout_ms;
	bool out_eof = stdio != NULL, err_eof = stdio != NULL;
	int st = 0;
	bool killed = false;
	for (;;) {
		bool done = exec_reaper_done(r->reaper, pid, &st);
		if (!stdio) {
			drain(outp[0], out, &out_eof);
			drain(errp[0], errc, &err_eof);
		}
		/* Once runsc itself exited, a grandchild may still hold the
		 * capture pipes: do not wait for their EOF. */
		if (done)
			break;
		if (now_ms() >= deadline && !killed) {
			kill(pid, SIGKILL);
			killed = true;
		}
		struct pollfd p[3];
		int np = 0;
		if (pidfd >= 0)
			p[np++] = (struct pollfd){pidfd, POLLIN, 0};
		if (!stdio && !out_eof)
			p[np++] = (struct pollfd){outp[0], POLLIN, 0};
		if (!stdio && !err_eof)
			p[np++] = (struct pollfd){errp[0], POLLIN, 0};
		poll(p, (nfds_t)np, 5);
	}
	if (pidfd >= 0)
		close(pidfd);
	exec_reaper_forget(r->reaper, pid);
	*status = st;
	if (killed) {
		gv_err_set(err, GV_ESANDBOX, "runsc %s: timed out after %ld ms", extra[0], timeout_ms);
		goto out;
	}
	rc = 0;
out:
	if (devnull >= 0)
		close(devnull);
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	return rc;
}

/* Runs a command that must exit 0; its stderr becomes the error message. */
static int run_ok(const struct exec_runsc *r, const char *const *extra, long timeout_ms,
		  struct capture *out, struct gv_err *err)
{
	char ebuf[1024] = "";
	struct capture ec = {ebuf, sizeof(ebuf), 0};
	int st;
	if (run_cli(r, extra, NULL, out, &ec, timeout_ms, &st, err) != 0)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *nl;
		while ((nl = strchr(ebuf, '\n')) != NULL)
			*nl = ' ';
		return gv_err_set(err, GV_ESANDBOX, "runsc %s failed (%s %d): %.400s", extra[0],
				  WIFEXITED(st) ? "exit" : "signal",
				  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), ebuf);
	}
	return 0;
}

int exec_runsc_check(const struct exec_runsc *r, struct gv_err *err)
{
	struct stat st;
	if (!r->path || r->path[0] != '/' || stat(r->path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    !(st.st_mode & 0111))
		return gv_err_set(err, GV_ESANDBOX, "runsc not found or not executable at %s",
				  r->path ? r->path : "(null)");
	const char *extra[] = {"--version", NULL};
	/* "--version" is parsed as a global flag, after --root etc. */
	return run_ok(r, extra, 10000, NULL, err);
}

/* Reads the sandbox pid that `runsc create` / `run --detach` wrote and
 * watches it. The pid file is in our own bundle dir, written by runsc
 * (root). */
int exec_runsc_read_pid_file(const struct exec_runsc *r, const char *pid_file, pid_t *sandbox_pid,
			     struct gv_err *err)
{
	int fd = open(pid_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return gv_err_errno(err, "runsc create: pid file %s", pid_file);
	char buf[32];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return gv_err_set(err, GV_ESANDBOX, "runsc create: empty pid file");
	buf[n] = '\0';
	char *end;
	long pid = strtol(buf, &end, 10);
	if (pid <= 1 || (*end && *end != '\n'))
		return gv_err_set(err, GV_ESANDBOX, "runsc create: bad pid file");
	/* The sandbox was reparented to us (subreaper): a pid we have not
	 * reaped cannot be reused, so signalling it later is safe. */
	if (getpgid((pid_t)pid) < 0)
		return gv_err_set(err, GV_ESANDBOX, "runsc create: sandbox %ld is gone", pid);
	if (exec_reaper_watch(r->reaper, (pid_t)pid, err) != 0)
		return -1;
	*sandbox_pid = (pid_t)pid;
	return 0;
}

/* create (start = false) or run --detach (start = true): either way the
 * sandbox process is left behind, reparented to us. */
static int create_sandbox(const struct exec_runsc *r, bool start, const char *bundle, const char *pid_file,
			  const char *id, const int stdio[3], pid_t *sandbox_pid, struct gv_err *err)
{
	const char *create[] = {"create", "--bundle", bundle, "--pid-file", pid_file, id, NULL};
	const char *run[] = {"run", "--detach", "--bundle", bundle, "--pid-file", pid_file, id, NULL};
	int st;
	if (run_cli(r, start ? run : create, stdio, NULL, NULL, 60000, &st, err) != 0)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return gv_err_set(err, GV_ESANDBOX, "runsc %s failed (%s %d)", start ? "run" : "create",
				  WIFEXITED(st) ? "exit" : "signal",
				  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return exec_runsc_read_pid_file(r, pid_file, sandbox_pid, err);
}

int exec_runsc_create_spawn(const struct exec_runsc *r, const char *bundle, const char *pid_file,
			    const char *id, const int stdio[3], pid_t *cli_pid, struct gv_err *err)
{
	const char *extra[] = {"create", "--bundle", bundle, "--pid-file", pid_file, id, NULL};
	const char *argv[48];
	if (exec_runsc_argv(r, extra, argv, sizeof(argv) / sizeof(argv[0]), err) != 0)
		return -1;
	pid_t p = spawn(r->path, argv, stdio[0], stdio[1], stdio[2], ns_of(r));
	if (p < 0)
		return gv_err_errno(err, "runsc create: fork");
	if (exec_reaper_watch(r->reaper, p, err) != 0) {
		kill(p, SIGKILL);
		exec_reaper_wait(r->reaper, p, NULL, 5000);
		return -1;
	}
	*cli_pid = p;
	return 0;
}

int exec_runsc_create(const struct exec_runsc *r, const char *bundle, const char *pid_file,
		      const char *id, const int stdio[3], pid_t *sandbox_pid, struct gv_err *err)
{
	return create_sandbox(r, false, bundle, pid_file, id, stdio, sandbox_pid, err);
}

int exec_runsc_run_detached(const struct exec_runsc *r, const char *bundle, const char *pid_file,
			    const char *id, const int stdio[3], pid_t *sandbox_pid, struct gv_err *err)
{
	return create_sandbox(r, true, bundle, pid_file, id, stdio, sandbox_pid, err);
}

int exec_runsc_restore_detached(const struct exec_runsc *r, const char *bundle, const char *pid_file,
				const char *image_dir, const char *id, const int stdio[3], pid_t *sandbox_pid,
				struct gv_err *err)
{
	const char *restore[] = {"restore", "--detach", "--image-path", image_dir, "--bundle", bundle,
				 "--pid-file", pid_file, id, NULL};
	int st;
	if (run_cli(r, restore, stdio, NULL, NULL, 60000, &st, err) != 0)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return gv_err_set(err, GV_ESANDBOX, "runsc restore failed (%s %d)", WIFEXITED(st) ? "exit" : "signal",
				  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return exec_runsc_read_pid_file(r, pid_file, sandbox_pid, err);
}

int exec_runsc_checkpoint(const struct exec_runsc *r, const char *id, const char *image_dir, struct gv_err *err)
{
	const char *extra[] = {"checkpoint", "--image-path", image_dir, id, NULL};
	return run_ok(r, extra, 120000, NULL, err);
}

int exec_runsc_start(const struct exec_runsc *r, const char *id, struct gv_err *err)
{
	const char *extra[] = {"start", id, NULL};
	return run_ok(r, extra, 30000, NULL, err);
}

int exec_runsc_kill(const struct exec_runsc *r, const char *id, int sig, struct gv_err *err)
{
	char s[16];
	snprintf(s, sizeof(s), "%d", sig);
	const char *extra[] = {"kill", "--all", id, s, NULL};
	return run_ok(r, extra, 10000, NULL, err);
}

int exec_runsc_delete(const struct exec_runsc *r, const char *id, struct gv_err *err)
{
	const char *extra[] = {"delete", "--force", id, NULL};
	return run_ok(r, extra, 30000, NULL, err);
}

int exec_runsc_delete_start(const struct exec_runsc *r, const char *id, pid_t *pid,
			    struct gv_err *err)
{
	const char *extra[] = {"delete", "--force", id, NULL};
	const char *argv[48];
	if (exec_runsc_argv(r, extra, argv, sizeof(argv) / sizeof(argv[0]), err) != 0)
		return -1;
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0)
		return gv_err_errno(err, "runsc delete: /dev/null");
	pid_t p = spawn(r->path, argv, devnull, devnull, devnull, (struct spawn_ns){ -1, -1 });
	int e = errno;
	close(devnull);
	if (p < 0) {
		errno = e;
		return gv_err_errno(err, "runsc delete: fork");
	}
	if (exec_reaper_watch(r->reaper, p, err) != 0) {
		kill(p, SIGKILL);
		exec_reaper_wait(r->reaper, p, NULL, 5000);
		return -1;
	}
	*pid = p;
	return 0;
}

int exec_runsc_list(const struct exec_runsc *r, void (*fn)(const char *id, void *arg), void *arg,
		    struct gv_err *err)
{
	enum { CAP = 1 << 20 };
	char *buf = malloc(CAP);
	if (!buf)
		return gv_err_set(err, ENOMEM, "runsc list: out of memory");
	buf[0] = '\0';
	struct capture oc = {buf, CAP, 0};
	const char *extra[] = {"list", "--quiet", NULL};
	int rc = run_ok(r, extra, 10000, &oc, err);
	if (rc == 0) {
		char *save = NULL;
		for (char *id = strtok_r(buf, "\n", &save); id; id = strtok_r(NULL, "\n", &save))
			if (exec_cgroup_name_ok(id))
				fn(id, arg);
	}
	free(buf);
	return rc;
}

struct sweep_ids {
	char (*ids)[65];
	size_t n, cap;
};

static void collect_id(const char *id, void *arg)
{
	struct sweep_ids *s = arg;
	if (s->n < s->cap)
		snprintf(s->ids[s->n++], 65, "%s", id);
}

/* A runsc killed while it wrote a container's metadata (an executor killed
 * -9 during `runsc create`) leaves a state file that no runsc command can
 * load, or a lock file without a state: `delete --force` then fails for
 * ever. The root is ours alone and nothing of ours runs during the sweep,
 * so such files are removed by name; the cgroup sweep that follows kills
 * whatever such a container had started. Returns how many were removed. */
static unsigned remove_stale_metadata(const char *root)
{
	DIR *d = opendir(root);
	if (!d)
		return 0;
	unsigned removed = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		bool ours = strncmp(de->d_name, "gv-", 3) == 0;
		bool meta = (len > 5 && strcmp(de->d_name + len - 5, ".lock") == 0) ||
			    (len > 6 && strcmp(de->d_name + len - 6, ".state") == 0);
		struct stat st;
		if (!ours || !meta || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* runsc keeps a container's state as files in --root: a folder with no
 * entry at all holds no container, and nothing needs listing. */
static bool root_empty(const char *root)
{
	DIR *d = opendir(root);
	if (!d)
		return false;
	bool empty = true;
	struct dirent *de;
	while (empty && (de = readdir(d)) != NULL)
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

int exec_runsc_sweep(const struct exec_runsc *r, unsigned *n, struct gv_err *err)
{
	enum { MAX = 4096 };
	if (n)
		*n = 0;
	/* Two `runsc list` calls cost ~150 ms, on every `gavel run`. */
	if (root_empty(r->root))
		return 0;
	struct sweep_ids s = {calloc(MAX, 65), 0, MAX};
	if (!s.ids)
		return gv_err_set(err, ENOMEM, "runsc sweep: out of memory");
	int rc = exec_runsc_list(r, collect_id, &s, err);
	unsigned deleted = 0, failed = 0;
	struct gv_err first;
	gv_err_clear(&first);
	for (size_t i = 0; rc == 0 && i < s.n; i++) {
		struct gv_err derr;
		if (exec_runsc_delete(r, s.ids[i], &derr) == 0) {
			deleted++;
		} else if (failed++ == 0) {
			first = derr;
			gv_err_prefix(&first, "sweeping %s", s.ids[i]);
		}
	}
	free(s.ids);
	if (rc == 0) {
		remove_stale_metadata(r->root);
		/* Whatever runsc still lists after that is a real failure. */
		struct sweep_ids left = {calloc(MAX, 65), 0, MAX};
		if (!left.ids)
			return gv_err_set(err, ENOMEM, "runsc sweep: out of memory");
		rc = exec_runsc_list(r, collect_id, &left, err);
		if (rc == 0 && left.n > 0) {
			if (failed)
				*err = first;
			else
				gv_err_set(err, GV_ESANDBOX, "runsc sweep: %s is still listed", left.ids[0]);
			rc = -1;
		}
		free(left.ids);
	}
	if (n)
		*n = deleted;
	return rc;
}
