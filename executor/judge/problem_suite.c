/* suite/suite.yaml: an instructor test suite (executor/suite/README.md)
 * into p->suite. Every file it names must be a regular file directly in
 * suite/ (no link); counts, names and sizes are bounded. Unknown keys are
 * errors here, not warnings: a mistyped `hidden` would show a hidden
 * test. */
#include "executor/judge/problem.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/judge/problem_internal.h"
#include "executor/judge/suite_framework.h"
#include "executor/judge/suite_summary.h"

#define SUITE_YAML "suite/suite.yaml"
#define SUITE_TIME_MS_DEFAULT 2000
#define SUITE_MEMORY_MB_DEFAULT 512

void exec_problem_suite_free(struct exec_suite *s)
{
	if (!s)
		return;
	free(s->framework);
	free(s->language);
	for (size_t i = 0; i < s->nsupport; i++)
		free(s->support[i]);
	free(s->support);
	for (size_t g = 0; g < s->ngroups; g++) {
		/* A test that failed its checks has a name but is not counted. */
		for (size_t t = 0; s->groups[g].tests && t < EXEC_SUITE_TESTS_MAX; t++)
			free(s->groups[g].tests[t].name);
		free(s->groups[g].tests);
		free(s->groups[g].file);
	}
	free(s->groups);
	free(s);
}

const struct exec_suite_test *exec_suite_test_at(const struct exec_suite *s, size_t i,
						 const struct exec_suite_group **g)
{
	for (size_t k = 0; s && k < s->ngroups; k++) {
		if (i < s->groups[k].ntests) {
			*g = &s->groups[k];
			return &s->groups[k].tests[i];
		}
		i -= s->groups[k].ntests;
	}
	*g = NULL;
	return NULL;
}

/* A name gavel-init places as a file: [A-Za-z0-9._-]{1,64}, not . or .. */
static bool file_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64 || !strcmp(s, ".") || !strcmp(s, "..") || s[0] == '.')
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* suite/<name> is a regular file of at most EXEC_SUITE_FILE_MAX bytes. */
static int check_file(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *n, const char *name,
		      struct gv_err *err)
{
	if (!file_name_ok(name))
		return gv_err_set(err, GV_EINVAL, "%s:%zu: '%.64s' is not a file name of [A-Za-z0-9._-] in suite/",
				  y->file, line_of(n), name);
	char rel[96];
	snprintf(rel, sizeof(rel), "suite/%s", name);
	struct gv_err e2;
	int fd = exec_problem_open(p, rel, &e2);
	if (fd < 0)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: %s", y->file, line_of(n), rel, e2.msg);
	struct stat st;
	int rc = fstat(fd, &st);
	close(fd);
	if (rc != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)EXEC_SUITE_FILE_MAX)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s is not a regular file of at most %u bytes", y->file,
				  line_of(n), rel, EXEC_SUITE_FILE_MAX);
	return 0;
}

static int parse_test(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *n, struct exec_suite_group *g,
		      struct gv_err *err)
{
	struct exec_suite *s = p->suite;
	if (g->ntests >= EXEC_SUITE_TESTS_MAX || s->ntests >= EXEC_SUITE_ALL_TESTS_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s:%zu: more than %d tests in a group or %d in all", y->file,
				  line_of(n), EXEC_SUITE_TESTS_MAX, EXEC_SUITE_ALL_TESTS_MAX);
	struct exec_suite_test *t = &g->tests[g->ntests];
	t->points = g->has_points ? 0 : 1;
	if (n->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: a test is a map {name, points}", y->file, line_of(n));
	FOR_PAIRS(y, n, k, v)
	{
		const char *key = yscalar(k);
		int rc;
		if (key && !strcmp(key, "name"))
			rc = exec_ystr(y, v, "name", &t->name, err);
		else if (key && !strcmp(key, "points") && !g->has_points)
			rc = exec_ynum(y, v, "points", 0, 1e6, &t->points, err);
		else if (key && !strcmp(key, "points"))
			rc = gv_err_set(err, GV_EINVAL, "%s:%zu: a test of a group with points has none of its own",
					y->file, line_of(k));
		else
			rc = gv_err_set(err, GV_EINVAL, "%s:%zu: unknown key '%.40s' in a test", y->file, line_of(k),
					key ? key : "?");
		if (rc < 0)
			return -1;
	}
	if (!t->name || !exec_suite_name_ok(t->name, strlen(t->name)))
		return gv_err_set(err, GV_EINVAL, "%s:%zu: a test needs a name of printable ASCII (at most %d bytes)",
				  y->file, line_of(n), EXEC_SUITE_NAME_MAX);
	for (size_t i = 0; i < g->ntests; i++)
		// NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): each of them passed the name check above
		if (!strcmp(g->tests[i].name, t->name))
			return gv_err_set(err, GV_EINVAL, "%s:%zu: test %s twice in %s", y->file, line_of(n), t->name,
					  g->file);
	g->ntests++;
	s->ntests++;
	return 0;
}

static int parse_group(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *n, struct gv_err *err)
{
	struct exec_suite *s = p->suite;
	if (n->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: a group is a map {file, hidden, points, tests}", y->file,
				  line_of(n));
	struct exec_suite_group *g = &s->groups[s->ngroups++];
	yaml_node_t *tests = NULL;
	/* points first: it decides whether the tests may carry their own. */
	FOR_PAIRS(y, n, k, v)
	{
		const char *key = yscalar(k);
		int rc = 0;
		if (key && !strcmp(key, "file")) {
			rc = exec_ystr(y, v, "file", &g->file, err);
			if (rc == 0)
				rc = check_file(p, y, v, g->file, err);
		} else if (key && !strcmp(key, "hidden")) {
			rc = exec_ybool(y, v, "hidden", &g->hidden, err);
		} else if (key && !strcmp(key, "points")) {
			g->has_points = true;
			rc = exec_ynum(y, v, "points", 0, 1e6, &g->points, err);
		} else if (key && !strcmp(key, "tests")) {
			tests = v;
		} else {
			rc = gv_err_set(err, GV_EINVAL, "%s:%zu: unknown key '%.40s' in a group", y->file, line_of(k),
					key ? key : "?");
		}
		if (rc < 0)
			return -1;
	}
	if (!g->file)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: a group needs a file", y->file, line_of(n));
	if (!tests || tests->type != YAML_SEQUENCE_NODE || tests->data.sequence.items.top == tests->data.sequence.items.start)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: group %s needs a list of tests", y->file, line_of(n), g->file);
	for (size_t i = 0; i + 1 < s->ngroups; i++)
		if (!strcmp(s->groups[i].file, g->file))
			return gv_err_set(err, GV_EINVAL, "%s:%zu: %s is two groups", y->file, line_of(n), g->file);
	if (!(g->tests = calloc(EXEC_SUITE_TESTS_MAX, sizeof(*g->tests))))
		return gv_err_errno(err, "calloc");
	for (yaml_node_item_t *it = tests->data.sequence.items.start; it < tests->data.sequence.items.top; it++)
		if (parse_test(p, y, yaml_document_get_node(&y->doc, *it), g, err) < 0)
			return -1;
	s->max_score += g->has_points ? g->points : 0;
	for (size_t i = 0; i < g->ntests; i++)
		s->max_score += g->tests[i].points;
	return 0;
}

static int parse_support(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *v, struct gv_err *err)
{
	struct exec_suite *s = p->suite;
	if (v->type != YAML_SEQUENCE_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: support is a list of file names", y->file, line_of(v));
	size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n > EXEC_SUITE_SUPPORT_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s:%zu: more than %d support files", y->file, line_of(v),
				  EXEC_SUITE_SUPPORT_MAX);
	if (!(s->support = calloc(n + 1, sizeof(*s->support))))
		return gv_err_errno(err, "calloc");
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *f = yaml_document_get_node(&y->doc, *it);
		if (exec_ystr(y, f, "support", &s->support[s->nsupport], err) < 0)
			return -1;
		s->nsupport++;
		if (check_file(p, y, f, s->support[s->nsupport - 1], err) < 0)
			return -1;
	}
	return 0;
}

static int parse_suite(struct exec_problem *p, struct exec_ydoc *y, struct gv_err *err)
{
	struct exec_suite *s = p->suite;
	yaml_node_t *root = yaml_document_get_root_node(&y->doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s: not a map", y->file);
	double time_ms = SUITE_TIME_MS_DEFAULT, memory_mb = SUITE_MEMORY_MB_DEFAULT;
	yaml_node_t *groups = NULL;
	FOR_PAIRS(y, root, k, v)
	{
		const char *key = yscalar(k);
		int rc = 0;
		if (key && !strcmp(key, "framework"))
			rc = exec_ystr(y, v, "framework", &s->framework, err);
		else if (key && !strcmp(key, "language"))
			rc = exec_ystr(y, v, "language", &s->language, err);
		else if (key && !strcmp(key, "time_ms"))
			rc = exec_ynum(y, v, "time_ms", 100, 60000, &time_ms, err);
		else if (key && !strcmp(key, "memory_mb"))
			rc = exec_ynum(y, v, "memory_mb", 32, 4096, &memory_mb, err);
		else if (key && !strcmp(key, "support"))
			rc = parse_support(p, y, v, err);
		else if (key && !strcmp(key, "groups"))
			groups = v;
		else
			rc = gv_err_set(err, GV_EINVAL, "%s:%zu: unknown key '%.40s'", y->file, line_of(k),
					key ? key : "?");
		if (rc < 0)
			return -1;
	}
	if (!s->framework || suite_framework_of(s->framework) < 0)
		return gv_err_set(err, GV_EINVAL, "%s: framework: pytest, junit5, gtest or c", y->file);
	if (!s->language || !*s->language)
		return gv_err_set(err, GV_EINVAL, "%s: language: the language id students submit in", y->file);
	s->time_ms = (uint32_t)time_ms;
	s->memory_mb = (uint32_t)memory_mb;
	if (!groups || groups->type != YAML_SEQUENCE_NODE)
		return gv_err_set(err, GV_EINVAL, "%s: groups: a list of {file, tests}", y->file);
	size_t n = (size_t)(groups->data.sequence.items.top - groups->data.sequence.items.start);
	if (n == 0 || n > EXEC_SUITE_GROUPS_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s: 1 to %d groups", y->file, EXEC_SUITE_GROUPS_MAX);
	if (!(s->groups = calloc(n, sizeof(*s->groups))))
		return gv_err_errno(err, "calloc");
	for (yaml_node_item_t *it = groups->data.sequence.items.start; it < groups->data.sequence.items.top; it++)
		if (parse_group(p, y, yaml_document_get_node(&y->doc, *it), err) < 0)
			return -1;
	for (size_t g = 0; g < s->ngroups; g++)
		for (size_t i = 0; i < s->nsupport; i++)
			// NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): parse_group required a file
			if (!strcmp(s->groups[g].file, s->support[i]))
				return gv_err_set(err, GV_EINVAL, "%s: %s is both a test file and a support file", y->file,
						  s->support[i]);
	if (!(s->max_score > 0) || !isfinite(s->max_score))
		return gv_err_set(err, GV_EINVAL, "%s: the tests carry no points", y->file);
	return 0;
}

int exec_problem_load_suite(struct exec_problem *p, bool *present, struct gv_err *err)
{
	struct exec_ydoc y;
	*present = false;
	if (exec_ydoc_load(p, SUITE_YAML, &y, present, err) < 0)
		return -1;
	if (!*present)
		return 0;
	int rc = -1;
	if (!(p->suite = calloc(1, sizeof(*p->suite))))
		gv_err_errno(err, "calloc");
	else
		rc = parse_suite(p, &y, err);
	exec_ydoc_free(&y);
	if (rc == 0)
		p->type = EXEC_PROBLEM_SCORING;
	return rc;
}
