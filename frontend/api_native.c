/* The native API's request body and submission view. Strict: unknown
 * fields are refused (a misspelt "stdn" must not silently run with empty
 * input). */
#include "frontend/api.h"

#include <stdint.h>
#include <string.h>

#include "common/checker_flags.h"
#include "common/jobspec.h"
#include "frontend/api_internal.h"

static const char *const native_keys[] = { "language", "source", "files", "stdin", "stdin_b64", "tests",
					   "checker", "limits", "return_output", "callback_url",
					   "gpus", "problem_id", "version", "run_all", "samples_only", "args",
					   "compile_options", "stderr_to_stdout", "additional_files_b64", "student",
					   "assignment", NULL };

/* Course labels (issue 20): who submitted, for which assignment; opaque
 * to us, stored in the row (GET /v1/assignments/{name}/grades). */
int fe_spec_labels(const json_t *body, struct fe_job *job, struct fe_apierr *e)
{
	static const char *const keys[] = {"student", "assignment"};
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(body, keys[i]);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_string(v) || !gv_jobspec_label_ok(json_string_value(v)) ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return fe_apierr_set(e, 400, "invalid_request",
					     "field '%s': 1 to %d bytes of text without control characters", keys[i],
					     GV_JOBSPEC_LABEL_MAX);
		json_object_set(job->spec, keys[i], v);
	}
	return 0;
}

static int parse_files(const json_t *body, struct fe_job *job, const struct fe_bounds *b,
		       struct fe_apierr *e)
{
	json_t *source = json_object_get(body, "source");
	json_t *files = json_object_get(body, "files");
	if (source && json_is_null(source))
		source = NULL;
	if (files && json_is_null(files))
		files = NULL;
	if ((source != NULL) == (files != NULL))
		return fe_apierr_set(e, 400, "invalid_request", "give exactly one of 'source' and 'files'");
	json_t *pid = json_object_get(body, "problem_id");
	bool problem = pid && !json_is_null(pid);
	size_t total = 0;
	if (source) {
		const char *s;
		size_t n;
		if (fe_get_text(body, "source", "source", b->max_source, true, &s, &n, e) < 0)
			return -1;
		return fe_spec_add_file(job, job->lang->source, s, n, &total, b->max_source, "source", e);
	}
	if (!json_is_array(files) || json_array_size(files) == 0 || json_array_size(files) > 32)
		return fe_apierr_set(e, 400, "invalid_request", "field 'files': expected 1 to 32 files");
	size_t i;
	json_t *f;
	json_array_foreach(files, i, f) {
		char field[48];
		snprintf(field, sizeof(field), "files[%zu]", i);
		if (!json_is_object(f))
			return fe_apierr_set(e, 400, "invalid_request", "field '%s': expected object", field);
		const char *name = NULL, *content;
		size_t nlen = 0, clen;
		int r = fe_get_text(f, "name", field, 64, false, &name, &nlen, e);
		if (r < 0)
			return -1;
		if (fe_get_text(f, "content", field, b->max_source, true, &content, &clen, e) < 0)
			return -1;
		/* The first file is the main source, saved under the
		 * language's own name whatever the client called it; but
		 * for a stored problem, whose instructor test suite may
		 * import it by its own name, the name it was given. */
		if (i == 0 && !(problem && name && fe_file_name_ok(name) && strcmp(name, job->lang->source) != 0))
			name = job->lang->source;
		else if (!name || !fe_file_name_ok(name) || !strcmp(name, job->lang->source))
			return fe_apierr_set(e, 400, "invalid_request",
					     "field '%s.name': one path component of [A-Za-z0-9._-], "
					     "not the main source's name", field);
		if (fe_spec_add_file(job, name, content, clen, &total, b->max_source, field, e) < 0)
			return -1;
	}
	return 0;
}

static int parse_tests(const json_t *body, struct fe_job *job, const struct fe_bounds *b,
		       struct fe_apierr *e)
{
	json_t *tests = json_object_get(body, "tests");
	if (!tests || json_is_null(tests))
		return 0;
	if (!json_is_array(tests) || json_array_size(tests) == 0)
		return fe_apierr_set(e, 400, "invalid_request", "field 'tests': expected a non-empty array");
	if (json_array_size(tests) > b->max_tests)
		return fe_apierr_set(e, 413, "too_large", "field 'tests': %zu tests, at most %zu allowed",
				     json_array_size(tests), b->max_tests);
	json_t *out = json_array();
	if (!out || json_object_set_new(job->spec, "tests", out) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	size_t i;
	json_t *t;
	json_array_foreach(tests, i, t) {
		char field[48];
		snprintf(field, sizeof(field), "tests[%zu]", i);
		if (!json_is_object(t))
			return fe_apierr_set(e, 400, "invalid_request", "field '%s': expected object", field);
		static const char *const keys[] = { "input", "expected", "input_b64", "expected_b64", NULL };
		const char *key;
		json_t *v;
		json_object_foreach(t, key, v) {
			(void)v;
			bool known = false;
			for (const char *const *k = keys; *k; k++)
				known |= !strcmp(key, *k);
			if (!known)
				return fe_apierr_set(e, 400, "invalid_request", "field '%s.%.40s': unknown",
						     field, key);
		}
		char *in = NULL, *exp = NULL;
		size_t inl = 0, expl = 0;
		char f_in[64], f_exp[64];
		snprintf(f_in, sizeof(f_in), "%s.input", field);
		snprintf(f_exp, sizeof(f_exp), "%s.expected", field);
		json_t *o = json_object();
		if (!o || json_array_append_new(out, o) != 0)
			return fe_apierr_set(e, 500, "internal", "out of memory");
		int rc = fe_get_bytes(t, "input", "input_b64", f_in, b->max_test_size, &in, &inl, e);
		if (rc >= 0) {
			rc = fe_get_bytes(t, "expected", "expected_b64", f_exp, b->max_test_size, &exp, &expl, e);
			if (rc == 1)
				rc = fe_apierr_set(e, 400, "invalid_request", "field '%s': required", f_exp);
		}
		if (rc >= 0)
			rc = fe_put_bytes(o, "input", "input_b64", in ? in : "", inl, f_in, b->max_test_size, e);
		if (rc >= 0)
			rc = fe_put_bytes(o, "expected", "expected_b64", exp, expl, f_exp, b->max_test_size, e);
		free(in);
		free(exp);
		if (rc < 0)
			return -1;
	}
	job->judged = true;
	return 0;
}

static int parse_checker(const json_t *body, struct fe_job *job, struct fe_apierr *e)
{
	json_t *c = json_object_get(body, "checker");
	if (!c || json_is_null(c))
		return 0;
	const char *mode = "tokens", *flags = NULL;
	if (json_is_string(c)) {
		mode = json_string_value(c);
	} else if (json_is_object(c)) {
		const char *key;
		json_t *v;
		json_object_foreach(c, key, v) {
			if (strcmp(key, "mode") && strcmp(key, "flags"))
				return fe_apierr_set(e, 400, "invalid_request", "field 'checker.%.40s': unknown",
						     key);
			if (!json_is_null(v) && !json_is_string(v))
				return fe_apierr_set(e, 400, "invalid_request",
						     "field 'checker.%s': expected string", key);
		}
		if (json_is_string(json_object_get(c, "mode")))
			mode = json_string_value(json_object_get(c, "mode"));
		if (json_is_string(json_object_get(c, "flags")))
			flags = json_string_value(json_object_get(c, "flags"));
	} else {
		return fe_apierr_set(e, 400, "invalid_request", "field 'checker': expected string or object");
	}
	if (strcmp(mode, "tokens") && strcmp(mode, "exact"))
		return fe_apierr_set(e, 400, "invalid_request",
				     "field 'checker.mode': expected \"tokens\" or \"exact\"");
	if (flags) {
		if (strlen(flags) >= GV_CHECKER_FLAGS_MAX)
			return fe_apierr_set(e, 400, "invalid_request", "field 'checker.flags': too long");
		struct gv_checker_opts o;
		struct gv_err err;
		gv_checker_opts_default(&o);
		if (gv_checker_parse_flags(flags, &o, &err) < 0)
			return fe_apierr_set(e, 400, "invalid_request", "field 'checker.flags': %s", err.msg);
	}
	json_t *o = flags ? json_pack("{s:s,s:s}", "mode", mode, "flags", flags)
			  : json_pack("{s:s}", "mode", mode);
	if (!o || json_object_set_new(job->spec, "checker", o) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

static int parse_limits(const json_t *body, struct fe_job *job, struct fe_apierr *e)
{
	uint32_t t = 0, w = 0, m = 0, o = 0;
	json_t *l = json_object_get(body, "limits");
	if (l && !json_is_null(l)) {
		if (!json_is_object(l))
			return fe_apierr_set(e, 400, "invalid_request", "field 'limits': expected object");
		const char *key;
		json_t *v;
		json_object_foreach(l, key, v) {
			(void)v;
			if (strcmp(key, "time_ms") && strcmp(key, "wall_ms") && strcmp(key, "memory_mb") &&
			    strcmp(key, "output_kb") && strcmp(key, "stack_kb"))
				return fe_apierr_set(e, 400, "invalid_request", "field 'limits.%.40s': unknown",
						     key);
		}
		if (fe_get_uint(l, "time_ms", "limits.time_ms", 3600000, &t, e) < 0 ||
		    fe_get_uint(l, "wall_ms", "limits.wall_ms", 3600000, &w, e) < 0 ||
		    fe_get_uint(l, "memory_mb", "limits.memory_mb", 1048576, &m, e) < 0 ||
		    fe_get_uint(l, "output_kb", "limits.output_kb", 1048576, &o, e) < 0)
			return -1;
	}
	if (fe_job_limits(job, t, w, m, o, e) < 0)
		return -1;
	uint32_t stack = 0;
	if (l && !json_is_null(l) && fe_get_uint(l, "stack_kb", "limits.stack_kb", GV_JOBSPEC_STACK_KB_MAX, &stack, e) < 0)
		return -1;
	if (stack && json_object_set_new(json_object_get(job->spec, "limits"), "stack_kb", json_integer(stack)) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

/* args, compile_options and stderr_to_stdout: what a run adds to the
 * language's commands (frontend/api_words.c). */
static int parse_commands(const json_t *body, struct fe_job *job, struct fe_apierr *e)
{
	json_t *v = json_object_get(body, "args"), *words;
	if (v && !json_is_null(v) &&
	    (fe_words_from_array(v, "args", &words, e) < 0 || fe_spec_set_args(job, words, e) < 0))
		return -1;
	v = json_object_get(body, "compile_options");
	if (v && !json_is_null(v) &&
	    (fe_words_from_array(v, "compile_options", &words, e) < 0 ||
	     fe_spec_set_compile_options(job, words, "compile_options", e) < 0))
		return -1;
	v = json_object_get(body, "stderr_to_stdout");
	if (v && !json_is_null(v)) {
		if (!json_is_boolean(v))
			return fe_apierr_set(e, 400, "invalid_request", "field 'stderr_to_stdout': expected boolean");
		json_object_set(job->spec, "stderr_to_stdout", v);
	}
	return 0;
}

/* A submission to a stored problem (issue 6): problem_id, and optionally
 * version (default: the current ready one, resolved by the handler before
 * the row is stored), run_all and samples_only. The tests are the
 * problem's: 'tests', 'stdin' and 'checker' are refused with it. */
int fe_spec_problem(const json_t *body, struct fe_job *job, struct fe_apierr *e)
{
	const char *pid;
	size_t plen;
	int r = fe_get_text(body, "problem_id", "problem_id", 64, false, &pid, &plen, e);
	if (r < 0)
		return -1;
	bool has = r == 0;
	static const char *const only[] = { "version", "run_all", "samples_only" };
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_object_get(body, only[i]);
		if (v && !json_is_null(v) && !has)
			return fe_apierr_set(e, 400, "invalid_request", "field '%s': only with 'problem_id'", only[i]);
		if (i > 0 && v && !json_is_null(v) && !json_is_boolean(v))
			return fe_apierr_set(e, 400, "invalid_request", "field '%s': expected boolean", only[i]);
	}
	if (!has)
		return 0;
	/* Not an id we ever make: it cannot name any problem. */
	if (plen < 16 || strspn(pid, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != plen)
		return fe_apierr_set(e, 404, "not_found", "no such problem");
	json_t *t = json_object_get(body, "tests"), *c = json_object_get(body, "checker");
	json_t *in = json_object_get(body, "stdin"), *in64 = json_object_get(body, "stdin_b64");
	/* An empty stdin is no input: Judge0 clients send "" by default. */
	bool no_in = !in || json_is_null(in) || (json_is_string(in) && json_string_length(in) == 0);
	if ((t && !json_is_null(t)) || (c && !json_is_null(c)) || !no_in || (in64 && !json_is_null(in64)))
		return fe_apierr_set(e, 400, "invalid_request",
				     "'tests', 'stdin' and 'checker' come from the problem with 'problem_id'");
	if (json_integer_value(json_object_get(job->spec, "gpus")) > 0)
		return fe_apierr_set(e, 400, "invalid_request", "'gpus' is not available with 'problem_id'");
	if (json_object_get(job->spec, "args") || json_object_get(job->spec, "compile_options") ||
	    json_object_get(job->spec, "stderr_to_stdout") ||
	    json_object_get(json_object_get(job->spec, "limits"), "stack_kb"))
		return fe_apierr_set(e, 400, "invalid_request", "'args', 'compile_options', 'stderr_to_stdout' "
				     "and 'limits.stack_kb' are not available with 'problem_id'");
	uint32_t version = 0;
	if (fe_get_uint(body, "version", "version", INT32_MAX, &version, e) < 0)
		return -1;
	json_object_set_new(job->spec, "problem_id", json_stringn(pid, plen));
	json_object_set_new(job->spec, "problem_version", json_integer(version));
	json_object_set_new(job->spec, "run_all", json_boolean(json_is_true(json_object_get(body, "run_all"))));
	json_object_set_new(job->spec, "samples_only",
			    json_boolean(json_is_true(json_object_get(body, "samples_only"))));
	json_t *ro = json_object_get(body, "return_output");
	if (!ro || json_is_null(ro))
		json_object_set_new(job->spec, "return_output", json_false());
	job->judged = true;
	return 0;
}

int fe_native_parse(const json_t *body, const struct fe_catalog *cat, const struct fe_bounds *b,
		    struct fe_job *job, struct fe_apierr *e)
{
	memset(job, 0, sizeof(*job));
	if (!json_is_object(body))
		return fe_apierr_set(e, 400, "invalid_request", "body: expected a JSON object");
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)body, key, v) {
		bool known = false;
		for (const char *const *k = native_keys; *k; k++)
			known |= !strcmp(*k, key);
		if (!known)
			return fe_apierr_set(e, 400, "invalid_request", "field '%.40s': unknown", key);
	}
	const char *lang_id;
	size_t len;
	if (fe_get_text(body, "language", "language", 64, true, &lang_id, &len, e) < 0)
		return -1;
	const struct lang_def *lang = lang_find(cat->reg, lang_id);
	if (!lang)
		return fe_apierr_set(e, 422, "unknown_language", "language '%.40s' is not available",
				     lang_id);
	if (fe_spec_base(job, lang, e) < 0)
		goto fail;
	if (parse_files(body, job, b, e) < 0 || parse_tests(body, job, b, e) < 0 ||
	    parse_checker(body, job, e) < 0 || parse_limits(body, job, e) < 0 ||
	    parse_commands(body, job, e) < 0)
		goto fail;
	char *in;
	size_t inl;
	int r = fe_get_bytes(body, "stdin", "stdin_b64", "stdin", b->max_test_size, &in, &inl, e);
	if (r < 0)
		goto fail;
	if (r == 0) {
		if (job->judged) {
			free(in);
			fe_apierr_set(e, 400, "invalid_request", "give 'stdin' for a run or 'tests', not both");
			goto fail;
		}
		r = fe_put_bytes(job->spec, "stdin", "stdin_b64", in, inl, "stdin", b->max_test_size, e);
		free(in);
		if (r < 0)
			goto fail;
	}
	json_t *ro = json_object_get(body, "return_output");
	if (ro && !json_is_null(ro)) {
		if (!json_is_boolean(ro)) {
			fe_apierr_set(e, 400, "invalid_request", "field 'return_output': expected boolean");
			goto fail;
		}
		json_object_set(job->spec, "return_output", ro);
	} else if (!job->judged) {
		/* A plain run is only useful with its output. */
		json_object_set_new(job->spec, "return_output", json_true());
	}
	uint32_t gpus = 0;
	if (fe_get_uint(body, "gpus", "gpus", GV_JOBSPEC_GPUS_MAX, &gpus, e) < 0)
		goto fail;
	json_object_set_new(job->spec, "gpus", json_integer(gpus));
	if (fe_get_callback_url(body, job, e) < 0 || fe_spec_labels(body, job, e) < 0)
		goto fail;
	if (fe_spec_problem(body, job, e) < 0)
		goto fail;
	switch (fe_spec_additional_files(json_object_get(body, "additional_files_b64"), b->max_additional_files, job)) {
	case FE_EXTRA_OK: break;
	case FE_EXTRA_INVALID:
		fe_apierr_set(e, 400, "invalid_request", "field 'additional_files_b64': expected base64 of a zip");
		goto fail;
	case FE_EXTRA_TOO_LARGE:
		fe_apierr_set(e, 413, "too_large", "field 'additional_files_b64': more than %zu bytes",
			      b->max_additional_files < GV_JOBSPEC_ADDITIONAL_FILES_MAX
				      ? b->max_additional_files
				      : (size_t)GV_JOBSPEC_ADDITIONAL_FILES_MAX);
		goto fail;
	case FE_EXTRA_NOMEM:
		fe_apierr_set(e, 500, "internal", "out of memory");
		goto fail;
	}
	return 0;
fail:
	fe_job_clear(job);
	return -1;
}

json_t *fe_native_render(const struct fe_subrow *row)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "id", row->id, "status", row->status, "language",
			      row->language, "created_at", row->created_at ? row->created_at : "");
	if (!o)
		return NULL;
	json_object_set_new(o, "verdict", row->verdict ? json_string(row->verdict) : json_null());
	json_object_set_new(o, "finished_at",
			    row->finished_at ? json_string(row->finished_at) : json_null());
	json_object_set_new(o, "result", row->result ? json_deep_copy(row->result) : json_null());
	return o;
}
