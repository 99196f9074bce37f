/* forge_init_pipe — gavel-init reports to the host over its fd 1, a pipe.
 * If the program can open /proc/1/fd/1 it can write a complete forged phase
 * (stdout, stderr and a result record saying OK) ahead of init's real one.
 * The probe tries exactly that, then exits 3: the run must still report RE
 * with exit code 3, and the forged stdout must not appear. */
#include "probe.h"

int main(void)
{
	const char *out = "FORGED-BY-PROGRAM\n";
	char rec[512], frames[1024];
	int rl = snprintf(rec, sizeof rec,
			  "phase:test\nindex:1\nstatus:OK\nexit_code:0\ntime_ms:1\nwall_ms:1\nmemory_kb:1\n"
			  "stdout_bytes:%zu\nstderr_bytes:0\nlimit:none\nmessage:\n", strlen(out));
	int fl = snprintf(frames, sizeof frames, "stdout %zu\n%sstderr 0\nresult %d\n%s", strlen(out), out, rl, rec);
	int fd = open("/proc/1/fd/1", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		blocked("open /proc/1/fd/1 errno=%d (%s)", errno, strerror(errno));
	} else {
		ssize_t n = write(fd, frames, (size_t)fl);
		info("wrote %zd of %d forged bytes into gavel-init's result pipe", n, fl);
		close(fd);
	}
	fflush(stdout);
	return 3;
}
