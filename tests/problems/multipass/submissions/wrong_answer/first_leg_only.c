/* Knows only the first leg: on the others it prints the number back. */
#include <stdio.h>
#include <string.h>

int main(void)
{
	char leg[16];
	long long n, x, sum = 0;
	if (scanf("%15s %lld", leg, &n) != 2)
		return 1;
	if (strcmp(leg, "first") != 0) {
		printf("%lld\n", n);
		return 0;
	}
	for (long long i = 0; i < n; i++)
		if (scanf("%lld", &x) == 1)
			sum += x;
	printf("%lld\n", sum);
	return 0;
}
