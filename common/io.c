#include "common/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gv_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int gv_write_file_at(int dir_fd, const char *name, const void *data, size_t len, unsigned mode,
		     struct gv_err *err)
{
	char tmp[300];
	if (snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid()) >= (int)sizeof(tmp))
		return gv_err_set(err, GV_ELIMIT, "file name too long: %s", name);
	int fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return gv_err_errno(err, "create %s", tmp);
	bool ok = gv_write_all(fd, data, len) == 0 && fchmod(fd, (mode_t)mode) == 0;
	int e = errno;
	if (close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (!ok || renameat(dir_fd, tmp, dir_fd, name) != 0) {
		if (ok)
			e = errno;
		unlinkat(dir_fd, tmp, 0);
		errno = e;
		return gv_err_errno(err, "write %s", name);
	}
	return 0;
}

size_t gv_read_upto(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return got;
		if (n == 0) {
			errno = 0;
			return got;
		}
		got += (size_t)n;
	}
	return got;
}

int gv_mkdir_parents(const char *path, struct gv_err *err)
{
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return gv_err_set(err, GV_ELIMIT, "path too long: %s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return gv_err_errno(err, "mkdir %s", buf);
		*p = '/';
	}
	if (mkdir(buf, 0700) != 0 && errno != EEXIST)
		return gv_err_errno(err, "mkdir %s", buf);
	return 0;
}

/* Security argument: the tree may have been writable by a sandbox (a work
 * dir) or filled from an uploaded archive, so it may hold symlinks, fifos or
 * device-like files planted to redirect us. Every entry is examined with
 * fstatat(AT_SYMLINK_NOFOLLOW); only directories are descended, through
 * openat(O_NOFOLLOW | O_DIRECTORY) relative to the parent's fd, and
 * anything else is unlinked, never opened. No path below the top is
 * resolved by name, so a link swapped in meanwhile cannot lead outside the
 * tree: at worst the open fails and the entry is left. Root removes
 * directories without search or write permission through CAP_DAC_OVERRIDE,
 * so nothing is chmod'ed. */
static int remove_tree_level(int parent_fd, const char *name, unsigned depth, struct gv_err *err)
{
	struct stat st;
	if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : gv_err_errno(err, "stat %s", name);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT)
			return 0;
		return gv_err_errno(err, "unlink %s", name);
	}
	if (depth > GV_REMOVE_TREE_DEPTH_MAX)
		return gv_err_set(err, GV_ELIMIT, "remove %s: more than %d levels deep", name,
				  GV_REMOVE_TREE_DEPTH_MAX);
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : gv_err_errno(err, "open %s", name);
	DIR *d = fdopendir(fd);
	if (!d) {
		int saved = errno;
		close(fd);
		errno = saved;
		return gv_err_errno(err, "fdopendir %s", name);
	}
	/* Only the first failure is reported; the rest of the tree is still
	 * removed. */
	int rc = 0;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno && rc == 0)
				rc = gv_err_errno(err, "readdir %s", name);
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (remove_tree_level(dirfd(d), de->d_name, depth + 1, rc == 0 ? err : NULL) != 0)
			rc = -1;
	}
	closedir(d);
	if (unlinkat(parent_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT && rc == 0)
		rc = gv_err_errno(err, "rmdir %s", name);
	return rc;
}

int gv_remove_tree_at(int parent_fd, const char *name, struct gv_err *err)
{
	return remove_tree_level(parent_fd, name, 0, err);
}
