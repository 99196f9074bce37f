/* The reference: 40 MiB of int under the 64 MiB limit. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	int n;
	if (scanf("%d", &n) != 1)
		return 1;
	int *a = malloc(sizeof(*a) * (size_t)n);
	if (!a)
		return 1;
	for (int i = 0; i < n; i++)
		a[i] = i % 7;
	long long s = 0;
	for (int i = 0; i < n; i++)
		s += a[i];
	printf("%lld\n", s);
	free(a);
	return 0;
}
