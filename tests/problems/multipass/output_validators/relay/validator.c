/* Output validator of the two-pass relay (Kattis protocol, multi-pass):
 * argv: input answer feedback_dir; the submission's output on stdin.
 * Pass one (input "first N ..."): checks the sum, keeps it in state.txt
 * and writes nextpass.in ("second S"). Pass two (input "second S"):
 * state.txt must be there and agree with the input; the output must be
 * 2*S, as the answer file says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AC 42
#define WA 43

static FILE *in_feedback(const char *dir, const char *name, const char *mode)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, mode);
}

static int judge_message(const char *dir, const char *msg)
{
	FILE *f = in_feedback(dir, "judgemessage.txt", "a");
	if (f) {
		fprintf(f, "%s\n", msg);
		fclose(f);
	}
	return WA;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	FILE *in = fopen(argv[1], "r"), *ans = fopen(argv[2], "r");
	if (!in || !ans)
		return 1;
	const char *fb = argv[3];
	char leg[16];
	if (fscanf(in, "%15s", leg) != 1)
		return 1;
	long long got;
	if (scanf("%lld", &got) != 1)
		return judge_message(fb, "no number in the output");
	if (strcmp(leg, "first") == 0) {
		long long n, sum = 0, x;
		if (fscanf(in, "%lld", &n) != 1)
			return 1;
		for (long long i = 0; i < n; i++) {
			if (fscanf(in, "%lld", &x) != 1)
				return 1;
			sum += x;
		}
		if (got != sum)
			return judge_message(fb, "first leg: wrong sum");
		FILE *st = in_feedback(fb, "state.txt", "w"), *next = in_feedback(fb, "nextpass.in", "w");
		if (!st || !next)
			return 1;
		fprintf(st, "%lld\n", sum);
		fprintf(next, "second %lld\n", sum);
		fclose(st);
		fclose(next);
		return AC;
	}
	/* The second leg: without the state of the first the judge is broken. */
	long long kept, s, want;
	FILE *st = in_feedback(fb, "state.txt", "r");
	if (!st || fscanf(st, "%lld", &kept) != 1 || fscanf(in, "%lld", &s) != 1 || kept != s ||
	    fscanf(ans, "%lld", &want) != 1 || want != 2 * s)
		return 2;
	fclose(st);
	if (got != want)
		return judge_message(fb, "second leg: not twice the sum");
	return AC;
}
