/* The writable copy of /box (workcopy.h). Runs in gavel-init while no
 * other process exists (the previous run's were killed and /tmp wiped).
 * Security argument: every open is O_NOFOLLOW through dirfds, so nothing
 * the program planted can redirect a write; only regular files and
 * folders are copied; the copy is inside /tmp, whose size the tmpfs caps
 * and whose pages the sandbox's memory cgroup pays for, so a program can
 * make it hold no more than it could write to /tmp anyway. Once copied,
 * /box itself is closed to the program (mode 0700, init's): the run may
 * change modes (seccomp_policy.c, the toolchain option), and what the
 * compile left in /box belongs to the program's uid, so a chmod would
 * otherwise make host-disk folders writable again. */
#include "executor/init/workcopy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WORKCOPY_DEPTH_MAX 16

static int copy_file(int src, int dst_dfd, const char *name, mode_t mode, struct gv_err *err)
{
	int out = openat(dst_dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (out < 0)
		return gv_err_errno(err, "create %s", name);
	int rc = 0;
	char buf[65536];
	for (;;) {
		ssize_t n = read(src, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = gv_err_errno(err, "read %s", name);
			break;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				rc = gv_err_errno(err, "write %s", name);
				break;
			}
			off += w;
		}
		if (rc < 0)
			break;
	}
	if (rc == 0 && fchmod(out, mode) < 0)
		rc = gv_err_errno(err, "chmod %s", name);
	close(out);
	return rc;
}

static int copy_dir(int src_dfd, int dst_dfd, int depth, struct gv_err *err)
{
	if (depth > WORKCOPY_DEPTH_MAX)
		return gv_err_set(err, GV_ELIMIT, "work dir deeper than %d levels", WORKCOPY_DEPTH_MAX);
	int fd = dup(src_dfd);
	if (fd < 0)
		return gv_err_errno(err, "dup");
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return gv_err_errno(err, "fdopendir");
	}
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		int s = openat(src_dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (s < 0) {
			if (errno == ELOOP)
				continue; /* a link: not copied */
			rc = gv_err_errno(err, "open %s", e->d_name);
			break;
		}
		struct stat st;
		if (fstat(s, &st) < 0) {
			rc = gv_err_errno(err, "stat %s", e->d_name);
		} else if (S_ISREG(st.st_mode)) {
			rc = copy_file(s, dst_dfd, e->d_name, (st.st_mode & 0111) ? 0777 : 0666, err);
		} else if (S_ISDIR(st.st_mode)) {
			int sub = -1;
			if (mkdirat(dst_dfd, e->d_name, 0700) < 0 ||
			    (sub = openat(dst_dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
			    fchmod(sub, 0777) < 0)
				rc = gv_err_errno(err, "folder %s", e->d_name);
			else
				rc = copy_dir(s, sub, depth + 1, err);
			if (sub >= 0)
				close(sub);
		}
		close(s);
	}
	closedir(d);
	return rc;
}

/* The program (another uid, no capability) can no longer look up any
 * name under the source: it is init's, mode 0700. Checked after the
 * change, since a run that could reach /box must not start. */
static int close_source(int src_dfd, struct gv_err *err)
{
	struct stat st;
	if (fchmod(src_dfd, 0700) < 0)
		return gv_err_errno(err, "close the source folder (chmod 0700)");
	if (fstat(src_dfd, &st) < 0)
		return gv_err_errno(err, "stat the source folder");
	if ((st.st_mode & 07777) != 0700 || st.st_uid != geteuid())
		return gv_err_set(err, GV_ESANDBOX, "the source folder stays open to the program (mode %o, uid %u)",
				  (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
	return 0;
}

int init_workcopy_make(int src_dfd, int tmp_dfd, struct gv_err *err)
{
	const char *name = INIT_WORKCOPY_DIR + sizeof("/tmp/") - 1;
	int dst = -1, rc = 0;
	/* Modes, not owners, let the program in: init may lack CAP_CHOWN
	 * (its bounding set is empty), as for the feedback dir. */
	if (mkdirat(tmp_dfd, name, 0700) < 0 ||
	    (dst = openat(tmp_dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fchmod(dst, 0777) < 0)
		rc = gv_err_errno(err, "make %s", INIT_WORKCOPY_DIR);
	else
		rc = copy_dir(src_dfd, dst, 0, err);
	if (dst >= 0)
		close(dst);
	if (rc == 0)
		rc = close_source(src_dfd, err);
	if (rc < 0)
		gv_err_prefix(err, "work copy");
	return rc;
}
