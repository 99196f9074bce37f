/* probe.h — helpers shared by the C security probes.
 *
 * A submission is a single source file, so the driver (tests/security/run.sh)
 * replaces the line `#include "probe.h"` of a probe with this file's text
 * before it hands the probe to `gavel run`. To build a probe by hand:
 *   gcc -I tests/security/probes tests/security/probes/NAME.c
 *
 * Output protocol, one line each, flushed at once so that a probe killed
 * half-way still shows how far it got:
 *   ESCAPED <what>   the attack worked: the driver fails the probe;
 *   BLOCKED <what>   the attack failed, with errno or the signal that ended it;
 *   INFO <what>      context for a human reading the log;
 *   TRY <i> <what>   attempt number i is about to run (see attempt());
 *   DONE escaped=N   the probe ran to its end (the driver requires it where the
 *                    program is expected to end normally).
 *
 * attempt() runs one attack in a forked child, so that a seccomp policy that
 * kills (SIGSYS) rather than returns EPERM reads as BLOCKED too, and so that
 * one attack's side effects cannot hide the next one. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int probe_escapes;

static void probe_vsay(const char *tag, const char *fmt, va_list ap)
{
	char line[1024];
	vsnprintf(line, sizeof line, fmt, ap);
	printf("%s %s\n", tag, line);
	fflush(stdout);
}

__attribute__((format(printf, 1, 2), unused))
static void escaped(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	probe_escapes++;
	probe_vsay("ESCAPED", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2), unused))
static void blocked(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	probe_vsay("BLOCKED", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2), unused))
static void info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	probe_vsay("INFO", fmt, ap);
	va_end(ap);
}

__attribute__((unused))
static int finish(void)
{
	printf("DONE escaped=%d\n", probe_escapes);
	fflush(stdout);
	return 0;
}

/* An attack: returns >= 0 when it succeeded (an escape), -1 with errno set
 * when the sandbox refused it. */
typedef long (*attack_fn)(long arg);

struct attempt_result {
	long ret;
	int err;
};

static int probe_attempt_index, probe_skip;

static void report(const char *name, long ret, int err)
{
	if (ret >= 0)
		escaped("%s succeeded (returned %ld)", name, ret);
	else
		blocked("%s errno=%d (%s)", name, err, strerror(err));
}

/* Runs fn(arg) in a child with a 5 s alarm and reports ESCAPED or BLOCKED
 * under `name`. Returns 1 if it escaped, 0 otherwise.
 *
 * Where fork is refused (a process limit of 1), the attack runs in this
 * process after a "TRY <index> <name>" line: if seccomp kills the process,
 * the driver sees that line last, counts the attempt as blocked and runs
 * the probe again with "SKIP <index+1>" on stdin (probe_params()). */
__attribute__((unused))
static int attempt(const char *name, attack_fn fn, long arg)
{
	int index = probe_attempt_index++;
	if (index < probe_skip)
		return 0;
	printf("TRY %d %s\n", index, name);
	fflush(stdout);
	int p[2];
	if (pipe(p) < 0) {
		info("%s: pipe: %s", name, strerror(errno));
		return 0;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		errno = 0;
		long ret = fn(arg);
		int err = errno;
		report(name, ret, err);
		return ret >= 0;
	}
	if (pid == 0) {
		close(p[0]);
		alarm(5);
		errno = 0;
		struct attempt_result r;
		r.ret = fn(arg);
		r.err = errno;
		if (write(p[1], &r, sizeof r) != (ssize_t)sizeof r)
			_exit(111);
		_exit(0);
	}
	close(p[1]);
	struct attempt_result r;
	ssize_t n;
	do
		n = read(p[0], &r, sizeof r);
	while (n < 0 && errno == EINTR);
	close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof r) {
		report(name, r.ret, r.err);
		return r.ret >= 0;
	}
	if (WIFSIGNALED(st))
		blocked("%s killed by signal %d (%s)", name, WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		blocked("%s child ended without a result (exit %d)", name, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

/* Reads at most cap-1 bytes of a file into buf; -1 with errno on failure. */
__attribute__((unused))
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	size_t got = 0;
	while (got + 1 < cap) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	close(fd);
	return (ssize_t)got;
}

/* Reads the probe's stdin (the driver's parameters) into buf. */
__attribute__((unused))
static size_t read_stdin(char *buf, size_t cap)
{
	size_t got = 0;
	while (got + 1 < cap) {
		ssize_t n = read(0, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	return got;
}

/* Value of "KEY value" in the driver's parameter text, copied to out. */
__attribute__((unused))
static int param(const char *text, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	const char *p = text;
	while (p && *p) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
			const char *v = p + kl + 1;
			size_t n = strcspn(v, "\n");
			if (n >= cap)
				n = cap - 1;
			memcpy(out, v, n);
			out[n] = 0;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	out[0] = 0;
	return -1;
}

/* Reads the driver's parameters from stdin into buf and applies SKIP. */
__attribute__((unused))
static void probe_params(char *buf, size_t cap)
{
	char v[32];
	read_stdin(buf, cap);
	if (param(buf, "SKIP", v, sizeof v) == 0)
		probe_skip = atoi(v);
}

/* Prints a short, escaped excerpt of untrusted bytes. */
__attribute__((unused))
static void excerpt(const char *tag, const char *s, size_t n)
{
	char out[256];
	size_t o = 0;
	for (size_t i = 0; i < n && o + 5 < sizeof out; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", c);
	}
	out[o] = 0;
	info("%s: %s", tag, out);
}
