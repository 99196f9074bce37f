/* Right below 100 only: all of g1 (3 x 10), none of g2 (min). */
#include <stdio.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	printf("%ld\n", n < 100 ? 2 * n : 0);
	return 0;
}
