/* Lock files of a node's engines; see lockdir.h. */
#include "executor/sandbox/lockdir.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"

int exec_lockdir_open(const char *dir, const char *what, struct gv_err *err)
{
	if (gv_mkdir_parents(dir, err) != 0)
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return gv_err_errno(err, "%s: open %s", what, dir);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		gv_err_errno(err, "%s: stat %s", what, dir);
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
		close(fd);
		return gv_err_set(err, GV_ESANDBOX, "%s: %s must be owned by uid %u and writable by it alone", what,
				  dir, (unsigned)geteuid());
	}
	return fd;
}

int exec_lockdir_try(int dir_fd, const char *name, const char *what, int *fd_out, struct gv_err *err)
{
	int fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return gv_err_errno(err, "%s: open %s", what, name);
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		*fd_out = fd;
		return 1;
	}
	int e = errno;
	close(fd);
	if (e != EWOULDBLOCK && e != EINTR) {
		errno = e;
		return gv_err_errno(err, "%s: lock %s", what, name);
	}
	return 0;
}
