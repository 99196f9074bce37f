#include "common/io.h"

#include <errno.h>
#include <stdio.h>
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
