/* Jobe's REST API 1.0 translated into Gavel's job spec and back. Jobe
 * speaks in seconds and megabytes, answers errors as a bare JSON string
 * with 400, and reports a run as one outcome code with the compiler's and
 * the program's output. Written from the API's description (CodeRunner's
 * use of it), not from Jobe's code. */
#include "frontend/api_jobe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "frontend/api_internal.h"

struct jobe_name {
	const char *jobe;
	const char *gavel;
};

/* Jobe's standard language ids and the definitions that serve them. */
static const struct jobe_name jobe_names[] = {
	{ "c", "c" },         { "cpp", "cpp" },       { "python3", "python3" }, { "java", "java" },
	{ "nodejs", "javascript" }, { "php", "php" }, { "octave", "octave" },   { "pascal", "pascal" },
};

#define JOBE_NAMES_N (sizeof(jobe_names) / sizeof(jobe_names[0]))

const char *fe_jobe_id_of(const struct lang_def *lang)
{
	for (size_t i = 0; lang && i < JOBE_NAMES_N; i++)
		if (!strcmp(jobe_names[i].gavel, lang->id))
			return jobe_names[i].jobe;
	return NULL;
}

const struct lang_def *fe_jobe_language(const struct fe_catalog *cat, const char *jobe_id)
{
	for (size_t i = 0; jobe_id && i < JOBE_NAMES_N; i++) {
		if (strcmp(jobe_names[i].jobe, jobe_id))
			continue;
		for (size_t k = 0; k < cat->n; k++)
			if (!strcmp(cat->lang[k]->id, jobe_names[i].gavel))
				return cat->lang[k];
	}
	return NULL;
}

json_t *fe_jobe_languages(const struct fe_catalog *cat, const struct fe_probed *p)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < cat->n; i++) {
		const char *id = fe_jobe_id_of(cat->lang[i]);
		if (!id || !fe_catalog_offered(p, i))
			continue;
		json_array_append_new(a, json_pack("[ss]", id, p && p->known ? p->version[i] : ""));
	}
	return a;
}

/* ------------------------------------------------------------ run_spec */

static int missing(struct fe_apierr *e, const char *attr)
{
	return fe_apierr_set(e, 400, "invalid_request", "run_spec is missing the required attribute '%s'", attr);
}

bool fe_jobe_file_id_ok(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	if (n < FE_JOBE_FILE_ID_MIN || n > FE_JOBE_FILE_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

static int parse_file_list(const json_t *fl, const struct lang_def *lang, struct fe_jobe_run *run,
			   struct fe_apierr *e)
{
	if (!fl || json_is_null(fl))
		return 0;
	if (!json_is_array(fl))
		return fe_apierr_set(e, 400, "invalid_request", "file_list must be a list of [file_id, file_name] pairs");
	if (json_array_size(fl) > FE_JOBE_FILES_MAX)
		return fe_apierr_set(e, 400, "invalid_request", "file_list: at most %d files", FE_JOBE_FILES_MAX);
	size_t i;
	json_t *pair;
	json_array_foreach(fl, i, pair) {
		const json_t *id = json_array_get(pair, 0), *name = json_array_get(pair, 1);
		if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_string(id) || !json_is_string(name))
			return fe_apierr_set(e, 400, "invalid_request",
					     "file_list[%zu] must be a [file_id, file_name] pair of strings", i);
		if (!fe_jobe_file_id_ok(json_string_value(id)))
			return fe_apierr_set(e, 400, "invalid_request",
					     "file_list[%zu]: a file id is 8 to 64 letters, digits, '_' or '-'", i);
		const char *n = json_string_value(name);
		if (!fe_file_name_ok(n) || (lang->source && !strcmp(n, lang->source)))
			return fe_apierr_set(e, 400, "invalid_request",
					     "file_list[%zu]: illegal file name '%.64s' (letters, digits, '.', '_', '-'; "
					     "not the source's name)",
					     i, n);
		for (size_t k = 0; k < run->n_files; k++)
			if (!strcmp(run->files[k].name, n))
				return fe_apierr_set(e, 400, "invalid_request", "file_list: '%.64s' appears twice", n);
		struct fe_jobe_file_ref *f = &run->files[run->n_files++];
		snprintf(f->id, sizeof(f->id), "%s", json_string_value(id));
		snprintf(f->name, sizeof(f->name), "%s", n);
	}
	return 0;
}

/* A parameter that is a list of words (or absent): *out a new array or
 * NULL. */
static int word_list(const json_t *params, const char *key, json_t **out, struct fe_apierr *e)
{
	*out = NULL;
	const json_t *v = json_object_get(params, key);
	if (!v || json_is_null(v))
		return 0;
	char field[48];
	snprintf(field, sizeof(field), "parameters.%s", key);
	return fe_words_from_array(v, field, out, e);
}

/* A number parameter (seconds, MB, a count): 1 absent, 0 set, -1 error. */
static int number_param(const json_t *params, const char *key, double max, double *out, struct fe_apierr *e)
{
	const json_t *v = json_object_get(params, key);
	if (!v || json_is_null(v))
		return 1;
	double d;
	if (json_is_number(v)) {
		d = json_number_value(v);
	} else if (json_is_string(v)) {
		char *end;
		d = strtod(json_string_value(v), &end);
		if (end == json_string_value(v) || *end)
			return fe_apierr_set(e, 400, "invalid_request", "parameters.%s must be a number", key);
	} else {
		return fe_apierr_set(e, 400, "invalid_request", "parameters.%s must be a number", key);
	}
	if (!isfinite(d) || d < 0)
		return fe_apierr_set(e, 400, "invalid_request", "parameters.%s must be a non-negative number", key);
	*out = d > max ? max : d;
	return 0;
}

static uint32_t cap_of(uint32_t lang_max, int64_t ceiling)
{
	return ceiling > 0 && ceiling < (int64_t)lang_max ? (uint32_t)ceiling : lang_max;
}

/* cputime (s), memorylimit (MB), numprocs onto the job's limits, each
 * lowered to the lesser of the language's maximum and the tenant's
 * ceiling: what a client asks never goes past what the tenant may use. */
static int apply_limits(const json_t *params, const struct tenant_quota *q, struct fe_jobe_run *run,
			struct fe_apierr *e)
{
	const struct lang_def *l = run->job.lang;
	uint32_t cpu_cap = cap_of(l->max.time_ms, q ? q->max_cpu_ms : 0);
	uint32_t wall_cap = cap_of(l->max.wall_ms, q ? q->max_wall_ms : 0);
	uint32_t mem_cap = cap_of(l->max.memory_mb, q ? q->max_memory_mb : 0);
	double cpu_s = FE_JOBE_DEFAULT_CPU_MS / 1000.0, mem = 0, procs = 0;
	if (number_param(params, "cputime", 3600, &cpu_s, e) < 0 ||
	    number_param(params, "memorylimit", 1024 * 1024, &mem, e) < 0 ||
	    number_param(params, "numprocs", 100000, &procs, e) < 0)
		return -1;
	uint32_t cpu = (uint32_t)lround(cpu_s * 1000);
	if (cpu == 0)
		cpu = FE_JOBE_DEFAULT_CPU_MS;
	cpu = cpu > cpu_cap ? cpu_cap : cpu;
	uint64_t wall = (uint64_t)cpu * FE_JOBE_WALL_FACTOR;
	if (wall < l->defaults.wall_ms)
		wall = l->defaults.wall_ms;
	wall = wall > wall_cap ? wall_cap : wall;
	if (wall < cpu)
		cpu = (uint32_t)wall;
	/* memorylimit 0 is Jobe's "no limit": the most the tenant may use. */
	uint32_t m = (json_object_get(params, "memorylimit") && mem == 0) ? mem_cap : (uint32_t)ceil(mem);
	m = m > mem_cap ? mem_cap : m;
	run->numprocs = (unsigned)procs;
	if (fe_job_limits(&run->job, cpu, (uint32_t)wall, m, 0, e) < 0)
		return -1;
	/* numprocs only ever raises the language's own count (a JVM needs
	 * its threads), up to the language's maximum. */
	uint32_t n = run->numprocs > l->max.procs ? l->max.procs : run->numprocs;
	if (n > l->defaults.procs &&
	    json_object_set_new(json_object_get(run->job.spec, "limits"), "procs", json_integer(n)) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

/* interpreterargs: put between the interpreter and the script (python3
 * -O main.py), each admitted by the language's interpreter_options (a
 * cluster of listed one-letter flags, -BE, too); the executor checks them
 * again. Takes words. */
static int set_interpreter_options(struct fe_jobe_run *run, json_t *words, struct fe_apierr *e)
{
	const struct lang_def *l = run->job.lang;
	if (json_array_size(words) > GV_JOBSPEC_COMPILE_OPTIONS_MAX) {
		json_decref(words);
		return fe_apierr_set(e, 400, "invalid_request", "parameters.interpreterargs: more than %d words",
				     GV_JOBSPEC_COMPILE_OPTIONS_MAX);
	}
	size_t i;
	json_t *w;
	json_array_foreach(words, i, w) {
		if (!lang_interpreter_option_allowed(l, json_string_value(w))) {
			fe_apierr_set(e, 400, "invalid_request",
				      "parameters.interpreterargs: '%.64s' is not allowed for %s (see the language's "
				      "interpreter_options)",
				      json_string_value(w), fe_jobe_id_of(l) ? fe_jobe_id_of(l) : l->id);
			json_decref(words);
			return -1;
		}
	}
	if (json_array_size(words) == 0) {
		json_decref(words);
		return 0;
	}
	if (json_object_set_new(run->job.spec, "interpreter_options", words) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

/* compileargs and linkargs together are the compile options (each one in
 * the language's allowlist); runargs are the program's arguments;
 * interpreterargs go after the interpreter. */
static int apply_args(const json_t *params, struct fe_jobe_run *run, struct fe_apierr *e)
{
	json_t *compile = NULL, *link = NULL, *runargs = NULL, *interp = NULL;
	int rc = -1;
	if (word_list(params, "compileargs", &compile, e) < 0 || word_list(params, "linkargs", &link, e) < 0 ||
	    word_list(params, "runargs", &runargs, e) < 0 || word_list(params, "interpreterargs", &interp, e) < 0)
		goto out;
	if (interp) {
		json_t *w = interp;
		interp = NULL;
		if (set_interpreter_options(run, w, e) < 0)
			goto out;
	}
	if (compile || link) {
		json_t *all = compile ? compile : json_array();
		if (!all)
			goto nomem;
		compile = NULL;
		if (link && json_array_extend(all, link) != 0) {
			json_decref(all);
			goto nomem;
		}
		if (json_array_size(all) > 0 &&
		    fe_spec_set_compile_options(&run->job, all, "parameters.compileargs", e) < 0)
			goto out;
		if (json_array_size(all) == 0)
			json_decref(all);
	}
	if (runargs) {
		json_t *w = runargs;
		runargs = NULL;
		if (fe_spec_set_args(&run->job, w, e) < 0)
			goto out;
	}
	rc = 0;
	goto out;
nomem:
	fe_apierr_set(e, 500, "internal", "out of memory");
out:
	json_decref(compile);
	json_decref(link);
	json_decref(runargs);
	json_decref(interp);
	return rc;
}

int fe_jobe_parse(const json_t *body, const struct fe_catalog *cat, const struct fe_bounds *b,
		  const struct tenant_quota *q, struct fe_jobe_run *run, struct fe_apierr *e)
{
	memset(run, 0, sizeof(*run));
	const json_t *spec = json_object_get(body, "run_spec");
	if (!json_is_object(body) || !json_is_object(spec))
		return fe_apierr_set(e, 400, "invalid_request", "No run_spec attribute found");
	const json_t *lid = json_object_get(spec, "language_id");
	if (!lid || json_is_null(lid))
		return missing(e, "language_id");
	if (!json_is_string(lid))
		return fe_apierr_set(e, 400, "invalid_request", "run_spec.language_id must be a string");
	const struct lang_def *lang = fe_jobe_language(cat, json_string_value(lid));
	if (!lang)
		return fe_apierr_set(e, 400, "unknown_language", "Language '%.40s' is not known",
				     json_string_value(lid));
	const char *src;
	size_t srclen;
	int r = fe_get_text(spec, "sourcecode", "sourcecode", b->max_source, false, &src, &srclen, e);
	if (r < 0)
		return -1;
	if (r == 1)
		return missing(e, "sourcecode");
	const char *sfn;
	size_t sfnlen;
	r = fe_get_text(spec, "sourcefilename", "sourcefilename", GV_JOBSPEC_FILE_NAME_MAX, false, &sfn, &sfnlen, e);
	if (r < 0)
		return -1;
	/* The source is saved under the language's own name (Java's under
	 * its public class, found in the source); a given name is only
	 * checked, as Jobe checks it. */
	if (r == 0 && sfnlen > 0 && !fe_file_name_ok(sfn))
		return fe_apierr_set(e, 400, "invalid_request", "Illegal source filename '%.64s'", sfn);
	if (fe_spec_base(&run->job, lang, e) < 0)
		return -1;
	size_t total = 0;
	const json_t *params = json_object_get(spec, "parameters");
	if (params && !json_is_null(params) && !json_is_object(params)) {
		fe_apierr_set(e, 400, "invalid_request", "run_spec.parameters must be an object");
		goto fail;
	}
	if (fe_spec_add_file(&run->job, lang->source, src, srclen, &total, b->max_source, "sourcecode", e) < 0 ||
	    parse_file_list(json_object_get(spec, "file_list"), lang, run, e) < 0)
		goto fail;
	const char *in = "";
	size_t inl = 0;
	if (fe_get_text(spec, "input", "input", b->max_test_size, false, &in, &inl, e) < 0 ||
	    fe_put_bytes(run->job.spec, "stdin", "stdin_b64", in, inl, "input", b->max_test_size, e) < 0)
		goto fail;
	json_object_set_new(run->job.spec, "return_output", json_true());
	/* A CodeRunner template writes files beside the source (the
	 * student's answer, then compiles it): the run works in a writable
	 * copy of its folder. */
	json_object_set_new(run->job.spec, "writable_box", json_true());
	if (apply_limits(params, q, run, e) < 0 || apply_args(params, run, e) < 0)
		goto fail;
	return 0;
fail:
	/* Jobe answers every bad request 400. */
	if (e->status == 422)
		e->status = 400;
	fe_jobe_run_clear(run);
	return -1;
}

void fe_jobe_run_clear(struct fe_jobe_run *run)
{
	fe_job_clear(&run->job);
	run->n_files = 0;
}

/* ------------------------------------------------------------- results */

int fe_jobe_outcome(const char *status, const json_t *result)
{
	if (!status || strcmp(status, "done") || !result)
		return FE_JOBE_INTERNAL_ERROR;
	const char *s = json_string_value(json_object_get(result, "status"));
	json_int_t sig = json_integer_value(json_object_get(result, "signal"));
	if (!s)
		return FE_JOBE_INTERNAL_ERROR;
	if (!strcmp(s, "OK"))
		return FE_JOBE_OK;
	if (!strcmp(s, "CE"))
		return FE_JOBE_COMPILE_ERROR;
	if (!strcmp(s, "TLE"))
		return FE_JOBE_TIME_LIMIT;
	if (!strcmp(s, "MLE"))
		return FE_JOBE_MEMORY_LIMIT;
	if (!strcmp(s, "OLE"))
		return FE_JOBE_RUNTIME_ERROR;
	if (!strcmp(s, "RE")) {
		/* The seccomp filter kills with SIGSYS. */
		if (sig == 31)
			return FE_JOBE_ILLEGAL_SYSCALL;
		/* A program that exited, whatever its status, ran to
		 * completion in Jobe's terms; a signal is a runtime error. */
		return sig ? FE_JOBE_RUNTIME_ERROR : FE_JOBE_OK;
	}
	return FE_JOBE_INTERNAL_ERROR;
}

char *fe_jobe_utf8(const char *s, size_t len, size_t *outlen)
{
	/* Each byte grows to at most two. */
	char *out = malloc(len * 2 + 1);
	if (!out)
		return NULL;
	size_t o = 0, i = 0;
	while (i < len) {
		const unsigned char *u = (const unsigned char *)s + i;
		size_t n = 0;
		if (u[0] < 0x80)
			n = 1;
		else if (u[0] >= 0xc2 && u[0] <= 0xdf)
			n = 2;
		else if (u[0] >= 0xe0 && u[0] <= 0xef)
			n = 3;
		else if (u[0] >= 0xf0 && u[0] <= 0xf4)
			n = 4;
		bool ok = n > 0 && i + n <= len;
		for (size_t k = 1; ok && k < n; k++)
			ok = (u[k] & 0xc0) == 0x80;
		/* No overlong forms, surrogates or code points past U+10FFFF. */
		if (ok && n == 3)
			ok = !(u[0] == 0xe0 && u[1] < 0xa0) && !(u[0] == 0xed && u[1] >= 0xa0);
		if (ok && n == 4)
			ok = !(u[0] == 0xf0 && u[1] < 0x90) && !(u[0] == 0xf4 && u[1] >= 0x90);
		if (ok) {
			memcpy(out + o, u, n);
			o += n;
			i += n;
			continue;
		}
		/* Latin-1: the byte is the code point. */
		out[o++] = (char)(0xc0 | (u[0] >> 6));
		out[o++] = (char)(0x80 | (u[0] & 0x3f));
		i++;
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

/* The exact bytes of result[key] (its _b64 twin when the text form is not
 * exact) as a JSON string, bytes that are not UTF-8 read as Latin-1. */
static json_t *output_text(const json_t *res, const char *key)
{
	char k64[32];
	snprintf(k64, sizeof(k64), "%s_b64", key);
	const json_t *b = json_object_get(res, k64);
	if (json_is_string(b)) {
		struct gv_err err;
		size_t len = 0;
		unsigned char *d = gv_b64_decode(json_string_value(b), json_string_length(b),
						 json_string_length(b), &len, &err);
		if (d) {
			size_t n;
			char *u = fe_jobe_utf8((const char *)d, len, &n);
			free(d);
			json_t *j = u ? json_stringn(u, n) : NULL;
			free(u);
			if (j)
				return j;
		}
	}
	const json_t *t = json_object_get(res, key);
	return json_string(json_is_string(t) ? json_string_value(t) : "");
}

json_t *fe_jobe_render(const struct fe_subrow *row)
{
	const json_t *res = row->result;
	int outcome = fe_jobe_outcome(row->status, res);
	json_t *cmpinfo;
	if (outcome == FE_JOBE_COMPILE_ERROR)
		cmpinfo = output_text(res, "compile_output");
	else if (outcome == FE_JOBE_INTERNAL_ERROR)
		cmpinfo = json_string(json_is_string(json_object_get(res, "message"))
					      ? json_string_value(json_object_get(res, "message"))
					      : "the run failed in the server");
	else
		cmpinfo = json_string("");
	bool ran = outcome != FE_JOBE_COMPILE_ERROR && outcome != FE_JOBE_INTERNAL_ERROR;
	return json_pack("{s:s,s:i,s:o,s:o,s:o}", "run_id", row->id, "outcome", outcome, "cmpinfo", cmpinfo,
			 "stdout", ran ? output_text(res, "stdout") : json_string(""), "stderr",
			 ran ? output_text(res, "stderr") : json_string(""));
}

json_t *fe_jobe_overload(const char *why)
{
	return json_pack("{s:n,s:i,s:s,s:s,s:s}", "run_id", "outcome", FE_JOBE_OVERLOAD, "cmpinfo", "", "stdout",
			 "", "stderr", why ? why : "");
}

/* ------------------------------------------------------------- archive */

#define TAR_BLOCK 512

/* One ustar header for a regular file of size bytes, mode 0644. */
static void tar_header(char *h, const char *name, size_t size)
{
	memset(h, 0, TAR_BLOCK);
	snprintf(h, 100, "%s", name);
	snprintf(h + 100, 8, "%07o", 0644);
	snprintf(h + 108, 8, "%07o", 0);
	snprintf(h + 116, 8, "%07o", 0);
	snprintf(h + 124, 12, "%011llo", (unsigned long long)size);
	snprintf(h + 136, 12, "%011o", 0);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	/* The checksum is taken with its own field as spaces. */
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
	h[155] = ' ';
}

int fe_jobe_tar(const char *const *names, const char *const *data, const size_t *lens, size_t n, char **out,
		size_t *outlen)
{
	size_t total = 2 * TAR_BLOCK;
	for (size_t i = 0; i < n; i++) {
		if (strlen(names[i]) > 99 || lens[i] > SIZE_MAX / 2)
			return -1;
		total += TAR_BLOCK + (lens[i] + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
	}
	char *buf = calloc(1, total);
	if (!buf)
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		tar_header(buf + o, names[i], lens[i]);
		o += TAR_BLOCK;
		if (lens[i])
			memcpy(buf + o, data[i], lens[i]);
		o += (lens[i] + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
	}
	*out = buf;
	*outlen = total;
	return 0;
}
