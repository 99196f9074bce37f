/* Judge0 CE 1.13.1 compatibility: request fields, number-or-string
 * values, explicit nulls, base64_encoded, `fields` selection, status ids
 * and descriptions, and the fixed documents (/statuses, /about,
 * /config_info, /languages). Judge0 keeps its time in seconds as strings
 * ("0.012") and memory in KB; we keep milliseconds and MB. */
#include "frontend/api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobspec.h"
#include "common/json.h"
#include "common/judge0.h"
#include "frontend/api_internal.h"

/* Judge0 accepts cpu_extra_time, but Gavel stops a program at its CPU
 * limit: none is granted, so none may be asked for. */
#define J0_MAX_EXTRA_TIME 0.0
/* One run per submission. */
#define J0_MAX_RUNS 1.0

const char *fe_j0_status_description(int id)
{
	return gv_judge0_status_description(id);
}

int fe_j0_status_id(const char *status, const char *verdict, const json_t *result)
{
	return gv_judge0_status_id(status, verdict, result);
}

static const char *const j0_field_names[FE_J0_FIELD_COUNT_] = {
	[FE_J0_TOKEN] = "token",
	[FE_J0_SOURCE_CODE] = "source_code",
	[FE_J0_LANGUAGE_ID] = "language_id",
	[FE_J0_LANGUAGE] = "language",
	[FE_J0_STDIN] = "stdin",
	[FE_J0_EXPECTED_OUTPUT] = "expected_output",
	[FE_J0_STDOUT] = "stdout",
	[FE_J0_STDERR] = "stderr",
	[FE_J0_COMPILE_OUTPUT] = "compile_output",
	[FE_J0_MESSAGE] = "message",
	[FE_J0_EXIT_CODE] = "exit_code",
	[FE_J0_EXIT_SIGNAL] = "exit_signal",
	[FE_J0_STATUS] = "status",
	[FE_J0_STATUS_ID] = "status_id",
	[FE_J0_CREATED_AT] = "created_at",
	[FE_J0_FINISHED_AT] = "finished_at",
	[FE_J0_TIME] = "time",
	[FE_J0_WALL_TIME] = "wall_time",
	[FE_J0_MEMORY] = "memory",
	[FE_J0_CPU_TIME_LIMIT] = "cpu_time_limit",
	[FE_J0_CPU_EXTRA_TIME] = "cpu_extra_time",
	[FE_J0_WALL_TIME_LIMIT] = "wall_time_limit",
	[FE_J0_MEMORY_LIMIT] = "memory_limit",
	[FE_J0_STACK_LIMIT] = "stack_limit",
	[FE_J0_MAX_PROCESSES] = "max_processes_and_or_threads",
	[FE_J0_PER_PROCESS_TIME] = "enable_per_process_and_thread_time_limit",
	[FE_J0_PER_PROCESS_MEMORY] = "enable_per_process_and_thread_memory_limit",
	[FE_J0_MAX_FILE_SIZE] = "max_file_size",
	[FE_J0_REDIRECT_STDERR] = "redirect_stderr_to_stdout",
	[FE_J0_ENABLE_NETWORK] = "enable_network",
	[FE_J0_NUMBER_OF_RUNS] = "number_of_runs",
	[FE_J0_COMPILER_OPTIONS] = "compiler_options",
	[FE_J0_COMMAND_LINE_ARGUMENTS] = "command_line_arguments",
	[FE_J0_CALLBACK_URL] = "callback_url",
	[FE_J0_ADDITIONAL_FILES] = "additional_files",
};

uint64_t fe_j0_default_fields(void)
{
	return 1ull << FE_J0_TOKEN | 1ull << FE_J0_TIME | 1ull << FE_J0_MEMORY | 1ull << FE_J0_STDOUT |
	       1ull << FE_J0_STDERR | 1ull << FE_J0_COMPILE_OUTPUT | 1ull << FE_J0_MESSAGE |
	       1ull << FE_J0_STATUS;
}

int fe_j0_parse_fields(const char *s, uint64_t *mask, struct fe_apierr *e)
{
	if (!s || !*s) {
		*mask = fe_j0_default_fields();
		return 0;
	}
	uint64_t m = 0;
	const char *p = s;
	while (*p) {
		size_t n = strcspn(p, ",");
		/* Judge0 trims spaces around names. */
		const char *b = p, *end = p + n;
		while (b < end && *b == ' ')
			b++;
		while (end > b && end[-1] == ' ')
			end--;
		size_t len = (size_t)(end - b);
		if (len == 1 && *b == '*') {
			m = (1ull << FE_J0_FIELD_COUNT_) - 1; /* status_id too, as Judge0 */
		} else if (len > 0) {
			int found = -1;
			for (int i = 0; i < FE_J0_FIELD_COUNT_; i++)
				if (strlen(j0_field_names[i]) == len && !memcmp(j0_field_names[i], b, len))
					found = i;
			if (found < 0)
				return fe_apierr_set(e, 400, "invalid_fields", "invalid field: %.*s",
						     (int)(len > 64 ? 64 : len), b);
			m |= 1ull << found;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	*mask = m ? m : fe_j0_default_fields();
	return 0;
}

int fe_j0_number(const json_t *obj, const char *key, double min, double max, double *out,
		 struct fe_apierr *e)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return 1;
	double d;
	if (json_is_number(v)) {
		d = json_number_value(v);
	} else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		if (!*s)
			return 1; /* Rails turns "" into nil */
		char *end;
		d = strtod(s, &end);
		while (*end == ' ')
			end++;
		if (end == s || *end)
			return fe_apierr_set(e, 422, "invalid_request", "%s: is not a number", key);
	} else {
		return fe_apierr_set(e, 422, "invalid_request", "%s: is not a number", key);
	}
	/* Rails' numericality messages, one bound at a time. */
	if (!isfinite(d))
		return fe_apierr_set(e, 422, "invalid_request", "%s: is not a number", key);
	if (d < min)
		return fe_apierr_set(e, 422, "invalid_request", "%s: must be greater than or equal to %.15g", key, min);
	if (d > max)
		return fe_apierr_set(e, 422, "invalid_request", "%s: must be less than or equal to %.15g", key, max);
	*out = d;
	return 0;
}

static int j0_bool(const json_t *obj, const char *key, bool *out, struct fe_apierr *e)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return 1;
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		if (!strcmp(s, "true") || !strcmp(s, "1")) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, "false") || !strcmp(s, "0") || !*s) {
			*out = false;
			return 0;
		}
	}
	if (json_is_integer(v)) {
		*out = json_integer_value(v) != 0;
		return 0;
	}
	return fe_apierr_set(e, 422, "invalid_request", "%s: is not a boolean", key);
}

/* A text field, base64-decoded when asked. *out is malloc'd (NUL after
 * *len bytes), NULL when absent. */
static int j0_text(const json_t *obj, const char *key, bool base64, size_t max, char **out,
		   size_t *len, struct fe_apierr *e)
{
	*out = NULL;
	*len = 0;
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return 1;
	if (!json_is_string(v))
		return fe_apierr_set(e, 400, "invalid_request", "field '%s': expected string, got %s", key,
				     gv_json_type_name(v));
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (base64) {
		struct gv_err err;
		/* Bounded: the decoder refuses more than max bytes out. */
		unsigned char *d = gv_b64_decode(s, n, max, len, &err);
		if (!d) {
			if (err.code == GV_ELIMIT)
				return fe_apierr_set(e, 413, "too_large", "field '%s': more than %zu bytes",
						     key, max);
			return fe_apierr_set(e, 400, "invalid_request", "field '%s': invalid base64", key);
		}
		*out = (char *)d;
		return 0;
	}
	if (n > max)
		return fe_apierr_set(e, 413, "too_large", "field '%s': more than %zu bytes", key, max);
	*out = malloc(n + 1);
	if (!*out)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	memcpy(*out, s, n + 1);
	*len = n;
	return 0;
}

/* Judge0's stack_limit bound (KB): 1 GiB, beyond Judge0's own 128000;
 * the memory limit bounds the stack anyway. */
#define FE_J0_MAX_STACK_KB 1048576

static const char *const j0_known[] = {
	"source_code", "language_id", "compiler_options", "command_line_arguments", "stdin",
	"expected_output", "cpu_time_limit", "cpu_extra_time", "wall_time_limit", "memory_limit",
	"stack_limit", "max_processes_and_or_threads", "enable_per_process_and_thread_time_limit",
	"enable_per_process_and_thread_memory_limit", "max_file_size", "redirect_stderr_to_stdout",
	"enable_network", "number_of_runs", "additional_files", "callback_url",
	/* Gavel's extensions */
	"problem_id", "version", "run_all", "samples_only", "student", "assignment", NULL,
};

/* May tenant q (NULL: none) use lang? */
static bool j0_lang_allowed(const struct lang_def *lang, const struct tenant_quota *q)
{
	if (!q || q->n_allowed_languages == 0)
		return true;
	for (size_t i = 0; i < q->n_allowed_languages; i++)
		if (!strcmp(q->allowed_languages[i], lang->id))
			return true;
	return false;
}

/* The language of language_id, or NULL with e set. */
static const struct lang_def *j0_language(const json_t *body, const struct fe_catalog *cat, struct fe_apierr *e)
{
	double lid = 0;
	int r = fe_j0_number(body, "language_id", 1, 1e9, &lid, e);
	if (r < 0)
		return NULL;
	if (r == 1) {
		fe_apierr_set(e, 422, "invalid_request", "language_id: can't be blank");
		return NULL;
	}
	const struct lang_def *lang = lid == floor(lid) ? fe_catalog_by_judge0(cat, (int)lid) : NULL;
	if (!lang)
		fe_apierr_set(e, 422, "unknown_language", "language_id: language with id %g doesn't exist", lid);
	return lang;
}

/* Refuses the Judge0 features this server does not honour (network) and
 * checks the type of those it accepts and ignores. */
static int j0_refuse_unsupported(const json_t *body, struct fe_apierr *e)
{
	bool net = false;
	if (j0_bool(body, "enable_network", &net, e) < 0)
		return -1;
	if (net)
		return fe_apierr_set(e, 422, "unsupported", "enable_network: not allowed");
	double runs = 1;
	if (fe_j0_number(body, "number_of_runs", 1, J0_MAX_RUNS, &runs, e) < 0)
		return -1;
	bool dummy;
	if (j0_bool(body, "enable_per_process_and_thread_time_limit", &dummy, e) < 0 ||
	    j0_bool(body, "enable_per_process_and_thread_memory_limit", &dummy, e) < 0)
		return -1;
	return 0;
}

/* Judge0's additional_files: base64 of a zip, whatever base64_encoded
 * says (Judge0 reads it so), checked and stored by
 * fe_spec_additional_files; refusals are 422s naming the field, as
 * Judge0's validations are. */
static int j0_additional_files(const json_t *body, struct fe_job *job, const struct fe_bounds *b,
			       struct fe_apierr *e)
{
	switch (fe_spec_additional_files(json_object_get(body, "additional_files"), b->max_additional_files, job)) {
	case FE_EXTRA_OK: return 0;
	case FE_EXTRA_INVALID:
		return fe_apierr_set(e, 422, "invalid_request", "additional_files: must be a base64-encoded zip");
	case FE_EXTRA_TOO_LARGE:
		return fe_apierr_set(e, 422, "too_large", "additional_files: the archive is larger than %zu bytes",
				     b->max_additional_files < GV_JOBSPEC_ADDITIONAL_FILES_MAX
					     ? b->max_additional_files
					     : (size_t)GV_JOBSPEC_ADDITIONAL_FILES_MAX);
	case FE_EXTRA_NOMEM: break;
	}
	return fe_apierr_set(e, 500, "internal", "out of memory");
}

/* Judge0's limits as given: seconds, KB, counts. */
struct j0_limits {
	double cpu, extra, wall, mem, stack, procs, fsize;
};

/* The most a Judge0 request may ask for, in Gavel's units: the lesser of
 * the language's maximum and the tenant's per-job ceiling. What submit
 * checks and what config_info advertises come from here alone. */
struct j0_caps {
	uint32_t time_ms, wall_ms, memory_mb, output_kb, procs;
};

static uint32_t cap_min(uint32_t lang_max, int64_t quota)
{
	return quota > 0 && quota < (int64_t)lang_max ? (uint32_t)quota : lang_max;
}

static void j0_caps_of(const struct lang_def *l, const struct tenant_quota *q, struct j0_caps *c)
{
	c->time_ms = cap_min(l->max.time_ms, q ? q->max_cpu_ms : 0);
	c->wall_ms = cap_min(l->max.wall_ms, q ? q->max_wall_ms : 0);
	c->memory_mb = cap_min(l->max.memory_mb, q ? q->max_memory_mb : 0);
	c->output_kb = cap_min(l->max.output_kb, q ? q->max_output_kb : 0);
	/* The job spec carries no process count: the default is what runs. */
	c->procs = l->defaults.procs;
}

static int j0_parse_limits(const json_t *body, const struct j0_caps *c, struct j0_limits *l, struct fe_apierr *e)
{
	*l = (struct j0_limits){ 0 };
	/* Refused above the cap (Judge0's 422), never lowered to it. */
	if (fe_j0_number(body, "cpu_time_limit", 0, c->time_ms / 1000.0, &l->cpu, e) < 0 ||
	    fe_j0_number(body, "cpu_extra_time", 0, J0_MAX_EXTRA_TIME, &l->extra, e) < 0 ||
	    fe_j0_number(body, "wall_time_limit", 0, c->wall_ms / 1000.0, &l->wall, e) < 0 ||
	    fe_j0_number(body, "memory_limit", 0, c->memory_mb * 1024.0, &l->mem, e) < 0 ||
	    fe_j0_number(body, "stack_limit", 0, 1048576.0 * 1024, &l->stack, e) < 0 ||
	    fe_j0_number(body, "max_processes_and_or_threads", 0, c->procs, &l->procs, e) < 0 ||
	    fe_j0_number(body, "max_file_size", 0, c->output_kb, &l->fsize, e) < 0)
		return -1;
	return 0;
}

/* The job's input: plain stdin, or with expected_output one judged test.
 * Any bytes: text as strings, the rest as the spec's _b64 forms. */
static int j0_add_input(struct fe_job *job, const char *in, size_t inl, const char *exp, size_t expl,
			const struct fe_bounds *b, struct fe_apierr *e)
{
	if (!exp)
		return fe_put_bytes(job->spec, "stdin", "stdin_b64", in ? in : "", in ? inl : 0, "stdin",
				    b->max_test_size, e);
	/* Judge0 compares the output with expected_output: one judged
	 * test, case- and token-exact (Judge0 strips trailing
	 * whitespace; the tokens checker is the nearest built-in). */
	json_t *test = json_object();
	json_t *tests = json_pack("[o]", test);
	json_t *checker = json_pack("{s:s,s:s}", "mode", "tokens", "flags", "case_sensitive");
	if (!test || !tests || !checker) {
		json_decref(tests);
		json_decref(checker);
		return fe_apierr_set(e, 500, "internal", "out of memory");
	}
	json_object_set_new(job->spec, "tests", tests);
	json_object_set_new(job->spec, "checker", checker);
	if (fe_put_bytes(test, "input", "input_b64", in ? in : "", in ? inl : 0, "stdin", b->max_test_size, e) < 0 ||
	    fe_put_bytes(test, "expected", "expected_b64", exp, expl, "expected_output", b->max_test_size, e) < 0)
		return -1;
	job->judged = true;
	return 0;
}

/* Judge0's command_line_arguments and compiler_options (plain text, at
 * most 512 characters, as Judge0 validates them; not base64 even with
 * base64_encoded) and redirect_stderr_to_stdout into the spec. */
static int j0_commands(const json_t *body, struct fe_job *job, struct fe_apierr *e)
{
	static const struct {
		const char *key;
		bool options;
	} fields[] = { { "command_line_arguments", false }, { "compiler_options", true } };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *s;
		size_t len;
		json_t *words;
		int r = fe_get_text(body, fields[i].key, fields[i].key, 512, false, &s, &len, e);
		if (r < 0)
			return -1;
		if (r == 1 || len == 0)
			continue;
		if (fe_words_split(s, len, fields[i].key, &words, e) < 0)
			return -1;
		if ((fields[i].options ? fe_spec_set_compile_options(job, words, fields[i].key, e)
				       : fe_spec_set_args(job, words, e)) < 0)
			return -1;
	}
	bool redirect = false;
	if (j0_bool(body, "redirect_stderr_to_stdout", &redirect, e) < 0)
		return -1;
	json_object_set_new(job->spec, "stderr_to_stdout", json_boolean(redirect));
	return 0;
}

/* Does the request ask for arguments, compiler options or stderr into
 * stdout? */
static bool j0_has_commands(const json_t *body)
{
	static const char *const keys[] = { "command_line_arguments", "compiler_options" };
	for (size_t i = 0; i < 2; i++) {
		const json_t *v = json_object_get(body, keys[i]);
		if (json_is_string(v) && json_string_length(v) > 0)
			return true;
	}
	return json_is_true(json_object_get(body, "redirect_stderr_to_stdout"));
}

/* Judge0's limits in our units: ms, MB rounded up, KB. */
static int j0_apply_limits(struct fe_job *job, const struct j0_limits *l, struct fe_apierr *e)
{
	uint32_t t_ms = (uint32_t)lround(l->cpu * 1000), w_ms = (uint32_t)lround(l->wall * 1000);
	/* memory_limit in KB; round up to whole MB. */
	uint32_t m_mb = (uint32_t)((l->mem + 1023) / 1024);
	uint32_t o_kb = (uint32_t)ceil(l->fsize);
	if (t_ms && l->extra > 0 && !w_ms)
		w_ms = 0; /* wall stays the language default */
	if (l->stack > FE_J0_MAX_STACK_KB)
		return fe_apierr_set(e, 422, "limit_exceeded", "stack_limit: must be less than or equal to %d",
				     FE_J0_MAX_STACK_KB);
	if (fe_job_limits(job, t_ms, w_ms, m_mb, o_kb, e) < 0) {
		if (w_ms && w_ms < job->time_ms)
			return fe_apierr_set(e, 422, "invalid_request",
					     "wall_time_limit: must be greater than or equal to cpu_time_limit (%g)",
					     job->time_ms / 1000.0);
		return -1;
	}
	/* stack_limit in KB; absent: the memory limit, not Judge0's 64 MB
	 * (a deep recursion that fits the memory limit is not an error). */
	if (l->stack > 0 && json_object_set_new(json_object_get(job->spec, "limits"), "stack_kb",
						json_integer((json_int_t)ceil(l->stack))) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

int fe_j0_parse(const json_t *body, bool base64, const struct fe_catalog *cat, const struct fe_bounds *b,
		struct fe_job *job, struct fe_apierr *e)
{
	char *src = NULL, *in = NULL, *exp = NULL;
	size_t srcl, inl, expl;
	memset(job, 0, sizeof(*job));
	if (!json_is_object(body))
		return fe_apierr_set(e, 400, "invalid_request", "body: expected a JSON object");
	/* Judge0 (Rails strong parameters) ignores unknown keys; so do we,
	 * but the ones we know and cannot honour are refused below. */
	(void)j0_known;
	const struct lang_def *lang = j0_language(body, cat, e);
	if (!lang)
		return -1;
	/* The language's maxima here; the tenant's ceilings are the quota
	 * check's (audited), worded for Judge0 by fe_j0_quota_error. */
	struct j0_caps caps;
	j0_caps_of(lang, NULL, &caps);
	if (j0_text(body, "source_code", base64, b->max_source, &src, &srcl, e) < 0)
		goto fail;
	if (!src || srcl == 0) {
		fe_apierr_set(e, 422, "invalid_request", "source_code: can't be blank");
		goto fail;
	}
	if (j0_text(body, "stdin", base64, b->max_test_size, &in, &inl, e) < 0 ||
	    j0_text(body, "expected_output", base64, b->max_test_size, &exp, &expl, e) < 0)
		goto fail;
	struct j0_limits l;
	if (j0_refuse_unsupported(body, e) < 0 || j0_parse_limits(body, &caps, &l, e) < 0)
		goto fail;
	if (fe_spec_base(job, lang, e) < 0)
		goto fail;
	size_t total = 0;
	if (fe_spec_add_file(job, lang->source, src, srcl, &total, b->max_source, "source_code", e) < 0)
		goto fail;
	/* Gavel's extension: problem_id judges the submission against a
	 * stored problem (its tests, or an instructor test suite with the
	 * student's files in additional_files), with the course labels. */
	json_t *pid = json_object_get(body, "problem_id");
	bool problem = pid && !json_is_null(pid);
	if (problem) {
		if (exp || j0_has_commands(body)) {
			fe_apierr_set(e, 422, "invalid_request",
				      "expected_output, command_line_arguments, compiler_options and "
				      "redirect_stderr_to_stdout: not with problem_id (the problem's tests judge it)");
			goto fail;
		}
	} else {
		if (j0_add_input(job, in, inl, exp, expl, b, e) < 0)
			goto fail;
		json_object_set_new(job->spec, "return_output", json_true());
	}
	if (j0_apply_limits(job, &l, e) < 0 || (!problem && j0_commands(body, job, e) < 0) ||
	    j0_additional_files(body, job, b, e) < 0)
		goto fail;
	if (fe_get_callback_url(body, job, e) < 0 || fe_spec_labels(body, job, e) < 0 ||
	    (problem && fe_spec_problem(body, job, e) < 0))
		goto fail;
	free(src);
	free(in);
	free(exp);
	return 0;
fail:
	free(src);
	free(in);
	free(exp);
	fe_job_clear(job);
	return -1;
}

/* A text value for a response: base64 or lossy UTF-8; null when absent. */
static json_t *out_text(const char *s, size_t len, bool base64)
{
	if (!s)
		return json_null();
	if (base64) {
		struct gv_err err;
		char *b = gv_b64_encode(s, len, NULL, &err);
		if (!b)
			return json_null();
		json_t *j = json_string(b);
		free(b);
		return j;
	}
	return gv_json_string_lossy(s, len);
}

/* obj[key] for a response: the exact bytes where obj has them in
 * key"_b64" (the spec's input forms, the result's output twins), else the
 * string. With base64 those bytes in base64; without, the text (invalid
 * UTF-8 shown as U+FFFD). Judge0 shows empty text as null unless base64. */
static json_t *out_jtext(const json_t *obj, const char *key, bool base64)
{
	if (base64)
		return gv_judge0_b64(obj, key);
	char twin[64];
	snprintf(twin, sizeof(twin), "%s" GV_RESULT_B64_SUFFIX, key);
	const json_t *v = json_object_get(obj, key), *b = json_object_get(obj, twin);
	if (!json_is_string(v) && json_is_string(b)) {
		/* Only the exact form is stored (a spec's stdin_b64): decode it. */
		struct gv_err err;
		size_t n = 0;
		unsigned char *d =
			gv_b64_decode(json_string_value(b), json_string_length(b), json_string_length(b), &n, &err);
		json_t *j = d && n ? gv_json_string_lossy((const char *)d, n) : json_null();
		free(d);
		return j;
	}
	if (!json_is_string(v) || json_string_length(v) == 0)
		return json_null(); /* Judge0 shows empty output as null */
	return out_text(json_string_value(v), json_string_length(v), false);
}

static json_t *seconds(json_t *ms)
{
	if (!json_is_integer(ms))
		return json_null();
	char buf[32];
	snprintf(buf, sizeof(buf), "%.3f", (double)json_integer_value(ms) / 1000.0);
	return json_string(buf);
}

/* The display version of lang with what live executors last published
 * (the catalog's cache; no number when unknown). */
static void j0_display_version(const struct fe_catalog *cat, const struct lang_def *lang, char *out, size_t outsz)
{
	if (!cat) {
		lang_display_version(lang, NULL, out, outsz);
		return;
	}
	struct fe_probed *p = malloc(sizeof(*p));
	if (p)
		fe_catalog_probed_get(cat, p);
	size_t i = 0;
	while (i < cat->n && cat->lang[i] != lang)
		i++;
	if (i < cat->n)
		fe_catalog_display_version(cat, p, i, out, outsz);
	else
		lang_display_version(lang, NULL, out, outsz);
	free(p);
}

/* What every field of one submission is rendered from. */
struct j0_view {
	const struct fe_subrow *row;
	const struct fe_catalog *cat;
	bool base64;
	const struct lang_def *lang; /* NULL: no longer defined */
	int lid;                     /* its Judge0 id, 0: none */
	const json_t *req, *res;     /* the stored request and result */
	json_t *test0, *rtest0;      /* the first test of each, when judged */
	json_t *limits;              /* the request's limits */
	int sid;                     /* Judge0 status id */
	bool done;
	bool ran;                    /* done, and the program ran (not a compilation error) */
};

/* A limit of the request, else def (the language's default, 0 without one). */
static json_int_t j0_limit(const struct j0_view *w, const char *key, json_int_t def)
{
	json_int_t v = json_integer_value(json_object_get(w->limits, key));
	return v ? v : def;
}

/* The fields from the request and the row: *v, or false when f is not one
 * of them. */
static bool j0_render_request(const struct j0_view *w, enum fe_j0_field f, json_t **v)
{
	switch (f) {
	case FE_J0_TOKEN: *v = json_string(w->row->id); return true;
	case FE_J0_SOURCE_CODE:
		*v = out_jtext(json_array_get(json_object_get(w->req, "files"), 0), "content", w->base64);
		return true;
	case FE_J0_LANGUAGE_ID: *v = w->lid ? json_integer(w->lid) : json_null(); return true;
	case FE_J0_LANGUAGE: {
		char ver[LANG_STR_MAX] = "";
		if (w->lang)
			j0_display_version(w->cat, w->lang, ver, sizeof(ver));
		*v = w->lang ? json_pack("{s:i,s:s+++}", "id", w->lid, "name", w->lang->name, " (", ver, ")")
			     : json_null();
		return true;
	}
	case FE_J0_STDIN:
		*v = w->test0 ? out_jtext(w->test0, "input", w->base64) : out_jtext(w->req, "stdin", w->base64);
		return true;
	case FE_J0_EXPECTED_OUTPUT: *v = out_jtext(w->test0, "expected", w->base64); return true;
	case FE_J0_CREATED_AT: *v = w->row->created_at ? json_string(w->row->created_at) : json_null(); return true;
	case FE_J0_FINISHED_AT:
		*v = w->row->finished_at ? json_string(w->row->finished_at) : json_null();
		return true;
	case FE_J0_CALLBACK_URL: {
		json_t *c = json_object_get(w->req, "callback_url");
		*v = json_is_string(c) ? json_string(json_string_value(c)) : json_null();
		return true;
	}
	/* Base64 always, as Judge0 returns it. */
	case FE_J0_ADDITIONAL_FILES: {
		json_t *a = json_object_get(w->req, "additional_files_b64");
		*v = json_is_string(a) ? json_string(json_string_value(a)) : json_null();
		return true;
	}
	default: return false;
	}
}

/* The fields from the result: *v, or false when f is not one of them. */
static bool j0_render_result(const struct j0_view *w, enum fe_j0_field f, json_t **v)
{
	const json_t *res = w->res;
	switch (f) {
	case FE_J0_STDOUT:
		*v = out_jtext(w->rtest0 ? w->rtest0 : res, "stdout", w->base64);
		return true;
	case FE_J0_STDERR: *v = out_jtext(w->rtest0 ? w->rtest0 : res, "stderr", w->base64); return true;
	case FE_J0_COMPILE_OUTPUT: *v = out_jtext(res, "compile_output", w->base64); return true;
	case FE_J0_MESSAGE: *v = out_jtext(res, "message", w->base64); return true;
	case FE_J0_EXIT_CODE:
		*v = w->done && json_is_integer(json_object_get(res, "exit_code"))
			     ? json_integer(json_integer_value(json_object_get(res, "exit_code")))
			     : json_null();
		return true;
	case FE_J0_EXIT_SIGNAL: {
		json_int_t s = json_integer_value(json_object_get(res, "signal"));
		*v = w->done && s ? json_integer(s) : json_null();
		return true;
	}
	case FE_J0_STATUS:
		*v = json_pack("{s:i,s:s}", "id", w->sid, "description", fe_j0_status_description(w->sid));
		return true;
	case FE_J0_STATUS_ID: *v = json_integer(w->sid); return true;
	/* Nothing ran after a compilation error: Judge0 has null there. */
	case FE_J0_TIME: *v = w->ran ? seconds(json_object_get(res, "time_ms")) : json_null(); return true;
	case FE_J0_WALL_TIME: *v = w->ran ? seconds(json_object_get(res, "wall_ms")) : json_null(); return true;
	case FE_J0_MEMORY: {
		json_t *m = json_object_get(res, "memory_kb");
		*v = w->ran && json_is_integer(m) ? json_integer(json_integer_value(m)) : json_null();
		return true;
	}
	default: return false;
	}
}

/* The limits and the fixed settings Judge0 reports: *v, or false when f is
 * not one of them. */
static bool j0_render_limits(const struct j0_view *w, enum fe_j0_field f, json_t **v)
{
	const struct lang_limits *d = w->lang ? &w->lang->defaults : NULL;
	switch (f) {
	case FE_J0_CPU_TIME_LIMIT:
		*v = json_real((double)j0_limit(w, "time_ms", d ? d->time_ms : 0) / 1000.0);
		return true;
	case FE_J0_CPU_EXTRA_TIME: *v = json_real(0); return true;
	case FE_J0_WALL_TIME_LIMIT:
		*v = json_real((double)j0_limit(w, "wall_ms", d ? d->wall_ms : 0) / 1000.0);
		return true;
	case FE_J0_MEMORY_LIMIT: *v = json_integer(j0_limit(w, "memory_mb", d ? d->memory_mb : 0) * 1024); return true;
	case FE_J0_STACK_LIMIT: *v = json_integer(64000); return true;
	case FE_J0_MAX_PROCESSES: *v = json_integer(d ? d->procs : 1); return true;
	case FE_J0_PER_PROCESS_TIME:
	case FE_J0_PER_PROCESS_MEMORY:
	case FE_J0_REDIRECT_STDERR:
	case FE_J0_ENABLE_NETWORK: *v = json_false(); return true;
	case FE_J0_MAX_FILE_SIZE: *v = json_integer(j0_limit(w, "output_kb", d ? d->output_kb : 0)); return true;
	case FE_J0_NUMBER_OF_RUNS: *v = json_integer(1); return true;
	case FE_J0_COMPILER_OPTIONS:
	case FE_J0_COMMAND_LINE_ARGUMENTS: *v = json_null(); return true;
	default: return false;
	}
}

json_t *fe_j0_render(const struct fe_subrow *row, uint64_t fields, bool base64,
		     const struct fe_catalog *cat)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	struct j0_view w = { .row = row, .cat = cat, .base64 = base64, .req = row->request, .res = row->result };
	w.lang = lang_find(cat->reg, row->language);
	w.lid = w.lang ? fe_catalog_judge0_id(cat, w.lang) : 0;
	w.test0 = json_array_get(json_object_get(w.req, "tests"), 0);
	w.rtest0 = json_array_get(json_object_get(w.res, "tests"), 0);
	w.limits = json_object_get(w.req, "limits");
	w.sid = fe_j0_status_id(row->status, row->verdict, w.res);
	w.done = w.res && !strcmp(row->status ? row->status : "", "done");
	w.ran = w.done && w.sid != GV_JUDGE0_COMPILATION_ERROR;
	for (int f = 0; f < FE_J0_FIELD_COUNT_; f++) {
		if (!(fields & (1ull << f)))
			continue;
		json_t *v = NULL;
		enum fe_j0_field fld = (enum fe_j0_field)f;
		if (!j0_render_request(&w, fld, &v) && !j0_render_result(&w, fld, &v))
			j0_render_limits(&w, fld, &v);
		if (!v || json_object_set_new(o, j0_field_names[f], v) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

json_t *fe_j0_languages(const struct fe_catalog *cat, const struct fe_probed *p)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < cat->n; i++) {
		if (!cat->judge0_id[i] || !fe_catalog_offered(p, i))
			continue;
		char v[LANG_STR_MAX];
		fe_catalog_display_version(cat, p, i, v, sizeof(v));
		json_array_append_new(a, json_pack("{s:i,s:s+++}", "id", cat->judge0_id[i], "name",
						   cat->lang[i]->name, " (", v, ")"));
	}
	return a;
}

static char *join_argv(char *const *argv)
{
	size_t n = 1;
	for (char *const *a = argv; a && *a; a++)
		n += strlen(*a) + 1;
	char *s = malloc(n);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (char *const *a = argv; a && *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

json_t *fe_j0_language(const struct fe_catalog *cat, int id, const struct fe_probed *p)
{
	const struct lang_def *l = fe_catalog_by_judge0(cat, id);
	if (!l)
		return NULL;
	size_t i = 0;
	while (i < cat->n && cat->lang[i] != l)
		i++;
	if (i == cat->n || !fe_catalog_offered(p, i))
		return NULL;
	char v[LANG_STR_MAX];
	fe_catalog_display_version(cat, p, i, v, sizeof(v));
	char *compile = l->compile ? join_argv(l->compile) : NULL;
	char *run = join_argv(l->run);
	json_t *o = json_pack("{s:i,s:s+++,s:b,s:s,s:o,s:o}", "id", id, "name", l->name, " (", v,
			      ")", "is_archived", 0, "source_file", l->source, "compile_cmd",
			      compile ? json_string(compile) : json_null(), "run_cmd",
			      run ? json_string(run) : json_null());
	free(compile);
	free(run);
	return o;
}

json_t *fe_j0_statuses(void)
{
	json_t *a = json_array();
	for (int i = 1; a && i <= 14; i++)
		json_array_append_new(a, json_pack("{s:i,s:s}", "id", i, "description", gv_judge0_status_description(i)));
	return a;
}

json_t *fe_j0_about(void)
{
	return json_pack("{s:s,s:s,s:s,s:s}", "version", "1.13.1", "homepage", "https://github.com/gavel",
			 "source_code", "https://github.com/gavel", "maintainer", "Gavel (Judge0-compatible API)");
}

/* Judge0 has one set of limits for the whole server; Gavel's differ per
 * language and per tenant. config_info advertises, over every Judge0
 * language the tenant may use (q NULL: every one), the least maximum (so
 * that a request at the advertised maximum is accepted whatever the
 * language) and the defaults of the first such language, each clamped to
 * that maximum and to the tenant's ceiling as submit clamps it. */
json_t *fe_j0_config_info(const struct fe_catalog *cat, const struct fe_bounds *b, bool enable_wait,
			  const struct tenant_quota *q)
{
	struct lang_limits d = { 0 }, m = { 0 };
	bool any = false;
	for (size_t i = 0; i < cat->n; i++) {
		if (!cat->judge0_id[i] || !j0_lang_allowed(cat->lang[i], q))
			continue;
		struct j0_caps c;
		j0_caps_of(cat->lang[i], q, &c);
		if (!any) {
			d = cat->lang[i]->defaults;
			m = (struct lang_limits){ .time_ms = c.time_ms, .wall_ms = c.wall_ms, .memory_mb = c.memory_mb,
						  .output_kb = c.output_kb, .procs = c.procs };
			any = true;
			continue;
		}
		m.time_ms = c.time_ms < m.time_ms ? c.time_ms : m.time_ms;
		m.wall_ms = c.wall_ms < m.wall_ms ? c.wall_ms : m.wall_ms;
		m.memory_mb = c.memory_mb < m.memory_mb ? c.memory_mb : m.memory_mb;
		m.output_kb = c.output_kb < m.output_kb ? c.output_kb : m.output_kb;
		m.procs = c.procs < m.procs ? c.procs : m.procs;
	}
	d.time_ms = d.time_ms < m.time_ms ? d.time_ms : m.time_ms;
	d.wall_ms = d.wall_ms < m.wall_ms ? d.wall_ms : m.wall_ms;
	d.memory_mb = d.memory_mb < m.memory_mb ? d.memory_mb : m.memory_mb;
	d.output_kb = d.output_kb < m.output_kb ? d.output_kb : m.output_kb;
	d.procs = d.procs < m.procs ? d.procs : m.procs;
	json_t *o = json_pack("{s:b,s:b,s:b,s:[],s:b,s:b,s:b,s:i,s:f,s:b}", "maintenance_mode", 0,
			      "enable_wait_result", enable_wait, "enable_compiler_options", 1,
			      "allowed_languages_for_compile_options", "enable_command_line_arguments", 1,
			      "enable_submission_delete", 1, "enable_callbacks", 1, "callbacks_max_tries", 3,
			      "callbacks_timeout", 5.0, "enable_additional_files", 1);
	if (!o)
		return NULL;
	json_t *with_options = json_object_get(o, "allowed_languages_for_compile_options");
	for (size_t i = 0; i < cat->n; i++)
		if (cat->judge0_id[i] && cat->lang[i]->compile_options && cat->lang[i]->compile_options[0])
			json_array_append_new(with_options, json_string(cat->lang[i]->name));
	json_object_update_new(
		o, json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:i,s:i,s:i,s:i}", "max_queue_size", 1000,
			     "cpu_time_limit", d.time_ms / 1000.0, "max_cpu_time_limit", m.time_ms / 1000.0,
			     "cpu_extra_time", 0.0, "max_cpu_extra_time", J0_MAX_EXTRA_TIME, "wall_time_limit",
			     d.wall_ms / 1000.0, "max_wall_time_limit", m.wall_ms / 1000.0, "memory_limit",
			     (int)d.memory_mb * 1024, "max_memory_limit", (int)m.memory_mb * 1024,
			     "stack_limit", 64000, "max_stack_limit", FE_J0_MAX_STACK_KB, "max_processes_and_or_threads",
			     (int)d.procs, "max_max_processes_and_or_threads", (int)m.procs));
	json_object_update_new(
		o, json_pack("{s:b,s:b,s:b,s:b,s:i,s:i,s:i,s:i,s:b,s:i,s:b,s:i,s:f,s:b,s:b,s:b}",
			     "enable_per_process_and_thread_time_limit", 0,
			     "allow_enable_per_process_and_thread_time_limit", 0,
			     "enable_per_process_and_thread_memory_limit", 0,
			     "allow_enable_per_process_and_thread_memory_limit", 0, "max_file_size",
			     (int)d.output_kb, "max_max_file_size", (int)m.output_kb, "number_of_runs", 1,
			     "max_number_of_runs", (int)J0_MAX_RUNS, "redirect_stderr_to_stdout", 0, "max_extract_size",
			     (int)(GV_JOBSPEC_EXTRACT_BYTES_MAX / 1024),
			     "enable_batched_submissions", 1, "max_submission_batch_size", (int)b->max_batch,
			     "submission_cache_duration", 0.0, "use_docs_as_homepage", 0,
			     "allow_enable_network", 0, "enable_network", 0));
	return o;
}

void fe_j0_quota_error(const struct tenant_quota_violation *v, struct fe_apierr *e)
{
	const char *lim = v->limit ? v->limit : "";
	if (!strcmp(lim, "max_cpu_ms"))
		fe_apierr_set(e, 422, "quota_exceeded", "cpu_time_limit: must be less than or equal to %g",
			      (double)v->allowed / 1000.0);
	else if (!strcmp(lim, "max_wall_ms"))
		fe_apierr_set(e, 422, "quota_exceeded", "wall_time_limit: must be less than or equal to %g",
			      (double)v->allowed / 1000.0);
	else if (!strcmp(lim, "max_memory_mb"))
		fe_apierr_set(e, 422, "quota_exceeded", "memory_limit: must be less than or equal to %lld",
			      (long long)v->allowed * 1024);
	else if (!strcmp(lim, "max_output_kb"))
		fe_apierr_set(e, 422, "quota_exceeded", "max_file_size: must be less than or equal to %lld",
			      (long long)v->allowed);
	else if (!strcmp(lim, "allowed_languages"))
		fe_apierr_set(e, 422, "quota_exceeded", "language_id: language is not allowed for this tenant");
	else
		fe_apierr_set(e, 422, "quota_exceeded", "%s", v->message);
}

json_t *fe_j0_error_body(int status, const char *msg)
{
	if (status != 422)
		return json_pack("{s:s}", "error", msg);
	/* "field: message" as every 422 of the Judge0 parser and
	 * fe_j0_quota_error word it; anything else is about the whole submission,
	 * which Rails files under "base". */
	char name[48];
	size_t n = strspn(msg, "abcdefghijklmnopqrstuvwxyz_");
	const char *text = msg;
	if (n > 0 && n < sizeof(name) && msg[n] == ':' && msg[n + 1] == ' ') {
		memcpy(name, msg, n);
		name[n] = '\0';
		text = msg + n + 2;
	} else {
		snprintf(name, sizeof(name), "base");
	}
	return json_pack("{s:[s]}", name, text);
}

static long long nonneg(long long v)
{
	return v < 0 ? 0 : v;
}

void fe_j0_workers_count(long long queued, long long assigned, long long live_slots, long long working,
			 long long stale_slots, long long retried, struct fe_j0_workers *out)
{
	live_slots = nonneg(live_slots);
	out->size = nonneg(queued) + nonneg(assigned);
	out->working = nonneg(working) > live_slots ? live_slots : nonneg(working);
	out->paused = nonneg(stale_slots);
	out->idle = live_slots - out->working;
	out->available = out->idle + out->working + out->paused;
	out->failed = nonneg(retried);
}
