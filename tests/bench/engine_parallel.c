/* The baseline of the service throughput figure (tests/bench/bench_service.sh):
 * how many jobs per second the sandbox engine alone sustains at a given
 * concurrency. PROCS processes, each with its own engine (as each executor
 * worker has), run JOBS jobs between them through exec_inline_run, the same
 * call the executor makes for a job, with no Redis, PostgreSQL or HTTP.
 * `gavel run` cannot serve as this baseline: it serialises on one lock.
 *
 *   engine_parallel INIT LANGUAGES_DIR PROCS JOBS REQUEST_JSON
 *
 * Prints "jobs N procs P wall_ms W jobs_per_s R". Needs root and runsc. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/jobspec.h"
#include "executor/judge/judge_inline.h"
#include "executor/sandbox/pool.h"
#include "executor/sandbox/session.h"
#include "languages/lang.h"

/* State under /run/gavel/<tag>/w<k> and /var/tmp/gavel-<tag>/w<k>, cgroups
 * under gavel-<tag>/w<k>, with tag from BENCH_PAR_TAG (default
 * bench-par-<pid>): each engine sweeps its roots at start, so two runs at
 * once must not share them. */
static char tag[128];

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void mkdirs(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0700);
			*p = '/';
		}
	mkdir(buf, 0700);
}

static int child(int k, const char *init, const char *langdir, int jobs, const char *req)
{
	char rroot[512], wroot[512], cg[512];
	snprintf(rroot, sizeof(rroot), "/run/gavel/%s/w%d", tag, k);
	snprintf(wroot, sizeof(wroot), "/var/tmp/gavel-%s/w%d", tag, k);
	snprintf(cg, sizeof(cg), "gavel-%s/w%d", tag, k);
	mkdirs(rroot);
	mkdirs(wroot);
	struct gv_err err;
	struct lang_registry langs;
	if (lang_registry_load(&langs, langdir, &err) != 0) {
		fprintf(stderr, "engine_parallel: %s\n", err.msg);
		return 1;
	}
	struct gv_jobspec spec;
	if (gv_jobspec_parse(req, strlen(req), &spec, &err) != 0) {
		fprintf(stderr, "engine_parallel: request: %s\n", err.msg);
		return 1;
	}
	const struct lang_def *lang = lang_find(&langs, spec.language);
	if (!lang) {
		fprintf(stderr, "engine_parallel: no language %s\n", spec.language);
		return 1;
	}
	struct exec_engine e;
	struct exec_engine_config ec = {
		.runsc_path = "/usr/bin/runsc",
		.runsc_root = rroot,
		.work_root = wroot,
		.init_path = init,
		.cgroup_parent = cg,
	};
	if (exec_engine_init(&e, &ec, &err) != 0) {
		fprintf(stderr, "engine_parallel: engine: %s\n", err.msg);
		return 1;
	}
	/* BENCH_PAR_POOL=N: each engine keeps N sandboxes created ahead, as an
	 * executor worker does (executor.pool_size); to see what the pool
	 * costs or saves at this concurrency. */
	struct exec_pool pool;
	const char *ps = getenv("BENCH_PAR_POOL");
	struct exec_pool_config pc = { .size = ps ? (unsigned)atoi(ps) : 0 };
	if (exec_pool_attach(&pool, &e, &pc, &err) != 0) {
		fprintf(stderr, "engine_parallel: pool: %s\n", err.msg);
		return 1;
	}
	int bad = 0;
	for (int i = 0; i < jobs; i++) {
		struct exec_inline_summary sum;
		memset(&sum, 0, sizeof(sum));
		struct exec_inline_opts o = { .tenant = "bench", .node = "bench" };
		json_t *r = exec_inline_run(&e, lang, &spec, &o, &sum, &err);
		if (!r || strcmp(sum.verdict, "AC") != 0) {
			fprintf(stderr, "engine_parallel: job %d: %s %s\n", i, sum.verdict, r ? "" : err.msg);
			bad = 1;
		}
		json_decref(r);
	}
	exec_pool_detach(&pool);
	exec_engine_fini(&e);
	gv_jobspec_free(&spec);
	lang_registry_free(&langs);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: engine_parallel INIT LANGUAGES_DIR PROCS JOBS REQUEST_JSON\n");
		return 2;
	}
	int procs = atoi(argv[3]), jobs = atoi(argv[4]);
	if (procs < 1 || procs > 64 || jobs < procs) {
		fprintf(stderr, "engine_parallel: PROCS 1..64, JOBS >= PROCS\n");
		return 2;
	}
	const char *t = getenv("BENCH_PAR_TAG");
	if (t && *t && strlen(t) < 64 && strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(t))
		snprintf(tag, sizeof(tag), "%s", t);
	else
		snprintf(tag, sizeof(tag), "bench-par-%d", (int)getpid());
	pid_t pids[64];
	double t0 = now_ms();
	for (int k = 0; k < procs; k++) {
		int mine = jobs / procs + (k < jobs % procs);
		pids[k] = fork();
		if (pids[k] == 0)
			_exit(child(k, argv[1], argv[2], mine, argv[5]));
		if (pids[k] < 0) {
			perror("fork");
			return 1;
		}
	}
	int failed = 0;
	for (int k = 0; k < procs; k++) {
		int st;
		if (waitpid(pids[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
	}
	double wall = now_ms() - t0;
	/* The workers' CPU with every sandbox and runsc call they reaped. */
	struct rusage ru;
	double cpu_ms = 0;
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
		cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	/* The rate stays the last field (bench_service.sh reads it there). */
	printf("jobs %d procs %d wall_ms %.0f cpu_ms_per_job %.0f jobs_per_s %.3f\n", jobs, procs, wall,
	       cpu_ms / jobs, jobs / (wall / 1e3));
	return failed;
}
