/* One command run by gavel-suite: a child in its own process group, with a
 * clean environment, stdin /dev/null and stdout and stderr into one pipe
 * whose first bytes are kept; CPU (RLIMIT_CPU) and address-space limits;
 * a wall-clock deadline. Whatever the command left running is killed
 * before this returns: kill(-1, SIGKILL) ends every process of the sandbox
 * user but gavel-suite itself. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct suite_child_limits {
	uint64_t cpu_ms, wall_ms;
	uint64_t as_bytes; /* 0: no RLIMIT_AS */
};

struct suite_child_result {
	bool started;   /* false: fork or exec failed (an error of ours) */
	bool timed_out; /* the wall deadline or RLIMIT_CPU ended it */
	int exit_code;  /* when it exited */
	int signal;     /* when a signal ended it */
	uint64_t cpu_ms, wall_ms;
	char *output;   /* the first keep bytes of stdout and stderr together (owned) */
	size_t output_len;
};

/* Runs argv (argv[0] an absolute path) in cwd with env. keep: bytes of
 * output kept (the rest is read and dropped). */
void suite_child_run(const char *const *argv, const char *const *env, const char *cwd,
		     const struct suite_child_limits *lim, size_t keep, struct suite_child_result *out);
void suite_child_result_free(struct suite_child_result *r);
