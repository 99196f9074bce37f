/* daemon — processes the program leaves behind (double fork + setsid, one
 * holding stdout open, one fully detached) do not outlive the run: the run
 * ends when the program does, the leftovers are killed, and a leftover that
 * wakes up later cannot add to the result. The driver also checks that no
 * sandbox process remains on the host after the run. */
#include "probe.h"

static void daemonize(int keep_stdio)
{
	pid_t pid = fork();
	if (pid != 0) {
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return;
	}
	setsid();
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	if (fork() != 0)
		_exit(0);
	if (!keep_stdio) {
		close(0);
		close(1);
		close(2);
		int fd = open("/tmp/gavel-daemon.log", O_WRONLY | O_CREAT | O_APPEND, 0600);
		(void)fd;
	}
	sleep(3);
	/* Still alive after the run should have ended: say so where we can. */
	printf("ESCAPED daemon (keep_stdio=%d) survived 3 s past the program's exit\n", keep_stdio);
	fflush(stdout);
	fprintf(stderr, "ESCAPED daemon survived\n");
	for (;;)
		sleep(60);
}

int main(void)
{
	daemonize(1);
	daemonize(0);
	info("daemons started; exiting");
	return finish();
}
