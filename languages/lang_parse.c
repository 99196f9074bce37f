/* The YAML reader of a language definition: libyaml's document API walked
 * against one declarative key table, strictly (unknown or repeated keys and
 * missing required ones are errors with file:line), so that a typo in a key
 * cannot silently drop a limit. The checks beyond types are lang_validate.c's. */
#include "languages/lang.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "languages/lang_internal.h"

int (lang_perr)(struct lang_pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[GV_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gv_err_set(c->err, GV_ECONFIG, "%s:%zu: %s", c->file,
			  n ? (size_t)n->start_mark.line + 1 : (size_t)1, msg);
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int get_str(struct lang_pctx *c, yaml_node_t *n, const char *key, char **out)
{
	if (n->type != YAML_SCALAR_NODE)
		return lang_perr(c, n, "%s: expected a string", key);
	size_t len = n->data.scalar.length;
	if (len == 0 || len > LANG_STR_MAX || strlen(scalar(n)) != len)
		return lang_perr(c, n, "%s: empty, too long or contains NUL", key);
	*out = strdup(scalar(n));
	if (!*out)
		return gv_err_errno(c->err, "strdup");
	return 0;
}

static int get_list(struct lang_pctx *c, yaml_node_t *n, const char *key, char ***out, bool allow_empty)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return lang_perr(c, n, "%s: expected a list", key);
	size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (cnt == 0 && !allow_empty)
		return lang_perr(c, n, "%s: must not be empty", key);
	if (cnt > LANG_ARGV_MAX)
		return lang_perr(c, n, "%s: more than %d entries", key, LANG_ARGV_MAX);
	char **v = calloc(cnt + 1, sizeof(*v));
	if (!v)
		return gv_err_errno(c->err, "calloc");
	size_t i = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++, i++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		if (!item || get_str(c, item, key, &v[i]) < 0) {
			if (!item)
				lang_perr(c, n, "%s: bad item", key);
			lang_argv_free(v);
			return -1;
		}
	}
	*out = v;
	return 0;
}

static int get_u32(struct lang_pctx *c, yaml_node_t *n, const char *key, uint32_t *out)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return lang_perr(c, n, "%s: expected a number", key);
	const char *s = scalar(n);
	if (!isdigit((unsigned char)s[0]))
		return lang_perr(c, n, "%s: expected a non-negative integer, got '%.40s'", key, s);
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return lang_perr(c, n, "%s: bad integer '%.40s'", key, s);
	*out = (uint32_t)v;
	return 0;
}

static int get_bool(struct lang_pctx *c, yaml_node_t *n, const char *key, bool *out)
{
	if (n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		if (!strcmp(scalar(n), "true")) {
			*out = true;
			return 0;
		}
		if (!strcmp(scalar(n), "false")) {
			*out = false;
			return 0;
		}
	}
	return lang_perr(c, n, "%s: expected true or false", key);
}

static int get_double(struct lang_pctx *c, yaml_node_t *n, const char *key, double *out)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return lang_perr(c, n, "%s: expected a number", key);
	errno = 0;
	char *end;
	double v = strtod(scalar(n), &end);
	if (errno || *end || end == scalar(n) || !isfinite(v))
		return lang_perr(c, n, "%s: bad number '%.40s'", key, scalar(n));
	*out = v;
	return 0;
}

#define F(field) offsetof(struct lang_def, field)
static const struct lang_key top_keys[] = {
	{"id", K_STR, F(id), true},
	{"name", K_STR, F(name), true},
	{"version", K_STR, F(version), true},
	{"version_command", K_ARGV, F(version_command), true},
	{"version_regex", K_STR, F(version_regex), false},
	{"entry_scan", K_ENTRY, F(entry_scan), false},
	{"packages", K_LIST, F(packages), true},
	{"extensions", K_LIST, F(extensions), true},
	{"sources", K_LIST, F(sources), false},
	{"judge0_id", K_INT, F(judge0_id), false},
	{"source", K_STR, F(source), true},
	{"compile", K_ARGV, F(compile), false},
	{"run", K_ARGV, F(run), true},
	{"rlimit_as", K_BOOL, F(rlimit_as), true},
	{"host_etc", K_LIST, F(host_etc), false},
	{"precompiled_headers", K_LIST, F(precompiled_headers), false},
	{"compile_options", K_LIST, F(compile_options), false},
	{"interpreter_options", K_LIST, F(interpreter_options), false},
	{"compile_class_archive", K_STR, F(compile_class_archive), false},
	{"fork_server", K_STR, F(fork_server), false},
	{"memory_extra_mb", K_U32, F(memory_extra_mb), false},
	{"memory_errors", K_LIST, F(memory_errors), false},
	{"time_factor", K_DOUBLE, F(time_factor), false},
	{"limits", K_LIMITS, 0, true},
};
#undef F

#define L(field) offsetof(struct lang_limits, field)
const struct lang_key lang_limit_keys[] = {
	{"time_ms", K_U32, L(time_ms), true},
	{"wall_ms", K_U32, L(wall_ms), true},
	{"memory_mb", K_U32, L(memory_mb), true},
	{"output_kb", K_U32, L(output_kb), true},
	{"procs", K_U32, L(procs), true},
	{"compile_time_ms", K_U32, L(compile_time_ms), true},
	{"compile_wall_ms", K_U32, L(compile_wall_ms), true},
	{"compile_memory_mb", K_U32, L(compile_memory_mb), true},
	{"compile_procs", K_U32, L(compile_procs), true},
};
#undef L
#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))
_Static_assert(NKEYS(lang_limit_keys) == LANG_NLIMIT_KEYS, "a limit key per field of struct lang_limits");

/* Walks a mapping against a key table: each key at most once, no unknown
 * keys, all required keys present. handle() stores one value. */
typedef int (*store_fn)(struct lang_pctx *c, const struct lang_key *k, yaml_node_t *v, void *target);

static int walk_map(struct lang_pctx *c, yaml_node_t *map, const char *what, const struct lang_key *keys, size_t nkeys,
		    store_fn store, void *target)
{
	bool seen[32] = {0};
	if (map->type != YAML_MAPPING_NODE)
		return lang_perr(c, map, "%s: expected a mapping", what);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		if (!k || !v || k->type != YAML_SCALAR_NODE)
			return lang_perr(c, k, "%s: keys must be strings", what);
		size_t i;
		for (i = 0; i < nkeys; i++)
			if (!strcmp(keys[i].name, scalar(k)))
				break;
		if (i == nkeys)
			return lang_perr(c, k, "%s: unknown key '%.60s'", what, scalar(k));
		if (seen[i])
			return lang_perr(c, k, "%s: key '%s' given twice", what, keys[i].name);
		seen[i] = true;
		if (store(c, &keys[i], v, target) < 0)
			return -1;
	}
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i].required && !seen[i])
			return lang_perr(c, map, "%s: missing required key '%s'", what, keys[i].name);
	return 0;
}

static int store_limit(struct lang_pctx *c, const struct lang_key *k, yaml_node_t *v, void *target)
{
	return get_u32(c, v, k->name, (uint32_t *)((char *)target + k->off));
}

struct limits_pair {
	struct lang_limits *defaults, *max;
};

static const struct lang_key limits_sections[] = {
	{"defaults", K_LIMITS, 0, true},
	{"max", K_LIMITS, 1, true},
};

static int store_section(struct lang_pctx *c, const struct lang_key *k, yaml_node_t *v, void *target)
{
	struct limits_pair *lp = target;
	return walk_map(c, v, k->off ? "limits.max" : "limits.defaults", lang_limit_keys, LANG_NLIMIT_KEYS,
			store_limit, k->off ? lp->max : lp->defaults);
}

static int store_top(struct lang_pctx *c, const struct lang_key *k, yaml_node_t *v, void *target)
{
	struct lang_def *def = target;
	void *field = (char *)def + k->off;
	switch (k->type) {
	case K_STR:
		return get_str(c, v, k->name, field);
	case K_ARGV:
		return get_list(c, v, k->name, field, false);
	case K_LIST:
		return get_list(c, v, k->name, field, true);
	case K_U32:
		return get_u32(c, v, k->name, field);
	case K_INT: {
		uint32_t u;
		if (get_u32(c, v, k->name, &u) < 0)
			return -1;
		if (u == 0 || u > 100000)
			return lang_perr(c, v, "%s: out of range", k->name);
		*(int *)field = (int)u;
		return 0;
	}
	case K_BOOL:
		return get_bool(c, v, k->name, field);
	case K_DOUBLE:
		return get_double(c, v, k->name, field);
	case K_ENTRY:
		if (v->type == YAML_SCALAR_NODE && !strcmp(scalar(v), "none")) {
			*(enum lang_entry_scan *)field = LANG_ENTRY_SCAN_NONE;
			return 0;
		}
		if (v->type == YAML_SCALAR_NODE && !strcmp(scalar(v), "java")) {
			*(enum lang_entry_scan *)field = LANG_ENTRY_SCAN_JAVA;
			return 0;
		}
		return lang_perr(c, v, "%s: expected none or java", k->name);
	case K_LIMITS: {
		struct limits_pair lp = {&def->defaults, &def->max};
		return walk_map(c, v, "limits", limits_sections, NKEYS(limits_sections), store_section, &lp);
	}
	}
	return lang_perr(c, v, "internal: bad key type");
}

int lang_def_parse(struct lang_def *def, const char *name, const char *text, size_t len, struct gv_err *err)
{
	memset(def, 0, sizeof(*def));
	if (len > LANG_FILE_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s: larger than %d bytes", name, LANG_FILE_MAX);
	if (memchr(text, '\0', len))
		return gv_err_set(err, GV_ECONFIG, "%s: contains a NUL byte", name);

	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return gv_err_set(err, GV_EINTERNAL, "yaml_parser_initialize failed");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		int rc = gv_err_set(err, GV_ECONFIG, "%s:%zu: %s", name, (size_t)parser.problem_mark.line + 1,
				    parser.problem ? parser.problem : "YAML error");
		yaml_parser_delete(&parser);
		return rc;
	}
	struct lang_pctx c = {name, &doc, err};
	int rc = -1;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		gv_err_set(err, GV_ECONFIG, "%s: empty file", name);
		goto out;
	}
	def->time_factor = 1.0;
	if (walk_map(&c, root, "language", top_keys, NKEYS(top_keys), store_top, def) < 0)
		goto out;
	if (lang_validate(&c, def, root) < 0)
		goto out;
	def->path = strdup(name);
	if (!def->path) {
		gv_err_errno(err, "strdup");
		goto out;
	}
	if (!def->host_etc) {
		def->host_etc = calloc(1, sizeof(char *));
		if (!def->host_etc) {
			gv_err_errno(err, "calloc");
			goto out;
		}
	}
	if (!def->compile_options) {
		def->compile_options = calloc(1, sizeof(char *));
		if (!def->compile_options) {
			gv_err_errno(err, "calloc");
			goto out;
		}
	}
	if (!def->interpreter_options) {
		def->interpreter_options = calloc(1, sizeof(char *));
		if (!def->interpreter_options) {
			gv_err_errno(err, "calloc");
			goto out;
		}
	}
	if (!def->precompiled_headers) {
		def->precompiled_headers = calloc(1, sizeof(char *));
		if (!def->precompiled_headers) {
			gv_err_errno(err, "calloc");
			goto out;
		}
	}
	rc = 0;
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc < 0)
		lang_def_clear(def);
	return rc;
}
