/* A submission judged against a stored problem
 * (executor/problems/problem_judge.h). */
#include "executor/problems/problem_judge.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/backoff.h"
#include "common/io.h"
#include "common/json.h"
#include "common/pg.h"
#include "common/queue.h"
#include "executor/judge/judge.h"
#include "executor/judge/problem.h"
#include "executor/judge/verdict.h"

/* An expected answer read for the diff of a rejected case. */
#define DIFF_ANSWER_MAX (64u * 1024u * 1024u)

struct preview {
	char *output;     /* bounded copy of the case's stdout */
	size_t output_len;
	bool has_diff;
	size_t diff_line; /* 1-based */
	char *diff_expected, *diff_output;
};

struct judge_ctx {
	const struct exec_problem *p;
	struct exec_judgement *j;
	struct preview *pv;
	size_t budget; /* feedback bytes left */
	const struct exec_problem_judge_opts *o;
};

static char *dup_bounded(const char *s, size_t len, size_t max, size_t *out_len)
{
	size_t n = len < max ? len : max;
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	if (out_len)
		*out_len = n;
	return d;
}

/* The first line where expected and output differ, trailing blanks and a
 * CR ignored (what a reader would call the first differing line). */
static bool first_diff(const char *a, size_t al, const char *b, size_t bl, size_t *line, const char **la,
		       size_t *lal, const char **lb, size_t *lbl)
{
	size_t i = 0, k = 0, n = 1;
	while (i < al || k < bl) {
		size_t ie = i, ke = k;
		while (ie < al && a[ie] != '\n')
			ie++;
		while (ke < bl && b[ke] != '\n')
			ke++;
		size_t ta = ie, tb = ke;
		while (ta > i && (a[ta - 1] == ' ' || a[ta - 1] == '\t' || a[ta - 1] == '\r'))
			ta--;
		while (tb > k && (b[tb - 1] == ' ' || b[tb - 1] == '\t' || b[tb - 1] == '\r'))
			tb--;
		bool a_end = i >= al, b_end = k >= bl;
		if (a_end != b_end || ta - i != tb - k || memcmp(a + i, b + k, ta - i) != 0) {
			/* A trailing empty line on one side only is no difference. */
			if (!(a_end && tb == k && ke >= bl) && !(b_end && ta == i && ie >= al)) {
				*line = n;
				*la = a + i;
				*lal = ta - i;
				*lb = b + k;
				*lbl = tb - k;
				return true;
			}
		}
		i = ie < al ? ie + 1 : al;
		k = ke < bl ? ke + 1 : bl;
		n++;
	}
	return false;
}

static void on_output(size_t index, const char *out, size_t len, void *arg)
{
	struct judge_ctx *x = arg;
	if (index >= x->p->ncases || x->budget < EXEC_FEEDBACK_FIELD_MAX)
		return;
	struct preview *pv = &x->pv[index];
	pv->output = dup_bounded(out, len, EXEC_FEEDBACK_FIELD_MAX, &pv->output_len);
	if (pv->output)
		x->budget -= pv->output_len;
	enum exec_verdict v = x->j->cases[index].verdict;
	if (v != EXEC_VERDICT_WA && v != EXEC_VERDICT_PE)
		return;
	char *ans = NULL;
	size_t anslen = 0;
	struct gv_err err;
	if (exec_problem_read(x->p, x->p->cases[index]->ans_path, DIFF_ANSWER_MAX, &ans, &anslen, &err) != 0)
		return;
	const char *la, *lb;
	size_t lal, lbl;
	if (first_diff(ans, anslen, out, len, &pv->diff_line, &la, &lal, &lb, &lbl)) {
		pv->has_diff = true;
		pv->diff_expected = dup_bounded(la, lal, EXEC_FEEDBACK_DIFF_MAX, NULL);
		pv->diff_output = dup_bounded(lb, lbl, EXEC_FEEDBACK_DIFF_MAX, NULL);
	}
	free(ans);
}

static void on_progress(const struct exec_problem *p, size_t index, const struct exec_judged_case *c, void *arg)
{
	(void)c;
	struct judge_ctx *x = arg;
	if (x->o->progress)
		x->o->progress("running", index + 1, p->suite ? p->suite->ntests : p->ncases, x->o->progress_arg);
}

/* The first EXEC_FEEDBACK_FIELD_MAX bytes of a package file. */
static json_t *file_preview(const struct exec_problem *p, const char *rel, size_t *budget)
{
	if (*budget < EXEC_FEEDBACK_FIELD_MAX)
		return NULL;
	struct gv_err err;
	int fd = exec_problem_open(p, rel, &err);
	if (fd < 0)
		return NULL;
	char buf[EXEC_FEEDBACK_FIELD_MAX];
	size_t n = gv_read_upto(fd, buf, sizeof(buf));
	close(fd);
	*budget -= n;
	return gv_json_string_lossy(buf, n);
}

static const char *group_name(const struct exec_problem_node *c)
{
	const struct exec_problem_node *g = exec_problem_case_group(c);
	return g && g->name ? g->name : "";
}

/* Every group below data/ with its own verdict and score, computed by the
 * one aggregation code over a view of the problem rooted at that group. */
static void add_groups(const struct exec_problem *p, const struct exec_problem_node *g,
		       const struct exec_case_result *res, json_t *out)
{
	for (size_t i = 0; i < g->nchildren; i++) {
		const struct exec_problem_node *c = &g->children[i];
		if (c->kind != EXEC_PROBLEM_GROUP)
			continue;
		struct exec_problem view = *p;
		view.root = *c;
		view.type = EXEC_PROBLEM_SCORING;
		struct exec_verdict_outcome o;
		struct gv_err err;
		if (exec_verdict_aggregate(&view, res, p->ncases, &o, &err) == 0)
			json_array_append_new(out, json_pack("{s:s,s:s,s:f}", "name", c->name ? c->name : "", "verdict",
							     exec_verdict_name(o.verdict), "score", o.score));
		add_groups(p, c, res, out);
	}
}

/* Kattis first_error stops a pass-fail problem at its first rejection;
 * run_all asks for every case: grade runs everything and keeps the first
 * rejection as the verdict, so the verdict is the same. Not in a group
 * with accept_if_any_accepted: there on_reject break decides which cases
 * count (verdict.h), and every case runs anyway. */
static void grade_all(struct exec_problem_node *g)
{
	if (g->kind != EXEC_PROBLEM_GROUP)
		return;
	if (g->grading.on_reject == EXEC_PROBLEM_FIRST_ERROR && !g->grading.accept_if_any_accepted)
		g->grading.on_reject = EXEC_PROBLEM_GRADE;
	for (size_t i = 0; i < g->nchildren; i++)
		grade_all(&g->children[i]);
}

static json_t *ie_result(const char *message, struct exec_inline_summary *sum)
{
	snprintf(sum->verdict, sizeof(sum->verdict), "IE");
	return gv_result_internal_error("judge", message);
}

/* An instructor test suite's tests and groups: a test of a hidden group is
 * secret (not a sample) to the feedback policy, which keeps its message
 * and output from the submitter; its verdict, time and points stay. */
static void add_suite_tests(const struct exec_problem *p, const struct exec_judgement *j, json_t *tests,
			    json_t *groups)
{
	const struct exec_suite *su = p->suite;
	size_t k = 0;
	for (size_t gi = 0; gi < su->ngroups; gi++) {
		const struct exec_suite_group *g = &su->groups[gi];
		enum exec_verdict gv = EXEC_VERDICT_AC;
		double gscore = 0, gmax = 0;
		for (size_t i = 0; i < g->ntests && k < j->ncases; i++, k++) {
			const struct exec_judged_case *c = &j->cases[k];
			if (gv == EXEC_VERDICT_AC && c->verdict != EXEC_VERDICT_AC)
				gv = c->verdict;
			gscore += c->score;
			gmax += c->max_points;
			json_t *t = json_pack("{s:o,s:s,s:b,s:b,s:s,s:I,s:I,s:i,s:i,s:i,s:f,s:f}", "name",
					      gv_json_string_lossy(g->tests[i].name, strlen(g->tests[i].name)), "group",
					      g->file, "sample", !g->hidden, "hidden", g->hidden, "verdict",
					      exec_verdict_name(c->verdict), "time_ms", (json_int_t)c->time_ms, "wall_ms",
					      (json_int_t)c->wall_ms, "memory_kb", 0, "exit_code", 0, "signal", 0, "score",
					      c->score, "points", c->max_points);
			if (!t)
				continue;
			json_object_set_new(t, "message",
					    gv_json_string_lossy(c->message, strnlen(c->message, sizeof(c->message))));
			if (c->verdict != EXEC_VERDICT_SKIPPED && c->output)
				json_object_set_new(t, "feedback",
						    json_pack("{s:o}", "output",
							      gv_json_string_lossy(c->output, c->output_len)));
			json_array_append_new(tests, t);
		}
		json_array_append_new(groups, json_pack("{s:s,s:s,s:f,s:f,s:b}", "name", g->file, "verdict",
							exec_verdict_name(gv), "score", gscore, "max_score", gmax,
							"hidden", g->hidden));
	}
}

static json_t *build(const struct exec_problem *p, const struct exec_judgement *j, struct judge_ctx *x,
		     const struct gv_jobspec *spec, const struct exec_problem_judge_opts *o,
		     struct exec_inline_summary *sum)
{
	const char *verdict = exec_verdict_name(j->verdict);
	bool ce = j->verdict == EXEC_VERDICT_CE, ie = j->verdict == EXEC_VERDICT_IE;
	json_t *tests = json_array(), *groups = json_array();
	struct exec_case_result *res = calloc(p->ncases ? p->ncases : 1, sizeof(*res));
	if (!tests || !groups || !res) {
		json_decref(tests);
		json_decref(groups);
		free(res);
		return NULL;
	}
	uint64_t max_time = 0, max_wall = 0, max_mem = 0, cpu = 0;
	size_t decider = j->first_failed < j->ncases ? j->first_failed : SIZE_MAX;
	if (p->suite) {
		add_suite_tests(p, j, tests, groups);
		for (size_t i = 0; i < j->ncases; i++) {
			const struct exec_judged_case *c = &j->cases[i];
			if (c->verdict == EXEC_VERDICT_SKIPPED)
				continue;
			max_time = c->time_ms > max_time ? c->time_ms : max_time;
			max_wall = c->wall_ms > max_wall ? c->wall_ms : max_wall;
			cpu += c->time_ms;
			if (decider == SIZE_MAX)
				decider = i;
		}
	}
	for (size_t i = 0; !p->suite && i < p->ncases && i < j->ncases; i++) {
		const struct exec_judged_case *c = &j->cases[i];
		const struct exec_problem_node *n = p->cases[i];
		res[i].verdict = c->verdict;
		res[i].has_score = c->has_score;
		res[i].score = c->score;
		if (c->verdict != EXEC_VERDICT_SKIPPED) {
			max_time = c->time_ms > max_time ? c->time_ms : max_time;
			max_wall = c->wall_ms > max_wall ? c->wall_ms : max_wall;
			max_mem = c->memory_kb > max_mem ? c->memory_kb : max_mem;
			cpu += c->time_ms;
			if (decider == SIZE_MAX)
				decider = i; /* the last case run, unless one failed */
		}
		json_t *t = json_pack("{s:s,s:s,s:b,s:s,s:I,s:I,s:I,s:i,s:i}", "name", n->name ? n->name : "", "group",
				      group_name(n), "sample", n->is_sample, "verdict", exec_verdict_name(c->verdict),
				      "time_ms", (json_int_t)c->time_ms, "wall_ms", (json_int_t)c->wall_ms, "memory_kb",
				      (json_int_t)c->memory_kb, "exit_code", c->exit_code, "signal", c->signal);
		if (!t)
			continue;
		json_object_set_new(t, "message", gv_json_string_lossy(c->message, strnlen(c->message, sizeof(c->message))));
		if (c->has_score)
			json_object_set_new(t, "score", json_real(c->score));
		if (c->verdict != EXEC_VERDICT_SKIPPED && c->verdict != EXEC_VERDICT_CE) {
			json_t *fb = json_object();
			json_t *in = file_preview(p, n->in_path, &x->budget);
			json_t *exp = file_preview(p, n->ans_path, &x->budget);
			if (fb && in)
				json_object_set_new(fb, "input", in);
			else
				json_decref(in);
			if (fb && exp)
				json_object_set_new(fb, "expected", exp);
			else
				json_decref(exp);
			const struct preview *pv = &x->pv[i];
			if (fb && pv->output)
				json_object_set_new(fb, "output", gv_json_string_lossy(pv->output, pv->output_len));
			if (fb && pv->has_diff)
				json_object_set_new(fb, "diff",
						    json_pack("{s:I,s:o,s:o}", "line", (json_int_t)pv->diff_line, "expected",
							      gv_json_string_lossy(pv->diff_expected ? pv->diff_expected : "",
										   pv->diff_expected ? strlen(pv->diff_expected) : 0),
							      "output",
							      gv_json_string_lossy(pv->diff_output ? pv->diff_output : "",
										   pv->diff_output ? strlen(pv->diff_output) : 0)));
			if (fb)
				json_object_set_new(t, "feedback", fb);
		}
		json_array_append_new(tests, t);
	}
	if (!p->suite)
		add_groups(p, &p->root, res, groups);
	free(res);
	const struct exec_judged_case *d = decider < j->ncases ? &j->cases[decider] : NULL;
	/* Messages and compiler output may hold any bytes: lossy, never a
	 * failed pack. */
	json_t *r = json_pack("{s:s,s:s,s:s,s:o,s:o,s:I,s:I,s:I,s:i,s:i,s:f,s:o,s:o,s:i,s:i,s:o,s:i,s:b,s:b}",
			      "kind", "judge", "verdict", verdict, "status", ce ? "CE" : ie ? "IE" : "OK", "message",
			      gv_json_string_lossy(j->message, strnlen(j->message, sizeof(j->message))), "compile_output",
			      gv_json_string_lossy(j->compile_output ? j->compile_output : "",
						   j->compile_output ? j->compile_output_len : 0),
			      "time_ms", (json_int_t)max_time,
			      "wall_ms", (json_int_t)max_wall, "memory_kb", (json_int_t)max_mem, "exit_code",
			      d ? d->exit_code : 0, "signal", d ? d->signal : 0, "score", j->score, "tests", tests,
			      "groups", groups, "time_limit_ms", (int)j->time_limit_ms, "memory_limit_mb",
			      (int)j->memory_limit_mb, "node", o->node ? json_string(o->node) : json_null(), "sandboxes",
			      (int)j->sandboxes, "samples_only", spec->samples_only, "run_all", spec->run_all);
	/* The compiler's exact bytes too, where the text above is lossy. */
	if (r && gv_result_put_output(r, "compile_output", j->compile_output,
				      j->compile_output ? j->compile_output_len : 0) < 0) {
		json_decref(r);
		r = NULL;
	}
	if (!r)
		return NULL;
	json_object_set_new(r, "problem",
			    json_pack("{s:s,s:i,s:o,s:s}", "id", spec->problem_id, "version", (int)spec->problem_version,
				      "name", gv_json_string_lossy(p->name ? p->name : "", p->name ? strlen(p->name) : 0),
				      "type",
				      p->type == EXEC_PROBLEM_SCORING ? "scoring" : "pass-fail"));
	if (p->suite) {
		json_object_set_new(json_object_get(r, "problem"), "suite", json_string(p->suite->framework));
		json_object_set_new(r, "max_score", json_real(j->max_score));
	}
	snprintf(sum->verdict, sizeof(sum->verdict), "%s", gv_result_verdict_ok(verdict) ? verdict : "IE");
	sum->cpu_ms = cpu;
	sum->max_time_ms = max_time;
	sum->max_memory_kb = max_mem;
	sum->sandboxes = j->sandboxes;
	snprintf(sum->limit, sizeof(sum->limit), "%s",
		 !d ? "" : d->verdict == EXEC_VERDICT_TLE ? "time" : d->verdict == EXEC_VERDICT_MLE ? "memory" :
			   d->verdict == EXEC_VERDICT_OLE ? "output" : "");
	return r;
}

/* How long building the package folder is tried again while PostgreSQL,
 * where the files not yet cached come from, is away (a failover): the job
 * waits rather than ending IE. */
#define MATERIALIZE_RETRY_MS 60000

static int materialize_retrying(const struct exec_problem_env *env, const struct exec_problem_judge_opts *o,
				const struct gv_jobspec *spec, const char *dest, struct exec_materialize_stats *ms,
				struct gv_err *err)
{
	struct gv_backoff_window tries;
	gv_backoff_window_start(&tries, MATERIALIZE_RETRY_MS, 200, 3000);
	for (;;) {
		if (exec_problem_materialize(env, o->tenant, spec->problem_id, spec->problem_version, spec->samples_only,
					     dest, ms, err) == 0)
			return 0;
		if (!gv_pg_away(env->pg) || !gv_backoff_window_next(&tries))
			return -1;
		struct gv_err rerr;
		if (exec_problem_remove_tree(dest, &rerr) != 0)
			return -1; /* err keeps the materializing failure */
	}
}

json_t *exec_problem_judge_run(const struct exec_problem_env *env, const struct lang_def *lang,
			       const struct gv_jobspec *spec, const struct exec_problem_judge_opts *o,
			       struct exec_inline_summary *sum, struct gv_err *err)
{
	memset(sum, 0, sizeof(*sum));
	char dest[4200], msg[GV_ERR_MSG_MAX + 64];
	if (!spec->problem_version || !gv_queue_sid_ok(o->sid))
		return ie_result("the stored request names no problem version", sum);
	snprintf(dest, sizeof(dest), "%s/pkg-%s", env->scratch_dir, o->sid);
	struct gv_err rerr;
	if (exec_problem_remove_tree(dest, &rerr) != 0) {
		snprintf(msg, sizeof(msg), "package folder: %s", rerr.msg);
		return ie_result(msg, sum);
	}
	struct exec_materialize_stats ms;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (materialize_retrying(env, o, spec, dest, &ms, &rerr) != 0) {
		snprintf(msg, sizeof(msg), "problem %s version %u: %s", spec->problem_id, spec->problem_version,
			 rerr.msg);
		return ie_result(msg, sum);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* The line the tests and the benchmark look for: how much came from
	 * the cache, and how long building the package folder took. */
	gv_info(env->log, "problem %s v%u: %zu files, %zu from the test-data cache, %zu fetched (%llu bytes) in %lld ms",
		spec->problem_id, spec->problem_version, ms.files, ms.cached, ms.fetched,
		(unsigned long long)ms.fetched_bytes,
		(long long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
	struct exec_problem p;
	struct exec_problem_opts po = { .langs = env->langs };
	json_t *result = NULL;
	if (exec_problem_load(&p, dest, &po, &rerr) != 0) {
		snprintf(msg, sizeof(msg), "loading the stored package: %s", rerr.msg);
		result = ie_result(msg, sum);
		goto out;
	}
	if (spec->run_all && p.type == EXEC_PROBLEM_PASS_FAIL)
		grade_all(&p.root);
	struct exec_judgement j;
	struct judge_ctx x = { .p = &p, .j = &j, .budget = EXEC_FEEDBACK_TOTAL_MAX, .o = o };
	x.pv = calloc(p.ncases ? p.ncases : 1, sizeof(*x.pv));
	if (!x.pv) {
		gv_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	/* The program's other files, under their own names; a suite keeps
	 * the first one's name too, and takes an archive of more. */
	struct exec_file others[GV_JOBSPEC_FILES_MAX];
	size_t n_others = 0;
	for (size_t i = 1; i < spec->n_files && n_others < GV_JOBSPEC_FILES_MAX; i++)
		others[n_others++] = (struct exec_file){ .name = spec->files[i].name, .data = spec->files[i].content,
							 .len = spec->files[i].len };
	struct exec_judge_opts jo = {
		.tenant = o->tenant,
		.progress = on_progress,
		.progress_arg = &x,
		.langs = env->langs,
		.case_output = on_output,
		.case_output_arg = &x,
		.others = others,
		.n_others = n_others,
		.source_name = p.suite || p.output_only ? spec->files[0].name : NULL,
		.archive = spec->additional_files,
		.archive_len = spec->additional_files_len,
	};
	if (o->progress)
		o->progress("compiling", 0, 0, o->progress_arg);
	if (exec_judge_problem(env->engine, &p, lang, spec->files[0].content, spec->files[0].len, &jo, &j, &rerr) != 0) {
		snprintf(msg, sizeof(msg), "%s", rerr.msg);
		result = ie_result(msg, sum);
	} else {
		result = build(&p, &j, &x, spec, o, sum);
		if (!result)
			gv_err_set(err, ENOMEM, "out of memory");
		exec_judgement_free(&j);
	}
	for (size_t i = 0; i < p.ncases; i++) {
		free(x.pv[i].output);
		free(x.pv[i].diff_expected);
		free(x.pv[i].diff_output);
	}
	free(x.pv);
out:
	exec_problem_free(&p);
	if (exec_problem_remove_tree(dest, &rerr) != 0)
		gv_warn(env->log, "removing %s: %s", dest, rerr.msg);
	return result;
}
