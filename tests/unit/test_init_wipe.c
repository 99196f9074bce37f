/* Unit tests of gavel-init's file-tree hygiene (wipe.c) on a temporary
 * directory, and of its seccomp policy in a forked child on the host
 * kernel: planted symlinks are never followed, unreadable and very deep
 * trees are still emptied, the lock leaves nothing writable, and the
 * filter kills or denies what it should. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executor/init/seccomp_policy.h"
#include "executor/init/wipe.h"
#include "tests/support/testutil.h"
#include "tests/unit/init_filtered.h"

static void write_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
}

static void wipe__planted_tree__emptied_without_following_links(void **state)
{
	(void)state;
	char root[] = "/tmp/gv-wipe-test.XXXXXX";
	assert_non_null(mkdtemp(root));
	char outside[600], scratch[600], p[700];
	snprintf(outside, sizeof(outside), "%s/outside", root);
	snprintf(scratch, sizeof(scratch), "%s/scratch", root);
	assert_int_equal(mkdir(outside, 0755), 0);
	assert_int_equal(mkdir(scratch, 0755), 0);
	snprintf(p, sizeof(p), "%s/keep", outside);
	write_file(p);
	/* symlinks to a directory and a file outside */
	snprintf(p, sizeof(p), "%s/dirlink", scratch);
	assert_int_equal(symlink(outside, p), 0);
	snprintf(p, sizeof(p), "%s/filelink", scratch);
	char target[700];
	snprintf(target, sizeof(target), "%s/keep", outside);
	assert_int_equal(symlink(target, p), 0);
	/* a directory with mode 0 holding a file */
	snprintf(p, sizeof(p), "%s/closed", scratch);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(target, sizeof(target), "%s/closed/f", scratch);
	write_file(target);
	assert_int_equal(chmod(p, 0), 0);
	/* a chain 50 deep */
	char deep[4096];
	snprintf(deep, sizeof(deep), "%s", scratch);
	for (int i = 0; i < 50; i++) {
		size_t l = strlen(deep);
		snprintf(deep + l, sizeof(deep) - l, "/d");
		assert_int_equal(mkdir(deep, 0755), 0);
	}
	snprintf(p, sizeof(p), "%s/.hidden", scratch);
	write_file(p);
	int fd = open(scratch, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	struct gv_err err;
	unsigned long removed = 0;
	if (init_wipe_dir(fd, &removed, &err) != 0)
		fail_msg("wipe failed: %s", err.msg);
	close(fd);
	assert_int_equal(test_count_entries(scratch), 0);
	assert_true(removed >= 55);
	snprintf(p, sizeof(p), "%s/keep", outside);
	assert_int_equal(access(p, F_OK), 0);
	assert_int_equal(test_rm_rf(root), 0);
}

/* The fast path (an empty directory is only read, from offset 0 of the
 * same fd) must still see what a later run leaves behind. */
static void wipe__same_fd_reused__empty_skipped_and_refill_removed(void **state)
{
	(void)state;
	char dir[] = "/tmp/gv-wipe-reuse.XXXXXX";
	assert_non_null(mkdtemp(dir));
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	struct gv_err err;
	unsigned long removed = 99;
	for (int round = 0; round < 3; round++) {
		if (init_wipe_dir(fd, &removed, &err) != 0)
			fail_msg("wipe of an empty dir failed: %s", err.msg);
		assert_int_equal(removed, 0);
		char p[700];
		snprintf(p, sizeof(p), "%s/.f%d", dir, round);
		write_file(p);
		snprintf(p, sizeof(p), "%s/sub%d", dir, round);
		assert_int_equal(mkdir(p, 0755), 0);
		if (init_wipe_dir(fd, &removed, &err) != 0)
			fail_msg("wipe failed: %s", err.msg);
		assert_int_equal(removed, 2);
		assert_int_equal(test_count_entries(dir), 0);
	}
	close(fd);
	assert_int_equal(rmdir(dir), 0);
}

static void lock__work_dir__nothing_left_writable(void **state)
{
	(void)state;
	char root[] = "/tmp/gv-lock-test.XXXXXX";
	assert_non_null(mkdtemp(root));
	char p[600];
	snprintf(p, sizeof(p), "%s/main", root);
	write_file(p);
	assert_int_equal(chmod(p, 04775), 0);
	snprintf(p, sizeof(p), "%s/pkg", root);
	assert_int_equal(mkdir(p, 0777), 0);
	snprintf(p, sizeof(p), "%s/pkg/A.class", root);
	write_file(p);
	snprintf(p, sizeof(p), "%s/link", root);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	int fd = open(root, O_RDONLY | O_DIRECTORY);
	struct gv_err err;
	if (init_lock_tree(fd, geteuid(), getegid(), &err) != 0)
		fail_msg("lock failed: %s", err.msg);
	close(fd);
	struct stat st;
	assert_int_equal(stat(root, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0555);
	snprintf(p, sizeof(p), "%s/main", root);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0555);
	snprintf(p, sizeof(p), "%s/pkg/A.class", root);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0444);
	assert_int_equal(lstat("/etc/passwd", &st), 0);
	assert_true(st.st_mode & S_IWUSR); /* the symlink's target untouched */
	assert_int_equal(test_rm_rf(root), 0);
}

/* probe() under the program policy (single_process: procs:1): its wait
 * status. */
static int run_filtered_opts(int (*probe)(void), bool single_process)
{
	struct init_seccomp_opts opt = { .single_process = single_process };
	return run_filtered_with(probe, &opt);
}

static int run_filtered(int (*probe)(void))
{
	return run_filtered_opts(probe, false);
}

static void *thread_noop(void *arg)
{
	return arg;
}

/* procs:1: no second process by any route, threads still start. Exit
 * codes name the route that got through. */
static int probe_single_process(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	if (p > 0 || errno != EAGAIN)
		return 1;
	if (syscall(SYS_fork) >= 0 || errno != EAGAIN)
		return 2;
	if (syscall(SYS_vfork) >= 0 || errno != EAGAIN)
		return 3;
	if (syscall(SYS_clone, (long)SIGCHLD, 0, 0, 0, 0) >= 0 || errno != EAGAIN)
		return 4;
	/* posix_spawn's flags */
	if (syscall(SYS_clone, (long)(CLONE_VM | CLONE_VFORK | SIGCHLD), 0, 0, 0, 0) >= 0 || errno != EAGAIN)
		return 5;
	/* a thread with a namespace flag: still refused */
	if (syscall(SYS_clone, (long)(CLONE_THREAD | CLONE_SIGHAND | CLONE_VM | CLONE_NEWNET), 0, 0, 0, 0) >= 0 ||
	    errno != EPERM)
		return 6;
	pthread_t t;
	if (pthread_create(&t, NULL, thread_noop, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 7;
	return 0;
}

static int probe_fork_allowed(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	if (p < 0)
		return 1;
	int st;
	return waitpid(p, &st, 0) == p && WIFEXITED(st) ? 0 : 2;
}

static void seccomp__single_process__refuses_fork_allows_threads(void **state)
{
	(void)state;
	int st = run_filtered_opts(probe_single_process, true);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("single-process policy: status 0x%x (exit code = the route that got through)", st);
	st = run_filtered_opts(probe_fork_allowed, false);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("procs > 1: fork refused, status 0x%x", st);
}

static int probe_ptrace(void) { return (int)syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0); }
static int probe_unshare(void) { return (int)syscall(SYS_unshare, 0x10000000); }
static int probe_x32(void) { return (int)syscall(39 | 0x40000000); }
static int probe_denied(void)
{
	if (socket(AF_INET, SOCK_STREAM, 0) >= 0 || errno != EPERM)
		return 1;
	if (syscall(SYS_kill, 0x100000001L, 0) == 0 || errno != EPERM)
		return 2;
	if (syscall(SYS_kill, 1, 0) == 0 || errno != EPERM)
		return 3;
	if (syscall(SYS_clone, 0x10000000L | SIGCHLD, 0, 0, 0, 0) >= 0 || errno != EPERM)
		return 4;
	if (syscall(SYS_clone3, NULL, 0) >= 0 || errno != ENOSYS)
		return 5;
	if (chmod("/tmp", 0777) == 0 || errno != EPERM)
		return 6;
	if (syscall(SYS_prlimit64, 1, 7, NULL, NULL) == 0 || errno != EPERM)
		return 7;
	if (socket(AF_UNIX, SOCK_STREAM, 0) < 0)
		return 8;
	if (kill(getpid(), 0) != 0)
		return 9;
	return 0;
}

static void seccomp__hostile_calls__kill_with_sigsys(void **state)
{
	(void)state;
	int (*probes[])(void) = { probe_ptrace, probe_unshare, probe_x32 };
	for (size_t i = 0; i < 3; i++) {
		int st = run_filtered(probes[i]);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
			fail_msg("probe %zu: status 0x%x, want SIGSYS", i, st);
	}
}

static void seccomp__denied_calls__fail_with_eperm(void **state)
{
	(void)state;
	int st = run_filtered(probe_denied);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wipe__planted_tree__emptied_without_following_links),
		cmocka_unit_test(wipe__same_fd_reused__empty_skipped_and_refill_removed),
		cmocka_unit_test(lock__work_dir__nothing_left_writable),
		cmocka_unit_test(seccomp__hostile_calls__kill_with_sigsys),
		cmocka_unit_test(seccomp__denied_calls__fail_with_eperm),
		cmocka_unit_test(seccomp__single_process__refuses_fork_allows_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
