/* Judging on top of the sandbox engine: turns a language definition, a
 * source and limits into a sandbox job, runs it once (`gavel run`) or
 * against every test of a problem package (`gavel judge`), checks outputs
 * outside the sandbox and aggregates the verdict. The same code serves the
 * CLI and the executor daemon.
 *
 * Two channels, as everywhere in the engine: what the program did is data
 * (statuses and verdicts in the result structs); a failure of our machinery
 * is an error, reported as IE and never blamed on the program. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "executor/judge/checker.h"
#include "executor/judge/problem.h"
#include "executor/judge/verdict.h"
#include "executor/sandbox/session.h"
#include "languages/lang.h"

/* What the caller asks for; 0 means the language's default. Values above the
 * language's maximum are errors (GV_ELIMIT), never silently lowered. */
struct exec_run_limits {
	uint32_t time_ms;
	uint32_t wall_ms;
	uint32_t memory_mb;
	uint32_t output_kb;
	uint32_t stack_kb; /* 0: the memory limit */
	uint32_t procs;    /* 0: the language's default; never below it */
};

/* A job built from a language: owns its expanded argvs. */
struct exec_lang_job {
	struct exec_job job;
	struct exec_file source;
	char *source_name; /* the name source is saved under (lang_entry_resolve) */
	struct exec_file *files; /* source and the others (exec_lang_job_build_files); owned */
	const struct lang_def *lang; /* borrowed from the registry */
	char **compile_argv;
	char **run_argv;
};

/* Fills lj for running source (len bytes, saved under the language's file
 * name) with lim (0 fields: the language's defaults). Release with
 * exec_lang_job_free. */
int exec_lang_job_build(struct exec_lang_job *lj, const struct lang_def *lang, const char *tenant,
			const void *source, size_t len, const struct exec_run_limits *lim,
			struct gv_err *err) GV_MUST_CHECK;
/* The same for a program of several files: a compile command's
 * "{sources}" names the main source, then others (NULL-terminated names of
 * job files with the language's source endings, in order; NULL: none),
 * or, with sources_in_sandbox (the submission has an archive of
 * additional files), leaves "{sources}" for gavel-unpack to expand inside
 * the sandbox (exec_lang_job_extract_first). */
int exec_lang_job_build_multi(struct exec_lang_job *lj, const struct lang_def *lang, const char *tenant,
			      const void *source, size_t len, const char *const *others, bool sources_in_sandbox,
			      const struct exec_run_limits *lim, struct gv_err *err) GV_MUST_CHECK;
/* The same with the program's other files (n of them, borrowed until the
 * job is freed; none named as the saved main source): the job's files are
 * the main source then these, and "{sources}" names those with the
 * language's source endings. */
int exec_lang_job_build_files(struct exec_lang_job *lj, const struct lang_def *lang, const char *tenant,
			      const void *source, size_t len, const struct exec_file *others, size_t n,
			      const struct exec_run_limits *lim, struct gv_err *err) GV_MUST_CHECK;
void exec_lang_job_free(struct exec_lang_job *lj);
/* Appends a submission's compile options (each one of the language's
 * compile_options, else GV_EINVAL: the job fails closed) to the compile
 * command and its arguments to the run command. */
int exec_lang_job_add_words(struct exec_lang_job *lj, char *const *compile_options, size_t n_options,
			    char *const *args, size_t n_args, struct gv_err *err) GV_MUST_CHECK;

/* Puts a submission's interpreter options (each admitted by the
 * language's interpreter_options, else GV_EINVAL: the job fails closed)
 * right after the run command's first word, the interpreter: python3 -O
 * main.py. Call after exec_lang_job_add_words. */
int exec_lang_job_add_interpreter_options(struct exec_lang_job *lj, char *const *words, size_t n,
					  struct gv_err *err) GV_MUST_CHECK;

/* A submission's additional files (common/jobspec.h additional_files_b64):
 * two job files of the engine's own, under names the job spec reserves
 * for it (".gavel*"): the archive, and gavel-unpack to read it. */
#define EXEC_EXTRACT_ARCHIVE ".gavel-files"
#define EXEC_EXTRACT_UNPACKER ".gavel-unpack"

struct exec_extract_limits {
	uint64_t max_bytes; /* bytes actually unpacked, all files together */
	uint32_t max_files, max_dirs, max_path, max_depth;
};

/* Makes the compile step "extract the additional files, then compile":
 * the compile command becomes
 *   /box/.gavel-unpack extract /box/.gavel-files /box BYTES FILES DIRS PATH DEPTH -- <compile command>
 * (nothing after "--" for a language without a compile step, which then
 * gets one). gavel-unpack checks the archive, writes its files into /box
 * (never replacing a job file, never through a link) and execv()s the
 * compiler: one process chain under the compile limits, as uid 65534
 * while /box is writable, before gavel-init locks /box for the tests. A
 * refused archive exits 2 with the reason on stderr: the submission is a
 * compilation error that says why. Call after exec_lang_job_add_words; the
 * caller adds the two job files (EXEC_EXTRACT_UNPACKER executable). */
int exec_lang_job_extract_first(struct exec_lang_job *lj, const struct exec_extract_limits *l,
				struct gv_err *err) GV_MUST_CHECK;

/* gavel-init's default for a compile's RLIMIT_FSIZE when the job sets none
 * (executor/init/job.c, compile_fsize_kb). */
#define EXEC_COMPILE_FSIZE_KB_DEFAULT 262144u

/* For a compile phase that ended in CE: appends to its stderr a line saying
 * which limit stopped it ("compilation time limit exceeded (... ms of CPU)",
 * memory, output file size, compiler messages), so that compile_output is
 * never silently empty. Nothing for a compiler that just failed. */
void exec_compile_note_limit(struct exec_phase_result *c, const struct exec_limits *lim);

/* The user-facing status of one run, as `gavel run` and the APIs show it. */
enum exec_run_status {
	EXEC_RUN_OK,
	EXEC_RUN_TLE, /* CPU or wall clock; exec_run_result.limit tells which */
	EXEC_RUN_MLE,
	EXEC_RUN_OLE,
	EXEC_RUN_RE,  /* non-zero exit or a signal */
	EXEC_RUN_CE,
	EXEC_RUN_IE,
};
const char *exec_run_status_name(enum exec_run_status s);

/* A result message into a fixed buffer (dst, n), cut at n - 1 bytes: the
 * messages are for people, and a cut one is still true. */
void exec_msgf(char *dst, size_t n, const char *fmt, ...) GV_PRINTF(3, 4);

/* Maps one phase result of the engine to the user-facing status. Pure. */
enum exec_run_status exec_run_status_of(const struct exec_phase_result *r);

/* As exec_run_status_of, for a run of a program in lang: a run that failed
 * (RE) with one of lang->memory_errors in its stderr or stdout ran out of
 * the memory its runtime was given (the JVM's heap, sized from the limit,
 * or too small a limit for the JVM to start at all) and is MLE. Pure. */
enum exec_run_status exec_run_status_lang(const struct exec_phase_result *r, const struct lang_def *lang);

/* Rewrites a run that exec_run_status_lang finds MLE (and the engine RE)
 * so that every consumer agrees: status "MLE", limit "memory", a message
 * naming the marker found. */
void exec_phase_apply_lang(struct exec_phase_result *r, const struct lang_def *lang);

struct exec_run_result {
	enum exec_run_status status;
	struct exec_phase_result compile; /* always set once the sandbox was opened */
	struct exec_phase_result run;     /* set when the program ran */
	bool ran;
	char message[GV_ERR_MSG_MAX];     /* IE: what failed */
};
void exec_run_result_free(struct exec_run_result *r);

/* Compiles and runs source (with the program's n other files, which may
 * be none) once on input in a fresh sandbox. Returns 0 with *out filled
 * (status IE included, with out->message); -1 only for bad arguments (a
 * limit over the language's maximum, a file clashing with the source). */
int exec_run_once(struct exec_engine *e, const struct lang_def *lang, const void *source, size_t len,
		  const struct exec_file *others, size_t n, const void *input, size_t input_len,
		  const struct exec_run_limits *lim, struct exec_run_result *out, struct gv_err *err) GV_MUST_CHECK;

/* One judged test case. */
struct exec_judged_case {
	enum exec_verdict verdict;
	uint64_t time_ms, wall_ms, memory_kb;
	int exit_code, signal;
	bool has_score;                     /* a custom validator gave this case a score */
	double score;
	char message[EXEC_CHECKER_MSG_MAX]; /* checker feedback or the limit hit */
	/* Instructor test suites: what the test printed (owned, cut; NULL
	 * when none) and its points (max_points: what it could earn). */
	char *output;
	size_t output_len;
	double max_points;
};

struct exec_judgement {
	enum exec_verdict verdict;
	double score;
	size_t first_failed;           /* SIZE_MAX when accepted */
	struct exec_judged_case *cases; /* one per problem case, in order */
	size_t ncases;
	char *compile_output;          /* bounded; owned */
	size_t compile_output_len;
	unsigned sandboxes;            /* sandboxes opened (> 1 after a whole-sandbox OOM) */
	char message[GV_ERR_MSG_MAX];  /* IE: what failed */
	uint32_t time_limit_ms, memory_limit_mb;
	double max_score;              /* instructor test suites: the points of every test */
};
void exec_judgement_free(struct exec_judgement *j);

/* Called after each case finishes (progress output). */
typedef void (*exec_judge_progress_fn)(const struct exec_problem *p, size_t index,
				       const struct exec_judged_case *c, void *arg);

struct exec_judge_opts {
	const char *tenant;             /* cgroup parent below the engine's; "local" for the CLI */
	exec_judge_progress_fn progress;
	void *progress_arg;
	/* Languages of custom output validators; required for problems with
	 * `validation: custom`. Borrowed. */
	const struct lang_registry *langs;
	/* Called with each non-interactive case's stdout (already capped by
	 * the engine) before it is freed, for feedback; may be NULL. out is
	 * borrowed for the call. */
	void (*case_output)(size_t index, const char *out, size_t len, void *arg);
	void *case_output_arg;
	/* The program's other files (exec_lang_job_build_files); borrowed. */
	const struct exec_file *others;
	size_t n_others;
	/* Instructor test suites: the name the submission gave its first
	 * file (source), which a suite keeps; NULL: the language's own. */
	const char *source_name;
	/* Instructor test suites: an archive of more files (the job spec's
	 * additional_files), unpacked inside the sandbox before the build
	 * (exec_lang_job_extract_first's rules); NULL: none. Borrowed. A
	 * problem with test data answers CE to one. */
	const void *archive;
	size_t archive_len;
};

/* Judges source in lang against the loaded problem p. A custom output
 * validator (Kattis or testlib protocol, executor/judge/validator.h) is
 * compiled in a sandbox of its own at the first case that needs it; the
 * submission's sandbox never sees answers. Returns 0 with *out filled (IE
 * included: a validator that does not compile or breaks its protocol);
 * -1 for arguments the caller must fix: custom validation without
 * opts->langs, or limits over the language's maximum. Interactive problems
 * (`validation: custom interactive`): each case runs the submission against
 * the interactor (the problem's validator, in a sandbox of its own) through
 * the host relay (exec_validator_interact); the verdict follows the Kattis
 * rules of exec_interactive_outcome. */
/* Opens a sandbox for job and runs its compile phase, as exec_judge_problem
 * does: counts it in j->sandboxes, keeps the compile output of the first
 * (or a failed one) in j and puts what failed in j->message (IE). Returns
 * OK, CE or IE; *s is NULL unless OK or CE. */
enum exec_run_status exec_judge_open_session(struct exec_engine *e, const struct exec_job *job,
					     struct exec_session **s, struct exec_judgement *j);

int exec_judge_problem(struct exec_engine *e, const struct exec_problem *p, const struct lang_def *lang,
		       const void *source, size_t len, const struct exec_judge_opts *opts,
		       struct exec_judgement *out, struct gv_err *err) GV_MUST_CHECK;
