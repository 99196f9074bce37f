/* testdata.yaml: a test group's settings (how its verdict and score are
 * found, the flags its validators get) in both formats, over what the group
 * inherited; exec_problem_parse_testdata is pure apart from warnings and is
 * fuzzed. Also the settings' defaults, copy and release. problem.h states
 * the rules. */
#include "executor/judge/problem.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/judge/problem_internal.h"

/* One bound of `range`: a number, inf, +inf or -inf. */
static bool range_bound(const char *w, double *out)
{
	if (!strcmp(w, "inf") || !strcmp(w, "+inf")) {
		*out = INFINITY;
		return true;
	}
	if (!strcmp(w, "-inf")) {
		*out = -INFINITY;
		return true;
	}
	char *end;
	errno = 0;
	double v = strtod(w, &end);
	if (errno || end == w || *end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

static int parse_range(struct exec_ydoc *y, yaml_node_t *n, struct exec_problem_grading *g, struct gv_err *err)
{
	const char *s = yscalar(n);
	char buf[128], *save = NULL;
	double lo = 0, hi = 0;
	char *a = NULL, *b = NULL;
	if (s && strlen(s) < sizeof(buf)) {
		snprintf(buf, sizeof(buf), "%s", s);
		a = strtok_r(buf, " \t", &save);
		b = a ? strtok_r(NULL, " \t", &save) : NULL;
	}
	if (!a || !b || strtok_r(NULL, " \t", &save) || !range_bound(a, &lo) || !range_bound(b, &hi) || lo > hi)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: range: expected two numbers \"A B\" with A <= B (inf, -inf allowed)",
				  y->file, line_of(n));
	g->range_min = lo;
	g->range_max = hi;
	return 0;
}

/* A 2023-07 maximum score: a number >= 0 or `unbounded`. */
static int parse_max_score(struct exec_ydoc *y, yaml_node_t *n, const char *key, double *out, struct gv_err *err)
{
	const char *s = yscalar(n);
	if (s && !strcmp(s, "unbounded")) {
		*out = INFINITY;
		return 0;
	}
	if (!s || exec_ynum(y, n, key, 0, 1e9, out, err) < 0)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a number >= 0 or unbounded", y->file,
				  line_of(n), key);
	return 0;
}

static int parse_aggregation(struct exec_ydoc *y, yaml_node_t *n, const char *key, bool pass_fail_ok,
			     struct exec_problem_grading *g, struct gv_err *err)
{
	const char *s = yscalar(n);
	if (s && !strcmp(s, "sum"))
		g->aggregation = EXEC_PROBLEM_AGG_SUM;
	else if (s && !strcmp(s, "min"))
		g->aggregation = EXEC_PROBLEM_AGG_MIN;
	else if (s && pass_fail_ok && !strcmp(s, "pass-fail"))
		g->aggregation = EXEC_PROBLEM_AGG_PASS_FAIL;
	else
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: %s", y->file, line_of(n), key,
				  pass_fail_ok ? "pass-fail, sum or min" : "sum or min");
	return 0;
}

/* 2023-07 `scoring` ({score, aggregation, require_pass}) or the drafts'
 * `grading` map ({score, max_score, aggregation, verdict}). */
static int parse_scoring_map(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *map, const char *what,
			     struct exec_problem_grading *g, struct gv_err *err)
{
	bool drafts = !strcmp(what, "grading");
	if (map->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a mapping", y->file, line_of(map), what);
	g->scoring_set = true;
	FOR_PAIRS(y, map, k, v)
	{
		const char *key = yscalar(k);
		char shown[64];
		snprintf(shown, sizeof(shown), "%s.%.40s", what, key ? key : "?");
		if (!key || !v)
			return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: bad key", y->file, line_of(k), what);
		if (!strcmp(key, "score") || (drafts && !strcmp(key, "max_score"))) {
			double d;
			if (parse_max_score(y, v, shown, &d, err) < 0)
				return -1;
			if (!strcmp(key, "max_score") || !drafts)
				g->max_score = d;
			else if (isfinite(d))
				g->accept_score = d; /* the drafts' score: what an accepted case is worth */
			else
				return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a number", y->file, line_of(v),
						  shown);
		} else if (!strcmp(key, "aggregation")) {
			if (parse_aggregation(y, v, shown, !drafts, g, err) < 0)
				return -1;
			g->aggregation_set = true;
		} else if (!drafts && !strcmp(key, "require_pass")) {
			if (v->type != YAML_SCALAR_NODE && v->type != YAML_SEQUENCE_NODE)
				return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a string or a list", y->file,
						  line_of(v), shown);
			exec_problem_warn(p, "%s:%zu: %s is not supported; the group is judged regardless", y->file,
					  line_of(k), shown);
		} else if (drafts && !strcmp(key, "verdict")) {
			const char *s = yscalar(v);
			if (s && !strcmp(s, "first_error")) {
				g->accept_if_any_accepted = false;
			} else if (s && !strcmp(s, "accept_if_any_accepted")) {
				g->accept_if_any_accepted = true;
			} else {
				return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: first_error or accept_if_any_accepted",
						  y->file, line_of(v), shown);
			}
		} else {
			exec_problem_warn(p, "%s:%zu: unknown key '%s'", y->file, line_of(k), shown);
		}
	}
	return 0;
}

/* on_reject and the verdict mode of grader_flags, folded (problem.h). */
struct reject_policy {
	int brk;  /* -1 unset, 0 continue, 1 break */
	int mode; /* -1 unset, 0 worst_error, 1 first_error */
};

static void policy_of(enum exec_problem_on_reject r, struct reject_policy *pol)
{
	pol->brk = r == EXEC_PROBLEM_FIRST_ERROR;
	pol->mode = r == EXEC_PROBLEM_WORST_ERROR ? 0 : 1;
}

static int apply_grader_flags(struct exec_problem *p, struct exec_problem_grading *g, struct reject_policy *pol,
			      const char *file, size_t line, struct gv_err *err)
{
	char buf[4097];
	snprintf(buf, sizeof(buf), "%s", g->grader_flags);
	char *save = NULL;
	for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(w, "sum")) {
			g->aggregation = EXEC_PROBLEM_AGG_SUM;
		} else if (!strcmp(w, "avg")) {
			g->aggregation = EXEC_PROBLEM_AGG_AVG;
		} else if (!strcmp(w, "min")) {
			g->aggregation = EXEC_PROBLEM_AGG_MIN;
		} else if (!strcmp(w, "max")) {
			g->aggregation = EXEC_PROBLEM_AGG_MAX;
		} else if (!strcmp(w, "first_error")) {
			pol->mode = 1;
			g->always_accept = false;
		} else if (!strcmp(w, "worst_error")) {
			pol->mode = 0;
			g->always_accept = false;
		} else if (!strcmp(w, "always_accept")) {
			g->always_accept = true;
		} else if (!strcmp(w, "accept_if_any_accepted")) {
			g->accept_if_any_accepted = true;
		} else if (!strcmp(w, "ignore_sample")) {
			g->ignore_sample = true;
		} else if (g->custom_grader) {
			exec_problem_warn(p, "%s:%zu: grader_flags: '%.40s' is for the custom grader; ignored", file,
					  line, w);
		} else {
			return gv_err_set(err, GV_EINVAL,
					  "%s:%zu: grader_flags: unknown flag '%.40s' (the default grader takes "
					  "worst_error, first_error, always_accept, sum, avg, min, max, ignore_sample, "
					  "accept_if_any_accepted)",
					  file, line, w);
		}
	}
	return 0;
}

/* output_validator_flags as a map: {name: validator, flags: string}. */
static int parse_validator_flags_map(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *map,
				     struct exec_problem_grading *g, struct gv_err *err)
{
	FOR_PAIRS(y, map, k, v)
	{
		const char *key = yscalar(k);
		if (key && v && !strcmp(key, "flags")) {
			if (exec_ystr(y, v, "output_validator_flags.flags", &g->output_validator_flags, err) < 0)
				return -1;
		} else if (key && v && !strcmp(key, "name")) {
			if (!yscalar(v))
				return gv_err_set(err, GV_EINVAL, "%s:%zu: output_validator_flags.name: expected a string",
						  y->file, line_of(v));
			exec_problem_warn(p,
					  "%s:%zu: output_validator_flags.name: Gavel runs the package's first output "
					  "validator for every group",
					  y->file, line_of(v));
		} else {
			return gv_err_set(err, GV_EINVAL,
					  "%s:%zu: output_validator_flags: a string, or a map with name and flags",
					  y->file, line_of(k));
		}
	}
	return 0;
}

/* input_validator_flags / input_validator_args: Gavel does not validate
 * inputs; checked for shape and kept as written when a string. */
static int parse_input_flags(struct exec_ydoc *y, yaml_node_t *v, const char *key, struct exec_problem_grading *g,
			     struct gv_err *err)
{
	if (v->type == YAML_SCALAR_NODE || v->type == YAML_SEQUENCE_NODE)
		return exec_ywords(y, v, key, &g->input_validator_flags, err);
	if (v->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: a string, a list or a map", y->file, line_of(v), key);
	FOR_PAIRS(y, v, k2, v2)
	{
		char *tmp = NULL;
		if (!yscalar(k2) || !v2 || exec_ywords(y, v2, key, &tmp, err) < 0) {
			free(tmp);
			if (!yscalar(k2) || !v2)
				gv_err_set(err, GV_EINVAL, "%s:%zu: %s: bad key", y->file, line_of(k2), key);
			return -1;
		}
		free(tmp);
	}
	return 0;
}

int exec_problem_grading_default(struct exec_problem_grading *g, struct gv_err *err)
{
	memset(g, 0, sizeof(*g));
	g->on_reject = EXEC_PROBLEM_FIRST_ERROR;
	g->aggregation = EXEC_PROBLEM_AGG_SUM;
	g->accept_score = 1;
	g->reject_score = 0;
	g->range_min = -INFINITY;
	g->range_max = INFINITY;
	g->max_score = NAN;
	g->full_feedback = -1;
	g->grader_flags = exec_problem_strdup("", err);
	g->output_validator_flags = exec_problem_strdup("", err);
	g->input_validator_flags = exec_problem_strdup("", err);
	if (!g->grader_flags || !g->output_validator_flags || !g->input_validator_flags) {
		exec_problem_grading_free(g);
		return -1;
	}
	return 0;
}

void exec_problem_grading_free(struct exec_problem_grading *g)
{
	if (!g)
		return;
	free(g->grader_flags);
	free(g->output_validator_flags);
	free(g->input_validator_flags);
	g->grader_flags = g->output_validator_flags = g->input_validator_flags = NULL;
}

/* What a testdata.yaml starts from. The legacy format: it replaces what
 * the group inherited. 2023-07: keys are inherited one by one; scoring is
 * not. */
static void reset_inherited(const struct exec_problem *p, struct exec_problem_grading *g)
{
	g->scoring_set = g->aggregation_set = false;
	g->max_score = NAN;
	if (p->format != EXEC_PROBLEM_FORMAT_LEGACY)
		return;
	g->on_reject = EXEC_PROBLEM_FIRST_ERROR;
	g->aggregation = EXEC_PROBLEM_AGG_SUM;
	g->accept_if_any_accepted = false;
	g->always_accept = false;
	g->ignore_sample = false;
	g->custom_grader = false;
	g->accept_score = 1;
	g->reject_score = 0;
	g->range_min = -INFINITY;
	g->range_max = INFINITY;
	g->full_feedback = -1;
	g->grader_flags[0] = '\0';
	g->output_validator_flags[0] = '\0';
	g->input_validator_flags[0] = '\0';
}

/* on_reject: break | continue; Gavel's older first_error, worst_error and
 * grade set both halves of the policy. */
static int parse_on_reject(struct exec_ydoc *y, yaml_node_t *v, struct reject_policy *pol, struct gv_err *err)
{
	const char *s = yscalar(v);
	if (s && !strcmp(s, "break"))
		pol->brk = 1;
	else if (s && !strcmp(s, "continue"))
		pol->brk = 0;
	else if (s && !strcmp(s, "first_error"))
		*pol = (struct reject_policy){1, 1};
	else if (s && !strcmp(s, "worst_error"))
		*pol = (struct reject_policy){0, 0};
	else if (s && !strcmp(s, "grade"))
		*pol = (struct reject_policy){0, 1};
	else
		return gv_err_set(err, GV_EINVAL,
				  "%s:%zu: on_reject: break or continue (Gavel also reads first_error, "
				  "worst_error, grade)",
				  y->file, line_of(v));
	return 0;
}

/* grading as a word: default | custom (warned: the default grader judges). */
static int parse_grading_word(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *v,
			      struct exec_problem_grading *g, struct gv_err *err)
{
	const char *s = yscalar(v);
	if (!s || (strcmp(s, "default") && strcmp(s, "custom")))
		return gv_err_set(err, GV_EINVAL, "%s:%zu: grading: default or custom", y->file, line_of(v));
	g->custom_grader = !strcmp(s, "custom");
	if (g->custom_grader)
		exec_problem_warn(p, "%s:%zu: grading: custom is not supported; the default grader judges", y->file,
				  line_of(v));
	return 0;
}

/* output_validator_flags: a string, or a map {name, flags}. */
static int parse_output_validator_flags(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *v,
					struct exec_problem_grading *g, struct gv_err *err)
{
	if (v->type == YAML_MAPPING_NODE)
		return parse_validator_flags_map(p, y, v, g, err);
	return exec_ystr(y, v, "output_validator_flags", &g->output_validator_flags, err);
}

/* static_validation: false, or true / a map {args, score}; Gavel has no
 * static validators, so anything but false is a warning. k is the key. */
static int parse_static_validation(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *k, yaml_node_t *v,
				   struct gv_err *err)
{
	bool b = true;
	if (v->type == YAML_MAPPING_NODE) {
		FOR_PAIRS(y, v, k2, v2)
		{
			const char *key2 = yscalar(k2);
			double d;
			char *tmp = NULL;
			int r = 0;
			if (key2 && v2 && !strcmp(key2, "args"))
				r = exec_ywords(y, v2, "static_validation.args", &tmp, err);
			else if (key2 && v2 && !strcmp(key2, "score"))
				r = parse_max_score(y, v2, "static_validation.score", &d, err);
			else
				exec_problem_warn(p, "%s:%zu: unknown key 'static_validation.%.40s'", y->file,
						  line_of(k2), key2 ? key2 : "?");
			free(tmp);
			if (r < 0)
				return -1;
		}
	} else if (exec_ybool(y, v, "static_validation", &b, err) < 0) {
		return gv_err_set(err, GV_EINVAL, "%s:%zu: static_validation: true, false or a map", y->file,
				  line_of(v));
	}
	if (b)
		exec_problem_warn(p, "%s:%zu: static_validation: Gavel has no static validators; not run", y->file,
				  line_of(k));
	return 0;
}

/* args: checked for shape; submissions get no arguments (warned). */
static int parse_args(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *k, yaml_node_t *v,
		      struct gv_err *err)
{
	char *tmp = NULL;
	int r = exec_ywords(y, v, "args", &tmp, err);
	bool any = tmp && *tmp;
	free(tmp);
	if (r < 0)
		return -1;
	if (any)
		exec_problem_warn(p, "%s:%zu: args: submissions get no command-line arguments here; ignored", y->file,
				  line_of(k));
	return 0;
}

/* What the keys of one testdata.yaml left for after the last of them. */
struct testdata_seen {
	struct reject_policy pol; /* from on_reject */
	yaml_node_t *flags;       /* grader_flags' value */
	yaml_node_t *range;       /* range's key */
	yaml_node_t *score;       /* accept_score's or reject_score's key */
};

/* One key k (the string key) with value v of a testdata.yaml. */
static int parse_testdata_key(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *k, const char *key,
			      yaml_node_t *v, struct exec_problem_grading *g, struct testdata_seen *seen,
			      struct gv_err *err)
{
	static const char *const ignored[] = {"hint", "description", NULL};
	if (!strcmp(key, "on_reject"))
		return parse_on_reject(y, v, &seen->pol, err);
	if (!strcmp(key, "grading") && v->type == YAML_MAPPING_NODE)
		return parse_scoring_map(p, y, v, "grading", g, err);
	if (!strcmp(key, "grading"))
		return parse_grading_word(p, y, v, g, err);
	if (!strcmp(key, "scoring"))
		return parse_scoring_map(p, y, v, "scoring", g, err);
	if (!strcmp(key, "grader_flags")) {
		seen->flags = v;
		return exec_ystr(y, v, "grader_flags", &g->grader_flags, err);
	}
	if (!strcmp(key, "output_validator_flags"))
		return parse_output_validator_flags(p, y, v, g, err);
	if (!strcmp(key, "output_validator_args"))
		return exec_ywords(y, v, "output_validator_args", &g->output_validator_flags, err);
	if (!strcmp(key, "input_validator_flags") || !strcmp(key, "input_validator_args"))
		return parse_input_flags(y, v, key, g, err);
	if (!strcmp(key, "accept_score")) {
		seen->score = k;
		return exec_ynum(y, v, "accept_score", -1e9, 1e9, &g->accept_score, err);
	}
	if (!strcmp(key, "reject_score")) {
		seen->score = k;
		return exec_ynum(y, v, "reject_score", -1e9, 1e9, &g->reject_score, err);
	}
	if (!strcmp(key, "range")) {
		seen->range = k;
		return parse_range(y, v, g, err);
	}
	if (!strcmp(key, "full_feedback")) {
		bool b;
		if (exec_ybool(y, v, "full_feedback", &b, err) < 0)
			return -1;
		g->full_feedback = b;
		return 0;
	}
	if (!strcmp(key, "static_validation"))
		return parse_static_validation(p, y, k, v, err);
	if (!strcmp(key, "args"))
		return parse_args(p, y, k, v, err);
	if (in_list(key, ignored)) {
		if (!yscalar(v))
			return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a string", y->file, line_of(v), key);
		return 0;
	}
	exec_problem_warn(p, "%s:%zu: unknown key '%.40s'", y->file, line_of(k), key);
	return 0;
}

/* The group's on_reject: what the file said (on_reject, then grader_flags'
 * verdict mode) over what it inherited, Kattis' defaults in the legacy
 * format. grader_flags are applied here, after every other key. */
static int fold_policy(struct exec_problem *p, struct exec_problem_grading *g, const struct testdata_seen *seen,
		       const char *rel, struct gv_err *err)
{
	struct reject_policy pol = seen->pol;
	if (seen->flags) {
		struct reject_policy from_flags = {-1, -1};
		if (apply_grader_flags(p, g, &from_flags, rel, line_of(seen->flags), err) < 0)
			return -1;
		if (from_flags.mode >= 0)
			pol.mode = from_flags.mode;
	}
	struct reject_policy inherited;
	if (p->format == EXEC_PROBLEM_FORMAT_LEGACY)
		inherited = (struct reject_policy){1, 0}; /* break, worst_error: Kattis' defaults */
	else
		policy_of(g->on_reject, &inherited);
	if (pol.brk < 0)
		pol.brk = inherited.brk;
	if (pol.mode < 0)
		pol.mode = inherited.mode;
	g->on_reject = pol.brk ? EXEC_PROBLEM_FIRST_ERROR : pol.mode ? EXEC_PROBLEM_GRADE : EXEC_PROBLEM_WORST_ERROR;
	return 0;
}

static int parse_testdata_doc(struct exec_problem *p, struct exec_ydoc *y, struct exec_problem_grading *g,
			      struct gv_err *err)
{
	yaml_node_t *root = yaml_document_get_root_node(&y->doc);
	if (!root)
		return 0; /* empty: what the group inherited */
	if (root->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: expected a mapping", y->file, line_of(root));
	struct testdata_seen seen = {.pol = {-1, -1}};
	reset_inherited(p, g);
	FOR_PAIRS(y, root, k, v)
	{
		const char *key = yscalar(k);
		if (!key || !v)
			return gv_err_set(err, GV_EINVAL, "%s:%zu: bad key", y->file, line_of(k));
		if (parse_testdata_key(p, y, k, key, v, g, &seen, err) < 0)
			return -1;
	}
	if (fold_policy(p, g, &seen, y->file, err) < 0)
		return -1;
	if (p->type != EXEC_PROBLEM_SCORING && (seen.range || seen.score || g->scoring_set))
		exec_problem_warn(p, "%s:%zu: scores are for scoring problems; ignored on a pass-fail one", y->file,
				  line_of(seen.range ? seen.range : seen.score ? seen.score
									       : root));
	return 0;
}

int exec_problem_parse_testdata(struct exec_problem *p, const char *file, const char *text, size_t len,
				struct exec_problem_grading *g, struct gv_err *err)
{
	struct exec_ydoc y;
	if (exec_ydoc_parse(file, text, len, &y, err) < 0)
		return -1;
	int rc = parse_testdata_doc(p, &y, g, err);
	exec_ydoc_free(&y);
	return rc;
}

/* test_group.yaml: the later 2023-07 drafts' name for testdata.yaml. */
int exec_problem_load_testdata(struct exec_problem *p, const char *dir_rel, struct exec_problem_grading *g,
			       struct gv_err *err)
{
	static const char *const names[] = {"testdata.yaml", "test_group.yaml"};
	for (size_t i = 0; i < 2; i++) {
		char rel[EXEC_PROBLEM_REL_MAX + 32];
		snprintf(rel, sizeof(rel), "%s/%s", dir_rel, names[i]);
		struct exec_ydoc y;
		bool present;
		if (exec_ydoc_load(p, rel, &y, &present, err) < 0)
			return -1;
		if (!present)
			continue;
		int rc = parse_testdata_doc(p, &y, g, err);
		exec_ydoc_free(&y);
		return rc;
	}
	/* 2023-07: scoring is not inherited. */
	g->scoring_set = g->aggregation_set = false;
	g->max_score = NAN;
	return 0;
}

int exec_problem_grading_copy(struct exec_problem_grading *dst, const struct exec_problem_grading *src,
			      struct gv_err *err)
{
	*dst = *src;
	dst->grader_flags = exec_problem_strdup(src->grader_flags, err);
	dst->output_validator_flags = exec_problem_strdup(src->output_validator_flags, err);
	dst->input_validator_flags = exec_problem_strdup(src->input_validator_flags, err);
	if (!dst->grader_flags || !dst->output_validator_flags || !dst->input_validator_flags) {
		exec_problem_grading_free(dst);
		memset(dst, 0, sizeof(*dst));
		return -1;
	}
	return 0;
}
