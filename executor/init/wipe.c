/* Emptying /tmp and locking /box between runs (see wipe.h). Security
 * argument: every call is relative to a directory fd we opened with
 * O_NOFOLLOW|O_DIRECTORY, entries are examined with AT_SYMLINK_NOFOLLOW and
 * removed with unlinkat, so a symlink planted by the program can only ever
 * be unlinked itself; nothing outside the given directory is touched. The
 * callers guarantee that no process of the program is alive. */
#include "executor/init/wipe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_dot(const char *n)
{
	return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

static DIR *open_dir_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		/* A directory the program created with mode 0: we own it. */
		if (fchmodat(dfd, name, 0700, 0) == 0)
			fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;
	DIR *d = fdopendir(fd);
	if (!d)
		close(fd);
	return d;
}

struct wipe_ctx {
	int topfd;
	unsigned long removed;
	unsigned long moved;
	struct gv_err *err;
};

/* Empties the directory d; returns 0 when it is empty, -1 on error. */
static int wipe_contents(struct wipe_ctx *c, DIR *d, int depth)
{
	int dfd = dirfd(d);
	int again;
	do {
		again = 0;
		struct dirent *e;
		errno = 0;
		while ((e = readdir(d)) != NULL) {
			if (is_dot(e->d_name))
				continue;
			if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) {
				if (unlinkat(dfd, e->d_name, 0) == 0) {
					c->removed++;
					again = 1;
					continue;
				}
				if (errno == ENOENT)
					continue;
				if (errno != EISDIR && errno != EPERM)
					return gv_err_errno(c->err, "unlinkat %s", e->d_name);
			} else if (e->d_type == DT_UNKNOWN && unlinkat(dfd, e->d_name, 0) == 0) {
				c->removed++;
				again = 1;
				continue;
			}
			/* A directory. */
			if (depth + 1 >= INIT_WIPE_DEPTH_MAX) {
				char name[64];
				snprintf(name, sizeof(name), ".gv_deep_%lu", c->moved++);
				if (renameat(dfd, e->d_name, c->topfd, name) < 0)
					return gv_err_errno(c->err, "renameat %s up", e->d_name);
				again = 1;
				continue;
			}
			DIR *sub = open_dir_at(dfd, e->d_name);
			if (!sub)
				return gv_err_errno(c->err, "open directory %s", e->d_name);
			/* Write permission is needed to remove its entries. */
			if (fchmod(dirfd(sub), 0700) < 0) {
				closedir(sub);
				return gv_err_errno(c->err, "fchmod directory %s", e->d_name);
			}
			int r = wipe_contents(c, sub, depth + 1);
			closedir(sub);
			if (r < 0)
				return -1;
			if (unlinkat(dfd, e->d_name, AT_REMOVEDIR) < 0)
				return gv_err_errno(c->err, "rmdir %s", e->d_name);
			c->removed++;
			again = 1;
		}
		if (errno)
			return gv_err_errno(c->err, "readdir");
		/* Removing while reading may hide entries from this pass, and
		 * entries moved up land in the top directory: read again until a
		 * pass finds nothing. Each pass removes or moves at least one. */
		if (again)
			rewinddir(d);
		errno = 0;
	} while (again);
	return 0;
}

/* 1 when the directory at fd holds nothing but "." and "..", 0 when it
 * holds something, -1 on error. Reads fd itself from offset 0: after a
 * run that left nothing (the common case) the wipe costs two or three
 * system calls instead of opening and walking the directory. */
static int dir_is_empty(int fd, struct gv_err *err)
{
	static char buf[4096] __attribute__((aligned(8)));
	if (lseek(fd, 0, SEEK_SET) < 0)
		return gv_err_errno(err, "rewind directory to wipe");
	for (;;) {
		ssize_t n = getdents64(fd, buf, sizeof(buf));
		if (n < 0)
			return gv_err_errno(err, "read directory to wipe");
		if (n == 0)
			return 1;
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *d = (const struct dirent64 *)(buf + off);
			if (d->d_reclen == 0)
				return gv_err_set(err, GV_ESANDBOX, "directory to wipe: bad entry");
			if (!is_dot(d->d_name))
				return 0;
			off += d->d_reclen;
		}
	}
}

int init_wipe_dir(int fd, unsigned long *removed, struct gv_err *err)
{
	if (removed)
		*removed = 0;
	int empty = dir_is_empty(fd, err);
	if (empty < 0)
		return -1;
	if (empty)
		return 0;
	struct wipe_ctx c = { .topfd = fd, .err = err };
	DIR *d = open_dir_at(fd, ".");
	if (!d)
		return gv_err_errno(err, "open directory to wipe");
	int r = wipe_contents(&c, d, 0);
	closedir(d);
	if (r < 0)
		return -1;
	if (removed)
		*removed = c.removed;
	return 0;
}

/* True when uid/gid (the program's) may write an entry of this mode. */
static int program_can_write(const struct stat *st, uid_t uid, gid_t gid)
{
	if (st->st_uid == uid)
		return (st->st_mode & S_IWUSR) != 0;
	if (st->st_gid == gid)
		return (st->st_mode & S_IWGRP) != 0;
	return (st->st_mode & S_IWOTH) != 0;
}

/* Sets mode `want` on an entry (fd >= 0: the entry itself; else name at
 * dfd). If we may not (not our file, no CAP_FOWNER), the entry must at
 * least be unwritable for the program. */
static int lock_mode(int dfd, const char *name, int fd, const struct stat *st, mode_t want,
		     uid_t uid, gid_t gid, struct gv_err *err)
{
	if ((st->st_mode & 07777) == want)
		return 0;
	int rc = fd >= 0 ? fchmod(fd, want) : fchmodat(dfd, name, want, 0);
	if (rc == 0)
		return 0;
	if (errno != EPERM)
		return gv_err_errno(err, "chmod %s", name);
	if (program_can_write(st, uid, gid))
		return gv_err_set(err, GV_ESANDBOX, "%s is writable for the program and not ours to lock", name);
	return 0;
}

static int lock_dir(int fd, const char *label, int depth, uid_t uid, gid_t gid,
		    struct gv_err *err)
{
	if (depth > INIT_LOCK_DEPTH_MAX)
		return gv_err_set(err, GV_ELIMIT, "work dir deeper than %d", INIT_LOCK_DEPTH_MAX);
	int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dup_fd < 0)
		return gv_err_errno(err, "open %s", label);
	DIR *d = fdopendir(dup_fd);
	if (!d) {
		close(dup_fd);
		return gv_err_errno(err, "fdopendir %s", label);
	}
	struct dirent *e;
	int rc = 0;
	errno = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (is_dot(e->d_name))
			continue;
		struct stat st;
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = gv_err_errno(err, "stat %s", e->d_name);
			break;
		}
		if (S_ISLNK(st.st_mode))
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				rc = gv_err_errno(err, "open %s", e->d_name);
				break;
			}
			rc = lock_dir(sub, e->d_name, depth + 1, uid, gid, err);
			close(sub);
		} else {
			rc = lock_mode(fd, e->d_name, -1, &st, (st.st_mode & 0555) | 0444, uid, gid, err);
		}
		errno = 0;
	}
	if (rc == 0 && errno)
		rc = gv_err_errno(err, "readdir %s", label);
	closedir(d);
	if (rc < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return gv_err_errno(err, "stat %s", label);
	return lock_mode(-1, label, fd, &st, 0555, uid, gid, err);
}

int init_lock_tree(int fd, uid_t uid, gid_t gid, struct gv_err *err)
{
	return lock_dir(fd, ".", 0, uid, gid, err);
}
