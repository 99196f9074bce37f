/* A child burns 1.8 s of CPU and answers; the parent waits. Where no
 * second process may start (procs: 1) the parent does the work itself.
 * The CPU time of a test is that of all its processes: TLE either way. */
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void spin(double s)
{
	clock_t end = clock() + (clock_t)(s * CLOCKS_PER_SEC);
	while (clock() < end)
		;
}

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid <= 0) {
		spin(1.8);
		printf("%ld\n", n + 1);
		return 0;
	}
	waitpid(pid, NULL, 0);
	return 0;
}
