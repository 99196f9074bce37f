/* Precompiled headers built on the node (languages/lang_pch.h). */
#include "languages/lang_pch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/io.h"
#include "languages/lang_cds.h"

#define PCH_ARGV_MAX 64
#define PCH_BUILD_TIMEOUT_MS 300000 /* bits/stdc++.h: ~7 s on a quiet 2-core host */

static void pch_dir_of(const struct lang_def *def, char *out, size_t outsz)
{
	snprintf(out, outsz, "-I" LANG_PCH_MOUNT "/%s", def->id);
}

bool lang_pch_compile_has(const struct lang_def *def, const char *opt)
{
	for (char **a = def->compile; a && *a; a++)
		if (!strcmp(*a, opt))
			return true;
	return false;
}

bool lang_pch_wanted(const struct lang_def *def)
{
	if (!def->compile || !def->precompiled_headers || !def->precompiled_headers[0])
		return false;
	char opt[160];
	pch_dir_of(def, opt, sizeof(opt));
	return lang_pch_compile_has(def, opt);
}

int lang_pch_compiler_version(const struct lang_def *def, char *out, size_t outsz)
{
	int status = 0;
	bool timed_out = false;
	struct gv_err err;
	if (lang_run_capture(def->version_command, 10000, out, outsz, &status, &timed_out, &err) != 0 || timed_out ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

bool lang_pch_stamp_is(int lang_fd, const char *name, const char *stamp)
{
	char have[PCH_STAMP_MAX];
	int fd = openat(lang_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t n = gv_read_upto(fd, have, sizeof(have) - 1);
	close(fd);
	return n == strlen(stamp) && memcmp(have, stamp, n) == 0;
}

int lang_pch_lang_dir(int dir_fd, const char *dir, const char *id, char *why, size_t whysz)
{
	if (mkdirat(dir_fd, id, 0755) != 0 && errno != EEXIST) {
		snprintf(why, whysz, "mkdir %s/%s: %s", dir, id, strerror(errno));
		return -1;
	}
	int fd = openat(dir_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		snprintf(why, whysz, "open %s/%s: %s", dir, id, strerror(errno));
	return fd;
}

/* The flag tokens of def->compile that shape the PCH (borrowed strings,
 * NULL-terminated); -1 when they do not fit. */
static int flag_tokens(const struct lang_def *def, const char *out[PCH_ARGV_MAX])
{
	size_t n = 0;
	if (!def->compile || !def->compile[0])
		return -1;
	for (char **a = def->compile + 1; *a; a++) {
		if (!strcmp(*a, "-o")) {
			if (a[1])
				a++;
			continue;
		}
		/* Placeholders, the source, link-only and our own -I options
		 * do not change what a header compiles to. */
		if (strchr(*a, '{') || (def->source && !strcmp(*a, def->source)) || !strncmp(*a, "-l", 2) ||
		    !strncmp(*a, "-I" LANG_PCH_MOUNT, strlen("-I" LANG_PCH_MOUNT)))
			continue;
		if (n + 1 >= PCH_ARGV_MAX)
			return -1;
		out[n++] = *a;
	}
	out[n] = NULL;
	return 0;
}

int lang_pch_flags(const struct lang_def *def, char *out, size_t outsz)
{
	const char *tok[PCH_ARGV_MAX];
	if (outsz == 0 || flag_tokens(def, tok) < 0)
		return -1;
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; tok[i]; i++) {
		int w = snprintf(out + used, outsz - used, "%s%s", i ? " " : "", tok[i]);
		if (w < 0 || (size_t)w >= outsz - used)
			return -1;
		used += (size_t)w;
	}
	return 0;
}

void lang_pch_sweep(int lang_fd, const char *sub, const char *prefix, const char *suffix)
{
	int fd = openat(lang_fd, sub && *sub ? sub : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t pl = strlen(prefix), sl = strlen(suffix);
	for (struct dirent *e; (e = readdir(d));) {
		size_t nl = strlen(e->d_name), digits = 0;
		if (nl <= pl + sl || strncmp(e->d_name, prefix, pl) != 0 || strcmp(e->d_name + nl - sl, suffix) != 0)
			continue;
		while (pl + digits < nl - sl && e->d_name[pl + digits] >= '0' && e->d_name[pl + digits] <= '9')
			digits++;
		if (pl + digits != nl - sl)
			continue;
		struct gv_err err;
		if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno == EISDIR)
			(void)!gv_remove_tree_at(dirfd(d), e->d_name, &err);
	}
	closedir(d);
}

/* Appends "id: why; " to report. */
static void append(char *report, size_t size, const char *id, const char *why)
{
	size_t used = strnlen(report, size);
	if (used + 1 < size)
		snprintf(report + used, size - used, "%s: %s; ", id, why);
}

/* mkdir -p of the folders of rel (a header name) under base_fd. */
static int make_parents(int base_fd, const char *rel)
{
	char path[256];
	snprintf(path, sizeof(path), "%s", rel);
	for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdirat(base_fd, path, 0755) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return 0;
}

static bool stamp_matches(int lang_fd, const char *stamp, char *const *headers)
{
	if (!lang_pch_stamp_is(lang_fd, "stamp", stamp))
		return false;
	for (char *const *h = headers; *h; h++) {
		char gch[300];
		snprintf(gch, sizeof(gch), "%s.gch", *h);
		struct stat st;
		if (fstatat(lang_fd, gch, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			return false;
	}
	return true;
}

static int write_file(int dir_fd, const char *name, const char *text, struct gv_err *err)
{
	return gv_write_file_at(dir_fd, name, text, strlen(text), 0644, err);
}

/* Builds one header into lang_dir/<header>.gch. -1 with a reason in why. */
static int build_header(const struct lang_def *def, const char *lang_dir, int lang_fd, const char *header,
			const char *const *flags, char *why, size_t whysz)
{
	char wrapper[4300], tmp_rel[300], tmp_abs[4600];
	if (snprintf(wrapper, sizeof(wrapper), "%s/.wrapper-%ld.h", lang_dir, (long)getpid()) >= (int)sizeof(wrapper) ||
	    snprintf(tmp_rel, sizeof(tmp_rel), "%s.gch.%ld", header, (long)getpid()) >= (int)sizeof(tmp_rel) ||
	    snprintf(tmp_abs, sizeof(tmp_abs), "%s/%s", lang_dir, tmp_rel) >= (int)sizeof(tmp_abs)) {
		snprintf(why, whysz, "path too long");
		return -1;
	}
	if (make_parents(lang_fd, header) != 0) {
		snprintf(why, whysz, "mkdir for %s: %s", header, strerror(errno));
		return -1;
	}
	char text[200];
	snprintf(text, sizeof(text), "#include <%s>\n", header);
	struct gv_err werr;
	if (write_file(lang_fd, strrchr(wrapper, '/') + 1, text, &werr) != 0) {
		snprintf(why, whysz, "%s", werr.msg);
		return -1;
	}
	/* The language of the header follows the source's: .c is C. */
	size_t sl = def->source ? strlen(def->source) : 0;
	const char *kind = sl > 2 && !strcmp(def->source + sl - 2, ".c") ? "c-header" : "c++-header";
	char *argv[PCH_ARGV_MAX + 8];
	size_t n = 0;
	argv[n++] = def->compile[0];
	for (size_t i = 0; flags[i]; i++)
		argv[n++] = (char *)flags[i];
	argv[n++] = "-x";
	argv[n++] = (char *)kind;
	argv[n++] = wrapper;
	argv[n++] = "-o";
	argv[n++] = tmp_abs;
	argv[n] = NULL;
	char out[512];
	int status = 0;
	bool timed_out = false;
	struct gv_err rerr;
	int rc = lang_run_capture(argv, PCH_BUILD_TIMEOUT_MS, out, sizeof(out), &status, &timed_out, &rerr);
	unlinkat(lang_fd, strrchr(wrapper, '/') + 1, 0);
	if (rc != 0 || timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, whysz, "%s: %s", header,
			 rc != 0 ? rerr.msg : timed_out ? "timed out" : out[0] ? out : "the compiler failed");
		unlinkat(lang_fd, tmp_rel, 0);
		return -1;
	}
	char final_rel[300];
	snprintf(final_rel, sizeof(final_rel), "%s.gch", header);
	if (fchmodat(lang_fd, tmp_rel, 0644, 0) != 0 || renameat(lang_fd, tmp_rel, lang_fd, final_rel) != 0) {
		snprintf(why, whysz, "%s: rename: %s", header, strerror(errno));
		unlinkat(lang_fd, tmp_rel, 0);
		return -1;
	}
	return 0;
}

/* One language: 1 built, 0 up to date, -1 failed (why says why). */
static int prepare_one(const struct lang_def *def, const char *dir, int dir_fd, char *why, size_t whysz)
{
	const char *flags[PCH_ARGV_MAX];
	char flag_text[1024];
	if (flag_tokens(def, flags) < 0 || lang_pch_flags(def, flag_text, sizeof(flag_text)) < 0) {
		snprintf(why, whysz, "too many compile flags");
		return -1;
	}
	/* The compiler's version is part of the stamp: a new compiler makes
	 * new headers (GCC would ignore the old ones anyway). */
	char version[256];
	if (lang_pch_compiler_version(def, version, sizeof(version)) != 0) {
		snprintf(why, whysz, "version command failed");
		return -1;
	}
	char stamp[PCH_STAMP_MAX];
	size_t used = (size_t)snprintf(stamp, sizeof(stamp), "compiler %s\nversion %s\nflags %s\nheaders", def->compile[0],
				       version, flag_text);
	for (char **h = def->precompiled_headers; *h && used < sizeof(stamp); h++)
		used += (size_t)snprintf(stamp + used, sizeof(stamp) - used, " %s", *h);
	if (used + 2 >= sizeof(stamp)) {
		snprintf(why, whysz, "stamp too long");
		return -1;
	}
	stamp[used++] = '\n';
	stamp[used] = '\0';
	int lang_fd = lang_pch_lang_dir(dir_fd, dir, def->id, why, whysz);
	if (lang_fd < 0)
		return -1;
	int rc = 0;
	if (stamp_matches(lang_fd, stamp, def->precompiled_headers))
		goto out;
	/* Invalidate first: a half-rebuilt folder must not look current. */
	unlinkat(lang_fd, "stamp", 0);
	char lang_dir[4200];
	snprintf(lang_dir, sizeof(lang_dir), "%s/%s", dir, def->id);
	/* What a builder stopped midway left (the lock is ours: no live
	 * builder writes them): a header is hundreds of MB. */
	lang_pch_sweep(lang_fd, NULL, ".wrapper-", ".h");
	for (char **h = def->precompiled_headers; *h; h++) {
		char sub[256], prefix[300];
		snprintf(sub, sizeof(sub), "%s", *h);
		char *slash = strrchr(sub, '/');
		snprintf(prefix, sizeof(prefix), "%s.gch.", slash ? slash + 1 : sub);
		if (slash)
			*slash = '\0';
		lang_pch_sweep(lang_fd, slash ? sub : NULL, prefix, "");
	}
	for (char **h = def->precompiled_headers; *h; h++) {
		if (build_header(def, lang_dir, lang_fd, *h, flags, why, whysz) != 0) {
			rc = -1;
			goto out;
		}
	}
	struct gv_err serr;
	if (write_file(lang_fd, "stamp", stamp, &serr) != 0) {
		snprintf(why, whysz, "%s", serr.msg);
		rc = -1;
		goto out;
	}
	rc = 1;
out:
	close(lang_fd);
	return rc;
}

/* mkdir -p of dir, made 0755 and opened (no link followed at its end). */
static int open_dir(const char *dir, struct gv_err *err)
{
	char path[4096];
	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path) || path[0] != '/')
		return gv_err_set(err, GV_EINVAL, "precompiled header folder must be an absolute path: %s", dir);
	for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return gv_err_errno(err, "mkdir %s", path);
		if (!s)
			break;
		*s = '/';
	}
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd < 0)
		return gv_err_errno(err, "open %s", dir);
	/* Sandboxes read it as an unprivileged user. */
	if (fchmod(dir_fd, 0755) != 0) {
		int rc = gv_err_errno(err, "chmod %s", dir);
		close(dir_fd);
		return rc;
	}
	return dir_fd;
}

/* Whether some language of reg has a header or a class archive to build. */
static bool any_wanted(const struct lang_registry *reg)
{
	for (size_t i = 0; i < reg->n; i++)
		if (lang_pch_wanted(&reg->defs[i]) || lang_cds_wanted(&reg->defs[i]))
			return true;
	return false;
}

int lang_pch_make_dir(const struct lang_registry *reg, const char *dir, struct gv_err *err)
{
	if (!any_wanted(reg))
		return 0;
	int dir_fd = open_dir(dir, err);
	if (dir_fd < 0)
		return -1;
	close(dir_fd);
	return 0;
}

int lang_pch_prepare(const struct lang_registry *reg, const char *dir, unsigned *built, char *report,
		     size_t report_size, struct gv_err *err)
{
	*built = 0;
	if (report_size)
		report[0] = '\0';
	if (!any_wanted(reg))
		return 0;
	int dir_fd = open_dir(dir, err);
	if (dir_fd < 0)
		return -1;
	int lock = openat(dir_fd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX) != 0) {
		int rc = gv_err_errno(err, "lock %s/.lock", dir);
		if (lock >= 0)
			close(lock);
		close(dir_fd);
		return rc;
	}
	for (size_t i = 0; i < reg->n; i++) {
		const struct lang_def *def = &reg->defs[i];
		char why[600];
		int r = lang_pch_wanted(def) ? prepare_one(def, dir, dir_fd, why, sizeof(why)) : 0;
		/* A JVM compiler's classes (languages/lang_cds.h), in the same
		 * folder under the same lock. */
		int c = r >= 0 && lang_cds_wanted(def) ? lang_cds_prepare_one(def, dir, dir_fd, why, sizeof(why)) : 0;
		if (r > 0 || c > 0)
			(*built)++;
		if (r < 0 || c < 0)
			append(report, report_size, def->id, why);
	}
	close(lock);
	close(dir_fd);
	return 0;
}
