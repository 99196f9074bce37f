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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/jobspec.h"
#include "executor/judge_inline.h"
#include "executor/session.h"
#include "languages/lang.h"

#define ROOT_RUN "/run/gavel/bench-par"
#define ROOT_WORK "/var/tmp/gavel-bench-par"

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
	char rroot[256], wroot[256], cg[128];
	snprintf(rroot, sizeof(rroot), ROOT_RUN "/w%d", k);
	snprintf(wroot, sizeof(wroot), ROOT_WORK "/w%d", k);
	snprintf(cg, sizeof(cg), "gavel-bench-par/w%d", k);
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
	printf("jobs %d procs %d wall_ms %.0f jobs_per_s %.3f\n", jobs, procs, wall, jobs / (wall / 1e3));
	return failed;
}
