/* Interactor of the guesshang fixture: interactor input answer feedback_dir.
 * As tests/problems/guess's, but where that one exits 43 this one waits
 * forever (the relay's limit kills it), as an interactor that keeps
 * reading past the end of its input would. Exits 42 when the secret is
 * found within MAX_QUERIES queries. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_QUERIES 10

static void wait_forever(void)
{
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	FILE *in = fopen(argv[1], "r");
	int secret;
	if (!in || fscanf(in, "%d", &secret) != 1 || secret < 1 || secret > 1000)
		return 1; /* a broken test case: judge error */
	fclose(in);
	int queries = 0;
	char op[8];
	int x;
	for (;;) {
		if (scanf("%7s", op) != 1 || scanf("%d", &x) != 1)
			wait_forever();
		if (strcmp(op, "!") == 0) {
			if (x != secret)
				wait_forever();
			return 42;
		}
		if (strcmp(op, "?") != 0 || ++queries > MAX_QUERIES)
			wait_forever();
		puts(secret < x ? "<" : secret > x ? ">" : "=");
		fflush(stdout);
	}
}
