/* Unit tests of a Jobe run's working copy (executor/init/workcopy.c) on a
 * temporary tree, and of the program policy's toolchain option
 * (seccomp_policy.c) in a forked child on the host kernel: the copy is
 * writable and skips links, the source is closed to the program after it
 * (or the copy fails), an ordinary program cannot change a mode even of
 * its own file, and the toolchain option allows exactly the compile
 * policy's file calls, nothing hostile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executor/init/seccomp_policy.h"
#include "executor/init/workcopy.h"
#include "tests/support/testutil.h"
#include "tests/unit/init_filtered.h"

static void write_file(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static mode_t mode_of(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return (mode_t)-1;
	return st.st_mode & 07777;
}

/* A source tree as the compile leaves /box: a locked source, a program,
 * a folder with a file, a link to outside. */
static void make_tree(const char *root, char *src, char *tmp, size_t n)
{
	char p[700];
	snprintf(src, n, "%s/box", root);
	snprintf(tmp, n, "%s/tmp", root);
	assert_int_equal(mkdir(src, 0755), 0);
	assert_int_equal(mkdir(tmp, 01777), 0);
	snprintf(p, sizeof(p), "%s/main.py", src);
	write_file(p, 0444);
	snprintf(p, sizeof(p), "%s/main", src);
	write_file(p, 0555);
	char sub[640];
	snprintf(sub, sizeof(sub), "%s/sub", src);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(p, sizeof(p), "%s/data.txt", sub);
	write_file(p, 0444);
	assert_int_equal(chmod(sub, 0555), 0);
	snprintf(p, sizeof(p), "%s/link", src);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	assert_int_equal(chmod(src, 0555), 0);
}

static void workcopy__locked_tree__copied_writable_and_source_closed(void **state)
{
	(void)state;
	char root[] = "/tmp/gv-workcopy-test.XXXXXX";
	assert_non_null(mkdtemp(root));
	char src[600], tmp[600], p[700];
	make_tree(root, src, tmp, sizeof(src));
	int sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC), tfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(sfd >= 0 && tfd >= 0);
	struct gv_err err;
	if (init_workcopy_make(sfd, tfd, &err) != 0)
		fail_msg("workcopy: %s", err.msg);
	close(sfd);
	close(tfd);
	const char *copy = INIT_WORKCOPY_DIR + sizeof("/tmp/") - 1;
	snprintf(p, sizeof(p), "%s/%s", tmp, copy);
	assert_int_equal(mode_of(p), 0777);
	snprintf(p, sizeof(p), "%s/%s/main.py", tmp, copy);
	assert_int_equal(mode_of(p), 0666);
	snprintf(p, sizeof(p), "%s/%s/main", tmp, copy);
	assert_int_equal(mode_of(p), 0777);
	snprintf(p, sizeof(p), "%s/%s/sub", tmp, copy);
	assert_int_equal(mode_of(p), 0777);
	snprintf(p, sizeof(p), "%s/%s/sub/data.txt", tmp, copy);
	assert_int_equal(mode_of(p), 0666);
	snprintf(p, sizeof(p), "%s/%s/link", tmp, copy);
	assert_int_equal(mode_of(p), (mode_t)-1); /* links are not copied */
	/* The source: init's alone for the run. */
	assert_int_equal(mode_of(src), 0700);
	assert_int_equal(chmod(src, 0755), 0);
	assert_int_equal(test_rm_rf(root), 0);
}

/* A source init does not own cannot be closed to the program: the copy
 * fails rather than run a program that could reopen it. */
static void workcopy__source_not_ours__fails_closed(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	char root[] = "/tmp/gv-workcopy-test.XXXXXX";
	assert_non_null(mkdtemp(root));
	char src[600], tmp[600];
	make_tree(root, src, tmp, sizeof(src));
	assert_int_equal(chown(src, 65534, 65534), 0);
	int sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC), tfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(sfd >= 0 && tfd >= 0);
	struct gv_err err;
	assert_int_equal(init_workcopy_make(sfd, tfd, &err), -1);
	assert_non_null(strstr(err.msg, "stays open to the program"));
	close(sfd);
	close(tfd);
	assert_int_equal(chown(src, 0, 0), 0);
	assert_int_equal(chmod(src, 0755), 0);
	assert_int_equal(test_rm_rf(root), 0);
}

static char probe_dir[64];

/* probe() under the program policy, toolchain or not: its wait status. */
static int run_filtered(int (*probe)(void), bool toolchain)
{
	struct init_seccomp_opts opt = { .toolchain = toolchain };
	return run_filtered_with(probe, &opt);
}

/* Exit codes name the first call whose answer was not the expected one. */
static int file_calls(bool allowed)
{
	char f[128], g[128];
	snprintf(f, sizeof(f), "%s/built", probe_dir);
	int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 50;
	int want = allowed ? 0 : -1;
	if (chmod(f, 0755) != want || (!allowed && errno != EPERM))
		return 1;
	if (fchmod(fd, 0700) != want || (!allowed && errno != EPERM))
		return 2;
	if (fchmodat(AT_FDCWD, f, 0750, 0) != want || (!allowed && errno != EPERM))
		return 3;
	snprintf(g, sizeof(g), "%s/renamed", probe_dir);
	if (rename(f, g) != want || (!allowed && errno != EPERM))
		return 4;
	const char *cur = allowed ? g : f;
	char h[128];
	snprintf(h, sizeof(h), "%s/hard", probe_dir);
	if (link(cur, h) != want || (!allowed && errno != EPERM))
		return 5;
	snprintf(h, sizeof(h), "%s/soft", probe_dir);
	if (symlink(cur, h) != want || (!allowed && errno != EPERM))
		return 6;
	if (utimensat(AT_FDCWD, cur, NULL, 0) != want || (!allowed && errno != EPERM))
		return 7;
	close(fd);
	return 0;
}

static int probe_ordinary(void) { return file_calls(false); }
static int probe_toolchain(void) { return file_calls(true); }
/* What the option must not open: other sockets, signals to init. */
static int probe_toolchain_denied(void)
{
	if (socket(AF_INET, SOCK_STREAM, 0) >= 0 || errno != EPERM)
		return 1;
	if (syscall(SYS_kill, 1, 0) == 0 || errno != EPERM)
		return 2;
	if (syscall(SYS_clone, 0x10000000L | SIGCHLD, 0, 0, 0, 0) >= 0 || errno != EPERM)
		return 3;
	if (syscall(SYS_mknod, "/tmp/gv-never", S_IFCHR | 0666, 0x0103) == 0 || errno != EPERM)
		return 4;
	if (syscall(SYS_fchown, 0, 0, 0) == 0 || errno != EPERM)
		return 5;
	return 0;
}
static int probe_ptrace(void) { return (int)syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0); }
static int probe_unshare(void) { return (int)syscall(SYS_unshare, 0x10000000); }

static void fresh_probe_dir(void)
{
	snprintf(probe_dir, sizeof(probe_dir), "/tmp/gv-toolchain-test.XXXXXX");
	assert_non_null(mkdtemp(probe_dir));
}

static void seccomp__ordinary_program__cannot_chmod_its_own_file(void **state)
{
	(void)state;
	fresh_probe_dir();
	int st = run_filtered(probe_ordinary, false);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("ordinary program: status 0x%x (exit code = the file call that got through)", st);
	char f[128];
	snprintf(f, sizeof(f), "%s/built", probe_dir);
	assert_int_equal(mode_of(f), 0600);
	assert_int_equal(test_rm_rf(probe_dir), 0);
}

static void seccomp__toolchain_option__allows_file_modes_nothing_hostile(void **state)
{
	(void)state;
	fresh_probe_dir();
	int st = run_filtered(probe_toolchain, true);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("toolchain program: status 0x%x (exit code = the file call refused)", st);
	char f[128];
	snprintf(f, sizeof(f), "%s/renamed", probe_dir);
	assert_int_equal(mode_of(f), 0750);
	assert_int_equal(test_rm_rf(probe_dir), 0);
	st = run_filtered(probe_toolchain_denied, true);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("toolchain program: status 0x%x (exit code = the call that got through)", st);
	int (*killed[])(void) = { probe_ptrace, probe_unshare };
	for (size_t i = 0; i < 2; i++) {
		st = run_filtered(killed[i], true);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
			fail_msg("toolchain probe %zu: status 0x%x, want SIGSYS", i, st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(workcopy__locked_tree__copied_writable_and_source_closed),
		cmocka_unit_test(workcopy__source_not_ours__fails_closed),
		cmocka_unit_test(seccomp__ordinary_program__cannot_chmod_its_own_file),
		cmocka_unit_test(seccomp__toolchain_option__allows_file_modes_nothing_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
