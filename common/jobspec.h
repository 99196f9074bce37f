/* The job message format: the normalized submission request that the
 * frontend stores in `submissions.request` (jsonb) and the executor runs, and
 * the result document the executor stores in `submissions.result` (jsonb).
 * Every API (native /v1, Judge0, Piston) is translated into this one shape by
 * the frontend; the scheduler and the executor know nothing else.
 *
 * Request (fields not listed are refused; null counts as absent):
 *   {
 *     "language": "cpp",                 required, [a-z0-9_+.-]{1,32}
 *     "files": [{"name": "main.cpp", "content": "..."}],
 *                                        required, 1..GV_JOBSPEC_FILES_MAX;
 *                                        the main source first (the executor
 *                                        saves it under the language's own
 *                                        file name, but an instructor test
 *                                        suite's under the name it has here);
 *                                        other names are one
 *                                        path component of [A-Za-z0-9._-],
 *                                        not "job" nor starting with
 *                                        ".gavel" (the engine's own files),
 *                                        unique; content is a
 *                                        UTF-8 string (no NUL)
 *     "stdin": "...",                    plain run only (default "");
 *                                        or "stdin_b64": the same bytes in
 *                                        base64, for input that is not
 *                                        UTF-8 or holds NUL (never both)
 *     "tests": [{"input": "...", "expected": "..."}],
 *                                        optional, 1..GV_JOBSPEC_TESTS_MAX;
 *                                        "input_b64" / "expected_b64" in
 *                                        place of either, as for stdin;
 *                                        present = judged with the built-in
 *                                        checker; absent = plain run
 *     "checker": {"mode": "tokens"|"exact", "flags": "float_tolerance 1e-6"},
 *                                        optional; flags as in problem.yaml
 *                                        validator_flags (common/checker_flags.h);
 *                                        the frontend should check them with
 *                                        gv_checker_parse_flags to answer
 *                                        400; the executor answers IE
 *     "limits": {"time_ms", "wall_ms", "memory_mb", "output_kb", "stack_kb", "procs"},
 *                                        optional; 0 or absent = the
 *                                        language's default (stack: the
 *                                        memory limit; procs: processes and
 *                                        threads of the run, Jobe's
 *                                        numprocs); over the
 *                                        language's maximum is refused by
 *                                        exec_lang_job_build (GV_ELIMIT), so
 *                                        the frontend checks it with the
 *                                        language registry
 *     "args": ["1", "2"],                optional, 0..GV_JOBSPEC_ARGS_MAX
 *                                        strings (<= GV_JOBSPEC_ARG_MAX
 *                                        bytes, no NUL or newline) appended
 *                                        to the language's run command
 *     "compile_options": ["-O0"],        optional, 0..GV_JOBSPEC_COMPILE_OPTIONS_MAX;
 *                                        each must be in the language's
 *                                        compile_options allowlist (the
 *                                        frontend answers 400, the executor
 *                                        fails the job closed)
 *     "interpreter_options": ["-O"],     optional, 0..GV_JOBSPEC_COMPILE_OPTIONS_MAX;
 *                                        put between the run command's
 *                                        first word (the interpreter) and
 *                                        the rest (Jobe's interpreterargs);
 *                                        each must be admitted by the
 *                                        language's interpreter_options
 *                                        allowlist (the frontend answers
 *                                        400, the executor fails the job
 *                                        closed); not with problem_id
 *     "writable_box": false,             plain run only (no tests, no
 *                                        problem): the run may create and
 *                                        change files in its working
 *                                        directory, a copy of /box, and
 *                                        run toolchains there (chmod,
 *                                        rename, link: Jobe, a CodeRunner
 *                                        template writes the answer,
 *                                        compiles it and runs it); by
 *                                        default /box is read-only while
 *                                        the program runs
 *     "stderr_to_stdout": false,         the program's stderr goes to its
 *                                        stdout (Judge0's
 *                                        redirect_stderr_to_stdout)
 *     "return_output": false,            include stdout/stderr in the result
 *     "gpus": 0,                         0..GV_JOBSPEC_GPUS_MAX
 *     "callback_url": null,              string (<= 2048 bytes) or null
 *     "problem_id": null,                string (<= 128 bytes) or null: judged
 *                                        against the stored problem (issue 6);
 *                                        then "tests" must be absent
 *     "problem_version": 0,              with problem_id: the version (>= 1)
 *                                        the frontend resolved (0: not yet)
 *     "run_all": false,                  with problem_id: no early stop
 *     "samples_only": false,             with problem_id: data/sample only
 *     "additional_files_b64": null       base64 of a zip (or tar, tar.gz)
 *                                        of files to place beside the
 *                                        source before the compile step
 *                                        (Judge0's additional_files): at
 *                                        most GV_JOBSPEC_ADDITIONAL_FILES_MAX
 *                                        decoded bytes, counted against the
 *                                        data budget; checked as base64
 *                                        only, never opened here: the
 *                                        executor unpacks it inside the
 *                                        submission's sandbox
 *                                        (gavel-unpack extract, with the
 *                                        GV_JOBSPEC_EXTRACT_* limits); ""
 *                                        counts as absent; with problem_id
 *                                        only for an instructor test suite
 *                                        (a problem with test data: CE)
 *     "student": null, "assignment": null
 *                                        course labels (issue 20): opaque
 *                                        strings of the tenant's own,
 *                                        1..GV_JOBSPEC_LABEL_MAX bytes, no
 *                                        control characters; stored in the
 *                                        row's columns for
 *                                        GET /v1/assignments/{name}/grades;
 *                                        the executor ignores them
 *   }
 * gv_jobspec_to_json writes each of those as a string when its bytes are
 * UTF-8 without NUL, else as its "_b64" form.
 * Bounds: all files' content together <= GV_JOBSPEC_SOURCE_MAX (1 MiB);
 * stdin plus every test's input and expected plus the additional files
 * together (decoded bytes) <= GV_JOBSPEC_DATA_MAX (16 MiB); the JSON text
 * <= GV_JOBSPEC_JSON_MAX.
 *
 * Result (written once by the executor, or by the scheduler for a job that
 * failed GV_QUEUE_MAX_ATTEMPTS attempts):
 *   {
 *     "kind": "run" | "judge",
 *     "verdict": "AC|WA|TLE|MLE|OLE|RE|CE|IE",
 *                 judge: the aggregated verdict (first non-AC test);
 *                 run:   the run status with OK written as "AC" (Judge0's
 *                        "Accepted" for a run without expected output)
 *     "status":  run:   "OK|TLE|MLE|OLE|RE|CE|IE" (the program's run status);
 *                judge: "OK" (compiled, tests judged), "CE" or "IE"
 *     "message": "" | what failed (IE) or the limit hit,
 *     "compile_output": "...",          compiler stdout+stderr, bounded
 *     "compile": {"time_ms", "wall_ms", "memory_kb", "exit_code", "signal"}
 *                                        the (first) compile's figures; null
 *                                        without a compile step or when it
 *                                        did not run
 *     "<field>_b64": "...",             for compile_output, stdout, stderr
 *                                        and a test's stdout: present only
 *                                        when the text form above is not
 *                                        exact (invalid UTF-8 or NUL, each
 *                                        shown as U+FFFD there): the exact
 *                                        bytes in base64, same cap; dropped
 *                                        (gv_result_drop_twins) when the
 *                                        result is too large to store with
 *                                        them, never the text
 *     "time_ms", "wall_ms", "memory_kb": run: the run's; judge: the max
 *                                        over the tests that ran
 *     "exit_code": int, "signal": int,  run: the run's; judge: of the
 *                                        deciding test (first failed, else last)
 *     "stdout", "stderr":               only with return_output (run: the
 *                                        run's; judge: absent)
 *     "output":                          run with return_output, when both
 *                                        stdout and stderr have bytes: the
 *                                        two in the order they arrived
 *     "tests": [{"verdict", "time_ms", "wall_ms", "memory_kb", "exit_code",
 *                "signal", "message", "stdout", "stderr" (both only with
 *                return_output)}],
 *                                        judge only, one per test, in order;
 *                                        tests after an IE are "SKIPPED"
 *     "time_limit_ms", "memory_limit_mb": the limits applied (0 when unknown)
 *     "node": "executor node name", "sandboxes": int
 *   }
 * The row's `verdict` column gets the result's "verdict"; `status` 'done'. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/checker_flags.h"
#include "common/err.h"

#define GV_JOBSPEC_LANGUAGE_MAX 32              /* bytes of a language id */
#define GV_JOBSPEC_FILES_MAX 32                 /* files of one submission */
#define GV_JOBSPEC_LABEL_MAX 128                /* bytes of student and assignment */
#define GV_JOBSPEC_FILE_NAME_MAX 64             /* bytes of one file name */
#define GV_JOBSPEC_TESTS_MAX 100                /* inline tests */
#define GV_JOBSPEC_SOURCE_MAX (1024u * 1024u)   /* all files' content */
#define GV_JOBSPEC_DATA_MAX (16u * 1024u * 1024u) /* stdin + inputs + expected */
#define GV_JOBSPEC_JSON_MAX (120u * 1024u * 1024u) /* the JSON text (escapes: \uXXXX is 6x) */
#define GV_JOBSPEC_FLAGS_MAX 1024               /* checker flags (= GV_CHECKER_FLAGS_MAX) */
#define GV_JOBSPEC_URL_MAX 2048
#define GV_JOBSPEC_PROBLEM_MAX 128
#define GV_JOBSPEC_GPUS_MAX 16
#define GV_JOBSPEC_ARGS_MAX 32                  /* run arguments (Piston args, Judge0 command_line_arguments) */
#define GV_JOBSPEC_ARG_MAX 1024                 /* bytes of one argument */
#define GV_JOBSPEC_COMPILE_OPTIONS_MAX 16       /* compiler options (language allowlist) */
/* Additional files: the archive (decoded) and what it may unpack to, in
 * the sandbox (Judge0's max_extract_size is 10240 KB by default). */
#define GV_JOBSPEC_ADDITIONAL_FILES_MAX (10u * 1024u * 1024u)
#define GV_JOBSPEC_EXTRACT_BYTES_MAX (10u * 1024u * 1024u)
#define GV_JOBSPEC_EXTRACT_FILES_MAX 1000u
#define GV_JOBSPEC_EXTRACT_DIRS_MAX 1000u
#define GV_JOBSPEC_EXTRACT_PATH_MAX 255u
#define GV_JOBSPEC_EXTRACT_DEPTH_MAX 16u
#define GV_JOBSPEC_STACK_KB_MAX (16u * 1024u * 1024u)   /* 16 GiB; the memory limit bounds it */
#define GV_JOBSPEC_PROCS_MAX 4096u              /* sanity cap; the language's maximum is the bound */
/* Sanity caps on limits; the language's maximum is the real bound. */
#define GV_JOBSPEC_TIME_MS_MAX (3600u * 1000u)
#define GV_JOBSPEC_MEMORY_MB_MAX (1024u * 1024u)
#define GV_JOBSPEC_OUTPUT_KB_MAX (1024u * 1024u)

struct gv_jobspec_file {
	char *name;    /* owned */
	char *content; /* owned, NUL-terminated, len bytes */
	size_t len;
};

struct gv_jobspec_test {
	char *input;    /* owned, NUL-terminated */
	size_t input_len;
	char *expected; /* owned, NUL-terminated */
	size_t expected_len;
};

/* A parsed request. Every pointer is owned by the spec (gv_jobspec_free). */
struct gv_jobspec {
	char language[GV_JOBSPEC_LANGUAGE_MAX + 1];
	struct gv_jobspec_file *files;
	size_t n_files;
	char *stdin_data; /* never NULL after a successful parse ("" when absent) */
	size_t stdin_len;
	bool has_tests;   /* "tests" present: a judged submission */
	struct gv_jobspec_test *tests;
	size_t n_tests;
	enum gv_checker_mode checker_mode;
	char *checker_flags; /* NULL when absent */
	uint32_t time_ms, wall_ms, memory_mb, output_kb; /* 0: language default */
	uint32_t stack_kb;   /* 0: the memory limit */
	uint32_t procs;      /* 0: the language's default */
	char **args;         /* run arguments after the language's run command */
	size_t n_args;
	char **compile_options; /* from the language's compile_options allowlist */
	size_t n_compile_options;
	char **interpreter_options; /* from the language's interpreter_options allowlist */
	size_t n_interpreter_options;
	bool stderr_to_stdout; /* the program's stderr is its stdout (one stream, in order) */
	bool writable_box;     /* plain run in a writable copy of /box; the program
				* may run toolchains (chmod...) there */
	bool return_output;
	uint32_t gpus;
	char *callback_url;  /* NULL when absent */
	char *problem_id;    /* NULL when absent */
	uint32_t problem_version; /* >= 1 with problem_id, else 0 */
	bool run_all, samples_only;
	char *additional_files; /* owned: the archive's bytes (never opened on the host); NULL when absent */
	size_t additional_files_len;
	char *student, *assignment; /* course labels; NULL when absent */
};

/* Whether s (NUL-terminated) is a course label: 1..GV_JOBSPEC_LABEL_MAX
 * bytes of UTF-8 without control characters. */
bool gv_jobspec_label_ok(const char *s);

/* Whether s may name a submission's file (the "files" rule above): one
 * path component of [A-Za-z0-9._-], at most GV_JOBSPEC_FILE_NAME_MAX
 * bytes, not ".", "..", "job" nor ".gavel...". NULL (no name) is not. */
bool gv_jobspec_file_name_ok(const char *s);

/* Validates json (a request object) into spec (fully overwritten; release
 * with gv_jobspec_free, also after a failure). Errors are GV_EINVAL
 * ("field 'files[1].name': ...") or GV_ELIMIT, with messages fit for an
 * HTTP 400 answer. Copies what it keeps: json may be freed afterwards. */
int gv_jobspec_from_json(const json_t *json, struct gv_jobspec *spec, struct gv_err *err) GV_MUST_CHECK;
/* gv_jobspec_from_json over JSON text (len bytes, <= GV_JOBSPEC_JSON_MAX). */
int gv_jobspec_parse(const char *text, size_t len, struct gv_jobspec *spec, struct gv_err *err) GV_MUST_CHECK;
/* A new JSON object (caller json_decrefs) in the canonical form: every field
 * present, absent optionals as null / defaults. Round-trips through
 * gv_jobspec_from_json. NULL only when out of memory. */
json_t *gv_jobspec_to_json(const struct gv_jobspec *spec);
/* Same as compact text (malloc'd, caller frees); NULL with err. */
char *gv_jobspec_to_text(const struct gv_jobspec *spec, size_t *len, struct gv_err *err) GV_MUST_CHECK;
/* Releases everything; NULL-safe; leaves spec zeroed. */
void gv_jobspec_free(struct gv_jobspec *spec);

/* ---- Result documents (see the format above). ---- */

#define GV_RESULT_OUTPUT_MAX (64u * 1024u * 1024u) /* stdout kept in a result (engine caps first) */

struct gv_result_test {
	const char *verdict; /* "AC", "WA", ..., "SKIPPED" */
	uint64_t time_ms, wall_ms, memory_kb;
	int exit_code, signal;
	const char *message; /* may be NULL */
	const char *out;     /* stdout; NULL: not returned */
	size_t out_len;
	const char *err_out; /* stderr; NULL: not returned */
	size_t err_len;
};

/* The figures of a compile. */
struct gv_result_compile {
	bool ran;            /* false: "compile" is null */
	uint64_t time_ms, wall_ms, memory_kb;
	int exit_code, signal;
};

/* Borrowed views: the builder copies what it needs. */
struct gv_result {
	const char *kind;    /* "run" or "judge" */
	const char *verdict;
	const char *status;
	const char *message; /* may be NULL */
	const char *compile_output;
	size_t compile_output_len;
	struct gv_result_compile compile;
	uint64_t time_ms, wall_ms, memory_kb;
	int exit_code, signal;
	bool has_output;     /* emit stdout/stderr (run with return_output) */
	const char *out, *err_out;
	size_t out_len, err_len;
	const char *merged;  /* stdout and stderr in arrival order; NULL: not known */
	size_t merged_len;
	const struct gv_result_test *tests;
	size_t n_tests;
	uint32_t time_limit_ms, memory_limit_mb;
	const char *node;    /* may be NULL */
	unsigned sandboxes;
};

/* The suffix of the exact-bytes twin of an output field ("stdout_b64"). */
#define GV_RESULT_B64_SUFFIX "_b64"

/* A new result object (caller json_decrefs); program output is attacker
 * bytes and goes through gv_json_string_lossy (NUL too becomes U+FFFD);
 * where that loses bytes, "<field>_b64" carries them exactly. NULL only
 * when out of memory. */
json_t *gv_result_to_json(const struct gv_result *r);
/* Sets obj[key] to the lossy text of s[0..len) (capped at
 * GV_RESULT_OUTPUT_MAX) and, when that is not exact, obj[key"_b64"] to its
 * base64. For result builders outside this file (problem results). 0, or
 * -1 when out of memory. */
int gv_result_put_output(json_t *obj, const char *key, const char *s, size_t len);
/* Removes the exact-bytes twins (stdout_b64, stderr_b64,
 * compile_output_b64, each test's stdout_b64) from a result in place: for
 * a result too large to store with them, which then keeps its text forms
 * only. */
void gv_result_drop_twins(json_t *result);
/* The result of a job that our machinery could not finish: kind from the
 * request when known (NULL: "run"), verdict and status "IE", message. */
json_t *gv_result_internal_error(const char *kind, const char *message);
/* True when v is a value of the submissions.verdict column
 * (AC WA TLE MLE OLE RE CE PE IE). */
bool gv_result_verdict_ok(const char *v);
