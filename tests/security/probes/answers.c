/* answers — no expected answer, checker or other test's data is visible.
 * The driver writes a marker (a fixed prefix and a random part) into files named
 * *.ans / gavel-secprobe-* next to the submitted source and in its temporary
 * folder on the host; this probe walks the sandbox's file system (all but
 * /proc, /sys, /dev and the read-only /usr) and reports any file whose name
 * looks like an answer or whose content holds the marker's prefix. */
#include "probe.h"

static char prefix[32];
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
	const char *rev = "-EBORPCES-LEVAG";
	size_t n = strlen(rev);
	for (size_t i = 0; i < n; i++)
		prefix[i] = rev[n - 1 - i];
	prefix[n] = 0;

	walk("/", 0);
	info("walked %ld entries, read %ld files", entries, files_read);
	if (entries == 0)
		escaped("walked nothing: the probe could not look (treat as a failure)");
	return finish();
}
