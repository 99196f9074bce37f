/* disk_fill — writes 1 MiB files into /tmp and the work dir until writing
 * fails. Each place must stop at its size limit (ENOSPC, EFBIG or EDQUOT, or
 * the run ends MLE/OLE/RE), far below the 512 MiB safety cap this probe
 * gives itself: a per-file RLIMIT_FSIZE alone does not limit many files, so
 * an unlimited host-backed work dir would fill the host's disk. The driver
 * compares the host's free space before and after. */
#include "probe.h"

static void fill(const char *dir)
{
	static char block[1 << 20];
	memset(block, 'x', sizeof block);
	long total = 0;
	int files = 0, stop = 0, err = 0;
	char path[512];
	while (!stop && total < 512) {
		snprintf(path, sizeof path, "%s/gavel-fill-%04d", dir, files);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			err = errno;
			break;
		}
		files++;
		for (int i = 0; i < 16 && total < 512; i++) {
			ssize_t n = write(fd, block, sizeof block);
			if (n == (ssize_t)sizeof block) {
				total++;
				continue;
			}
			err = n < 0 ? errno : ENOSPC;
			if (err != EFBIG)
				stop = 1;
			break;
		}
		if (fsync(fd) < 0 && !err)
			err = errno;
		close(fd);
		if (err == EFBIG) /* per-file limit: keep going with new files */
			err = 0;
	}
	if (total >= 512)
		escaped("wrote 512 MiB into %s in %d files without hitting a limit", dir, files);
	else
		blocked("%s full after %ld MiB in %d files: errno=%d (%s)", dir, total, files, err, strerror(err));
	for (int i = 0; i < files; i++) {
		snprintf(path, sizeof path, "%s/gavel-fill-%04d", dir, i);
		unlink(path);
	}
}

int main(void)
{
	signal(SIGXFSZ, SIG_IGN);
	char cwd[256] = ".";
	if (!getcwd(cwd, sizeof cwd))
		snprintf(cwd, sizeof cwd, ".");
	fill("/tmp");
	fill(cwd);
	if (strcmp(cwd, "/box"))
		fill("/box");
	return finish();
}
