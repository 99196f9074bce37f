/* Unit tests of gavel-init's pure parts: the verdict decision table and the
 * job record parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "executor/init/job.h"
#include "executor/init/verdict.h"

struct decide_case {
	const char *name;
	struct init_outcome o;
	int rlimit_as;
	enum exec_status status;
	enum exec_limit limit;
};

#define EXITED(code) .exited = 1, .exit_code = (code)
#define KILLED(sig) .exited = 0, .term_signal = (sig)

/* limits: cpu 1000 ms, memory 65536 KiB, stack 8192 KiB */
static const struct decide_case decide_cases[] = {
	{ "clean exit", { EXITED(0), .cpu_ms = 10 }, 0, EXEC_STATUS_OK, EXEC_LIMIT_NONE },
	{ "non-zero exit", { EXITED(3) }, 0, EXEC_STATUS_RE, EXEC_LIMIT_NONE },
	{ "segfault", { KILLED(SIGSEGV) }, 0, EXEC_STATUS_SG, EXEC_LIMIT_NONE },
	{ "seccomp kill", { KILLED(SIGSYS) }, 0, EXEC_STATUS_SG, EXEC_LIMIT_NONE },
	{ "cpu at the limit", { EXITED(0), .cpu_ms = 1000 }, 0, EXEC_STATUS_TLE, EXEC_LIMIT_CPU },
	{ "SIGXCPU", { KILLED(SIGXCPU), .cpu_ms = 900 }, 0, EXEC_STATUS_TLE, EXEC_LIMIT_CPU },
	{ "sampled cpu kill, rusage just under", { KILLED(SIGKILL), .killed_cpu = 1, .cpu_ms = 990 }, 0, EXEC_STATUS_TLE, EXEC_LIMIT_CPU },
	{ "wall kill, little cpu", { KILLED(SIGKILL), .killed_wall = 1, .cpu_ms = 5 }, 0, EXEC_STATUS_WLE, EXEC_LIMIT_WALL },
	{ "wall kill after cpu limit", { KILLED(SIGKILL), .killed_wall = 1, .cpu_ms = 1500 }, 0, EXEC_STATUS_TLE, EXEC_LIMIT_CPU },
	{ "output kill wins", { KILLED(SIGKILL), .killed_output = 1, .cpu_ms = 2000 }, 0, EXEC_STATUS_OLE, EXEC_LIMIT_OUTPUT },
	{ "sampled rss kill", { KILLED(SIGKILL), .killed_memory = 1 }, 0, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY },
	{ "maxrss at limit, clean exit", { EXITED(0), .maxrss_kb = 65536 }, 0, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY },
	{ "abort near AS limit", { KILLED(SIGABRT), .vmpeak_kb = 65536 + 65536 + 8192 - 100 }, 1, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY },
	{ "abort far from AS limit", { KILLED(SIGABRT), .vmpeak_kb = 10000 }, 1, EXEC_STATUS_SG, EXEC_LIMIT_NONE },
	{ "abort near AS but no RLIMIT_AS", { KILLED(SIGABRT), .vmpeak_kb = 139000 }, 0, EXEC_STATUS_SG, EXEC_LIMIT_NONE },
	{ "clean exit near AS limit", { EXITED(0), .vmpeak_kb = 139000 }, 1, EXEC_STATUS_OK, EXEC_LIMIT_NONE },
	{ "exit 1 near AS limit", { EXITED(1), .vmpeak_kb = 139000 }, 1, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY },
	{ "execve ENOMEM", { EXITED(127), .exec_enomem = 1 }, 1, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY },
	{ "unexplained SIGKILL under AS", { KILLED(SIGKILL) }, 1, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY },
	{ "unexplained SIGKILL without AS", { KILLED(SIGKILL) }, 0, EXEC_STATUS_SG, EXEC_LIMIT_NONE },
	/* the whole process tree (procs > 1): summed resident sizes */
	{ "tree rss at limit, clean exit", { EXITED(0), .maxrss_kb = 2000, .tree_rss_kb = 65536 }, 0, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY },
	{ "tree rss under limit", { EXITED(0), .maxrss_kb = 2000, .tree_rss_kb = 65535 }, 0, EXEC_STATUS_OK, EXEC_LIMIT_NONE },
	{ "tree cpu (reaped children) at limit", { EXITED(0), .cpu_ms = 1000 }, 0, EXEC_STATUS_TLE, EXEC_LIMIT_CPU },
	/* idle past the time limit */
	{ "idle kill, little cpu", { KILLED(SIGKILL), .killed_idle = 1, .cpu_ms = 20, .wall_ms = 1030 }, 0, EXEC_STATUS_TLE, EXEC_LIMIT_WALL },
	{ "idle kill after cpu limit", { KILLED(SIGKILL), .killed_idle = 1, .cpu_ms = 1000 }, 0, EXEC_STATUS_TLE, EXEC_LIMIT_CPU },
	{ "memory kill beats idle", { KILLED(SIGKILL), .killed_memory = 1, .killed_idle = 1 }, 0, EXEC_STATUS_MLE, EXEC_LIMIT_MEMORY },
	{ "idle beats the wall backstop", { KILLED(SIGKILL), .killed_idle = 1, .killed_wall = 1 }, 0, EXEC_STATUS_TLE, EXEC_LIMIT_WALL },
	{ "idle beats peak rss", { KILLED(SIGKILL), .killed_idle = 1, .maxrss_kb = 70000 }, 0, EXEC_STATUS_TLE, EXEC_LIMIT_WALL },
};

static void verdict__decide_table__matches_rules(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(decide_cases) / sizeof(decide_cases[0]); i++) {
		const struct decide_case *c = &decide_cases[i];
		struct init_limits lim = { .cpu_ms = 1000, .wall_ms = 2000, .memory_kb = 65536,
					   .stack_kb = 8192, .rlimit_as = c->rlimit_as };
		struct exec_record rec;
		memset(&rec, 0, sizeof(rec));
		struct init_outcome o = c->o;
		if (c->rlimit_as)
			o.as_limit_kb = init_as_limit_kb(&lim);
		init_decide(&o, &lim, &rec);
		if (rec.status != c->status || rec.limit != c->limit)
			fail_msg("case '%s': got %s/%s want %s/%s", c->name, exec_status_name(rec.status),
				 exec_limit_name(rec.limit), exec_status_name(c->status), exec_limit_name(c->limit));
	}
}

/* Tests run without RLIMIT_AS although the record says rlimit_as:1 (the
 * runner's choice, outcome.as_limit_kb 0): the address-space rules must
 * not fire, memory is the resident size alone. */
static void verdict__test_without_as__no_address_space_rules(void **state)
{
	(void)state;
	struct init_limits lim = { .cpu_ms = 1000, .wall_ms = 2000, .memory_kb = 65536, .stack_kb = 8192,
				   .rlimit_as = 1 };
	const struct init_outcome cases[] = {
		{ KILLED(SIGABRT), .vmpeak_kb = 139000 },
		{ KILLED(SIGKILL) },
		{ EXITED(1), .vmpeak_kb = 139000 },
		{ KILLED(SIGSEGV), .vmpeak_kb = 8u << 20 },
	};
	const enum exec_status want[] = { EXEC_STATUS_SG, EXEC_STATUS_SG, EXEC_STATUS_RE, EXEC_STATUS_SG };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct exec_record rec;
		memset(&rec, 0, sizeof(rec));
		init_decide(&cases[i], &lim, &rec);
		if (rec.status != want[i])
			fail_msg("case %zu: got %s want %s", i, exec_status_name(rec.status), exec_status_name(want[i]));
	}
	/* and the message of an idle kill says so */
	struct init_outcome idle = { KILLED(SIGKILL), .killed_idle = 1, .cpu_ms = 20, .wall_ms = 1030 };
	struct exec_record rec;
	memset(&rec, 0, sizeof(rec));
	init_decide(&idle, &lim, &rec);
	assert_non_null(strstr(rec.message, "idle"));
}

/* Idle accounting: samples (cpu ms, runnable) 5 ms apart (window 2) or
 * 20 ms apart (window 1, tree walks); idle ms expected after the last. */
struct idle_case {
	const char *name;
	int window;
	int n;
	int64_t cpu[8];
	int runnable[8];
	uint64_t want_ms;
};

static const struct idle_case idle_cases[] = {
	{ "sleeper: flat CPU, sleeping", 2, 6, { 10, 10, 10, 10, 10, 10 }, { 0 }, 20 },
	{ "spinner starved: flat CPU but runnable", 2, 6, { 10, 10, 10, 10, 10, 10 }, { 1, 1, 1, 1, 1, 1 }, 0 },
	{ "leader asleep, workers move the CPU a tick per 10 ms", 2, 6, { 10, 10, 20, 20, 30, 30 }, { 0 }, 0 },
	{ "unreadable samples: their gap counts nothing", 2, 6, { 10, -1, -1, 10, 10, 10 }, { 0 }, 10 },
	{ "tree walks 20 ms apart", 1, 4, { 50, 50, 50, 60 }, { 0 }, 40 },
	{ "tree: one process runnable", 1, 4, { 50, 50, 50, 50 }, { 0, 1, 1, 1 }, 0 },
	{ "I/O: CPU moves every window", 2, 8, { 10, 10, 20, 20, 30, 30, 40, 40 }, { 0 }, 0 },
};

static void idle__table__counts_only_still_and_blocked(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(idle_cases) / sizeof(idle_cases[0]); i++) {
		const struct idle_case *c = &idle_cases[i];
		struct init_idle s;
		init_idle_start(&s);
		uint64_t step = c->window >= 2 ? 5000000ull : 20000000ull;
		for (int k = 0; k < c->n; k++)
			init_idle_sample(&s, c->cpu[k], c->runnable[k], (uint64_t)(k + 1) * step, c->window);
		if (s.idle_ms != c->want_ms)
			fail_msg("case '%s': idle %llu ms, want %llu", c->name, (unsigned long long)s.idle_ms,
				 (unsigned long long)c->want_ms);
	}
}

/* idle_ms: the real time limit when the host sends init a looser cpu_ms;
 * absent, the CPU limit itself. */
static void job__idle_ms__defaults_to_cpu_ms(void **state)
{
	(void)state;
	struct init_job job;
	struct gv_err err;
	const char *plain = "version:1\nrun_arg:./main\ncpu_ms:1000\nwall_ms:2000\nmemory_kb:65536\noutput_bytes:1000\n";
	assert_int_equal(init_job_parse(plain, strlen(plain), &job, &err), 0);
	assert_int_equal(job.test.idle_ms, 1000);
	assert_int_equal(job.compile.idle_ms, 0);
	init_job_free(&job);
	const char *loose = "version:1\nrun_arg:./main\ncpu_ms:5000\nwall_ms:5000\nidle_ms:1000\n"
			    "memory_kb:65536\noutput_bytes:1000\n";
	assert_int_equal(init_job_parse(loose, strlen(loose), &job, &err), 0);
	assert_int_equal(job.test.cpu_ms, 5000);
	assert_int_equal(job.test.idle_ms, 1000);
	init_job_free(&job);
}

static void verdict__as_limit__adds_room_and_capped_stack(void **state)
{
	(void)state;
	struct init_limits a = { .memory_kb = 262144, .stack_kb = 8192 };
	assert_int_equal(init_as_limit_kb(&a), 262144 + 262144 + 8192);
	struct init_limits b = { .memory_kb = 524288, .stack_kb = 524288 };
	assert_int_equal(init_as_limit_kb(&b), 524288 + 524288 + 131072);
	/* Small limits still get 64 MiB of room. */
	struct init_limits c = { .memory_kb = 16384, .stack_kb = 0 };
	assert_int_equal(init_as_limit_kb(&c), 16384 + 65536);
	assert_int_equal(init_as_margin_kb(4096), 1024);
	assert_int_equal(init_as_margin_kb(262144), 32768);
}

#define JOB_BASE "version:1\nrun_arg:./main\ncpu_ms:1000\nwall_ms:2000\nmemory_kb:65536\noutput_bytes:1000\n"

struct job_case {
	const char *name;
	const char *text;
	int ok;
};

static const struct job_case job_cases[] = {
	{ "minimal", JOB_BASE, 1 },
	{ "with compile", JOB_BASE "compile_arg:gcc\ncompile_arg:-o\ncompile_arg:main\ncompile_cpu_ms:5000\ncompile_wall_ms:9000\ncompile_memory_kb:500000\n", 1 },
	{ "unknown key ignored", JOB_BASE "tenant_hint:x\n", 1 },
	{ "no version", "run_arg:./main\ncpu_ms:1000\nwall_ms:2000\nmemory_kb:65536\noutput_bytes:1000\n", 0 },
	{ "version 2", JOB_BASE "version:2\n", 0 },
	{ "no run_arg", "version:1\ncpu_ms:1000\nwall_ms:2000\nmemory_kb:65536\noutput_bytes:1000\n", 0 },
	{ "missing cpu_ms", "version:1\nrun_arg:x\nwall_ms:2000\nmemory_kb:65536\noutput_bytes:1000\n", 0 },
	{ "compile without its limits", JOB_BASE "compile_arg:gcc\n", 0 },
	{ "cpu 0", JOB_BASE "cpu_ms:0\n", 0 },
	{ "memory below 1 MiB", JOB_BASE "memory_kb:10\n", 0 },
	{ "wall below cpu", JOB_BASE "wall_ms:10\n", 0 },
	{ "procs too many", JOB_BASE "procs:100000\n", 0 },
	{ "rlimit_as 2", JOB_BASE "rlimit_as:2\n", 0 },
	{ "idle_ms 0", JOB_BASE "idle_ms:0\n", 0 },
	{ "idle_ms 500", JOB_BASE "idle_ms:500\n", 1 },
	{ "unknown seccomp policy", JOB_BASE "seccomp:none\n", 0 },
	{ "bad number", JOB_BASE "fsize_kb:1k\n", 0 },
	{ "feedback dir on", JOB_BASE "feedback_dir:1\n", 1 },
	{ "feedback dir 2", JOB_BASE "feedback_dir:2\n", 0 },
	{ "feedback dir word", JOB_BASE "feedback_dir:yes\n", 0 },
	{ "interactive on", JOB_BASE "interactive:1\n", 1 },
	{ "interactive off", JOB_BASE "interactive:0\n", 1 },
	{ "interactive 2", JOB_BASE "interactive:2\n", 0 },
	{ "interactive empty", JOB_BASE "interactive:\n", 0 },
	{ "stderr_to_stdout on", JOB_BASE "stderr_to_stdout:1\n", 1 },
	{ "stderr_to_stdout 2", JOB_BASE "stderr_to_stdout:2\n", 0 },
	{ "file I/O names", JOB_BASE "input_file:input.txt\noutput_file:output.txt\n", 1 },
	{ "input file a path", JOB_BASE "input_file:../x\n", 0 },
	{ "output file the job record", JOB_BASE "output_file:job\n", 0 },
	{ "output file an engine name", JOB_BASE "output_file:.gavel-x\n", 0 },
	{ "input file empty", JOB_BASE "input_file:\n", 0 },
	{ "input file twice", JOB_BASE "input_file:a\ninput_file:b\n", 0 },
	{ "input and output the same", JOB_BASE "input_file:a\noutput_file:a\n", 0 },
	{ "file I/O in an interactive job", JOB_BASE "interactive:1\ninput_file:a\n", 0 },
};

static void job__parse_table__matches_expectations(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(job_cases) / sizeof(job_cases[0]); i++) {
		const struct job_case *c = &job_cases[i];
		struct init_job job;
		struct gv_err err;
		gv_err_clear(&err);
		int rc = init_job_parse(c->text, strlen(c->text), &job, &err);
		if (c->ok && rc != 0)
			fail_msg("case '%s': unexpected error %s", c->name, err.msg);
		if (!c->ok && rc == 0)
			fail_msg("case '%s': parsed but should fail", c->name);
		init_job_free(&job);
	}
}

static void job__parse__fills_argv_and_defaults(void **state)
{
	(void)state;
	static const char text[] = JOB_BASE "run_arg:in put\ncompile_arg:gcc\ncompile_arg:-O2\n"
				   "compile_cpu_ms:5000\ncompile_wall_ms:9000\ncompile_memory_kb:500000\n"
				   "rlimit_as:1\n";
	struct init_job job;
	struct gv_err err;
	assert_int_equal(init_job_parse(text, sizeof(text) - 1, &job, &err), 0);
	assert_string_equal(job.run_argv[0], "./main");
	assert_string_equal(job.run_argv[1], "in put");
	assert_null(job.run_argv[2]);
	assert_string_equal(job.compile_argv[1], "-O2");
	assert_int_equal(job.test.stack_kb, 65536);
	assert_int_equal(job.test.procs, 64);
	assert_int_equal(job.test.stderr_bytes, 65536);
	assert_int_equal(job.test.rlimit_as, 1);
	assert_int_equal(job.compile.rlimit_as, 1);
	assert_int_equal(job.compile.output_bytes, 65536);
	assert_int_equal(job.feedback_dir, 0);
	init_job_free(&job);
}

static void job__feedback_dir__is_parsed(void **state)
{
	(void)state;
	static const char text[] = JOB_BASE "feedback_dir:1\n";
	struct init_job job;
	struct gv_err err;
	assert_int_equal(init_job_parse(text, sizeof(text) - 1, &job, &err), 0);
	assert_int_equal(job.feedback_dir, 1);
	init_job_free(&job);
}

static void job__interactive__is_parsed_and_off_by_default(void **state)
{
	(void)state;
	static const char on[] = JOB_BASE "interactive:1\nfeedback_dir:1\n";
	struct init_job job;
	struct gv_err err;
	assert_int_equal(init_job_parse(on, sizeof(on) - 1, &job, &err), 0);
	assert_int_equal(job.interactive, 1);
	assert_int_equal(job.feedback_dir, 1);
	assert_int_equal(job.stderr_to_stdout, 0);
	init_job_free(&job);
	static const char off[] = JOB_BASE;
	assert_int_equal(init_job_parse(off, sizeof(off) - 1, &job, &err), 0);
	assert_int_equal(job.interactive, 0);
	init_job_free(&job);
	static const char merged[] = JOB_BASE "stderr_to_stdout:1\n";
	assert_int_equal(init_job_parse(merged, sizeof(merged) - 1, &job, &err), 0);
	assert_int_equal(job.stderr_to_stdout, 1);
	init_job_free(&job);
}

static void job__file_io__names_parsed_and_absent_by_default(void **state)
{
	(void)state;
	static const char text[] = JOB_BASE "input_file:input.txt\noutput_file:output.txt\n";
	struct init_job job;
	struct gv_err err;
	assert_int_equal(init_job_parse(text, sizeof(text) - 1, &job, &err), 0);
	assert_string_equal(job.input_file, "input.txt");
	assert_string_equal(job.output_file, "output.txt");
	assert_string_equal(job.run_argv[0], "./main");
	init_job_free(&job);
	static const char none[] = JOB_BASE;
	assert_int_equal(init_job_parse(none, sizeof(none) - 1, &job, &err), 0);
	assert_null(job.input_file);
	assert_null(job.output_file);
	init_job_free(&job);
}

static void job__too_many_args__is_refused(void **state)
{
	(void)state;
	char text[8192];
	int n = snprintf(text, sizeof(text), "%s", JOB_BASE);
	for (int i = 0; i < INIT_JOB_MAX_ARGS + 1; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "run_arg:a\n");
	struct init_job job;
	struct gv_err err;
	assert_int_equal(init_job_parse(text, (size_t)n, &job, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(verdict__decide_table__matches_rules),
		cmocka_unit_test(verdict__as_limit__adds_room_and_capped_stack),
		cmocka_unit_test(verdict__test_without_as__no_address_space_rules),
		cmocka_unit_test(job__idle_ms__defaults_to_cpu_ms),
		cmocka_unit_test(idle__table__counts_only_still_and_blocked),
		cmocka_unit_test(job__parse_table__matches_expectations),
		cmocka_unit_test(job__parse__fills_argv_and_defaults),
		cmocka_unit_test(job__file_io__names_parsed_and_absent_by_default),
		cmocka_unit_test(job__too_many_args__is_refused),
		cmocka_unit_test(job__feedback_dir__is_parsed),
		cmocka_unit_test(job__interactive__is_parsed_and_off_by_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
