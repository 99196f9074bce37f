/* The job message format (common/jobspec.h): strict validation of the
 * normalized request with every size checked before it is copied, its
 * canonical serialisation, and the result document builders. */
#include "common/jobspec.h"
#include "common/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

static char *dup_len(const char *s, size_t len)
{
	char *p = malloc(len + 1);
	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void gv_jobspec_free(struct gv_jobspec *spec)
{
	if (!spec)
		return;
	for (size_t i = 0; i < spec->n_files; i++) {
		free(spec->files[i].name);
		free(spec->files[i].content);
	}
	free(spec->files);
	for (size_t i = 0; i < spec->n_tests; i++) {
		free(spec->tests[i].input);
		free(spec->tests[i].expected);
	}
	free(spec->tests);
	free(spec->stdin_data);
	free(spec->checker_flags);
	free(spec->callback_url);
	free(spec->student);
	free(spec->assignment);
	free(spec->problem_id);
	for (size_t i = 0; i < spec->n_args; i++)
		free(spec->args[i]);
	free(spec->args);
	for (size_t i = 0; i < spec->n_compile_options; i++)
		free(spec->compile_options[i]);
	free(spec->compile_options);
	for (size_t i = 0; i < spec->n_interpreter_options; i++)
		free(spec->interpreter_options[i]);
	free(spec->interpreter_options);
	free(spec->additional_files);
	memset(spec, 0, sizeof(*spec));
}

static bool language_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > GV_JOBSPEC_LANGUAGE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

/* One path component of [A-Za-z0-9._-], not ".", "..", "job" (the
 * engine's job record) nor ".gavel..." (the engine's own job files, e.g.
 * gavel-unpack and the additional files' archive). */
bool gv_jobspec_label_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > GV_JOBSPEC_LABEL_MAX || !gv_utf8_valid((const uint8_t *)s, n))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

bool gv_jobspec_file_name_ok(const char *s)
{
	if (!s)
		return false;
	size_t n = strlen(s);
	if (n == 0 || n > GV_JOBSPEC_FILE_NAME_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 ||
	    strcmp(s, "job") == 0 || strncmp(s, ".gavel", 6) == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '-'))
			return false;
	}
	return true;
}

/* A string field as an owned copy; counts its length against *budget. */
static int take_string(const json_t *obj, const char *key, const char *path, unsigned flags, size_t max,
		       size_t *budget, const char *budget_name, char **out, size_t *outlen, struct gv_err *err)
{
	const char *s = NULL;
	int rc = gv_json_get_string(obj, key, flags, max, &s, err);
	if (rc < 0) {
		if (path)
			gv_err_prefix(err, "%s", path);
		return -1;
	}
	if (rc == 1)
		return 1;
	size_t len = json_string_length(json_object_get(obj, key));
	if (budget) {
		if (len > *budget)
			return gv_err_set(err, GV_ELIMIT, "%s exceed %s", budget_name,
					  budget_name[0] == 's' ? "1 MiB in total" : "16 MiB in total");
		*budget -= len;
	}
	*out = dup_len(s, len);
	if (!*out)
		return gv_err_set(err, ENOMEM, "out of memory");
	if (outlen)
		*outlen = len;
	return 0;
}

/* Bytes given either as a string (key: UTF-8, no NUL) or as base64
 * (key_b64: any bytes), never both; the decoded length counts against
 * *budget exactly as the string's does, and the decoder refuses more than
 * the budget before it allocates. */
static int take_bytes(const json_t *obj, const char *key, const char *key_b64, const char *path, unsigned flags,
		      size_t max, size_t *budget, char **out, size_t *outlen, struct gv_err *err)
{
	json_t *b = json_object_get(obj, key_b64);
	json_t *t = json_object_get(obj, key);
	if (!b || json_is_null(b))
		return take_string(obj, key, path, flags, max, budget, "test data", out, outlen, err);
	if (t && !json_is_null(t))
		return gv_err_set(err, GV_EINVAL, "field '%s%s%s': give '%s' or '%s', not both", path ? path : "",
				  path ? "." : "", key, key, key_b64);
	if (!json_is_string(b))
		return gv_err_set(err, GV_EINVAL, "field '%s%s%s': expected string, got %s", path ? path : "",
				  path ? "." : "", key_b64, gv_json_type_name(b));
	size_t cap = max < *budget ? max : *budget;
	struct gv_err derr;
	unsigned char *d = gv_b64_decode(json_string_value(b), json_string_length(b), cap, outlen, &derr);
	if (!d) {
		if (derr.code == GV_ELIMIT)
			return gv_err_set(err, GV_ELIMIT, "test data exceed 16 MiB in total");
		return gv_err_set(err, GV_EINVAL, "field '%s%s%s': invalid base64", path ? path : "", path ? "." : "",
				  key_b64);
	}
	*budget -= *outlen;
	*out = (char *)d;
	return 0;
}

/* "additional_files_b64": the archive's bytes, decoded within its own cap
 * and the data budget before anything is allocated. Never opened here (it
 * is attacker bytes for libarchive; only gavel-unpack in a sandbox reads
 * it). "" is the same as absent. */
static int parse_additional_files(const json_t *json, struct gv_jobspec *spec, size_t *budget, struct gv_err *err)
{
	json_t *b = json_object_get(json, "additional_files_b64");
	if (!b || json_is_null(b))
		return 0;
	if (!json_is_string(b))
		return gv_err_set(err, GV_EINVAL, "field 'additional_files_b64': expected string, got %s",
				  gv_json_type_name(b));
	bool own_cap = GV_JOBSPEC_ADDITIONAL_FILES_MAX <= *budget;
	size_t cap = own_cap ? GV_JOBSPEC_ADDITIONAL_FILES_MAX : *budget, len = 0;
	struct gv_err derr;
	unsigned char *d = gv_b64_decode(json_string_value(b), json_string_length(b), cap, &len, &derr);
	if (!d) {
		if (derr.code == GV_ELIMIT && own_cap)
			return gv_err_set(err, GV_ELIMIT, "field 'additional_files_b64': archive over %u bytes",
					  GV_JOBSPEC_ADDITIONAL_FILES_MAX);
		if (derr.code == GV_ELIMIT)
			return gv_err_set(err, GV_ELIMIT, "test data and additional files exceed 16 MiB in total");
		return gv_err_set(err, GV_EINVAL, "field 'additional_files_b64': invalid base64");
	}
	if (len == 0) {
		free(d);
		return 0;
	}
	*budget -= len;
	spec->additional_files = (char *)d;
	spec->additional_files_len = len;
	return 0;
}

static int get_u32(const json_t *obj, const char *key, uint32_t max, uint32_t *out, struct gv_err *err)
{
	int64_t v = 0;
	int rc = gv_json_get_int(obj, key, GV_JSON_NULL_OK, 0, max, &v, err);
	if (rc < 0)
		return -1;
	if (rc == 0)
		*out = (uint32_t)v;
	return 0;
}

static int parse_files(const json_t *json, struct gv_jobspec *spec, struct gv_err *err)
{
	json_t *files = NULL;
	if (gv_json_get_array(json, "files", GV_JSON_REQUIRED, GV_JOBSPEC_FILES_MAX, &files, err) != 0)
		return -1;
	size_t n = json_array_size(files);
	if (n == 0)
		return gv_err_set(err, GV_EINVAL, "field 'files': at least one file is required");
	spec->files = calloc(n, sizeof(*spec->files));
	if (!spec->files)
		return gv_err_set(err, ENOMEM, "out of memory");
	size_t budget = GV_JOBSPEC_SOURCE_MAX;
	static const char *const keys[] = { "name", "content", NULL };
	for (size_t i = 0; i < n; i++) {
		json_t *f = json_array_get(files, i);
		char path[64];
		snprintf(path, sizeof(path), "files[%zu]", i);
		if (!json_is_object(f))
			return gv_err_set(err, GV_EINVAL, "field '%s': expected object, got %s", path,
					  gv_json_type_name(f));
		if (gv_json_check_keys(f, keys, err) != 0) {
			gv_err_prefix(err, "%s", path);
			return -1;
		}
		struct gv_jobspec_file *out = &spec->files[i];
		spec->n_files = i + 1;
		if (take_string(f, "name", path, GV_JSON_REQUIRED, GV_JOBSPEC_FILE_NAME_MAX, NULL, NULL, &out->name,
				NULL, err) < 0 ||
		    take_string(f, "content", path, GV_JSON_REQUIRED, GV_JOBSPEC_SOURCE_MAX, &budget, "source files",
				&out->content, &out->len, err) < 0)
			return -1;
		if (!gv_jobspec_file_name_ok(out->name))
			return gv_err_set(err, GV_EINVAL,
					  "field '%s.name': must be one file name of [A-Za-z0-9._-], not 'job' nor "
					  "'.gavel...'", path);
		for (size_t j = 0; j < i; j++)
			if (strcmp(spec->files[j].name, out->name) == 0)
				return gv_err_set(err, GV_EINVAL, "field '%s.name': '%s' appears twice", path,
						  out->name);
	}
	return 0;
}

static int parse_tests(const json_t *json, struct gv_jobspec *spec, size_t *budget, struct gv_err *err)
{
	json_t *tests = NULL;
	int rc = gv_json_get_array(json, "tests", GV_JSON_NULL_OK, GV_JOBSPEC_TESTS_MAX, &tests, err);
	if (rc < 0)
		return -1;
	if (rc == 1)
		return 0;
	size_t n = json_array_size(tests);
	if (n == 0)
		return gv_err_set(err, GV_EINVAL, "field 'tests': at least one test, or leave it out for a plain run");
	spec->has_tests = true;
	spec->tests = calloc(n, sizeof(*spec->tests));
	if (!spec->tests)
		return gv_err_set(err, ENOMEM, "out of memory");
	static const char *const keys[] = { "input", "expected", "input_b64", "expected_b64", NULL };
	for (size_t i = 0; i < n; i++) {
		json_t *t = json_array_get(tests, i);
		char path[64];
		snprintf(path, sizeof(path), "tests[%zu]", i);
		if (!json_is_object(t))
			return gv_err_set(err, GV_EINVAL, "field '%s': expected object, got %s", path,
					  gv_json_type_name(t));
		if (gv_json_check_keys(t, keys, err) != 0) {
			gv_err_prefix(err, "%s", path);
			return -1;
		}
		struct gv_jobspec_test *out = &spec->tests[i];
		spec->n_tests = i + 1;
		rc = take_bytes(t, "input", "input_b64", path, GV_JSON_NULL_OK, GV_JOBSPEC_DATA_MAX, budget,
				&out->input, &out->input_len, err);
		if (rc < 0)
			return -1;
		if (rc == 1 && !(out->input = dup_len("", 0)))
			return gv_err_set(err, ENOMEM, "out of memory");
		if (take_bytes(t, "expected", "expected_b64", path, GV_JSON_REQUIRED, GV_JOBSPEC_DATA_MAX, budget,
			       &out->expected, &out->expected_len, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_checker(const json_t *json, struct gv_jobspec *spec, struct gv_err *err)
{
	json_t *c = NULL;
	int rc = gv_json_get_object(json, "checker", GV_JSON_NULL_OK, &c, err);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	static const char *const keys[] = { "mode", "flags", NULL };
	if (gv_json_check_keys(c, keys, err) != 0) {
		gv_err_prefix(err, "checker");
		return -1;
	}
	const char *mode = NULL;
	rc = gv_json_get_string(c, "mode", GV_JSON_NULL_OK, 16, &mode, err);
	if (rc < 0) {
		gv_err_prefix(err, "checker");
		return -1;
	}
	if (rc == 0) {
		if (strcmp(mode, "tokens") == 0)
			spec->checker_mode = GV_CHECKER_TOKENS;
		else if (strcmp(mode, "exact") == 0)
			spec->checker_mode = GV_CHECKER_EXACT;
		else
			return gv_err_set(err, GV_EINVAL, "field 'checker.mode': expected 'tokens' or 'exact'");
	}
	if (take_string(c, "flags", "checker", GV_JSON_NULL_OK, GV_JOBSPEC_FLAGS_MAX - 1, NULL, NULL,
			&spec->checker_flags, NULL, err) < 0)
		return -1;
	return 0;
}

static int parse_limits(const json_t *json, struct gv_jobspec *spec, struct gv_err *err)
{
	json_t *l = NULL;
	int rc = gv_json_get_object(json, "limits", GV_JSON_NULL_OK, &l, err);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	static const char *const keys[] = { "time_ms", "wall_ms", "memory_mb", "output_kb", "stack_kb", "procs", NULL };
	if (gv_json_check_keys(l, keys, err) != 0 ||
	    get_u32(l, "procs", GV_JOBSPEC_PROCS_MAX, &spec->procs, err) != 0 ||
	    get_u32(l, "stack_kb", GV_JOBSPEC_STACK_KB_MAX, &spec->stack_kb, err) != 0 ||
	    get_u32(l, "time_ms", GV_JOBSPEC_TIME_MS_MAX, &spec->time_ms, err) != 0 ||
	    get_u32(l, "wall_ms", GV_JOBSPEC_TIME_MS_MAX, &spec->wall_ms, err) != 0 ||
	    get_u32(l, "memory_mb", GV_JOBSPEC_MEMORY_MB_MAX, &spec->memory_mb, err) != 0 ||
	    get_u32(l, "output_kb", GV_JOBSPEC_OUTPUT_KB_MAX, &spec->output_kb, err) != 0) {
		gv_err_prefix(err, "limits");
		return -1;
	}
	return 0;
}

/* An array of at most max strings of at most GV_JOBSPEC_ARG_MAX bytes with
 * no newline (they become lines of the engine's job record) into *out. */
static int parse_words(const json_t *json, const char *key, size_t max, char ***out, size_t *n,
		       struct gv_err *err)
{
	json_t *a = json_object_get(json, key);
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return gv_err_set(err, GV_EINVAL, "field '%s': expected array, got %s", key, gv_json_type_name(a));
	size_t count = json_array_size(a);
	if (count > max)
		return gv_err_set(err, GV_ELIMIT, "field '%s': more than %zu entries", key, max);
	if (count == 0)
		return 0;
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return gv_err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < count; i++) {
		json_t *w = json_array_get(a, i);
		if (!json_is_string(w))
			return gv_err_set(err, GV_EINVAL, "field '%s[%zu]': expected string, got %s", key, i,
					  gv_json_type_name(w));
		size_t len = json_string_length(w);
		const char *v = json_string_value(w);
		if (len > GV_JOBSPEC_ARG_MAX)
			return gv_err_set(err, GV_ELIMIT, "field '%s[%zu]': longer than %d bytes", key, i,
					  GV_JOBSPEC_ARG_MAX);
		if (memchr(v, '\0', len) || memchr(v, '\n', len))
			return gv_err_set(err, GV_EINVAL, "field '%s[%zu]': holds a NUL or a newline", key, i);
		if (!((*out)[i] = dup_len(v, len)))
			return gv_err_set(err, ENOMEM, "out of memory");
		*n = i + 1;
	}
	return 0;
}

int gv_jobspec_from_json(const json_t *json, struct gv_jobspec *spec, struct gv_err *err)
{
	memset(spec, 0, sizeof(*spec));
	if (!json_is_object(json))
		return gv_err_set(err, GV_EINVAL, "request: expected object, got %s", gv_json_type_name(json));
	static const char *const keys[] = { "language",     "files",    "stdin", "stdin_b64", "tests", "checker",
					    "limits",       "return_output", "gpus", "callback_url", "problem_id",
					    "problem_version", "run_all", "samples_only", "args",
					    "compile_options", "stderr_to_stdout", "additional_files_b64", "student",
					    "assignment", "writable_box", "interpreter_options", NULL };
	if (gv_json_check_keys(json, keys, err) != 0)
		return -1;
	const char *lang = NULL;
	if (gv_json_get_string(json, "language", GV_JSON_REQUIRED, GV_JOBSPEC_LANGUAGE_MAX, &lang, err) != 0)
		return -1;
	if (!language_ok(lang))
		return gv_err_set(err, GV_EINVAL, "field 'language': not a language id");
	strcpy(spec->language, lang);
	if (parse_files(json, spec, err) != 0)
		return -1;
	size_t budget = GV_JOBSPEC_DATA_MAX;
	int rc = take_bytes(json, "stdin", "stdin_b64", NULL, GV_JSON_NULL_OK, GV_JOBSPEC_DATA_MAX, &budget,
			    &spec->stdin_data, &spec->stdin_len, err);
	if (rc < 0)
		return -1;
	if (rc == 1 && !(spec->stdin_data = dup_len("", 0)))
		return gv_err_set(err, ENOMEM, "out of memory");
	if (parse_tests(json, spec, &budget, err) != 0 || parse_additional_files(json, spec, &budget, err) != 0 ||
	    parse_checker(json, spec, err) != 0 || parse_limits(json, spec, err) != 0)
		return -1;
	if (parse_words(json, "args", GV_JOBSPEC_ARGS_MAX, &spec->args, &spec->n_args, err) != 0 ||
	    parse_words(json, "compile_options", GV_JOBSPEC_COMPILE_OPTIONS_MAX, &spec->compile_options,
			&spec->n_compile_options, err) != 0 ||
	    parse_words(json, "interpreter_options", GV_JOBSPEC_COMPILE_OPTIONS_MAX, &spec->interpreter_options,
			&spec->n_interpreter_options, err) != 0 ||
	    gv_json_get_bool(json, "stderr_to_stdout", GV_JSON_NULL_OK, &spec->stderr_to_stdout, err) < 0 ||
	    gv_json_get_bool(json, "writable_box", GV_JSON_NULL_OK, &spec->writable_box, err) < 0)
		return -1;
	if (gv_json_get_bool(json, "return_output", GV_JSON_NULL_OK, &spec->return_output, err) < 0 ||
	    get_u32(json, "gpus", GV_JOBSPEC_GPUS_MAX, &spec->gpus, err) != 0)
		return -1;
	if (take_string(json, "callback_url", NULL, GV_JSON_NULL_OK, GV_JOBSPEC_URL_MAX, NULL, NULL,
			&spec->callback_url, NULL, err) < 0 ||
	    take_string(json, "problem_id", NULL, GV_JSON_NULL_OK, GV_JOBSPEC_PROBLEM_MAX, NULL, NULL,
			&spec->problem_id, NULL, err) < 0)
		return -1;
	if (take_string(json, "student", NULL, GV_JSON_NULL_OK, GV_JOBSPEC_LABEL_MAX, NULL, NULL, &spec->student,
			NULL, err) < 0 ||
	    take_string(json, "assignment", NULL, GV_JSON_NULL_OK, GV_JOBSPEC_LABEL_MAX, NULL, NULL,
			&spec->assignment, NULL, err) < 0)
		return -1;
	if (spec->student && !gv_jobspec_label_ok(spec->student))
		return gv_err_set(err, GV_EINVAL, "field 'student': 1 to %d bytes of text without control characters",
				  GV_JOBSPEC_LABEL_MAX);
	if (spec->assignment && !gv_jobspec_label_ok(spec->assignment))
		return gv_err_set(err, GV_EINVAL,
				  "field 'assignment': 1 to %d bytes of text without control characters",
				  GV_JOBSPEC_LABEL_MAX);
	if (get_u32(json, "problem_version", INT32_MAX, &spec->problem_version, err) != 0 ||
	    gv_json_get_bool(json, "run_all", GV_JSON_NULL_OK, &spec->run_all, err) < 0 ||
	    gv_json_get_bool(json, "samples_only", GV_JSON_NULL_OK, &spec->samples_only, err) < 0)
		return -1;
	if ((spec->problem_version || spec->run_all || spec->samples_only) && !spec->problem_id)
		return gv_err_set(err, GV_EINVAL, "fields 'problem_version', 'run_all', 'samples_only': only with 'problem_id'");
	/* problem_version 0: not resolved yet (the frontend resolves it
	 * before it stores the row; the executor refuses 0). */
	if (spec->problem_id && (spec->n_args || spec->n_compile_options || spec->n_interpreter_options ||
				 spec->stderr_to_stdout || spec->stack_kb))
		return gv_err_set(err, GV_EINVAL, "fields 'args', 'compile_options', 'interpreter_options', "
				  "'stderr_to_stdout', 'limits.stack_kb': not with 'problem_id'");
	/* Between tests the box must stay as the compile left it. */
	if (spec->writable_box && (spec->problem_id || spec->has_tests))
		return gv_err_set(err, GV_EINVAL, "field 'writable_box': a plain run only (no 'tests', no 'problem_id')");
	if (spec->problem_id && spec->has_tests)
		return gv_err_set(err, GV_EINVAL, "field 'problem_id': the tests are the problem's, not 'tests'");
	return 0;
}

int gv_jobspec_parse(const char *text, size_t len, struct gv_jobspec *spec, struct gv_err *err)
{
	memset(spec, 0, sizeof(*spec));
	json_t *json = gv_json_parse(text, len, GV_JOBSPEC_JSON_MAX, 8, err);
	if (!json)
		return -1;
	int rc = gv_jobspec_from_json(json, spec, err);
	json_decref(json);
	return rc;
}

/* json_object_set_new that remembers a failure. */
static void put(json_t *obj, const char *key, json_t *v, bool *ok)
{
	if (!v || json_object_set_new(obj, key, v) != 0)
		*ok = false;
}

/* Bytes under key as a string when they are text, else under key_b64 in
 * base64 (the form gv_jobspec_from_json takes back). */
static void put_bytes(json_t *obj, const char *key, const char *key_b64, const char *s, size_t len, bool *ok)
{
	if (gv_json_text_ok(s, len)) {
		put(obj, key, json_stringn(len ? s : "", len), ok);
		return;
	}
	struct gv_err err;
	char *b = gv_b64_encode(s, len, NULL, &err);
	put(obj, key_b64, b ? json_string(b) : NULL, ok);
	free(b);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *words_json(char *const *words, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++) {
		if (json_array_append_new(a, json_string(words[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *gv_jobspec_to_json(const struct gv_jobspec *spec)
{
	bool ok = true;
	json_t *o = json_object();
	json_t *files = json_array();
	if (!o || !files) {
		json_decref(o);
		json_decref(files);
		return NULL;
	}
	put(o, "language", json_string(spec->language), &ok);
	for (size_t i = 0; i < spec->n_files; i++) {
		json_t *f = json_object();
		if (!f)
			ok = false;
		else {
			put(f, "name", json_string(spec->files[i].name), &ok);
			put(f, "content", json_stringn(spec->files[i].content, spec->files[i].len), &ok);
			if (json_array_append_new(files, f) != 0)
				ok = false;
		}
	}
	put(o, "files", files, &ok);
	put_bytes(o, "stdin", "stdin_b64", spec->stdin_data ? spec->stdin_data : "", spec->stdin_len, &ok);
	if (spec->has_tests) {
		json_t *tests = json_array();
		for (size_t i = 0; tests && i < spec->n_tests; i++) {
			json_t *t = json_object();
			if (!t) {
				ok = false;
				break;
			}
			put_bytes(t, "input", "input_b64", spec->tests[i].input, spec->tests[i].input_len, &ok);
			put_bytes(t, "expected", "expected_b64", spec->tests[i].expected, spec->tests[i].expected_len,
				  &ok);
			if (json_array_append_new(tests, t) != 0)
				ok = false;
		}
		put(o, "tests", tests, &ok);
	} else {
		put(o, "tests", json_null(), &ok);
	}
	json_t *checker = json_object();
	if (checker) {
		put(checker, "mode", json_string(spec->checker_mode == GV_CHECKER_EXACT ? "exact" : "tokens"), &ok);
		put(checker, "flags", str_or_null(spec->checker_flags), &ok);
	}
	put(o, "checker", checker, &ok);
	json_t *limits = json_object();
	if (limits) {
		put(limits, "time_ms", json_integer(spec->time_ms), &ok);
		put(limits, "wall_ms", json_integer(spec->wall_ms), &ok);
		put(limits, "memory_mb", json_integer(spec->memory_mb), &ok);
		put(limits, "output_kb", json_integer(spec->output_kb), &ok);
		put(limits, "stack_kb", json_integer(spec->stack_kb), &ok);
		if (spec->procs)
			put(limits, "procs", json_integer(spec->procs), &ok);
	}
	put(o, "limits", limits, &ok);
	put(o, "return_output", json_boolean(spec->return_output), &ok);
	put(o, "gpus", json_integer(spec->gpus), &ok);
	put(o, "callback_url", str_or_null(spec->callback_url), &ok);
	put(o, "student", str_or_null(spec->student), &ok);
	put(o, "assignment", str_or_null(spec->assignment), &ok);
	put(o, "problem_id", str_or_null(spec->problem_id), &ok);
	put(o, "problem_version", json_integer(spec->problem_version), &ok);
	put(o, "run_all", json_boolean(spec->run_all), &ok);
	put(o, "samples_only", json_boolean(spec->samples_only), &ok);
	put(o, "args", words_json(spec->args, spec->n_args), &ok);
	put(o, "compile_options", words_json(spec->compile_options, spec->n_compile_options), &ok);
	put(o, "stderr_to_stdout", json_boolean(spec->stderr_to_stdout), &ok);
	if (spec->n_interpreter_options)
		put(o, "interpreter_options", words_json(spec->interpreter_options, spec->n_interpreter_options), &ok);
	if (spec->writable_box)
		put(o, "writable_box", json_true(), &ok);
	if (spec->additional_files) {
		struct gv_err err;
		char *b = gv_b64_encode(spec->additional_files, spec->additional_files_len, NULL, &err);
		put(o, "additional_files_b64", b ? json_string(b) : NULL, &ok);
		free(b);
	} else {
		put(o, "additional_files_b64", json_null(), &ok);
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *gv_jobspec_to_text(const struct gv_jobspec *spec, size_t *len, struct gv_err *err)
{
	json_t *j = gv_jobspec_to_json(spec);
	if (!j) {
		gv_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	char *s = gv_json_dump(j, JSON_COMPACT, GV_JOBSPEC_JSON_MAX, len, err);
	json_decref(j);
	return s;
}

/* ---- results ---- */

bool gv_result_verdict_ok(const char *v)
{
	static const char *const ok[] = { "AC", "WA", "TLE", "MLE", "OLE", "RE", "CE", "PE", "IE" };
	if (!v)
		return false;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(v, ok[i]) == 0)
			return true;
	return false;
}

/* Program output as a JSON string: invalid UTF-8 and NUL bytes become
 * U+FFFD. A result is stored as jsonb, which refuses \u0000: one NUL in a
 * program's output would make its result unstorable (and the job would be
 * retried until it ended as an internal error). */
static json_t *lossy(const char *s, size_t len)
{
	if (!s)
		return json_string("");
	if (len > GV_RESULT_OUTPUT_MAX)
		len = GV_RESULT_OUTPUT_MAX;
	size_t nuls = 0;
	for (const char *p = memchr(s, '\0', len); p; p = memchr(p + 1, '\0', len - (size_t)(p + 1 - s)))
		nuls++;
	if (!nuls)
		return gv_json_string_lossy(s, len);
	char *copy = malloc(len + 2 * nuls);
	if (!copy)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i]) {
			copy[o++] = s[i];
		} else {
			memcpy(copy + o, "\xef\xbf\xbd", 3);
			o += 3;
		}
	}
	json_t *j = gv_json_string_lossy(copy, o);
	free(copy);
	return j;
}

/* Output bytes under key (lossy text) and, when the text form loses
 * something (invalid UTF-8, NUL), their exact bytes under "<key>_b64". */
static void put_output(json_t *obj, const char *key, const char *s, size_t len, bool *ok)
{
	if (!s)
		len = 0;
	if (len > GV_RESULT_OUTPUT_MAX)
		len = GV_RESULT_OUTPUT_MAX;
	put(obj, key, lossy(s, len), ok);
	if (!len || gv_json_text_ok(s, len))
		return;
	char twin[64];
	snprintf(twin, sizeof(twin), "%s" GV_RESULT_B64_SUFFIX, key);
	struct gv_err err;
	char *b = gv_b64_encode(s, len, NULL, &err);
	put(obj, twin, b ? json_string(b) : NULL, ok);
	free(b);
}

int gv_result_put_output(json_t *obj, const char *key, const char *s, size_t len)
{
	bool ok = true;
	put_output(obj, key, s, len, &ok);
	return ok ? 0 : -1;
}

void gv_result_drop_twins(json_t *result)
{
	static const char *const top[] = { "stdout_b64", "stderr_b64", "compile_output_b64", NULL };
	for (const char *const *k = top; *k; k++)
		json_object_del(result, *k);
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(result, "tests"), i, t)
		json_object_del(t, "stdout_b64");
}

static json_t *text(const char *s)
{
	return lossy(s ? s : "", s ? strlen(s) : 0);
}

json_t *gv_result_to_json(const struct gv_result *r)
{
	bool ok = true;
	json_t *o = json_object();
	if (!o)
		return NULL;
	put(o, "kind", json_string(r->kind ? r->kind : "run"), &ok);
	put(o, "verdict", text(r->verdict ? r->verdict : "IE"), &ok);
	put(o, "status", text(r->status ? r->status : "IE"), &ok);
	put(o, "message", text(r->message), &ok);
	put_output(o, "compile_output", r->compile_output, r->compile_output_len, &ok);
	put(o, "compile",
	    r->compile.ran ? json_pack("{s:I,s:I,s:I,s:i,s:i}", "time_ms", (json_int_t)r->compile.time_ms, "wall_ms",
				       (json_int_t)r->compile.wall_ms, "memory_kb", (json_int_t)r->compile.memory_kb,
				       "exit_code", r->compile.exit_code, "signal", r->compile.signal)
			   : json_null(),
	    &ok);
	put(o, "time_ms", json_integer((json_int_t)r->time_ms), &ok);
	put(o, "wall_ms", json_integer((json_int_t)r->wall_ms), &ok);
	put(o, "memory_kb", json_integer((json_int_t)r->memory_kb), &ok);
	put(o, "exit_code", json_integer(r->exit_code), &ok);
	put(o, "signal", json_integer(r->signal), &ok);
	if (r->has_output) {
		put_output(o, "stdout", r->out, r->out_len, &ok);
		put_output(o, "stderr", r->err_out, r->err_len, &ok);
		if (r->merged)
			put_output(o, "output", r->merged, r->merged_len, &ok);
	}
	if (r->kind && strcmp(r->kind, "judge") == 0) {
		json_t *tests = json_array();
		for (size_t i = 0; tests && i < r->n_tests; i++) {
			const struct gv_result_test *t = &r->tests[i];
			json_t *to = json_object();
			if (!to) {
				ok = false;
				break;
			}
			put(to, "verdict", text(t->verdict ? t->verdict : "IE"), &ok);
			put(to, "time_ms", json_integer((json_int_t)t->time_ms), &ok);
			put(to, "wall_ms", json_integer((json_int_t)t->wall_ms), &ok);
			put(to, "memory_kb", json_integer((json_int_t)t->memory_kb), &ok);
			put(to, "exit_code", json_integer(t->exit_code), &ok);
			put(to, "signal", json_integer(t->signal), &ok);
			put(to, "message", text(t->message), &ok);
			if (t->out)
				put_output(to, "stdout", t->out, t->out_len, &ok);
			if (t->err_out)
				put_output(to, "stderr", t->err_out, t->err_len, &ok);
			if (json_array_append_new(tests, to) != 0)
				ok = false;
		}
		put(o, "tests", tests, &ok);
	}
	put(o, "time_limit_ms", json_integer(r->time_limit_ms), &ok);
	put(o, "memory_limit_mb", json_integer(r->memory_limit_mb), &ok);
	put(o, "node", str_or_null(r->node), &ok);
	put(o, "sandboxes", json_integer(r->sandboxes), &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *gv_result_internal_error(const char *kind, const char *message)
{
	struct gv_result r = {
		.kind = kind ? kind : "run",
		.verdict = "IE",
		.status = "IE",
		.message = message,
	};
	return gv_result_to_json(&r);
}
