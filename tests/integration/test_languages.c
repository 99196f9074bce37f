/* Integration test of the language definitions on this host, without a
 * sandbox: for every language, lang_probe must pass, the accepted `sum`
 * submissions must compile with the definition's exact compile argv and pass
 * every test case of tests/problems/sum with the exact run argv (judged by
 * the built-in checker), and the compile_error submissions must fail to
 * compile. Commands run through fork/execve in a fresh work dir with the
 * sandbox's fixed environment, as gavel-init will run them.
 *
 * A language whose toolchain is missing fails its test, naming the Debian
 * packages to install; GAVEL_ALLOW_SKIP=1, the one opt-in every suite
 * reads, turns that into a skip. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor/judge/checker.h"
#include "executor/judge/problem.h"
#include "languages/lang.h"
#include "languages/lang_entry.h"
#include "languages/lang_pch.h"
#include "tests/support/testutil.h"

static struct lang_registry reg;
static struct exec_problem sum;
static char root[1024];

/* Runs argv in box with stdin from in_path (or /dev/null), stdout to
 * out_path, stderr to log_path; kills it after limit_s. Returns the wait
 * status, or -1. */
static int run_in(const char *box, char **argv, const char *in_path, const char *out_path, const char *log_path,
		  int limit_s)
{
	static char *const envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", NULL};
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int in = open(in_path ? in_path : "/dev/null", O_RDONLY);
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (in < 0 || out < 0 || log < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(log, 2) < 0 ||
		    chdir(box) < 0)
			_exit(126);
		setpgid(0, 0);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	time_t end = time(NULL) + limit_s;
	int st;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (time(NULL) > end) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(20000);
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = malloc(1u << 20);
	*len = buf ? fread(buf, 1, 1u << 20, f) : 0;
	fclose(f);
	return buf;
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	char *buf = slurp(from, &len);
	assert_non_null(buf);
	FILE *f = fopen(to, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
}

static void show_log(const char *log_path)
{
	size_t len;
	char *buf = slurp(log_path, &len);
	if (buf) {
		print_message("# log: %.*s\n", (int)(len > 2000 ? 2000 : len), buf);
		free(buf);
	}
}

/* The saved file name and main class of submission file src. */
static void entry_of(const struct lang_def *d, const char *src, struct lang_entry *ent)
{
	size_t len;
	char *text = slurp(src, &len);
	assert_non_null(text);
	lang_entry_resolve(d, text, len, ent);
	free(text);
}

/* Compiles submission file src as language d in a fresh box; returns the
 * compile wait status (0 for languages without a compile step). */
static int compile_in(const struct lang_def *d, const char *src, char *box, size_t boxsz, char *log, size_t logsz)
{
	snprintf(box, boxsz, "/tmp/gavel-test-lang.XXXXXX");
	assert_non_null(mkdtemp(box));
	char dst[PATH_MAX];
	struct lang_entry ent;
	entry_of(d, src, &ent);
	snprintf(dst, sizeof(dst), "%s/%s", box, ent.file);
	copy_file(src, dst);
	snprintf(log, logsz, "%s.log", box);
	unlink(log);
	if (!d->compile)
		return 0;
	struct lang_vars vars = { .memory_mb = d->defaults.memory_mb, .compile_memory_mb = d->defaults.compile_memory_mb,
				  .source = ent.file, .main_class = ent.main_class };
	char **argv;
	struct gv_err err;
	if (lang_expand_argv((const char *const *)d->compile, &vars, &argv, &err) < 0)
		fail_msg("%s", err.msg);
	char out[PATH_MAX];
	snprintf(out, sizeof(out), "%s.compile-out", box);
	int st = run_in(box, argv, NULL, out, log, 120);
	unlink(out);
	lang_argv_free(argv);
	return st;
}

static void cleanup_box(const char *box, const char *log)
{
	if (test_rm_rf(box) != 0)
		print_error("could not remove %s\n", box);
	unlink(log);
}

/* The submission files of folder kind whose extension is d's (cpp14 and
 * cpp20 borrow C++'s files). */
static size_t for_each_submission(const struct lang_def *d, const char *kind, void (*fn)(const struct lang_def *, const char *))
{
	char dir[2048];
	snprintf(dir, sizeof(dir), "%s/tests/problems/sum/submissions/%s", root, kind);
	DIR *dp = opendir(dir);
	if (!dp)
		fail_msg("cannot open %s", dir);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(dp)) != NULL) {
		const struct lang_def *x = lang_find_by_filename(&reg, e->d_name);
		bool dialect = (strcmp(d->id, "cpp14") == 0 || strcmp(d->id, "cpp20") == 0) && x && strcmp(x->id, "cpp") == 0;
		if (!x || (x != d && !dialect))
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		fn(d, path);
		n++;
	}
	closedir(dp);
	return n;
}

static void judge_accepted(const struct lang_def *d, const char *src)
{
	char box[256], log[300];
	int st = compile_in(d, src, box, sizeof(box), log, sizeof(log));
	if (st != 0) {
		show_log(log);
		fail_msg("%s: compiling %s failed (status %d)", d->id, src, st);
	}
	struct lang_entry ent;
	entry_of(d, src, &ent);
	struct lang_vars vars = { .memory_mb = d->defaults.memory_mb, .compile_memory_mb = d->defaults.compile_memory_mb,
				  .source = ent.file, .main_class = ent.main_class };
	char **argv;
	struct gv_err err;
	if (lang_expand_argv((const char *const *)d->run, &vars, &argv, &err) < 0)
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < sum.ncases; i++) {
		char in[PATH_MAX], out[PATH_MAX];
		snprintf(in, sizeof(in), "%s/%s", sum.dir, sum.cases[i]->in_path);
		snprintf(out, sizeof(out), "%s.out", box);
		st = run_in(box, argv, in, out, log, 30);
		if (st != 0) {
			show_log(log);
			fail_msg("%s: %s on %s: status %d", d->id, src, sum.cases[i]->name, st);
		}
		size_t olen, alen;
		char *o = slurp(out, &olen), *a;
		assert_non_null(o);
		assert_int_equal(exec_problem_read(&sum, sum.cases[i]->ans_path, 1u << 20, &a, &alen, &err), 0);
		struct gv_checker_opts opts;
		gv_checker_opts_default(&opts);
		char msg[EXEC_CHECKER_MSG_MAX];
		if (exec_checker_compare(&opts, a, alen, o, olen, msg, sizeof(msg)) != EXEC_CHECKER_AC)
			fail_msg("%s: %s on %s: %s", d->id, src, sum.cases[i]->name, msg);
		free(o);
		free(a);
		unlink(out);
	}
	lang_argv_free(argv);
	print_message("# %s: %s accepted\n", d->id, strrchr(src, '/') + 1);
	cleanup_box(box, log);
}

static void expect_compile_error(const struct lang_def *d, const char *src)
{
	char box[256], log[300];
	if (!d->compile)
		fail_msg("%s has no compile step but a compile_error submission %s", d->id, src);
	int st = compile_in(d, src, box, sizeof(box), log, sizeof(log));
	if (st == 0 || st == -1)
		fail_msg("%s: %s compiled (status %d)", d->id, src, st);
	print_message("# %s: %s fails to compile (status %d)\n", d->id, strrchr(src, '/') + 1, st);
	cleanup_box(box, log);
}

static void run_language(void **state)
{
	const struct lang_def *d = *state;
	char version[128];
	struct gv_err err;
	if (lang_probe(d, 10000, version, sizeof(version), &err) < 0) {
		char pk[256] = "";
		for (char **p = d->packages; *p; p++)
			snprintf(pk + strlen(pk), sizeof(pk) - strlen(pk), " %s", *p);
		const char *allow = getenv("GAVEL_ALLOW_SKIP");
		if (allow && !strcmp(allow, "1")) {
			print_message("# %s unusable here (%s); skipped by GAVEL_ALLOW_SKIP\n", d->id, err.msg);
			skip();
		}
		fail_msg("%s: %s (install:%s)", d->id, err.msg, pk);
	}
	print_message("# %s: %s\n", d->id, version);
	if (for_each_submission(d, "accepted", judge_accepted) == 0)
		fail_msg("%s: no accepted submission for sum", d->id);
	for_each_submission(d, "compile_error", expect_compile_error);
}

/* Each C++ language compiles in the standard its name promises:
 * __cplusplus is 201402 under cpp14, 201703 under cpp, 202002 under
 * cpp20 (a dialect compiled with another's flags would still pass sum). */
static void languages__cpp_dialects__compile_their_standard(void **state)
{
	(void)state;
	static const struct {
		const char *id;
		long std;
	} dialects[] = { { "cpp14", 201402L }, { "cpp", 201703L }, { "cpp20", 202002L } };
	for (size_t i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++) {
		const struct lang_def *d = lang_find(&reg, dialects[i].id);
		if (!d)
			fail_msg("language %s missing", dialects[i].id);
		char src[] = "/tmp/gavel-test-dialect.XXXXXX";
		int fd = mkstemp(src);
		assert_true(fd >= 0);
		char text[160];
		int n = snprintf(text, sizeof(text),
				 "static_assert(__cplusplus == %ldL, \"wrong C++ standard\");\nint main() {}\n",
				 dialects[i].std);
		assert_int_equal(write(fd, text, (size_t)n), n);
		close(fd);
		char box[256], log[300];
		int st = compile_in(d, src, box, sizeof(box), log, sizeof(log));
		if (st != 0) {
			show_log(log);
			fail_msg("%s: not compiled as __cplusplus == %ld (status %d)", d->id, dialects[i].std, st);
		}
		cleanup_box(box, log);
		unlink(src);
	}
}

static void lang_probe__broken_toolchain__fails(void **state)
{
	(void)state;
	struct lang_def d = *lang_find(&reg, "c");
	char *missing[] = {"/usr/bin/gavel-no-such-compiler", "--version", NULL};
	char *alternatives[] = {"/usr/bin/java", "-version", NULL}; /* via /etc/alternatives where installed */
	char *failing[] = {"/usr/bin/false", NULL};
	struct gv_err err;
	d.version_command = missing;
	assert_int_equal(lang_probe(&d, 2000, NULL, 0, &err), -1);
	d.version_command = failing;
	assert_int_equal(lang_probe(&d, 2000, NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "version_command failed"));
	char *slow[] = {"/usr/bin/sleep", "10", NULL};
	d.version_command = slow;
	time_t t0 = time(NULL);
	assert_int_equal(lang_probe(&d, 300, NULL, 0, &err), -1);
	assert_true(time(NULL) - t0 < 5);
	assert_non_null(strstr(err.msg, "did not finish"));
	struct stat st;
	if (lstat("/usr/bin/java", &st) == 0 && S_ISLNK(st.st_mode)) {
		d.version_command = alternatives;
		assert_int_equal(lang_probe(&d, 2000, NULL, 0, &err), -1);
		assert_non_null(strstr(err.msg, "outside the toolchain folders"));
	}
	/* /usr/sbin is not bound into sandboxes (nor /usr/local). */
	char *sbin[] = {"/usr/sbin/nologin", NULL};
	if (lstat("/usr/sbin/nologin", &st) == 0) {
		d.version_command = sbin;
		assert_int_equal(lang_probe(&d, 2000, NULL, 0, &err), -1);
		assert_non_null(strstr(err.msg, "outside the toolchain folders"));
	}
}

/* The node dumps javac's classes once per JVM and options: an archive the
 * JVM accepts (-Xshare:on refuses one it cannot map), and a second prepare
 * finds it current. */
static void lang_cds__javac_archive__built_once_and_usable(void **state)
{
	(void)state;
	const struct lang_def *java = lang_find(&reg, "java");
	struct stat st;
	if (!java || stat(java->compile[0], &st) != 0) {
		skip();
		return;
	}
	char dir[] = "/tmp/gavel-cds-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct lang_registry one = { .defs = (struct lang_def *)java, .n = 1 };
	unsigned built = 0;
	char report[1024];
	struct gv_err err;
	assert_int_equal(lang_pch_prepare(&one, dir, &built, report, sizeof(report), &err), 0);
	if (report[0])
		fail_msg("not built: %s", report);
	assert_int_equal(built, 1);
	char jsa[300];
	snprintf(jsa, sizeof(jsa), "%s/java/javac.jsa", dir);
	assert_int_equal(stat(jsa, &st), 0);
	assert_true(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0644);
	assert_int_equal(lang_pch_prepare(&one, dir, &built, report, sizeof(report), &err), 0);
	assert_int_equal(built, 0);
	char opt[340];
	snprintf(opt, sizeof(opt), "-J-XX:SharedArchiveFile=%s", jsa);
	char *argv[] = { java->compile[0], "-J-Xshare:on", opt, "-version", NULL };
	char out[512];
	int status = 0;
	bool timed_out = false;
	assert_int_equal(lang_run_capture(argv, 60000, out, sizeof(out), &status, &timed_out, &err), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("javac -Xshare:on with the archive: %s", out);
	char rm[300];
	snprintf(rm, sizeof(rm), "%s", dir);
	test_rm_rf(rm);
}

int main(void)
{
	const char *r = getenv("GAVEL_ROOT");
	snprintf(root, sizeof(root), "%s", r && *r ? r : ".");
	char dir[PATH_MAX + 32];
	struct gv_err err;
	snprintf(dir, sizeof(dir), "%s/languages", root);
	if (lang_registry_load(&reg, dir, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		printf("1..1\nnot ok 1 - languages load\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/tests/problems/sum", root);
	if (exec_problem_load(&sum, dir, NULL, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		printf("1..1\nnot ok 1 - sum problem load\n");
		return 1;
	}
	struct CMUnitTest *tests = calloc(reg.n + 3, sizeof(*tests));
	char (*names)[64] = calloc(reg.n, sizeof(*names));
	if (!tests || !names)
		return 1;
	for (size_t i = 0; i < reg.n; i++) {
		snprintf(names[i], sizeof(names[i]), "languages__%s__compiles_and_runs_sum", reg.defs[i].id);
		tests[i] = (struct CMUnitTest){names[i], run_language, NULL, NULL, &reg.defs[i]};
	}
	tests[reg.n] = (struct CMUnitTest){"languages__probe__refuses_broken_toolchains",
					   lang_probe__broken_toolchain__fails, NULL, NULL, NULL};
	tests[reg.n + 1] = (struct CMUnitTest){"languages__cds__javac_archive_built_once_and_usable",
					       lang_cds__javac_archive__built_once_and_usable, NULL, NULL, NULL};
	tests[reg.n + 2] = (struct CMUnitTest){"languages__cpp_dialects__compile_their_standard",
					       languages__cpp_dialects__compile_their_standard, NULL, NULL, NULL};
	int rc = _cmocka_run_group_tests("languages", tests, reg.n + 3, NULL, NULL);
	free(tests);
	free(names);
	exec_problem_free(&sum);
	lang_registry_free(&reg);
	return rc;
}
