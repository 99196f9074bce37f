/* Reading gavel-unpack (executor/sandbox/unpacker.h). Security argument:
 * the bytes we read become a program that runs, as uid 65534, inside every
 * sandbox that reads an archive; opening with O_NOFOLLOW and checking the
 * opened file (fstat: root-owned, a regular file, no group or other write
 * bit) means the program is one only root could have put there. */
#include "executor/sandbox/unpacker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"

char *exec_unpacker_read(const struct exec_engine *e, const char *given, size_t *len, struct gv_err *err)
{
	char path[4096];
	if (given) {
		if (snprintf(path, sizeof(path), "%s", given) >= (int)sizeof(path))
			return gv_err_set(err, GV_ECONFIG, "gavel-unpack path too long"), NULL;
	} else {
		const char *init = e->cfg.init_path;
		const char *slash = init ? strrchr(init, '/') : NULL;
		if (!slash)
			return gv_err_set(err, GV_ECONFIG, "no gavel-init path to find gavel-unpack beside"), NULL;
		if (snprintf(path, sizeof(path), "%.*s/gavel-unpack", (int)(slash - init), init) >= (int)sizeof(path))
			return gv_err_set(err, GV_ECONFIG, "gavel-unpack path too long"), NULL;
	}
	if (path[0] != '/')
		return gv_err_set(err, GV_ECONFIG, "gavel-unpack path must be absolute"), NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		gv_err_errno(err, "gavel-unpack %s", path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > EXEC_UNPACKER_MAX) {
		close(fd);
		return gv_err_set(err, GV_ECONFIG,
				  "gavel-unpack %s must be a root-owned regular file, writable only by root", path),
		       NULL;
	}
	char *buf = malloc((size_t)st.st_size);
	size_t got = buf ? gv_read_upto(fd, buf, (size_t)st.st_size) : 0;
	close(fd);
	if (!buf || got != (size_t)st.st_size) {
		free(buf);
		return gv_err_set(err, GV_EINTERNAL, "read gavel-unpack %s", path), NULL;
	}
	*len = got;
	return buf;
}
