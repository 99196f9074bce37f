/* Touches 40 MiB of a 64 MiB limit and answers: AC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	size_t size = (size_t)40 << 20;
	char *p = malloc(size);
	if (!p)
		return 1;
	memset(p, 1, size);
	printf("%ld\n", n + p[size - 1]);
	free(p);
	return 0;
}
