/* Every leg: the sum, then twice the number given, then one more. */
#include <stdio.h>
#include <string.h>

int main(void)
{
	char leg[16];
	long long n, x, sum = 0;
	if (scanf("%15s %lld", leg, &n) != 2)
		return 1;
	if (strcmp(leg, "second") == 0) {
		printf("%lld\n", 2 * n);
		return 0;
	}
	if (strcmp(leg, "third") == 0) {
		printf("%lld\n", n + 1);
		return 0;
	}
	for (long long i = 0; i < n; i++)
		if (scanf("%lld", &x) == 1)
			sum += x;
	printf("%lld\n", sum);
	return 0;
}
