/* A long-lived interactive program driven by the caller's own loop
 * (notebook kernels, executor/kernels/): one interactive phase of one
 * session (opened with job.interactive) whose stdin the caller feeds and
 * whose stdout the caller reads, as bytes, while it runs, with the
 * phase's host backstops (its wall limit, the host's count of the
 * sandbox's CPU) as for a test (executor/sandbox/session_phase.c).
 *
 * The caller polls the descriptors exec_stream_pollfds gives, then calls
 * exec_stream_step, which does what they allow. Memory is bounded: the
 * stdin queue by EXEC_STREAM_QUEUE_MAX, the output by the caller, which
 * asks for output only when it can take it (back-pressure: a program
 * whose output is not taken stops at its full pipe). */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "executor/sandbox/session.h"

#define EXEC_STREAM_POLLFDS 4
#define EXEC_STREAM_QUEUE_MAX (16u << 20) /* bytes queued towards the program's stdin */

struct exec_stream;

/* Starts the program of s (an interactive session whose compile phase
 * passed): the session's deadline becomes the run's wall limit plus the
 * backstop's grace, whatever the engine's whole-sandbox default (a
 * kernel's lifetime is its wall limit). 0 with *out; -1 with err. */
int exec_stream_start(struct exec_session *s, struct exec_stream **out, struct gv_err *err) GV_MUST_CHECK;
/* The stream of a session made by exec_session_restore: the image's
 * program runs already (its opening command is not sent again); limits
 * and deadline as exec_stream_start. */
int exec_stream_resume(struct exec_session *s, struct exec_stream **out, struct gv_err *err) GV_MUST_CHECK;

/* Fills p (EXEC_STREAM_POLLFDS entries at most) with what the stream
 * waits on, given whether the caller takes output now; returns how many.
 * Lowers *timeout_ms to the stream's next backstop check. */
size_t exec_stream_pollfds(const struct exec_stream *st, bool reading, struct pollfd *p, int *timeout_ms);

/* Queues len bytes for the program's stdin (copied). -1 (GV_ELIMIT) when
 * the queue would pass EXEC_STREAM_QUEUE_MAX: nothing is queued. */
int exec_stream_write(struct exec_stream *st, const void *data, size_t len, struct gv_err *err) GV_MUST_CHECK;

/* Bytes queued and not yet written to the sandbox. */
size_t exec_stream_queued(const struct exec_stream *st);

/* Output of the program: n bytes (at most 64 KiB) in order. */
typedef void (*exec_stream_out_cb)(void *arg, const char *p, size_t n);

/* Does the I/O the descriptors allow without blocking: writes the queue,
 * and, when reading, hands the program's output to on_out; then the
 * backstops. 0: the program runs; 1: it ended, *r holds its result (a
 * whole-sandbox OOM gives MLE, the wall backstop WLE, both leaving the
 * session dead); -1: err (a broken protocol or a dead sandbox: the
 * session is dead, r is IE). r is untouched while the program runs. */
int exec_stream_step(struct exec_stream *st, bool reading, exec_stream_out_cb on_out, void *arg,
		     struct exec_phase_result *r, struct gv_err *err) GV_MUST_CHECK;

/* Frees st (NULL-safe). The program keeps running until its session is
 * closed. */
void exec_stream_free(struct exec_stream *st);
