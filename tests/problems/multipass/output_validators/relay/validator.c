/* Output validator of the three-leg relay (Kattis protocol, multi-pass):
 * argv: input answer feedback_dir; the submission's output on stdin.
 * Leg one (input "first N ..."): checks the sum S, keeps it in state.txt
 * and writes nextpass.in "second S". Leg two: state.txt must hold S; the
 * output must be T = 2*S; keeps T and writes "third T". Leg three:
 * state.txt must hold T; the output must be T+1, as the answer file says.
 * A state that does not agree with the pass's input is a broken judge
 * (exit 2), never the submission's fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AC 42
#define WA 43
#define BROKEN 2

static FILE *in_feedback(const char *dir, const char *name, const char *mode)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, mode);
}

static int judge_message(const char *dir, const char *msg)
{
	FILE *f = in_feedback(dir, "judgemessage.txt", "w");
	if (f) {
		fprintf(f, "%s\n", msg);
		fclose(f);
	}
	return WA;
}

/* Keeps value as the state and asks for the next leg. */
static int next_leg(const char *dir, const char *leg, long long value)
{
	FILE *st = in_feedback(dir, "state.txt", "w"), *next = in_feedback(dir, "nextpass.in", "w");
	if (!st || !next)
		return BROKEN;
	fprintf(st, "%lld\n", value);
	fprintf(next, "%s %lld\n", leg, value);
	fclose(st);
	fclose(next);
	return AC;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return BROKEN;
	FILE *in = fopen(argv[1], "r"), *ans = fopen(argv[2], "r");
	if (!in || !ans)
		return BROKEN;
	const char *fb = argv[3];
	char leg[16];
	if (fscanf(in, "%15s", leg) != 1)
		return BROKEN;
	long long got;
	if (scanf("%lld", &got) != 1)
		return judge_message(fb, "no number in the output");
	if (strcmp(leg, "first") == 0) {
		long long n, sum = 0, x;
		if (fscanf(in, "%lld", &n) != 1)
			return BROKEN;
		for (long long i = 0; i < n; i++) {
			if (fscanf(in, "%lld", &x) != 1)
				return BROKEN;
			sum += x;
		}
		if (got != sum)
			return judge_message(fb, "first leg: wrong sum");
		return next_leg(fb, "second", sum);
	}
	/* Later legs: the state kept by the previous pass must be there. */
	long long kept, v, want;
	FILE *st = in_feedback(fb, "state.txt", "r");
	if (!st || fscanf(st, "%lld", &kept) != 1 || fscanf(in, "%lld", &v) != 1 || kept != v)
		return BROKEN;
	fclose(st);
	if (strcmp(leg, "second") == 0) {
		if (got != 2 * v)
			return judge_message(fb, "second leg: not twice the sum");
		return next_leg(fb, "third", got);
	}
	if (strcmp(leg, "third") != 0 || fscanf(ans, "%lld", &want) != 1 || want != v + 1)
		return BROKEN;
	if (got != want)
		return judge_message(fb, "third leg: not one more");
	return AC;
}
