/* Right sum, but on stdout: output.txt stays empty. */
#include <stdio.h>

int main(void)
{
	FILE *in = fopen("input.txt", "r");
	long long n, x, sum = 0;
	if (!in || fscanf(in, "%lld", &n) != 1)
		return 1;
	for (long long i = 0; i < n; i++)
		if (fscanf(in, "%lld", &x) == 1)
			sum += x;
	printf("%lld\n", sum);
	return 0;
}
