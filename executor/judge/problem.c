/* Kattis / ICPC problem package loader: exec_problem_load's steps in
 * order, the rules that need the whole package, the problem's warnings and
 * its release. See problem.h for the format subset, the defaults and the
 * safety rules. The steps, one file each: problem_meta.c (problem.yaml),
 * problem_limits.c (limits and time-limit rules), problem_tree.c (data/
 * and its groups), problem_testdata.c (testdata.yaml), problem_validators.c
 * (output validators); beneath them problem_yaml.c (reading YAML) and
 * problem_fs.c (the package's files: dirfds, O_NOFOLLOW, symlinks read,
 * never followed by the kernel). */
#include "executor/judge/problem.h"

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jobspec.h"
#include "executor/judge/problem_internal.h"

char *exec_problem_strdup(const char *s, struct gv_err *err)
{
	char *d = strdup(s ? s : "");
	if (!d)
		gv_err_errno(err, "strdup");
	return d;
}

void exec_problem_warn(struct exec_problem *p, const char *fmt, ...)
{
	if (p->nwarnings > EXEC_PROBLEM_MAX_WARNINGS)
		return;
	char buf[512];
	if (p->nwarnings == EXEC_PROBLEM_MAX_WARNINGS) {
		snprintf(buf, sizeof(buf), "more warnings left out");
	} else {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
	}
	char **nw = realloc(p->warnings, (p->nwarnings + 2) * sizeof(*nw));
	if (!nw)
		return; /* a lost warning is not worth failing the load */
	p->warnings = nw;
	nw[p->nwarnings] = strdup(buf);
	if (nw[p->nwarnings])
		p->nwarnings++;
	nw[p->nwarnings] = NULL;
}

const struct exec_problem_node *exec_problem_case_group(const struct exec_problem_node *c)
{
	return c ? c->parent : NULL;
}

static void node_free(struct exec_problem_node *n)
{
	free(n->name);
	free(n->in_path);
	free(n->ans_path);
	if (n->kind == EXEC_PROBLEM_GROUP) {
		exec_problem_grading_free(&n->grading);
		for (size_t i = 0; i < n->nchildren; i++)
			node_free(&n->children[i]);
		free(n->children);
	}
}

void exec_problem_free(struct exec_problem *p)
{
	if (!p)
		return;
	/* dirfd is meaningful only once exec_problem_load set dir. */
	if (p->dir && p->dirfd >= 0)
		close(p->dirfd);
	free(p->dir);
	free(p->name);
	free(p->validator_flags);
	free(p->input_file);
	free(p->output_file);
	node_free(&p->root);
	free(p->cases);
	for (size_t i = 0; i < p->nvalidators; i++) {
		free(p->validators[i].name);
		free(p->validators[i].dir);
		for (char **f = p->validators[i].files; f && *f; f++)
			free(*f);
		free(p->validators[i].files);
	}
	free(p->validators);
	exec_problem_suite_free(p->suite);
	for (size_t i = 0; i < p->nwarnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	memset(p, 0, sizeof(*p));
	p->dirfd = -1;
}

/* The package folder itself is the caller's choice; below it nothing is
 * followed. Fills what does not depend on the package. */
static int open_package(struct exec_problem *p, const char *dir, struct gv_err *err)
{
	memset(p, 0, sizeof(*p));
	p->dirfd = -1;
	if (!(p->dir = exec_problem_strdup(dir, err)))
		return -1;
	p->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0)
		return gv_err_errno(err, "open problem package %s", dir);
	p->type = EXEC_PROBLEM_PASS_FAIL;
	/* Their defaults depend on problem_format_version, which may come
	 * after limits in problem.yaml: exec_problem_set_limits fills them. */
	p->time_multiplier = p->time_safety_margin = p->time_resolution = NAN;
	p->memory_mb = EXEC_PROBLEM_DEFAULT_MEMORY_MB;
	p->output_mb = EXEC_PROBLEM_DEFAULT_OUTPUT_MB;
	p->validation_passes = EXEC_PROBLEM_DEFAULT_VALIDATION_PASSES;
	if (!(p->validator_flags = exec_problem_strdup("", err)))
		return -1;
	return 0;
}

/* Without a name in problem.yaml, the problem is named for its folder. */
static int default_name(struct exec_problem *p, const char *dir, struct gv_err *err)
{
	if (p->name)
		return 0;
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", dir);
	size_t l = strlen(tmp);
	while (l > 1 && tmp[l - 1] == '/')
		tmp[--l] = '\0';
	const char *b = strrchr(tmp, '/');
	p->name = exec_problem_strdup(b ? b + 1 : tmp, err);
	return p->name ? 0 : -1;
}

const char *exec_problem_output_name(const struct exec_problem_node *node, char *buf, size_t n)
{
	const char *base = strrchr(node->name, '/');
	base = base ? base + 1 : node->name;
	snprintf(buf, n, "%s.out", base);
	return buf;
}

/* Output-only: every case's output file name is a distinct name a
 * submitted file may have. */
static int check_output_names(struct exec_problem *p, struct gv_err *err)
{
	if (!p->output_only)
		return 0;
	if (p->suite)
		return gv_err_set(err, GV_EINVAL, "output_only: not with an instructor test suite");
	for (size_t i = 0; i < p->ncases; i++) {
		char a[EXEC_PROBLEM_OUTPUT_NAME_MAX], b[EXEC_PROBLEM_OUTPUT_NAME_MAX];
		exec_problem_output_name(p->cases[i], a, sizeof(a));
		if (!gv_jobspec_file_name_ok(a))
			return gv_err_set(err, GV_EINVAL, "output_only: test %s gives no plain output file name",
					  p->cases[i]->name);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(a, exec_problem_output_name(p->cases[k], b, sizeof(b))))
				return gv_err_set(err, GV_EINVAL, "output_only: tests %s and %s would both be %s",
						  p->cases[k]->name, p->cases[i]->name, a);
	}
	if (p->ncases > GV_JOBSPEC_FILES_MAX)
		return gv_err_set(err, GV_ELIMIT, "output_only: %zu tests, a submission has at most %d files",
				  p->ncases, GV_JOBSPEC_FILES_MAX);
	return 0;
}

/* What problem.yaml asks of the validators against what the package has. */
static int check_validation(struct exec_problem *p, struct gv_err *err)
{
	if (p->custom_validation && p->nvalidators == 0)
		return gv_err_set(err, GV_EINVAL,
				  "validation is custom but there is no output_validators/ (or output_validator/) folder");
	if (p->validator_protocol == EXEC_PROBLEM_VALIDATOR_TESTLIB && p->interactive)
		return gv_err_set(err, GV_EINVAL, "validator_protocol: testlib cannot drive an interactive problem");
	if (!p->custom_validation && p->nvalidators > 0)
		exec_problem_warn(p, "output validators present but validation is default; they are not used");
	if (p->nvalidators > 1)
		exec_problem_warn(p, "%zu output validators; only %s is used", p->nvalidators, p->validators[0].name);
	if (p->multi_pass && (!p->custom_validation || p->validator_protocol != EXEC_PROBLEM_VALIDATOR_KATTIS))
		return gv_err_set(err, GV_EINVAL, "multi-pass validation needs a custom Kattis output validator");
	if (p->multi_pass && p->interactive)
		return gv_err_set(err, GV_EINVAL, "interactive multi-pass problems are not supported");
	if ((p->input_file || p->output_file) && (p->interactive || p->output_only))
		return gv_err_set(err, GV_EINVAL, "input_file / output_file: not with an interactive or output-only "
						  "problem");
	if (p->output_only && (p->interactive || p->multi_pass))
		return gv_err_set(err, GV_EINVAL, "output_only: not with an interactive or multi-pass problem");
	if (p->type == EXEC_PROBLEM_PASS_FAIL && p->validator_scores)
		exec_problem_warn(p, "validation: custom score on a pass-fail problem; scores are ignored");
	return 0;
}

int exec_problem_load(struct exec_problem *p, const char *dir, const struct exec_problem_opts *opts,
		      struct gv_err *err)
{
	if (open_package(p, dir, err) < 0)
		return -1;
	double yaml_time = 0;
	bool suite = false;
	if (exec_problem_parse_yaml(p, &yaml_time, err) < 0 || exec_problem_set_limits(p, yaml_time, opts, err) < 0 ||
	    default_name(p, dir, err) < 0 || exec_problem_load_suite(p, &suite, err) < 0 ||
	    (!suite && exec_problem_load_data(p, err) < 0) || exec_problem_load_validators(p, opts, err) < 0 ||
	    check_validation(p, err) < 0 || check_output_names(p, err) < 0) {
		gv_err_prefix(err, "problem %s", dir);
		return -1;
	}
	return 0;
}
