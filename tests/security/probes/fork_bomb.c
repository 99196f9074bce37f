/* fork_bomb — the classic bomb: every process forks forever and never
 * exits. The process limit must stop it (fork fails with EAGAIN), the run
 * must end at the time limit (TLE), nothing may remain afterwards, and the
 * next run must work. A shared counter stops the bomb at 256 processes so
 * that a sandbox without a process limit cannot exhaust the host's pids
 * (each sandboxed process costs the host several threads); reaching it is
 * reported as an escape. */
#include "probe.h"

#include <sys/mman.h>

int main(void)
{
	long *count = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (count == MAP_FAILED) {
		info("mmap: %s", strerror(errno));
		return 1;
	}
	info("bomb starting");
	int reported = 0;
	for (;;) {
		if (__atomic_load_n(&count[0], __ATOMIC_RELAXED) >= 256) {
			if (__atomic_fetch_add(&count[1], 1, __ATOMIC_RELAXED) == 0)
				escaped("256 processes forked: no process limit");
			for (;;)
				pause();
		}
		pid_t pid = fork();
		if (pid > 0) {
			__atomic_fetch_add(&count[0], 1, __ATOMIC_RELAXED);
		} else if (pid < 0 && !reported) {
			reported = 1;
			if (__atomic_fetch_add(&count[2], 1, __ATOMIC_RELAXED) == 0)
				blocked("fork errno=%d (%s) after %ld processes", errno, strerror(errno),
					__atomic_load_n(&count[0], __ATOMIC_RELAXED));
		}
	}
}
