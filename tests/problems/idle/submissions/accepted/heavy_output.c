/* Writes 24 MiB to stderr in 64 KiB writes (it blocks on a full pipe
 * while the judge drains it) and answers: I/O within the limit is not
 * idleness. AC. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	static char buf[65536];
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 384; i++)
		if (write(2, buf, sizeof(buf)) < 0)
			return 1;
	printf("%ld\n", n + 1);
	return 0;
}
