/* Writes through NULL with almost no memory in use: a crash, RE, not MLE. */
#include <stdio.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	volatile int *p = NULL;
	if (n > 0)
		*p = (int)n;
	printf("%ld\n", n + 1);
	return 0;
}
