/* Asks once, then crashes. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char r[8];
	printf("? 500\n");
	fflush(stdout);
	if (scanf("%7s", r) != 1)
		return 0;
	abort();
}
