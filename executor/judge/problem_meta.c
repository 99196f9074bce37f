/* problem.yaml: the problem's name, type, format version and how its
 * output is validated (validation, validator_flags, validator_protocol).
 * Its limits map is problem_limits.c's. Unknown keys are warnings; a
 * known key with a value the format does not define is an error naming the
 * line. */
#include "executor/judge/problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobspec.h"
#include "executor/judge/problem_internal.h"

static int parse_type_words(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *n, const char *s,
			    struct gv_err *err)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	char *save = NULL;
	for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(w, "pass-fail"))
			p->type = EXEC_PROBLEM_PASS_FAIL;
		else if (!strcmp(w, "scoring"))
			p->type = EXEC_PROBLEM_SCORING;
		else if (!strcmp(w, "interactive"))
			p->interactive = p->custom_validation = true;
		else if (!strcmp(w, "multi-pass"))
			p->multi_pass = p->custom_validation = true;
		else
			return gv_err_set(err, GV_EINVAL, "%s:%zu: type: unsupported '%.40s'", y->file, line_of(n), w);
	}
	return 0;
}

static int parse_format_version(struct exec_problem *p, yaml_node_t *v, struct gv_err *err)
{
	static const char *const legacy[] = {"legacy", "legacy-icpc", NULL};
	static const char *const v2023[] = {"2023-07", "2023-07-draft", "draft", NULL};
	const char *s = yscalar(v);
	if (s && in_list(s, legacy))
		p->format = EXEC_PROBLEM_FORMAT_LEGACY;
	else if (s && in_list(s, v2023))
		p->format = EXEC_PROBLEM_FORMAT_2023_07;
	else
		return gv_err_set(err, GV_EINVAL,
				  "problem.yaml:%zu: problem_format_version: legacy, legacy-icpc, 2023-07 or "
				  "2023-07-draft",
				  line_of(v));
	return 0;
}

static int parse_name(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *v, struct gv_err *err)
{
	if (v->type != YAML_MAPPING_NODE)
		return exec_ystr(y, v, "name", &p->name, err);
	/* Names per language: English if given, else the first. */
	yaml_node_t *pick = NULL;
	FOR_PAIRS(y, v, lk, lv)
	{
		if (!pick || (yscalar(lk) && !strcmp(yscalar(lk), "en")))
			pick = lv;
	}
	return pick ? exec_ystr(y, pick, "name", &p->name, err) : 0;
}

/* type: a string of words, or a list of such strings. */
static int parse_type(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *v, struct gv_err *err)
{
	if (v->type != YAML_SEQUENCE_NODE) {
		if (!yscalar(v))
			return gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: type: expected a string", line_of(v));
		return parse_type_words(p, y, v, yscalar(v), err);
	}
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *w = yaml_document_get_node(&y->doc, *it);
		if (!yscalar(w))
			return gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: type: bad item", line_of(w));
		if (parse_type_words(p, y, w, yscalar(w), err) < 0)
			return -1;
	}
	return 0;
}

/* validation: default | custom [interactive] [score] [multi-pass]. */
static int parse_validation(struct exec_problem *p, yaml_node_t *v, struct gv_err *err)
{
	const char *s = yscalar(v);
	if (!s)
		return gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: validation: expected a string", line_of(v));
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	char *save = NULL;
	bool first = true;
	for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save), first = false) {
		if (first && !strcmp(w, "default"))
			p->custom_validation = false;
		else if (first && !strcmp(w, "custom"))
			p->custom_validation = true;
		else if (!first && p->custom_validation && !strcmp(w, "interactive"))
			p->interactive = true;
		else if (!first && p->custom_validation && !strcmp(w, "score"))
			p->validator_scores = true;
		else if (!first && p->custom_validation && !strcmp(w, "multi-pass"))
			p->multi_pass = true;
		else
			return gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: validation: unsupported '%.40s'",
					  line_of(v), w);
	}
	return 0;
}

static int parse_validator_protocol(struct exec_problem *p, yaml_node_t *v, struct gv_err *err)
{
	const char *s = yscalar(v);
	if (s && !strcmp(s, "kattis"))
		p->validator_protocol = EXEC_PROBLEM_VALIDATOR_KATTIS;
	else if (s && !strcmp(s, "testlib"))
		p->validator_protocol = EXEC_PROBLEM_VALIDATOR_TESTLIB;
	else
		return gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: validator_protocol: kattis or testlib",
				  line_of(v));
	return 0;
}

/* input_file / output_file (Gavel's file I/O tasks): a plain file name in
 * the program's work dir, as a submitted file's name (the sandbox refuses
 * the rest too). */
static int parse_io_file(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *v, const char *key, char **out,
			 struct gv_err *err)
{
	(void)p;
	char *s = NULL;
	if (exec_ystr(y, v, key, &s, err) < 0)
		return -1;
	if (!gv_jobspec_file_name_ok(s)) {
		free(s);
		return gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: %s: a plain file name of letters, digits, '.', "
						  "'_' or '-' (input.txt)", line_of(v), key);
	}
	free(*out);
	*out = s;
	return 0;
}

/* One key k (the string key) with value v of problem.yaml's root mapping. */
static int parse_key(struct exec_problem *p, struct exec_ydoc *y, yaml_node_t *k, const char *key, yaml_node_t *v,
		     double *time_limit, struct gv_err *err)
{
	static const char *const ignored[] = {"uuid", "author", "source", "source_url",
					      "license", "rights_owner", "keywords", "languages", "credits",
					      "constants", "version", "embargo_until", "show_test_data_groups",
					      "allow_file_writing", "name_en", NULL};
	if (!strcmp(key, "problem_format_version"))
		return parse_format_version(p, v, err);
	if (!strcmp(key, "name"))
		return parse_name(p, y, v, err);
	if (!strcmp(key, "type"))
		return parse_type(p, y, v, err);
	if (!strcmp(key, "validation"))
		return parse_validation(p, v, err);
	if (!strcmp(key, "validator_flags"))
		return exec_ystr(y, v, "validator_flags", &p->validator_flags, err);
	if (!strcmp(key, "validator_protocol"))
		return parse_validator_protocol(p, v, err);
	if (!strcmp(key, "limits"))
		return exec_problem_parse_limits(p, y, v, time_limit, err);
	if (!strcmp(key, "input_file") || !strcmp(key, "output_file"))
		return parse_io_file(p, y, v, key, key[0] == 'i' ? &p->input_file : &p->output_file, err);
	if (!strcmp(key, "output_only"))
		return exec_ybool(y, v, "output_only", &p->output_only, err);
	if (!in_list(key, ignored))
		exec_problem_warn(p, "problem.yaml:%zu: unknown key '%.40s'", line_of(k), key);
	return 0;
}

static int parse_root(struct exec_problem *p, struct exec_ydoc *y, double *time_limit, struct gv_err *err)
{
	yaml_node_t *root = yaml_document_get_root_node(&y->doc);
	if (!root) /* an empty file: all defaults */
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: expected a mapping", line_of(root));
	FOR_PAIRS(y, root, k, v)
	{
		const char *key = yscalar(k);
		if (!key || !v)
			return gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: bad key", line_of(k));
		if (parse_key(p, y, k, key, v, time_limit, err) < 0)
			return -1;
	}
	return 0;
}

int exec_problem_parse_yaml(struct exec_problem *p, double *time_limit, struct gv_err *err)
{
	struct exec_ydoc y;
	bool present;
	if (exec_ydoc_load(p, "problem.yaml", &y, &present, err) < 0)
		return -1;
	if (!present) {
		exec_problem_warn(p, "problem.yaml: missing; using the defaults");
		return 0;
	}
	int rc = parse_root(p, &y, time_limit, err);
	exec_ydoc_free(&y);
	return rc;
}
