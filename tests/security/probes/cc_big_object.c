/* cc_big_object — a 1 GiB initialised array makes the assembler write a
 * 1 GiB object file: the compile must fail (CE) at the compile step's file
 * size, disk or time limit rather than write a gigabyte to the host. If it
 * compiled anyway, running it says so. */
#include <stdio.h>

static char big[1u << 30] = { 1 };

int main(void)
{
	printf("ESCAPED a 1 GiB program compiled (%d)\n", big[12345]);
	return 0;
}
