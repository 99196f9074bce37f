/* Piston v2 compatibility: runtimes with Piston's language names and
 * aliases, semver ranges for "version", files[] with encodings, and the
 * per-stage (compile, run) result objects. */
#include "frontend/api.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "frontend/api_internal.h"

struct piston_name {
	const char *id;
	const char *language;
	const char *aliases[6];
};

static const struct piston_name piston_names[] = {
	{ "python3", "python", { "py", "py3", "python3", NULL } },
	{ "cpp", "c++", { "cpp", "g++", NULL } },
	{ "cpp14", "c++14", { "cpp14", NULL } },
	{ "cpp20", "c++20", { "cpp20", NULL } },
	{ "c", "c", { "gcc", NULL } },
	{ "javascript", "javascript", { "node-javascript", "node-js", "js", "node", NULL } },
	{ "rust", "rust", { "rs", NULL } },
	{ "go", "go", { "golang", NULL } },
	{ "pascal", "pascal", { "freepascal", "pp", "pas", "fpc", NULL } },
	{ "java", "java", { NULL } },
	{ "php", "php", { NULL } },
	{ "octave", "octave", { "matlab", "m", NULL } },
};

static const struct piston_name *piston_name_of(const struct lang_def *lang)
{
	for (size_t i = 0; i < sizeof(piston_names) / sizeof(piston_names[0]); i++)
		if (!strcmp(piston_names[i].id, lang->id))
			return &piston_names[i];
	return NULL;
}

const char *fe_piston_language(const struct lang_def *lang)
{
	const struct piston_name *p = piston_name_of(lang);
	return p ? p->language : lang->id;
}

void fe_piston_version(const char *version, char *buf, size_t size)
{
	const char *s = version ? version : "";
	while (*s && !isdigit((unsigned char)*s))
		s++;
	unsigned v[3] = { 0, 0, 0 };
	int n = 0;
	while (n < 3 && isdigit((unsigned char)*s)) {
		v[n++] = (unsigned)strtoul(s, (char **)&s, 10);
		if (*s == '.' && isdigit((unsigned char)s[1]))
			s++;
		else
			break;
	}
	snprintf(buf, size, "%u.%u.%u", v[0], v[1], v[2]);
}

/* ---- semver ranges ---- */

struct partial {
	long v[3];
	int n; /* components given (wildcards end it) */
};

/* A larger component is refused (as node-semver refuses numbers past
 * MAX_SAFE_INTEGER): the bounds below add one to a component, which must
 * not overflow. */
#define SEMVER_COMPONENT_MAX 999999999L

static int parse_partial(const char **sp, struct partial *p)
{
	const char *s = *sp;
	p->n = 0;
	if (*s == 'v' || *s == '=')
		s++;
	for (int i = 0; i < 3; i++) {
		if (*s == '*' || *s == 'x' || *s == 'X') {
			s++;
			/* everything after a wildcard is a wildcard */
			while (*s == '.' || *s == '*' || *s == 'x' || *s == 'X')
				s++;
			break;
		}
		if (!isdigit((unsigned char)*s))
			return -1;
		char *end;
		errno = 0;
		p->v[i] = strtol(s, &end, 10);
		if (errno == ERANGE || p->v[i] > SEMVER_COMPONENT_MAX)
			return -1;
		s = end;
		p->n++;
		if (*s != '.')
			break;
		s++;
	}
	/* Pre-release and build suffixes are not used by our versions. */
	if (*s == '-' || *s == '+')
		while (*s && *s != ' ' && *s != '|')
			s++;
	*sp = s;
	return 0;
}

static int cmp3(const long a[3], const long b[3])
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* Lower bound (inclusive) and upper bound (exclusive) of a partial. */
static void partial_bounds(const struct partial *p, long lo[3], long hi[3], bool *has_hi)
{
	for (int i = 0; i < 3; i++)
		lo[i] = i < p->n ? p->v[i] : 0;
	*has_hi = p->n < 3 && p->n > 0;
	if (p->n == 0) {
		*has_hi = false;
		return;
	}
	for (int i = 0; i < 3; i++)
		hi[i] = i < p->n ? p->v[i] : 0;
	if (p->n < 3)
		hi[p->n - 1]++;
}

static bool comparator_ok(const long ver[3], const char *op, const struct partial *p)
{
	long lo[3], hi[3];
	bool has_hi;
	partial_bounds(p, lo, hi, &has_hi);
	if (!strcmp(op, "") || !strcmp(op, "=")) {
		if (p->n == 0)
			return true;
		if (cmp3(ver, lo) < 0)
			return false;
		return has_hi ? cmp3(ver, hi) < 0 : cmp3(ver, lo) == 0;
	}
	if (!strcmp(op, ">="))
		return cmp3(ver, lo) >= 0;
	if (!strcmp(op, ">"))
		return has_hi ? cmp3(ver, hi) >= 0 : (p->n == 0 ? false : cmp3(ver, lo) > 0);
	if (!strcmp(op, "<"))
		return p->n == 0 ? false : cmp3(ver, lo) < 0;
	if (!strcmp(op, "<="))
		return has_hi ? cmp3(ver, hi) < 0 : (p->n == 0 ? true : cmp3(ver, lo) <= 0);
	if (!strcmp(op, "~")) {
		/* ~1.2.3 := >=1.2.3 <1.3.0; ~1 := >=1.0.0 <2.0.0 */
		if (cmp3(ver, lo) < 0)
			return false;
		long up[3] = { lo[0], lo[1], 0 };
		if (p->n <= 1)
			up[0]++, up[1] = 0;
		else
			up[1]++;
		return p->n == 0 || cmp3(ver, up) < 0;
	}
	if (!strcmp(op, "^")) {
		/* bump the first non-zero component given */
		if (cmp3(ver, lo) < 0)
			return false;
		if (p->n == 0)
			return true;
		long up[3] = { 0, 0, 0 };
		int i = 0;
		while (i < p->n - 1 && lo[i] == 0)
			i++;
		for (int k = 0; k < i; k++)
			up[k] = lo[k];
		up[i] = lo[i] + 1;
		return cmp3(ver, up) < 0;
	}
	return false;
}

/* One space-separated set of comparators (all must hold). */
static int set_ok(const long ver[3], const char *s, const char *end, bool *ok)
{
	*ok = true;
	bool any = false;
	while (s < end) {
		while (s < end && *s == ' ')
			s++;
		if (s >= end)
			break;
		char op[3] = "";
		if (*s == '>' || *s == '<') {
			op[0] = *s++;
			if (*s == '=')
				op[1] = *s++;
		} else if (*s == '=' || *s == '~' || *s == '^') {
			op[0] = *s++;
			if (op[0] == '~' && *s == '>')
				s++; /* ~> as in Ruby */
		}
		while (s < end && *s == ' ')
			s++;
		struct partial p;
		const char *q = s;
		if (parse_partial(&q, &p) < 0 || q > end)
			return -1;
		s = q;
		/* hyphen range "1.2 - 2.3" */
		const char *h = s;
		while (h < end && *h == ' ')
			h++;
		if (!op[0] && h + 1 < end && h[0] == '-' && h[1] == ' ') {
			h += 2;
			while (h < end && *h == ' ')
				h++;
			struct partial p2;
			if (parse_partial(&h, &p2) < 0 || h > end)
				return -1;
			*ok = *ok && comparator_ok(ver, ">=", &p) && comparator_ok(ver, "<=", &p2);
			s = h;
			any = true;
			continue;
		}
		if (s < end && *s != ' ')
			return -1;
		*ok = *ok && comparator_ok(ver, op, &p);
		any = true;
	}
	return any ? 0 : -1;
}

bool fe_semver_satisfies(const char *version, const char *range)
{
	struct partial pv;
	const char *vs = version;
	if (!version || parse_partial(&vs, &pv) < 0 || *vs || pv.n != 3)
		return false;
	if (!range)
		return true;
	const char *s = range;
	while (*s == ' ')
		s++;
	if (!*s)
		return true;
	while (*s) {
		const char *bar = strstr(s, "||");
		const char *end = bar ? bar : s + strlen(s);
		bool ok;
		if (set_ok(pv.v, s, end, &ok) < 0)
			return false;
		if (ok)
			return true;
		if (!bar)
			break;
		s = bar + 2;
	}
	return false;
}

static bool name_matches(const struct lang_def *l, const char *name)
{
	if (!strcasecmp(l->id, name) || !strcasecmp(fe_piston_language(l), name))
		return true;
	const struct piston_name *p = piston_name_of(l);
	for (int i = 0; p && p->aliases[i]; i++)
		if (!strcasecmp(p->aliases[i], name))
			return true;
	for (char **e = l->extensions; e && *e; e++)
		if (!strcasecmp(*e + 1, name))
			return true;
	return false;
}

const struct lang_def *fe_piston_find(const struct fe_catalog *cat, const char *name,
				      const char *range)
{
	struct fe_probed *p = malloc(sizeof(*p));
	if (!p)
		return NULL;
	fe_catalog_probed_get(cat, p);
	const struct lang_def *found = NULL;
	for (size_t i = 0; i < cat->n && !found; i++) {
		const struct lang_def *l = cat->lang[i];
		if (!name_matches(l, name) || !fe_catalog_offered(p, i))
			continue;
		if (!p->known) {
			found = l; /* no executor has told us its version yet */
			break;
		}
		char v[48];
		fe_piston_version(p->version[i], v, sizeof(v));
		if (fe_semver_satisfies(v, range))
			found = l;
	}
	free(p);
	return found;
}

json_t *fe_piston_runtimes(const struct fe_catalog *cat, const struct fe_probed *p)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < cat->n; i++) {
		const struct lang_def *l = cat->lang[i];
		if (!fe_catalog_offered(p, i))
			continue;
		char v[48];
		fe_piston_version(p && p->known ? p->version[i] : NULL, v, sizeof(v));
		json_t *aliases = json_array();
		const struct piston_name *pn = piston_name_of(l);
		for (int k = 0; pn && pn->aliases[k]; k++)
			json_array_append_new(aliases, json_string(pn->aliases[k]));
		if (!pn)
			json_array_append_new(aliases, json_string(l->id));
		json_array_append_new(a, json_pack("{s:s,s:s,s:o,s:s}", "language", fe_piston_language(l),
						   "version", v, "aliases", aliases, "runtime", l->id));
	}
	return a;
}

static int piston_file(const json_t *f, size_t i, char **out, size_t *len, const char **name,
		       size_t max, struct fe_apierr *e)
{
	*out = NULL;
	*name = NULL;
	if (!json_is_object(f))
		return fe_apierr_set(e, 400, "invalid_request", "files[%zu]: expected object", i);
	json_t *c = json_object_get(f, "content");
	if (!json_is_string(c))
		return fe_apierr_set(e, 400, "invalid_request", "files[%zu].content: expected string", i);
	json_t *n = json_object_get(f, "name");
	if (json_is_string(n))
		*name = json_string_value(n);
	const char *enc = "utf8";
	json_t *ej = json_object_get(f, "encoding");
	if (json_is_string(ej))
		enc = json_string_value(ej);
	const char *s = json_string_value(c);
	size_t sl = json_string_length(c);
	if (!strcmp(enc, "utf8")) {
		if (sl > max)
			return fe_apierr_set(e, 413, "too_large", "files[%zu]: more than %zu bytes", i, max);
		*out = strndup(s, sl);
		*len = sl;
	} else if (!strcmp(enc, "base64")) {
		struct gv_err err;
		*out = (char *)gv_b64_decode(s, sl, max, len, &err);
		if (!*out)
			return fe_apierr_set(e, err.code == GV_ELIMIT ? 413 : 400,
					     err.code == GV_ELIMIT ? "too_large" : "invalid_request",
					     "files[%zu].content: %s", i, err.msg);
	} else if (!strcmp(enc, "hex")) {
		if (sl % 2 || sl / 2 > max)
			return fe_apierr_set(e, 400, "invalid_request", "files[%zu].content: bad hex", i);
		*out = malloc(sl / 2 + 1);
		if (!*out)
			return fe_apierr_set(e, 500, "internal", "out of memory");
		for (size_t k = 0; k < sl / 2; k++) {
			unsigned v;
			if (!isxdigit((unsigned char)s[2 * k]) || !isxdigit((unsigned char)s[2 * k + 1]) ||
			    sscanf(s + 2 * k, "%2x", &v) != 1) {
				free(*out);
				*out = NULL;
				return fe_apierr_set(e, 400, "invalid_request", "files[%zu].content: bad hex", i);
			}
			(*out)[k] = (char)v;
		}
		(*out)[sl / 2] = '\0';
		*len = sl / 2;
	} else {
		return fe_apierr_set(e, 400, "invalid_request", "files[%zu].encoding: unknown", i);
	}
	if (!*out)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

int fe_piston_parse(const json_t *body, const struct fe_catalog *cat, const struct fe_bounds *b,
		    struct fe_job *job, struct fe_apierr *e)
{
	memset(job, 0, sizeof(*job));
	if (!json_is_object(body))
		return fe_apierr_set(e, 400, "invalid_request", "body: expected a JSON object");
	json_t *lj = json_object_get(body, "language"), *vj = json_object_get(body, "version");
	if (!json_is_string(lj))
		return fe_apierr_set(e, 400, "invalid_request", "language is required as a string");
	const char *range = "*";
	if (json_is_string(vj))
		range = json_string_value(vj);
	else if (vj && !json_is_null(vj))
		return fe_apierr_set(e, 400, "invalid_request", "version is required as a string");
	const struct lang_def *lang = fe_piston_find(cat, json_string_value(lj), range);
	if (!lang)
		return fe_apierr_set(e, 400, "unknown_runtime", "%.40s-%.40s runtime is unknown",
				     json_string_value(lj), range);
	json_t *files = json_object_get(body, "files");
	if (!json_is_array(files) || json_array_size(files) == 0 || json_array_size(files) > 32)
		return fe_apierr_set(e, 400, "invalid_request", "files is required as an array");
	if (fe_spec_base(job, lang, e) < 0)
		return -1;
	/* Piston passes args to the program after its run command. */
	json_t *args = json_object_get(body, "args"), *words = NULL;
	if (args && !json_is_null(args) &&
	    (fe_words_from_array(args, "args", &words, e) < 0 || fe_spec_set_args(job, words, e) < 0))
		goto fail;
	size_t total = 0, i;
	json_t *f;
	json_array_foreach(files, i, f) {
		char *content;
		size_t len = 0;
		const char *name;
		if (piston_file(f, i, &content, &len, &name, b->max_source, e) < 0)
			goto fail;
		char field[32];
		snprintf(field, sizeof(field), "files[%zu]", i);
		/* Piston runs the first file; it is our main source. */
		const char *store = i == 0 ? lang->source : name;
		if (i > 0 && (!store || !fe_file_name_ok(store) || !strcmp(store, lang->source))) {
			free(content);
			fe_apierr_set(e, 400, "invalid_request", "%s.name: a plain file name is required",
				      field);
			goto fail;
		}
		int r = fe_spec_add_file(job, store, content, len, &total, b->max_source, field, e);
		free(content);
		if (r < 0)
			goto fail;
	}
	const char *in = "";
	size_t inl = 0;
	if (fe_get_text(body, "stdin", "stdin", b->max_test_size, false, &in, &inl, e) < 0)
		goto fail;
	json_object_set_new(job->spec, "stdin", json_stringn(in, inl));
	json_object_set_new(job->spec, "return_output", json_true());
	double rt = 0, rm = 0, rc = 0;
	if (fe_j0_number(body, "run_timeout", 0, 3600000, &rt, e) < 0 ||
	    fe_j0_number(body, "run_cpu_time", 0, 3600000, &rc, e) < 0 ||
	    fe_j0_number(body, "run_memory_limit", -1, 1e12, &rm, e) < 0)
		goto fail;
	/* Piston: run_timeout in ms (wall), run_cpu_time in ms (CPU),
	 * run_memory_limit in bytes, -1 = none. Without run_cpu_time a
	 * run_timeout under the language's CPU default bounds the CPU too. */
	uint32_t wall = (uint32_t)rt, mem = rm > 0 ? (uint32_t)((rm + 1048575) / 1048576) : 0;
	uint32_t cpu = rc > 0 ? (uint32_t)rc : wall && wall < lang->defaults.time_ms ? wall : 0;
	if (fe_job_limits(job, cpu, wall, mem, 0, e) < 0)
		goto fail;
	return 0;
fail:
	fe_job_clear(job);
	return -1;
}

/* Piston has a compile stage only for languages whose run starts what the
 * compile step built; where the run reads the source itself (Python,
 * JavaScript), Gavel's compile step is a syntax check and Piston shows its
 * failure as the run's. */
static bool piston_compiled(const struct lang_def *lang)
{
	if (!lang || !lang->compile)
		return false;
	for (char **a = lang->run; a && *a; a++)
		if (!strcmp(*a, "{source}") || (lang->source && !strcmp(*a, lang->source)))
			return false;
	return true;
}

static json_t *stage_new(const char *out, const char *err)
{
	return json_pack("{s:s,s:s,s:s+}", "stdout", out, "stderr", err, "output", out, err);
}

/* The compile stage, with the compile's own figures (null in results
 * stored before they were kept). */
static json_t *compile_stage(const json_t *res, bool failed)
{
	const json_t *c = json_object_get(res, "compile");
	const char *err = json_string_value(json_object_get(res, "compile_output"));
	json_t *o = stage_new("", err ? err : "");
	if (!o)
		return NULL;
	json_int_t code = json_is_integer(json_object_get(c, "exit_code")) ? json_integer_value(json_object_get(c, "exit_code"))
									   : (failed ? 1 : 0);
	json_object_set_new(o, "code", json_integer(failed && code == 0 ? 1 : code));
	json_object_set_new(o, "signal", json_null());
	json_object_set_new(o, "message", failed ? json_string("compilation failed") : json_null());
	json_object_set_new(o, "status", failed ? json_string("RE") : json_null());
	static const char *const figures[][2] = { { "cpu_time", "time_ms" }, { "wall_time", "wall_ms" } };
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(c, figures[i][1]);
		json_object_set_new(o, figures[i][0], json_is_integer(v) ? json_integer(json_integer_value(v)) : json_null());
	}
	json_t *mem = json_object_get(c, "memory_kb");
	json_object_set_new(o, "memory", json_is_integer(mem) ? json_integer(json_integer_value(mem) * 1024) : json_null());
	return o;
}

/* The run of an interpreted language whose syntax check failed: what the
 * interpreter itself would have printed, exit code 1. */
static json_t *syntax_error_run(const json_t *res)
{
	const char *err = json_string_value(json_object_get(res, "compile_output"));
	json_t *o = stage_new("", err ? err : "");
	if (!o)
		return NULL;
	json_object_set_new(o, "code", json_integer(1));
	json_object_set_new(o, "signal", json_null());
	json_object_set_new(o, "message", json_string("exit code 1"));
	json_object_set_new(o, "status", json_string("RE"));
	json_object_set_new(o, "cpu_time", json_integer(0));
	json_object_set_new(o, "wall_time", json_integer(0));
	json_object_set_new(o, "memory", json_integer(0));
	return o;
}

static json_t *run_stage(const json_t *res)
{
	const char *out = json_string_value(json_object_get(res, "stdout"));
	const char *err = json_string_value(json_object_get(res, "stderr"));
	json_t *o = stage_new(out ? out : "", err ? err : "");
	if (!o)
		return NULL;
	/* Piston's output is both streams in the order written. */
	const json_t *merged = json_object_get(res, "output");
	if (json_is_string(merged))
		json_object_set_new(o, "output", json_string(json_string_value(merged)));
	json_int_t code = json_integer_value(json_object_get(res, "exit_code"));
	json_int_t sig = json_integer_value(json_object_get(res, "signal"));
	const char *status = json_string_value(json_object_get(res, "status"));
	json_object_set_new(o, "code", sig ? json_null() : json_integer(code));
	static const char *const names[] = { [6] = "SIGABRT", [8] = "SIGFPE", [9] = "SIGKILL",
					     [11] = "SIGSEGV", [15] = "SIGTERM", [25] = "SIGXFSZ" };
	const char *sn = sig > 0 && sig < 26 ? names[sig] : NULL;
	json_object_set_new(o, "signal", sig ? json_string(sn ? sn : "SIGKILL") : json_null());
	const char *msg = json_string_value(json_object_get(res, "message"));
	json_object_set_new(o, "message", msg && *msg ? json_string(msg) : json_null());
	/* Piston's status codes: TO timeout, RE runtime error, SG signal,
	 * OL/EL output limits, XX internal. */
	const char *ps = NULL;
	if (status) {
		if (!strcmp(status, "TLE"))
			ps = "TO";
		else if (!strcmp(status, "RE"))
			ps = sig ? "SG" : "RE";
		else if (!strcmp(status, "OLE"))
			ps = "OL";
		else if (!strcmp(status, "MLE"))
			ps = "SG";
		else if (!strcmp(status, "IE"))
			ps = "XX";
	}
	json_object_set_new(o, "status", ps ? json_string(ps) : json_null());
	json_object_set_new(o, "cpu_time", json_integer(json_integer_value(json_object_get(res, "time_ms"))));
	json_object_set_new(o, "wall_time", json_integer(json_integer_value(json_object_get(res, "wall_ms"))));
	json_object_set_new(o, "memory",
			    json_integer(json_integer_value(json_object_get(res, "memory_kb")) * 1024));
	return o;
}

json_t *fe_piston_render(const struct fe_subrow *row, const struct lang_def *lang, const struct fe_catalog *cat)
{
	char v[48] = "0.0.0";
	for (size_t i = 0; lang && cat && i < cat->n; i++) {
		if (cat->lang[i] != lang)
			continue;
		/* The version live executors published (the cache the listings
		 * and the version match fill). */
		struct fe_probed *p = malloc(sizeof(*p));
		if (p) {
			fe_catalog_probed_get(cat, p);
			if (p->known && p->version[i][0])
				fe_piston_version(p->version[i], v, sizeof(v));
			free(p);
		}
	}
	json_t *o = json_pack("{s:s,s:s}", "language", lang ? fe_piston_language(lang) : row->language,
			      "version", v);
	if (!o)
		return NULL;
	const json_t *res = row->result;
	const char *status = json_string_value(json_object_get(res, "status"));
	bool ce = status && !strcmp(status, "CE");
	/* As Piston: a compile stage only where something is built, and no
	 * run after a failed build. */
	if (piston_compiled(lang)) {
		json_object_set_new(o, "compile", compile_stage(res, ce));
		if (!ce)
			json_object_set_new(o, "run", run_stage(res));
	} else {
		json_object_set_new(o, "run", ce ? syntax_error_run(res) : run_stage(res));
	}
	return o;
}
