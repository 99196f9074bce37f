/* The pure core of Jobe's REST API 1.0 (the sandbox server Moodle's
 * CodeRunner question type calls): Jobe's language ids, a run_spec into
 * Gavel's job spec (limits clamped to the language's maximum and the
 * tenant's ceiling), the run result's outcome codes, output made UTF-8 the
 * way a Jobe client can read it, file ids, and the small tar archive that
 * carries a run's uploaded files into its sandbox. No I/O: jobe.c is the
 * shell over the event loop, PostgreSQL and Redis. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/jobspec.h"
#include "frontend/api.h"
#include "tenants/quota.h"

/* Entries of a run_spec's file_list (Jobe's own limit is none; this is
 * GV_JOBSPEC_FILES_MAX, what one archive of ours may sensibly hold). */
#define FE_JOBE_FILES_MAX 32
/* A file id: 8..64 bytes of [A-Za-z0-9_-] (CodeRunner sends an MD5 in
 * hex; Jobe's own ids are alphanumeric). */
#define FE_JOBE_FILE_ID_MIN 8
#define FE_JOBE_FILE_ID_MAX 64
/* Jobe's defaults where a run_spec leaves the parameter out: 5 s of CPU;
 * memory is the language's own default (Jobe's 200 MB is below what a
 * JVM needs). The wall clock allows three times the CPU limit. */
#define FE_JOBE_DEFAULT_CPU_MS 5000u
#define FE_JOBE_WALL_FACTOR 3u

/* Jobe's outcome codes. */
enum fe_jobe_outcome {
	FE_JOBE_COMPILE_ERROR = 11,
	FE_JOBE_RUNTIME_ERROR = 12,
	FE_JOBE_TIME_LIMIT = 13,
	FE_JOBE_OK = 15,
	FE_JOBE_MEMORY_LIMIT = 17,
	FE_JOBE_ILLEGAL_SYSCALL = 19,
	FE_JOBE_INTERNAL_ERROR = 20,
	FE_JOBE_OVERLOAD = 21,
};

struct fe_jobe_file_ref {
	char id[FE_JOBE_FILE_ID_MAX + 1];
	char name[GV_JOBSPEC_FILE_NAME_MAX + 1];
};

/* A parsed run: the job (its spec without the uploaded files) and the
 * files it names, which the shell fetches from the tenant's file store. */
struct fe_jobe_run {
	struct fe_job job;
	size_t n_files;
	struct fe_jobe_file_ref files[FE_JOBE_FILES_MAX];
	unsigned numprocs; /* asked for (0: not given); what runs is clamped */
};

/* Gavel's language for a Jobe language id ("nodejs" is javascript), NULL
 * when none (or the catalog lacks it). */
const struct lang_def *fe_jobe_language(const struct fe_catalog *cat, const char *jobe_id);
/* The Jobe id of a Gavel language, NULL when Jobe has none for it. */
const char *fe_jobe_id_of(const struct lang_def *lang);
/* GET languages: [[jobe_id, version], ...] of the languages p says live
 * executors offer (p NULL or not known: every one, version ""). */
json_t *fe_jobe_languages(const struct fe_catalog *cat, const struct fe_probed *p);

/* POST runs body -> run. q: the tenant's per-job ceilings (NULL: none).
 * Errors are 400 with Jobe's wording ("Language 'x' is not known",
 * "run_spec is missing the required attribute 'sourcecode'"), 413 for
 * sizes. Limits asked beyond the language's maximum or q are lowered to
 * it, as Jobe lowers them to its own maximum. */
int fe_jobe_parse(const json_t *body, const struct fe_catalog *cat, const struct fe_bounds *b,
		  const struct tenant_quota *q, struct fe_jobe_run *run, struct fe_apierr *e) GV_MUST_CHECK;
void fe_jobe_run_clear(struct fe_jobe_run *run);

/* The outcome of a stored row: status (queued running done failed
 * cancelled) and its result document. Pure. */
int fe_jobe_outcome(const char *status, const json_t *result);
/* The run result {run_id, outcome, cmpinfo, stdout, stderr} of a finished
 * row. NULL only when out of memory. */
json_t *fe_jobe_render(const struct fe_subrow *row);
/* The overloaded answer (outcome 21) with why in stderr. */
json_t *fe_jobe_overload(const char *why);

/* s[0..len) as a NUL-terminated UTF-8 string: valid UTF-8 is kept, every
 * other byte is read as Latin-1 (what a client that cannot take raw bytes
 * in JSON expects of program output); NUL becomes U+0000's escape in
 * JSON later, so it is kept. *outlen: bytes out. malloc'd; NULL when out
 * of memory. */
char *fe_jobe_utf8(const char *s, size_t len, size_t *outlen);

/* Is id a file id we accept? Pure. */
bool fe_jobe_file_id_ok(const char *id);

/* A POSIX ustar archive of n regular files (names of at most 99 bytes,
 * already checked): malloc'd in *out, *outlen bytes. -1 when out of
 * memory. Pure. */
int fe_jobe_tar(const char *const *names, const char *const *data, const size_t *lens, size_t n, char **out,
		size_t *outlen) GV_MUST_CHECK;
