/* Loader for Kattis / ICPC problem packages (the legacy format and the
 * 2023-07 format, as problemtools reads them) from a directory:
 *
 *   problem.yaml                 name, type, validation (custom [interactive]
 *                                [score] [multi-pass]), validator_flags, limits
 *                                (validation_passes too), problem_format_version
 *                                (legacy | 2023-07), validator_protocol (Gavel:
 *                                kattis | testlib), input_file / output_file /
 *                                output_only (Gavel: olympiad task types)
 *   .timelimit                   DOMjudge's time limit in seconds (optional;
 *                                `gavel problem push` writes one when the
 *                                package has none)
 *   data/sample/, data/secret/   *.in with matching *.ans, sorted by name;
 *                                nested test groups; testdata.yaml per group
 *                                (test_group.yaml where there is none)
 *   output_validators/<name>/    a custom output validator: a folder of sources
 *   output_validators/<file>     or a single source file (legacy layout);
 *   output_validator/            the 2023-07 layout: the sources themselves,
 *   output_validator/<name>/     or one folder of them (problemtools' examples);
 *                                built later, in a sandbox, by whoever judges.
 *                                input_validators/ are not read (Gavel does not
 *                                validate test data).
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
 * Group settings (testdata.yaml; the rules are exec_problem_parse_testdata's,
 * below; a group without one inherits its nearest ancestor's):
 * legacy keys on_reject, grading, grader_flags, accept_score, reject_score,
 * range, input_validator_flags, output_validator_flags; 2023-07 keys
 * scoring (score, aggregation, require_pass), grading as a map (score,
 * max_score, aggregation, verdict), output_validator_args,
 * input_validator_args, static_validation, full_feedback, args, hint,
 * description. How the verdict and score come out of this is in verdict.h.
 *
 * Unknown keys in problem.yaml and testdata.yaml are warnings (collected in
 * the problem, not fatal); malformed values of known keys, and values the
 * format does not define, are errors naming the file and line.
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
/* limits.validation_passes of a multi-pass problem: the Kattis default,
 * and our ceiling (each pass is a run of the submission). */
#define EXEC_PROBLEM_DEFAULT_VALIDATION_PASSES 2
#define EXEC_PROBLEM_MAX_VALIDATION_PASSES 100

enum exec_problem_type {
	EXEC_PROBLEM_PASS_FAIL,
	EXEC_PROBLEM_SCORING,
};

enum exec_problem_aggregation {
	EXEC_PROBLEM_AGG_SUM,
	EXEC_PROBLEM_AGG_AVG,
	EXEC_PROBLEM_AGG_MIN,
	EXEC_PROBLEM_AGG_MAX,
	EXEC_PROBLEM_AGG_PASS_FAIL, /* 2023-07: max_score when the group is AC, else 0 */
};

/* How a group's verdict is found and whether judging stops at a rejection;
 * the two Kattis settings, on_reject (break | continue) and the default
 * grader's verdict mode (worst_error | first_error), fold into three:
 * break with either mode is the first rejection. */
enum exec_problem_on_reject {
	EXEC_PROBLEM_FIRST_ERROR, /* break: verdict = first rejection; later cases may be skipped */
	EXEC_PROBLEM_WORST_ERROR, /* continue + worst_error: the worst rejection; run everything */
	EXEC_PROBLEM_GRADE,       /* continue + first_error: run everything; verdict = first rejection */
};

enum exec_problem_format {
	EXEC_PROBLEM_FORMAT_LEGACY = 0, /* "legacy", "legacy-icpc" or no problem_format_version */
	EXEC_PROBLEM_FORMAT_2023_07,    /* "2023-07", "2023-07-draft", "draft" */
};

enum exec_problem_time_source {
	EXEC_PROBLEM_TIME_DEFAULT,
	EXEC_PROBLEM_TIME_TIMELIMIT_FILE,
	EXEC_PROBLEM_TIME_PROBLEM_YAML,
	EXEC_PROBLEM_TIME_OVERRIDE,
};

/* "Gavel's default (the package sets none)", "problem.yaml limits.time_limit",
 * ".timelimit", "--time": for messages. */
const char *exec_problem_time_source_name(enum exec_problem_time_source s);

/* The effective settings of a group (its testdata.yaml or the nearest
 * ancestor's). Strings owned by the problem. */
struct exec_problem_grading {
	enum exec_problem_on_reject on_reject;
	enum exec_problem_aggregation aggregation;
	bool accept_if_any_accepted;
	bool always_accept; /* grader_flags always_accept: the group's verdict is AC */
	bool ignore_sample; /* meaningful on the root: sample counts for nothing */
	bool custom_grader; /* grading: custom asked for (not supported: the default grader judges) */
	double accept_score;
	double reject_score;
	double range_min, range_max; /* range: the scores a group may get (-inf, +inf); informative */
	/* 2023-07 scoring (not inherited): the group's maximum score, NAN when
	 * unset, INFINITY for `unbounded`; set: the group's testdata.yaml has
	 * scoring or grading as a map. */
	double max_score;
	bool scoring_set;
	bool aggregation_set; /* scoring.aggregation was given */
	int full_feedback; /* -1 unset, 0 or 1 (full_feedback); informative */
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

/* An instructor test suite (suite/suite.yaml, executor/suite/README.md):
 * the package's tests are code, run by gavel-suite inside the
 * submission's sandbox, one group (test file) per test phase. */
#define EXEC_SUITE_GROUPS_MAX 32
#define EXEC_SUITE_ALL_TESTS_MAX 256
#define EXEC_SUITE_SUPPORT_MAX 16
#define EXEC_SUITE_FILE_MAX (1u << 20) /* bytes of one test or support file */

struct exec_suite_test {
	char *name;
	double points; /* 0 in a group with group points */
};

struct exec_suite_group {
	char *file;      /* under suite/: one name of [A-Za-z0-9._-] */
	bool hidden;
	bool has_points; /* points: all or nothing for the group */
	double points;
	struct exec_suite_test *tests;
	size_t ntests;
};

struct exec_suite {
	char *framework; /* pytest | junit5 | gtest | c */
	char *language;  /* the language id students submit in */
	uint32_t time_ms, memory_mb;
	char **support;  /* names under suite/ placed beside the student's files */
	size_t nsupport;
	struct exec_suite_group *groups;
	size_t ngroups;
	size_t ntests;   /* over every group */
	double max_score;
};

struct exec_problem {
	char *dir;  /* as given */
	int dirfd;  /* the package folder, O_PATH; closed by exec_problem_free */
	char *name; /* problem.yaml name (the English one if several), or the folder's name */
	enum exec_problem_type type;
	bool custom_validation; /* validation: custom ... */
	bool interactive;       /* validation: custom interactive (or type: ... interactive) */
	bool validator_scores;  /* validation: custom score */
	/* validation: custom multi-pass (2023-07: type: ... multi-pass): the
	 * validator may write nextpass.in to its feedback dir and accept, and
	 * the submission runs again on it, at most validation_passes times in
	 * all (limits.validation_passes, 2 by default); the feedback dir is
	 * kept from pass to pass. */
	bool multi_pass;
	uint32_t validation_passes;
	/* Gavel's extensions for olympiad tasks (docs/USING.md, "Olympiad
	 * task types"). input_file / output_file: the program reads each
	 * test's input from this file of its work dir (it is on stdin too)
	 * and writes its output to that one (NULL: stdin / stdout).
	 * output_only: there is no program; the submission is the output of
	 * every test, one file per test named <test's base name>.out. */
	char *input_file;
	char *output_file;
	bool output_only;
	enum exec_problem_validator_protocol validator_protocol;
	enum exec_problem_format format;
	char *validator_flags;  /* problem.yaml validator_flags, "" when none */
	uint32_t time_limit_ms;
	enum exec_problem_time_source time_source;
	/* How a limit is set from the accepted submissions (exec_problem_time_rule):
	 * legacy limits.time_multiplier (5) and time_safety_margin (2);
	 * 2023-07 limits.time_multipliers ac_to_time_limit (2) and
	 * time_limit_to_tle (1.5), limits.time_resolution (1 s). */
	double time_multiplier;
	double time_safety_margin;
	double time_resolution;
	uint32_t memory_mb;
	uint32_t output_mb;
	struct exec_problem_node root; /* data/ */
	struct exec_problem_node **cases; /* judging order; borrowed from the tree */
	size_t ncases;
	struct exec_problem_validator *validators;
	size_t nvalidators;
	char **warnings; /* NULL-terminated; "problem.yaml:3: unknown key 'foo'" */
	size_t nwarnings;
	struct exec_suite *suite; /* NULL unless the package has suite/suite.yaml (then no data/ is needed) */
};

/* Output-only problems: the name of the submission's file that is case
 * node's output, "<base name of the case>.out" ("secret/g1/03" ->
 * "03.out"), in buf (n >= EXEC_PROBLEM_OUTPUT_NAME_MAX); the loader
 * checks that every case's is a distinct plain file name. */
#define EXEC_PROBLEM_OUTPUT_NAME_MAX 80
const char *exec_problem_output_name(const struct exec_problem_node *node, char *buf, size_t n);

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

/* The suite's i-th test over every group, in plan order, and its group
 * (*g); NULL past the end. */
const struct exec_suite_test *exec_suite_test_at(const struct exec_suite *s, size_t i,
						 const struct exec_suite_group **g);

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

/* Fills g with the settings of a data/ that has no testdata.yaml (on_reject
 * break, worst_error, sum, accept_score 1, reject_score 0, range -inf +inf,
 * no flags). Release with exec_problem_grading_free. */
int exec_problem_grading_default(struct exec_problem_grading *g, struct gv_err *err) GV_MUST_CHECK;
void exec_problem_grading_free(struct exec_problem_grading *g);

/* Parses one testdata.yaml (text, len bytes; file names it in messages) over
 * g, which holds what the group inherited; p gives the problem's type and
 * format and collects warnings. Pure apart from those warnings.
 *
 * Legacy (problemtools' semantics): on_reject break (default) | continue;
 * grader_flags words worst_error (default) | first_error | always_accept,
 * sum (default) | avg | min | max, ignore_sample, accept_if_any_accepted
 * (an unknown word is an error unless grading is custom); grading default |
 * custom (custom: warned, the default grader judges); accept_score (1),
 * reject_score (0); range "A B" (inf, -inf, +inf allowed, A <= B);
 * output_validator_flags a string, or a map {name, flags};
 * input_validator_flags a string or a map of strings (kept, not used).
 * Gavel's older on_reject words stay: first_error (= break), worst_error
 * (= continue + worst_error), grade (= continue + first_error).
 * 2023-07: scoring {score: number >= 0 or unbounded, aggregation pass-fail |
 * sum | min, require_pass (warned: not supported)}; grading as a map (the
 * 2023-07 drafts) {score, max_score, aggregation sum | min, verdict
 * first_error | accept_if_any_accepted}; output_validator_args (a list of
 * strings, or a string) become the group's validator flags;
 * input_validator_args; static_validation false, or true / a map {args,
 * score} (warned: no static validators); full_feedback a boolean; args
 * (warned: submissions get no arguments); hint, description strings.
 * A key the formats do not define is a warning. */
int exec_problem_parse_testdata(struct exec_problem *p, const char *file, const char *text, size_t len,
				struct exec_problem_grading *g, struct gv_err *err) GV_MUST_CHECK;

/* How `gavel problem push` sets a time limit from the slowest accepted
 * submission (seconds of its slowest test), as problemtools does:
 * legacy: limit = max(1, round(slowest * time_multiplier)) whole seconds,
 *         margin = max(limit + 1, round(slowest * time_multiplier * time_safety_margin));
 * 2023-07: limit = max(1, ceil(slowest * ac_to_time_limit / time_resolution)) * time_resolution,
 *         margin = limit * time_limit_to_tle.
 * Pure. */
struct exec_problem_time_rule {
	double exact_s;  /* slowest * multiplier, before rounding */
	double limit_s;  /* the time limit */
	double margin_s; /* the limit a slightly slower accepted submission must still pass */
};
void exec_problem_time_rule(const struct exec_problem *p, double slowest_s, struct exec_problem_time_rule *out);
