/* Kattis output validator with scores: exit 42 and write x to score.txt
 * when 0 <= x <= N, else exit 43. */
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	FILE *in = fopen(argv[1], "r");
	long n, x;
	if (!in || fscanf(in, "%ld", &n) != 1)
		return 1;
	char path[4200];
	snprintf(path, sizeof(path), "%s/judgemessage.txt", argv[3]);
	FILE *msg = fopen(path, "w");
	if (scanf("%ld", &x) != 1 || x < 0 || x > n) {
		if (msg)
			fprintf(msg, "not a number in [0, %ld]\n", n);
		return 43;
	}
	snprintf(path, sizeof(path), "%s/score.txt", argv[3]);
	FILE *sc = fopen(path, "w");
	if (!sc)
		return 1;
	fprintf(sc, "%ld\n", x);
	if (msg)
		fprintf(msg, "scored %ld\n", x);
	return fclose(sc) == 0 ? 42 : 1;
}
