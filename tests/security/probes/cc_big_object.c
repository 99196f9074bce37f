/* cc_big_object — the assembler fills 1 GiB of non-zero bytes into the
 * object file (.fill), so the compile step would write a gigabyte of real,
 * non-sparse data, the final program landing in the work
 * dir, a host folder. The compile must fail (CE) at its file size, disk,
 * memory or time limit, and the host's free space must not drop (the driver
 * samples it during the run). If it compiled anyway, running it says so. */
#include <stdio.h>

__asm__(".section .data\n"
	".globl gavel_big\n"
	"gavel_big:\n"
	".fill 268435456, 4, 0x5a5a5a5a\n"
	".previous\n");

extern char gavel_big[];

int main(void)
{
	printf("ESCAPED a program with 1 GiB of data compiled (%d)\n", gavel_big[12345] != 0);
	return 0;
}
