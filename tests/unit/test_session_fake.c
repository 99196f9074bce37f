/* The session logic of the sandbox engine without runsc or root: a fake
 * runtime (tests/support/fake_runtime.h) runs a stand-in for gavel-init
 * per test case on the session's pipes. Covered: the job record reaching
 * /box, compile and test results, a sandbox dying without a result, a
 * broken protocol, the OOM counter, the host's CPU kill and CPU figure,
 * the wall-clock backstop, and failing closed when the runtime fails or
 * lacks an op. Every case checks that the tear-down removed the work dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor/sandbox/record.h"
#include "executor/sandbox/session.h"
#include "tests/support/fake_runtime.h"

static const char *const run_argv[] = {"/box/main", NULL};
static const char *const cc_argv[] = {"/usr/bin/gcc", "-o", "/box/main", "/box/main.c", NULL};

static struct exec_job job_of(bool compile)
{
	static const struct exec_file files[] = {{.name = "main.c", .data = "int main(){}", .len = 12}};
	struct exec_limits l = {.cpu_ms = 100, .wall_ms = 1000, .memory_kb = 65536};
	return (struct exec_job){
		.tenant = "t1",
		.compile_argv = compile ? cc_argv : NULL,
		.run_argv = run_argv,
		.files = files,
		.n_files = 1,
		.compile_limits = l,
		.run_limits = l,
	};
}

/* ---- stand-ins ---- */

static int send_compile_ok(int out)
{
	return fake_send_phase(out, "", EXEC_PHASE_COMPILE, 0, EXEC_STATUS_OK, EXEC_LIMIT_NONE, 0);
}

/* Compiles (checking the job record and the file in /box), then echoes
 * each test's input as its stdout. */
static int init_echo(int in, int out, const char *box, struct fake_shared *sh)
{
	(void)sh;
	char path[4200], rec[4096] = {0};
	snprintf(path, sizeof(path), "%s/job", box);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(rec, 1, sizeof(rec) - 1, f) : 0;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/main.c", box);
	bool ok = n > 0 && strstr(rec, "version:1\n") && strstr(rec, "compile_arg:/usr/bin/gcc\n") &&
		  strstr(rec, "run_arg:/box/main\n") && strstr(rec, "seccomp:default\n") &&
		  access(path, R_OK) == 0;
	if (fake_send_phase(out, "", EXEC_PHASE_COMPILE, 0, ok ? EXEC_STATUS_OK : EXEC_STATUS_IE,
			    EXEC_LIMIT_NONE, 0) != 0)
		return 1;
	for (uint32_t i = 1;; i++) {
		char kind[17], *p;
		size_t len;
		if (fake_read_frame(in, kind, &p, &len) != 0)
			return 0;
		int rc = fake_send_phase(out, p, EXEC_PHASE_TEST, i, EXEC_STATUS_OK, EXEC_LIMIT_NONE, 5);
		free(p);
		if (rc != 0)
			return 1;
	}
}

static int wait_test(int in)
{
	char kind[17], *p;
	size_t len;
	if (fake_read_frame(in, kind, &p, &len) != 0)
		return -1;
	free(p);
	return 0;
}

static int init_dies(int in, int out, const char *box, struct fake_shared *sh)
{
	(void)box, (void)sh;
	if (send_compile_ok(out) != 0 || wait_test(in) != 0)
		return 1;
	return 3; /* gone without a result */
}

static int init_garbage(int in, int out, const char *box, struct fake_shared *sh)
{
	(void)box, (void)sh;
	if (send_compile_ok(out) != 0 || wait_test(in) != 0)
		return 1;
	fake_send(out, "bogus", "x", 1);
	pause();
	return 0;
}

static int init_oom(int in, int out, const char *box, struct fake_shared *sh)
{
	(void)box;
	if (send_compile_ok(out) != 0 || wait_test(in) != 0)
		return 1;
	sh->oom_kills = 1;
	fake_send_phase(out, "", EXEC_PHASE_TEST, 1, EXEC_STATUS_OK, EXEC_LIMIT_NONE, 5);
	pause();
	return 0;
}

static int init_spin(int in, int out, const char *box, struct fake_shared *sh)
{
	(void)box;
	if (send_compile_ok(out) != 0 || wait_test(in) != 0)
		return 1;
	sh->cpu_ns += 10ull * 1000 * 1000 * 1000; /* 10 s of the host's CPU */
	pause();
	return 0;
}

static int init_hang(int in, int out, const char *box, struct fake_shared *sh)
{
	(void)box, (void)sh;
	if (send_compile_ok(out) != 0 || wait_test(in) != 0)
		return 1;
	pause();
	return 0;
}

/* Reports 5 ms of CPU; the host counted 50 ms: the result keeps the lower. */
static int init_host_cpu(int in, int out, const char *box, struct fake_shared *sh)
{
	(void)box;
	if (send_compile_ok(out) != 0 || wait_test(in) != 0)
		return 1;
	sh->cpu_ns += 50ull * 1000 * 1000;
	fake_send_phase(out, "", EXEC_PHASE_TEST, 1, EXEC_STATUS_OK, EXEC_LIMIT_NONE, 5);
	pause();
	return 0;
}

/* ---- harness ---- */

struct fx {
	struct exec_engine e;
	struct fake_runtime f;
	struct exec_session *s;
	struct exec_phase_result compile, res;
	struct gv_err err;
	int rc;
};

/* Opens a session of job (compile or not) under stand-in init. */
static void fx_open(struct fx *x, int (*init)(int, int, const char *, struct fake_shared *), bool compile,
		    uint64_t wall_ms)
{
	memset(x, 0, sizeof(*x));
	x->f.init = init;
	assert_int_equal(fake_engine_init(&x->e, &x->f, wall_ms, &x->err), 0);
	struct exec_job job = job_of(compile);
	x->rc = exec_session_open(&x->e, &job, &x->s, &x->compile, &x->err);
	if (x->rc != 0)
		fprintf(stderr, "# open: %s\n", x->err.msg);
}

static void fx_test(struct fx *x, const char *input)
{
	x->rc = exec_session_run_test(x->s, input, strlen(input), &x->res, &x->err);
}

static void fx_done(struct fx *x)
{
	exec_session_close(x->s);
	exec_phase_result_free(&x->compile);
	exec_phase_result_free(&x->res);
	char root[sizeof(x->f.work_root)];
	memcpy(root, x->f.work_root, sizeof(root));
	fake_engine_fini(&x->e, &x->f);
	/* The work dir was removed and the work root was empty. */
	assert_int_not_equal(access(root, F_OK), 0);
}

/* ---- cases ---- */

static void session__compile_then_tests__results_and_output_back(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, init_echo, true, 0);
	assert_int_equal(x.rc, 0);
	assert_string_equal(x.compile.status, "OK");
	for (int i = 0; i < 3; i++) {
		fx_test(&x, "hello");
		assert_int_equal(x.rc, 0);
		assert_string_equal(x.res.status, "OK");
		assert_string_equal(x.res.out, "hello");
		exec_phase_result_free(&x.res);
	}
	assert_true(exec_session_alive(x.s));
	fx_done(&x);
	assert_int_equal(x.f.runs, 1);
	assert_int_equal(x.f.deletes, 1);
}

static void session__sandbox_exits_without_result__ie_then_dead(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, init_dies, false, 0);
	assert_int_equal(x.rc, 0);
	fx_test(&x, "1");
	assert_int_equal(x.rc, -1);
	assert_int_equal(x.err.code, GV_ESANDBOX);
	assert_string_equal(x.res.status, "IE");
	assert_false(exec_session_alive(x.s));
	exec_phase_result_free(&x.res);
	fx_test(&x, "2");
	assert_int_equal(x.rc, -1);
	assert_int_equal(x.err.code, EXEC_EDEAD);
	fx_done(&x);
}

static void session__unknown_frame__protocol_failure_ie(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, init_garbage, false, 0);
	assert_int_equal(x.rc, 0);
	fx_test(&x, "1");
	assert_int_equal(x.rc, -1);
	assert_string_equal(x.res.status, "IE");
	assert_non_null(strstr(x.res.message, "protocol"));
	assert_false(exec_session_alive(x.s));
	fx_done(&x);
}

static void session__oom_counter_after_result__mle_and_dead(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, init_oom, false, 0);
	assert_int_equal(x.rc, 0);
	fx_test(&x, "1");
	assert_int_equal(x.rc, 0);
	assert_string_equal(x.res.status, "MLE");
	assert_string_equal(x.res.limit, "memory");
	assert_false(exec_session_alive(x.s));
	fx_done(&x);
}

static void session__host_cpu_past_kill__tle_and_dead(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, init_spin, false, 0);
	assert_int_equal(x.rc, 0);
	fx_test(&x, "1");
	assert_int_equal(x.rc, 0);
	assert_string_equal(x.res.status, "TLE");
	assert_string_equal(x.res.limit, "cpu");
	assert_true(x.res.host_cpu_us >= 10000000);
	assert_false(exec_session_alive(x.s));
	fx_done(&x);
}

static void session__host_and_guest_cpu__time_is_the_lower(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, init_host_cpu, false, 0);
	assert_int_equal(x.rc, 0);
	fx_test(&x, "1");
	assert_int_equal(x.rc, 0);
	assert_string_equal(x.res.status, "OK");
	assert_int_equal(x.res.guest_time_ms, 5);
	assert_int_equal(x.res.host_cpu_us, 50000);
	assert_int_equal(x.res.time_ms, 5);
	fx_done(&x);
}

static void session__no_answer__wall_backstop_wle(void **state)
{
	(void)state;
	struct fx x;
	/* The sandbox's own deadline (300 ms) bounds the phase's backstop. */
	fx_open(&x, init_hang, false, 300);
	assert_int_equal(x.rc, 0);
	fx_test(&x, "1");
	assert_int_equal(x.rc, 0);
	assert_string_equal(x.res.status, "WLE");
	assert_string_equal(x.res.limit, "wall");
	assert_false(exec_session_alive(x.s));
	fx_done(&x);
}

static void session__cpu_unreadable__ie_fail_closed(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, init_echo, true, 0);
	assert_int_equal(x.rc, 0);
	x.f.sh->cpu_unreadable = 1;
	fx_test(&x, "1");
	assert_int_equal(x.rc, -1);
	assert_string_equal(x.res.status, "IE");
	assert_false(exec_session_alive(x.s));
	fx_done(&x);
}

static void session__runtime_run_fails__open_fails_ie_nothing_left(void **state)
{
	(void)state;
	struct fx x;
	memset(&x, 0, sizeof(x));
	x.f.fail_run = true;
	x.f.init = init_echo;
	assert_int_equal(fake_engine_init(&x.e, &x.f, 0, &x.err), 0);
	struct exec_job job = job_of(true);
	x.rc = exec_session_open(&x.e, &job, &x.s, &x.compile, &x.err);
	assert_int_equal(x.rc, -1);
	assert_null(x.s);
	assert_string_equal(x.compile.status, "IE");
	fx_done(&x);
	assert_int_equal(x.f.deletes, 1); /* a failed run is still deleted */
}

static void session__runtime_without_run__open_fails_closed(void **state)
{
	(void)state;
	struct fx x;
	memset(&x, 0, sizeof(x));
	x.f.no_run = true;
	assert_int_equal(fake_engine_init(&x.e, &x.f, 0, &x.err), 0);
	struct exec_job job = job_of(false);
	x.rc = exec_session_open(&x.e, &job, &x.s, &x.compile, &x.err);
	assert_int_equal(x.rc, -1);
	assert_int_equal(x.err.code, GV_ESANDBOX);
	assert_non_null(strstr(x.err.msg, "no run"));
	assert_string_equal(x.compile.status, "IE");
	fx_done(&x);
}

static void session__runtime_without_create__precreate_fails_closed(void **state)
{
	(void)state;
	struct fx x;
	memset(&x, 0, sizeof(x));
	assert_int_equal(fake_engine_init(&x.e, &x.f, 0, &x.err), 0);
	struct exec_sandbox_shape shape;
	struct exec_job job = job_of(false);
	exec_job_shape(&x.e, &job, &shape);
	assert_int_equal(exec_session_precreate(&x.e, &shape, &x.s, &x.err), -1);
	assert_null(x.s);
	assert_non_null(strstr(x.err.msg, "no create"));
	fx_done(&x);
}

static void session__invalid_job__refused_before_any_sandbox(void **state)
{
	(void)state;
	struct fx x;
	memset(&x, 0, sizeof(x));
	assert_int_equal(fake_engine_init(&x.e, &x.f, 0, &x.err), 0);
	struct exec_job job = job_of(false);
	job.tenant = "../x";
	x.rc = exec_session_open(&x.e, &job, &x.s, &x.compile, &x.err);
	assert_int_equal(x.rc, -1);
	assert_string_equal(x.compile.status, "IE");
	fx_done(&x);
	assert_int_equal(x.f.runs, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(session__compile_then_tests__results_and_output_back),
		cmocka_unit_test(session__sandbox_exits_without_result__ie_then_dead),
		cmocka_unit_test(session__unknown_frame__protocol_failure_ie),
		cmocka_unit_test(session__oom_counter_after_result__mle_and_dead),
		cmocka_unit_test(session__host_cpu_past_kill__tle_and_dead),
		cmocka_unit_test(session__host_and_guest_cpu__time_is_the_lower),
		cmocka_unit_test(session__no_answer__wall_backstop_wle),
		cmocka_unit_test(session__cpu_unreadable__ie_fail_closed),
		cmocka_unit_test(session__runtime_run_fails__open_fails_ie_nothing_left),
		cmocka_unit_test(session__runtime_without_run__open_fails_closed),
		cmocka_unit_test(session__runtime_without_create__precreate_fails_closed),
		cmocka_unit_test(session__invalid_job__refused_before_any_sandbox),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
