/* fork_exit — forks sleeping children until fork fails, reports how many,
 * and exits 0 while they still sleep. The process limit must be finite
 * (< 256), the run must end as soon as the program exits (OK, not at the
 * wall limit), and the sleepers must be killed. */
#include "probe.h"

int main(void)
{
	int n = 0;
	for (; n < 256; n++) {
		pid_t pid = fork();
		if (pid == 0) {
			sleep(30);
			_exit(0);
		}
		if (pid < 0) {
			blocked("fork errno=%d (%s) after %d children", errno, strerror(errno), n);
			break;
		}
	}
	if (n >= 256)
		escaped("forked 256 children: no process limit");
	info("exiting with %d children asleep", n);
	return finish();
}
