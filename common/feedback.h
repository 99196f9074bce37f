/* What a submitter may see of a problem's tests: the feedback policy, and
 * the one filter every way a stored result leaves the service goes
 * through (the frontend's GET, wait, SSE and its Judge0 and Piston shapes,
 * and the executor's webhook deliveries). */
#pragma once

#include <jansson.h>

/* The items a policy class ("sample", "secret") may grant. "output" is
 * everything the program itself said: its output, and its exit code and
 * signal (a program can print a byte of a secret input as its exit code
 * just as well as on stdout). */
#define GV_FEEDBACK_ITEMS 4
extern const char *const gv_feedback_items[GV_FEEDBACK_ITEMS];

/* The default policy (new reference): samples show everything, secret
 * tests nothing beyond their verdict, time and memory. */
json_t *gv_feedback_default_policy(void);

/* Applies a policy (its JSON text; NULL or malformed: the default) to a
 * stored problem result in place. Per test: "feedback" keeps only the
 * granted items; the checker's "message", which may quote the answer,
 * stays only where "expected" or "diff" is granted; "exit_code" and
 * "signal" stay only where "output" is, and so does a test's "stdout"
 * with its exact-bytes twin "stdout_b64" (problem results carry none
 * today: this holds should they ever). The result's own "exit_code",
 * "signal", "stdout", "stderr" (each with its "_b64" twin) and "message"
 * come from the test that decided the verdict and follow that test's
 * rules. A test not marked a sample is secret. A result
 * without "problem" (inline tests, which the submitter sent) is left
 * alone. Pure. */
void gv_feedback_filter(json_t *result, const char *policy);
