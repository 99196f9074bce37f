/* CPU time under load: the reported CPU time and verdict of a CPU-bound C
 * program (calibrated to ~0.7 s bare on this host, limit 1 s) run alone and
 * under 3x oversubscription of the node's cores (3 x ncores such runs at
 * once, each in its own engine and sandbox, as executor workers and CLI
 * runs are), as a ratio of the loaded figure to the quiet one measured in
 * the same run. Three modes, run in turn:
 *
 *  - slots: the engine as deployed: a test runs only while it holds one
 *    of ncores CPU slots (executor/sandbox/cpuslot.h), with the host-side
 *    accounting below;
 *  - host: without the slots, the host-side accounting of
 *    executor/sandbox/cputime.h alone (time_ms = min(init's figure, the sandbox
 *    cgroup's CPU over the test); TLE decided by the host against the
 *    real limit);
 *  - guest: exec_engine_config.guest_cpu_time, init's figure alone (what
 *    the engine did before), the baseline the accounting is measured
 *    against.
 *
 * For each it prints the quiet median, the loaded median / min / max and
 * their ratios to the quiet median, the verdicts, and for the host mode
 * the guest and host figures behind time_ms. Then what the accounting
 * costs elsewhere, host mode against guest mode, alternated:
 *  - per test, a trivial C program (30 tests in one session, median of
 *    per-test wall time over 3 sessions per mode);
 *  - submit to verdict: open (compile) + one test + close of the same;
 *  - a program that spins forever under the 1 s limit: wall time to its
 *    TLE and the CPU it burned (host mode: the host kills the sandbox at
 *    limit + margin; guest mode: init kills the program at the limit);
 *  - the sandbox's CPU per second of wall time while its program sleeps
 *    and while it sits between tests, and the cost of one cgroup read.
 *
 * Usage: bench_cpu_load [-q] [-c] (-q: fewer runs; -c: the costs only). Needs root and runsc;
 * GAVEL_INIT names gavel-init (make bench sets it). State under
 * /run/gavel/<tag>-<k> and cgroups under gavel-<tag>-<k>, tag from
 * GAVEL_BENCH_TAG (default "cpuload"). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executor/sandbox/cpuslot.h"
#include "executor/sandbox/session.h"

#define MAXP 64

static char tag[64] = "cpuload";
static const char *init_path;
static char spin_src[512];
static int reps = 5;

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

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *const spin_fmt =
	"#include <stdio.h>\n"
	"int main(void){volatile unsigned long x=0; for(unsigned long i=0;i<%luUL;i++) x+=i*i;"
	"printf(\"%%lu\\n\",(unsigned long)x);return 0;}\n";
static const char *const forever_c = "int main(void){volatile unsigned long x=0; for(;;) x++;}\n";
static const char *const trivial_c = "int main(void){return 0;}\n";

static const char *const gcc_argv[] = { "/usr/bin/gcc", "-std=gnu17", "-O2", "-static", "-o", "main", "main.c", NULL };
static const char *const main_argv[] = { "./main", NULL };

static struct exec_job c_job(const struct exec_file *src)
{
	struct exec_job job = {
		.tenant = "bench",
		.compile_argv = gcc_argv,
		.run_argv = main_argv,
		.files = src,
		.n_files = 1,
		.compile_limits = { .cpu_ms = 20000, .wall_ms = 60000, .memory_kb = 1024 * 1024, .procs = 16 },
		/* A 1 s problem. The wall limit is 10 s rather than 3 x time +
		 * 2 s: on a machine shared with other work the loaded set is
		 * oversubscribed well past 3x, and a wall-limit kill would cut
		 * the CPU figure this measures short (such runs are counted
		 * apart, as "other"). */
		.run_limits = { .cpu_ms = 1000, .wall_ms = 10000, .memory_kb = 256 * 1024,
				.output_bytes = 1 << 20, .procs = 1, .rlimit_as = true },
	};
	return job;
}

/* An engine of its own for slot k (its own runsc root, work root and
 * cgroup parent: each engine sweeps them at start). */
enum mode { M_SLOTS, M_HOST, M_GUEST };
static const char *const mode_names[] = { "slots", "host", "guest" };

static void engine_up(struct exec_engine *e, int k, enum mode mode)
{
	/* Borrowed by the engine for its lifetime: never freed here. */
	char *rroot = malloc(128), *wroot = malloc(128), *cg = malloc(128);
	if (!rroot || !wroot || !cg)
		die("malloc", NULL);
	snprintf(rroot, 128, "/run/gavel/%s-%d/runsc", tag, k);
	snprintf(wroot, 128, "/run/gavel/%s-%d/work", tag, k);
	snprintf(cg, 128, "gavel-%s-%d", tag, k);
	struct exec_engine_config ec = {
		.runsc_path = "/usr/bin/runsc",
		.runsc_root = rroot,
		.work_root = wroot,
		.init_path = init_path,
		.cgroup_parent = cg,
		.guest_cpu_time = mode == M_GUEST,
		.cpu_slots = mode == M_SLOTS ? exec_cpuslot_count() : 0,
	};
	struct gv_err err;
	if (exec_engine_init(e, &ec, &err) != 0)
		die("engine", &err);
}

/* Removes what slot k's engine leaves once finished: its (empty) cgroup
 * parent in every hierarchy, its runsc and work roots and their folder.
 * rmdir only: whatever is not empty stays, to be looked at. */
static void slot_remove(int k)
{
	char p[512];
	DIR *d = opendir("/sys/fs/cgroup");
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/gavel-%s-%d/bench", de->d_name, tag, k);
		rmdir(p);
		snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/gavel-%s-%d", de->d_name, tag, k);
		rmdir(p);
	}
	if (d)
		closedir(d);
	static const char *const sub[] = { "runsc", "work", "" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "/run/gavel/%s-%d/%s", tag, k, sub[i]);
		rmdir(p);
	}
}

/* One worker: compile the spin program, say ready on ready_fd, wait for a
 * byte on go_fd (-1: at once), run reps tests, write one line per test to
 * out_fd: "status time guest host". */
static int worker(int k, enum mode mode, int ready_fd, int go_fd, int out_fd)
{
	struct exec_engine e;
	engine_up(&e, k, mode);
	struct exec_file src = { "main.c", spin_src, strlen(spin_src), false };
	struct exec_job job = c_job(&src);
	struct gv_err err;
	struct exec_session *s = NULL;
	struct exec_phase_result r;
	if (exec_session_open(&e, &job, &s, &r, &err) != 0)
		die("session open", &err);
	if (strcmp(r.status, "OK") != 0)
		die("compile", NULL);
	exec_phase_result_free(&r);
	char c = 'r';
	if (ready_fd >= 0 && write(ready_fd, &c, 1) != 1)
		die("ready", NULL);
	if (go_fd >= 0 && read(go_fd, &c, 1) != 1)
		die("go", NULL);
	for (int i = 0; i < reps; i++) {
		char line[160];
		if (exec_session_run_test(s, "", 0, &r, &err) != 0)
			snprintf(line, sizeof(line), "IE 0 0 0\n");
		else
			/* A TLE of init's idle rule (limit wall, PROTOCOL.md) is
			 * told apart: "TLEi". */
			snprintf(line, sizeof(line), "%s%s %llu %llu %llu\n", r.status,
				 !strcmp(r.status, "TLE") && !strcmp(r.limit, "wall") ? "i" : "", (unsigned long long)r.time_ms,
				 (unsigned long long)r.guest_time_ms, (unsigned long long)r.host_cpu_us);
		exec_phase_result_free(&r);
		/* One short line: a single atomic write to the shared pipe. */
		if (write(out_fd, line, strlen(line)) < 0)
			die("out", NULL);
		/* The host's CPU kill ends the sandbox: the next test gets a
		 * fresh one, as the judge does. */
		if (!exec_session_alive(s) && i + 1 < reps) {
			exec_session_close(s);
			s = NULL;
			if (exec_session_open(&e, &job, &s, &r, &err) != 0)
				die("session reopen", &err);
			exec_phase_result_free(&r);
		}
	}
	exec_session_close(s);
	exec_engine_fini(&e);
	slot_remove(k);
	return 0;
}

struct figures {
	double time[MAXP * 16], guest[MAXP * 16], host[MAXP * 16];
	int n, ac, tle, tle_idle, other;
};

/* Runs procs workers at once (their tests start together, after every
 * compile) and collects their lines. */
static void run_set(int procs, enum mode mode, struct figures *f)
{
	int ready[2], go[2], out[2];
	if (pipe(ready) || pipe(go) || pipe(out))
		die("pipe", NULL);
	pid_t pids[MAXP];
	for (int k = 0; k < procs; k++) {
		pids[k] = fork();
		if (pids[k] < 0)
			die("fork", NULL);
		if (pids[k] == 0) {
			close(ready[0]);
			close(go[1]);
			close(out[0]);
			_exit(worker(k, mode, ready[1], go[0], out[1]));
		}
	}
	close(ready[1]);
	close(go[0]);
	close(out[1]);
	char c;
	for (int k = 0; k < procs; k++)
		if (read(ready[0], &c, 1) != 1)
			die("a worker failed before its tests", NULL);
	for (int k = 0; k < procs; k++)
		if (write(go[1], "g", 1) != 1)
			die("go", NULL);
	close(go[1]);
	FILE *in = fdopen(out[0], "r");
	char st[16];
	unsigned long long t, g, h;
	memset(f, 0, sizeof(*f));
	while (in && fscanf(in, "%15s %llu %llu %llu", st, &t, &g, &h) == 4 && f->n < MAXP * 16) {
		/* Figures of runs that ended on their own or on the CPU limit
		 * only: a wall-limit kill (WLE) cuts the program short. */
		if (!strcmp(st, "TLEi")) {
			fprintf(stderr, "bench: a run ended TLE by init's idle rule (init %llu ms, host %llu us)\n", g, h);
			f->tle_idle++;
		}
		if (strcmp(st, "OK") != 0 && strcmp(st, "TLE") != 0) {
			fprintf(stderr, "bench: a run ended %s (time %llu ms, init %llu ms, host %llu us)\n", st, t, g, h);
			f->other++;
			continue;
		}
		f->time[f->n] = (double)t;
		f->guest[f->n] = (double)g;
		f->host[f->n] = (double)h / 1e3;
		f->n++;
		if (!strcmp(st, "OK"))
			f->ac++;
		else
			f->tle++;
	}
	if (in)
		fclose(in);
	close(ready[0]);
	for (int k = 0; k < procs; k++) {
		int stt;
		if (waitpid(pids[k], &stt, 0) < 0 || !WIFEXITED(stt) || WEXITSTATUS(stt) != 0)
			die("worker failed", NULL);
	}
}

static void spread(const double *v, int n, double *mn, double *mx)
{
	*mn = *mx = n ? v[0] : 0;
	for (int i = 1; i < n; i++) {
		if (v[i] < *mn)
			*mn = v[i];
		if (v[i] > *mx)
			*mx = v[i];
	}
}

static double loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* Runs the spin program bare on the host: its CPU seconds. */
static double bare_cpu_s(const char *exe)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, 1);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("bare run", NULL);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Picks the loop count that makes ~0.7 s of CPU bare on this host. */
static void calibrate(void)
{
	char dir[] = "/tmp/gv-cpuload.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", NULL);
	char src[128], exe[128];
	snprintf(src, sizeof(src), "%s/spin.c", dir);
	snprintf(exe, sizeof(exe), "%s/spin", dir);
	unsigned long n = 400000000UL;
	double best = 0;
	for (int round = 0; round < 2; round++) {
		FILE *f = fopen(src, "w");
		if (!f)
			die(src, NULL);
		fprintf(f, spin_fmt, n);
		fclose(f);
		pid_t pid = fork();
		if (pid == 0) {
			execl("/usr/bin/gcc", "gcc", "-std=gnu17", "-O2", "-static", "-o", exe, src, (char *)NULL);
			_exit(127);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("gcc", NULL);
		/* The least of three: the host is shared, the least is the
		 * program's own need. */
		best = 1e9;
		for (int i = 0; i < 3; i++) {
			double c = bare_cpu_s(exe);
			if (c < best)
				best = c;
		}
		if (round == 0)
			n = (unsigned long)((double)n * 0.70 / best);
	}
	snprintf(spin_src, sizeof(spin_src), spin_fmt, n);
	printf("spin program: %lu iterations, %.0f ms of CPU bare (least of 3)\n", n, best * 1e3);
	unlink(src);
	unlink(exe);
	rmdir(dir);
}

static void report_mode(const char *name, const struct figures *q, const struct figures *l, int procs)
{
	double qt[MAXP * 16], lt[MAXP * 16];
	memcpy(qt, q->time, sizeof(double) * (size_t)q->n);
	memcpy(lt, l->time, sizeof(double) * (size_t)l->n);
	double qm = median(qt, q->n), lm = median(lt, l->n), mn, mx;
	spread(l->time, l->n, &mn, &mx);
	printf("%-6s quiet: time_ms median %.0f over %d runs (AC %d TLE %d other %d)\n", name, qm, q->n, q->ac,
	       q->tle, q->other);
	printf("%-6s loaded (%d runs at once): time_ms median %.0f min %.0f max %.0f; ratio to quiet %.2f "
	       "(min %.2f max %.2f); AC %d TLE %d other %d\n",
	       name, procs, lm, mn, mx, qm > 0 ? lm / qm : 0, qm > 0 ? mn / qm : 0, qm > 0 ? mx / qm : 0,
	       l->ac, l->tle, l->other);
	if (q->tle_idle || l->tle_idle)
		printf("%-6s of the \"other\": TLE by init's idle rule: quiet %d, loaded %d\n", name, q->tle_idle,
		       l->tle_idle);
}

static void report_sources(const struct figures *q, const struct figures *l)
{
	double a[MAXP * 16], gm[2] = { 0, 0 };
	const struct figures *sets[2] = { q, l };
	const char *names[2] = { "quiet", "loaded" };
	for (int i = 0; i < 2; i++) {
		const struct figures *f = sets[i];
		memcpy(a, f->guest, sizeof(double) * (size_t)f->n);
		double g = median(a, f->n);
		memcpy(a, f->host, sizeof(double) * (size_t)f->n);
		double h = median(a, f->n);
		double d[MAXP * 16];
		for (int k = 0; k < f->n; k++)
			d[k] = f->host[k] - f->guest[k];
		double dm = median(d, f->n);
		gm[i] = g;
		printf("host   %s: init's figure median %.0f ms, sandbox cgroup %.1f ms (cgroup - init: median %.1f ms)\n",
		       names[i], g, h, dm);
	}
	/* init's figure is not cut at the limit in host mode (init's CPU
	 * limit is the wall limit there): the uncensored before/after. */
	printf("host   init's figure alone (what was reported before), loaded / quiet: %.2f\n",
	       gm[0] > 0 ? gm[1] / gm[0] : 0);
}

/* Cost figures: one session of n tests of src; per-test wall (ms). */
static double per_test(struct exec_engine *e, const char *src, int n, double *open_to_verdict)
{
	struct exec_file f = { "main.c", src, strlen(src), false };
	struct exec_job job = c_job(&f);
	struct gv_err err;
	struct exec_session *s = NULL;
	struct exec_phase_result r;
	double t0 = now_ms();
	if (exec_session_open(e, &job, &s, &r, &err) != 0 || strcmp(r.status, "OK") != 0)
		die("open", &err);
	exec_phase_result_free(&r);
	double t1 = now_ms();
	double v[64], hv[64];
	for (int i = 0; i < n && i < 64; i++) {
		double a = now_ms();
		if (exec_session_run_test(s, "", 0, &r, &err) != 0 || strcmp(r.status, "OK") != 0)
			die("trivial test", &err);
		hv[i] = (double)r.host_cpu_us / 1e3;
		exec_phase_result_free(&r);
		v[i] = now_ms() - a;
		if (i == 0 && open_to_verdict)
			*open_to_verdict = now_ms() - t0;
	}
	(void)t1;
	if (!e->cfg.guest_cpu_time) {
		double mn, mx;
		spread(hv, n, &mn, &mx);
		printf("  sandbox CPU per trivial test (the accounting's overhead over the program): median %.1f ms, "
		       "min %.1f, max %.1f\n",
		       median(hv, n), mn, mx);
	}
	exec_session_close(s);
	exec_engine_poll(e);
	return median(v, n);
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && !strcmp(argv[1], "-q");
	/* -c: only the cost figures. */
	bool cost_only = argc > 1 && !strcmp(argv[argc - 1], "-c");
	if (quick)
		reps = 3;
	init_path = getenv("GAVEL_INIT");
	if (!init_path || !*init_path)
		init_path = "build/gavel-init";
	static char init_abs[4096];
	if (!realpath(init_path, init_abs))
		die(init_path, NULL);
	init_path = init_abs;
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *t = getenv("GAVEL_BENCH_TAG");
	if (t && *t && strlen(t) < 40 &&
	    strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(t))
		snprintf(tag, sizeof(tag), "%s", t);
	mkdir("/run/gavel", 0700);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int procs = (int)(3 * (ncpu > 0 ? ncpu : 1));
	if (procs > MAXP)
		procs = MAXP;
	printf("== CPU time under load (%ld cores, %d runs at once; load average %.2f at start) ==\n", ncpu, procs,
	       loadavg());
	calibrate();

	/* Quiet before and after the loaded set, so that the load's drift
	 * over the run is seen in the baseline too. */
	static struct figures q1, q2, q, ld;
	for (int m = 0; m < 3 && !cost_only; m++) {
		enum mode mode = (enum mode)m;
		const char *name = mode_names[m];
		run_set(1, mode, &q1);
		double la = loadavg();
		double t0 = now_ms();
		run_set(procs, mode, &ld);
		double loaded_wall = now_ms() - t0;
		run_set(1, mode, &q2);
		q = q1;
		for (int i = 0; i < q2.n && q.n < MAXP * 16; i++) {
			q.time[q.n] = q2.time[i];
			q.guest[q.n] = q2.guest[i];
			q.host[q.n] = q2.host[i];
			q.n++;
		}
		q.ac += q2.ac, q.tle += q2.tle, q.other += q2.other, q.tle_idle += q2.tle_idle;
		printf("(%s mode: load average %.2f before the loaded set; the loaded set took %.1f s of wall time)\n",
		       name, la, loaded_wall / 1e3);
		report_mode(name, &q, &ld, procs);
		if (mode != M_GUEST)
			report_sources(&q, &ld);
	}

	/* What it costs elsewhere: host mode against guest mode, alternated. */
	printf("== cost of the slots and the host-side accounting (as deployed, \"host\" below / before them, \"guest\") ==\n");
	struct exec_engine eh, eg;
	engine_up(&eh, 90, M_SLOTS);
	engine_up(&eg, 91, M_GUEST);
	int sessions = quick ? 2 : 3;
	double pt[2][8], sv[2][8];
	for (int i = 0; i < sessions; i++) {
		pt[0][i] = per_test(&eh, trivial_c, 30, &sv[0][i]);
		pt[1][i] = per_test(&eg, trivial_c, 30, &sv[1][i]);
	}
	double pth = median(pt[0], sessions), ptg = median(pt[1], sessions);
	double svh = median(sv[0], sessions), svg = median(sv[1], sessions);
	printf("per test (trivial C, median): host %.2f ms, guest %.2f ms: ratio %.3f\n", pth, ptg, pth / ptg);
	printf("submit to verdict (open + compile + 1 test, median): host %.0f ms, guest %.0f ms: ratio %.3f\n", svh,
	       svg, svh / svg);
	struct exec_engine *es[2] = { &eh, &eg };
	for (int m = 0; m < 2; m++) {
		struct exec_file f = { "main.c", forever_c, strlen(forever_c), false };
		struct exec_job job = c_job(&f);
		struct gv_err err;
		struct exec_session *s = NULL;
		struct exec_phase_result r;
		if (exec_session_open(es[m], &job, &s, &r, &err) != 0 || strcmp(r.status, "OK") != 0)
			die("open", &err);
		exec_phase_result_free(&r);
		double a = now_ms();
		if (exec_session_run_test(s, "", 0, &r, &err) != 0)
			die("spin test", &err);
		double w = now_ms() - a;
		printf("spin forever, 1 s limit, %s mode: %s time_ms %llu, wall to verdict %.0f ms, init's figure %llu ms, "
		       "sandbox CPU %.0f ms\n",
		       m ? "guest" : "host", r.status, (unsigned long long)r.time_ms, w,
		       (unsigned long long)r.guest_time_ms, (double)r.host_cpu_us / 1e3);
		exec_phase_result_free(&r);
		exec_session_close(s);
	}
	/* What the sandbox burns while its program does nothing: init's
	 * sampling of the program (every few ms) and the Sentry serving it,
	 * per second of wall time. Under load a program's wall time grows,
	 * and this with it: the part of the host figure that grows. */
	{
		static const char sleep_c[] = "#include <unistd.h>\nint main(void){usleep(2000000);return 0;}\n";
		struct exec_file f = { "main.c", sleep_c, strlen(sleep_c), false };
		struct exec_job job = c_job(&f);
		struct gv_err err;
		struct exec_session *s = NULL;
		struct exec_phase_result r;
		if (exec_session_open(&eh, &job, &s, &r, &err) != 0 || strcmp(r.status, "OK") != 0)
			die("open", &err);
		exec_phase_result_free(&r);
		if (exec_session_run_test(s, "", 0, &r, &err) != 0)
			die("sleep test", &err);
		printf("sleep 2 s (init's idle rule ends it at ~1 s): %s, sandbox CPU %.1f ms over %llu ms of wall: %.1f ms of CPU per second idle\n",
		       r.status, (double)r.host_cpu_us / 1e3, (unsigned long long)r.wall_ms,
		       r.wall_ms ? (double)r.host_cpu_us / (double)r.wall_ms : 0);
		exec_phase_result_free(&r);
		exec_session_close(s);
	}
	/* The accounting's own cost per read of the cgroup (2 per test, plus
	 * one per wake-up while a test runs). */
	{
		struct exec_file f = { "main.c", trivial_c, strlen(trivial_c), false };
		struct exec_job job = c_job(&f);
		struct gv_err err;
		struct exec_session *s = NULL;
		struct exec_phase_result r;
		if (exec_session_open(&eh, &job, &s, &r, &err) != 0)
			die("open", &err);
		exec_phase_result_free(&r);
		uint64_t v, v0;
		/* The same sandbox between tests (init blocked on its command
		 * pipe, nothing sampled): what gVisor costs by itself. */
		if (eh.cg.ops->cpu_usage(&eh.cg, exec_session_cgroup(s), &v0, &err) != 0)
			die("cpu_usage", &err);
		usleep(2000000);
		if (eh.cg.ops->cpu_usage(&eh.cg, exec_session_cgroup(s), &v, &err) != 0)
			die("cpu_usage", &err);
		printf("idle sandbox between tests: %.1f ms of CPU per second\n", (double)(v - v0) / 2e6);
		double a = now_ms();
		for (int i = 0; i < 1000; i++)
			if (eh.cg.ops->cpu_usage(&eh.cg, exec_session_cgroup(s), &v, &err) != 0)
				die("cpu_usage", &err);
		printf("one read of the sandbox cgroup's CPU time: %.1f us (mean of 1000)\n", (now_ms() - a));
		exec_session_close(s);
	}
	exec_engine_fini(&eh);
	exec_engine_fini(&eg);
	slot_remove(90);
	slot_remove(91);
	printf("load average at the end %.2f\n", loadavg());
	return 0;
}
