/* Time limit of a package from its accepted submissions; see
 * problem_timelimit.h. Every submission runs in the engine's sandbox, never
 * on the host: they are package content, as untrusted as the validators. */
#include "cli/problem_timelimit.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/local_engine.h"
#include "executor/judge/judge.h"
#include "executor/judge/problem.h"

#define SUBMISSIONS_MAX 64
#define SOURCE_MAX (16u * 1024u * 1024u)

static int cmp_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Judges one accepted submission; *slowest_s its slowest test divided by its
 * language's factor. */
static int judge_one(struct cli_local *local, const struct exec_problem *p, const char *path, FILE *out,
		     double *slowest_s, struct gv_err *err)
{
	const struct lang_def *lang = cli_pick_language(local, NULL, path, err);
	if (!lang)
		return -1;
	char *src = NULL;
	size_t len = 0;
	if (cli_read_file(path, SOURCE_MAX, &src, &len, err) != 0)
		return -1;
	struct exec_judgement j;
	struct exec_judge_opts jo = {.tenant = "local", .langs = &local->langs};
	int rc = exec_judge_problem(&local->engine, p, lang, src, len, &jo, &j, err);
	free(src);
	if (rc != 0) {
		gv_err_prefix(err, "%s", path);
		return -1;
	}
	uint64_t worst = 0;
	for (size_t i = 0; i < j.ncases; i++)
		if (j.cases[i].time_ms > worst)
			worst = j.cases[i].time_ms;
	double factor = lang->time_factor > 0 ? lang->time_factor : 1.0;
	*slowest_s = (double)worst / 1000.0 / factor;
	fprintf(out, "  %s: %s, slowest test %llu ms%s\n", path, exec_verdict_name(j.verdict),
		(unsigned long long)worst, factor != 1.0 ? " (divided by the language's time factor)" : "");
	if (j.verdict != EXEC_VERDICT_AC) {
		rc = gv_err_set(err, GV_EINVAL, "%s is in submissions/accepted/ but got %s with a %u ms limit%s%s", path,
				exec_verdict_name(j.verdict), j.time_limit_ms, j.message[0] ? ": " : "", j.message);
	}
	exec_judgement_free(&j);
	return rc;
}

/* Judges the regular files of submissions/accepted/ (acc, its sorted
 * names[0..n)) in a known language, at most SUBMISSIONS_MAX, keeping the
 * slowest in tl. Returns how many were judged, or -1 with err. */
static long judge_accepted(struct cli_local *local, const struct exec_problem *p, const char *acc,
			   struct dirent **names, int n, FILE *out, struct cli_time_limit *tl, struct gv_err *err)
{
	struct gv_err lerr;
	long judged = 0;
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		char path[4400];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", acc, nm);
		if (nm[0] == '.' || stat(path, &st) != 0)
			continue;
		if (!S_ISREG(st.st_mode)) {
			fprintf(out, "  %s: not a single file; left out\n", path);
			continue;
		}
		if (judged == SUBMISSIONS_MAX) {
			fprintf(out, "  more than %d accepted submissions; the rest left out\n", SUBMISSIONS_MAX);
			break;
		}
		if (!cli_pick_language(local, NULL, path, &lerr)) {
			fprintf(out, "  %s: %s; left out\n", path, lerr.msg);
			continue;
		}
		double s;
		if (judge_one(local, p, path, out, &s, err) != 0)
			return -1;
		if (judged == 0 || s > tl->slowest_s) {
			tl->slowest_s = s;
			snprintf(tl->slowest_sub, sizeof(tl->slowest_sub), "%s", nm);
		}
		judged++;
	}
	return judged;
}

/* The package's rule applied to tl->slowest_s, into tl, and said on out. */
static void apply_time_rule(const struct exec_problem *p, FILE *out, struct cli_time_limit *tl)
{
	struct exec_problem_time_rule r;
	exec_problem_time_rule(p, tl->slowest_s, &r);
	tl->limit_s = r.limit_s;
	tl->margin_s = r.margin_s;
	bool v2023 = p->format == EXEC_PROBLEM_FORMAT_2023_07;
	if (v2023)
		fprintf(out,
			"time limit %g s: slowest accepted %.3f s (%s) x ac_to_time_limit %g = %.3f s, rounded up to "
			"a multiple of time_resolution %g s; time_limit_to_tle %g gives %g s\n",
			r.limit_s, tl->slowest_s, tl->slowest_sub, p->time_multiplier, r.exact_s, p->time_resolution,
			p->time_safety_margin, r.margin_s);
	else
		fprintf(out,
			"time limit %g s: slowest accepted %.3f s (%s) x time_multiplier %g = %.3f s, rounded to whole "
			"seconds, at least 1 s; time_safety_margin %g gives %g s\n",
			r.limit_s, tl->slowest_s, tl->slowest_sub, p->time_multiplier, r.exact_s, p->time_safety_margin,
			r.margin_s);
}

int cli_problem_time_limit(const char *dir, unsigned cap_ms, FILE *out, struct cli_time_limit *tl,
			   struct gv_err *err)
{
	memset(tl, 0, sizeof(*tl));
	struct exec_problem p;
	struct gv_err lerr;
	if (exec_problem_load(&p, dir, NULL, &lerr) != 0) {
		/* The server validates the package and names what is wrong. */
		exec_problem_free(&p);
		fprintf(out, "not setting a time limit: %s\n", lerr.msg);
		return 0;
	}
	enum exec_problem_time_source src = p.time_source;
	bool suite = p.suite != NULL, outputs = p.output_only;
	exec_problem_free(&p);
	/* A test suite sets its own per-test limit (suite.yaml time_ms); an
	 * output-only problem runs nothing. */
	if (src != EXEC_PROBLEM_TIME_DEFAULT || suite || outputs)
		return 0;

	char acc[4096];
	if ((size_t)snprintf(acc, sizeof(acc), "%s/submissions/accepted", dir) >= sizeof(acc))
		return gv_err_set(err, GV_ELIMIT, "%s: path too long", dir);
	struct dirent **names = NULL;
	int n = scandir(acc, &names, NULL, cmp_name);
	if (n < 0)
		return gv_err_set(err, GV_EINVAL,
				  "the package sets no time limit and has no submissions/accepted/ to set one from (%s); "
				  "pass --time S, or --default-time to keep Gavel's default",
				  strerror(errno));
	struct cli_local local;
	memset(&local, 0, sizeof(local));
	local.lock_fd = -1;
	int rc = -1;
	if (cli_local_open(&local, err) != 0) {
		gv_err_prefix(err, "judging submissions/accepted/ to set the time limit");
		goto out;
	}
	struct exec_problem_opts po = {.time_override_ms = cap_ms, .langs = &local.langs};
	if (exec_problem_load(&p, dir, &po, err) != 0) {
		exec_problem_free(&p);
		goto out;
	}
	fprintf(out, "no time limit in the package: judging submissions/accepted/ with %u ms per test\n", cap_ms);
	long judged = judge_accepted(&local, &p, acc, names, n, out, tl, err);
	if (judged == 0)
		gv_err_set(err, GV_EINVAL, "no submission in submissions/accepted/ in a known language to set the time limit from");
	if (judged > 0) {
		apply_time_rule(&p, out, tl);
		rc = 0;
	}
	exec_problem_free(&p);
out:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	cli_local_close(&local);
	return rc;
}
