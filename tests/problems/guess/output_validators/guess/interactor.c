/* Interactor of the guess fixture: interactor input answer feedback_dir.
 * Reads the secret from input, answers "? x" queries with <, > or =, at
 * most MAX_QUERIES, then checks "! x". Exits 42 (accepted) or 43 (wrong
 * answer), with a line in feedback_dir/judgemessage.txt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_QUERIES 10

static const char *feedback_dir;

static void verdict(int code, const char *fmt, int a, int b)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/judgemessage.txt", feedback_dir);
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, fmt, a, b);
		fputc('\n', f);
		fclose(f);
	}
	exit(code);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	feedback_dir = argv[3];
	FILE *in = fopen(argv[1], "r");
	int secret;
	if (!in || fscanf(in, "%d", &secret) != 1 || secret < 1 || secret > 1000)
		return 1; /* a broken test case: judge error */
	fclose(in);
	int queries = 0;
	char op[8];
	int x;
	for (;;) {
		if (scanf("%7s", op) != 1)
			verdict(43, "no final answer after %d queries%.0d", queries, 0);
		if (scanf("%d", &x) != 1)
			verdict(43, "expected a number after query %d%.0d", queries, 0);
		if (strcmp(op, "!") == 0) {
			if (x != secret)
				verdict(43, "wrong answer %d (secret %d)", x, secret);
			verdict(42, "found %d in %d queries", secret, queries);
		}
		if (strcmp(op, "?") != 0)
			verdict(43, "bad command after %d queries%.0d", queries, 0);
		if (++queries > MAX_QUERIES)
			verdict(43, "more than %d queries%.0d", MAX_QUERIES, 0);
		puts(secret < x ? "<" : secret > x ? ">" : "=");
		fflush(stdout);
	}
}
