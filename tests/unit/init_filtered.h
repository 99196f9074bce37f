/* For the unit tests of gavel-init's seccomp policies (test_init_*.c,
 * after cmocka.h and executor/init/seccomp_policy.h): runs probe() in a
 * child under the program policy built with opt, and returns the child's
 * wait status (exit 100: the filter could not be applied). */
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int run_filtered_with(int (*probe)(void), const struct init_seccomp_opts *opt)
{
	struct init_bpf bpf;
	struct gv_err err;
	if (init_seccomp_build_opts(INIT_POLICY_PROGRAM, opt, &bpf, &err) != 0)
		fail_msg("build: %s", err.msg);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (init_seccomp_apply(&bpf) != 0)
			_exit(100);
		_exit(probe());
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	init_bpf_free(&bpf);
	return st;
}
