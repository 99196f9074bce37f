/* fds — the program inherits exactly stdin, stdout and stderr: no
 * descriptor of gavel-init (the result pipe to the host, the job record), of
 * runsc or of the host; and none of the three is a terminal (TIOCSTI). */
#include "probe.h"

#include <sys/ioctl.h>

int main(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		escaped("cannot list /proc/self/fd (%s): probe cannot judge", strerror(errno));
		return finish();
	}
	int self = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		int fd = atoi(de->d_name);
		char link[64], target[512];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof target - 1);
		target[n > 0 ? n : 0] = 0;
		if (fd == self)
			continue;
		if (fd <= 2)
			info("fd %d -> %s", fd, target);
		else
			escaped("inherited fd %d -> %s", fd, target);
	}
	closedir(d);
	for (int fd = 0; fd <= 2; fd++) {
		if (isatty(fd))
			escaped("fd %d is a terminal", fd);
		char c = 'x';
		if (ioctl(fd, TIOCSTI, &c) == 0)
			escaped("ioctl(%d, TIOCSTI) injected input", fd);
		else
			blocked("ioctl(%d, TIOCSTI) errno=%d (%s)", fd, errno, strerror(errno));
	}
	/* Descriptors above the rlimit cannot exist; probe a few anyway. */
	for (int fd = 3; fd < 1024; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0)
			escaped("fd %d is open (mode %o)", fd, (unsigned)st.st_mode);
	}
	return finish();
}
