/* A problem's limits and time-limit rules: problem.yaml's limits map,
 * DOMjudge's .timelimit, which of them sets the time limit (the caller's
 * override first), the format's defaults of the rule that derives a limit
 * from the accepted submissions, and that rule itself. */
#include "executor/judge/problem.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "executor/judge/problem_internal.h"

/* 2023-07 limits.time_multipliers: {ac_to_time_limit, time_limit_to_tle}. */
static int parse_time_multipliers(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *v, struct gv_err *err)
{
	if (v->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: limits.time_multipliers: expected a mapping", y->file,
				  line_of(v));
	FOR_PAIRS(y, v, k2, v2)
	{
		const char *key2 = yscalar(k2);
		if (key2 && !strcmp(key2, "ac_to_time_limit")) {
			if (exec_ynum(y, v2, "limits.time_multipliers.ac_to_time_limit", 1, 1000, &p->time_multiplier,
				      err) < 0)
				return -1;
		} else if (key2 && !strcmp(key2, "time_limit_to_tle")) {
			if (exec_ynum(y, v2, "limits.time_multipliers.time_limit_to_tle", 1, 1000,
				      &p->time_safety_margin, err) < 0)
				return -1;
		} else {
			exec_problem_warn(p, "%s:%zu: unknown key 'limits.time_multipliers.%.40s'", y->file,
					  line_of(k2), key2 ? key2 : "?");
		}
	}
	return 0;
}

int exec_problem_parse_limits(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *map, double *time_limit,
			      struct gv_err *err)
{
	static const char *const ignored[] = {"code", "compilation_time", "compilation_memory",
					      "validation_time", "validation_memory", "validation_output", NULL};
	if (map->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: limits: expected a mapping", y->file, line_of(map));
	FOR_PAIRS(y, map, k, v)
	{
		const char *key = yscalar(k);
		double d;
		if (!key || !v)
			return gv_err_set(err, GV_EINVAL, "%s:%zu: limits: bad key", y->file, line_of(k));
		if (!strcmp(key, "time_limit")) {
			if (exec_ynum(y, v, "limits.time_limit", 0.001, 3600, time_limit, err) < 0)
				return -1;
		} else if (!strcmp(key, "time_multiplier")) {
			if (exec_ynum(y, v, "limits.time_multiplier", 1, 1000, &p->time_multiplier, err) < 0)
				return -1;
		} else if (!strcmp(key, "time_safety_margin")) {
			if (exec_ynum(y, v, "limits.time_safety_margin", 1, 1000, &p->time_safety_margin, err) < 0)
				return -1;
		} else if (!strcmp(key, "time_resolution")) {
			if (exec_ynum(y, v, "limits.time_resolution", 0.001, 60, &p->time_resolution, err) < 0)
				return -1;
		} else if (!strcmp(key, "time_multipliers")) {
			if (parse_time_multipliers(p, y, v, err) < 0)
				return -1;
		} else if (!strcmp(key, "memory")) {
			if (exec_ynum(y, v, "limits.memory", 1, 65536, &d, err) < 0)
				return -1;
			p->memory_mb = (uint32_t)d;
		} else if (!strcmp(key, "validation_passes")) {
			if (exec_ynum(y, v, "limits.validation_passes", 2, EXEC_PROBLEM_MAX_VALIDATION_PASSES, &d, err) < 0)
				return -1;
			p->validation_passes = (uint32_t)d;
		} else if (!strcmp(key, "output")) {
			if (exec_ynum(y, v, "limits.output", 1, 1024, &d, err) < 0)
				return -1;
			p->output_mb = (uint32_t)d;
		} else if (!in_list(key, ignored)) {
			exec_problem_warn(p, "%s:%zu: unknown key 'limits.%.40s'", y->file, line_of(k), key);
		}
	}
	return 0;
}

static int parse_timelimit_file(struct exec_problem *p, double *secs, struct gv_err *err)
{
	struct stat st;
	if (fstatat(p->dirfd, ".timelimit", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : gv_err_errno(err, "stat .timelimit");
	char *text;
	size_t len;
	if (exec_problem_read(p, ".timelimit", 64, &text, &len, err) < 0)
		return -1;
	char *s = text, *end;
	while (isspace((unsigned char)*s))
		s++;
	errno = 0;
	double v = strtod(s, &end);
	while (isspace((unsigned char)*end))
		end++;
	bool ok = !errno && end != s && !*end && isfinite(v) && v >= 0.001 && v <= 3600;
	free(text);
	if (!ok)
		return gv_err_set(err, GV_EINVAL, ".timelimit: expected seconds in [0.001, 3600]");
	*secs = v;
	return 0;
}

/* The defaults of the time-limit rule depend on problem_format_version,
 * which may come after limits in problem.yaml: filled once it is read. */
static void default_rule(struct exec_problem *p)
{
	bool v2023 = p->format == EXEC_PROBLEM_FORMAT_2023_07;
	if (isnan(p->time_multiplier))
		p->time_multiplier = v2023 ? 2 : 5;
	if (isnan(p->time_safety_margin))
		p->time_safety_margin = v2023 ? 1.5 : 2;
	if (isnan(p->time_resolution))
		p->time_resolution = 1;
}

int exec_problem_set_limits(struct exec_problem *p, double yaml_time, const struct exec_problem_opts *opts,
			    struct gv_err *err)
{
	double file_time = 0;
	if (parse_timelimit_file(p, &file_time, err) < 0)
		return -1;
	default_rule(p);
	if (opts && opts->time_override_ms) {
		p->time_limit_ms = opts->time_override_ms;
		p->time_source = EXEC_PROBLEM_TIME_OVERRIDE;
	} else if (yaml_time > 0) {
		p->time_limit_ms = (uint32_t)ceil(yaml_time * 1000);
		p->time_source = EXEC_PROBLEM_TIME_PROBLEM_YAML;
	} else if (file_time > 0) {
		p->time_limit_ms = (uint32_t)ceil(file_time * 1000);
		p->time_source = EXEC_PROBLEM_TIME_TIMELIMIT_FILE;
	} else {
		p->time_limit_ms = EXEC_PROBLEM_DEFAULT_TIME_MS;
		p->time_source = EXEC_PROBLEM_TIME_DEFAULT;
	}
	return 0;
}

const char *exec_problem_time_source_name(enum exec_problem_time_source s)
{
	switch (s) {
	case EXEC_PROBLEM_TIME_DEFAULT:
		return "Gavel's default: the package sets none";
	case EXEC_PROBLEM_TIME_TIMELIMIT_FILE:
		return ".timelimit";
	case EXEC_PROBLEM_TIME_PROBLEM_YAML:
		return "problem.yaml limits.time_limit";
	case EXEC_PROBLEM_TIME_OVERRIDE:
		return "--time";
	}
	return "?";
}

void exec_problem_time_rule(const struct exec_problem *p, double slowest_s, struct exec_problem_time_rule *out)
{
	double exact = slowest_s * p->time_multiplier;
	out->exact_s = exact;
	if (p->format == EXEC_PROBLEM_FORMAT_2023_07) {
		double res = p->time_resolution > 0 ? p->time_resolution : 1;
		double steps = ceil(exact / res - 1e-9);
		out->limit_s = (steps < 1 ? 1 : steps) * res;
		out->margin_s = out->limit_s * p->time_safety_margin;
	} else {
		double lim = floor(exact + 0.5);
		out->limit_s = lim < 1 ? 1 : lim;
		double margin = floor(exact * p->time_safety_margin + 0.5);
		out->margin_s = margin > out->limit_s + 1 ? margin : out->limit_s + 1;
	}
}
