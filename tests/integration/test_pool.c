/* Integration tests of the pool of sandboxes created ahead of demand
 * (executor/sandbox/pool.h) against the real runsc: a pooled sandbox gives the
 * right result and holds only its own job's files, is used for one job and
 * destroyed after, is never handed to a job of another tenant or other
 * limits, and nothing of a pool survives its detach or a crash of its
 * executor (the next engine on the same roots sweeps it). Pool size 0 is
 * no pool.
 *
 * Needs root, /usr/bin/runsc, /usr/bin/python3 and a built gavel-init
 * (GAVEL_INIT, else $BUILD/gavel-init, else build/gavel-init); fails
 * saying why when they are missing, unless GAVEL_ALLOW_SKIP=1. Its own
 * runsc root, work root and cgroup parent (gavel-pooltest-<pid>). */
#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
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

#include "executor/sandbox/pool.h"
#include "executor/sandbox/session.h"
#include "tests/support/engine_test.h"
#include "tests/support/testutil.h"

struct env {
	struct exec_engine e;
	struct exec_engine_config cfg;
	struct exec_pool pool;
	struct test_engine_roots roots;
	char init_path[PATH_MAX];
	bool ready;
};

static struct env g;

static int group_setup(void **state)
{
	(void)state;
	static const char *const tools[] = {"/usr/bin/python3", NULL};
	char why[256];
	if (!test_engine_can_run(tools, g.init_path, why, sizeof(why))) {
		fprintf(stderr, "# cannot run: %s\n", why);
		return 0;
	}
	test_engine_roots_name(&g.roots, "gavel-pooltest-%d", (int)getpid());
	g.cfg = test_engine_config(&g.roots, g.init_path);
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
	if (g.ready) {
		exec_pool_detach(&g.pool);
		exec_engine_drain(&g.e);
	}
	return 0;
}

static void require_ready(void)
{
	test_engine_require_ready(g.ready, "pool tests");
}

static void attach(unsigned size)
{
	struct gv_err err;
	struct exec_pool_config pc = {.size = size, .idle_ms = 60000};
	if (exec_pool_attach(&g.pool, &g.e, &pc, &err) != 0)
		fail_msg("attach: %s", err.msg);
}

static const char *const py_argv[] = {"/usr/bin/python3", "/box/main.py", NULL};

/* A python job printing the sorted names in /box, then its tag: what a
 * sandbox holds is then visible in its output. */
static struct exec_job py_job(const char *tenant, const char *tag, struct exec_file files[2], size_t nfiles)
{
	static char src[2][256];
	static int k;
	char *s = src[k++ % 2];
	snprintf(s, 256, "import os\nprint(sorted(os.listdir('/box')))\nprint('%s')\n", tag);
	files[0] = (struct exec_file){.name = "main.py", .data = s, .len = strlen(s)};
	if (nfiles > 1)
		files[1] = (struct exec_file){.name = "extra.txt", .data = "secret of an earlier job\n", .len = 25};
	return (struct exec_job){
		.tenant = tenant,
		.run_argv = py_argv,
		.files = files,
		.n_files = nfiles,
		.run_limits = {.cpu_ms = 5000, .wall_ms = 10000, .memory_kb = 256 * 1024, .output_bytes = 65536,
			       .procs = 16},
	};
}

/* Opens, runs one test, checks its output, closes; returns the sandbox id. */
static void run_job(const struct exec_job *job, const char *want_out, char id[64])
{
	struct exec_session *s = NULL;
	struct exec_phase_result c, r;
	struct gv_err err;
	double t = test_now_ms();
	if (exec_session_open(&g.e, job, &s, &c, &err) != 0)
		fail_msg("open: %s", err.msg);
	assert_string_equal(c.status, "OK");
	exec_phase_result_free(&c);
	snprintf(id, 64, "%s", exec_session_id(s));
	if (exec_session_run_test(s, "", 0, &r, &err) != 0)
		fail_msg("run: %s", err.msg);
	fprintf(stderr, "# %s: open + run %.0f ms\n", id, test_now_ms() - t);
	assert_string_equal(r.status, "OK");
	assert_string_equal(r.out ? r.out : "", want_out);
	exec_phase_result_free(&r);
	exec_session_close(s);
}

/* Polls the engine as an idle worker does until the pool holds n created
 * sandboxes. */
static void wait_filled(size_t n)
{
	for (int i = 0; i < 2000; i++) {
		exec_engine_poll(&g.e);
		size_t ready = 0;
		struct gv_err err;
		for (size_t k = 0; k < g.pool.n_held; k++)
			if (exec_session_precreate_poll(g.pool.held[k], &err) == 1)
				ready++;
		if (ready >= n)
			return;
		usleep(10000);
	}
	fail_msg("the pool did not fill up to %zu", n);
}

static void find_id(const char *id, void *arg)
{
	const char **want = arg;
	if (*want && strcmp(id, *want) == 0)
		*want = NULL;
}

static bool container_exists(const char *id)
{
	const char *want = id;
	struct gv_err err;
	if (exec_runsc_list(&g.e.runsc, find_id, &want, &err) != 0)
		fail_msg("runsc list: %s", err.msg);
	return want == NULL;
}

/* Polls the engine every 50 ms, as an idle worker with a tear-down in
 * flight does, until sandbox id is no longer listed; fails after ms. */
static void wait_gone(const char *id, int ms)
{
	double t0 = test_now_ms();
	while (container_exists(id)) {
		if (test_now_ms() - t0 > ms)
			fail_msg("sandbox %s still listed %d ms after its close", id, ms);
		exec_engine_poll(&g.e);
		usleep(50000);
	}
	fprintf(stderr, "# %s gone %.0f ms after its close\n", id, test_now_ms() - t0);
}

static void count_id(const char *id, void *arg)
{
	(void)id;
	(*(unsigned *)arg)++;
}

static unsigned containers(const struct exec_engine *e)
{
	unsigned n = 0;
	struct gv_err err;
	if (exec_runsc_list(&e->runsc, count_id, &n, &err) != 0)
		fail_msg("runsc list: %s", err.msg);
	return n;
}

static unsigned work_dirs(void)
{
	DIR *d = opendir(g.roots.work_root);
	unsigned n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL)
		n += strncmp(de->d_name, "gv-", 3) == 0;
	if (d)
		closedir(d);
	return n;
}

static void pool__next_job__runs_in_created_sandbox_with_only_its_files(void **state)
{
	(void)state;
	require_ready();
	attach(1);
	struct exec_file f[2];
	char id1[64], id2[64], id3[64];
	/* The first job of a shape finds nothing: it is what tells the pool. */
	struct exec_job j1 = py_job("tenant-a", "one", f, 2);
	run_job(&j1, "['extra.txt', 'job', 'main.py']\none\n", id1);
	assert_int_equal(g.pool.stats.misses, 1);
	wait_filled(1);
	char pooled[64];
	snprintf(pooled, sizeof(pooled), "%s", exec_session_id(g.pool.held[0]));
	assert_string_not_equal(pooled, id1);

	/* The next job of that shape takes it, and sees its own files only. */
	struct exec_file f2[2];
	struct exec_job j2 = py_job("tenant-a", "two", f2, 1);
	run_job(&j2, "['job', 'main.py']\ntwo\n", id2);
	assert_int_equal(g.pool.stats.hits, 1);
	assert_string_equal(id2, pooled);

	/* The close started the refill; the finished sandbox's delete runs
	 * next to it and it is soon no longer listed, in any state. */
	assert_int_equal(g.pool.n_held, 1);
	wait_gone(id2, 2000);
	/* Right after a close the refill is still being created: a job then
	 * waits for it rather than booting another. */
	struct exec_file f3[2];
	struct exec_job j3 = py_job("tenant-a", "three", f3, 1);
	run_job(&j3, "['job', 'main.py']\nthree\n", id3);
	assert_int_equal(g.pool.stats.hits, 2);
	assert_string_not_equal(id3, id2);

	/* Used once, then destroyed like any sandbox. */
	exec_pool_detach(&g.pool);
	exec_engine_drain(&g.e);
	assert_false(container_exists(id1));
	assert_false(container_exists(id2));
	assert_false(container_exists(id3));
	assert_int_equal(containers(&g.e), 0);
	assert_int_equal(work_dirs(), 0);
}

static void pool__other_tenant_or_limits__never_served(void **state)
{
	(void)state;
	require_ready();
	attach(1);
	struct exec_file f[2];
	char id[64];
	struct exec_job ja = py_job("tenant-a", "a", f, 1);
	run_job(&ja, "['job', 'main.py']\na\n", id);
	wait_filled(1);
	char pooled[64];
	snprintf(pooled, sizeof(pooled), "%s", exec_session_id(g.pool.held[0]));

	/* Another tenant: its own cgroup, never tenant-a's sandbox. */
	struct exec_job jb = py_job("tenant-b", "b", f, 1);
	run_job(&jb, "['job', 'main.py']\nb\n", id);
	assert_string_not_equal(id, pooled);
	assert_int_equal(g.pool.stats.hits, 0);
	/* Same tenant, more memory: a sandbox with other limits. */
	struct exec_job jm = py_job("tenant-a", "m", f, 1);
	jm.run_limits.memory_kb = 300 * 1024;
	run_job(&jm, "['job', 'main.py']\nm\n", id);
	assert_string_not_equal(id, pooled);
	assert_int_equal(g.pool.stats.hits, 0);
	assert_int_equal(g.pool.stats.misses, 3);
}

static void pool__detach__destroys_every_pooled_sandbox(void **state)
{
	(void)state;
	require_ready();
	attach(2);
	struct exec_file fa[2], fb[2];
	char id[64];
	struct exec_job ja = py_job("tenant-a", "a", fa, 1);
	struct exec_job jb = py_job("tenant-b", "b", fb, 1);
	run_job(&ja, "['job', 'main.py']\na\n", id);
	run_job(&jb, "['job', 'main.py']\nb\n", id);
	wait_filled(2);
	assert_int_equal(g.pool.n_held, 2);
	exec_engine_drain(&g.e);
	assert_int_equal(containers(&g.e), 2);
	exec_pool_detach(&g.pool);
	assert_null(g.e.pool);
	exec_engine_drain(&g.e);
	assert_int_equal(containers(&g.e), 0);
	assert_int_equal(work_dirs(), 0);
}

static void pool__executor_crash__swept_by_next_engine(void **state)
{
	(void)state;
	require_ready();
	/* A worker that fills its pool and dies without cleaning up: its
	 * sandboxes are reparented to us (the engine made us a subreaper). */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct exec_engine e;
		struct exec_pool p;
		struct gv_err err;
		struct exec_pool_config pc = {.size = 1};
		if (exec_engine_init(&e, &g.cfg, &err) != 0 || exec_pool_attach(&p, &e, &pc, &err) != 0) {
			fprintf(stderr, "# crashing worker: %s\n", err.msg);
			_exit(2);
		}
		struct exec_file f[2];
		struct exec_job j = py_job("tenant-a", "x", f, 1);
		struct exec_session *s = NULL;
		struct exec_phase_result c;
		if (exec_session_open(&e, &j, &s, &c, &err) != 0)
			_exit(3);
		exec_session_close(s);
		for (int i = 0; i < 2000; i++) {
			exec_engine_poll(&e);
			if (p.n_held == 1 && exec_session_precreate_poll(p.held[0], &err) == 1)
				_exit(0);
			usleep(10000);
		}
		_exit(4);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(containers(&g.e) >= 1);

	struct exec_engine e2;
	struct gv_err err;
	if (exec_engine_init(&e2, &g.cfg, &err) != 0)
		fail_msg("engine after the crash: %s", err.msg);
	assert_true(e2.swept_containers >= 1);
	assert_int_equal(containers(&e2), 0);
	assert_int_equal(work_dirs(), 0);
	exec_engine_fini(&e2);
}

static void pool__size_zero__no_pool_and_jobs_run(void **state)
{
	(void)state;
	require_ready();
	attach(0);
	assert_null(g.e.pool);
	struct exec_file f[2];
	char id[64];
	struct exec_job j = py_job("tenant-a", "z", f, 1);
	run_job(&j, "['job', 'main.py']\nz\n", id);
	exec_engine_poll(&g.e);
	exec_engine_drain(&g.e);
	assert_int_equal(containers(&g.e), 0);
}

static bool spare_answer;

static bool spare(void *arg)
{
	(void)arg;
	return spare_answer;
}

/* A busy node creates nothing ahead; it does again once it has spare. */
static void pool__no_spare_capacity__nothing_created_ahead(void **state)
{
	(void)state;
	require_ready();
	struct gv_err err;
	struct exec_pool_config pc = {.size = 1, .idle_ms = 60000, .has_spare = spare};
	spare_answer = false;
	if (exec_pool_attach(&g.pool, &g.e, &pc, &err) != 0)
		fail_msg("attach: %s", err.msg);
	struct exec_file f[2];
	char id[64];
	struct exec_job j = py_job("tenant-a", "busy", f, 1);
	run_job(&j, "['job', 'main.py']\nbusy\n", id);
	for (int i = 0; i < 20; i++) {
		exec_engine_poll(&g.e);
		usleep(10000);
	}
	assert_int_equal(g.pool.n_held, 0);
	assert_int_equal(g.pool.stats.created, 0);
	spare_answer = true;
	wait_filled(1);
	assert_int_equal(g.pool.stats.created, 1);
	struct exec_job j2 = py_job("tenant-a", "idle", f, 1);
	run_job(&j2, "['job', 'main.py']\nidle\n", id);
	assert_int_equal(g.pool.stats.hits, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(pool__next_job__runs_in_created_sandbox_with_only_its_files, test_teardown),
		cmocka_unit_test_teardown(pool__other_tenant_or_limits__never_served, test_teardown),
		cmocka_unit_test_teardown(pool__detach__destroys_every_pooled_sandbox, test_teardown),
		cmocka_unit_test_teardown(pool__executor_crash__swept_by_next_engine, test_teardown),
		cmocka_unit_test_teardown(pool__size_zero__no_pool_and_jobs_run, test_teardown),
		cmocka_unit_test_teardown(pool__no_spare_capacity__nothing_created_ahead, test_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
