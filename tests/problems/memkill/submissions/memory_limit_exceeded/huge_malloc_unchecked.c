/* Asks for 8 GiB at once and never checks the result: where the
 * allocation is refused it writes through NULL (SIGSEGV), where it is
 * granted it touches every page. MLE either way. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	size_t size = (size_t)8 << 30;
	volatile char *p = malloc(size);
	for (size_t i = 0; i < size; i += 4096)
		p[i] = (char)n;
	printf("%ld\n", n + p[size / 2]);
	return 0;
}
