/* Unit tests of the fork server's pure parts (executor/init/forkserver.c):
 * which Python run commands a template may serve (the rest keep execve)
 * and the argv the template starts with, and the job record's
 * `fork_server` key. The template itself is exercised inside gVisor by
 * the judge fixtures and the security probe py_template_judge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "executor/init/forkserver.h"
#include "executor/init/job.h"

#define STUB "STUB"

struct argv_case {
	const char *run[8];
	const char *want[10]; /* {NULL}: refused */
};

static const struct argv_case argv_cases[] = {
	{ { "/usr/bin/python3", "main.py", NULL }, { "/usr/bin/python3", "-c", STUB, "main.py", NULL } },
	{ { "/usr/bin/python3", "main.py", "a", "-b", NULL },
	  { "/usr/bin/python3", "-c", STUB, "main.py", "a", "-b", NULL } },
	{ { "/usr/bin/python3", "-B", "-u", "-Wignore", "main.py", NULL },
	  { "/usr/bin/python3", "-B", "-u", "-Wignore", "-c", STUB, "main.py", NULL } },
	{ { "/usr/bin/python3", "-OO", "-I", "main.py", NULL },
	  { "/usr/bin/python3", "-OO", "-I", "-c", STUB, "main.py", NULL } },
	/* A module, a command, an option with a separate argument, a
	 * cluster, -X, no script, -W without its filter: execve. */
	{ { "/usr/bin/python3", "-m", "main", NULL }, { NULL } },
	{ { "/usr/bin/python3", "-c", "print(1)", NULL }, { NULL } },
	{ { "/usr/bin/python3", "-W", "ignore", "main.py", NULL }, { NULL } },
	{ { "/usr/bin/python3", "-BE", "main.py", NULL }, { NULL } },
	{ { "/usr/bin/python3", "-X", "dev", "main.py", NULL }, { NULL } },
	{ { "/usr/bin/python3", "-u", NULL }, { NULL } },
	{ { "/usr/bin/python3", NULL }, { NULL } },
	{ { "/usr/bin/python3", "", NULL }, { NULL } },
};

static void forkserver__python_argv__table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(argv_cases) / sizeof(argv_cases[0]); i++) {
		const struct argv_case *c = &argv_cases[i];
		char *out[16];
		int rc = init_fork_python_argv((char *const *)c->run, STUB, out, 16);
		if (!c->want[0]) {
			assert_int_equal(rc, -1);
			continue;
		}
		assert_int_equal(rc, 0);
		size_t n = 0;
		for (; c->want[n]; n++)
			assert_string_equal(out[n], c->want[n]);
		assert_null(out[n]);
	}
}

static void forkserver__python_argv__bounded_by_out(void **state)
{
	(void)state;
	const char *run[] = { "/usr/bin/python3", "main.py", "a", "b", "c", NULL };
	char *out[7];
	assert_int_equal(init_fork_python_argv((char *const *)run, STUB, out, 7), -1);
	char *fits[8];
	assert_int_equal(init_fork_python_argv((char *const *)run, STUB, fits, 8), 0);
	assert_null(fits[7]);
}

static void forkserver__stub__drops_cwd_before_importing(void **state)
{
	(void)state;
	/* The template must never import from its current directory: the
	 * stub removes sys.path[0] before its first import statement. */
	const char *drop = strstr(init_fork_python_stub, "del sys.path[0]");
	const char *first_import = strstr(init_fork_python_stub, "import os");
	assert_non_null(drop);
	assert_non_null(first_import);
	assert_true(drop < first_import);
	static const char head[] = "_gv_fresh_main = dict(globals())\nimport sys\n";
	assert_memory_equal(init_fork_python_stub, head, sizeof(head) - 1);
}

#define JOB_RECORD "version:1\nrun_arg:/usr/bin/python3\nrun_arg:main.py\ncpu_ms:1000\nwall_ms:5000\n" \
		   "memory_kb:65536\noutput_bytes:1024\n"

static void job__fork_server__parsed_and_checked(void **state)
{
	(void)state;
	struct init_job job;
	struct gv_err err;
	static const char none[] = JOB_RECORD;
	assert_int_equal(init_job_parse(none, sizeof(none) - 1, &job, &err), 0);
	assert_int_equal(job.fork_server, INIT_FORK_NONE);
	init_job_free(&job);
	static const char python[] = JOB_RECORD "fork_server:python\n";
	assert_int_equal(init_job_parse(python, sizeof(python) - 1, &job, &err), 0);
	assert_int_equal(job.fork_server, INIT_FORK_PYTHON);
	init_job_free(&job);
	static const char other[] = JOB_RECORD "fork_server:native\n";
	assert_int_equal(init_job_parse(other, sizeof(other) - 1, &job, &err), -1);
	assert_non_null(strstr(err.msg, "fork_server"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(forkserver__python_argv__table),
		cmocka_unit_test(forkserver__python_argv__bounded_by_out),
		cmocka_unit_test(forkserver__stub__drops_cwd_before_importing),
		cmocka_unit_test(job__fork_server__parsed_and_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
