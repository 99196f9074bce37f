/* Network benchmark: the start time of a sandbox granted egress (its own
 * network namespace, veth and ifb, nft table and tc shaping both ways,
 * executor/sandbox/netpolicy.h) divided by that of a sandbox without network,
 * measured alternately in the same run (the machines are shared and
 * noisy). "Start" is exec_session_open up to a started sandbox that has
 * run its (empty) compile phase; the tear-down of both is left to the
 * engine and finished between samples, so that it does not pollute the
 * next start. Also prints the tear-down time of each kind.
 *
 * Runs in a network namespace of its own (unshare), so nothing touches the
 * machine's network. Needs root, runsc, ip, tc and nft, like the engine.
 * Usage: bench_network [-q] (quick: fewer repetitions). GAVEL_INIT names
 * gavel-init (default build/gavel-init). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "executor/sandbox/session.h"
#include "tenants/egress.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 && strcmp(argv[1], "-q") == 0 ? 7 : 25;
	if (unshare(CLONE_NEWNET) != 0) {
		fprintf(stderr, "bench_network: unshare(CLONE_NEWNET): %s (needs root)\n", strerror(errno));
		return 1;
	}
	char init[4096];
	const char *ip = getenv("GAVEL_INIT");
	if (!realpath(ip && *ip ? ip : "build/gavel-init", init)) {
		fprintf(stderr, "bench_network: no gavel-init (set GAVEL_INIT)\n");
		return 1;
	}
	char runsc_root[128], work_root[128], parent[64];
	snprintf(runsc_root, sizeof(runsc_root), "/run/gavel-benchnet-%d", (int)getpid());
	snprintf(work_root, sizeof(work_root), "/var/tmp/gavel-benchnet-%d", (int)getpid());
	snprintf(parent, sizeof(parent), "gavel-benchnet-%d", (int)getpid());
	struct exec_engine_config cfg = {
		.runsc_path = "/usr/bin/runsc",
		.runsc_root = runsc_root,
		.work_root = work_root,
		.init_path = init,
		.cgroup_parent = parent,
		.net = {.prefix = "benchnet", .pool = 0x0ad5f000u, .slots = 64},
	};
	static struct exec_engine e;
	struct gv_err err;
	if (exec_engine_init(&e, &cfg, &err) != 0) {
		fprintf(stderr, "bench_network: engine: %s\n", err.msg);
		return 1;
	}
	static struct tenant_egress_policy policy;
	if (tenant_egress_parse("{\"mode\":\"allowlist\",\"allow\":[\"198.51.100.0/24:443\",\"203.0.113.7:80-90\"],"
				"\"rate_kbit\":10000}",
				&policy, &err) != 0) {
		fprintf(stderr, "bench_network: policy: %s\n", err.msg);
		return 1;
	}
	static const char *const run_argv[] = {"/bin/true", NULL};
	struct exec_file f = {.name = "x", .data = "", .len = 0};
	struct exec_job job = {
		.tenant = "bench",
		.run_argv = run_argv,
		.files = &f,
		.n_files = 1,
		.run_limits = {.cpu_ms = 1000, .wall_ms = 5000, .memory_kb = 64 * 1024, .output_bytes = 4096},
	};
	double *start[2], *down[2];
	for (int k = 0; k < 2; k++) {
		start[k] = calloc((size_t)reps, sizeof(double));
		down[k] = calloc((size_t)reps, sizeof(double));
		if (!start[k] || !down[k])
			return 1;
	}
	/* One of each to warm caches, then alternate. */
	for (int i = -1; i < reps; i++) {
		for (int k = 0; k < 2; k++) {
			job.egress = k ? &policy : NULL;
			struct exec_session *s = NULL;
			struct exec_phase_result r;
			double t0 = now_ms();
			if (exec_session_open(&e, &job, &s, &r, &err) != 0) {
				fprintf(stderr, "bench_network: open (%s): %s\n", k ? "network" : "none", err.msg);
				return 1;
			}
			double t1 = now_ms();
			exec_phase_result_free(&r);
			exec_session_close(s);
			exec_engine_drain(&e);
			double t2 = now_ms();
			if (i >= 0) {
				start[k][i] = t1 - t0;
				down[k][i] = t2 - t1;
			}
		}
	}
	double s0 = median(start[0], reps), s1 = median(start[1], reps);
	double d0 = median(down[0], reps), d1 = median(down[1], reps);
	printf("sandbox start, median of %d: without network %.1f ms, with network and shaping %.1f ms\n", reps, s0,
	       s1);
	printf("start with network / without: %.2f\n", s1 / s0);
	printf("tear-down, median: without %.1f ms, with %.1f ms (ratio %.2f)\n", d0, d1, d1 / d0);
	struct exec_cgroup cg = e.cg;
	exec_engine_fini(&e);
	char tenant_cg[128];
	snprintf(tenant_cg, sizeof(tenant_cg), "%s/bench", parent);
	(void)cg.ops->remove(&cg, tenant_cg, &err);
	(void)cg.ops->remove(&cg, parent, &err);
	rmdir(work_root);
	rmdir(runsc_root);
	return 0;
}
