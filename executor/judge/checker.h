/* The built-in output checkers. They run outside the sandbox, on the
 * program's captured output (already capped by the executor) and the
 * expected answer, both as bounded in-memory buffers. Pure: no I/O, no
 * globals.
 *
 * Modes:
 * - tokens (the default; the Kattis default output validator): both texts
 *   are split at whitespace (space, \t, \n, \v, \f, \r) and compared token by
 *   token, case-insensitively (ASCII) unless case_sensitive. With a float
 *   tolerance set, a judge token that is a decimal number (sign, digits,
 *   optional fraction and exponent; "inf", "nan" and hex are not numbers) is
 *   compared as a number: accepted when |judge - user| <= the absolute
 *   tolerance or <= the relative tolerance * |judge| (an unset tolerance
 *   never accepts), and the user's token must then be a number too. With
 *   space_change_sensitive the whitespace between, before and after the
 *   tokens must be byte-identical as well, end of file included.
 * - exact: the bytes must be identical; with ignore_trailing_whitespace,
 *   whitespace at the very end of either text is dropped first (so a missing
 *   final newline is accepted, a missing space inside a line is not).
 *
 * The options and the grammar of their flags (validator_flags) are in
 * common/checker_flags.h: the frontend checks them too.
 *
 * The verdict is accepted or wrong answer, as in Kattis (exit 42 / 43):
 * there is no presentation-error verdict. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/checker_flags.h"

#define EXEC_CHECKER_MSG_MAX 256 /* bytes of a feedback message, with the NUL */

enum exec_checker_verdict {
	EXEC_CHECKER_AC = 42, /* the Kattis validator exit codes */
	EXEC_CHECKER_WA = 43,
};

/* Compares out (the program's output) with ans (the expected answer).
 * Returns the verdict; msg (size msgsz, may be NULL) receives a short
 * message naming the line and token, with both sides escaped and truncated,
 * e.g. "line 3, token 5: expected '7', got '8'" (empty when accepted).
 * Runs in time linear in the input sizes and allocates nothing. */
enum exec_checker_verdict exec_checker_compare(const struct gv_checker_opts *o, const char *ans, size_t anslen,
					       const char *out, size_t outlen, char *msg, size_t msgsz);

/* "AC" or "WA". */
const char *exec_checker_verdict_name(enum exec_checker_verdict v);
