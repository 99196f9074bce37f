/* kill_init — the program cannot signal gavel-init (pid 1) or anything but
 * its own processes. A killed init would take this probe with it (pid 1 of
 * its namespace), so the probe cannot see that itself; what shows it is
 * outside: the run must still report normally (OK with DONE: only init
 * sends the result), and, judged (kill_init_judge: 4 tests in one
 * sandbox), every test after the first must run under the very same init.
 * For that the probe prints "EVIDENCE init <start> boot <ms>": init's start
 * time in clock ticks since the sandbox booted and the sandbox's boot
 * instant (CLOCK_REALTIME - CLOCK_MONOTONIC, which gVisor counts from the
 * sandbox's start); the driver requires both to be the same in all tests.
 * A stopped init is visible from here: its state in /proc/1/stat. */
#include "probe.h"

/* The kernel may permit the call (init can share the program's uid) and
 * still drop the signal (a pid namespace's init gets only signals it
 * handles): what counts is that init survives and reports. */
static void try_kill(pid_t pid, int sig, const char *name)
{
	if (kill(pid, sig) == 0)
		info("kill(%d, %s) was permitted", (int)pid, name);
	else
		blocked("kill(%d, %s) errno=%d (%s)", (int)pid, name, errno, strerror(errno));
}

int main(void)
{
	try_kill(1, 0, "0");
	try_kill(1, SIGTERM, "SIGTERM");
	try_kill(1, SIGSTOP, "SIGSTOP");
	try_kill(1, SIGKILL, "SIGKILL");
	try_kill(1, SIGSEGV, "SIGSEGV");
	/* Everything else we may signal: only our own processes, never init.
	 * Linux spares the caller; a child shows the broadcast works at all. */
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	int r = kill(-1, SIGKILL);
	info("kill(-1, SIGKILL) = %d (%s)", r, r ? strerror(errno) : "ok");
	if (child > 0)
		waitpid(child, NULL, 0);
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	if (getppid() == 0)
		info("parent pid reads as 0 (outside our namespace)");
	else
		info("parent pid %d", (int)getppid());
	try_kill(getppid(), SIGKILL, "SIGKILL (parent)");
	nanosleep(&ts, NULL);
	char stat[1024] = "";
	int fd = open("/proc/1/stat", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, stat, sizeof stat - 1);
		stat[n > 0 ? n : 0] = 0;
		close(fd);
	}
	/* Fields after "(comm)": state is the 3rd of the line, starttime
	 * the 22nd. */
	char *rp = strrchr(stat, ')');
	char state = 0;
	unsigned long long start = 0;
	if (rp && sscanf(rp + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
			 &state, &start) == 2) {
		if (state == 'T' || state == 't') {
			escaped("gavel-init is stopped (state %c)", state);
			kill(1, SIGCONT);
		} else if (state == 'Z' || state == 'X') {
			escaped("gavel-init is dead (state %c)", state);
		}
		struct timespec rt, mono;
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_MONOTONIC, &mono);
		long long boot_ms = (rt.tv_sec - mono.tv_sec) * 1000LL + (rt.tv_nsec - mono.tv_nsec) / 1000000;
		printf("EVIDENCE init %llu boot %lld state %c\n", start, boot_ms, state);
	} else {
		info("/proc/1/stat unreadable: %.80s", stat);
	}
	return finish();
}
