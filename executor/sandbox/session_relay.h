/* Interactive tests: the host relays a submission's stdout to an
 * interactor's stdin and back, between two sessions of one engine
 * (executor/sandbox/session_relay.c; PROTOCOL.md, `interactive`). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "executor/sandbox/session.h"

/* What the relay of one interactive test saw (exec_session_interact). */
struct exec_interaction {
	/* The interactor's result reached the host before the submission's
	 * (who ended first decides the verdict, exec_interactive_outcome). */
	bool interactor_first;
	uint64_t to_interactor_bytes, to_submission_bytes; /* relayed payload */
	uint32_t to_interactor_frames, to_submission_frames;
	uint64_t wall_ms;                                  /* both commands sent → both results in */
};

/* Runs one interactive test: the submission's program (session sub) and
 * the interactor (session itr, which first gets files, e.g. input and
 * answer, as for exec_session_run_test_files) start together; the host
 * relays the submission's stdout to the interactor's stdin and back, one
 * bounded `data` frame at a time each way (backpressure: a side's output
 * is read only when the other side took the previous frame). When one side
 * ends, the other's stdin is closed (an empty `data` frame). Each side's
 * wall limit is enforced by its init and by the host backstop. Both
 * sessions must have been opened with job.interactive. 0: both results
 * and *ia filled (a side's whole-sandbox OOM or backstop leaves that
 * session dead, as for run_test). -1: err filled (EXEC_EDEAD when a
 * session was already dead; a broken protocol or dead sandbox otherwise:
 * both sessions are then dead and the results' status is "IE"). Results
 * are always initialised; free them with exec_phase_result_free. */
int exec_session_interact(struct exec_session *sub, struct exec_session *itr,
			  const struct exec_file *itr_files, size_t n_itr_files,
			  struct exec_phase_result *sub_out, struct exec_phase_result *itr_out,
			  struct exec_interaction *ia, struct gv_err *err) GV_MUST_CHECK;
