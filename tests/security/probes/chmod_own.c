/* chmod_own — an ordinary run (not a Jobe run, whose template runs
 * toolchains) cannot change the mode of even its own files, nor rename,
 * link or re-time them: the program policy keeps those calls for the
 * compile (executor/init/seccomp_policy.c), which is what keeps /box
 * locked between tests. The files are made in /tmp, where the program
 * may create them; each call must fail, whatever the route (path, fd,
 * at-variant). */
#include "probe.h"

#define MINE "/tmp/gavel-probe-mine"

static void expect_refused(const char *what, int rc)
{
	if (rc == 0)
		escaped("%s on the program's own file", what);
	else
		blocked("%s errno=%d (%s)", what, errno, strerror(errno));
}

int main(void)
{
	info("uid %d gid %d", (int)getuid(), (int)getgid());
	int fd = open(MINE, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		info("cannot create %s: %s", MINE, strerror(errno));
		escaped("no file of its own to try (the probe proves nothing)");
		return finish();
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_uid != getuid())
		info("%s is owned by uid %d, not ours", MINE, (int)st.st_uid);
	expect_refused("chmod 0755", chmod(MINE, 0755));
	expect_refused("fchmod 0755", fchmod(fd, 0755));
	expect_refused("fchmodat 0755", fchmodat(AT_FDCWD, MINE, 0755, 0));
	expect_refused("chmod 04755 (setuid)", chmod(MINE, 04755));
	expect_refused("rename", rename(MINE, MINE ".renamed"));
	expect_refused("link", link(MINE, MINE ".link"));
	expect_refused("symlink", symlink(MINE, MINE ".sym"));
	expect_refused("utimensat", utimensat(AT_FDCWD, MINE, NULL, 0));
	if (fstat(fd, &st) == 0 && (st.st_mode & 07777) != 0600)
		escaped("the mode changed anyway: %o", (unsigned)(st.st_mode & 07777));
	close(fd);
	unlink(MINE);
	unlink(MINE ".renamed");
	unlink(MINE ".link");
	unlink(MINE ".sym");
	return finish();
}
