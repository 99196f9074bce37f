/* chmod_chown — ownership and modes of files the program does not own (and
 * of its own files, to root) cannot be changed: no CAP_CHOWN/CAP_FOWNER. */
#include "probe.h"

static void try_chown(const char *path, uid_t u, gid_t g)
{
	if (lchown(path, u, g) == 0)
		escaped("chown %s to %d:%d", path, (int)u, (int)g);
	else
		blocked("chown %s to %d:%d errno=%d (%s)", path, (int)u, (int)g, errno, strerror(errno));
}

static void try_chmod(const char *path, mode_t m)
{
	struct stat st;
	if (stat(path, &st) == 0 && st.st_uid == getuid()) {
		info("%s is ours (uid %d): chmod allowed, not tested", path, (int)st.st_uid);
		return;
	}
	mode_t old = stat(path, &st) == 0 ? st.st_mode & 07777 : 0755;
	if (chmod(path, m) == 0) {
		chmod(path, old);
		escaped("chmod %o %s (owned by someone else)", (unsigned)m, path);
	} else {
		blocked("chmod %o %s errno=%d (%s)", (unsigned)m, path, errno, strerror(errno));
	}
}

int main(void)
{
	info("uid %d gid %d", (int)getuid(), (int)getgid());
	char mine[] = "/tmp/gavel-probe-own";
	int fd = open(mine, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	try_chown(mine, 0, 0);
	try_chown(mine, (uid_t)-1, 0);
	try_chown(mine, 1, 1);
	unlink(mine);
	char mine_box[] = "gavel-probe-own";
	fd = open(mine_box, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		close(fd);
		try_chown(mine_box, 0, 0);
		unlink(mine_box);
	}
	try_chown("/tmp", 65534, 65534);
	try_chown("/box", 65534, 65534);
	try_chown("/", 65534, 65534);
	try_chown("/etc/passwd", 65534, 65534);
	try_chown("/usr/bin/gcc", 65534, 65534);
	try_chmod("/usr/bin/gcc", 06777);
	try_chmod("/etc/passwd", 0666);
	try_chmod("/", 0777);
	try_chmod("/box", 0777);
	try_chmod("/tmp", 0700);
	try_chmod("/proc/1", 0777);
	return finish();
}
