/* "ab" repeated: a palindrome only for odd N; the even secret case is WA. */
#include <stdio.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	for (long i = 0; i < n; i++)
		putchar(i % 2 ? 'b' : 'a');
	putchar('\n');
	return 0;
}
