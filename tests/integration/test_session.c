/* Integration tests of the sandbox engine against the real runsc: C
 * programs compiled with /usr/bin/gcc inside the sandbox, every verdict
 * path the host can see (OK, TLE, WLE, MLE, RE, whole-sandbox OOM), 100
 * tests in one session, and that nothing is left behind: no container under
 * the runsc root, no cgroup, no work dir.
 *
 * Needs root, /usr/bin/runsc and a built gavel-init (GAVEL_INIT, else
 * $BUILD/gavel-init, else build/gavel-init). When these are missing the
 * tests fail saying why, unless GAVEL_ALLOW_SKIP=1. Each test uses its own
 * runsc root, work root and cgroup parent, so it never touches another
 * executor's sandboxes. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor/sandbox/cputime.h"
#include "executor/sandbox/session.h"
#include "executor/sandbox/session_relay.h"
#include "tests/support/engine_test.h"
#include "tests/support/testutil.h"

struct env {
	struct exec_engine e;
	struct exec_engine_config cfg;
	struct test_engine_roots roots;
	char init_path[PATH_MAX];
	bool ready;
	struct exec_session *cur; /* closed by the teardown if a test failed */
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
	test_engine_roots_name(&g.roots, "gavel-test-%d", (int)getpid());
	g.cfg = test_engine_config(&g.roots, g.init_path);
	struct gv_err err;
	double t = test_now_ms();
	if (exec_engine_init(&g.e, &g.cfg, &err) != 0) {
		fprintf(stderr, "# engine init: %s\n", err.msg);
		return 0;
	}
	fprintf(stderr, "# engine init %.1f ms (cgroup %s)\n", test_now_ms() - t, g.e.cg.ops->name);
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

static void require_ready(void)
{
	test_engine_require_ready(g.ready, "sandbox tests");
}

static const char *const gcc_argv[] = {"/usr/bin/gcc", "-O2", "-o", "/box/main", "/box/main.c", NULL};
static const char *const run_argv[] = {"/box/main", NULL};

static struct exec_job c_job(const char *src, struct exec_file *f)
{
	*f = (struct exec_file){.name = "main.c", .data = src, .len = strlen(src)};
	return (struct exec_job){
		.tenant = "tenant-a",
		.compile_argv = gcc_argv,
		.run_argv = run_argv,
		.files = f,
		.n_files = 1,
		.compile_limits = {.cpu_ms = 20000, .wall_ms = 40000, .memory_kb = 512 * 1024,
				   .output_bytes = 65536, .procs = 64},
		.run_limits = {.cpu_ms = 1000, .wall_ms = 3000, .memory_kb = 64 * 1024,
			       .output_bytes = 65536, .stderr_bytes = 4096, .procs = 16,
			       .rlimit_as = true},
	};
}

/* Opens a session for src and asserts the compile went through. */
static struct exec_session *open_c(struct exec_job *job)
{
	struct exec_session *s = NULL;
	struct exec_phase_result r;
	struct gv_err err;
	double t = test_now_ms();
	int rc = exec_session_open(&g.e, job, &s, &r, &err);
	if (rc != 0)
		fail_msg("open: %s", err.msg);
	fprintf(stderr, "# open + compile %.0f ms (compile cpu %llu ms)\n", test_now_ms() - t,
		(unsigned long long)r.time_ms);
	if (strcmp(r.status, "OK") != 0)
		fail_msg("compile: %s %s: %.*s", r.status, r.message, (int)r.err_len,
			 r.err_out ? r.err_out : "");
	exec_phase_result_free(&r);
	g.cur = s;
	return s;
}

static void close_cur(struct exec_session *s)
{
	if (g.cur == s)
		g.cur = NULL;
	exec_session_close(s);
}

static int test_teardown(void **state)
{
	(void)state;
	exec_session_close(g.cur);
	g.cur = NULL;
	/* Each test starts with no tear-down in flight. */
	if (g.ready)
		exec_engine_drain(&g.e);
	return 0;
}

static void run_one(struct exec_session *s, const char *input, struct exec_phase_result *r)
{
	struct gv_err err;
	if (exec_session_run_test(s, input, strlen(input), r, &err) != 0)
		fail_msg("run_test: %s", err.msg);
}

static void session__hello_world__ok(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("#include <stdio.h>\n"
				    "int main(void){char b[64];if(scanf(\"%63s\",b)!=1)return 9;"
				    "printf(\"hello %s\\n\",b);return 0;}\n", &f);
	struct exec_session *s = open_c(&job);
	struct exec_phase_result r;
	run_one(s, "world\n", &r);
	assert_string_equal(r.status, "OK");
	assert_int_equal(r.exit_code, 0);
	assert_non_null(r.out);
	assert_string_equal(r.out, "hello world\n");
	/* The host's CPU figure of the test is there (the sandbox did some
	 * work: spawn, the program, init's own), the reported time is the
	 * least of it and init's. */
	assert_true(r.host_cpu_us > 0);
	assert_int_equal(r.time_ms, r.guest_time_ms < r.host_cpu_us / 1000 ? r.guest_time_ms : r.host_cpu_us / 1000);
	exec_phase_result_free(&r);
	double t = test_now_ms();
	close_cur(s);
	fprintf(stderr, "# close %.0f ms\n", test_now_ms() - t);
}

/* gavel-init empties its bounding set once and the program inherits it:
 * no capability set of the program holds anything, in every test. */
static void session__program__holds_no_capability(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("#include <stdio.h>\n#include <string.h>\n"
				    "int main(void){FILE*f=fopen(\"/proc/self/status\",\"r\");char l[256];"
				    "if(!f)return 9;while(fgets(l,sizeof l,f))"
				    "if(!strncmp(l,\"Cap\",3))fputs(l,stdout);return 0;}\n", &f);
	struct exec_session *s = open_c(&job);
	for (int i = 0; i < 2; i++) {
		struct exec_phase_result r;
		run_one(s, "", &r);
		assert_string_equal(r.status, "OK");
		assert_non_null(r.out);
		/* gVisor 20221219 has no CapAmb line; the others are required. */
		static const char *const keys[] = {"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"};
		for (size_t k = 0; k < 5; k++) {
			const char *p = strstr(r.out, keys[k]);
			if (!p && k == 4)
				continue;
			if (!p)
				fail_msg("%s missing from %s", keys[k], r.out);
			p += strlen(keys[k]);
			while (*p == ' ' || *p == '\t')
				p++;
			if (strspn(p, "0") != 16)
				fail_msg("program holds capabilities: %s", r.out);
		}
		exec_phase_result_free(&r);
	}
	close_cur(s);
}

static void session__cpu_spin__tle(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("int main(void){volatile unsigned long x=0;for(;;)x++;}\n", &f);
	struct exec_session *s = open_c(&job);
	struct exec_phase_result r;
	run_one(s, "", &r);
	assert_string_equal(r.status, "TLE");
	fprintf(stderr, "# spin: %s %s time %llu ms, host %llu us: %s\n", r.status, r.limit,
		(unsigned long long)r.time_ms, (unsigned long long)r.host_cpu_us, r.message);
	if (strcmp(r.limit, "wall") == 0 && strstr(r.message, "idle")) {
		/* On a node loaded enough that init's clock lagged the wall
		 * clock by the limit, init's idle rule (PROTOCOL.md) ends it
		 * first, keeping the sandbox. */
		assert_true(exec_session_alive(s));
	} else {
		/* TLE on CPU, past the limit by both counts. Stopped by the
		 * host's count of the sandbox's CPU
		 * (executor/sandbox/cputime.h), the sandbox is over: the caller
		 * opens a fresh one for the next test. On a loaded node init's
		 * own kill at its loose limit (the 3 s wall limit) may come
		 * first and keep it. */
		assert_string_equal(r.limit, "cpu");
		assert_true(r.time_ms >= 1000);
		if (r.host_cpu_us * 1000 >= exec_cpu_host_kill_ns(1000))
			assert_false(exec_session_alive(s));
	}
	exec_phase_result_free(&r);
	close_cur(s);
}

/* Idle past the time limit (nothing runnable and the CPU time still, for
 * idle_ms = cpu_ms = 1 s here) is
 * TLE on the wall clock, long before the 3 s wall limit. */
static void session__sleep__tle_idle(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("#include <unistd.h>\nint main(void){sleep(30);return 0;}\n", &f);
	struct exec_session *s = open_c(&job);
	struct exec_phase_result r;
	double t = test_now_ms();
	run_one(s, "", &r);
	assert_string_equal(r.status, "TLE");
	assert_string_equal(r.limit, "wall");
	assert_non_null(strstr(r.message, "idle"));
	assert_true(r.wall_ms >= 1000 && r.wall_ms < 3000);
	/* init's idle rule answered, not its wall limit or the host backstop. */
	assert_true(test_now_ms() - t < 3000 + 4000);
	assert_true(exec_session_alive(s));
	exec_phase_result_free(&r);
	close_cur(s);
}

static void session__memory_bomb__mle(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("#include <stdlib.h>\n#include <string.h>\n"
				    "int main(void){for(;;){char*p=malloc(1<<20);"
				    "if(!p)abort();memset(p,1,1<<20);}}\n", &f);
	struct exec_session *s = open_c(&job);
	struct exec_phase_result r;
	run_one(s, "", &r);
	if (strcmp(r.status, "MLE") != 0)
		fprintf(stderr, "# memory bomb: %s signal %d memory %llu kB: %s\n", r.status, r.signal,
			(unsigned long long)r.memory_kb, r.message);
	assert_string_equal(r.status, "MLE");
	assert_string_equal(r.limit, "memory");
	exec_phase_result_free(&r);
	/* The limit was the program's own: the sandbox lives on. */
	assert_true(exec_session_alive(s));
	run_one(s, "", &r);
	assert_string_equal(r.status, "MLE");
	exec_phase_result_free(&r);
	close_cur(s);
}

static void session__exit_3__re(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("int main(void){return 3;}\n", &f);
	struct exec_session *s = open_c(&job);
	struct exec_phase_result r;
	run_one(s, "", &r);
	assert_string_equal(r.status, "RE");
	assert_int_equal(r.exit_code, 3);
	exec_phase_result_free(&r);
	close_cur(s);
}

/* Validator sandboxes: per-test read-only files in /tmp/gv-files, a fresh
 * feedback dir whose regular files (bounded in count and size, links
 * skipped) come back, and nothing of either left for the next test. */
static void session__test_files_and_feedback__bounded_and_wiped(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job(
		"#include <fcntl.h>\n#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n"
		"int main(void){char b[64]={0};int fd=open(\"/tmp/gv-files/answer\",O_RDONLY);"
		"if(fd<0){puts(\"gone\");return 0;}"
		"if(read(fd,b,63)<0)return 9;close(fd);"
		"if(open(\"/tmp/gv-files/answer\",O_WRONLY)>=0)return 10;"
		"if(unlink(\"/tmp/gv-files/answer\")==0)return 11;"
		"FILE*m=fopen(\"/tmp/gv-feedback/judgemessage.txt\",\"w\");if(!m)return 12;"
		"fprintf(m,\"answer=%s\",b);fclose(m);"
		"if(symlink(\"/box/job\",\"/tmp/gv-feedback/link\")==0)puts(\"symlinked\");"
		"FILE*big=fopen(\"/tmp/gv-feedback/big\",\"w\");for(int i=0;i<100000;i++)fputc('x',big);fclose(big);"
		"for(int i=0;i<30;i++){char n[64];snprintf(n,64,\"/tmp/gv-feedback/f%02d\",i);"
		"FILE*x=fopen(n,\"w\");if(x)fclose(x);}"
		"char in[16]={0};if(read(0,in,15)<0)return 13;printf(\"stdin=%s\",in);return 0;}\n",
		&f);
	job.feedback_dir = true;
	struct exec_session *s = open_c(&job);
	struct exec_file files[2] = {
		{.name = "input", .data = "in", .len = 2},
		{.name = "answer", .data = "42", .len = 2},
	};
	struct exec_phase_result r;
	struct gv_err err;
	if (exec_session_run_test_files(s, files, 2, "out", 3, &r, &err) != 0)
		fail_msg("run_test_files: %s", err.msg);
	if (strcmp(r.status, "OK") != 0)
		fail_msg("status %s exit %d: %s", r.status, r.exit_code, r.message);
	assert_non_null(strstr(r.out, "stdin=out"));
	const struct exec_feedback_file *jm = exec_phase_feedback(&r, "judgemessage.txt");
	assert_int_equal(r.n_feedback, EXEC_FEEDBACK_MAX);
	assert_null(exec_phase_feedback(&r, "link"));
	/* Which 16 of the 32 files come back depends on the directory order;
	 * whichever they are, each is bounded. */
	for (size_t i = 0; i < r.n_feedback; i++)
		assert_true(r.feedback[i].len <= EXEC_FEEDBACK_FILE_MAX);
	const struct exec_feedback_file *big = exec_phase_feedback(&r, "big");
	if (jm)
		assert_string_equal(jm->data, "answer=42");
	if (big)
		assert_int_equal(big->len, EXEC_FEEDBACK_FILE_MAX);
	exec_phase_result_free(&r);
	/* The next test sees neither the files nor the old feedback. */
	run_one(s, "", &r);
	assert_string_equal(r.status, "OK");
	assert_string_equal(r.out, "gone\n");
	exec_phase_result_free(&r);
	/* A bad name is refused on the host, before anything is sent. */
	struct exec_file bad = {.name = "../x", .data = "", .len = 0};
	assert_int_equal(exec_session_run_test_files(s, &bad, 1, "", 0, &r, &err), -1);
	exec_phase_result_free(&r);
	assert_true(exec_session_alive(s));
	close_cur(s);
}

/* Interactive relay: a submission and an interactor in two sandboxes,
 * ping-pong through the host. Measures the round trip of one exchange
 * (the submission's own clock over N exchanges), checks both results, that
 * the interactor gets EOF when the submission ends, that a session serves
 * a second interaction, and that a stalled submission ends on its wall
 * limit while the interactor's verdict still comes. */
#define PING_N 200
static void session__interactive__relays_both_ways(void **state)
{
	(void)state;
	require_ready();
	struct exec_file fs, fi;
	char subsrc[1024];
	snprintf(subsrc, sizeof(subsrc),
		 "#include <stdio.h>\n#include <string.h>\n#include <time.h>\n"
		 "int main(void){char b[64];struct timespec a,z;int n=%d;"
		 "for(int i=0;i<n;i++){if(i==1)clock_gettime(CLOCK_MONOTONIC,&a);"
		 "printf(\"ping %%d\\n\",i);fflush(stdout);"
		 "if(!fgets(b,64,stdin))return 3;int k;if(sscanf(b,\"pong %%d\",&k)!=1||k!=i)return 4;}"
		 "clock_gettime(CLOCK_MONOTONIC,&z);"
		 "fprintf(stderr,\"rtt_us=%%ld\\n\",((z.tv_sec-a.tv_sec)*1000000L+(z.tv_nsec-a.tv_nsec)/1000)/(n-1));"
		 "return 0;}\n", PING_N);
	struct exec_job sj = c_job(subsrc, &fs);
	sj.interactive = true;
	struct exec_job ij = c_job("#include <stdio.h>\n#include <string.h>\n"
				   "int main(int c,char**v){char b[64];FILE*f=fopen(\"/tmp/gv-files/input\",\"r\");"
				   "if(!f||c!=1)return 1;fclose(f);int n=0;"
				   "while(fgets(b,64,stdin)){int k;if(sscanf(b,\"ping %d\",&k)!=1)return 43;"
				   "printf(\"pong %d\\n\",k);fflush(stdout);n++;}"
				   "fprintf(stderr,\"pings=%d\\n\",n);return 42;}\n", &fi);
	ij.interactive = true;
	ij.run_limits.wall_ms = 10000;
	struct exec_session *sub = open_c(&sj);
	g.cur = NULL;
	struct exec_session *itr = open_c(&ij);
	struct exec_file files[1] = {{.name = "input", .data = "x", .len = 1}};
	for (int round = 0; round < 2; round++) {
		struct exec_phase_result rs, ri;
		struct exec_interaction ia;
		struct gv_err err;
		double t = test_now_ms();
		if (exec_session_interact(sub, itr, files, 1, &rs, &ri, &ia, &err) != 0)
			fail_msg("interact: %s", err.msg);
		double wall = test_now_ms() - t;
		if (strcmp(rs.status, "OK") != 0)
			fail_msg("submission %s exit %d: %s / %.*s", rs.status, rs.exit_code, rs.message,
				 (int)rs.err_len, rs.err_out ? rs.err_out : "");
		assert_string_equal(ri.status, "RE");
		assert_int_equal(ri.exit_code, 42);
		assert_false(ia.interactor_first);
		assert_int_equal(ia.to_interactor_frames, PING_N);
		assert_int_equal(ia.to_submission_frames, PING_N);
		assert_non_null(strstr(ri.err_out, "pings=" "200"));
		long rtt = -1;
		assert_non_null(rs.err_out);
		assert_int_equal(sscanf(strstr(rs.err_out, "rtt_us="), "rtt_us=%ld", &rtt), 1);
		fprintf(stderr, "# interactive: %d round trips, %ld us each (submission's clock), "
			"relay wall %.0f ms, submission cpu %llu ms\n", PING_N, rtt, wall,
			(unsigned long long)rs.time_ms);
		exec_phase_result_free(&rs);
		exec_phase_result_free(&ri);
	}
	exec_session_close(sub);
	close_cur(itr);
}

static void session__interactive__stalled_submission_ends_on_its_wall(void **state)
{
	(void)state;
	require_ready();
	struct exec_file fs, fi;
	struct exec_job sj = c_job("#include <stdio.h>\nint main(void){return getchar()==EOF?0:1;}\n", &fs);
	sj.interactive = true;
	sj.run_limits.wall_ms = 1500;
	struct exec_job ij = c_job("#include <stdio.h>\nint main(void){return getchar()==EOF?43:42;}\n", &fi);
	ij.interactive = true;
	ij.run_limits.wall_ms = 10000;
	struct exec_session *sub = open_c(&sj);
	g.cur = NULL;
	struct exec_session *itr = open_c(&ij);
	struct exec_phase_result rs, ri;
	struct exec_interaction ia;
	struct gv_err err;
	if (exec_session_interact(sub, itr, NULL, 0, &rs, &ri, &ia, &err) != 0)
		fail_msg("interact: %s", err.msg);
	assert_string_equal(rs.status, "WLE");
	assert_string_equal(ri.status, "RE");
	assert_int_equal(ri.exit_code, 43);
	assert_false(ia.interactor_first);
	assert_true(exec_session_alive(sub));
	assert_true(exec_session_alive(itr));
	exec_phase_result_free(&rs);
	exec_phase_result_free(&ri);
	/* A plain run_test is refused on an interactive session. */
	assert_int_equal(exec_session_run_test(sub, "", 0, &rs, &err), -1);
	exec_phase_result_free(&rs);
	exec_session_close(sub);
	close_cur(itr);
}

static void session__hundred_tests__one_session(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("#include <stdio.h>\n"
				    "int main(void){long a,b;if(scanf(\"%ld %ld\",&a,&b)!=2)return 1;"
				    "printf(\"%ld\\n\",a+b);return 0;}\n", &f);
	struct exec_session *s = open_c(&job);
	double t = test_now_ms();
	for (int i = 0; i < 100; i++) {
		char in[64], want[32];
		snprintf(in, sizeof(in), "%d %d\n", i, 1000 * i);
		snprintf(want, sizeof(want), "%d\n", i + 1000 * i);
		struct exec_phase_result r;
		run_one(s, in, &r);
		assert_string_equal(r.status, "OK");
		assert_string_equal(r.out, want);
		exec_phase_result_free(&r);
	}
	fprintf(stderr, "# 100 tests: %.1f ms per test\n", (test_now_ms() - t) / 100);
	close_cur(s);
}

/* Processes a test leaves behind are gone before the next test: a
 * detached daemon (fork + setsid) and a child created with CLONE_PARENT and
 * no exit signal, which makes it a child of init that wait4 reports only
 * with __WALL. The next test looks for any process but itself and init. */
static void session__leftover_processes__gone_before_next_test(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job(
		"#define _GNU_SOURCE\n#include <dirent.h>\n#include <sched.h>\n#include <stdio.h>\n"
		"#include <stdlib.h>\n#include <string.h>\n#include <sys/syscall.h>\n#include <unistd.h>\n"
		"int main(void){char cmd[16];if(scanf(\"%15s\",cmd)!=1)return 9;\n"
		" if(!strcmp(cmd,\"daemon\")){pid_t d=fork(); if(d==0){setsid(); sleep(30); _exit(0);}\n"
		"  printf(\"planted %d\\n\",d>0); return 0;}\n"
		" if(!strcmp(cmd,\"clone\")){long c=syscall(SYS_clone,(unsigned long)CLONE_PARENT,0L,0L,0L,0L);\n"
		"  if(c==0){sleep(30); _exit(0);}\n"
		"  printf(\"planted %d\\n\",c>0); return 0;}\n"
		" int n=0; DIR*p=opendir(\"/proc\"); struct dirent*e; if(!p)return 8;\n"
		" while((e=readdir(p))){int pid=atoi(e->d_name); if(pid>1&&pid!=getpid())n++;}\n"
		" printf(\"left %d\\n\",n); return 0;}\n",
		&f);
	struct exec_session *s = open_c(&job);
	static const char *const plants[] = { "clone\n", "daemon\n", "clone\n" };
	for (size_t i = 0; i < sizeof(plants) / sizeof(plants[0]); i++) {
		struct exec_phase_result r;
		run_one(s, plants[i], &r);
		assert_string_equal(r.status, "OK");
		assert_non_null(r.out);
		assert_string_equal(r.out, "planted 1\n");
		exec_phase_result_free(&r);
		run_one(s, "check\n", &r);
		assert_string_equal(r.status, "OK");
		assert_non_null(r.out);
		assert_string_equal(r.out, "left 0\n");
		exec_phase_result_free(&r);
	}
	close_cur(s);
}

static void session__whole_sandbox_oom__mle_then_dead(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	/* Memory that is no process's RSS (unmapped memfd pages live in the
	 * Sentry's memory): gavel-init cannot see it, RLIMIT_AS does not
	 * bound it; only the host memcg stops it and kills the sandbox. */
	struct exec_job job = c_job("#define _GNU_SOURCE\n#include <sys/mman.h>\n#include <unistd.h>\n"
				    "static char b[1<<20];\n"
				    "int main(void){int fd=memfd_create(\"x\",0);if(fd<0)return 7;"
				    "for(int i=0;i<(1<<20);i++)b[i]=(char)i;"
				    "for(;;)if(write(fd,b,sizeof b)<0)return 8;}\n", &f);
	job.run_limits.rlimit_as = false;
	job.run_limits.fsize_kb = 4u << 20; /* RLIMIT_FSIZE bounds memfd writes too */
	job.run_limits.wall_ms = 20000;
	job.run_limits.cpu_ms = 10000;
	struct exec_session *s = open_c(&job);
	char cg[256];
	snprintf(cg, sizeof(cg), "%s", exec_session_cgroup(s));
	struct exec_phase_result r;
	run_one(s, "", &r);
	fprintf(stderr, "# whole-sandbox OOM: %s (%s)\n", r.status, r.message);
	assert_string_equal(r.status, "MLE");
	assert_string_equal(r.limit, "memory");
	exec_phase_result_free(&r);
	assert_false(exec_session_alive(s));
	struct gv_err err;
	assert_int_equal(exec_session_run_test(s, "", 0, &r, &err), -1);
	assert_int_equal(err.code, EXEC_EDEAD);
	exec_phase_result_free(&r);
	close_cur(s);
}

static void count_id(const char *id, void *arg)
{
	(void)id;
	(*(unsigned *)arg)++;
}

static bool cgroup_exists(const char *ctrl, const char *rel)
{
	char p[PATH_MAX + 512];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s/%s", g.e.cg.root, ctrl, rel);
	if (g.e.cg.ops == &exec_cgroup_v2_ops)
		snprintf(p, sizeof(p), "%s/%s", g.e.cg.root, rel);
	return stat(p, &st) == 0;
}

static void session__close__leaves_nothing(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("#include <stdio.h>\n#include <unistd.h>\n"
				    "int main(void){symlink(\"/etc\",\"/box/evil\");"
				    "FILE*x=fopen(\"/tmp/junk\",\"w\");fputs(\"x\",x);"
				    "puts(\"ok\");return 0;}\n", &f);
	struct exec_session *s = open_c(&job);
	char id[64], cg[256], dir[512];
	snprintf(id, sizeof(id), "%s", exec_session_id(s));
	snprintf(cg, sizeof(cg), "%s", exec_session_cgroup(s));
	snprintf(dir, sizeof(dir), "%s/%s", g.roots.work_root, id);
	unsigned n = 0;
	struct gv_err err;
	assert_int_equal(exec_runsc_list(&g.e.runsc, count_id, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(cgroup_exists("memory", cg));
	struct exec_phase_result r;
	run_one(s, "", &r);
	assert_string_equal(r.status, "OK");
	exec_phase_result_free(&r);
	double t = test_now_ms();
	close_cur(s);
	fprintf(stderr, "# close returned after %.1f ms\n", test_now_ms() - t);
	/* Nothing runs any more; the rest of the tear-down completes in the
	 * background, here by polling as an idle daemon would. */
	assert_true(g.e.n_pending >= 1);
	for (int i = 0; i < 3000 && g.e.n_pending > 0; i++) {
		exec_engine_poll(&g.e);
		usleep(10000);
	}
	assert_int_equal(g.e.n_pending, 0);
	fprintf(stderr, "# tear-down finished %.1f ms after close\n", test_now_ms() - t);

	n = 0;
	assert_int_equal(exec_runsc_list(&g.e.runsc, count_id, &n, &err), 0);
	assert_int_equal(n, 0);
	static const char *const ctrls[] = {"memory", "pids", "cpu", "cpuacct"};
	for (size_t i = 0; i < 4; i++)
		assert_false(cgroup_exists(ctrls[i], cg));
	struct stat st;
	assert_int_equal(stat(dir, &st), -1);
	/* The planted link was removed, not followed. */
	assert_int_equal(stat("/etc/passwd", &st), 0);
}

/* The host uids of the processes in a sandbox's memory cgroup but root's
 * (the gofer, which serves files as the host's root as before), at most
 * n; how many. */
static size_t sandbox_uids(const char *rel, uid_t *uids, size_t n)
{
	char p[PATH_MAX + 512];
	snprintf(p, sizeof(p), "%s/memory/%s/cgroup.procs", g.e.cg.root, rel);
	if (g.e.cg.ops == &exec_cgroup_v2_ops)
		snprintf(p, sizeof(p), "%s/%s/cgroup.procs", g.e.cg.root, rel);
	FILE *f = fopen(p, "r");
	if (!f)
		fail_msg("open %s: %s", p, strerror(errno));
	size_t k = 0;
	int pid;
	while (k < n && fscanf(f, "%d", &pid) == 1) {
		char sp[64], line[256];
		snprintf(sp, sizeof(sp), "/proc/%d/status", pid);
		FILE *st = fopen(sp, "r");
		if (!st)
			continue;
		unsigned ruid = 0, euid = 0;
		while (fgets(line, sizeof(line), st))
			if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2)
				break;
		fclose(st);
		if (euid != 0)
			uids[k++] = (uid_t)euid;
	}
	fclose(f);
	return k;
}

/* Each live sandbox's Sentry runs as a host uid of its own: not the
 * host's nobody (which other services and every other sandbox share), not
 * root, and not the uid of another live sandbox. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void session__host_uid__own_per_sandbox(void **state)
{
	(void)state;
	require_ready();
	exec_engine_drain(&g.e);
	int fds_before = open_fds();
	struct exec_file f1, f2;
	struct exec_job j1 = c_job("int main(void){return 0;}\n", &f1);
	struct exec_job j2 = c_job("int main(void){return 0;}\n", &f2);
	struct exec_session *s1 = open_c(&j1), *s2 = NULL;
	struct exec_phase_result r;
	struct gv_err err;
	if (exec_session_open(&g.e, &j2, &s2, &r, &err) != 0)
		fail_msg("open: %s", err.msg);
	exec_phase_result_free(&r);
	uid_t u1[64], u2[64];
	size_t n1 = sandbox_uids(exec_session_cgroup(s1), u1, 64);
	size_t n2 = sandbox_uids(exec_session_cgroup(s2), u2, 64);
	assert_true(n1 > 0 && n2 > 0);
	for (size_t i = 0; i < n1; i++) {
		assert_int_equal(u1[i], u1[0]);
		for (size_t k = 0; k < n2; k++)
			assert_int_not_equal(u2[k], u1[i]);
	}
	for (size_t k = 0; k < n2; k++)
		assert_int_equal(u2[k], u2[0]);
	fprintf(stderr, "# sandbox host uids %u and %u\n", (unsigned)u1[0], (unsigned)u2[0]);
	assert_true(u1[0] >= EXEC_UIDS_DEFAULT_BASE && u2[0] >= EXEC_UIDS_DEFAULT_BASE);
	assert_int_not_equal(u1[0], 65534);
	assert_int_not_equal(u2[0], 65534);
	exec_session_close(s2);
	close_cur(s1);
	/* Each uid's user namespace and lock go with its sandbox's tear-down:
	 * a long-lived worker does not collect one per uid of the range. */
	exec_engine_drain(&g.e);
	assert_int_equal(open_fds(), fds_before);
}

static void engine__init__sweeps_stale_sandbox(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("int main(void){return 0;}\n", &f);
	struct exec_session *s = open_c(&job);
	char cg[256];
	snprintf(cg, sizeof(cg), "%s", exec_session_cgroup(s));

	/* A second engine on the same roots, as after an executor restart. */
	struct exec_engine e2;
	struct gv_err err;
	if (exec_engine_init(&e2, &g.cfg, &err) != 0)
		fail_msg("second engine: %s", err.msg);
	assert_true(e2.swept_containers >= 1);
	assert_true(e2.swept_dirs >= 1);
	unsigned n = 0;
	assert_int_equal(exec_runsc_list(&e2.runsc, count_id, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_false(cgroup_exists("memory", cg));
	exec_engine_fini(&e2);

	/* The old session finds its sandbox gone and closes quietly. */
	struct exec_phase_result r;
	int rc = exec_session_run_test(s, "", 0, &r, &err);
	assert_int_equal(rc, -1);
	exec_phase_result_free(&r);
	close_cur(s);
}

static void session__bad_job__refused_before_anything_runs(void **state)
{
	(void)state;
	require_ready();
	struct exec_file f;
	struct exec_job job = c_job("int main(void){return 0;}\n", &f);
	struct exec_session *s = NULL;
	struct exec_phase_result r;
	struct gv_err err;
	job.tenant = "../escape";
	assert_int_equal(exec_session_open(&g.e, &job, &s, &r, &err), -1);
	assert_null(s);
	assert_string_equal(r.status, "IE");
	exec_phase_result_free(&r);
	job.tenant = "tenant-a";
	f.name = "../x.c";
	assert_int_equal(exec_session_open(&g.e, &job, &s, &r, &err), -1);
	exec_phase_result_free(&r);
	f.name = "main.c";
	static const char *const nl_argv[] = {"/box/main", "a\nrun_arg:/bin/sh", NULL};
	job.run_argv = nl_argv;
	assert_int_equal(exec_session_open(&g.e, &job, &s, &r, &err), -1);
	exec_phase_result_free(&r);
}

/* A hostile gavel-init: answers the compile phase, then either never
 * answers ("hang") or announces a stdout frame over the cap ("flood"). It
 * stands for a compromised inside; the host must hold on its own. */
static const char fake_init_src[] =
	"#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n#include <fcntl.h>\n"
	"int main(void){char j[4096]={0};int fd=open(\"/box/job\",O_RDONLY);"
	"if(fd<0||read(fd,j,sizeof j-1)<0)return 1;"
	"const char*c=\"phase:compile\\nstatus:OK\\n\";"
	"printf(\"stdout 0\\nstderr 0\\nresult %zu\\n%s\",strlen(c),c);fflush(stdout);"
	"char b[256];if(read(0,b,sizeof b)<0)return 1;"
	"if(strstr(j,\"run_arg:flood\")){printf(\"stdout 100000\\n\");fflush(stdout);"
	"for(;;)fwrite(j,1,sizeof j,stdout);}"
	"for(;;)pause();}\n";

static bool build_fake_init(char *out, size_t outsz)
{
	char dir[160], src[200];
	snprintf(dir, sizeof(dir), "/var/tmp/gavel-test-%d-fake", (int)getpid());
	snprintf(src, sizeof(src), "%s/init.c", dir);
	snprintf(out, outsz, "%s/init", dir);
	mkdir(dir, 0755);
	FILE *f = fopen(src, "w");
	if (!f)
		return false;
	fputs(fake_init_src, f);
	fclose(f);
	const char *const argv[] = { "/usr/bin/gcc", "-static", "-O1", "-o", out, src, NULL };
	return test_run(argv) == 0 && chmod(out, 0755) == 0;
}

static void remove_fake_init(const char *bin)
{
	char dir[160], src[200];
	snprintf(dir, sizeof(dir), "/var/tmp/gavel-test-%d-fake", (int)getpid());
	snprintf(src, sizeof(src), "%s/init.c", dir);
	unlink(bin);
	unlink(src);
	rmdir(dir);
}

static void hostile_init(const char *mode, struct exec_phase_result *r, struct gv_err *err,
			 int *rc, double *ms)
{
	char bin[256];
	if (!build_fake_init(bin, sizeof(bin)))
		fail_msg("cannot build the fake init with gcc -static");
	struct exec_engine_config cfg = g.cfg;
	cfg.init_path = bin;
	struct exec_engine e2;
	if (exec_engine_init(&e2, &cfg, err) != 0)
		fail_msg("engine: %s", err->msg);
	const char *const argv[] = {mode, NULL};
	struct exec_job job = {
		.tenant = "tenant-h",
		.run_argv = argv,
		.run_limits = {.cpu_ms = 500, .wall_ms = 1000, .memory_kb = 65536, .output_bytes = 65536},
	};
	struct exec_session *s = NULL;
	struct exec_phase_result c;
	if (exec_session_open(&e2, &job, &s, &c, err) != 0)
		fail_msg("open: %s", err->msg);
	exec_phase_result_free(&c);
	double t = test_now_ms();
	*rc = exec_session_run_test(s, "x", 1, r, err);
	*ms = test_now_ms() - t;
	assert_false(exec_session_alive(s));
	char cg[256];
	snprintf(cg, sizeof(cg), "%s", exec_session_cgroup(s));
	exec_session_close(s);
	exec_engine_drain(&e2);
	unsigned n = 0;
	struct gv_err e;
	assert_int_equal(exec_runsc_list(&e2.runsc, count_id, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_false(cgroup_exists("memory", cg));
	exec_engine_fini(&e2);
	remove_fake_init(bin);
}

static void session__silent_init__host_wall_backstop(void **state)
{
	(void)state;
	require_ready();
	struct exec_phase_result r;
	struct gv_err err;
	int rc;
	double ms;
	hostile_init("hang", &r, &err, &rc, &ms);
	fprintf(stderr, "# host backstop fired after %.0f ms\n", ms);
	assert_int_equal(rc, 0);
	assert_string_equal(r.status, "WLE");
	assert_string_equal(r.limit, "wall");
	assert_true(ms >= 1000 && ms < 1000 + 5000 + 2000);
	exec_phase_result_free(&r);
}

static void session__oversized_frame__protocol_error(void **state)
{
	(void)state;
	require_ready();
	struct exec_phase_result r;
	struct gv_err err;
	int rc;
	double ms;
	hostile_init("flood", &r, &err, &rc, &ms);
	assert_int_equal(rc, -1);
	assert_int_equal(err.code, GV_EPROTO);
	assert_string_equal(r.status, "IE");
	assert_null(r.out); /* nothing allocated for the refused frame */
	exec_phase_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(session__hello_world__ok, test_teardown),
		cmocka_unit_test_teardown(session__cpu_spin__tle, test_teardown),
		cmocka_unit_test_teardown(session__sleep__tle_idle, test_teardown),
		cmocka_unit_test_teardown(session__memory_bomb__mle, test_teardown),
		cmocka_unit_test_teardown(session__exit_3__re, test_teardown),
		cmocka_unit_test_teardown(session__test_files_and_feedback__bounded_and_wiped, test_teardown),
		cmocka_unit_test_teardown(session__hundred_tests__one_session, test_teardown),
		cmocka_unit_test_teardown(session__leftover_processes__gone_before_next_test, test_teardown),
		cmocka_unit_test_teardown(session__interactive__relays_both_ways, test_teardown),
		cmocka_unit_test_teardown(session__interactive__stalled_submission_ends_on_its_wall, test_teardown),
		cmocka_unit_test_teardown(session__whole_sandbox_oom__mle_then_dead, test_teardown),
		cmocka_unit_test_teardown(session__program__holds_no_capability, test_teardown),
		cmocka_unit_test_teardown(session__host_uid__own_per_sandbox, test_teardown),
		cmocka_unit_test_teardown(session__close__leaves_nothing, test_teardown),
		cmocka_unit_test_teardown(engine__init__sweeps_stale_sandbox, test_teardown),
		cmocka_unit_test_teardown(session__bad_job__refused_before_anything_runs, test_teardown),
		cmocka_unit_test_teardown(session__silent_init__host_wall_backstop, test_teardown),
		cmocka_unit_test_teardown(session__oversized_frame__protocol_error, test_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
