/* Reading the package's YAML (problem.yaml, testdata.yaml): one document
 * at a time, capped at EXEC_PROBLEM_YAML_MAX before libyaml sees it, and
 * typed readers of scalars whose errors name the file and the line. */
#include "executor/judge/problem.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "executor/judge/problem_internal.h"

int exec_ydoc_parse(const char *rel, const char *text, size_t len, struct exec_ydoc *y, struct gv_err *err)
{
	y->file = rel;
	y->loaded = false;
	if (len > EXEC_PROBLEM_YAML_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s: larger than %u bytes", rel, EXEC_PROBLEM_YAML_MAX);
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return gv_err_set(err, GV_EINTERNAL, "yaml_parser_initialize failed");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int rc = 0;
	if (!yaml_parser_load(&parser, &y->doc))
		rc = gv_err_set(err, GV_EINVAL, "%s:%zu: %s", rel, (size_t)parser.problem_mark.line + 1,
				parser.problem ? parser.problem : "YAML error");
	else
		y->loaded = true;
	yaml_parser_delete(&parser);
	return rc;
}

int exec_ydoc_load(struct exec_problem *p, const char *rel, struct exec_ydoc *y, bool *present, struct gv_err *err)
{
	y->file = rel;
	y->loaded = false;
	*present = false;
	struct stat st;
	if (fstatat(p->dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return gv_err_errno(err, "stat %s", rel);
	}
	*present = true;
	char *text;
	size_t len;
	if (exec_problem_read(p, rel, EXEC_PROBLEM_YAML_MAX, &text, &len, err) < 0)
		return -1;
	int rc = exec_ydoc_parse(rel, text, len, y, err);
	free(text);
	return rc;
}

void exec_ydoc_free(struct exec_ydoc *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = false;
}

int exec_ystr(struct exec_ydoc *y, yaml_node_t *n, const char *key, char **out, struct gv_err *err)
{
	const char *s = yscalar(n);
	if (!s)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a string", y->file, line_of(n), key);
	if (strlen(s) > 4096)
		return gv_err_set(err, GV_ELIMIT, "%s:%zu: %s: too long", y->file, line_of(n), key);
	char *d = exec_problem_strdup(s, err);
	if (!d)
		return -1;
	free(*out);
	*out = d;
	return 0;
}

int exec_ynum(struct exec_ydoc *y, yaml_node_t *n, const char *key, double lo, double hi, double *out,
	      struct gv_err *err)
{
	const char *s = yscalar(n);
	char *end;
	errno = 0;
	double v = s ? strtod(s, &end) : NAN;
	if (!s || errno || *end || end == s || !isfinite(v) || v < lo || v > hi)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a number in [%g, %g]", y->file, line_of(n), key,
				  lo, hi);
	*out = v;
	return 0;
}

/* Bounded like exec_ystr. */
int exec_ywords(struct exec_ydoc *y, yaml_node_t *n, const char *key, char **out, struct gv_err *err)
{
	if (n->type == YAML_SCALAR_NODE)
		return exec_ystr(y, n, key, out, err);
	if (n->type != YAML_SEQUENCE_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a string or a list of strings", y->file,
				  line_of(n), key);
	char buf[4097];
	size_t o = 0;
	buf[0] = '\0';
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const char *w = yscalar(yaml_document_get_node(&y->doc, *it));
		if (!w)
			return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a list of strings", y->file,
					  line_of(n), key);
		size_t l = strlen(w);
		if (o + l + 2 > sizeof(buf))
			return gv_err_set(err, GV_ELIMIT, "%s:%zu: %s: too long", y->file, line_of(n), key);
		if (o)
			buf[o++] = ' ';
		memcpy(buf + o, w, l + 1);
		o += l;
	}
	char *d = exec_problem_strdup(buf, err);
	if (!d)
		return -1;
	free(*out);
	*out = d;
	return 0;
}

int exec_ybool(struct exec_ydoc *y, yaml_node_t *n, const char *key, bool *out, struct gv_err *err)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", NULL};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", NULL};
	const char *s = yscalar(n);
	if (s && in_list(s, yes))
		*out = true;
	else if (s && in_list(s, no))
		*out = false;
	else
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected true or false", y->file, line_of(n), key);
	return 0;
}
