/* Words a submission adds to its commands: run arguments (Piston `args`,
 * Judge0 `command_line_arguments`, native `args`) and compiler options
 * (Judge0 `compiler_options`, native `compile_options`), checked into the
 * job spec with the limits of common/jobspec.h, options against the
 * language's allowlist. Judge0 hands its strings to a shell; here they are
 * split as a shell splits a simple command and nothing is expanded. */
#include <string.h>

#include "common/jobspec.h"
#include "frontend/api_internal.h"

/* Appends the word w[0..len) to arr, checking it as the job spec will. */
static int add_word(json_t *arr, const char *w, size_t len, const char *field, struct fe_apierr *e)
{
	if (json_array_size(arr) >= GV_JOBSPEC_ARGS_MAX)
		return fe_apierr_set(e, 422, "limit_exceeded", "%s: more than %d words", field, GV_JOBSPEC_ARGS_MAX);
	if (len > GV_JOBSPEC_ARG_MAX)
		return fe_apierr_set(e, 422, "limit_exceeded", "%s: a word longer than %d bytes", field,
				     GV_JOBSPEC_ARG_MAX);
	if (memchr(w, '\0', len) || memchr(w, '\n', len))
		return fe_apierr_set(e, 400, "invalid_request", "%s: a word holds a NUL or a newline", field);
	json_t *s = json_stringn(w, len);
	if (!s)
		return fe_apierr_set(e, 400, "invalid_request", "%s: not valid UTF-8", field);
	if (json_array_append_new(arr, s) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

int fe_words_split(const char *s, size_t len, const char *field, json_t **out, struct fe_apierr *e)
{
	json_t *arr = json_array();
	char *word = malloc(len + 1);
	if (!arr || !word) {
		json_decref(arr);
		free(word);
		return fe_apierr_set(e, 500, "internal", "out of memory");
	}
	size_t wl = 0, i = 0;
	bool in_word = false;
	char quote = 0;
	while (i < len) {
		char c = s[i++];
		if (quote == '\'') {
			if (c == '\'')
				quote = 0;
			else
				word[wl++] = c;
		} else if (c == '\\' && i < len && (!quote || strchr("\"\\$`", s[i]))) {
			/* In double quotes a backslash escapes only these, as in sh. */
			word[wl++] = s[i++];
			in_word = true;
		} else if (quote == '"') {
			if (c == '"')
				quote = 0;
			else
				word[wl++] = c;
		} else if (c == '\'' || c == '"') {
			quote = c;
			in_word = true;
		} else if (c == ' ' || c == '\t' || c == '\n') {
			if (in_word && add_word(arr, word, wl, field, e) < 0)
				goto fail;
			wl = 0;
			in_word = false;
		} else {
			word[wl++] = c;
			in_word = true;
		}
	}
	if (quote) {
		fe_apierr_set(e, 400, "invalid_request", "%s: unterminated %c quote", field, quote);
		goto fail;
	}
	if (in_word && add_word(arr, word, wl, field, e) < 0)
		goto fail;
	free(word);
	*out = arr;
	return 0;
fail:
	free(word);
	json_decref(arr);
	return -1;
}

int fe_words_from_array(const json_t *v, const char *field, json_t **out, struct fe_apierr *e)
{
	if (!json_is_array(v))
		return fe_apierr_set(e, 400, "invalid_request", "%s: expected an array of strings", field);
	json_t *arr = json_array();
	if (!arr)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	size_t i;
	json_t *w;
	json_array_foreach(v, i, w) {
		if (!json_is_string(w)) {
			json_decref(arr);
			return fe_apierr_set(e, 400, "invalid_request", "%s[%zu]: expected string, got %s", field, i,
					     gv_json_type_name(w));
		}
		if (add_word(arr, json_string_value(w), json_string_length(w), field, e) < 0) {
			json_decref(arr);
			return -1;
		}
	}
	*out = arr;
	return 0;
}

int fe_spec_set_args(struct fe_job *job, json_t *words, struct fe_apierr *e)
{
	if (json_object_set_new(job->spec, "args", words) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

int fe_spec_set_compile_options(struct fe_job *job, json_t *words, const char *field, struct fe_apierr *e)
{
	if (json_array_size(words) > GV_JOBSPEC_COMPILE_OPTIONS_MAX) {
		json_decref(words);
		return fe_apierr_set(e, 422, "limit_exceeded", "%s: more than %d options", field,
				     GV_JOBSPEC_COMPILE_OPTIONS_MAX);
	}
	if (json_array_size(words) > 0 && !job->lang->compile) {
		json_decref(words);
		return fe_apierr_set(e, 422, "compile_option_not_allowed", "%s: %s has no compile step", field,
				     job->lang->name);
	}
	size_t i;
	json_t *w;
	json_array_foreach(words, i, w) {
		if (!lang_compile_option_allowed(job->lang, json_string_value(w))) {
			fe_apierr_set(e, 422, "compile_option_not_allowed",
				      "%s: '%.64s' is not allowed for %s (see the language's compile_options)", field,
				      json_string_value(w), job->lang->name);
			json_decref(words);
			return -1;
		}
	}
	if (json_object_set_new(job->spec, "compile_options", words) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}
