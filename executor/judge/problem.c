/* Kattis / ICPC problem package loader: problem.yaml, .timelimit, the data/
 * group tree with testdata.yaml, and output validators. See problem.h for
 * the format subset, the defaults and the safety rules. Every file is opened
 * relative to the package's dirfd with O_NOFOLLOW; symlinks are read, never
 * followed by the kernel. */
#include "executor/judge/problem.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "common/log.h"
#include "languages/lang.h"

#define NAME_LEN_MAX 255
#define REL_MAX 1024          /* bytes of a package-relative path */
#define DIR_ENTRIES_MAX 20000 /* entries read from one folder */
#define VALIDATOR_FILES_MAX 256
#define VALIDATORS_MAX 16

/* ---- small helpers ----------------------------------------------------- */

static char *xstrdup(const char *s, struct gv_err *err)
{
	char *d = strdup(s ? s : "");
	if (!d)
		gv_err_errno(err, "strdup");
	return d;
}

GV_PRINTF(2, 3)
static void warn(struct exec_problem *p, const char *fmt, ...)
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

/* A path element we are willing to handle: no separator, not . or .., no
 * control bytes, bounded. */
static bool good_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > NAME_LEN_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* Opens rel (a relative path) under dirfd element by element, never
 * following a symlink. final_flags is used for the last element. */
static int open_rel(int dirfd, const char *rel, int final_flags, struct gv_err *err)
{
	char buf[REL_MAX + 1];
	if (strlen(rel) > REL_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s: path too long", rel);
	strcpy(buf, rel);
	int cur = dirfd;
	char *save = NULL, *elem = strtok_r(buf, "/", &save);
	if (!elem)
		return gv_err_set(err, GV_EINVAL, "empty path");
	for (;;) {
		char *next = strtok_r(NULL, "/", &save);
		if (!strcmp(elem, ".") || !strcmp(elem, "..")) {
			if (cur != dirfd)
				close(cur);
			return gv_err_set(err, GV_EINVAL, "%s: '.' and '..' are not allowed", rel);
		}
		int fd = openat(cur, elem, next ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
						: final_flags | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		if (cur != dirfd)
			close(cur);
		if (fd < 0) {
			errno = saved;
			if (errno == ELOOP || errno == ENOTDIR)
				return gv_err_set(err, GV_EINVAL, "%s: a symlink or non-folder on the way", rel);
			return gv_err_errno(err, "open %s", rel);
		}
		if (!next)
			return fd;
		cur = fd;
		elem = next;
	}
}

static int read_fd_all(int fd, const char *shown, size_t max, char **out, size_t *len, struct gv_err *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return gv_err_errno(err, "fstat %s", shown);
	if (!S_ISREG(st.st_mode))
		return gv_err_set(err, GV_EINVAL, "%s: not a regular file", shown);
	if ((uint64_t)st.st_size > max)
		return gv_err_set(err, GV_ELIMIT, "%s: larger than %zu bytes", shown, max);
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return gv_err_errno(err, "malloc");
	size_t n = 0, want = (size_t)st.st_size;
	while (n < want) {
		ssize_t r = read(fd, buf + n, want - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = gv_err_errno(err, "read %s", shown);
			free(buf);
			return rc;
		}
		if (r == 0)
			break; /* shrank meanwhile: take what is there */
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int exec_problem_open(const struct exec_problem *p, const char *rel, struct gv_err *err)
{
	int fd = open_rel(p->dirfd, rel, O_RDONLY | O_NONBLOCK, err);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return gv_err_set(err, GV_EINVAL, "%s: not a regular file", rel);
	}
	return fd;
}

int exec_problem_read(const struct exec_problem *p, const char *rel, size_t max, char **out, size_t *len,
		      struct gv_err *err)
{
	int fd = exec_problem_open(p, rel, err);
	if (fd < 0)
		return -1;
	int rc = read_fd_all(fd, rel, max, out, len, err);
	close(fd);
	return rc;
}

const struct exec_problem_node *exec_problem_case_group(const struct exec_problem_node *c)
{
	return c ? c->parent : NULL;
}

/* ---- freeing ----------------------------------------------------------- */


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
	for (size_t i = 0; i < p->nwarnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	memset(p, 0, sizeof(*p));
	p->dirfd = -1;
}

/* ---- YAML -------------------------------------------------------------- */

struct ydoc {
	const char *file; /* package-relative, for messages */
	yaml_document_t doc;
	bool loaded;
};

static int ydoc_parse(const char *rel, const char *text, size_t len, struct ydoc *y, struct gv_err *err)
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

static int ydoc_load(struct exec_problem *p, const char *rel, struct ydoc *y, bool *present, struct gv_err *err)
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
	int rc = ydoc_parse(rel, text, len, y, err);
	free(text);
	return rc;
}

static void ydoc_free(struct ydoc *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = false;
}

static size_t line_of(const yaml_node_t *n)
{
	return n ? (size_t)n->start_mark.line + 1 : 1;
}

static const char *yscalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int ystr(struct ydoc *y, yaml_node_t *n, const char *key, char **out, struct gv_err *err)
{
	const char *s = yscalar(n);
	if (!s)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a string", y->file, line_of(n), key);
	if (strlen(s) > 4096)
		return gv_err_set(err, GV_ELIMIT, "%s:%zu: %s: too long", y->file, line_of(n), key);
	char *d = xstrdup(s, err);
	if (!d)
		return -1;
	free(*out);
	*out = d;
	return 0;
}

static int ynum(struct ydoc *y, yaml_node_t *n, const char *key, double lo, double hi, double *out,
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

/* Iterates a mapping's pairs; returns -1 if node is not a mapping. */
#define FOR_PAIRS(y, map, k, v)                                                                           \
	for (yaml_node_pair_t *pp_##k = (map)->data.mapping.pairs.start; pp_##k < (map)->data.mapping.pairs.top; \
	     pp_##k++)                                                                                         \
		for (yaml_node_t *k = yaml_document_get_node(&(y)->doc, pp_##k->key),                            \
				 *v = yaml_document_get_node(&(y)->doc, pp_##k->value), *once_##k = k;              \
		     once_##k; once_##k = NULL)

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/* ---- problem.yaml ------------------------------------------------------ */

static int parse_type_words(struct exec_problem *p, struct ydoc *y, yaml_node_t *n, const char *s,
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
		else
			return gv_err_set(err, GV_EINVAL, "%s:%zu: type: unsupported '%.40s'", y->file, line_of(n), w);
	}
	return 0;
}

static int parse_limits(struct exec_problem *p, struct ydoc *y, yaml_node_t *map, double *time_limit,
			struct gv_err *err)
{
	static const char *const ignored[] = {"code", "compilation_time", "compilation_memory",
					      "validation_time", "validation_memory", "validation_output",
					      "validation_passes", NULL};
	if (map->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: limits: expected a mapping", y->file, line_of(map));
	FOR_PAIRS(y, map, k, v)
	{
		const char *key = yscalar(k);
		double d;
		if (!key || !v)
			return gv_err_set(err, GV_EINVAL, "%s:%zu: limits: bad key", y->file, line_of(k));
		if (!strcmp(key, "time_limit")) {
			if (ynum(y, v, "limits.time_limit", 0.001, 3600, time_limit, err) < 0)
				return -1;
		} else if (!strcmp(key, "time_multiplier")) {
			if (ynum(y, v, "limits.time_multiplier", 1, 1000, &p->time_multiplier, err) < 0)
				return -1;
		} else if (!strcmp(key, "time_safety_margin")) {
			if (ynum(y, v, "limits.time_safety_margin", 1, 1000, &p->time_safety_margin, err) < 0)
				return -1;
		} else if (!strcmp(key, "time_resolution")) {
			if (ynum(y, v, "limits.time_resolution", 0.001, 60, &p->time_resolution, err) < 0)
				return -1;
		} else if (!strcmp(key, "time_multipliers")) {
			if (v->type != YAML_MAPPING_NODE)
				return gv_err_set(err, GV_EINVAL, "%s:%zu: limits.time_multipliers: expected a mapping",
						  y->file, line_of(v));
			FOR_PAIRS(y, v, k2, v2)
			{
				const char *key2 = yscalar(k2);
				if (key2 && !strcmp(key2, "ac_to_time_limit")) {
					if (ynum(y, v2, "limits.time_multipliers.ac_to_time_limit", 1, 1000,
						 &p->time_multiplier, err) < 0)
						return -1;
				} else if (key2 && !strcmp(key2, "time_limit_to_tle")) {
					if (ynum(y, v2, "limits.time_multipliers.time_limit_to_tle", 1, 1000,
						 &p->time_safety_margin, err) < 0)
						return -1;
				} else {
					warn(p, "%s:%zu: unknown key 'limits.time_multipliers.%.40s'", y->file, line_of(k2),
					     key2 ? key2 : "?");
				}
			}
		} else if (!strcmp(key, "memory")) {
			if (ynum(y, v, "limits.memory", 1, 65536, &d, err) < 0)
				return -1;
			p->memory_mb = (uint32_t)d;
		} else if (!strcmp(key, "output")) {
			if (ynum(y, v, "limits.output", 1, 1024, &d, err) < 0)
				return -1;
			p->output_mb = (uint32_t)d;
		} else if (!in_list(key, ignored)) {
			warn(p, "%s:%zu: unknown key 'limits.%.40s'", y->file, line_of(k), key);
		}
	}
	return 0;
}

static int parse_problem_yaml(struct exec_problem *p, double *time_limit, struct gv_err *err)
{
	static const char *const ignored[] = {"uuid", "author", "source", "source_url",
					      "license", "rights_owner", "keywords", "languages", "credits",
					      "constants", "version", "embargo_until", "show_test_data_groups",
					      "allow_file_writing", "name_en", NULL};
	struct ydoc y;
	bool present;
	if (ydoc_load(p, "problem.yaml", &y, &present, err) < 0)
		return -1;
	if (!present) {
		warn(p, "problem.yaml: missing; using the defaults");
		return 0;
	}
	int rc = -1;
	yaml_node_t *root = yaml_document_get_root_node(&y.doc);
	if (!root) { /* an empty file: all defaults */
		rc = 0;
		goto out;
	}
	if (root->type != YAML_MAPPING_NODE) {
		gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: expected a mapping", line_of(root));
		goto out;
	}
	FOR_PAIRS(&y, root, k, v)
	{
		const char *key = yscalar(k);
		if (!key || !v) {
			gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: bad key", line_of(k));
			goto out;
		}
		if (!strcmp(key, "problem_format_version")) {
			static const char *const legacy[] = {"legacy", "legacy-icpc", NULL};
			static const char *const v2023[] = {"2023-07", "2023-07-draft", "draft", NULL};
			const char *s = yscalar(v);
			if (s && in_list(s, legacy)) {
				p->format = EXEC_PROBLEM_FORMAT_LEGACY;
			} else if (s && in_list(s, v2023)) {
				p->format = EXEC_PROBLEM_FORMAT_2023_07;
			} else {
				gv_err_set(err, GV_EINVAL,
					   "problem.yaml:%zu: problem_format_version: legacy, legacy-icpc, 2023-07 or "
					   "2023-07-draft",
					   line_of(v));
				goto out;
			}
		} else if (!strcmp(key, "name")) {
			if (v->type == YAML_MAPPING_NODE) {
				/* Names per language: English if given, else the first. */
				yaml_node_t *pick = NULL;
				FOR_PAIRS(&y, v, lk, lv)
				{
					if (!pick || (yscalar(lk) && !strcmp(yscalar(lk), "en")))
						pick = lv;
				}
				if (pick && ystr(&y, pick, "name", &p->name, err) < 0)
					goto out;
			} else if (ystr(&y, v, "name", &p->name, err) < 0) {
				goto out;
			}
		} else if (!strcmp(key, "type")) {
			if (v->type == YAML_SEQUENCE_NODE) {
				for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
				     it++) {
					yaml_node_t *w = yaml_document_get_node(&y.doc, *it);
					if (!yscalar(w) || parse_type_words(p, &y, w, yscalar(w), err) < 0) {
						if (!yscalar(w))
							gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: type: bad item",
								   line_of(w));
						goto out;
					}
				}
			} else if (!yscalar(v) || parse_type_words(p, &y, v, yscalar(v), err) < 0) {
				if (!yscalar(v))
					gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: type: expected a string", line_of(v));
				goto out;
			}
		} else if (!strcmp(key, "validation")) {
			const char *s = yscalar(v);
			if (!s) {
				gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: validation: expected a string", line_of(v));
				goto out;
			}
			char buf[128];
			snprintf(buf, sizeof(buf), "%s", s);
			char *save = NULL;
			bool first = true;
			for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save), first = false) {
				if (first && !strcmp(w, "default")) {
					p->custom_validation = false;
				} else if (first && !strcmp(w, "custom")) {
					p->custom_validation = true;
				} else if (!first && p->custom_validation && !strcmp(w, "interactive")) {
					p->interactive = true;
				} else if (!first && p->custom_validation && !strcmp(w, "score")) {
					p->validator_scores = true;
				} else {
					gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: validation: unsupported '%.40s'",
						   line_of(v), w);
					goto out;
				}
			}
		} else if (!strcmp(key, "validator_flags")) {
			if (ystr(&y, v, "validator_flags", &p->validator_flags, err) < 0)
				goto out;
		} else if (!strcmp(key, "validator_protocol")) {
			const char *s = yscalar(v);
			if (s && !strcmp(s, "kattis")) {
				p->validator_protocol = EXEC_PROBLEM_VALIDATOR_KATTIS;
			} else if (s && !strcmp(s, "testlib")) {
				p->validator_protocol = EXEC_PROBLEM_VALIDATOR_TESTLIB;
			} else {
				gv_err_set(err, GV_EINVAL, "problem.yaml:%zu: validator_protocol: kattis or testlib",
					   line_of(v));
				goto out;
			}
		} else if (!strcmp(key, "limits")) {
			if (parse_limits(p, &y, v, time_limit, err) < 0)
				goto out;
		} else if (!in_list(key, ignored)) {
			warn(p, "problem.yaml:%zu: unknown key '%.40s'", line_of(k), key);
		}
	}
	rc = 0;
out:
	ydoc_free(&y);
	return rc;
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

/* ---- testdata.yaml ----------------------------------------------------- */

static int join_flags(const char *a, const char *b, char **out, struct gv_err *err)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *s = malloc(n);
	if (!s)
		return gv_err_errno(err, "malloc");
	snprintf(s, n, "%s%s%s", a, *a && *b ? " " : "", b);
	free(*out);
	*out = s;
	return 0;
}

/* A string, or a sequence of strings joined with single spaces (2023-07
 * *_args); bounded like ystr. */
static int ywords(struct ydoc *y, yaml_node_t *n, const char *key, char **out, struct gv_err *err)
{
	if (n->type == YAML_SCALAR_NODE)
		return ystr(y, n, key, out, err);
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
	char *d = xstrdup(buf, err);
	if (!d)
		return -1;
	free(*out);
	*out = d;
	return 0;
}

static int ybool(struct ydoc *y, yaml_node_t *n, const char *key, bool *out, struct gv_err *err)
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

static int parse_range(struct ydoc *y, yaml_node_t *n, struct exec_problem_grading *g, struct gv_err *err)
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
static int parse_max_score(struct ydoc *y, yaml_node_t *n, const char *key, double *out, struct gv_err *err)
{
	const char *s = yscalar(n);
	if (s && !strcmp(s, "unbounded")) {
		*out = INFINITY;
		return 0;
	}
	if (!s || ynum(y, n, key, 0, 1e9, out, err) < 0)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a number >= 0 or unbounded", y->file,
				  line_of(n), key);
	return 0;
}

static int parse_aggregation(struct ydoc *y, yaml_node_t *n, const char *key, bool pass_fail_ok,
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
static int parse_scoring_map(struct exec_problem *p, struct ydoc *y, yaml_node_t *map, const char *what,
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
			warn(p, "%s:%zu: %s is not supported; the group is judged regardless", y->file, line_of(k),
			     shown);
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
			warn(p, "%s:%zu: unknown key '%s'", y->file, line_of(k), shown);
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
			warn(p, "%s:%zu: grader_flags: '%.40s' is for the custom grader; ignored", file, line, w);
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
static int parse_validator_flags_map(struct exec_problem *p, struct ydoc *y, yaml_node_t *map,
				     struct exec_problem_grading *g, struct gv_err *err)
{
	FOR_PAIRS(y, map, k, v)
	{
		const char *key = yscalar(k);
		if (key && v && !strcmp(key, "flags")) {
			if (ystr(y, v, "output_validator_flags.flags", &g->output_validator_flags, err) < 0)
				return -1;
		} else if (key && v && !strcmp(key, "name")) {
			if (!yscalar(v))
				return gv_err_set(err, GV_EINVAL, "%s:%zu: output_validator_flags.name: expected a string",
						  y->file, line_of(v));
			warn(p, "%s:%zu: output_validator_flags.name: Gavel runs the package's first output validator "
				"for every group", y->file, line_of(v));
		} else {
			return gv_err_set(err, GV_EINVAL, "%s:%zu: output_validator_flags: a string, or a map with name "
					  "and flags", y->file, line_of(k));
		}
	}
	return 0;
}

/* input_validator_flags / input_validator_args: Gavel does not validate
 * inputs; checked for shape and kept as written when a string. */
static int parse_input_flags(struct ydoc *y, yaml_node_t *v, const char *key, struct exec_problem_grading *g,
			     struct gv_err *err)
{
	if (v->type == YAML_SCALAR_NODE || v->type == YAML_SEQUENCE_NODE)
		return ywords(y, v, key, &g->input_validator_flags, err);
	if (v->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: a string, a list or a map", y->file, line_of(v), key);
	FOR_PAIRS(y, v, k2, v2)
	{
		char *tmp = NULL;
		if (!yscalar(k2) || !v2 || ywords(y, v2, key, &tmp, err) < 0) {
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
	g->grader_flags = xstrdup("", err);
	g->output_validator_flags = xstrdup("", err);
	g->input_validator_flags = xstrdup("", err);
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

static int parse_testdata_doc(struct exec_problem *p, struct ydoc *y, struct exec_problem_grading *g,
			      struct gv_err *err)
{
	static const char *const ignored[] = {"hint", "description", NULL};
	yaml_node_t *root = yaml_document_get_root_node(&y->doc);
	if (!root)
		return 0; /* empty: what the group inherited */
	if (root->type != YAML_MAPPING_NODE)
		return gv_err_set(err, GV_EINVAL, "%s:%zu: expected a mapping", y->file, line_of(root));
	const char *rel = y->file;
	struct reject_policy pol = {-1, -1};
	/* The legacy format: a testdata.yaml replaces what the group
	 * inherited. 2023-07: keys are inherited one by one; scoring is not. */
	g->scoring_set = g->aggregation_set = false;
	g->max_score = NAN;
	if (p->format == EXEC_PROBLEM_FORMAT_LEGACY) {
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
	yaml_node_t *flags_node = NULL, *range_node = NULL, *score_node = NULL;
	FOR_PAIRS(y, root, k, v)
	{
		const char *key = yscalar(k);
		if (!key || !v)
			return gv_err_set(err, GV_EINVAL, "%s:%zu: bad key", rel, line_of(k));
		if (!strcmp(key, "on_reject")) {
			const char *s = yscalar(v);
			if (s && !strcmp(s, "break")) {
				pol.brk = 1;
			} else if (s && !strcmp(s, "continue")) {
				pol.brk = 0;
			} else if (s && !strcmp(s, "first_error")) {
				pol = (struct reject_policy){1, 1};
			} else if (s && !strcmp(s, "worst_error")) {
				pol = (struct reject_policy){0, 0};
			} else if (s && !strcmp(s, "grade")) {
				pol = (struct reject_policy){0, 1};
			} else {
				return gv_err_set(err, GV_EINVAL,
						  "%s:%zu: on_reject: break or continue (Gavel also reads first_error, "
						  "worst_error, grade)",
						  rel, line_of(v));
			}
		} else if (!strcmp(key, "grading") && v->type == YAML_MAPPING_NODE) {
			if (parse_scoring_map(p, y, v, "grading", g, err) < 0)
				return -1;
		} else if (!strcmp(key, "grading")) {
			const char *s = yscalar(v);
			if (!s || (strcmp(s, "default") && strcmp(s, "custom")))
				return gv_err_set(err, GV_EINVAL, "%s:%zu: grading: default or custom", rel, line_of(v));
			g->custom_grader = !strcmp(s, "custom");
			if (g->custom_grader)
				warn(p, "%s:%zu: grading: custom is not supported; the default grader judges", rel,
				     line_of(v));
		} else if (!strcmp(key, "scoring")) {
			if (parse_scoring_map(p, y, v, "scoring", g, err) < 0)
				return -1;
		} else if (!strcmp(key, "grader_flags")) {
			if (ystr(y, v, "grader_flags", &g->grader_flags, err) < 0)
				return -1;
			flags_node = v;
		} else if (!strcmp(key, "output_validator_flags")) {
			if (v->type == YAML_MAPPING_NODE) {
				if (parse_validator_flags_map(p, y, v, g, err) < 0)
					return -1;
			} else if (ystr(y, v, "output_validator_flags", &g->output_validator_flags, err) < 0) {
				return -1;
			}
		} else if (!strcmp(key, "output_validator_args")) {
			if (ywords(y, v, "output_validator_args", &g->output_validator_flags, err) < 0)
				return -1;
		} else if (!strcmp(key, "input_validator_flags") || !strcmp(key, "input_validator_args")) {
			if (parse_input_flags(y, v, key, g, err) < 0)
				return -1;
		} else if (!strcmp(key, "accept_score")) {
			if (ynum(y, v, "accept_score", -1e9, 1e9, &g->accept_score, err) < 0)
				return -1;
			score_node = k;
		} else if (!strcmp(key, "reject_score")) {
			if (ynum(y, v, "reject_score", -1e9, 1e9, &g->reject_score, err) < 0)
				return -1;
			score_node = k;
		} else if (!strcmp(key, "range")) {
			if (parse_range(y, v, g, err) < 0)
				return -1;
			range_node = k;
		} else if (!strcmp(key, "full_feedback")) {
			bool b;
			if (ybool(y, v, "full_feedback", &b, err) < 0)
				return -1;
			g->full_feedback = b;
		} else if (!strcmp(key, "static_validation")) {
			bool b = true;
			if (v->type == YAML_MAPPING_NODE) {
				FOR_PAIRS(y, v, k2, v2)
				{
					const char *key2 = yscalar(k2);
					double d;
					char *tmp = NULL;
					int r = 0;
					if (key2 && v2 && !strcmp(key2, "args"))
						r = ywords(y, v2, "static_validation.args", &tmp, err);
					else if (key2 && v2 && !strcmp(key2, "score"))
						r = parse_max_score(y, v2, "static_validation.score", &d, err);
					else
						warn(p, "%s:%zu: unknown key 'static_validation.%.40s'", rel, line_of(k2),
						     key2 ? key2 : "?");
					free(tmp);
					if (r < 0)
						return -1;
				}
			} else if (ybool(y, v, "static_validation", &b, err) < 0) {
				return gv_err_set(err, GV_EINVAL, "%s:%zu: static_validation: true, false or a map",
						  rel, line_of(v));
			}
			if (b)
				warn(p, "%s:%zu: static_validation: Gavel has no static validators; not run", rel,
				     line_of(k));
		} else if (!strcmp(key, "args")) {
			char *tmp = NULL;
			int r = ywords(y, v, "args", &tmp, err);
			bool any = tmp && *tmp;
			free(tmp);
			if (r < 0)
				return -1;
			if (any)
				warn(p, "%s:%zu: args: submissions get no command-line arguments here; ignored", rel,
				     line_of(k));
		} else if (in_list(key, ignored)) {
			if (!yscalar(v))
				return gv_err_set(err, GV_EINVAL, "%s:%zu: %s: expected a string", rel, line_of(v), key);
		} else {
			warn(p, "%s:%zu: unknown key '%.40s'", rel, line_of(k), key);
		}
	}
	if (flags_node) {
		struct reject_policy from_flags = {-1, -1};
		if (apply_grader_flags(p, g, &from_flags, rel, line_of(flags_node), err) < 0)
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
	if (p->type != EXEC_PROBLEM_SCORING && (range_node || score_node || g->scoring_set))
		warn(p, "%s:%zu: scores are for scoring problems; ignored on a pass-fail one", rel,
		     line_of(range_node ? range_node : score_node ? score_node : root));
	return 0;
}

int exec_problem_parse_testdata(struct exec_problem *p, const char *file, const char *text, size_t len,
				struct exec_problem_grading *g, struct gv_err *err)
{
	struct ydoc y;
	if (ydoc_parse(file, text, len, &y, err) < 0)
		return -1;
	int rc = parse_testdata_doc(p, &y, g, err);
	ydoc_free(&y);
	return rc;
}

/* g holds the inherited settings on entry (group flags in
 * g->output_validator_flags still without the problem's flags). The group's
 * testdata.yaml, else its test_group.yaml (the later 2023-07 drafts). */
static int parse_testdata_yaml(struct exec_problem *p, const char *dir_rel, struct exec_problem_grading *g,
			       struct gv_err *err)
{
	static const char *const names[] = {"testdata.yaml", "test_group.yaml"};
	for (size_t i = 0; i < 2; i++) {
		char rel[REL_MAX + 32];
		snprintf(rel, sizeof(rel), "%s/%s", dir_rel, names[i]);
		struct ydoc y;
		bool present;
		if (ydoc_load(p, rel, &y, &present, err) < 0)
			return -1;
		if (!present)
			continue;
		int rc = parse_testdata_doc(p, &y, g, err);
		ydoc_free(&y);
		return rc;
	}
	/* 2023-07: scoring is not inherited. */
	g->scoring_set = g->aggregation_set = false;
	g->max_score = NAN;
	return 0;
}

static int grading_copy(struct exec_problem_grading *dst, const struct exec_problem_grading *src, struct gv_err *err)
{
	*dst = *src;
	dst->grader_flags = xstrdup(src->grader_flags, err);
	dst->output_validator_flags = xstrdup(src->output_validator_flags, err);
	dst->input_validator_flags = xstrdup(src->input_validator_flags, err);
	if (!dst->grader_flags || !dst->output_validator_flags || !dst->input_validator_flags) {
		exec_problem_grading_free(dst);
		memset(dst, 0, sizeof(*dst));
		return -1;
	}
	return 0;
}

/* ---- the data tree ----------------------------------------------------- */

struct loader {
	struct exec_problem *p;
	size_t ncases;
};

/* Lexically resolves a symlink found at dir_rel/name (package-relative
 * folder) and checks that its target is a regular file inside the package
 * reachable without further links. *out is package-relative. */
static int resolve_link(struct exec_problem *p, int dirfd, const char *dir_rel, const char *name, char **out,
			struct gv_err *err)
{
	char target[REL_MAX + 1];
	ssize_t r = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (r < 0)
		return gv_err_errno(err, "readlink %s/%s", dir_rel, name);
	target[r] = '\0';
	if (target[0] == '/' || (size_t)r >= REL_MAX)
		return gv_err_set(err, GV_EINVAL, "%s/%s: symlink must be relative and stay inside the package", dir_rel,
				  name);
	/* Components of dir_rel, then of target, with ".." popping. */
	char joined[2 * REL_MAX + 2];
	snprintf(joined, sizeof(joined), "%s/%s", dir_rel, target);
	char *stack[128];
	size_t depth = 0;
	char *save = NULL;
	for (char *e = strtok_r(joined, "/", &save); e; e = strtok_r(NULL, "/", &save)) {
		if (!strcmp(e, "."))
			continue;
		if (!strcmp(e, "..")) {
			if (depth == 0)
				return gv_err_set(err, GV_EINVAL, "%s/%s: symlink leads outside the package", dir_rel,
						  name);
			depth--;
			continue;
		}
		if (depth == 128)
			return gv_err_set(err, GV_ELIMIT, "%s/%s: symlink target too deep", dir_rel, name);
		stack[depth++] = e;
	}
	if (depth == 0)
		return gv_err_set(err, GV_EINVAL, "%s/%s: symlink to the package root", dir_rel, name);
	char res[REL_MAX + 1];
	size_t o = 0;
	for (size_t i = 0; i < depth; i++) {
		size_t l = strlen(stack[i]);
		if (o + l + 2 > sizeof(res))
			return gv_err_set(err, GV_ELIMIT, "%s/%s: symlink target too long", dir_rel, name);
		if (i)
			res[o++] = '/';
		memcpy(res + o, stack[i], l);
		o += l;
	}
	res[o] = '\0';
	int fd = exec_problem_open(p, res, err);
	if (fd < 0) {
		gv_err_prefix(err, "%s/%s: symlink target", dir_rel, name);
		return -1;
	}
	close(fd);
	*out = xstrdup(res, err);
	return *out ? 0 : -1;
}

/* The package-relative path of a test file: itself, or its symlink's
 * target. st is its lstat. */
static int file_path(struct exec_problem *p, int dirfd, const char *dir_rel, const char *name,
		     const struct stat *st, char **out, struct gv_err *err)
{
	if (S_ISLNK(st->st_mode))
		return resolve_link(p, dirfd, dir_rel, name, out, err);
	if (!S_ISREG(st->st_mode))
		return gv_err_set(err, GV_EINVAL, "%s/%s: not a regular file", dir_rel, name);
	char buf[REL_MAX + NAME_LEN_MAX + 2];
	snprintf(buf, sizeof(buf), "%s/%s", dir_rel, name);
	*out = xstrdup(buf, err);
	return *out ? 0 : -1;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct exec_problem_node *)a)->name, ((const struct exec_problem_node *)b)->name);
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the names in folder fd (not "." entries), sorted. */
static int list_dir(int fd, const char *shown, char ***out, size_t *n, struct gv_err *err)
{
	*out = NULL;
	*n = 0;
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return gv_err_errno(err, "open %s", shown);
	DIR *d = fdopendir(dfd);
	if (!d) {
		int rc = gv_err_errno(err, "fdopendir %s", shown);
		close(dfd);
		return rc;
	}
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int rc = -1;
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (cnt == DIR_ENTRIES_MAX) {
			gv_err_set(err, GV_ELIMIT, "%s: more than %d entries", shown, DIR_ENTRIES_MAX);
			goto out;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 32;
			char **nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				gv_err_errno(err, "realloc");
				goto out;
			}
			v = nv;
		}
		if (!(v[cnt] = strdup(e->d_name))) {
			gv_err_errno(err, "strdup");
			goto out;
		}
		cnt++;
		errno = 0;
	}
	if (errno) {
		gv_err_errno(err, "readdir %s", shown);
		goto out;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_cstr);
	*out = v;
	*n = cnt;
	v = NULL;
	rc = 0;
out:
	if (v) {
		for (size_t i = 0; i < cnt; i++)
			free(v[i]);
		free(v);
	}
	closedir(d);
	return rc;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int push_child(struct exec_problem_node *g, size_t *cap, struct exec_problem_node **out, struct gv_err *err)
{
	if (g->nchildren == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct exec_problem_node *nc = realloc(g->children, ncap * sizeof(*nc));
		if (!nc)
			return gv_err_errno(err, "realloc");
		g->children = nc;
		*cap = ncap;
	}
	*out = &g->children[g->nchildren++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

/* Loads group g from folder dirfd (package path dir_rel, name relative to
 * data/ in g->name). g->grading holds the inherited settings. */
static int load_group(struct loader *L, struct exec_problem_node *g, int dirfd, const char *dir_rel, int depth,
		      struct gv_err *err)
{
	struct exec_problem *p = L->p;
	if (parse_testdata_yaml(p, dir_rel, &g->grading, err) < 0)
		return -1;
	char **names;
	size_t n;
	if (list_dir(dirfd, dir_rel, &names, &n, err) < 0)
		return -1;
	int rc = -1;
	size_t cap = 0;
	for (size_t i = 0; i < n; i++) {
		const char *nm = names[i];
		struct stat st;
		if (!good_name(nm)) {
			warn(p, "%s: odd file name skipped", dir_rel);
			continue;
		}
		if (fstatat(dirfd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			gv_err_errno(err, "stat %s/%s", dir_rel, nm);
			goto out;
		}
		char child_name[REL_MAX + NAME_LEN_MAX + 2];
		if (S_ISDIR(st.st_mode)) {
			if (depth == 0 && strcmp(nm, "sample") != 0 && strcmp(nm, "secret") != 0) {
				warn(p, "data/%s: only data/sample and data/secret are judged; skipped", nm);
				continue;
			}
			if (depth + 1 > EXEC_PROBLEM_MAX_DEPTH) {
				gv_err_set(err, GV_ELIMIT, "%s/%s: groups nested deeper than %d", dir_rel, nm,
					   EXEC_PROBLEM_MAX_DEPTH);
				goto out;
			}
			struct exec_problem_node *c;
			if (push_child(g, &cap, &c, err) < 0)
				goto out;
			c->kind = EXEC_PROBLEM_GROUP;
			snprintf(child_name, sizeof(child_name), "%s%s%s", g->name, *g->name ? "/" : "", nm);
			if (!(c->name = xstrdup(child_name, err)) || grading_copy(&c->grading, &g->grading, err) < 0)
				goto out;
			c->is_sample = g->is_sample || (depth == 0 && !strcmp(nm, "sample"));
			continue;
		}
		if (!ends_with(nm, ".in")) {
			if (ends_with(nm, ".ans")) {
				char in[NAME_LEN_MAX + 8];
				snprintf(in, sizeof(in), "%.*s.in", (int)(strlen(nm) - 4), nm);
				if (!bsearch(&(const char *){in}, names, n, sizeof(*names), cmp_cstr))
					warn(p, "%s/%s: answer without input; skipped", dir_rel, nm);
			}
			continue; /* .ans (paired below), .desc, .hint, .png, testdata.yaml, ... */
		}
		if (depth == 0) {
			warn(p, "data/%s: test cases must be in data/sample or data/secret; skipped", nm);
			continue;
		}
		char ans[NAME_LEN_MAX + 8];
		snprintf(ans, sizeof(ans), "%.*s.ans", (int)(strlen(nm) - 3), nm);
		struct stat ast;
		if (strlen(nm) - 3 + 4 > NAME_LEN_MAX || fstatat(dirfd, ans, &ast, AT_SYMLINK_NOFOLLOW) < 0) {
			warn(p, "%s/%s: no matching .ans; skipped", dir_rel, nm);
			continue;
		}
		if (L->ncases == EXEC_PROBLEM_MAX_CASES) {
			gv_err_set(err, GV_ELIMIT, "more than %d test cases", EXEC_PROBLEM_MAX_CASES);
			goto out;
		}
		struct exec_problem_node *c;
		if (push_child(g, &cap, &c, err) < 0)
			goto out;
		c->kind = EXEC_PROBLEM_CASE;
		snprintf(child_name, sizeof(child_name), "%s/%.*s", g->name, (int)(strlen(nm) - 3), nm);
		if (!(c->name = xstrdup(child_name, err)))
			goto out;
		c->is_sample = g->is_sample;
		if (file_path(p, dirfd, dir_rel, nm, &st, &c->in_path, err) < 0 ||
		    file_path(p, dirfd, dir_rel, ans, &ast, &c->ans_path, err) < 0)
			goto out;
		L->ncases++;
	}
	if (g->nchildren)
		qsort(g->children, g->nchildren, sizeof(*g->children), cmp_node);
	/* Children are final now: parent pointers and subgroups. */
	for (size_t i = 0; i < g->nchildren; i++) {
		struct exec_problem_node *c = &g->children[i];
		c->parent = g;
		if (c->kind != EXEC_PROBLEM_GROUP)
			continue;
		const char *base = strrchr(c->name, '/');
		base = base ? base + 1 : c->name;
		int sub = openat(dirfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			gv_err_errno(err, "open %s/%s", dir_rel, base);
			goto out;
		}
		char sub_rel[REL_MAX + NAME_LEN_MAX + 2];
		snprintf(sub_rel, sizeof(sub_rel), "%s/%s", dir_rel, base);
		int lrc = strlen(sub_rel) > REL_MAX ? gv_err_set(err, GV_ELIMIT, "%s: path too long", sub_rel)
						    : load_group(L, c, sub, sub_rel, depth + 1, err);
		close(sub);
		if (lrc < 0)
			goto out;
	}
	rc = 0;
out:
	free_names(names, n);
	return rc;
}

/* Effective output validator flags: the problem's, then the group's. */
static int finish_flags(struct exec_problem *p, struct exec_problem_node *g, struct gv_err *err)
{
	if (join_flags(p->validator_flags, g->grading.output_validator_flags, &g->grading.output_validator_flags,
		       err) < 0)
		return -1;
	for (size_t i = 0; i < g->nchildren; i++)
		if (g->children[i].kind == EXEC_PROBLEM_GROUP && finish_flags(p, &g->children[i], err) < 0)
			return -1;
	return 0;
}

static void collect_cases(struct exec_problem *p, struct exec_problem_node *g)
{
	for (size_t i = 0; i < g->nchildren; i++) {
		struct exec_problem_node *c = &g->children[i];
		if (c->kind == EXEC_PROBLEM_CASE) {
			c->index = p->ncases;
			p->cases[p->ncases++] = c;
		} else {
			collect_cases(p, c);
		}
	}
}

/* 2023-07 scoring (the spec's "maximum score inference"): data/secret
 * aggregates by sum and is worth 100 unless its scoring says otherwise,
 * its subgroups are pass-fail unless theirs do; in a sum group, children
 * without a score share what the others leave, (M - S) / (A + T); in a min
 * group each is worth M. An accepted case scores its share (or what its
 * validator reports), a rejected one 0. max: what the parent gave this
 * group, NAN when it gave nothing. */
static int infer_scores(struct exec_problem *p, struct exec_problem_node *g, double max, bool secret,
			struct gv_err *err)
{
	struct exec_problem_grading *gr = &g->grading;
	if (!gr->aggregation_set)
		gr->aggregation = secret ? EXEC_PROBLEM_AGG_SUM : EXEC_PROBLEM_AGG_PASS_FAIL;
	double m = !isnan(gr->max_score) ? gr->max_score : !isnan(max) ? max : secret ? 100 : NAN;
	if (isnan(m))
		return gv_err_set(err, GV_EINVAL, "data/%s: no maximum score (scoring.score)", g->name);
	if (!secret && isinf(m) && g->parent && isfinite(g->parent->grading.max_score))
		return gv_err_set(err, GV_EINVAL, "data/%s: unbounded score below a bounded group", g->name);
	gr->max_score = m;
	gr->reject_score = 0;
	double share = m;
	if (gr->aggregation == EXEC_PROBLEM_AGG_PASS_FAIL) {
		if (isinf(m))
			return gv_err_set(err, GV_EINVAL, "data/%s: a pass-fail group needs a bounded score", g->name);
		/* Its children's scores do not count; its subgroups are pass-fail. */
	} else if (gr->aggregation == EXEC_PROBLEM_AGG_SUM && isfinite(m)) {
		double given = 0;
		size_t open = 0;
		for (size_t i = 0; i < g->nchildren; i++) {
			const struct exec_problem_node *c = &g->children[i];
			if (c->kind == EXEC_PROBLEM_GROUP && c->grading.scoring_set && !isnan(c->grading.max_score))
				given += c->grading.max_score;
			else
				open++;
		}
		if (given > m)
			return gv_err_set(err, GV_EINVAL, "data/%s: its subgroups' scores (%g) exceed its score %g",
					  g->name, given, m);
		share = open ? (m - given) / (double)open : 0;
	}
	gr->accept_score = isfinite(share) ? share : 0;
	for (size_t i = 0; i < g->nchildren; i++) {
		struct exec_problem_node *c = &g->children[i];
		if (c->kind == EXEC_PROBLEM_GROUP && infer_scores(p, c, share, false, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- time limits ------------------------------------------------------- */

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

/* ---- output validators ------------------------------------------------- */

static int add_validator(struct exec_problem *p, const char *name, const char *dir, char **files, size_t nfiles,
			 const struct exec_problem_opts *opts, struct gv_err *err)
{
	if (p->nvalidators == VALIDATORS_MAX)
		return gv_err_set(err, GV_ELIMIT, "more than %d output validators", VALIDATORS_MAX);
	struct exec_problem_validator *nv = realloc(p->validators, (p->nvalidators + 1) * sizeof(*nv));
	if (!nv)
		return gv_err_errno(err, "realloc");
	p->validators = nv;
	struct exec_problem_validator *v = &nv[p->nvalidators];
	memset(v, 0, sizeof(*v));
	v->files = calloc(nfiles + 1, sizeof(char *));
	if (!v->files)
		return gv_err_errno(err, "calloc");
	p->nvalidators++;
	if (!(v->name = xstrdup(name, err)) || !(v->dir = xstrdup(dir, err)))
		return -1;
	for (size_t i = 0; i < nfiles; i++) {
		if (!(v->files[i] = xstrdup(files[i], err)))
			return -1;
		if (!v->lang_id && opts && opts->langs) {
			const struct lang_def *d = lang_find_by_filename(opts->langs, files[i]);
			if (d)
				v->lang_id = d->id;
		}
	}
	return 0;
}

/* Regular files of folder rel (symlinks and subfolders are warned about). */
static int validator_folder(struct exec_problem *p, const char *rel, const char *name,
			    const struct exec_problem_opts *opts, struct gv_err *err)
{
	int fd = open_rel(p->dirfd, rel, O_PATH | O_DIRECTORY, err);
	if (fd < 0)
		return -1;
	char **names;
	size_t n;
	int rc = list_dir(fd, rel, &names, &n, err);
	if (rc < 0) {
		close(fd);
		return -1;
	}
	char **files = calloc(n + 1, sizeof(char *));
	size_t nf = 0;
	if (!files) {
		rc = gv_err_errno(err, "calloc");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (!good_name(names[i]) || fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode)) {
			warn(p, "%s/%s: not a regular file; left out of the validator", rel, good_name(names[i]) ? names[i] : "?");
			continue;
		}
		if (nf == VALIDATOR_FILES_MAX) {
			rc = gv_err_set(err, GV_ELIMIT, "%s: more than %d files", rel, VALIDATOR_FILES_MAX);
			goto out;
		}
		files[nf++] = names[i];
	}
	if (nf == 0)
		rc = gv_err_set(err, GV_EINVAL, "%s: no source files", rel);
	else
		rc = add_validator(p, name, rel, files, nf, opts, err);
out:
	free(files);
	free_names(names, n);
	close(fd);
	return rc;
}

/* Whether folder rel holds at least one regular file directly. */
static int has_regular_file(struct exec_problem *p, const char *rel, bool *yes, struct gv_err *err)
{
	*yes = false;
	int fd = open_rel(p->dirfd, rel, O_PATH | O_DIRECTORY, err);
	if (fd < 0)
		return -1;
	char **names;
	size_t n;
	int rc = list_dir(fd, rel, &names, &n, err);
	for (size_t i = 0; rc == 0 && i < n && !*yes; i++) {
		struct stat st;
		*yes = good_name(names[i]) && fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		       S_ISREG(st.st_mode);
	}
	if (rc == 0)
		free_names(names, n);
	close(fd);
	return rc;
}

/* Every entry of folder top is one program: a folder of sources, or a
 * single source file named by its stem. */
static int validators_in(struct exec_problem *p, const char *top, const struct exec_problem_opts *opts,
			 struct gv_err *err)
{
	int fd = open_rel(p->dirfd, top, O_PATH | O_DIRECTORY, err);
	if (fd < 0)
		return -1;
	char **names;
	size_t n;
	if (list_dir(fd, top, &names, &n, err) < 0) {
		close(fd);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *nm = names[i];
		char rel[REL_MAX];
		struct stat st;
		if (!good_name(nm) || fstatat(fd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			warn(p, "%s: odd entry skipped", top);
			continue;
		}
		snprintf(rel, sizeof(rel), "%s/%s", top, nm);
		if (S_ISDIR(st.st_mode)) {
			rc = validator_folder(p, rel, nm, opts, err);
		} else if (S_ISREG(st.st_mode)) {
			char stem[NAME_LEN_MAX + 1];
			snprintf(stem, sizeof(stem), "%s", nm);
			char *dot = strrchr(stem, '.');
			if (dot && dot != stem)
				*dot = '\0';
			char *one[] = {(char *)nm, NULL};
			rc = add_validator(p, stem, top, one, 1, opts, err);
		} else {
			warn(p, "%s: not a file or folder; skipped", rel);
		}
	}
	free_names(names, n);
	close(fd);
	return rc;
}

/* output_validator/ (2023-07): the program's own sources, or, as
 * problemtools' examples have it, one folder per program below it.
 * output_validators/ (legacy): one program per entry. */
static int load_validators(struct exec_problem *p, const struct exec_problem_opts *opts, struct gv_err *err)
{
	struct stat st;
	if (fstatat(p->dirfd, "output_validator", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		bool flat;
		if (has_regular_file(p, "output_validator", &flat, err) < 0)
			return -1;
		if (flat ? validator_folder(p, "output_validator", "output_validator", opts, err) < 0
			 : validators_in(p, "output_validator", opts, err) < 0)
			return -1;
	}
	if (fstatat(p->dirfd, "output_validators", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
		return validators_in(p, "output_validators", opts, err);
	return 0;
}

/* ---- entry point ------------------------------------------------------- */

int exec_problem_load(struct exec_problem *p, const char *dir, const struct exec_problem_opts *opts,
		      struct gv_err *err)
{
	memset(p, 0, sizeof(*p));
	p->dirfd = -1;
	if (!(p->dir = xstrdup(dir, err)))
		return -1;
	/* The package folder itself is the caller's choice; below it nothing is
	 * followed. */
	p->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0)
		return gv_err_errno(err, "open problem package %s", dir);
	p->type = EXEC_PROBLEM_PASS_FAIL;
	/* Their defaults depend on problem_format_version, which may come
	 * after limits in problem.yaml. */
	p->time_multiplier = p->time_safety_margin = p->time_resolution = NAN;
	p->memory_mb = EXEC_PROBLEM_DEFAULT_MEMORY_MB;
	p->output_mb = EXEC_PROBLEM_DEFAULT_OUTPUT_MB;
	if (!(p->validator_flags = xstrdup("", err)))
		return -1;

	double yaml_time = 0, file_time = 0;
	if (parse_problem_yaml(p, &yaml_time, err) < 0 || parse_timelimit_file(p, &file_time, err) < 0)
		goto fail;
	bool v2023 = p->format == EXEC_PROBLEM_FORMAT_2023_07;
	if (isnan(p->time_multiplier))
		p->time_multiplier = v2023 ? 2 : 5;
	if (isnan(p->time_safety_margin))
		p->time_safety_margin = v2023 ? 1.5 : 2;
	if (isnan(p->time_resolution))
		p->time_resolution = 1;
	if (!p->name) {
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof(tmp), "%s", dir);
		size_t l = strlen(tmp);
		while (l > 1 && tmp[l - 1] == '/')
			tmp[--l] = '\0';
		const char *b = strrchr(tmp, '/');
		if (!(p->name = xstrdup(b ? b + 1 : tmp, err)))
			goto fail;
	}
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

	/* data/ */
	struct exec_problem_node *root = &p->root;
	root->kind = EXEC_PROBLEM_GROUP;
	if (!(root->name = xstrdup("", err)))
		goto fail;
	if (exec_problem_grading_default(&root->grading, err) < 0)
		goto fail;
	/* 2023-07 has no on_reject: every group of a scoring problem is scored. */
	if (v2023 && p->type == EXEC_PROBLEM_SCORING)
		root->grading.on_reject = EXEC_PROBLEM_GRADE;
	int data = open_rel(p->dirfd, "data", O_PATH | O_DIRECTORY, err);
	if (data < 0) {
		gv_err_prefix(err, "problem package %s", dir);
		goto fail;
	}
	struct loader L = {p, 0};
	int lrc = load_group(&L, root, data, "data", 0, err);
	close(data);
	if (lrc < 0)
		goto fail;
	if (L.ncases == 0) {
		gv_err_set(err, GV_EINVAL, "no test cases (data/sample/*.in and data/secret/*.in with .ans)");
		goto fail;
	}
	if (finish_flags(p, root, err) < 0)
		goto fail;
	if (p->format == EXEC_PROBLEM_FORMAT_2023_07 && p->type == EXEC_PROBLEM_SCORING)
		for (size_t i = 0; i < root->nchildren; i++)
			if (root->children[i].kind == EXEC_PROBLEM_GROUP && !strcmp(root->children[i].name, "secret") &&
			    infer_scores(p, &root->children[i], NAN, true, err) < 0)
				goto fail;
	p->cases = calloc(L.ncases, sizeof(*p->cases));
	if (!p->cases) {
		gv_err_errno(err, "calloc");
		goto fail;
	}
	collect_cases(p, root);

	if (load_validators(p, opts, err) < 0)
		goto fail;
	if (p->custom_validation && p->nvalidators == 0) {
		gv_err_set(err, GV_EINVAL, "validation is custom but there is no output_validators/ (or output_validator/) folder");
		goto fail;
	}
	if (p->validator_protocol == EXEC_PROBLEM_VALIDATOR_TESTLIB && p->interactive) {
		gv_err_set(err, GV_EINVAL, "validator_protocol: testlib cannot drive an interactive problem");
		goto fail;
	}
	if (!p->custom_validation && p->nvalidators > 0)
		warn(p, "output validators present but validation is default; they are not used");
	if (p->nvalidators > 1)
		warn(p, "%zu output validators; only %s is used", p->nvalidators, p->validators[0].name);
	if (p->type == EXEC_PROBLEM_PASS_FAIL && p->validator_scores)
		warn(p, "validation: custom score on a pass-fail problem; scores are ignored");
	return 0;
fail:
	gv_err_prefix(err, "problem %s", dir);
	return -1;
}
