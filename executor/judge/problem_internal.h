/* Private to the problem package loader (executor/judge/problem*.c): the
 * package's file access, the YAML readers, and the steps exec_problem_load
 * runs, one file each. Nothing outside those files includes this. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "common/err.h"
#include "executor/judge/problem.h"

#define EXEC_PROBLEM_NAME_MAX 255 /* bytes of one path element */
#define EXEC_PROBLEM_REL_MAX 1024 /* bytes of a package-relative path */

/* ---- problem.c: shared helpers ------------------------------------------ */

/* strdup of s ("" when NULL); NULL with err filled when out of memory. */
char *exec_problem_strdup(const char *s, struct gv_err *err);

/* Adds a warning to p (capped at EXEC_PROBLEM_MAX_WARNINGS, then one "more
 * warnings left out"); a warning lost to memory is not an error. */
GV_PRINTF(2, 3)
void exec_problem_warn(struct exec_problem *p, const char *fmt, ...);

/* ---- problem_fs.c: the package's files ---------------------------------- */

/* A path element we are willing to handle: no separator, not . or .., no
 * control bytes, bounded. */
bool exec_problem_good_name(const char *s);

/* Opens rel (a relative path) under dirfd element by element, never
 * following a symlink. final_flags is used for the last element. */
int exec_problem_open_rel(int dirfd, const char *rel, int final_flags, struct gv_err *err) GV_MUST_CHECK;

/* strcmp over two char * elements, for qsort and bsearch. */
int exec_problem_cmp_cstr(const void *a, const void *b);

/* Reads the names in folder fd (not "." entries), sorted; release with
 * exec_problem_free_names. shown names the folder in messages. */
int exec_problem_list_dir(int fd, const char *shown, char ***out, size_t *n, struct gv_err *err) GV_MUST_CHECK;
void exec_problem_free_names(char **v, size_t n);

/* Lexically resolves a symlink found at dir_rel/name (package-relative
 * folder dir_rel, open as dirfd) and checks that its target is a regular
 * file inside the package reachable without further links. *out is
 * package-relative, owned by the caller. */
int exec_problem_resolve_link(struct exec_problem *p, int dirfd, const char *dir_rel, const char *name, char **out,
			      struct gv_err *err) GV_MUST_CHECK;

/* ---- problem_yaml.c: reading YAML --------------------------------------- */

struct exec_ydoc {
	const char *file; /* package-relative, for messages */
	yaml_document_t doc;
	bool loaded;
};

/* Parses text (len bytes, at most EXEC_PROBLEM_YAML_MAX) into y. */
int exec_ydoc_parse(const char *rel, const char *text, size_t len, struct exec_ydoc *y,
		    struct gv_err *err) GV_MUST_CHECK;
/* Reads and parses package file rel; *present false (and 0) when it does
 * not exist. */
int exec_ydoc_load(struct exec_problem *p, const char *rel, struct exec_ydoc *y, bool *present,
		   struct gv_err *err) GV_MUST_CHECK;
void exec_ydoc_free(struct exec_ydoc *y);

static inline size_t line_of(const yaml_node_t *n)
{
	return n ? (size_t)n->start_mark.line + 1 : 1;
}

static inline const char *yscalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static inline bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/* Typed readers of node n, the value of key (for messages); errors name
 * y->file and n's line. Strings replace *out (freed) and are bounded. */
int exec_ystr(struct exec_ydoc *y, yaml_node_t *n, const char *key, char **out, struct gv_err *err) GV_MUST_CHECK;
int exec_ynum(struct exec_ydoc *y, yaml_node_t *n, const char *key, double lo, double hi, double *out,
	      struct gv_err *err) GV_MUST_CHECK;
/* A string, or a sequence of strings joined with single spaces (2023-07
 * *_args). */
int exec_ywords(struct exec_ydoc *y, yaml_node_t *n, const char *key, char **out, struct gv_err *err) GV_MUST_CHECK;
int exec_ybool(struct exec_ydoc *y, yaml_node_t *n, const char *key, bool *out, struct gv_err *err) GV_MUST_CHECK;

/* Iterates a mapping's pairs (map must be a mapping). */
#define FOR_PAIRS(y, map, k, v)                                                                           \
	for (yaml_node_pair_t *pp_##k = (map)->data.mapping.pairs.start; pp_##k < (map)->data.mapping.pairs.top; \
	     pp_##k++)                                                                                         \
		for (yaml_node_t *k = yaml_document_get_node(&(y)->doc, pp_##k->key),                            \
				 *v = yaml_document_get_node(&(y)->doc, pp_##k->value), *once_##k = k;              \
		     once_##k; once_##k = NULL)

/* ---- the steps of exec_problem_load ------------------------------------- */

/* problem_meta.c: problem.yaml into p; *time_limit gets limits.time_limit
 * (seconds) when given. A missing file is a warning. */
int exec_problem_parse_yaml(struct exec_problem *p, double *time_limit, struct gv_err *err) GV_MUST_CHECK;

/* problem_limits.c: problem.yaml's limits map. */
int exec_problem_parse_limits(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *map, double *time_limit,
			      struct gv_err *err) GV_MUST_CHECK;
/* problem_limits.c: reads .timelimit, fills the format's defaults of the
 * time-limit rule and chooses the time limit (the override, problem.yaml's
 * yaml_time, .timelimit, the default). */
int exec_problem_set_limits(struct exec_problem *p, double yaml_time, const struct exec_problem_opts *opts,
			    struct gv_err *err) GV_MUST_CHECK;

/* problem_testdata.c: the group at package folder dir_rel's testdata.yaml
 * (else test_group.yaml) over g, which holds the inherited settings (group
 * flags in g->output_validator_flags still without the problem's flags). */
int exec_problem_load_testdata(struct exec_problem *p, const char *dir_rel, struct exec_problem_grading *g,
			       struct gv_err *err) GV_MUST_CHECK;
/* A deep copy of src; dst zeroed on failure. */
int exec_problem_grading_copy(struct exec_problem_grading *dst, const struct exec_problem_grading *src,
			      struct gv_err *err) GV_MUST_CHECK;

/* problem_tree.c: data/ into p->root and p->cases. */
int exec_problem_load_data(struct exec_problem *p, struct gv_err *err) GV_MUST_CHECK;

/* problem_suite.c: suite/suite.yaml into p->suite (*present false and
 * p->suite NULL without one); the problem becomes a scoring one. */
int exec_problem_load_suite(struct exec_problem *p, bool *present, struct gv_err *err) GV_MUST_CHECK;
void exec_problem_suite_free(struct exec_suite *s);

/* problem_validators.c: output_validator/ and output_validators/ into
 * p->validators. */
int exec_problem_load_validators(struct exec_problem *p, const struct exec_problem_opts *opts,
				 struct gv_err *err) GV_MUST_CHECK;
