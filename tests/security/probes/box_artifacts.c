/* box_artifacts — what the host and the compile step put in the work dir
 * is not the program's to change: the compiled program (which the next test
 * runs) cannot be rewritten, replaced or removed, and the job record cannot
 * be rewritten, replaced or removed. Otherwise one test could plant state or
 * a different program for the tests that follow. */
#include "probe.h"

/* Copies src to dst (mode 0755); 0 on success. */
static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			rc = -1;
			break;
		}
	if (n < 0)
		rc = -1;
	close(in);
	close(out);
	return rc;
}

/* A spare copy of path at keep, by hard link or else by copying. */
static int spare(const char *path, const char *keep)
{
	unlink(keep);
	if (link(path, keep) == 0)
		return 0;
	return copy_file(path, keep);
}

static void protect(const char *path, const char *what)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		info("%s %s: %s", what, path, strerror(errno));
		return;
	}
	info("%s %s: uid %d mode %o size %lld", what, path, (int)st.st_uid, (unsigned)(st.st_mode & 07777),
	     (long long)st.st_size);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		escaped("opened the %s %s for writing", what, path);
	} else {
		blocked("open %s for writing errno=%d (%s)", path, errno, strerror(errno));
	}
	if (st.st_uid != getuid()) {
		if (chmod(path, 0777) == 0)
			escaped("chmod the %s %s", what, path);
		else
			blocked("chmod %s errno=%d (%s)", path, errno, strerror(errno));
	}
	/* Replace it: write a new file beside it and rename it over. */
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.gavel-probe-new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0) {
		blocked("create %s errno=%d (%s)", tmp, errno, strerror(errno));
	} else {
		if (write(fd, "#!/bin/sh\necho replaced\n", 24) < 0)
			info("write %s: %s", tmp, strerror(errno));
		close(fd);
		char keep[4200];
		snprintf(keep, sizeof keep, "%s.gavel-probe-old", path);
		if (spare(path, keep) < 0)
			info("no spare copy of %s: %s", path, strerror(errno));
		if (rename(tmp, path) == 0) {
			escaped("replaced the %s %s by rename", what, path);
			rename(keep, path); /* put it back for the rest of this run */
		} else {
			blocked("rename over %s errno=%d (%s)", path, errno, strerror(errno));
			unlink(tmp);
			unlink(keep);
		}
	}
	/* Remove it (restored from the hard link if that was possible). */
	char keep2[4200];
	snprintf(keep2, sizeof keep2, "%s.gavel-probe-keep", path);
	int linked = spare(path, keep2) == 0;
	if (unlink(path) == 0) {
		escaped("removed the %s %s", what, path);
		if (linked)
			rename(keep2, path);
	} else {
		blocked("unlink %s errno=%d (%s)", path, errno, strerror(errno));
		if (linked)
			unlink(keep2);
	}
}

int main(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n < 0) {
		escaped("cannot find the program (%s): probe cannot judge", strerror(errno));
		return finish();
	}
	exe[n] = 0;
	char cwd[4096] = "";
	if (!getcwd(cwd, sizeof cwd))
		info("getcwd: %s", strerror(errno));
	info("program %s, cwd %s", exe, cwd);
	if (strncmp(exe, "/usr/", 5) == 0)
		info("the program is a system binary (interpreted language?): nothing to replace");
	else
		protect(exe, "compiled program");
	protect("/box/job", "job record");
	/* The work dir itself: listing it shows what the next test would see. */
	DIR *d = opendir(cwd[0] ? cwd : "/box");
	if (d) {
		char line[2048];
		size_t o = 0;
		struct dirent *de;
		while ((de = readdir(d)) && o + 300 < sizeof line)
			o += (size_t)snprintf(line + o, sizeof line - o, " %s", de->d_name);
		closedir(d);
		info("work dir:%s", line);
	}
	return finish();
}
