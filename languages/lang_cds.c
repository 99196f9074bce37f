/* Class-data archives of JVM compilers (languages/lang_cds.h). */
#include "languages/lang_cds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/io.h"
#include "languages/lang_pch.h"

#define CDS_ARGV_MAX 64
#define CDS_BUILD_TIMEOUT_MS 120000 /* one javac run: ~3 s on a quiet 2-core host */
#define SHARED_ARCHIVE_OPT "-J-XX:SharedArchiveFile="

/* The trusted source javac compiles while its classes are recorded: what
 * a typical submission needs (reading input, collections, formatted
 * output), so that compiling those finds its classes in the archive. */
static const char cds_source[] =
	"import java.io.*;\n"
	"import java.util.*;\n"
	"import java.util.stream.*;\n"
	"public class Main {\n"
	"\tstatic long f(List<Integer> a) { return a.stream().mapToLong(x -> x).sum(); }\n"
	"\tpublic static void main(String[] args) throws IOException {\n"
	"\t\tBufferedReader in = new BufferedReader(new InputStreamReader(System.in));\n"
	"\t\tStringTokenizer st = new StringTokenizer(in.readLine());\n"
	"\t\tList<Integer> a = new ArrayList<>();\n"
	"\t\tMap<String, Integer> m = new HashMap<>();\n"
	"\t\twhile (st.hasMoreTokens()) { String t = st.nextToken(); a.add(Integer.parseInt(t)); m.merge(t, 1, Integer::sum); }\n"
	"\t\tCollections.sort(a);\n"
	"\t\tPrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));\n"
	"\t\tout.printf(\"%d %s%n\", f(a), Arrays.toString(a.toArray()));\n"
	"\t\tout.println(new Scanner(\"1\").nextInt() + Math.max(1, 2) + m.size());\n"
	"\t\tout.flush();\n"
	"\t}\n"
	"}\n";

static void archive_opt(const struct lang_def *def, char *out, size_t outsz)
{
	snprintf(out, outsz, SHARED_ARCHIVE_OPT LANG_PCH_MOUNT "/%s/%s", def->id,
		 def->compile_class_archive ? def->compile_class_archive : "");
}

bool lang_cds_wanted(const struct lang_def *def)
{
	if (!def->compile || !def->compile_class_archive)
		return false;
	char opt[300];
	archive_opt(def, opt, sizeof(opt));
	return lang_pch_compile_has(def, opt);
}

/* The JVM options of def->compile (-J...) that shape the archive: all but
 * placeholders and the archive's own option. Borrowed, NULL-terminated. */
static int jvm_options(const struct lang_def *def, const char *out[CDS_ARGV_MAX])
{
	size_t n = 0;
	for (char **a = def->compile + 1; *a; a++) {
		if (strncmp(*a, "-J", 2) != 0 || strchr(*a, '{') || !strncmp(*a, SHARED_ARCHIVE_OPT, strlen(SHARED_ARCHIVE_OPT)))
			continue;
		if (n + 1 >= CDS_ARGV_MAX)
			return -1;
		out[n++] = *a;
	}
	out[n] = NULL;
	return 0;
}

/* "path size mtime inode" of one file of the JDK, or "path -". */
static int file_identity(const char *path, char *out, size_t outsz)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return snprintf(out, outsz, "%s -", path);
	return snprintf(out, outsz, "%s %lld %lld.%09ld %llu", path, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
}

/* What the archive is good for: the JDK it was dumped from, known by its
 * runtime image and VM library (stat'ed: starting a JVM to ask its
 * version would cost every `gavel run` a quarter of a second), and the
 * options. */
static int make_stamp(const struct lang_def *def, const char *const *opts, char *stamp, size_t size, char *why,
		      size_t whysz)
{
	char home[PATH_MAX];
	if (!realpath(def->compile[0], home)) {
		snprintf(why, whysz, "%s: %s", def->compile[0], strerror(errno));
		return -1;
	}
	/* <home>/bin/javac -> <home> */
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(home, '/');
		if (!slash || slash == home) {
			snprintf(why, whysz, "%s is not <jdk>/bin/<tool>", def->compile[0]);
			return -1;
		}
		*slash = '\0';
	}
	char path[PATH_MAX + 32], image[PATH_MAX + 96], vm[PATH_MAX + 96];
	snprintf(path, sizeof(path), "%s/lib/modules", home);
	file_identity(path, image, sizeof(image));
	snprintf(path, sizeof(path), "%s/lib/server/libjvm.so", home);
	file_identity(path, vm, sizeof(vm));
	size_t used = (size_t)snprintf(stamp, size, "compiler %s\nimage %s\nvm %s\noptions", def->compile[0], image, vm);
	for (size_t i = 0; opts[i] && used < size; i++)
		used += (size_t)snprintf(stamp + used, size - used, " %s", opts[i]);
	if (used + 2 >= size) {
		snprintf(why, whysz, "stamp too long");
		return -1;
	}
	stamp[used++] = '\n';
	stamp[used] = '\0';
	return 0;
}

static bool stamp_matches(int lang_fd, const char *stamp_name, const char *archive, const char *stamp)
{
	struct stat st;
	return lang_pch_stamp_is(lang_fd, stamp_name, stamp) &&
	       fstatat(lang_fd, archive, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* One javac run in a fresh folder under lang_dir that dumps the classes
 * it loaded into lang_dir/<tmp_name>. */
static int dump_archive(const struct lang_def *def, const char *lang_dir, int lang_fd, const char *const *opts,
			const char *tmp_name, char *why, size_t whysz)
{
	char work_rel[64], work[4300], src[4400], dump_opt[4400];
	snprintf(work_rel, sizeof(work_rel), ".cds-build-%ld", (long)getpid());
	if (snprintf(work, sizeof(work), "%s/%s", lang_dir, work_rel) >= (int)sizeof(work) ||
	    snprintf(src, sizeof(src), "%s/Main.java", work) >= (int)sizeof(src) ||
	    snprintf(dump_opt, sizeof(dump_opt), "-J-XX:ArchiveClassesAtExit=%s/%s", lang_dir, tmp_name) >=
		    (int)sizeof(dump_opt)) {
		snprintf(why, whysz, "path too long");
		return -1;
	}
	struct gv_err err;
	if (gv_remove_tree_at(lang_fd, work_rel, &err) != 0 || mkdirat(lang_fd, work_rel, 0700) != 0) {
		snprintf(why, whysz, "mkdir %s: %s", work, strerror(errno));
		return -1;
	}
	int rc = -1;
	int work_fd = openat(lang_fd, work_rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (work_fd < 0 || gv_write_file_at(work_fd, "Main.java", cds_source, strlen(cds_source), 0644, &err) != 0) {
		snprintf(why, whysz, "write %s", src);
		goto out;
	}
	char *argv[CDS_ARGV_MAX + 8];
	size_t n = 0;
	argv[n++] = def->compile[0];
	for (size_t i = 0; opts[i]; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = dump_opt;
	argv[n++] = "-d";
	argv[n++] = work;
	argv[n++] = src;
	argv[n] = NULL;
	char out[512];
	int status = 0;
	bool timed_out = false;
	if (lang_run_capture(argv, CDS_BUILD_TIMEOUT_MS, out, sizeof(out), &status, &timed_out, &err) != 0 ||
	    timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, whysz, "%s", timed_out ? "timed out" : out[0] ? out : "the compiler failed");
		goto out;
	}
	struct stat st;
	if (fstatat(lang_fd, tmp_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		snprintf(why, whysz, "the JVM wrote no archive");
		goto out;
	}
	rc = 0;
out:
	if (work_fd >= 0)
		close(work_fd);
	if (gv_remove_tree_at(lang_fd, work_rel, &err) != 0 && rc == 0) {
		snprintf(why, whysz, "%s", err.msg);
		rc = -1;
	}
	return rc;
}

int lang_cds_prepare_one(const struct lang_def *def, const char *dir, int dir_fd, char *why, size_t whysz)
{
	const char *opts[CDS_ARGV_MAX];
	char stamp[PCH_STAMP_MAX], stamp_name[96], tmp_name[96];
	if (jvm_options(def, opts) < 0) {
		snprintf(why, whysz, "too many JVM options");
		return -1;
	}
	if (make_stamp(def, opts, stamp, sizeof(stamp), why, whysz) != 0)
		return -1;
	snprintf(stamp_name, sizeof(stamp_name), "%s.stamp", def->compile_class_archive);
	snprintf(tmp_name, sizeof(tmp_name), ".%s.%ld", def->compile_class_archive, (long)getpid());
	int lang_fd = lang_pch_lang_dir(dir_fd, dir, def->id, why, whysz);
	if (lang_fd < 0)
		return -1;
	int rc = 0;
	if (stamp_matches(lang_fd, stamp_name, def->compile_class_archive, stamp))
		goto out;
	/* Invalidate first: a half-rebuilt archive must not look current. */
	unlinkat(lang_fd, stamp_name, 0);
	/* What a stopped builder left (the lock is ours). */
	char tmp_prefix[96];
	snprintf(tmp_prefix, sizeof(tmp_prefix), ".%s.", def->compile_class_archive);
	lang_pch_sweep(lang_fd, NULL, tmp_prefix, "");
	lang_pch_sweep(lang_fd, NULL, ".cds-build-", "");
	char lang_dir[4200];
	snprintf(lang_dir, sizeof(lang_dir), "%s/%s", dir, def->id);
	struct gv_err err;
	if (dump_archive(def, lang_dir, lang_fd, opts, tmp_name, why, whysz) != 0) {
		unlinkat(lang_fd, tmp_name, 0);
		rc = -1;
		goto out;
	}
	if (fchmodat(lang_fd, tmp_name, 0644, 0) != 0 ||
	    renameat(lang_fd, tmp_name, lang_fd, def->compile_class_archive) != 0) {
		snprintf(why, whysz, "rename: %s", strerror(errno));
		unlinkat(lang_fd, tmp_name, 0);
		rc = -1;
		goto out;
	}
	if (gv_write_file_at(lang_fd, stamp_name, stamp, strlen(stamp), 0644, &err) != 0) {
		snprintf(why, whysz, "%s", err.msg);
		rc = -1;
		goto out;
	}
	rc = 1;
out:
	close(lang_fd);
	return rc;
}
