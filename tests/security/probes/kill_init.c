/* kill_init — the program cannot signal gavel-init (pid 1) or anything but
 * its own processes; after trying, it ends normally and the run must still
 * report properly (the driver checks the result is a normal OK). */
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
	if (kill(1, 0) < 0 && errno == ESRCH)
		escaped("gavel-init (pid 1) is gone");
	return finish();
}
