/* Shared by the fuzz targets of the HTTP APIs (fuzz_judge0.c,
 * fuzz_native.c, fuzz_piston.c): the language catalog they parse against,
 * small client bounds so that the size checks are reached, and the checks
 * every accepted request must pass beyond "does not crash". A broken
 * invariant aborts, which libFuzzer reports as a crash. */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include "frontend/api.h"

/* The catalog of the languages/ folder (or $GAVEL_FUZZ_LANGUAGES), with a
 * probed version published for every language. Loaded once; exits with a
 * message when the folder does not load. */
const struct fe_catalog *fz_catalog(void);

/* Bounds smaller than the defaults, so that inputs reach them. */
extern const struct fe_bounds fz_bounds;

/* The JSON of a request body as the frontend reads it (read_body in
 * frontend/handlers.c: gv_json_parse with max_body_size). NULL when it is
 * refused. */
json_t *fz_body(const char *buf, size_t len);

/* Checks an accepted request: its spec is one the executor takes
 * (gv_jobspec_parse over the stored text, the same language, and a job
 * that exec_lang_job_build builds from the first file and the limits),
 * and the job's effective limits are within the language's maximum.
 * Aborts otherwise. */
void fz_check_job(const struct fe_job *job);

/* Renders the accepted request as a stored row in every API's shape, with
 * result (any JSON, may be NULL) as the stored result: renderers must not
 * fail on what the parsers let through. Aborts when one returns NULL. */
void fz_render_row(const struct fe_job *job, const json_t *result);
