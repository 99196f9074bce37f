/* Loader, look-ups, argv templates and the toolchain probe for the language
 * definitions in languages/ (one YAML file each). The files are parsed with libyaml's
 * document API against one declarative key table, strictly: a typo in a key
 * must not silently drop a limit. */
#include "languages/lang.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "common/log.h"

/* ---- small helpers ---------------------------------------------------- */

void lang_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **p = argv; *p; p++)
		free(*p);
	free(argv);
}

size_t lang_argv_len(const char *const *argv)
{
	size_t n = 0;
	while (argv && argv[n])
		n++;
	return n;
}

void lang_def_clear(struct lang_def *def)
{
	if (!def)
		return;
	free(def->id);
	free(def->name);
	free(def->version);
	lang_argv_free(def->version_command);
	free(def->version_regex);
	free(def->memory_error);
	free(def->source);
	lang_argv_free(def->compile);
	lang_argv_free(def->run);
	lang_argv_free(def->extensions);
	lang_argv_free(def->packages);
	lang_argv_free(def->host_etc);
	lang_argv_free(def->precompiled_headers);
	free(def->compile_class_archive);
	free(def->path);
	memset(def, 0, sizeof(*def));
}

void lang_registry_free(struct lang_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->n; i++)
		lang_def_clear(&reg->defs[i]);
	free(reg->defs);
	reg->defs = NULL;
	reg->n = 0;
}

/* ---- YAML parsing ------------------------------------------------------ */

struct pctx {
	const char *file;
	yaml_document_t *doc;
	struct gv_err *err;
};

GV_PRINTF(3, 4)
static int perr(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
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

static int get_str(struct pctx *c, yaml_node_t *n, const char *key, char **out)
{
	if (n->type != YAML_SCALAR_NODE)
		return perr(c, n, "%s: expected a string", key);
	size_t len = n->data.scalar.length;
	if (len == 0 || len > LANG_STR_MAX || strlen(scalar(n)) != len)
		return perr(c, n, "%s: empty, too long or contains NUL", key);
	*out = strdup(scalar(n));
	if (!*out)
		return gv_err_errno(c->err, "strdup");
	return 0;
}

static int get_list(struct pctx *c, yaml_node_t *n, const char *key, char ***out, bool allow_empty)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return perr(c, n, "%s: expected a list", key);
	size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (cnt == 0 && !allow_empty)
		return perr(c, n, "%s: must not be empty", key);
	if (cnt > LANG_ARGV_MAX)
		return perr(c, n, "%s: more than %d entries", key, LANG_ARGV_MAX);
	char **v = calloc(cnt + 1, sizeof(*v));
	if (!v)
		return gv_err_errno(c->err, "calloc");
	size_t i = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++, i++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		if (!item || get_str(c, item, key, &v[i]) < 0) {
			if (!item)
				perr(c, n, "%s: bad item", key);
			lang_argv_free(v);
			return -1;
		}
	}
	*out = v;
	return 0;
}

static int get_u32(struct pctx *c, yaml_node_t *n, const char *key, uint32_t *out)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return perr(c, n, "%s: expected a number", key);
	const char *s = scalar(n);
	if (!isdigit((unsigned char)s[0]))
		return perr(c, n, "%s: expected a non-negative integer, got '%.40s'", key, s);
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return perr(c, n, "%s: bad integer '%.40s'", key, s);
	*out = (uint32_t)v;
	return 0;
}

static int get_bool(struct pctx *c, yaml_node_t *n, const char *key, bool *out)
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
	return perr(c, n, "%s: expected true or false", key);
}

static int get_double(struct pctx *c, yaml_node_t *n, const char *key, double *out)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return perr(c, n, "%s: expected a number", key);
	errno = 0;
	char *end;
	double v = strtod(scalar(n), &end);
	if (errno || *end || end == scalar(n) || !isfinite(v))
		return perr(c, n, "%s: bad number '%.40s'", key, scalar(n));
	*out = v;
	return 0;
}

enum ktype { K_STR, K_ARGV, K_LIST, K_U32, K_INT, K_BOOL, K_DOUBLE, K_LIMITS, K_ENTRY };

struct key {
	const char *name;
	enum ktype type;
	size_t off;
	bool required;
};

#define F(field) offsetof(struct lang_def, field)
static const struct key top_keys[] = {
	{"id", K_STR, F(id), true},
	{"name", K_STR, F(name), true},
	{"version", K_STR, F(version), true},
	{"version_command", K_ARGV, F(version_command), true},
	{"version_regex", K_STR, F(version_regex), false},
	{"entry_scan", K_ENTRY, F(entry_scan), false},
	{"packages", K_LIST, F(packages), true},
	{"extensions", K_LIST, F(extensions), true},
	{"judge0_id", K_INT, F(judge0_id), false},
	{"source", K_STR, F(source), true},
	{"compile", K_ARGV, F(compile), false},
	{"run", K_ARGV, F(run), true},
	{"rlimit_as", K_BOOL, F(rlimit_as), true},
	{"host_etc", K_LIST, F(host_etc), false},
	{"precompiled_headers", K_LIST, F(precompiled_headers), false},
	{"compile_class_archive", K_STR, F(compile_class_archive), false},
	{"memory_extra_mb", K_U32, F(memory_extra_mb), false},
	{"memory_error", K_STR, F(memory_error), false},
	{"time_factor", K_DOUBLE, F(time_factor), false},
	{"limits", K_LIMITS, 0, true},
};
#undef F

#define L(field) offsetof(struct lang_limits, field)
static const struct key limit_keys[] = {
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

/* Walks a mapping against a key table: each key at most once, no unknown
 * keys, all required keys present. handle() stores one value. */
typedef int (*store_fn)(struct pctx *c, const struct key *k, yaml_node_t *v, void *target);

static int walk_map(struct pctx *c, yaml_node_t *map, const char *what, const struct key *keys, size_t nkeys,
		    store_fn store, void *target)
{
	bool seen[32] = {0};
	if (map->type != YAML_MAPPING_NODE)
		return perr(c, map, "%s: expected a mapping", what);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		if (!k || !v || k->type != YAML_SCALAR_NODE)
			return perr(c, k, "%s: keys must be strings", what);
		size_t i;
		for (i = 0; i < nkeys; i++)
			if (!strcmp(keys[i].name, scalar(k)))
				break;
		if (i == nkeys)
			return perr(c, k, "%s: unknown key '%.60s'", what, scalar(k));
		if (seen[i])
			return perr(c, k, "%s: key '%s' given twice", what, keys[i].name);
		seen[i] = true;
		if (store(c, &keys[i], v, target) < 0)
			return -1;
	}
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i].required && !seen[i])
			return perr(c, map, "%s: missing required key '%s'", what, keys[i].name);
	return 0;
}

static int store_limit(struct pctx *c, const struct key *k, yaml_node_t *v, void *target)
{
	return get_u32(c, v, k->name, (uint32_t *)((char *)target + k->off));
}

struct limits_pair {
	struct lang_limits *defaults, *max;
};

static const struct key limits_sections[] = {
	{"defaults", K_LIMITS, 0, true},
	{"max", K_LIMITS, 1, true},
};

static int store_section(struct pctx *c, const struct key *k, yaml_node_t *v, void *target)
{
	struct limits_pair *lp = target;
	return walk_map(c, v, k->off ? "limits.max" : "limits.defaults", limit_keys, NKEYS(limit_keys),
			store_limit, k->off ? lp->max : lp->defaults);
}

static int store_top(struct pctx *c, const struct key *k, yaml_node_t *v, void *target)
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
			return perr(c, v, "%s: out of range", k->name);
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
		return perr(c, v, "%s: expected none or java", k->name);
	case K_LIMITS: {
		struct limits_pair lp = {&def->defaults, &def->max};
		return walk_map(c, v, "limits", limits_sections, NKEYS(limits_sections), store_section, &lp);
	}
	}
	return perr(c, v, "internal: bad key type");
}

/* ---- validation -------------------------------------------------------- */

static bool valid_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > LANG_ID_MAX || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
		return false;
	for (; *s; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_' || *s == '-' || *s == '+'))
			return false;
	return true;
}

/* A plain file name in the work dir: no separator, no dot-only names. */
static bool valid_filename(const char *s)
{
	if (!*s || !strcmp(s, ".") || !strcmp(s, "..") || strlen(s) > 255 || !strcmp(s, "job"))
		return false;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* No "." or ".." component, no empty component. */
/* An include name a header file may be built from: relative, no "..",
 * letters, digits and "_+-./" only, ending in ".h" or ".hpp" or with no
 * dot at all (<vector>). */
static bool header_name_ok(const char *p)
{
	size_t n = strlen(p);
	if (n == 0 || n > 128 || p[0] == '/' || p[0] == '.' || strstr(p, "..") || strstr(p, "//") || p[n - 1] == '/')
		return false;
	for (const char *s = p; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("_+-./", *s)))
			return false;
	return true;
}

/* One file name of [A-Za-z0-9._-], not hidden, ending in .jsa. */
static bool class_archive_name_ok(const char *p)
{
	size_t n = strlen(p);
	if (n < 5 || n > 64 || p[0] == '.' || strcmp(p + n - 4, ".jsa") != 0)
		return false;
	for (const char *s = p; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("_.-", *s)))
			return false;
	return true;
}

static bool clean_abs_path(const char *p, const char *prefix)
{
	size_t plen = strlen(prefix);
	if (strncmp(p, prefix, plen) != 0)
		return false;
	const char *s = p + 1;
	while (*s) {
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += len;
		if (*s == '/')
			s++;
	}
	return true;
}

/* argv[0] is a program under /usr or "./name" made by the compile step. */
static bool valid_program(const char *p, bool allow_local)
{
	if (allow_local && !strncmp(p, "./", 2))
		return valid_filename(p + 2);
	return clean_abs_path(p, "/usr/") && p[strlen(p) - 1] != '/';
}

static int check_template(struct pctx *c, char **tmpl, const char *key)
{
	struct lang_vars vars = { .memory_mb = 1, .compile_memory_mb = 1, .source = "x", .main_class = "x" };
	char **out = NULL;
	if (lang_expand_argv((const char *const *)tmpl, &vars, &out, c->err) < 0) {
		gv_err_prefix(c->err, "%s: %s", c->file, key);
		return -1;
	}
	lang_argv_free(out);
	return 0;
}

/* "{version}" is the only placeholder of the display version, and
 * version_regex must compile. */
static int check_version_template(struct pctx *c, const struct lang_def *def, yaml_node_t *root)
{
	for (const char *s = def->version; (s = strchr(s, '{')) != NULL; s++)
		if (strncmp(s, "{version}", 9) != 0)
			return perr(c, root, "version: only {version} may appear in braces");
	if (strchr(def->version, '}') && !strstr(def->version, "{version}"))
		return perr(c, root, "version: unbalanced '}'");
	if (def->version_regex) {
		regex_t re;
		int rc = regcomp(&re, def->version_regex, REG_EXTENDED);
		if (rc != 0) {
			char msg[128];
			regerror(rc, &re, msg, sizeof(msg));
			return perr(c, root, "version_regex: %s", msg);
		}
		size_t groups = re.re_nsub;
		regfree(&re);
		if (groups > 9)
			return perr(c, root, "version_regex: more than 9 groups");
	}
	return 0;
}

static int check_limits(struct pctx *c, const struct lang_limits *l, const char *what, yaml_node_t *root)
{
	const uint32_t *v = (const uint32_t *)l;
	for (size_t i = 0; i < NKEYS(limit_keys); i++)
		if (v[i] == 0)
			return perr(c, root, "%s.%s must be positive", what, limit_keys[i].name);
	return 0;
}

static int validate(struct pctx *c, struct lang_def *def, yaml_node_t *root)
{
	if (!valid_id(def->id))
		return perr(c, root, "id '%.40s': use 1-%d of [a-z0-9_+-], starting with a letter or digit",
			    def->id, LANG_ID_MAX);
	/* The file name is the id, so that finding a definition is trivial. */
	const char *base = strrchr(c->file, '/');
	base = base ? base + 1 : c->file;
	size_t idlen = strlen(def->id);
	if (strncmp(base, def->id, idlen) != 0 || strcmp(base + idlen, ".yaml") != 0)
		return perr(c, root, "id '%s' does not match the file name (want %s.yaml)", def->id, def->id);
	if (!valid_filename(def->source))
		return perr(c, root, "source '%.60s' must be a plain file name", def->source);
	if (!valid_program(def->version_command[0], false))
		return perr(c, root, "version_command: '%.80s' is not a clean absolute path under /usr/",
			    def->version_command[0]);
	if (def->compile && !valid_program(def->compile[0], false))
		return perr(c, root, "compile: '%.80s' is not a clean absolute path under /usr/", def->compile[0]);
	if (!valid_program(def->run[0], def->compile != NULL))
		return perr(c, root, "run: '%.80s' must be an absolute path under /usr/ (or ./name after a compile step)",
			    def->run[0]);
	if (def->compile && check_template(c, def->compile, "compile") < 0)
		return -1;
	if (check_version_template(c, def, root) < 0)
		return -1;
	if (check_template(c, def->run, "run") < 0)
		return -1;
	for (char **e = def->extensions; *e; e++) {
		const char *s = *e;
		if (s[0] != '.' || !s[1] || strlen(s) > 16)
			return perr(c, root, "extension '%.20s' must look like '.cpp'", s);
		for (s++; *s; s++)
			if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '+' || *s == '_'))
				return perr(c, root, "extension '%.20s': lower-case letters and digits only", *e);
	}
	if (lang_argv_len((const char *const *)def->extensions) > LANG_LIST_MAX)
		return perr(c, root, "too many extensions");
	for (char **p = def->packages; *p; p++)
		for (const char *s = *p; *s; s++)
			if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || strchr("+-.:", *s)))
				return perr(c, root, "package '%.40s' is not a Debian package name", *p);
	for (char **p = def->host_etc ? def->host_etc : (char *[]){NULL}; *p; p++)
		if (!clean_abs_path(*p, "/etc/") || !(*p)[5])
			return perr(c, root, "host_etc '%.80s' must be a clean path under /etc/", *p);
	for (char **p = def->precompiled_headers ? def->precompiled_headers : (char *[]){NULL}; *p; p++)
		if (!header_name_ok(*p))
			return perr(c, root, "precompiled header '%.80s' must be a relative include name like bits/stdc++.h",
				    *p);
	if (def->compile_class_archive && !class_archive_name_ok(def->compile_class_archive))
		return perr(c, root, "compile_class_archive '%.80s' must be a file name ending in .jsa",
			    def->compile_class_archive);
	if (def->compile_class_archive && !def->compile)
		return perr(c, root, "compile_class_archive without a compile step");
	if (!(def->time_factor > 0 && def->time_factor <= 10))
		return perr(c, root, "time_factor must be in (0, 10]");
	if (def->memory_extra_mb > 4096)
		return perr(c, root, "memory_extra_mb above 4096");
	if (check_limits(c, &def->defaults, "limits.defaults", root) < 0 ||
	    check_limits(c, &def->max, "limits.max", root) < 0)
		return -1;
	const uint32_t *d = (const uint32_t *)&def->defaults, *m = (const uint32_t *)&def->max;
	for (size_t i = 0; i < NKEYS(limit_keys); i++)
		if (d[i] > m[i])
			return perr(c, root, "limits.defaults.%s is above limits.max.%s", limit_keys[i].name,
				    limit_keys[i].name);
	if (def->defaults.wall_ms < def->defaults.time_ms || def->max.wall_ms < def->max.time_ms)
		return perr(c, root, "wall_ms must not be below time_ms");
	return 0;
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
	struct pctx c = {name, &doc, err};
	int rc = -1;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		gv_err_set(err, GV_ECONFIG, "%s: empty file", name);
		goto out;
	}
	def->time_factor = 1.0;
	if (walk_map(&c, root, "language", top_keys, NKEYS(top_keys), store_top, def) < 0)
		goto out;
	if (validate(&c, def, root) < 0)
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

/* Reads a whole regular file of at most max bytes, not following a final
 * symlink. *out is NUL-terminated and owned by the caller. */
static int read_small_file(int dirfd, const char *name, const char *shown, size_t max, char **out, size_t *len,
			   struct gv_err *err)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return gv_err_errno(err, "open %s", shown);
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int rc = gv_err_errno(err, "fstat %s", shown);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return gv_err_set(err, GV_ECONFIG, "%s: not a regular file", shown);
	}
	if ((size_t)st.st_size > max) {
		close(fd);
		return gv_err_set(err, GV_ELIMIT, "%s: larger than %zu bytes", shown, max);
	}
	char *buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return gv_err_errno(err, "malloc");
	}
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = gv_err_errno(err, "read %s", shown);
			free(buf);
			close(fd);
			return rc;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			close(fd);
			return gv_err_set(err, GV_ELIMIT, "%s: larger than %zu bytes", shown, max);
		}
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int lang_def_load_file(struct lang_def *def, const char *path, struct gv_err *err)
{
	char *text;
	size_t len;
	memset(def, 0, sizeof(*def));
	if (read_small_file(AT_FDCWD, path, path, LANG_FILE_MAX, &text, &len, err) < 0)
		return -1;
	int rc = lang_def_parse(def, path, text, len, err);
	free(text);
	return rc;
}

static int cmp_def(const void *a, const void *b)
{
	return strcmp(((const struct lang_def *)a)->id, ((const struct lang_def *)b)->id);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int check_unique(const struct lang_registry *reg, struct gv_err *err)
{
	for (size_t i = 0; i < reg->n; i++) {
		const struct lang_def *a = &reg->defs[i];
		for (size_t j = i + 1; j < reg->n; j++) {
			const struct lang_def *b = &reg->defs[j];
			if (!strcmp(a->id, b->id))
				return gv_err_set(err, GV_ECONFIG, "%s: id '%s' already defined by %s", b->path, b->id,
						  a->path);
			if (a->judge0_id && a->judge0_id == b->judge0_id)
				return gv_err_set(err, GV_ECONFIG, "%s: judge0_id %d already used by %s", b->path,
						  b->judge0_id, a->path);
			for (char **x = a->extensions; *x; x++)
				for (char **y = b->extensions; *y; y++)
					if (!strcmp(*x, *y))
						return gv_err_set(err, GV_ECONFIG, "%s: extension %s already used by %s",
								  b->path, *y, a->path);
		}
	}
	return 0;
}

int lang_registry_load(struct lang_registry *reg, const char *dir, struct gv_err *err)
{
	memset(reg, 0, sizeof(*reg));
	DIR *d = opendir(dir);
	if (!d)
		return gv_err_errno(err, "opendir %s", dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = -1;
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		if (n == LANG_MAX) {
			gv_err_set(err, GV_ELIMIT, "%s: more than %d language files", dir, LANG_MAX);
			goto out;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nn = realloc(names, ncap * sizeof(*nn));
			if (!nn) {
				gv_err_errno(err, "realloc");
				goto out;
			}
			names = nn;
			cap = ncap;
		}
		if (!(names[n] = strdup(e->d_name))) {
			gv_err_errno(err, "strdup");
			goto out;
		}
		n++;
	}
	if (errno) {
		gv_err_errno(err, "readdir %s", dir);
		goto out;
	}
	if (n == 0) {
		gv_err_set(err, GV_ECONFIG, "%s: no language definitions (*.yaml)", dir);
		goto out;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	reg->defs = calloc(n, sizeof(*reg->defs));
	if (!reg->defs) {
		gv_err_errno(err, "calloc");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path)) {
			gv_err_set(err, GV_ELIMIT, "%s/%s: path too long", dir, names[i]);
			goto out;
		}
		char *text;
		size_t len;
		if (read_small_file(dirfd(d), names[i], path, LANG_FILE_MAX, &text, &len, err) < 0)
			goto out;
		int prc = lang_def_parse(&reg->defs[reg->n], path, text, len, err);
		free(text);
		if (prc < 0)
			goto out;
		reg->n++;
	}
	qsort(reg->defs, reg->n, sizeof(*reg->defs), cmp_def);
	if (check_unique(reg, err) < 0)
		goto out;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	if (rc < 0)
		lang_registry_free(reg);
	return rc;
}

/* ---- look-ups ---------------------------------------------------------- */

const struct lang_def *lang_find(const struct lang_registry *reg, const char *id)
{
	if (!reg || !id)
		return NULL;
	for (size_t i = 0; i < reg->n; i++)
		if (!strcmp(reg->defs[i].id, id))
			return &reg->defs[i];
	return NULL;
}

const struct lang_def *lang_find_by_extension(const struct lang_registry *reg, const char *ext)
{
	if (!reg || !ext)
		return NULL;
	if (ext[0] == '.')
		ext++;
	if (!*ext)
		return NULL;
	for (size_t i = 0; i < reg->n; i++)
		for (char **e = reg->defs[i].extensions; *e; e++)
			if (!strcasecmp(*e + 1, ext))
				return &reg->defs[i];
	return NULL;
}

const struct lang_def *lang_find_by_filename(const struct lang_registry *reg, const char *filename)
{
	if (!filename)
		return NULL;
	const char *base = strrchr(filename, '/');
	base = base ? base + 1 : filename;
	const char *dot = strrchr(base, '.');
	if (!dot || dot == base)
		return NULL;
	return lang_find_by_extension(reg, dot);
}

const struct lang_def *lang_by_judge0_id(const struct lang_registry *reg, int judge0_id)
{
	if (!reg || judge0_id <= 0)
		return NULL;
	for (size_t i = 0; i < reg->n; i++)
		if (reg->defs[i].judge0_id == judge0_id)
			return &reg->defs[i];
	return NULL;
}

/* ---- argv templates ---------------------------------------------------- */

static int expand_one(const char *t, const struct lang_vars *vars, char **out, struct gv_err *err)
{
	char buf[LANG_STR_MAX + 64];
	size_t o = 0;
	for (const char *s = t; *s;) {
		const char *piece;
		size_t plen;
		char num[16];
		if (s[0] == '{' && s[1] == '{') {
			piece = "{", plen = 1, s += 2;
		} else if (s[0] == '}' && s[1] == '}') {
			piece = "}", plen = 1, s += 2;
		} else if (s[0] == '{') {
			const char *e = strchr(s, '}');
			if (!e)
				return gv_err_set(err, GV_ECONFIG, "unbalanced '{' in '%.80s'", t);
			size_t nlen = (size_t)(e - s - 1);
			const char *name = s + 1;
			uint32_t v = 0;
			const char *str = NULL;
			bool is_str = false;
			if (nlen == 9 && !strncmp(name, "memory_mb", 9)) {
				v = vars->memory_mb;
			} else if (nlen == 17 && !strncmp(name, "compile_memory_mb", 17)) {
				v = vars->compile_memory_mb;
			} else if (nlen == 6 && !strncmp(name, "source", 6)) {
				str = vars->source, is_str = true;
			} else if (nlen == 10 && !strncmp(name, "main_class", 10)) {
				str = vars->main_class, is_str = true;
			} else {
				return gv_err_set(err, GV_ECONFIG, "unknown placeholder '%.*s' in '%.80s'",
						  (int)(nlen > 40 ? 40 : nlen + 2), s, t);
			}
			if (is_str && !str)
				return gv_err_set(err, GV_EINVAL, "placeholder '%.*s' has no value", (int)nlen + 2, s);
			if (is_str) {
				piece = str, plen = strlen(str), s = e + 1;
			} else {
				snprintf(num, sizeof(num), "%" PRIu32, v);
				piece = num, plen = strlen(num), s = e + 1;
			}
		} else if (s[0] == '}') {
			return gv_err_set(err, GV_ECONFIG, "unbalanced '}' in '%.80s'", t);
		} else {
			piece = s, plen = 1, s++;
		}
		if (o + plen >= sizeof(buf))
			return gv_err_set(err, GV_ELIMIT, "argument too long: '%.80s'", t);
		memcpy(buf + o, piece, plen);
		o += plen;
	}
	buf[o] = '\0';
	*out = strdup(buf);
	if (!*out)
		return gv_err_errno(err, "strdup");
	return 0;
}

int lang_expand_argv(const char *const *tmpl, const struct lang_vars *vars, char ***out, struct gv_err *err)
{
	*out = NULL;
	size_t n = lang_argv_len(tmpl);
	if (n == 0)
		return gv_err_set(err, GV_EINVAL, "empty argv template");
	if (n > LANG_ARGV_MAX)
		return gv_err_set(err, GV_ELIMIT, "argv template longer than %d", LANG_ARGV_MAX);
	char **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return gv_err_errno(err, "calloc");
	for (size_t i = 0; i < n; i++) {
		if (expand_one(tmpl[i], vars, &v[i], err) < 0) {
			lang_argv_free(v);
			return -1;
		}
	}
	*out = v;
	return 0;
}

/* ---- toolchain probe --------------------------------------------------- */

const char *const lang_toolchain_dirs[] = {
	"/usr/bin", "/usr/include", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/share", NULL,
};

/* Is p inside one of the toolchain folders, compared by components? */
static bool under_usr(const char *p)
{
	for (size_t i = 0; lang_toolchain_dirs[i]; i++) {
		size_t n = strlen(lang_toolchain_dirs[i]);
		if (!strncmp(p, lang_toolchain_dirs[i], n) && p[n] == '/' && p[n + 1] != '\0')
			return true;
	}
	return false;
}

/* Follows path hop by hop; every hop, with its folder resolved, must stay
 * inside the toolchain folders, and the end must be an executable regular
 * file. This mirrors what the sandbox can resolve: it has those folders
 * but not the rest of /usr, nor the host's /etc. */
static int check_usr_program(const char *path, struct gv_err *err)
{
	char cur[PATH_MAX];
	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return gv_err_set(err, GV_ELIMIT, "path too long");
	for (int hop = 0;; hop++) {
		if (hop > 40)
			return gv_err_set(err, GV_ECONFIG, "%s: too many symlinks", path);
		/* Resolve the folder (which may itself hold links, like /lib). */
		char dir[PATH_MAX], real[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", cur);
		char *slash = strrchr(dir, '/');
		const char *base = slash + 1;
		char basecopy[NAME_MAX + 1];
		snprintf(basecopy, sizeof(basecopy), "%s", base);
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (!realpath(dir, real))
			return gv_err_errno(err, "%s: folder %s", path, dir);
		if (snprintf(cur, sizeof(cur), "%s/%s", real, basecopy) >= (int)sizeof(cur))
			return gv_err_set(err, GV_ELIMIT, "path too long");
		if (!under_usr(cur))
			return gv_err_set(err, GV_ECONFIG, "%s: resolves through %s, outside the toolchain folders of /usr (invisible in the sandbox)",
					  path, cur);
		struct stat st;
		if (lstat(cur, &st) < 0)
			return gv_err_errno(err, "%s: %s", path, cur);
		if (!S_ISLNK(st.st_mode)) {
			if (!S_ISREG(st.st_mode) || access(cur, X_OK) < 0)
				return gv_err_set(err, GV_ECONFIG, "%s: %s is not an executable file", path, cur);
			return 0;
		}
		char target[PATH_MAX];
		ssize_t r = readlink(cur, target, sizeof(target) - 1);
		if (r < 0)
			return gv_err_errno(err, "%s: readlink %s", path, cur);
		target[r] = '\0';
		if (target[0] == '/') {
			snprintf(cur, sizeof(cur), "%s", target);
		} else {
			char *ls = strrchr(cur, '/');
			ls[1] = '\0';
			if (strlen(cur) + strlen(target) >= sizeof(cur))
				return gv_err_set(err, GV_ELIMIT, "path too long");
			strcat(cur, target);
		}
	}
}

/* The programs an argv starts: argv[0], and for /usr/bin/env the first word
 * after its NAME=value assignments and options. */
static int check_argv_programs(char *const *argv, const char *what, struct gv_err *err)
{
	if (!argv || strncmp(argv[0], "./", 2) == 0)
		return 0;
	if (check_usr_program(argv[0], err) < 0) {
		gv_err_prefix(err, "%s", what);
		return -1;
	}
	const char *b = strrchr(argv[0], '/');
	if (b && !strcmp(b, "/env")) {
		size_t i = 1;
		while (argv[i] && (strchr(argv[i], '=') || argv[i][0] == '-'))
			i++;
		if (!argv[i])
			return gv_err_set(err, GV_ECONFIG, "%s: env starts no program", what);
		if (argv[i][0] != '/')
			return gv_err_set(err, GV_ECONFIG, "%s: env starts '%.80s', not an absolute path", what, argv[i]);
		if (check_usr_program(argv[i], err) < 0) {
			gv_err_prefix(err, "%s", what);
			return -1;
		}
	}
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The process group is killed at the deadline. */
int lang_run_capture(char *const *argv, int timeout_ms, char *out, size_t outsz, int *status, bool *timed_out,
		     struct gv_err *err)
{
	static char *const envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", NULL};
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return gv_err_errno(err, "pipe2");
	pid_t pid = fork();
	if (pid < 0) {
		int rc = gv_err_errno(err, "fork");
		close(pfd[0]);
		close(pfd[1]);
		return rc;
	}
	if (pid == 0) {
		setpgid(0, 0);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(pfd[1], 2) < 0)
			_exit(126);
		if (chdir("/tmp") < 0)
			_exit(126);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	setpgid(pid, pid); /* both sides, so that the kill below cannot miss */
	close(pfd[1]);
	size_t used = 0;
	long long deadline = now_ms() + timeout_ms;
	*timed_out = false;
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0) {
			*timed_out = true;
			break;
		}
		struct pollfd p = {pfd[0], POLLIN, 0};
		int pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			gv_err_errno(err, "poll");
			*timed_out = true; /* reap below */
			break;
		}
		if (pr == 0)
			continue;
		char buf[4096];
		ssize_t r = read(pfd[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (outsz > 0 && used < outsz - 1) {
			size_t take = (size_t)r < outsz - 1 - used ? (size_t)r : outsz - 1 - used;
			memcpy(out + used, buf, take);
			used += take;
		}
	}
	close(pfd[0]);
	if (outsz > 0)
		out[used] = '\0';
	if (*timed_out)
		kill(-pid, SIGKILL);
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return gv_err_errno(err, "waitpid");
	}
	*status = st;
	return 0;
}

int lang_probe(const struct lang_def *def, int timeout_ms, char *version_out, size_t outsz, struct gv_err *err)
{
	if (version_out && outsz)
		version_out[0] = '\0';
	if (check_argv_programs(def->version_command, "version_command", err) < 0 ||
	    check_argv_programs(def->compile, "compile", err) < 0 ||
	    check_argv_programs(def->run, "run", err) < 0)
		goto fail;
	for (char **p = def->host_etc; p && *p; p++) {
		struct stat st;
		if (stat(*p, &st) < 0) {
			gv_err_errno(err, "host_etc %s", *p);
			goto fail;
		}
	}
	char out[1024];
	int status = 0;
	bool timed_out = false;
	if (lang_run_capture(def->version_command, timeout_ms, out, sizeof(out), &status, &timed_out, err) < 0)
		goto fail;
	if (timed_out) {
		gv_err_set(err, GV_ECONFIG, "version_command did not finish within %d ms", timeout_ms);
		goto fail;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char esc[200];
		gv_err_set(err, GV_ECONFIG, "version_command failed (%s %d): %s",
			   WIFEXITED(status) ? "exit" : "signal",
			   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
			   gv_log_escape(esc, sizeof(esc), out, strlen(out)));
		goto fail;
	}
	char clean[LANG_VERSION_MAX];
	if (lang_version_extract(def, out, clean, sizeof(clean), err) < 0)
		goto fail;
	if (version_out && outsz)
		snprintf(version_out, outsz, "%s", clean);
	return 0;
fail:
	gv_err_prefix(err, "language %s", def->id);
	return -1;
}

/* Keeps printable ASCII of s[0..n) in out (NUL-terminated, truncated),
 * trimmed of spaces at both ends. */
static void clean_copy(const char *s, size_t n, char *out, size_t outsz)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < outsz; i++)
		if ((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f)
			out[o++] = s[i];
	if (outsz)
		out[o] = '\0';
}

int lang_version_extract(const struct lang_def *def, const char *output, char *out, size_t outsz,
			 struct gv_err *err)
{
	if (outsz)
		out[0] = '\0';
	if (!def->version_regex) {
		const char *s = output;
		while (*s == '\n' || *s == '\r' || *s == ' ')
			s++;
		clean_copy(s, strcspn(s, "\r\n"), out, outsz);
		return 0;
	}
	regex_t re;
	if (regcomp(&re, def->version_regex, REG_EXTENDED) != 0)
		return gv_err_set(err, GV_ECONFIG, "version_regex does not compile");
	regmatch_t m[2];
	int rc = regexec(&re, output, 2, m, 0);
	size_t nsub = re.re_nsub;
	regfree(&re);
	if (rc != 0) {
		char esc[120];
		return gv_err_set(err, GV_ECONFIG, "version output does not match version_regex: %s",
				  gv_log_escape(esc, sizeof(esc), output, strcspn(output, "\n")));
	}
	const regmatch_t *g = nsub >= 1 && m[1].rm_so >= 0 ? &m[1] : &m[0];
	clean_copy(output + g->rm_so, (size_t)(g->rm_eo - g->rm_so), out, outsz);
	if (outsz && !out[0])
		return gv_err_set(err, GV_ECONFIG, "version_regex matched an empty version");
	return 0;
}

void lang_display_version(const struct lang_def *def, const char *probed, char *out, size_t outsz)
{
	if (!outsz)
		return;
	const char *ph = strstr(def->version, "{version}");
	if (!ph) {
		snprintf(out, outsz, "%s", def->version);
		return;
	}
	size_t pre = (size_t)(ph - def->version);
	const char *post = ph + 9;
	if (!probed || !*probed) {
		/* Unknown: "Node.js {version}" shows as "Node.js". */
		while (pre && def->version[pre - 1] == ' ')
			pre--;
		if (pre == 0)
			while (*post == ' ')
				post++;
		probed = "";
	}
	snprintf(out, outsz, "%.*s%s%s", (int)pre, def->version, probed, post);
}
