/* answers — no expected answer, checker or other test's data is visible.
 * The driver writes a marker (a fixed prefix and a random part) into files named
 * *.ans / gavel-secprobe-* next to the submitted source and in its temporary
 * folder on the host; this probe walks the sandbox's file system (all but
 * /proc, /sys, /dev and the read-only /usr) and reports any file whose name
 * looks like an answer or whose content holds the marker's prefix.
 * Judged (`gavel judge`, the fixture under tests/security/judge/), every
 * answer of the problem is that marker and every test's input carries a
 * marker of its own (an "INPUT <marker>" line on stdin): another
 * test's input marker found anywhere is reported too. */
#include "probe.h"

static char prefix[32], in_prefix[32], own_input[128];
static long entries, files_read;

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

static void check_content(const char *path, off_t size)
{
	if (size <= 0 || size > 4 << 20)
		return;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	static char buf[(4 << 20) + 1];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	files_read++;
	buf[n] = 0;
	char *hit = memmem(buf, (size_t)n, prefix, strlen(prefix));
	if (hit)
		escaped("marker found in %s: %.60s", path, hit);
	/* Our own input may lie in a file (it is ours); any other is not. */
	size_t pl = strlen(in_prefix), ol = strlen(own_input);
	for (char *p = buf; (p = memmem(p, (size_t)(buf + n - p), in_prefix, pl)); p += pl)
		if (!ol || (size_t)(buf + n - p) < ol || memcmp(p, own_input, ol) != 0) {
			escaped("another test's input marker in %s: %.60s", path, p);
			break;
		}
}

static void walk(const char *dir, int depth)
{
	if (depth > 16 || entries > 200000)
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		entries++;
		char path[4096];
		if (snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", name) >= (int)sizeof path)
			continue;
		if (depth == 0 && (!strcmp(name, "proc") || !strcmp(name, "sys") || !strcmp(name, "dev") || !strcmp(name, "usr")))
			continue;
		if (ends_with(name, ".ans") || strstr(name, ".ans.") || strstr(name, "gavel-secprobe") ||
		    strstr(name, "secret") || !strcmp(name, "answer") || !strcmp(name, "answers"))
			escaped("answer-like file visible: %s", path);
		struct stat st;
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			walk(path, depth + 1);
		else if (S_ISREG(st.st_mode))
			check_content(path, st.st_size);
	}
	closedir(d);
}

int main(void)
{
	/* Built at run time so that neither this source nor its binary holds
	 * the marker's prefix verbatim. */
	const char *rev = "-EBORPCES-LEVAG", *in_rev = "-NICES-LEVAG";
	size_t n = strlen(rev);
	for (size_t i = 0; i < n; i++)
		prefix[i] = rev[n - 1 - i];
	prefix[n] = 0;
	n = strlen(in_rev);
	for (size_t i = 0; i < n; i++)
		in_prefix[i] = in_rev[n - 1 - i];
	in_prefix[n] = 0;

	/* Judged: "INPUT <marker>" names this test's own input marker. */
	static char input[1 << 16];
	ssize_t got = read(0, input, sizeof input - 1);
	input[got > 0 ? got : 0] = 0;
	char *line = strstr(input, "INPUT ");
	if (line && sscanf(line + 6, "%127s", own_input) == 1)
		info("this test's input marker: %.20s...", own_input);

	walk("/", 0);
	printf("EVIDENCE walked %ld entries, read %ld files\n", entries, files_read);
	if (entries == 0)
		escaped("walked nothing: the probe could not look (treat as a failure)");
	return finish();
}
