/* Unit tests of the language-dependent parts of executor/judge/judge.c that
 * need no sandbox: the job a language builds for a source (Java's saved file
 * name and main class in the argvs), the compile-limit notes appended to
 * compile_output, and a runtime's out-of-memory message turning RE into
 * MLE. The shipped definitions in $GAVEL_ROOT/languages are used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "executor/judge/judge.h"

static struct lang_registry reg;

static int load_shipped(void **state)
{
	(void)state;
	const char *root = getenv("GAVEL_ROOT");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/languages", root && *root ? root : ".");
	struct gv_err err;
	if (lang_registry_load(&reg, dir, &err) < 0) {
		fprintf(stderr, "lang_registry_load: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int free_shipped(void **state)
{
	(void)state;
	lang_registry_free(&reg);
	return 0;
}

static bool argv_has(char **argv, const char *word)
{
	for (char **a = argv; a && *a; a++)
		if (!strcmp(*a, word))
			return true;
	return false;
}

static void judge__java_job__public_class_and_package_name_the_files(void **state)
{
	(void)state;
	const struct lang_def *java = lang_find(&reg, "java");
	assert_non_null(java);
	const char *src = "package a.b;\n// public class Not {\npublic class hello { }\n";
	struct exec_lang_job lj;
	struct gv_err err;
	assert_int_equal(exec_lang_job_build(&lj, java, "local", src, strlen(src), NULL, &err), 0);
	assert_string_equal(lj.job.files[0].name, "hello.java");
	assert_true(argv_has(lj.compile_argv, "hello.java"));
	assert_true(argv_has(lj.run_argv, "a.b.hello"));
	assert_true(argv_has(lj.run_argv, "-Xmx256m")); /* the heap is the limit */
	exec_lang_job_free(&lj);

	struct exec_run_limits lim = { .memory_mb = 64 };
	src = "class Main { public static void main(String[] a) {} }";
	assert_int_equal(exec_lang_job_build(&lj, java, "local", src, strlen(src), &lim, &err), 0);
	assert_string_equal(lj.job.files[0].name, "Main.java");
	assert_true(argv_has(lj.run_argv, "Main"));
	assert_true(argv_has(lj.run_argv, "-Xmx64m"));
	/* The JVM's own memory comes on top of the heap. */
	assert_int_equal(lj.job.run_limits.memory_kb, (uint64_t)(64 + java->memory_extra_mb) * 1024);
	exec_lang_job_free(&lj);

	/* Other languages keep their fixed name whatever the source says. */
	const struct lang_def *c = lang_find(&reg, "c");
	src = "public class hello {}";
	assert_int_equal(exec_lang_job_build(&lj, c, "local", src, strlen(src), NULL, &err), 0);
	assert_string_equal(lj.job.files[0].name, "main.c");
	exec_lang_job_free(&lj);
}

/* Additional files: the compile command becomes gavel-unpack extract with
 * the limits, then "--" and the language's compile command with its
 * options, whole and in order; the run command is untouched. */
/* Jobe's interpreterargs: between the interpreter and the script, each
 * admitted by the language's list (a cluster of listed one-letter flags
 * too); anything else fails the job closed. */
static void judge__interpreter_options__after_the_interpreter_or_refused(void **state)
{
	(void)state;
	const struct lang_def *py = lang_find(&reg, "python3"), *c = lang_find(&reg, "c");
	assert_non_null(py);
	assert_non_null(c);
	struct exec_lang_job lj;
	struct gv_err err;
	const char *src = "print(1)";
	assert_int_equal(exec_lang_job_build(&lj, py, "local", src, strlen(src), NULL, &err), 0);
	char *args[] = { "x" };
	char *opts[] = { "-O", "-BE", "-Wignore" };
	assert_int_equal(exec_lang_job_add_words(&lj, NULL, 0, args, 1, &err), 0);
	assert_int_equal(exec_lang_job_add_interpreter_options(&lj, opts, 3, &err), 0);
	static const char *const want[] = { "/usr/bin/python3", "-O", "-BE", "-Wignore", "main.py", "x", NULL };
	for (size_t i = 0; want[i]; i++)
		assert_string_equal(lj.job.run_argv[i], want[i]);
	assert_null(lj.job.run_argv[6]);
	exec_lang_job_free(&lj);
	static const char *const refused[] = { "-c", "-m", "-X", "-Bc", "-Wl,x", "-", "--", "-Ox", "O" };
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(exec_lang_job_build(&lj, py, "local", src, strlen(src), NULL, &err), 0);
		char *w[] = { (char *)refused[i] };
		if (exec_lang_job_add_interpreter_options(&lj, w, 1, &err) == 0)
			fail_msg("interpreter option '%s' was admitted", refused[i]);
		assert_int_equal(err.code, GV_EINVAL);
		assert_string_equal(lj.job.run_argv[1], "main.py");
		exec_lang_job_free(&lj);
	}
	const char *csrc = "int main(void){return 0;}";
	assert_int_equal(exec_lang_job_build(&lj, c, "local", csrc, strlen(csrc), NULL, &err), 0);
	char *o[] = { "-O" };
	assert_int_equal(exec_lang_job_add_interpreter_options(&lj, o, 1, &err), -1);
	exec_lang_job_free(&lj);
}

static void judge__extract_first__wraps_the_compile_command(void **state)
{
	(void)state;
	const struct lang_def *c = lang_find(&reg, "c");
	assert_non_null(c);
	struct exec_lang_job lj;
	struct gv_err err;
	const char *src = "int main(void){return 0;}";
	assert_int_equal(exec_lang_job_build(&lj, c, "local", src, strlen(src), NULL, &err), 0);
	char *opts[] = { "-O0" };
	assert_int_equal(exec_lang_job_add_words(&lj, opts, 1, NULL, 0, &err), 0);
	size_t n0 = 0;
	while (lj.compile_argv[n0])
		n0++;
	char *before[64];
	assert_true(n0 < 64);
	for (size_t i = 0; i < n0; i++)
		before[i] = strdup(lj.compile_argv[i]);
	const struct exec_extract_limits xl = { 10485760, 1000, 1000, 255, 16 };
	assert_int_equal(exec_lang_job_extract_first(&lj, &xl, &err), 0);
	static const char *const head[] = { "/box/.gavel-unpack", "extract", "/box/.gavel-files", "/box", "10485760",
					    "1000", "1000", "255", "16", "--" };
	for (size_t i = 0; i < 10; i++)
		assert_string_equal(lj.job.compile_argv[i], head[i]);
	for (size_t i = 0; i < n0; i++) {
		assert_string_equal(lj.job.compile_argv[10 + i], before[i]);
		free(before[i]);
	}
	assert_null(lj.job.compile_argv[10 + n0]);
	assert_string_equal(lj.job.compile_argv[10 + n0 - 1], "-O0");
	assert_string_equal(lj.job.run_argv[0], "./main");
	exec_lang_job_free(&lj);
}

static void judge__go_job__builds_an_executable_or_fails(void **state)
{
	(void)state;
	const struct lang_def *go = lang_find(&reg, "go");
	assert_non_null(go);
	struct exec_lang_job lj;
	struct gv_err err;
	assert_int_equal(exec_lang_job_build(&lj, go, "local", "package x", 9, NULL, &err), 0);
	assert_true(argv_has(lj.compile_argv, "-buildmode=exe"));
	exec_lang_job_free(&lj);
}

struct note_case {
	const char *status, *limit;
	int signal;
	const char *want; /* NULL: no note */
};

static const struct note_case notes[] = {
	{ "TLE", "cpu", 0, "compilation time limit exceeded (20000 ms of CPU)" },
	{ "WLE", "wall", 0, "compilation time limit exceeded (40000 ms of wall-clock time)" },
	{ "MLE", "memory", 0, "compilation memory limit exceeded (1024 MiB)" },
	{ "OLE", "output", 0, "compilation output limit exceeded (compiler messages over 65536 bytes)" },
	{ "SG", "none", 25, "compilation output file size limit exceeded (262144 KiB)" },
	{ "SG", "none", 11, "compiler killed by signal 11" },
	{ "RE", "none", 0, NULL },
};

static void judge__compile_note__names_the_limit(void **state)
{
	(void)state;
	struct exec_limits lim = { .cpu_ms = 20000, .wall_ms = 40000, .memory_kb = 1024 * 1024, .output_bytes = 65536 };
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++) {
		struct exec_phase_result c;
		memset(&c, 0, sizeof(c));
		snprintf(c.status, sizeof(c.status), "%s", notes[i].status);
		snprintf(c.limit, sizeof(c.limit), "%s", notes[i].limit);
		c.signal = notes[i].signal;
		/* Earlier compiler output without a final newline is kept. */
		c.err_out = strdup("main.cpp: in instantiation");
		c.err_len = strlen(c.err_out);
		exec_compile_note_limit(&c, &lim);
		if (!notes[i].want) {
			assert_string_equal(c.err_out, "main.cpp: in instantiation");
		} else {
			char want[256];
			snprintf(want, sizeof(want), "main.cpp: in instantiation\n%s\n", notes[i].want);
			assert_string_equal(c.err_out, want);
			assert_int_equal(c.err_len, strlen(want));
		}
		exec_phase_result_free(&c);
	}
}

static void judge__memory_error__re_with_marker_is_mle(void **state)
{
	(void)state;
	const struct lang_def *java = lang_find(&reg, "java"), *c = lang_find(&reg, "c");
	struct exec_phase_result r;
	memset(&r, 0, sizeof(r));
	snprintf(r.status, sizeof(r.status), "RE");
	r.exit_code = 1;
	const char *msg = "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n";
	r.err_out = strdup(msg);
	r.err_len = strlen(msg);
	assert_int_equal(exec_run_status_lang(&r, java), EXEC_RUN_MLE);
	assert_int_equal(exec_run_status_lang(&r, c), EXEC_RUN_RE); /* C has no such marker */
	/* The marker must lie within err_len. */
	r.err_len = 20;
	assert_int_equal(exec_run_status_lang(&r, java), EXEC_RUN_RE);
	r.err_len = strlen(msg);
	exec_phase_apply_lang(&r, java);
	assert_string_equal(r.status, "MLE");
	assert_string_equal(r.limit, "memory");
	assert_non_null(strstr(r.message, "OutOfMemoryError"));
	/* A JVM that cannot start within the limit (-Xmx1m) says so on its
	 * stdout: MLE, not RE. */
	free(r.err_out);
	r.err_out = NULL;
	r.err_len = 0;
	const char *small = "Error occurred during initialization of VM\nToo small maximum heap\n";
	r.out = strdup(small);
	r.out_len = strlen(small);
	snprintf(r.status, sizeof(r.status), "RE");
	assert_int_equal(exec_run_status_lang(&r, java), EXEC_RUN_MLE);
	exec_phase_apply_lang(&r, java);
	assert_string_equal(r.status, "MLE");
	assert_non_null(strstr(r.message, "Too small maximum heap"));
	/* A program that printed it and exited 0 is still OK. */
	snprintf(r.status, sizeof(r.status), "OK");
	exec_phase_apply_lang(&r, java);
	assert_string_equal(r.status, "OK");
	assert_int_equal(exec_run_status_lang(&r, java), EXEC_RUN_OK);
	exec_phase_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(judge__java_job__public_class_and_package_name_the_files),
		cmocka_unit_test(judge__interpreter_options__after_the_interpreter_or_refused),
		cmocka_unit_test(judge__extract_first__wraps_the_compile_command),
		cmocka_unit_test(judge__go_job__builds_an_executable_or_fails),
		cmocka_unit_test(judge__compile_note__names_the_limit),
		cmocka_unit_test(judge__memory_error__re_with_marker_is_mle),
	};
	return cmocka_run_group_tests_name("judge_lang", tests, load_shipped, free_shipped);
}
