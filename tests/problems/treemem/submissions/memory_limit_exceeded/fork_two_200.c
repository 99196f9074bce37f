/* Two processes touching 200 MiB each under a 256 MiB limit. Where no
 * second process may start (procs: 1) the parent touches both itself.
 * MLE either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *touch(size_t mib)
{
	char *p = malloc(mib << 20);
	if (p)
		memset(p, 1, mib << 20);
	return p;
}

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	char *a = touch(200);
	char *b = pid < 0 ? touch(200) : a;
	sleep(1);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	printf("%ld\n", n + (a && b ? a[0] + b[1] - 1 : 1));
	return 0;
}
