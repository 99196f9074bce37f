/* Helpers shared by the API translation files (api_*.c); not for other
 * components. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "frontend/api.h"

/* A JSON string of s[0..len), refusing more than max bytes (413), NUL
 * bytes and invalid UTF-8 (400). NULL with e filled. */
json_t *fe_text(const char *s, size_t len, const char *field, size_t max, struct fe_apierr *e);
/* Sets obj[key] to s[0..len) as a string when those bytes are UTF-8
 * without NUL, else obj[key_b64] to their base64 (the job spec's exact
 * form); more than max bytes is 413. 0, or -1 with e. */
int fe_put_bytes(json_t *obj, const char *key, const char *key_b64, const char *s, size_t len, const char *field,
		 size_t max, struct fe_apierr *e);
/* Bytes from obj[key] (a string, no NUL) or obj[key_b64] (base64 of any
 * bytes; both given is 400), at most max (413). *out is malloc'd with a NUL
 * after *len bytes: 0 set, 1 neither given, -1 error. field names key in
 * messages. */
int fe_get_bytes(const json_t *obj, const char *key, const char *key_b64, const char *field, size_t max,
		 char **out, size_t *len, struct fe_apierr *e);
/* A submission's additional files archive, v: base64 (a string; NULL,
 * null or "" is none) of at most max bytes (and GV_JOBSPEC_ADDITIONAL_FILES_MAX).
 * Decoded only to check that, then put re-encoded (canonical base64) into
 * job->spec as "additional_files_b64": never opened on this side; only
 * gavel-unpack reads it, inside the submission's sandbox. Returns
 * FE_EXTRA_OK (set or none), FE_EXTRA_INVALID (not a string, not base64),
 * FE_EXTRA_TOO_LARGE or FE_EXTRA_NOMEM: each API words its own answer. */
enum fe_extra_result { FE_EXTRA_OK, FE_EXTRA_INVALID, FE_EXTRA_TOO_LARGE, FE_EXTRA_NOMEM };
enum fe_extra_result fe_spec_additional_files(const json_t *v, size_t max, struct fe_job *job);
/* String field: 0 set, 1 absent/null (unless required), -1 error. */
int fe_get_text(const json_t *obj, const char *key, const char *field, size_t max, bool required,
		const char **out, size_t *len, struct fe_apierr *e);
/* The optional "callback_url" field into job->spec: 0 set or absent, -1
 * error (400). Only http:// and https:// URLs with a host, no spaces or
 * control characters, are taken at submit; where they may point (public
 * addresses only) is the deliverer's check when it resolves the host. */
int fe_get_callback_url(const json_t *body, struct fe_job *job, struct fe_apierr *e);
/* Non-negative integer field <= max: 0 set, 1 absent/null, -1 error. */
int fe_get_uint(const json_t *obj, const char *key, const char *field, uint32_t max, uint32_t *out,
		struct fe_apierr *e);
/* Starts job->spec for lang. */
int fe_spec_base(struct fe_job *job, const struct lang_def *lang, struct fe_apierr *e);
/* Appends a file, counting its size into *total against max; a name
 * already in the spec is 400. */
int fe_spec_add_file(struct fe_job *job, const char *name, const char *content, size_t len,
		     size_t *total, size_t max, const char *field, struct fe_apierr *e);
bool fe_file_name_ok(const char *name);

/* The course labels "student" and "assignment" into job->spec (both
 * optional): 0, or -1 with e (400). Native and Judge0 (api_native.c). */
int fe_spec_labels(const json_t *body, struct fe_job *job, struct fe_apierr *e);
/* A submission to a stored problem: "problem_id" (absent: 0, nothing
 * done) with "version", "run_all", "samples_only"; the tests are the
 * problem's, so "tests", "stdin" and "checker" are refused. Native and
 * Judge0, where it is Gavel's extension (api_native.c). */
int fe_spec_problem(const json_t *body, struct fe_job *job, struct fe_apierr *e);

/* ---- api_words.c ---- */

/* s[0..len) split into words as a shell splits a simple command (blanks,
 * '...', "...", backslash), nothing expanded: a new JSON array in *out.
 * At most GV_JOBSPEC_ARGS_MAX words of GV_JOBSPEC_ARG_MAX bytes, no NUL
 * or newline inside one (422 / 400 naming field). */
int fe_words_split(const char *s, size_t len, const char *field, json_t **out, struct fe_apierr *e) GV_MUST_CHECK;
/* The same checks over a JSON array of strings: a new array in *out. */
int fe_words_from_array(const json_t *v, const char *field, json_t **out, struct fe_apierr *e) GV_MUST_CHECK;
/* job->spec's "args" := words (taken). */
int fe_spec_set_args(struct fe_job *job, json_t *words, struct fe_apierr *e) GV_MUST_CHECK;
/* job->spec's "compile_options" := words (taken), each one of the
 * language's compile_options (else 422 compile_option_not_allowed). */
int fe_spec_set_compile_options(struct fe_job *job, json_t *words, const char *field,
				struct fe_apierr *e) GV_MUST_CHECK;
