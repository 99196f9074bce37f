/* Doubles a buffer with realloc, filling it, until realloc fails, then
 * writes through the NULL it got: the container that grows until
 * allocation fails. MLE, not RE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	size_t size = 1 << 20;
	char *p = NULL;
	for (;;) {
		char *q = realloc(p, size);
		if (!q) {
			*(volatile char *)q = 1; /* the bug: never checked */
			break;
		}
		p = q;
		memset(p + size / 2, 1, size / 2);
		size *= 2;
	}
	printf("%ld\n", n + 1);
	return 0;
}
