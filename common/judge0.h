/* Judge0 CE 1.13.1's status ids and descriptions, shared by the frontend's
 * Judge0 API (frontend/api_judge0.c) and the executor's Judge0-shaped
 * callbacks (executor/daemon/webhook.c), so that a callback and a GET never
 * disagree on a status. Pure. */
#pragma once

#include <jansson.h>

/* The ids Gavel's own code tests for. */
#define GV_JUDGE0_COMPILATION_ERROR 6

/* 1..14 from a row's status, verdict (may be NULL: then the result's) and
 * result (may be NULL; its "signal" tells the runtime errors apart). */
int gv_judge0_status_id(const char *status, const char *verdict, const json_t *result);
/* "Accepted", ... for 1..14; NULL otherwise. Static strings. */
const char *gv_judge0_status_description(int id);
/* obj[key] as a Judge0 base64_encoded=true field: the exact bytes of
 * obj[key"_b64"] where present (a result's output twin, a spec's _b64
 * input), else the base64 of the string; null when neither is a string.
 * New reference; NULL only when out of memory. */
json_t *gv_judge0_b64(const json_t *obj, const char *key);
