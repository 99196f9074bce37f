/* Engine benchmark: prints the figures of the sandbox engine, each as a
 * ratio against a baseline measured in the same run (the machines are
 * shared and noisy, so absolute times mean little):
 *
 *  1. per-test overhead inside one sandbox: (time of 100 tests - time of 1
 *     test) / 99 for a trivial program, against a fresh sandbox per test;
 *     for (a) `int main(void){return 0;}` compiled as languages/c.yaml does
 *     (glibc, static) and (b) a libc-free static program (its own _start,
 *     exit at once) run as a prebuilt job file, without a compile step. Each
 *     is split into the program's own run as gavel-init measures it (clone
 *     to reap, the record's wall_us) and the rest: the engine's per-test
 *     cost. (a) - (b) is glibc's start-up (README.md: CPUID under ptrace);
 *  2. the engine's fixed cost per submission (open, one run of /usr/bin/true,
 *     close) divided by a bare `runsc run` of /usr/bin/true with a bundle
 *     built by the same code; also with the background tear-down that
 *     close leaves to the engine counted in (throughput);
 *  3. reported CPU time of a ~1 s CPU-bound C program divided by the same
 *     binary's CPU time run bare on the host, with its spread over 10 runs;
 *  4. reported peak memory of a program touching 100 MB divided by bare.
 *
 * Needs root and runsc, like the engine. Usage: bench_engine [-q] (quick:
 * fewer repetitions). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executor/sandbox/bundle.h"
#include "executor/sandbox/session.h"

/* State under /run/gavel/<tag>, cgroups under gavel-<tag>: GAVEL_BENCH_TAG
 * (default "bench") keeps concurrent runs on one machine apart, since the
 * engine sweeps its own root and cgroup parent at start. */
static char root_dir[256], root_runsc[300], root_bare[300], root_work[300], cg_parent[128],
	cg_bare[160];

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, const struct gv_err *err)
{
	fprintf(stderr, "bench: %s: %s\n", what, err ? err->msg : strerror(errno));
	exit(1);
}

/* Runs argv on the host, waits, returns its rusage (trusted programs of
 * this benchmark only: the baselines). */
static int spawn_wait(const char *const *argv, int stdout_fd, struct rusage *ru)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		static char *const envp[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
		if (stdout_fd >= 0)
			dup2(stdout_fd, STDOUT_FILENO);
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	int status;
	struct rusage r;
	if (wait4(pid, &status, 0, &r) < 0)
		return -1;
	if (ru)
		*ru = r;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static const char *const trivial_c = "int main(void){return 0;}\n";
static const char *const spin_c =
	"#include <stdio.h>\n"
	"int main(void){volatile unsigned long x=0; for(unsigned long i=0;i<%luUL;i++) x+=i*i;"
	"printf(\"%%lu\\n\",(unsigned long)x);return 0;}\n";
static const char *const touch_c =
	"#include <stdlib.h>\n#include <stdio.h>\n"
	"int main(void){size_t n=100u<<20; volatile char *p=malloc(n); if(!p) return 1;"
	"for(size_t i=0;i<n;i+=4096) p[i]=(char)i; printf(\"%d\\n\",p[n-4096]);return 0;}\n";

/* As languages/c.yaml compiles (static: no dynamic loader in every test). */
static const char *const gcc_argv[] = { "/usr/bin/gcc", "-std=gnu17", "-O2", "-static", "-o", "main", "main.c", NULL };
static const char *const main_argv[] = { "./main", NULL };
static const char *const true_argv[] = { "/usr/bin/true", NULL };

static struct exec_job c_job(const struct exec_file *src)
{
	struct exec_job job = {
		.tenant = "bench",
		.compile_argv = gcc_argv,
		.run_argv = main_argv,
		.files = src,
		.n_files = 1,
		.compile_limits = { .cpu_ms = 20000, .wall_ms = 40000, .memory_kb = 1024 * 1024, .procs = 16 },
		.run_limits = { .cpu_ms = 10000, .wall_ms = 20000, .memory_kb = 512 * 1024,
				.output_bytes = 1 << 20, .procs = 1, .rlimit_as = true },
	};
	return job;
}

/* Sum of the wall times (ms, from the record's wall_us) gavel-init
 * reported for the tests of the last run_tests call: the program's own run
 * (clone to reap) inside, so that the per-test figure can be split into the
 * program and the rest. */
static double reported_wall_sum;

/* Opens a session, checks that compile worked, runs n tests; returns the
 * time of the n tests (ms) and the last result in *last. */
static double run_tests(struct exec_engine *e, const struct exec_job *job, int n,
			struct exec_phase_result *last)
{
	struct gv_err err;
	struct exec_session *s = NULL;
	struct exec_phase_result compile;
	if (exec_session_open(e, job, &s, &compile, &err) != 0)
		die("session open", &err);
	if (strcmp(compile.status, "OK") != 0) {
		fprintf(stderr, "bench: compile: %s %s\n", compile.status, compile.err_out ? compile.err_out : "");
		exit(1);
	}
	exec_phase_result_free(&compile);
	reported_wall_sum = 0;
	double t0 = now_ms();
	for (int i = 0; i < n; i++) {
		exec_phase_result_free(last);
		if (exec_session_run_test(s, "", 0, last, &err) != 0)
			die("run test", &err);
		if (strcmp(last->status, "OK") != 0) {
			fprintf(stderr, "bench: test %d: %s %s\n", i, last->status, last->message);
			exit(1);
		}
		reported_wall_sum += last->wall_us ? (double)last->wall_us / 1e3 : (double)last->wall_ms;
	}
	double t = now_ms() - t0;
	exec_session_close(s);
	return t;
}

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		die(path, NULL);
}

/* Reads a whole (small) file into a malloc'd buffer. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die(path, NULL);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	size_t k;
	while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf || ferror(f))
		die(path, NULL);
	fclose(f);
	*len = n;
	return buf;
}

/* The libc-free trivial program: its own _start makes exit_group(0), the
 * only system call; nothing runs before it (no libc start-up, no CPUID). */
static const char *const nolibc_c =
	"void _start(void){\n"
	"#if defined(__x86_64__)\n"
	"  __asm__ volatile(\"mov $231, %eax\\n xor %edi, %edi\\n syscall\");\n"
	"#elif defined(__aarch64__)\n"
	"  __asm__ volatile(\"mov x8, #94\\n mov x0, #0\\n svc #0\");\n"
	"#else\n"
	"#error no exit_group for this architecture\n"
	"#endif\n"
	"  for (;;) ;\n"
	"}\n";

/* Per-test figure of one job: median over reps of (100 tests - 1 test)/99,
 * and the program's own part (mean reported wall time per test). */
struct per_test {
	double per_test, t1, t100, prog;
};

static struct per_test measure_per_test(struct exec_engine *e, const struct exec_job *job, int reps,
					struct exec_phase_result *last)
{
	double t1s[3], t100s[3], prog_wall[3];
	for (int r = 0; r < reps; r++) {
		t1s[r] = run_tests(e, job, 1, last);
		t100s[r] = run_tests(e, job, 100, last);
		prog_wall[r] = reported_wall_sum / 100;
	}
	struct per_test pt = { .t1 = median(t1s, reps), .t100 = median(t100s, reps),
			       .prog = median(prog_wall, reps) };
	pt.per_test = (pt.t100 - pt.t1) / 99.0;
	return pt;
}

/* Bare `runsc run` of /usr/bin/true with a bundle built by the engine's
 * own bundle code (same mounts, same limits, same seccomp). */
static double bare_runsc_true(const char *init_path)
{
	struct gv_err err;
	char bdir[320];
	snprintf(bdir, sizeof(bdir), "%s/bare.XXXXXX", root_dir);
	if (!mkdtemp(bdir))
		die("mkdtemp", NULL);
	int bfd = open(bdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *binds[EXEC_BUNDLE_MAX_ETC_BINDS + 1];
	exec_bundle_default_etc_binds(binds);
	const char *usr_dirs[EXEC_BUNDLE_MAX_USR_DIRS + 1];
	exec_bundle_default_usr_dirs(usr_dirs);
	if (bfd < 0 || exec_bundle_write_skeleton(bfd, binds, usr_dirs, &err) != 0)
		die("bundle skeleton", &err);
	char etc[400], box[400];
	snprintf(etc, sizeof(etc), "%s/etc", bdir);
	snprintf(box, sizeof(box), "%s/box", bdir);
	mkdir(box, 0777);
	chmod(box, 01777);
	struct exec_bundle_params p = {
		.hostname = "gavel", .cgroups_path = cg_bare, .init_path = init_path,
		.etc_path = etc, .box_path = box, .memory_limit_bytes = 1ull << 30, .pids_limit = 4096,
		.cpu_quota_us = 100000, .cpu_period_us = 100000, .tmp_size_bytes = 64ull << 20,
		.nofile = 4096, .nproc = 4096, .fsize_bytes = 256ull << 20, .etc_binds = binds,
		.usr_dirs = usr_dirs, .seccomp = true,
	};
	json_t *cfg = exec_bundle_config(&p, &err);
	if (!cfg)
		die("bundle config", &err);
	json_t *args = json_pack("[s]", "/usr/bin/true");
	json_object_set_new(json_object_get(cfg, "process"), "args", args);
	if (exec_bundle_write_config(bfd, cfg, &err) != 0)
		die("bundle config write", &err);
	json_decref(cfg);
	close(bfd);
	int devnull = open("/dev/null", O_WRONLY);
	double best[7];
	for (int i = 0; i < 7; i++) {
		char id[64];
		snprintf(id, sizeof(id), "bench-bare-%d-%d", (int)getpid(), i);
		const char *argv[] = { "/usr/bin/runsc", "--root", root_bare, "--network=none",
				       "--oci-seccomp", "run", "--bundle", bdir, id, NULL };
		double t0 = now_ms();
		int rc = spawn_wait(argv, devnull, NULL);
		best[i] = now_ms() - t0;
		if (rc != 0) {
			fprintf(stderr, "bench: bare runsc run exited %d\n", rc);
			exit(1);
		}
	}
	close(devnull);
	return median(best, 7);
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "-q") == 0;
	const char *init = getenv("GAVEL_INIT");
	char init_path[4096];
	snprintf(init_path, sizeof(init_path), "%s", init && *init ? init : "build/gavel-init");
	char *abs = realpath(init_path, NULL);
	if (!abs)
		die(init_path, NULL);
	mkdir("/run/gavel", 0700);
	const char *tag = getenv("GAVEL_BENCH_TAG");
	if (!tag || !*tag)
		tag = "bench";
	snprintf(root_dir, sizeof(root_dir), "/run/gavel/%s", tag);
	snprintf(root_runsc, sizeof(root_runsc), "%s/runsc", root_dir);
	snprintf(root_bare, sizeof(root_bare), "%s/runsc-bare", root_dir);
	snprintf(root_work, sizeof(root_work), "%s/work", root_dir);
	snprintf(cg_parent, sizeof(cg_parent), "gavel-%s", tag);
	snprintf(cg_bare, sizeof(cg_bare), "/gavel-%s/bare", tag);
	mkdir(root_dir, 0700);
	mkdir(root_runsc, 0700);
	mkdir(root_bare, 0700);
	mkdir(root_work, 0700);
	/* GAVEL_BENCH_RUNSC: another runsc binary (or a wrapper that adds
	 * --debug --strace to look at what gavel-init does per test). */
	const char *runsc = getenv("GAVEL_BENCH_RUNSC");
	struct exec_engine_config cfg = {
		.runsc_path = runsc && *runsc ? runsc : "/usr/bin/runsc", .runsc_root = root_runsc, .work_root = root_work,
		.init_path = abs, .cgroup_parent = cg_parent,
	};
	struct exec_engine e;
	struct gv_err err;
	if (exec_engine_init(&e, &cfg, &err) != 0)
		die("engine", &err);

	/* 1. Per-test overhead inside one sandbox: (a) glibc, as c.yaml. */
	struct exec_file trivial = { .name = "main.c", .data = trivial_c, .len = strlen(trivial_c) };
	struct exec_job job = c_job(&trivial);
	struct exec_phase_result last = { 0 };
	int reps = quick ? 1 : 3;
	struct per_test pa = measure_per_test(&e, &job, reps, &last);

	/* (b) libc-free, built here and sent as an executable job file. */
	char ndir[] = "/tmp/gavel-bench-nolibc.XXXXXX";
	if (!mkdtemp(ndir))
		die("mkdtemp", NULL);
	char nsrc[256], nbin[256];
	snprintf(nsrc, sizeof(nsrc), "%s/nolibc.c", ndir);
	snprintf(nbin, sizeof(nbin), "%s/nolibc", ndir);
	write_file(nsrc, nolibc_c);
	const char *ncc[] = { "/usr/bin/gcc", "-O2", "-static", "-nostdlib", "-fno-stack-protector",
			      "-o", nbin, nsrc, NULL };
	if (spawn_wait(ncc, -1, NULL) != 0)
		die("gcc -nostdlib", NULL);
	size_t nlen = 0;
	char *nbytes = read_file(nbin, &nlen);
	struct exec_file nolibc = { .name = "main", .data = nbytes, .len = nlen, .executable = true };
	struct exec_job njob = c_job(&nolibc);
	njob.compile_argv = NULL;
	struct per_test pb = measure_per_test(&e, &njob, reps, &last);
	free(nbytes);
	unlink(nsrc);
	unlink(nbin);
	rmdir(ndir);

	/* 2. Fixed cost per submission vs a bare runsc run. */
	struct exec_job tjob = {
		.tenant = "bench", .run_argv = true_argv,
		.run_limits = { .cpu_ms = 2000, .wall_ms = 5000, .memory_kb = 256 * 1024, .procs = 4 },
	};
	double fixed[7];
	exec_engine_drain(&e);
	for (int i = 0; i < 7; i++) {
		double t0 = now_ms();
		struct exec_session *s = NULL;
		struct exec_phase_result c = { 0 }, r = { 0 };
		if (exec_session_open(&e, &tjob, &s, &c, &err) != 0 || exec_session_run_test(s, "", 0, &r, &err) != 0)
			die("fixed cost session", &err);
		exec_session_close(s);
		fixed[i] = now_ms() - t0;
		exec_phase_result_free(&c);
		exec_phase_result_free(&r);
	}
	double fixed_ms = median(fixed, 7);
	/* exec_session_close leaves the container's deletion and the
	 * removal of its cgroups and work dir to the engine, off the
	 * caller's path: count it in once here, as throughput. */
	double td = now_ms();
	exec_engine_drain(&e);
	double drain_ms = now_ms() - td, fixed_sum = 0;
	for (int i = 0; i < 7; i++)
		fixed_sum += fixed[i];
	double fixed_tput_ms = (fixed_sum + drain_ms) / 7;
	double bare_ms = bare_runsc_true(abs);

	/* 3. CPU time accuracy: the same binary, bare and sandboxed. */
	char dir[] = "/tmp/gavel-bench.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", NULL);
	char spin_src[1024], path_c[256], path_bin[256];
	/* Calibrated so the bare run takes about one second. */
	unsigned long iters = 400000000UL;
	snprintf(spin_src, sizeof(spin_src), spin_c, iters);
	snprintf(path_c, sizeof(path_c), "%s/spin.c", dir);
	snprintf(path_bin, sizeof(path_bin), "%s/spin", dir);
	write_file(path_c, spin_src);
	const char *cc[] = { "/usr/bin/gcc", "-std=gnu17", "-O2", "-o", path_bin, path_c, NULL };
	int devnull = open("/dev/null", O_WRONLY);
	if (spawn_wait(cc, -1, NULL) != 0)
		die("gcc spin", NULL);
	struct rusage ru;
	if (spawn_wait((const char *const[]){ path_bin, NULL }, devnull, &ru) != 0)
		die("bare spin", NULL);
	double bare_cpu = (double)ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
			  (double)ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
	iters = (unsigned long)((double)iters * 1000.0 / (bare_cpu > 1 ? bare_cpu : 1));
	snprintf(spin_src, sizeof(spin_src), spin_c, iters);
	write_file(path_c, spin_src);
	if (spawn_wait(cc, -1, NULL) != 0)
		die("gcc spin", NULL);
	int runs = quick ? 3 : 10;
	double ratios[10], bare_v[10], box_v[10];
	struct exec_file spin = { .name = "main.c", .data = spin_src, .len = strlen(spin_src) };
	struct exec_job sjob = c_job(&spin);
	for (int i = 0; i < runs; i++) {
		if (spawn_wait((const char *const[]){ path_bin, NULL }, devnull, &ru) != 0)
			die("bare spin", NULL);
		bare_v[i] = (double)ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
			    (double)ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
		run_tests(&e, &sjob, 1, &last);
		box_v[i] = (double)last.time_ms;
		ratios[i] = box_v[i] / bare_v[i];
	}
	double rmin = ratios[0], rmax = ratios[0], rsum = 0;
	for (int i = 0; i < runs; i++) {
		rmin = fmin(rmin, ratios[i]);
		rmax = fmax(rmax, ratios[i]);
		rsum += ratios[i];
	}
	double rmean = rsum / runs, rvar = 0;
	for (int i = 0; i < runs; i++)
		rvar += (ratios[i] - rmean) * (ratios[i] - rmean);
	double rsd = sqrt(rvar / runs);

	/* 4. Peak memory of a program touching 100 MB. */
	snprintf(path_c, sizeof(path_c), "%s/touch.c", dir);
	snprintf(path_bin, sizeof(path_bin), "%s/touch", dir);
	write_file(path_c, touch_c);
	const char *cc2[] = { "/usr/bin/gcc", "-std=gnu17", "-O2", "-o", path_bin, path_c, NULL };
	if (spawn_wait(cc2, -1, NULL) != 0 ||
	    spawn_wait((const char *const[]){ path_bin, NULL }, devnull, &ru) != 0)
		die("bare touch", NULL);
	double bare_kb = (double)ru.ru_maxrss;
	struct exec_file touch = { .name = "main.c", .data = touch_c, .len = strlen(touch_c) };
	struct exec_job mjob = c_job(&touch);
	run_tests(&e, &mjob, 1, &last);
	double box_kb = (double)last.memory_kb;
	close(devnull);

	printf("per-test overhead in one sandbox, C (glibc static, as c.yaml): %.2f ms (1 test %.1f ms, "
	       "100 tests %.1f ms); fresh sandbox per test (bare runsc run) %.1f ms: %.1fx less; "
	       "target <= 5 ms\n",
	       pa.per_test, pa.t1, pa.t100, bare_ms, bare_ms / (pa.per_test > 0.01 ? pa.per_test : 0.01));
	printf("  of which the program's own run as gavel-init measures it (clone to reap): %.2f ms; "
	       "the engine (protocol, wipe, kill check, host): %.2f ms\n",
	       pa.prog, pa.per_test - pa.prog);
	printf("per-test overhead in one sandbox, libc-free static program: %.2f ms (1 test %.1f ms, "
	       "100 tests %.1f ms); of which its own run: %.2f ms, the engine: %.2f ms\n",
	       pb.per_test, pb.t1, pb.t100, pb.prog, pb.per_test - pb.prog);
	printf("  glibc's own start-up (C - libc-free; CPUID traps under the ptrace platform, "
	       "README.md): %.2f ms per test\n",
	       pa.per_test - pb.per_test);
	printf("fixed cost per submission: %.1f ms vs bare runsc run of /usr/bin/true %.1f ms: ratio %.2f; "
	       "target <= 1.2 (with the background tear-down counted in: %.1f ms, ratio %.2f)\n",
	       fixed_ms, bare_ms, fixed_ms / bare_ms, fixed_tput_ms, fixed_tput_ms / bare_ms);
	printf("CPU time sandboxed/bare over %d runs of a ~1 s program: mean %.3f, min %.3f, max %.3f, "
	       "sd %.3f (bare %.0f ms, sandboxed %.0f ms); target 0.9-1.1\n",
	       runs, rmean, rmin, rmax, rsd, bare_v[0], box_v[0]);
	printf("peak memory of a 100 MB program sandboxed/bare: %.3f (%.0f KiB vs %.0f KiB); target 0.95-1.1\n",
	       box_kb / bare_kb, box_kb, bare_kb);
	exec_phase_result_free(&last);
	exec_engine_fini(&e);
	free(abs);
	return 0;
}
