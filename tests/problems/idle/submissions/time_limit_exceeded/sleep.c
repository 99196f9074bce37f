/* Sleeps 3 s under a 1 s time limit, then answers right: TLE (idle past
 * the limit), not judged on its output. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	sleep(3);
	printf("%ld\n", n + 1);
	return 0;
}
