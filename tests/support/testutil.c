/* Test helpers without a shell: tree removal and counting with nftw,
 * fork/execve of an argv vector, and the monotonic clock. */
#include "tests/support/testutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
	return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

static int make_writable(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_D && !(st->st_mode & S_IWUSR))
		chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

int test_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISDIR(st.st_mode))
		nftw(path, make_writable, 32, FTW_PHYS);
	return nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS);
}

static int entries;

static int count_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)st;
	(void)type;
	if (ftw->level > 0)
		entries++;
	return 0;
}

int test_count_entries(const char *dir)
{
	entries = 0;
	if (nftw(dir, count_entry, 32, FTW_PHYS) != 0)
		return -1;
	return entries;
}

int test_run(const char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		static char *const envp[] = { "PATH=/usr/bin:/bin", NULL };
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double test_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
