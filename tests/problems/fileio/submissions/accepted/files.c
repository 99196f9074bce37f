/* Reads input.txt, writes output.txt. */
#include <stdio.h>

int main(void)
{
	FILE *in = fopen("input.txt", "r"), *out = fopen("output.txt", "w");
	if (!in || !out)
		return 1;
	long long n, x, sum = 0;
	if (fscanf(in, "%lld", &n) != 1)
		return 1;
	for (long long i = 0; i < n; i++)
		if (fscanf(in, "%lld", &x) == 1)
			sum += x;
	fprintf(out, "%lld\n", sum);
	return fclose(out) != 0;
}
