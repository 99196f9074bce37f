/* Loader for Kattis / ICPC problem packages (the legacy format plus the
 * commonly used parts of the 2023-07 format) from a directory:
 *
 *   problem.yaml                 name, type, validation, validator_flags, limits,
 *                                validator_protocol (Gavel: kattis | testlib)
 *   .timelimit                   DOMjudge's time limit in seconds (optional)
 *   data/sample/, data/secret/   *.in with matching *.ans, sorted by name;
 *                                nested test groups; testdata.yaml per group
 *   output_validators/<name>/    a custom output validator's sources (or
 *   output_validator/            output_validators/<file>); built later, in a
 *                                sandbox, by whoever judges
 *
 * The result is a tree of groups and test cases with package-relative paths
 * plus a flat list of the cases in judging order (samples first, then
 * secret; inside a group, cases and subgroups sorted together by name).
 *
 * Limits, in the order that wins: the caller's override (gavel judge --time),
 * problem.yaml limits.time_limit (seconds), .timelimit, the default 1 s.
 * Memory: limits.memory (MiB), default 256 MiB (Kattis says 2048; judges
 * for classrooms and most contests use far less, and a language's max caps it
 * anyway). Output: limits.output (MiB), default 8 MiB (as Kattis).
 *
 * Group settings (testdata.yaml, inherited by subgroups without their own):
 * on_reject first_error (default) | worst_error | grade | continue;
 * grader_flags words sum (default) | avg | min | max, first_error,
 * worst_error, accept_if_any_accepted, ignore_sample; accept_score (default
 * 1), reject_score (default 0); output_validator_flags (default: the
 * problem's validator_flags); input_validator_flags (kept, not used here).
 * grading: custom is not supported and falls back to the default grader with a
 * warning. How the verdict and score come out of this is in verdict.h.
 *
 * Unknown keys in problem.yaml and testdata.yaml are warnings (collected in
 * the problem, not fatal); malformed values of known keys are errors.
 *
 * Safety: the package is tenant input. Everything is opened through dirfds
 * with O_NOFOLLOW; a symlink is accepted only for a test file and only when
 * it resolves, lexically and in one hop, to a regular file inside the
 * package; sizes and counts are capped before anything is allocated. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct lang_registry;

#define EXEC_PROBLEM_MAX_CASES 10000
#define EXEC_PROBLEM_MAX_DEPTH 8       /* group nesting below data/ */
#define EXEC_PROBLEM_MAX_WARNINGS 64
#define EXEC_PROBLEM_YAML_MAX (1u << 20) /* bytes of problem.yaml / testdata.yaml */
#define EXEC_PROBLEM_DEFAULT_TIME_MS 1000
#define EXEC_PROBLEM_DEFAULT_MEMORY_MB 256
#define EXEC_PROBLEM_DEFAULT_OUTPUT_MB 8

enum exec_problem_type {
	EXEC_PROBLEM_PASS_FAIL,
	EXEC_PROBLEM_SCORING,
};

enum exec_problem_aggregation {
	EXEC_PROBLEM_AGG_SUM,
	EXEC_PROBLEM_AGG_AVG,
	EXEC_PROBLEM_AGG_MIN,
	EXEC_PROBLEM_AGG_MAX,
};

enum exec_problem_on_reject {
	EXEC_PROBLEM_FIRST_ERROR, /* verdict = first rejection; later cases may be skipped */
	EXEC_PROBLEM_WORST_ERROR, /* verdict = the worst rejection; run everything */
	EXEC_PROBLEM_GRADE,       /* run everything; verdict = first rejection */
};

enum exec_problem_time_source {
	EXEC_PROBLEM_TIME_DEFAULT,
	EXEC_PROBLEM_TIME_TIMELIMIT_FILE,
	EXEC_PROBLEM_TIME_PROBLEM_YAML,
	EXEC_PROBLEM_TIME_OVERRIDE,
};

/* The effective settings of a group (its testdata.yaml or the nearest
 * ancestor's). Strings owned by the problem. */
struct exec_problem_grading {
	enum exec_problem_on_reject on_reject;
	enum exec_problem_aggregation aggregation;
	bool accept_if_any_accepted;
	bool ignore_sample; /* meaningful on the root: sample counts for nothing */
	double accept_score;
	double reject_score;
	char *grader_flags;           /* as written, "" when none */
	char *output_validator_flags; /* effective flags for this group's cases */
	char *input_validator_flags;  /* as written, "" when none */
};

enum exec_problem_node_kind {
	EXEC_PROBLEM_CASE,
	EXEC_PROBLEM_GROUP,
};

struct exec_problem_node {
	enum exec_problem_node_kind kind;
	char *name; /* relative to data/: "secret/group1/03"; "" for the root */
	struct exec_problem_node *parent; /* NULL for the root */
	/* Cases: */
	char *in_path;   /* package-relative, symlinks resolved: "data/secret/03.in" */
	char *ans_path;  /* package-relative */
	size_t index;    /* 0-based position in exec_problem.cases */
	/* Groups: */
	struct exec_problem_grading grading;
	struct exec_problem_node *children; /* cases and groups, sorted by name */
	size_t nchildren;
	bool is_sample; /* data/sample and below */
};

struct exec_problem_validator {
	char *name;   /* "default_validator", or the file stem for a single file */
	char *dir;    /* package-relative folder holding the sources */
	char **files; /* NULL-terminated, names relative to dir, sorted */
	const char *lang_id; /* from the extensions when a registry was given; borrowed */
};

/* How a custom output validator is called (problem.yaml
 * `validator_protocol`, a Gavel extension; absent: kattis):
 * - kattis: `validator input answer feedback_dir [flags] < output`, exit 42
 *   accepted, 43 wrong answer; feedback_dir/judgemessage.txt is the message,
 *   feedback_dir/score.txt the score with `validation: custom score`;
 * - testlib: `checker input output answer`, exit 0 accepted, 1 wrong answer,
 *   2 presentation error, 7 partial points (the first number of its stdout,
 *   else of its stderr); its stderr's first line is the message.
 * Any other exit, or a validator that crashes or hits a limit, is a judge
 * error (IE), never the submission's fault. */
enum exec_problem_validator_protocol {
	EXEC_PROBLEM_VALIDATOR_KATTIS = 0,
	EXEC_PROBLEM_VALIDATOR_TESTLIB,
};

struct exec_problem {
	char *dir;  /* as given */
	int dirfd;  /* the package folder, O_PATH; closed by exec_problem_free */
	char *name; /* problem.yaml name (the English one if several), or the folder's name */
	enum exec_problem_type type;
	bool custom_validation; /* validation: custom ... */
	bool interactive;       /* validation: custom interactive (or type: ... interactive) */
	bool validator_scores;  /* validation: custom score */
	enum exec_problem_validator_protocol validator_protocol;
	char *validator_flags;  /* problem.yaml validator_flags, "" when none */
	uint32_t time_limit_ms;
	enum exec_problem_time_source time_source;
	double time_multiplier; /* limits.time_multiplier, informative (5 by default) */
	uint32_t memory_mb;
	uint32_t output_mb;
	struct exec_problem_node root; /* data/ */
	struct exec_problem_node **cases; /* judging order; borrowed from the tree */
	size_t ncases;
	struct exec_problem_validator *validators;
	size_t nvalidators;
	char **warnings; /* NULL-terminated; "problem.yaml:3: unknown key 'foo'" */
	size_t nwarnings;
};

struct exec_problem_opts {
	uint32_t time_override_ms;          /* 0: none */
	const struct lang_registry *langs;  /* optional, to name validator languages */
};

/* Loads the package in dir into p (zeroed first; release with
 * exec_problem_free even after an error). Errors name the file and line. */
int exec_problem_load(struct exec_problem *p, const char *dir, const struct exec_problem_opts *opts,
		      struct gv_err *err) GV_MUST_CHECK;

/* NULL-safe; leaves p zeroed (dirfd -1). */
void exec_problem_free(struct exec_problem *p);

/* Opens a package-relative path (as stored in the tree) for reading, element
 * by element with O_NOFOLLOW, so that a file swapped for a symlink after
 * loading is refused. Returns the fd (O_CLOEXEC) or -1 with err filled. */
int exec_problem_open(const struct exec_problem *p, const char *rel, struct gv_err *err) GV_MUST_CHECK;

/* Reads a whole package file of at most max bytes into a fresh buffer (NUL
 * appended, not counted in *len). */
int exec_problem_read(const struct exec_problem *p, const char *rel, size_t max, char **out, size_t *len,
		      struct gv_err *err) GV_MUST_CHECK;

/* The group a case belongs to (its parent). */
const struct exec_problem_node *exec_problem_case_group(const struct exec_problem_node *c);
