/* Asks once, then computes forever (the CPU limit ends it). */
#include <stdio.h>

int main(void)
{
	printf("? 500\n");
	fflush(stdout);
	volatile unsigned long x = 0;
	for (;;)
		x++;
}
