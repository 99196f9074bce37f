/* The pure core of the three HTTP APIs: validation of request bodies and
 * their translation into the one normalized job spec (common/jobspec.h),
 * and the rendering of a stored submission row in each API's shape. No
 * I/O and no libevent: the handlers (api_*.c over server.c) call these, and
 * the unit tests drive them with tables of bodies. */
#pragma once

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/queue.h"
#include "languages/lang.h"
#include "tenants/quota.h"

/* An error meant for the client: HTTP status, stable code, message. */
struct fe_apierr {
	int status;
	const char *code; /* static string */
	char msg[GV_ERR_MSG_MAX];
};

/* Fills e; always returns -1 (GV_MINUS_ONE says so to the analyzer). */
int fe_apierr_set(struct fe_apierr *e, int status, const char *code, const char *fmt, ...)
	GV_PRINTF(4, 5);
#define fe_apierr_set(...) GV_MINUS_ONE((fe_apierr_set)(__VA_ARGS__))

/* Client-controlled sizes, from the config. */
struct fe_bounds {
	size_t max_source;    /* bytes of all files together */
	size_t max_tests;     /* inline tests */
	size_t max_test_size; /* bytes of stdin, one input or one expected output */
	size_t max_additional_files; /* bytes of the additional files archive, decoded */
	size_t max_batch;     /* Judge0 batch */
};

/* The languages as the APIs see them, with per-deployment Judge0 ids. */
#define FE_CATALOG_MAX LANG_MAX
/* What live executors published (gavel:lang:<id>, common/queue.h): per
 * catalog entry the clean version a live executor probed, "" when no live
 * executor offers it. known: filled from Redis at least once. */
struct fe_probed {
	bool known;
	char version[FE_CATALOG_MAX][GV_QUEUE_LANG_VERSION_MAX];
};

struct fe_catalog {
	const struct lang_registry *reg; /* borrowed */
	size_t n;
	const struct lang_def *lang[FE_CATALOG_MAX];
	int judge0_id[FE_CATALOG_MAX];   /* 0: none */
	/* The last versions read from Redis, shared by the worker threads
	 * (fe_catalog_probed_set/get copy under the mutex). */
	pthread_mutex_t probed_mu;
	struct fe_probed probed;
};

/* Stores p as the catalog's latest probed versions (thread-safe; the
 * catalog is otherwise read-only after init, hence the const). */
void fe_catalog_probed_set(const struct fe_catalog *cat, const struct fe_probed *p);
/* Copies the latest probed versions into out (known false before any). */
void fe_catalog_probed_get(const struct fe_catalog *cat, struct fe_probed *out);
/* Display version of entry i: the definition's template with the probed
 * version ("Node.js 18.19.0"); "" probed or p NULL: without a number. */
void fe_catalog_display_version(const struct fe_catalog *cat, const struct fe_probed *p, size_t i, char *out,
				size_t outsz);
/* Is entry i offered? Always true when p is NULL or not known (no
 * information: list everything); else a live executor published it. */
bool fe_catalog_offered(const struct fe_probed *p, size_t i);

/* overrides: "lang=id" items (NULL/0: none); an unknown language, a bad or
 * duplicate id is GV_ECONFIG. */
int fe_catalog_init(struct fe_catalog *cat, const struct lang_registry *reg,
		    char *const *overrides, size_t n_overrides, struct gv_err *err) GV_MUST_CHECK;
const struct lang_def *fe_catalog_by_judge0(const struct fe_catalog *cat, int id);
int fe_catalog_judge0_id(const struct fe_catalog *cat, const struct lang_def *lang);

/* A translated submission. */
struct fe_job {
	json_t *spec;                /* job spec JSON (owned) */
	const struct lang_def *lang; /* borrowed from the catalog */
	bool judged;                 /* has tests */
	uint32_t time_ms, wall_ms, memory_mb, output_kb; /* effective (defaults filled) */
};
void fe_job_clear(struct fe_job *job);

/* Checks limits against the language's maximum (422 "limit_exceeded")
 * and fills job's effective limits. Zero fields mean the default. */
int fe_job_limits(struct fe_job *job, uint32_t time_ms, uint32_t wall_ms, uint32_t memory_mb,
		  uint32_t output_kb, struct fe_apierr *e) GV_MUST_CHECK;

/* ---- native /v1 ---- */

/* POST /v1/submissions body -> job. 400 invalid_request, 413 too_large,
 * 422 unknown_language / limit_exceeded. */
int fe_native_parse(const json_t *body, const struct fe_catalog *cat, const struct fe_bounds *b,
		    struct fe_job *job, struct fe_apierr *e) GV_MUST_CHECK;

/* A submission row as read from PostgreSQL (borrowed strings). */
struct fe_subrow {
	const char *id;
	const char *language;
	const char *status;      /* queued running done failed cancelled */
	const char *verdict;     /* NULL until done */
	const char *created_at;  /* ISO 8601 */
	const char *finished_at; /* NULL until done */
	const json_t *request;   /* job spec, may be NULL */
	const json_t *result;    /* result document, may be NULL */
};

/* GET /v1/submissions/{id}: a new object. */
json_t *fe_native_render(const struct fe_subrow *row);

/* ---- Judge0 CE 1.13.1 ---- */

/* Judge0 status ids 1..14 and their descriptions. */
const char *fe_j0_status_description(int id);
/* The Judge0 status id of a row (status, verdict, result). Pure. */
int fe_j0_status_id(const char *status, const char *verdict, const json_t *result);

/* Judge0 field selection: a bit per field. */
enum fe_j0_field {
	FE_J0_TOKEN, FE_J0_SOURCE_CODE, FE_J0_LANGUAGE_ID, FE_J0_LANGUAGE, FE_J0_STDIN,
	FE_J0_EXPECTED_OUTPUT, FE_J0_STDOUT, FE_J0_STDERR, FE_J0_COMPILE_OUTPUT, FE_J0_MESSAGE,
	FE_J0_EXIT_CODE, FE_J0_EXIT_SIGNAL, FE_J0_STATUS, FE_J0_STATUS_ID, FE_J0_CREATED_AT,
	FE_J0_FINISHED_AT, FE_J0_TIME, FE_J0_WALL_TIME, FE_J0_MEMORY, FE_J0_CPU_TIME_LIMIT,
	FE_J0_CPU_EXTRA_TIME, FE_J0_WALL_TIME_LIMIT, FE_J0_MEMORY_LIMIT, FE_J0_STACK_LIMIT,
	FE_J0_MAX_PROCESSES, FE_J0_PER_PROCESS_TIME, FE_J0_PER_PROCESS_MEMORY,
	FE_J0_MAX_FILE_SIZE, FE_J0_REDIRECT_STDERR, FE_J0_ENABLE_NETWORK, FE_J0_NUMBER_OF_RUNS,
	FE_J0_COMPILER_OPTIONS, FE_J0_COMMAND_LINE_ARGUMENTS, FE_J0_CALLBACK_URL,
	FE_J0_ADDITIONAL_FILES, FE_J0_FIELD_COUNT_
};
/* The default selection: token time memory stdout stderr compile_output
 * message status. */
uint64_t fe_j0_default_fields(void);
/* Parses the `fields` query value ("a,b", "*"; NULL or "": default). An
 * unknown name is 400 naming it, as Judge0 does. */
int fe_j0_parse_fields(const char *s, uint64_t *mask, struct fe_apierr *e) GV_MUST_CHECK;

/* POST /submissions body -> job; base64 as the query says. Numbers may be
 * strings and any field may be null (= absent). 400 / 413 / 422; a limit
 * above the language's maximum is refused (422 "cpu_time_limit: must be
 * less than or equal to 10"), never lowered. stdin and expected_output
 * may be any bytes (base64): they go into the spec's _b64 forms. */
int fe_j0_parse(const json_t *body, bool base64, const struct fe_catalog *cat,
		const struct fe_bounds *b, struct fe_job *job, struct fe_apierr *e) GV_MUST_CHECK;
/* A tenant's per-job ceiling refusal (the quota check's, audited there)
 * as the Judge0 field it concerns, in Judge0's words and units:
 * "cpu_time_limit: must be less than or equal to 2.5". */
void fe_j0_quota_error(const struct tenant_quota_violation *v, struct fe_apierr *e);
/* The body of an error on a Judge0 route, in Judge0's shape: 422 as
 * {"field": ["message"]} from a "field: message" text ("base" when no
 * field is named), any
 * other status as {"error": "message"}. NULL only when out of memory. */
json_t *fe_j0_error_body(int status, const char *msg);

/* A row in Judge0's shape with the selected fields. With base64 the text
 * fields are base64 of their exact bytes (the _b64 forms of the request
 * and the result where present); without it, bytes that are not UTF-8
 * are replaced.
 * NULL only when out of memory. */
json_t *fe_j0_render(const struct fe_subrow *row, uint64_t fields, bool base64,
		     const struct fe_catalog *cat);

/* GET /languages, /languages/{id}, /statuses, /about, /config_info. The
 * language answers list only what p says live executors offer, with their
 * probed versions (p NULL: every language, no version number). */
json_t *fe_j0_languages(const struct fe_catalog *cat, const struct fe_probed *p);
json_t *fe_j0_language(const struct fe_catalog *cat, int id, const struct fe_probed *p); /* NULL: unknown */
json_t *fe_j0_statuses(void);
json_t *fe_j0_about(void);
/* q: the calling tenant (NULL: none presented). The maxima advertised
 * are the least, over the Judge0 languages q may use, of the lesser of
 * the language's maximum and q's ceiling: what fe_j0_parse and the quota
 * check accept for any of them. */
json_t *fe_j0_config_info(const struct fe_catalog *cat, const struct fe_bounds *b,
			  bool enable_wait, const struct tenant_quota *q);

/* GET /workers: one queue, "default", counted in sandbox slots (Judge0's
 * workers) so that available = idle + working + paused:
 *   size      submissions waiting for a slot: in the tenants' queues and
 *             assigned to a node but not started
 *   available every slot of every registered executor (regular and burst)
 *   working   slots running a job on executors with a live heartbeat
 *   paused    slots of registered executors whose heartbeat is too old
 *             (they take no work until they come back; their jobs are
 *             re-queued)
 *   idle      the rest: free slots of live executors
 *   failed    submissions in flight on a second or later attempt (an
 *             earlier executor lost them)
 * Inputs are the Redis figures (frontend/stats.c); negative ones count 0
 * and working is capped at the live slots. Pure. */
struct fe_j0_workers {
	long long size, available, idle, working, paused, failed;
};
void fe_j0_workers_count(long long queued, long long assigned, long long live_slots, long long working,
			 long long stale_slots, long long retried, struct fe_j0_workers *out);

/* ---- Piston v2 ---- */

/* Piston's name for a language ("python" for python3) and its aliases. */
const char *fe_piston_language(const struct lang_def *lang);
/* The semantic version (x.y.z) of a probed version string: "3.11.0" from
 * "3.11", "17.0.15" from "17.0.15"; "0.0.0" when it has no number. Writes
 * into buf. */
void fe_piston_version(const char *version, char *buf, size_t size);
/* True when version (x.y.z) satisfies range: "*", "3", "3.11", "3.x",
 * "3.11.0", ">=3.8 <4", "^3.10", "~3.11", "1.0.0 || >=3", ... Pure. */
bool fe_semver_satisfies(const char *version, const char *range);
/* Language by Piston name, alias, our id or extension, and version range
 * (NULL = "*"), matched against the versions live executors published
 * (fe_catalog_probed_get): once known, a language no live executor offers
 * does not match; before anything is known the name alone decides. NULL
 * when none matches. */
const struct lang_def *fe_piston_find(const struct fe_catalog *cat, const char *name,
				      const char *range);

json_t *fe_piston_runtimes(const struct fe_catalog *cat, const struct fe_probed *p);
/* POST /api/v2/execute body -> job (always returns output). 400 / 413 / 422;
 * an unknown runtime is 400 with Piston's message. */
int fe_piston_parse(const json_t *body, const struct fe_catalog *cat, const struct fe_bounds *b,
		    struct fe_job *job, struct fe_apierr *e) GV_MUST_CHECK;
json_t *fe_piston_render(const struct fe_subrow *row, const struct lang_def *lang, const struct fe_catalog *cat);

/* Helpers shared by the parsers (exposed for tests). */
/* Reads a Judge0 number: integer, real or a string holding one; null or
 * absent leaves *out. 1 absent, 0 set, -1 error (400 naming key). */
int fe_j0_number(const json_t *obj, const char *key, double min, double max, double *out,
		 struct fe_apierr *e) GV_MUST_CHECK;
