/* Sleeps 0.3 s, well inside the 1 s limit: idle under the limit is fine. */
#include <stdio.h>
#include <time.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	struct timespec ts = { 0, 300000000L };
	nanosleep(&ts, NULL);
	printf("%ld\n", n + 1);
	return 0;
}
