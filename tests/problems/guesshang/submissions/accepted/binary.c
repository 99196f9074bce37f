#include <stdio.h>

int main(void)
{
	int lo = 1, hi = 1000;
	char r[8];
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		printf("? %d\n", mid);
		fflush(stdout);
		if (scanf("%7s", r) != 1)
			return 1;
		if (r[0] == '=') {
			lo = hi = mid;
			break;
		}
		if (r[0] == '<')
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	printf("! %d\n", lo);
	fflush(stdout);
	return 0;
}
