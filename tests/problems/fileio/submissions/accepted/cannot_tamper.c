/* Tries what a program of a file I/O task must not be able to do: change,
 * remove or replace input.txt, or create another file beside it. It
 * answers right only if every attempt failed, so AC proves the files are
 * locked as documented. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	int broke = 0;
	int fd = open("input.txt", O_WRONLY);
	if (fd >= 0) {
		broke = 1;
		close(fd);
	}
	if (unlink("input.txt") == 0 || rename("input.txt", "x.txt") == 0 || chmod("input.txt", 0666) == 0)
		broke = 1;
	fd = open("other.txt", O_WRONLY | O_CREAT, 0644);
	if (fd >= 0) {
		broke = 1;
		close(fd);
	}
	FILE *in = fopen("input.txt", "r"), *out = fopen("output.txt", "w");
	if (!in || !out)
		return 1;
	long long n, x, sum = 0;
	if (fscanf(in, "%lld", &n) != 1)
		return 1;
	for (long long i = 0; i < n; i++)
		if (fscanf(in, "%lld", &x) == 1)
			sum += x;
	fprintf(out, "%lld\n", broke ? sum + 1 : sum);
	return 0;
}
