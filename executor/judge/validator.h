/* Custom output validators (Kattis protocol) and testlib checkers. The
 * validator is tenant code: it is compiled once per judging in a sandbox of
 * its own (never the submission's), with its own language, and run there
 * once per test case whose run ended OK. The submission's output, the
 * input and the expected answer reach it as read-only per-test files
 * (exec_session_run_test_files); a Kattis validator's feedback dir comes
 * back over the protocol. What it decided is mapped by one pure function
 * (exec_validator_outcome_of); anything a validator does outside its
 * protocol is a judge error (IE), never blamed on the submission. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "executor/judge/checker.h"
#include "executor/judge/problem.h"
#include "executor/judge/verdict.h"
#include "executor/sandbox/session.h"
#include "executor/sandbox/session_relay.h"
#include "languages/lang.h"

/* Kattis exit codes. */
#define EXEC_VALIDATOR_KATTIS_AC 42
#define EXEC_VALIDATOR_KATTIS_WA 43
/* testlib exit codes. */
#define EXEC_VALIDATOR_TESTLIB_OK 0
#define EXEC_VALIDATOR_TESTLIB_WA 1
#define EXEC_VALIDATOR_TESTLIB_PE 2
#define EXEC_VALIDATOR_TESTLIB_POINTS 7

/* Paths the validator gets as arguments (PROTOCOL.md). */
#define EXEC_VALIDATOR_FILES_DIR "/tmp/gv-files/"
#define EXEC_VALIDATOR_FEEDBACK_DIR "/tmp/gv-feedback/"

/* Extra words of validator_flags passed as arguments, at most. */
#define EXEC_VALIDATOR_MAX_FLAGS 32
/* Bytes of one validator source file read from the package. */
#define EXEC_VALIDATOR_SOURCE_MAX (4u << 20)

struct exec_validator_outcome {
	enum exec_verdict verdict; /* AC, WA, PE or IE */
	bool has_score;
	double score;
	char message[EXEC_CHECKER_MSG_MAX]; /* printable ASCII, one line */
};

/* Maps one validator run to a case outcome. Pure. scoring: the problem
 * takes scores from the validator (Kattis `custom score`: score.txt on
 * AC; testlib: points on exit 7; a pass-fail problem turns points into
 * WA). r is the validator's phase result (status, exit code, stdout,
 * stderr, feedback files). */
void exec_validator_outcome_of(enum exec_problem_validator_protocol proto, bool scoring,
			       const struct exec_phase_result *r, struct exec_validator_outcome *o);

/* The verdict of one interactive case (Kattis rules), from the
 * submission's and the interactor's results and which of the two reached
 * the host first. Pure. In this order:
 * - the submission ended first on its own CPU, memory or output limit or
 *   crashed (TLE, MLE, OLE, RE; on its wall clock only when the
 *   interactor used under half that time of CPU: both waited, the
 *   submission said nothing) → that verdict, however the interactor then
 *   ended (killed while still waiting for it, say);
 * - the submission's run failed on our side (IE), or the interactor did
 *   not exit on its own with 42 or 43 (any other code, a signal, a limit,
 *   its init's failure) → IE, never blamed on the submission;
 * - the interactor exited 43 first, or after a submission that exited 0
 *   → WA (whatever the submission did after its input was closed);
 * - the submission ended badly (TLE on CPU or wall clock, MLE, OLE, RE)
 *   → that verdict: before the interactor spoke, or after it said 42;
 * - the interactor exited 42 and the submission 0 → AC.
 * The message is the first line of the interactor's judgemessage.txt. */
void exec_interactive_outcome(const struct exec_phase_result *sub, const struct exec_phase_result *itr,
			      bool interactor_first, struct exec_validator_outcome *o);

/* The first whitespace-separated token of s[0..len) that is a whole
 * finite decimal number. 0 with *out set, -1 when there is none. Pure. */
int exec_validator_first_number(const char *s, size_t len, double *out) GV_MUST_CHECK;

/* Copies the first line of s[0..len) into out (size outsz), control and
 * non-ASCII bytes as '?', trailing spaces dropped. Pure. */
void exec_validator_message(char *out, size_t outsz, const char *s, size_t len);

struct exec_validator;

/* Prepares the validator of p (p->validators[0]): reads its sources
 * (bounded), picks its language from the first file with a known
 * extension (that file is saved as the language's source file name, the
 * others under their own names), and builds nothing yet: the sandbox is
 * opened at the first check. -1 for a package we cannot use (no known
 * language, a file name clash, too large); the caller reports IE. */
int exec_validator_new(struct exec_validator **out, struct exec_engine *e, const struct exec_problem *p,
		       const struct lang_registry *langs, const char *tenant,
		       struct gv_err *err) GV_MUST_CHECK;

/* Like exec_validator_new for validator which (< p->nvalidators). */
int exec_validator_new_at(struct exec_validator **out, struct exec_engine *e, const struct exec_problem *p,
			  size_t which, const struct lang_registry *langs, const char *tenant,
			  struct gv_err *err) GV_MUST_CHECK;

/* Bytes of compiler output exec_validator_compile gives back, at most. */
#define EXEC_VALIDATOR_COMPILE_OUTPUT_MAX 8192

/* Compiles the validator once, in its sandbox (with the problem's
 * validator_flags), and closes it again: a package import checks that every
 * validator builds. 0 with *compiled true, or false and *output (owned by
 * the caller, NUL-terminated, *len <= EXEC_VALIDATOR_COMPILE_OUTPUT_MAX
 * bytes) what the compiler printed; -1 with err when our machinery
 * failed. */
int exec_validator_compile(struct exec_validator *v, bool *compiled, char **output, size_t *len,
			   struct gv_err *err) GV_MUST_CHECK;

/* Checks one case: flags (the group's validator flags, "" for none; Kattis
 * only), the test's input and answer, the submission's output. Compiles
 * the validator first when no sandbox is open (or the flags changed, or
 * the sandbox died). 0 with *o filled (IE included, when the validator
 * broke its protocol); -1 with err when our machinery failed or the
 * validator does not compile: the caller reports IE. */
int exec_validator_check(struct exec_validator *v, const char *flags, const char *input, size_t input_len,
			 const char *answer, size_t answer_len, const char *output, size_t output_len,
			 struct exec_validator_outcome *o, struct gv_err *err) GV_MUST_CHECK;

/* Like exec_validator_check, for one pass of a multi-pass problem: seeds
 * (Kattis only; may be NULL) are placed in the validator's feedback dir
 * first (its files of the previous pass), and run (may be NULL) gets the
 * validator's own run result, feedback files included (the caller frees
 * it; left zeroed when -1 is returned). */
int exec_validator_check_pass(struct exec_validator *v, const char *flags, const char *input, size_t input_len,
			      const char *answer, size_t answer_len, const char *output, size_t output_len,
			      const struct exec_file *seeds, size_t nseeds, struct exec_validator_outcome *o,
			      struct exec_phase_result *run, struct gv_err *err) GV_MUST_CHECK;

/* Runs one interactive case: the interactor (this validator, opened with
 * job.interactive; argv as for a Kattis validator, input and answer as
 * files in its own sandbox only) against the submission's session sub,
 * through exec_session_interact. sub_wall_ms: the submission's wall limit;
 * the interactor's wall is at least that plus a margin, so that a
 * submission that stalls ends first. sub_lang: the submission's language,
 * whose memory_errors make its run MLE (a Java OutOfMemoryError) before
 * the verdict is taken. 0 with *run (the submission's
 * result; caller frees) and *o; -1 with err when our machinery failed or
 * the interactor does not compile: the caller reports IE (both sessions
 * may be dead then: the next case opens fresh ones). */
int exec_validator_interact(struct exec_validator *v, const char *flags, const char *input, size_t input_len,
			    const char *answer, size_t answer_len, struct exec_session *sub, uint32_t sub_wall_ms,
			    const struct lang_def *sub_lang, struct exec_phase_result *run, struct exec_interaction *ia,
			    struct exec_validator_outcome *o, struct gv_err *err) GV_MUST_CHECK;

/* Closes the sandbox and frees v; NULL-safe. */
void exec_validator_free(struct exec_validator *v);
