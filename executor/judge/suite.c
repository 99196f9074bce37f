/* Judging against an instructor test suite (executor/judge/suite.h). */
#include "executor/judge/suite.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobspec.h"
#include "executor/judge/suite_framework.h"
#include "executor/judge/suite_summary.h"
#include "executor/sandbox/unpacker.h"

#define HELPER "gavel-suite"
#define HELPER_FILE ".gavel-suite"
#define CHECK_HEADER "gavel_check.h"
#define HELPER_MAX (16u << 20)
#define SUITE_FILES_MAX (EXEC_SUITE_SUPPORT_MAX + 40) /* student's + support + gavel-suite */
#define BUILD_CPU_MS 60000u                          /* gavel-suite's limit on a group's build */
#define BUILD_WALL_MS 120000u
#define PHASE_SLACK_MS 10000u
#define PLAN_MAX 65536
#define HIDDEN_TIME_GRAIN_MS 100u

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void job_limits(const struct exec_suite *su, struct exec_job *job)
{
	size_t most = 0;
	for (size_t g = 0; g < su->ngroups; g++)
		most = su->groups[g].ntests > most ? su->groups[g].ntests : most;
	enum suite_framework f = (enum suite_framework)suite_framework_of(su->framework);
	uint64_t per_test_cpu = (uint64_t)su->time_ms + suite_startup_ms(f);
	uint64_t build_cpu = suite_builds_tests(f) ? BUILD_CPU_MS : 0;
	uint64_t build_wall = suite_builds_tests(f) ? BUILD_WALL_MS : 0;
	/* The worst case of gavel-suite's own deadlines (executor/suite/main.c):
	 * the group's run together spends its budget, then every test runs
	 * alone. */
	uint64_t quarter = (uint64_t)su->time_ms * most / 4;
	uint64_t batch_cpu = suite_startup_ms(f) + (quarter > su->time_ms ? quarter : su->time_ms);
	uint64_t cpu = build_cpu + batch_cpu + most * per_test_cpu + PHASE_SLACK_MS;
	uint64_t wall = build_wall + 2 * batch_cpu + 3000 + most * (2 * per_test_cpu + 2000 + 1000) + PHASE_SLACK_MS;
	uint64_t mem_kb = ((uint64_t)su->memory_mb + suite_overhead_mb(f)) * 1024;
	job->run_limits = (struct exec_limits){
		.cpu_ms = min_u64(cpu, 43200000),
		.wall_ms = min_u64(wall, 43200000),
		.memory_kb = mem_kb,
		.output_bytes = 65536,
		.stderr_bytes = 65536,
		.procs = 128,
		.open_files = 256,
	};
	job->compile_limits = (struct exec_limits){
		.cpu_ms = BUILD_CPU_MS,
		.wall_ms = BUILD_WALL_MS,
		.memory_kb = mem_kb > 1048576 ? mem_kb : 1048576,
		.output_bytes = 65536,
		.procs = 128,
		.open_files = 256,
	};
}

struct suite_files {
	struct exec_file v[SUITE_FILES_MAX];
	size_t n;
	char replaced[512]; /* the student's files the support files replaced, for the compile output */
	char *owned[SUITE_FILES_MAX];
	size_t nowned;
};

static void files_free(struct suite_files *f)
{
	for (size_t i = 0; i < f->nowned; i++)
		free(f->owned[i]);
}

static int add_file(struct suite_files *f, const char *name, const void *data, size_t len, bool exe,
		    struct gv_err *err)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].name, name)) {
			/* The instructor's support file wins over the student's. */
			size_t o = strlen(f->replaced);
			snprintf(f->replaced + o, sizeof(f->replaced) - o, "%s%s", o ? ", " : "", name);
			f->v[i] = (struct exec_file){ .name = name, .data = data, .len = len, .executable = exe };
			return 0;
		}
	if (f->n >= SUITE_FILES_MAX)
		return gv_err_set(err, GV_ELIMIT, "more than %d files", SUITE_FILES_MAX);
	f->v[f->n++] = (struct exec_file){ .name = name, .data = data, .len = len, .executable = exe };
	return 0;
}

static int package_file(const struct exec_problem *p, const char *name, char **data, size_t *len, struct gv_err *err)
{
	char rel[96];
	snprintf(rel, sizeof(rel), "suite/%s", name);
	return exec_problem_read(p, rel, EXEC_SUITE_FILE_MAX, data, len, err);
}

static int job_files(struct exec_engine *e, const struct exec_problem *p, const struct lang_def *lang,
		     const void *source, size_t len, const struct exec_judge_opts *opts, struct suite_files *f,
		     struct gv_err *err)
{
	const char *main_name = opts && opts->source_name ? opts->source_name : lang->source;
	if (add_file(f, main_name, source, len, false, err) < 0)
		return -1;
	for (size_t i = 0; opts && i < opts->n_others; i++)
		if (add_file(f, opts->others[i].name, opts->others[i].data, opts->others[i].len, false, err) < 0)
			return -1;
	for (size_t i = 0; i < p->suite->nsupport; i++) {
		char *data;
		size_t n;
		if (package_file(p, p->suite->support[i], &data, &n, err) < 0)
			return -1;
		f->owned[f->nowned++] = data;
		if (add_file(f, p->suite->support[i], data, n, false, err) < 0)
			return -1;
	}
	size_t hlen;
	char *helper = exec_helper_read(e, HELPER, HELPER_MAX, &hlen, err);
	if (!helper)
		return -1;
	f->owned[f->nowned++] = helper;
	if (add_file(f, HELPER_FILE, helper, hlen, true, err) < 0)
		return -1;
	if (!opts || !opts->archive)
		return 0;
	size_t ulen;
	char *unpacker = exec_unpacker_read(e, NULL, &ulen, err);
	if (!unpacker)
		return -1;
	f->owned[f->nowned++] = unpacker;
	if (add_file(f, EXEC_EXTRACT_UNPACKER, unpacker, ulen, true, err) < 0)
		return -1;
	return add_file(f, EXEC_EXTRACT_ARCHIVE, opts->archive, opts->archive_len, false, err);
}

/* The compile command: gavel-suite's build, after gavel-unpack extracted
 * the archive of more files when there is one (PROTOCOL.md, "Additional
 * files"; its own checks, then execv of the build). */
static void compile_argv_of(const char *framework, bool archive, const char **argv, char nums[5][24])
{
	size_t k = 0;
	if (archive) {
		snprintf(nums[0], 24, "%u", GV_JOBSPEC_EXTRACT_BYTES_MAX);
		snprintf(nums[1], 24, "%u", GV_JOBSPEC_EXTRACT_FILES_MAX);
		snprintf(nums[2], 24, "%u", GV_JOBSPEC_EXTRACT_DIRS_MAX);
		snprintf(nums[3], 24, "%u", GV_JOBSPEC_EXTRACT_PATH_MAX);
		snprintf(nums[4], 24, "%u", GV_JOBSPEC_EXTRACT_DEPTH_MAX);
		const char *head[] = { "/box/" EXEC_EXTRACT_UNPACKER, "extract", "/box/" EXEC_EXTRACT_ARCHIVE, "/box",
				       nums[0], nums[1], nums[2], nums[3], nums[4], "--" };
		for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
			argv[k++] = head[i];
	}
	argv[k++] = "/box/" HELPER_FILE;
	argv[k++] = "build";
	argv[k++] = framework;
	argv[k] = NULL;
}

static enum exec_verdict verdict_of(enum exec_suite_outcome o)
{
	switch (o) {
	case EXEC_SUITE_PASS:
		return EXEC_VERDICT_AC;
	case EXEC_SUITE_TIMEOUT:
		return EXEC_VERDICT_TLE;
	case EXEC_SUITE_ERROR:
	case EXEC_SUITE_CRASH:
		return EXEC_VERDICT_RE;
	case EXEC_SUITE_FAIL:
	case EXEC_SUITE_SKIPPED:
	case EXEC_SUITE_UNSET:
		break;
	}
	return EXEC_VERDICT_WA;
}

static size_t plan_of(const struct exec_suite *su, const struct exec_suite_group *g, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "framework:%s\nfile:%s\ntime_ms:%u\nmemory_mb:%u\n", su->framework,
				    g->file, su->time_ms, su->memory_mb);
	for (size_t i = 0; i < g->ntests && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "test:%s\n", g->tests[i].name);
	return n < cap ? n : cap;
}

/* What a hidden test shows beyond its verdict and points: a message
 * that is a function of the verdict alone. A hidden test's own message,
 * output and the framework's build errors quote the hidden test file,
 * and the student's code can write any of them (it runs in the process
 * that writes the report), so none of it leaves the phase. */
static void hidden_message(struct exec_judged_case *c)
{
	const char *m = "";
	switch (c->verdict) {
	case EXEC_VERDICT_AC:
		break;
	case EXEC_VERDICT_TLE:
		m = "a hidden test: time limit exceeded";
		break;
	case EXEC_VERDICT_MLE:
		m = "a hidden test: memory limit exceeded";
		break;
	case EXEC_VERDICT_RE:
		m = "a hidden test ended in an error";
		break;
	default:
		m = "a hidden test failed";
		break;
	}
	exec_msgf(c->message, sizeof(c->message), "%s", m);
	free(c->output);
	c->output = NULL;
	c->output_len = 0;
}

/* A hidden test's time: never the report's (the student's code writes
 * it) nor gavel-suite's (it runs under the student's uid), but the
 * phase's as gavel-init and the host measured it, shared evenly among
 * the group's tests and rounded up to HIDDEN_TIME_GRAIN_MS. The student's
 * code can still stretch the whole phase (spin or sleep): that is the
 * timing channel every judge has, one coarse number per hidden group. */
static uint64_t hidden_time(uint64_t phase_ms, size_t ntests)
{
	uint64_t per = ntests ? phase_ms / ntests : phase_ms;
	return (per / HIDDEN_TIME_GRAIN_MS + 1) * HIDDEN_TIME_GRAIN_MS;
}

static void group_hide(const struct exec_suite_group *g, struct exec_judged_case *c, const struct exec_phase_result *r)
{
	for (size_t i = 0; i < g->ntests; i++) {
		hidden_message(&c[i]);
		c[i].time_ms = hidden_time(r->time_ms, g->ntests);
		c[i].wall_ms = hidden_time(r->wall_ms, g->ntests);
		c[i].memory_kb = 0;
		c[i].exit_code = 0;
		c[i].signal = 0;
	}
}

/* Every test of a group that did not report: what ended its phase. */
static void group_failed(const struct exec_suite_group *g, struct exec_judged_case *c, const struct exec_phase_result *r)
{
	enum exec_verdict v = !strcmp(r->status, "MLE")                                 ? EXEC_VERDICT_MLE :
			      !strcmp(r->status, "TLE") || !strcmp(r->status, "WLE") ? EXEC_VERDICT_TLE :
										    EXEC_VERDICT_RE;
	for (size_t i = 0; i < g->ntests; i++) {
		c[i].verdict = v;
		exec_msgf(c[i].message, sizeof(c[i].message),
			  "the tests of %s ended before they reported (%s%s%s)", g->file, r->status,
			  r->message[0] ? ": " : "", r->message);
	}
}

/* The summary into the group's cases; a summary that does not answer the
 * plan is our failure (gavel-suite wrote it after the run was over). */
static int group_from_summary(const struct exec_suite_group *g, const struct exec_suite_summary *sum,
			      struct exec_judged_case *c, struct gv_err *err)
{
	if (sum->ntests != g->ntests)
		return gv_err_set(err, GV_EPROTO, "the summary of %s has %zu tests, the plan %zu", g->file,
				  sum->ntests, g->ntests);
	for (size_t i = 0; i < g->ntests; i++) {
		const struct exec_suite_test_result *t = &sum->tests[i];
		if (strcmp(t->name, g->tests[i].name) != 0)
			return gv_err_set(err, GV_EPROTO, "the summary of %s names %s for %s", g->file, t->name,
					  g->tests[i].name);
		c[i].verdict = verdict_of(t->outcome);
		c[i].time_ms = t->time_ms;
		c[i].wall_ms = t->wall_ms;
		exec_msgf(c[i].message, sizeof(c[i].message), "%s", t->message);
		if (t->output_len) {
			if (!(c[i].output = malloc(t->output_len + 1)))
				return gv_err_errno(err, "malloc");
			memcpy(c[i].output, t->output, t->output_len);
			c[i].output[t->output_len] = '\0';
			c[i].output_len = t->output_len;
		}
	}
	/* The group's tests did not build against the submission: every test
	 * fails at once with the compiler's words, none ran. */
	for (size_t i = 0; !sum->build_ok && i < g->ntests; i++)
		exec_msgf(c[i].message, sizeof(c[i].message), "%s", sum->build_message);
	return 0;
}

/* Runs group g in s into its cases c. -1: the sandbox or the protocol
 * broke (IE); the caller opens a fresh sandbox for the next group when s
 * died of what the tests did. */
static int run_group(struct exec_engine *e, const struct exec_problem *p, const struct exec_suite_group *g,
		     struct exec_session *s, struct exec_judged_case *c, struct gv_err *err)
{
	const struct exec_suite *su = p->suite;
	struct exec_file files[2];
	size_t nf = 0;
	char *test = NULL, *header = NULL;
	size_t tlen, hlen;
	int rc = -1;
	if (package_file(p, g->file, &test, &tlen, err) < 0)
		return -1;
	files[nf++] = (struct exec_file){ .name = g->file, .data = test, .len = tlen };
	if (suite_framework_of(su->framework) == SUITE_C) {
		if (!(header = exec_helper_read(e, CHECK_HEADER, EXEC_SUITE_FILE_MAX, &hlen, err)))
			goto out;
		files[nf++] = (struct exec_file){ .name = CHECK_HEADER, .data = header, .len = hlen };
	}
	static char plan[PLAN_MAX];
	size_t plen = plan_of(su, g, plan, sizeof(plan));
	struct exec_phase_result r;
	if (exec_session_run_test_files(s, files, nf, plan, plen, &r, err) != 0) {
		exec_phase_result_free(&r);
		goto out;
	}
	const struct exec_feedback_file *fb = exec_phase_feedback(&r, "summary");
	if (!strcmp(r.status, "OK") && r.exit_code == 0 && fb) {
		struct exec_suite_summary sum;
		rc = exec_suite_summary_parse(fb->data, fb->len, &sum, err);
		if (rc == 0)
			rc = group_from_summary(g, &sum, c, err);
		exec_suite_summary_free(&sum);
		/* The parser's messages quote the summary (names, counts), and
		 * a hidden group's summary is as much the student's as ours. */
		if (rc < 0 && g->hidden)
			gv_err_set(err, GV_EPROTO, "the summary of %s does not answer its plan", g->file);
	} else if (!strcmp(r.status, "IE")) {
		gv_err_set(err, GV_ESANDBOX, "the tests of %s: %s", g->file, r.message);
	} else {
		group_failed(g, c, &r);
		rc = 0;
	}
	if (rc == 0 && g->hidden)
		group_hide(g, c, &r);
	exec_phase_result_free(&r);
out:
	free(test);
	free(header);
	return rc;
}

/* Scores: a test's points when it passed; a group with group points
 * shares them among its tests when all passed. */
static void score(const struct exec_suite *su, struct exec_judgement *out)
{
	size_t k = 0;
	out->score = 0;
	for (size_t gi = 0; gi < su->ngroups; gi++) {
		const struct exec_suite_group *g = &su->groups[gi];
		bool all = true;
		for (size_t i = 0; i < g->ntests; i++)
			all = all && out->cases[k + i].verdict == EXEC_VERDICT_AC;
		for (size_t i = 0; i < g->ntests; i++, k++) {
			struct exec_judged_case *c = &out->cases[k];
			c->has_score = true;
			c->max_points = g->has_points ? g->points / (double)g->ntests : g->tests[i].points;
			c->score = (g->has_points ? all : c->verdict == EXEC_VERDICT_AC) ? c->max_points : 0;
			out->score += c->score;
			if (c->verdict != EXEC_VERDICT_AC && out->first_failed == SIZE_MAX) {
				out->first_failed = k;
				out->verdict = c->verdict;
			}
		}
	}
}

/* Says before the compile output which of the student's files the
 * instructor's support files replaced. */
static void note_replaced(struct exec_judgement *out, const char *names)
{
	char note[640];
	int n = snprintf(note, sizeof(note), "note: the instructor's %s replaced the submission's file of that name\n",
			 names);
	if (n < 0)
		return;
	size_t nl = (size_t)n < sizeof(note) ? (size_t)n : sizeof(note) - 1;
	char *c = malloc(nl + out->compile_output_len + 1);
	if (!c)
		return;
	memcpy(c, note, nl);
	if (out->compile_output_len)
		memcpy(c + nl, out->compile_output, out->compile_output_len);
	c[nl + out->compile_output_len] = '\0';
	free(out->compile_output);
	out->compile_output = c;
	out->compile_output_len += nl;
}

int exec_judge_suite(struct exec_engine *e, const struct exec_problem *p, const struct lang_def *lang,
		     const void *source, size_t len, const struct exec_judge_opts *opts, struct exec_judgement *out,
		     struct gv_err *err)
{
	const struct exec_suite *su = p->suite;
	memset(out, 0, sizeof(*out));
	out->first_failed = SIZE_MAX;
	out->time_limit_ms = su->time_ms;
	out->memory_limit_mb = su->memory_mb;
	out->max_score = su->max_score;
	out->ncases = su->ntests;
	if (!(out->cases = calloc(su->ntests, sizeof(*out->cases))))
		return gv_err_errno(err, "calloc");
	for (size_t i = 0; i < su->ntests; i++)
		out->cases[i].verdict = EXEC_VERDICT_SKIPPED;
	if (strcmp(lang->id, su->language) != 0) {
		out->verdict = EXEC_VERDICT_CE;
		char msg[256];
		int n = snprintf(msg, sizeof(msg), "this problem's tests are written for %s, not %s\n", su->language,
				 lang->id);
		out->compile_output = strdup(msg);
		out->compile_output_len = out->compile_output ? (size_t)n : 0;
		return 0;
	}
	struct suite_files f = { 0 };
	struct exec_job job = { 0 };
	const char *compile_argv[16];
	char nums[5][24];
	compile_argv_of(su->framework, opts && opts->archive, compile_argv, nums);
	const char *run_argv[] = { "/box/" HELPER_FILE, "run", NULL };
	struct gv_err ferr;
	gv_err_clear(&ferr);
	if (job_files(e, p, lang, source, len, opts, &f, &ferr) < 0) {
		out->verdict = EXEC_VERDICT_IE;
		exec_msgf(out->message, sizeof(out->message), "%s", ferr.msg);
		files_free(&f);
		return 0;
	}
	job.tenant = opts && opts->tenant ? opts->tenant : "local";
	job.feedback_dir = true;
	job.compile_argv = compile_argv;
	job.run_argv = run_argv;
	job.files = f.v;
	job.n_files = f.n;
	job_limits(su, &job);

	struct exec_session *s = NULL;
	enum exec_run_status st = exec_judge_open_session(e, &job, &s, out);
	if (f.replaced[0])
		note_replaced(out, f.replaced);
	size_t k = 0;
	for (size_t gi = 0; st == EXEC_RUN_OK && gi < su->ngroups; k += su->groups[gi].ntests, gi++) {
		if (!exec_session_alive(s)) {
			/* The last group's tests took the whole sandbox down. */
			exec_session_close(s);
			st = exec_judge_open_session(e, &job, &s, out);
			if (st != EXEC_RUN_OK)
				break;
		}
		struct gv_err gerr;
		gv_err_clear(&gerr);
		if (run_group(e, p, &su->groups[gi], s, &out->cases[k], &gerr) < 0) {
			st = EXEC_RUN_IE;
			exec_msgf(out->message, sizeof(out->message), "%s", gerr.msg);
		}
		if (opts && opts->progress)
			for (size_t i = 0; i < su->groups[gi].ntests; i++)
				opts->progress(p, k + i, &out->cases[k + i], opts->progress_arg);
	}
	exec_session_close(s);
	files_free(&f);
	if (st == EXEC_RUN_OK) {
		out->verdict = EXEC_VERDICT_AC;
		score(su, out);
	} else {
		out->verdict = st == EXEC_RUN_CE ? EXEC_VERDICT_CE : EXEC_VERDICT_IE;
		out->score = 0;
	}
	return 0;
}
