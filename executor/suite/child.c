/* Running one command of gavel-suite (executor/suite/child.h). */
#include "executor/suite/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* In the child: nothing here may return. */
static void exec_child(const char *const *argv, const char *const *env, const char *cwd,
		       const struct suite_child_limits *lim, int out_fd)
{
	setpgid(0, 0);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		_exit(127);
	if (chdir(cwd) < 0) {
		dprintf(2, "gavel-suite: chdir %s: %s\n", cwd, strerror(errno));
		_exit(127);
	}
	rlim_t cpu_s = (rlim_t)((lim->cpu_ms + 999) / 1000);
	struct rlimit cpu = { cpu_s, cpu_s + 1 };
	if (setrlimit(RLIMIT_CPU, &cpu) < 0) {
		dprintf(2, "gavel-suite: RLIMIT_CPU: %s\n", strerror(errno));
		_exit(127);
	}
	if (lim->as_bytes) {
		struct rlimit as = { lim->as_bytes, lim->as_bytes };
		if (setrlimit(RLIMIT_AS, &as) < 0) {
			dprintf(2, "gavel-suite: RLIMIT_AS: %s\n", strerror(errno));
			_exit(127);
		}
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(argv[0], (char *const *)argv, (char *const *)env);
	dprintf(2, "gavel-suite: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Every process of our uid but us, again until none is left (a process
 * forking while the first signal went round may have left a child), and
 * our own children reaped. A zombie still counts until init reaps it:
 * bounded at about a second. */
static void kill_everything_else(void)
{
	for (int i = 0; i < 200; i++) {
		int rc = kill(-1, SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (rc != 0)
			return;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

void suite_child_run(const char *const *argv, const char *const *env, const char *cwd,
		     const struct suite_child_limits *lim, size_t keep, struct suite_child_result *out)
{
	memset(out, 0, sizeof(*out));
	out->output = malloc(keep + 1);
	if (!out->output)
		return;
	out->output[0] = '\0';
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	uint64_t t0 = now_ms();
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0)
		exec_child(argv, env, cwd, lim, p[1]);
	close(p[1]);
	out->started = true;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	bool eof = false, exited = false, killed = false;
	int status = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	while (!exited || !eof) {
		uint64_t t = now_ms() - t0;
		if (!killed && t >= lim->wall_ms) {
			kill_everything_else();
			killed = out->timed_out = true;
		}
		if (!exited) {
			pid_t w = wait4(pid, &status, WNOHANG, &ru);
			if (w == pid) {
				exited = true;
				/* Children it left behind hold the pipe open. */
				kill_everything_else();
			}
		}
		if (!eof) {
			struct pollfd pf = { .fd = p[0], .events = POLLIN };
			int wait = exited ? 100 : 20;
			if (poll(&pf, 1, wait) > 0) {
				char buf[8192];
				ssize_t n = read(p[0], buf, sizeof(buf));
				if (n > 0) {
					size_t room = keep - out->output_len;
					size_t take = (size_t)n < room ? (size_t)n : room;
					memcpy(out->output + out->output_len, buf, take);
					out->output_len += take;
				} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
					eof = true;
				}
			} else if (exited && now_ms() - t0 > lim->wall_ms + 2000) {
				eof = true; /* a pipe nobody can still hold: give up on it */
			}
		} else if (!exited) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	close(p[0]);
	out->output[out->output_len] = '\0';
	out->wall_ms = now_ms() - t0;
	out->cpu_ms = (uint64_t)ru.ru_utime.tv_sec * 1000 + (uint64_t)ru.ru_utime.tv_usec / 1000 +
		      (uint64_t)ru.ru_stime.tv_sec * 1000 + (uint64_t)ru.ru_stime.tv_usec / 1000;
	if (WIFEXITED(status)) {
		out->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		out->signal = WTERMSIG(status);
		if (out->signal == SIGXCPU || (out->signal == SIGKILL && out->cpu_ms >= lim->cpu_ms))
			out->timed_out = true;
	}
	if (out->cpu_ms >= lim->cpu_ms)
		out->timed_out = true;
}

void suite_child_result_free(struct suite_child_result *r)
{
	free(r->output);
	r->output = NULL;
}
