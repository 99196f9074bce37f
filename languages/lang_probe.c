/* The toolchain probe: whether a language's programs resolve, hop by hop,
 * inside the folders of /usr the sandbox sees, and whether its
 * version_command runs (fork/execve, clean environment, a deadline) and
 * prints a version. */
#include "languages/lang.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

const char *const lang_toolchain_dirs[] = {
	"/usr/bin", "/usr/include", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/share", NULL,
};

/* Is p inside one of the toolchain folders, compared by components? */
static bool under_usr(const char *p)
{
	for (size_t i = 0; lang_toolchain_dirs[i]; i++) {
		size_t n = strlen(lang_toolchain_dirs[i]);
		if (!strncmp(p, lang_toolchain_dirs[i], n) && p[n] == '/' && p[n + 1] != '\0')
			return true;
	}
	return false;
}

/* Follows path hop by hop; every hop, with its folder resolved, must stay
 * inside the toolchain folders, and the end must be an executable regular
 * file. This mirrors what the sandbox can resolve: it has those folders
 * but not the rest of /usr, nor the host's /etc. */
static int check_usr_program(const char *path, struct gv_err *err)
{
	char cur[PATH_MAX];
	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return gv_err_set(err, GV_ELIMIT, "path too long");
	for (int hop = 0;; hop++) {
		if (hop > 40)
			return gv_err_set(err, GV_ECONFIG, "%s: too many symlinks", path);
		/* Resolve the folder (which may itself hold links, like /lib). */
		char dir[PATH_MAX], real[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", cur);
		char *slash = strrchr(dir, '/');
		const char *base = slash + 1;
		char basecopy[NAME_MAX + 1];
		snprintf(basecopy, sizeof(basecopy), "%s", base);
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (!realpath(dir, real))
			return gv_err_errno(err, "%s: folder %s", path, dir);
		if (snprintf(cur, sizeof(cur), "%s/%s", real, basecopy) >= (int)sizeof(cur))
			return gv_err_set(err, GV_ELIMIT, "path too long");
		if (!under_usr(cur))
			return gv_err_set(err, GV_ECONFIG, "%s: resolves through %s, outside the toolchain folders of /usr (invisible in the sandbox)",
					  path, cur);
		struct stat st;
		if (lstat(cur, &st) < 0)
			return gv_err_errno(err, "%s: %s", path, cur);
		if (!S_ISLNK(st.st_mode)) {
			if (!S_ISREG(st.st_mode) || access(cur, X_OK) < 0)
				return gv_err_set(err, GV_ECONFIG, "%s: %s is not an executable file", path, cur);
			return 0;
		}
		char target[PATH_MAX];
		ssize_t r = readlink(cur, target, sizeof(target) - 1);
		if (r < 0)
			return gv_err_errno(err, "%s: readlink %s", path, cur);
		target[r] = '\0';
		if (target[0] == '/') {
			snprintf(cur, sizeof(cur), "%s", target);
		} else {
			char *ls = strrchr(cur, '/');
			ls[1] = '\0';
			if (strlen(cur) + strlen(target) >= sizeof(cur))
				return gv_err_set(err, GV_ELIMIT, "path too long");
			strcat(cur, target);
		}
	}
}

/* The programs an argv starts: argv[0], and for /usr/bin/env the first word
 * after its NAME=value assignments and options. */
static int check_argv_programs(char *const *argv, const char *what, struct gv_err *err)
{
	if (!argv || strncmp(argv[0], "./", 2) == 0)
		return 0;
	if (check_usr_program(argv[0], err) < 0) {
		gv_err_prefix(err, "%s", what);
		return -1;
	}
	const char *b = strrchr(argv[0], '/');
	if (b && !strcmp(b, "/env")) {
		size_t i = 1;
		while (argv[i] && (strchr(argv[i], '=') || argv[i][0] == '-'))
			i++;
		if (!argv[i])
			return gv_err_set(err, GV_ECONFIG, "%s: env starts no program", what);
		if (argv[i][0] != '/')
			return gv_err_set(err, GV_ECONFIG, "%s: env starts '%.80s', not an absolute path", what, argv[i]);
		if (check_usr_program(argv[i], err) < 0) {
			gv_err_prefix(err, "%s", what);
			return -1;
		}
	}
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static volatile sig_atomic_t *run_stop;

void lang_run_capture_stop_on(volatile sig_atomic_t *stop)
{
	run_stop = stop;
}

/* The process group is killed at the deadline. */
int lang_run_capture(char *const *argv, int timeout_ms, char *out, size_t outsz, int *status, bool *timed_out,
		     struct gv_err *err)
{
	static char *const envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", NULL};
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return gv_err_errno(err, "pipe2");
	pid_t pid = fork();
	if (pid < 0) {
		int rc = gv_err_errno(err, "fork");
		close(pfd[0]);
		close(pfd[1]);
		return rc;
	}
	if (pid == 0) {
		setpgid(0, 0);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(pfd[1], 2) < 0)
			_exit(126);
		if (chdir("/tmp") < 0)
			_exit(126);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	setpgid(pid, pid); /* both sides, so that the kill below cannot miss */
	close(pfd[1]);
	size_t used = 0;
	long long deadline = now_ms() + timeout_ms;
	*timed_out = false;
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0 || (run_stop && *run_stop)) {
			*timed_out = true;
			break;
		}
		/* A stop set just before the poll is seen within 200 ms. */
		if (run_stop && left > 200)
			left = 200;
		struct pollfd p = {pfd[0], POLLIN, 0};
		int pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			gv_err_errno(err, "poll");
			*timed_out = true; /* reap below */
			break;
		}
		if (pr == 0)
			continue;
		char buf[4096];
		ssize_t r = read(pfd[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (outsz > 0 && used < outsz - 1) {
			size_t take = (size_t)r < outsz - 1 - used ? (size_t)r : outsz - 1 - used;
			memcpy(out + used, buf, take);
			used += take;
		}
	}
	close(pfd[0]);
	if (outsz > 0)
		out[used] = '\0';
	if (*timed_out)
		kill(-pid, SIGKILL);
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return gv_err_errno(err, "waitpid");
	}
	*status = st;
	return 0;
}

int lang_probe(const struct lang_def *def, int timeout_ms, char *version_out, size_t outsz, struct gv_err *err)
{
	if (version_out && outsz)
		version_out[0] = '\0';
	if (check_argv_programs(def->version_command, "version_command", err) < 0 ||
	    check_argv_programs(def->compile, "compile", err) < 0 ||
	    check_argv_programs(def->run, "run", err) < 0)
		goto fail;
	for (char **p = def->host_etc; p && *p; p++) {
		struct stat st;
		if (stat(*p, &st) < 0) {
			gv_err_errno(err, "host_etc %s", *p);
			goto fail;
		}
	}
	char out[1024];
	int status = 0;
	bool timed_out = false;
	if (lang_run_capture(def->version_command, timeout_ms, out, sizeof(out), &status, &timed_out, err) < 0)
		goto fail;
	if (timed_out) {
		gv_err_set(err, GV_ECONFIG, "version_command did not finish within %d ms", timeout_ms);
		goto fail;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char esc[200];
		gv_err_set(err, GV_ECONFIG, "version_command failed (%s %d): %s",
			   WIFEXITED(status) ? "exit" : "signal",
			   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
			   gv_log_escape(esc, sizeof(esc), out, strlen(out)));
		goto fail;
	}
	char clean[LANG_VERSION_MAX];
	if (lang_version_extract(def, out, clean, sizeof(clean), err) < 0)
		goto fail;
	if (version_out && outsz)
		snprintf(version_out, outsz, "%s", clean);
	return 0;
fail:
	gv_err_prefix(err, "language %s", def->id);
	return -1;
}
