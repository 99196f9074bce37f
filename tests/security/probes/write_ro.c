/* write_ro — the root file system, /usr and /etc are read-only: no file can
 * be created, opened for writing, renamed, removed or re-timed there. Where
 * an attempt succeeds the probe undoes it at once (it never truncates or
 * writes into an existing file: opening it for writing is proof enough). */
#include "probe.h"

#include <sys/time.h>

static void create_in(const char *dir)
{
	char path[512];
	snprintf(path, sizeof path, "%s/gavel-probe-%d", dir, (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0) {
		close(fd);
		unlink(path);
		escaped("created a file in %s", dir);
	} else {
		blocked("create in %s errno=%d (%s)", dir, errno, strerror(errno));
	}
	snprintf(path, sizeof path, "%s/gavel-probe-dir-%d", dir, (int)getpid());
	if (mkdir(path, 0755) == 0) {
		rmdir(path);
		escaped("created a directory in %s", dir);
	}
}

static void open_for_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		close(fd);
		escaped("opened %s for writing", path);
	} else {
		blocked("open %s for writing errno=%d (%s)", path, errno, strerror(errno));
	}
}

static void touch(const char *path)
{
	if (utimes(path, NULL) == 0)
		escaped("changed the times of %s", path);
	else
		blocked("utimes %s errno=%d (%s)", path, errno, strerror(errno));
}

static void remove_entry(const char *path)
{
	/* rename onto itself + unlink of a name that does not exist would
	 * prove nothing; try a rename to a new name and undo it. */
	char to[512];
	snprintf(to, sizeof to, "%s.gavel-probe", path);
	if (rename(path, to) == 0) {
		rename(to, path);
		escaped("renamed %s", path);
	} else {
		blocked("rename %s errno=%d (%s)", path, errno, strerror(errno));
	}
}

int main(void)
{
	static const char *dirs[] = { "/", "/usr", "/usr/bin", "/usr/lib", "/usr/local/bin", "/usr/share",
				      "/etc", "/bin", "/lib", "/var", "/proc", "/sys", "/dev", "/home", "/root",
				      /* the node's precompiled headers: swapping one would
				       * change what later submissions compile against */
				      "/pch", "/pch/cpp", "/pch/cpp/bits" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		create_in(dirs[i]);
	static const char *files[] = { "/etc/passwd", "/etc/ld.so.cache", "/usr/bin/gcc", "/usr/bin/python3",
				       "/usr/lib/x86_64-linux-gnu/libc.so.6", "/bin/sh", "/pch/cpp/bits/stdc++.h.gch" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		open_for_write(files[i]);
	touch("/usr/bin/gcc");
	touch("/etc/passwd");
	remove_entry("/etc/passwd");
	remove_entry("/usr/bin/gcc");
	remove_entry("/usr/lib");
	remove_entry("/pch/cpp/bits/stdc++.h.gch");
	/* Writable places (informational: the program needs somewhere). */
	char cwd[512];
	if (getcwd(cwd, sizeof cwd))
		info("cwd %s", cwd);
	int fd = open("/tmp/gavel-probe-ok", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	info("/tmp writable: %s", fd >= 0 ? "yes" : strerror(errno));
	if (fd >= 0) {
		close(fd);
		unlink("/tmp/gavel-probe-ok");
	}
	return finish();
}
