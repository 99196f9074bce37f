/* a and b alternating, mirrored: always a palindrome. */
#include <stdio.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	for (long i = 0; i < n; i++)
		putchar(((i < n - 1 - i ? i : n - 1 - i) % 2) ? 'b' : 'a');
	putchar('\n');
	return 0;
}
