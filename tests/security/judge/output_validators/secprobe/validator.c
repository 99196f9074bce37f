/* Output validator of the security suite's judge fixture (Kattis protocol:
 * validator input answer feedback_dir < program_output; 42 accept, 43
 * reject, anything else is a judge error).
 *
 * The submission is a probe (tests/security/probes/) that tries to break a
 * promise from inside and prints "ESCAPED ..." when it succeeds and
 * "DONE escaped=0" when it ran to its end. A test is accepted only if the
 * output has the DONE line, no ESCAPED line and not the test's secret
 * answer (the marker the probe must never find). judgemessage.txt carries
 * the probe's first "EVIDENCE ..." line on acceptance, for the driver to
 * compare across tests, or the reason for rejection. It never quotes the
 * answer file. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_MAX (4 << 20)

static const char *feedback_dir;

static void message(const char *prefix, const char *text, size_t len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/judgemessage.txt", feedback_dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fputs(prefix, f);
	if (len > 200)
		len = 200;
	for (size_t i = 0; i < len && text[i] != '\n'; i++)
		fputc(text[i] >= 32 && text[i] < 127 ? text[i] : '?', f);
	fputc('\n', f);
	fclose(f);
}

static char *slurp(FILE *f, size_t *len)
{
	char *buf = malloc(OUT_MAX + 1);
	if (!buf)
		exit(1);
	*len = fread(buf, 1, OUT_MAX, f);
	buf[*len] = 0;
	return buf;
}

/* The first line of buf that starts with tag, or NULL. */
static const char *line_starting(const char *buf, size_t len, const char *tag)
{
	size_t tl = strlen(tag);
	const char *p = buf, *end = buf + len;
	while (p < end) {
		if ((size_t)(end - p) >= tl && memcmp(p, tag, tl) == 0)
			return p;
		const char *n = memchr(p, '\n', (size_t)(end - p));
		if (!n)
			break;
		p = n + 1;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	feedback_dir = argv[3];
	FILE *af = fopen(argv[2], "r");
	if (!af)
		return 1;
	size_t alen, olen;
	char *ans = slurp(af, &alen);
	fclose(af);
	/* The answer is "<marker>\n": without one the fixture is broken and
	 * the check would be empty: a judge error, never an acceptance. */
	char *nl = strchr(ans, '\n');
	if (nl)
		*nl = 0;
	if (strncmp(ans, "GAVEL-SECPROBE-", 15) != 0 || strlen(ans) < 30) {
		message("fixture: the answer holds no marker", "", 0);
		return 1;
	}
	char *out = slurp(stdin, &olen);
	if (memmem(out, olen, ans, strlen(ans))) {
		message("the program printed this test's secret answer", "", 0);
		return 43;
	}
	const char *esc = line_starting(out, olen, "ESCAPED");
	if (esc) {
		message("", esc, (size_t)(out + olen - esc));
		return 43;
	}
	if (!line_starting(out, olen, "DONE escaped=0")) {
		const char *last = out;
		for (const char *p = out; p < out + olen; p++)
			if (*p == '\n' && p + 1 < out + olen)
				last = p + 1;
		message("the probe did not run to its end; last line: ", last, (size_t)(out + olen - last));
		return 43;
	}
	const char *ev = line_starting(out, olen, "EVIDENCE ");
	if (ev)
		message("ok ", ev, (size_t)(out + olen - ev));
	else
		message("ok", "", 0);
	return 42;
}
