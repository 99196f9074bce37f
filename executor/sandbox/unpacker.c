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

/* path: given, or name beside gavel-init. */
static int helper_path(const struct exec_engine *e, const char *given, const char *name, char *path, size_t sz,
		       struct gv_err *err)
{
	if (given) {
		if (snprintf(path, sz, "%s", given) >= (int)sz)
			return gv_err_set(err, GV_ECONFIG, "%s path too long", name);
	} else {
		const char *init = e->cfg.init_path;
		const char *slash = init ? strrchr(init, '/') : NULL;
		if (!slash)
			return gv_err_set(err, GV_ECONFIG, "no gavel-init path to find %s beside", name);
		if (snprintf(path, sz, "%.*s/%s", (int)(slash - init), init, name) >= (int)sz)
			return gv_err_set(err, GV_ECONFIG, "%s path too long", name);
	}
	if (path[0] != '/')
		return gv_err_set(err, GV_ECONFIG, "%s path must be absolute", name);
	return 0;
}

static char *read_helper(const struct exec_engine *e, const char *given, const char *name, size_t max, size_t *len,
			 struct gv_err *err)
{
	char path[4096];
	if (helper_path(e, given, name, path, sizeof(path), err) < 0)
		return NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		gv_err_errno(err, "%s %s", name, path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > max) {
		close(fd);
		return gv_err_set(err, GV_ECONFIG, "%s %s must be a root-owned regular file, writable only by root",
				  name, path),
		       NULL;
	}
	char *buf = malloc((size_t)st.st_size);
	size_t got = buf ? gv_read_upto(fd, buf, (size_t)st.st_size) : 0;
	close(fd);
	if (!buf || got != (size_t)st.st_size) {
		free(buf);
		return gv_err_set(err, GV_EINTERNAL, "read %s %s", name, path), NULL;
	}
	*len = got;
	return buf;
}

char *exec_unpacker_read(const struct exec_engine *e, const char *given, size_t *len, struct gv_err *err)
{
	return read_helper(e, given, "gavel-unpack", EXEC_UNPACKER_MAX, len, err);
}

char *exec_helper_read(const struct exec_engine *e, const char *name, size_t max, size_t *len, struct gv_err *err)
{
	return read_helper(e, NULL, name, max, len, err);
}
