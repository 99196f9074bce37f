/* Integration tests of the host-side CPU accounting
 * (executor/sandbox/cputime.h) against the real runsc: a sandbox starved of CPU
 * reports the CPU its program really used, not the time it waited (the host's
 * kill of a program that spins forever is tested in test_session.c, at full
 * CPU).
 *
 * Starvation is made deterministic with the engine's CPU quota: at 25 % of
 * one CPU the sandbox's threads spend three quarters of the time throttled,
 * as they would waiting for a core on a node running four CPU-bound
 * sandboxes per core. gVisor's ptrace platform counts that time as the
 * program's CPU time (init's figure), the host's cgroup does not.
 *
 * Needs root, /usr/bin/runsc and a built gavel-init, like test_session.c;
 * its own runsc root, work root and cgroup parent. No timing assertions
 * beyond the limits themselves: the figures are compared with each other
 * and with the limit. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor/sandbox/session.h"
#include "tests/support/engine_test.h"
#include "tests/support/testutil.h"

struct env {
	struct exec_engine e;
	struct exec_engine_config cfg;
	struct test_engine_roots roots;
	char init_path[PATH_MAX];
	bool ready;
	struct exec_session *cur;
};

static struct env g;

static int group_setup(void **state)
{
	(void)state;
	char why[256];
	if (!test_engine_can_run(NULL, g.init_path, why, sizeof(why))) {
		fprintf(stderr, "# cannot run: %s\n", why);
		return 0;
	}
	test_engine_roots_name(&g.roots, "gavel-cputime-%d", (int)getpid());
	g.cfg = test_engine_config(&g.roots, g.init_path);
	g.cfg.cpu_quota_pct = 25;
	struct gv_err err;
	if (exec_engine_init(&g.e, &g.cfg, &err) != 0) {
		fprintf(stderr, "# engine init: %s\n", err.msg);
		return 0;
	}
	g.ready = true;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (g.ready)
		test_engine_remove(&g.e, &g.roots, NULL);
	return 0;
}

static int test_teardown(void **state)
{
	(void)state;
	exec_session_close(g.cur);
	g.cur = NULL;
	if (g.ready)
		exec_engine_drain(&g.e);
	return 0;
}

static const char *const gcc_argv[] = {"/usr/bin/gcc", "-O2", "-o", "/box/main", "/box/main.c", NULL};
static const char *const run_argv[] = {"/box/main", NULL};

static struct exec_session *open_c(const char *src, uint64_t cpu_ms, uint64_t wall_ms)
{
	struct exec_file f = {.name = "main.c", .data = src, .len = strlen(src)};
	struct exec_job job = {
		.tenant = "tenant-a",
		.compile_argv = gcc_argv,
		.run_argv = run_argv,
		.files = &f,
		.n_files = 1,
		.compile_limits = {.cpu_ms = 60000, .wall_ms = 120000, .memory_kb = 512 * 1024,
				   .output_bytes = 65536, .procs = 64},
		.run_limits = {.cpu_ms = cpu_ms, .wall_ms = wall_ms, .memory_kb = 64 * 1024,
			       .output_bytes = 65536, .procs = 16, .rlimit_as = true},
	};
	struct exec_session *s = NULL;
	struct exec_phase_result r;
	struct gv_err err;
	if (exec_session_open(&g.e, &job, &s, &r, &err) != 0)
		fail_msg("open: %s", err.msg);
	if (strcmp(r.status, "OK") != 0)
		fail_msg("compile: %s %s", r.status, r.message);
	/* The compile phase is accounted the same way. */
	assert_true(r.host_cpu_us > 0);
	assert_true(r.time_ms <= r.guest_time_ms);
	exec_phase_result_free(&r);
	g.cur = s;
	return s;
}

/* ~0.25 s of CPU on a recent x86 core, at least 50 ms on any. */
static const char *const spin_c =
	"#include <stdio.h>\n"
	"int main(void){volatile unsigned long x=0;for(unsigned long i=0;i<500000000UL;i++)x+=i;"
	"printf(\"%lu\\n\",(unsigned long)x);return 0;}\n";

/* Throttled to a quarter of a CPU, the program's guest clock may run ahead
 * of the CPU it gets (two to four times on a loaded node; on a quiet one
 * gVisor counted almost none of the throttled time, so that is not
 * asserted); the reported time is never above the host's, which stays
 * within what the quota allows over the test's own wall time. The limit
 * is loose (3 s), to keep the test clear of the CPU limit whatever the
 * node's load. */
static void cputime__starved_sandbox__reports_cpu_used_not_waited(void **state)
{
	(void)state;
	test_engine_require_ready(g.ready, "cputime tests");
	struct exec_session *s = open_c(spin_c, 3000, 30000);
	for (int i = 0; i < 2; i++) {
		struct exec_phase_result r;
		struct gv_err err;
		double t0 = test_now_ms();
		if (exec_session_run_test(s, "", 0, &r, &err) != 0)
			fail_msg("run: %s", err.msg);
		double wall = test_now_ms() - t0;
		fprintf(stderr, "# %s time %llu ms, init's figure %llu ms, host %llu us, wall %.0f ms\n", r.status,
			(unsigned long long)r.time_ms, (unsigned long long)r.guest_time_ms,
			(unsigned long long)r.host_cpu_us, wall);
		assert_string_equal(r.status, "OK");
		/* Both figures are there and the reported one is their minimum. */
		assert_true(r.host_cpu_us >= 50000);
		assert_true(r.guest_time_ms > 0);
		uint64_t hm = r.host_cpu_us / 1000;
		assert_int_equal(r.time_ms, r.guest_time_ms < hm ? r.guest_time_ms : hm);
		/* The sandbox cannot use more than its quota over the test. */
		assert_true((double)r.host_cpu_us / 1000 <= wall * 0.25 + 50);
		exec_phase_result_free(&r);
	}
	exec_session_close(s);
	g.cur = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(cputime__starved_sandbox__reports_cpu_used_not_waited, test_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
