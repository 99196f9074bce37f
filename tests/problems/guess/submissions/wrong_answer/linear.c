/* Asks 1, 2, 3, ...: more than 10 queries for most secrets. */
#include <stdio.h>

int main(void)
{
	char r[8];
	for (int x = 1; x <= 1000; x++) {
		printf("? %d\n", x);
		fflush(stdout);
		if (scanf("%7s", r) != 1)
			return 0;
		if (r[0] == '=') {
			printf("! %d\n", x);
			return 0;
		}
	}
	return 0;
}
