/* C's process limit is 1: fork must fail with EAGAIN. Answers right only
 * then; a fork that succeeds gives a wrong answer. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		printf("fork succeeded under a process limit of 1\n");
		return 0;
	}
	printf("%ld\n", errno == EAGAIN ? n + 1 : -1);
	return 0;
}
