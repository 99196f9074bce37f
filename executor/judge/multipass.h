/* Multi-pass validation (Kattis `validation: custom multi-pass`): after a
 * pass the output validator may write nextpass.in to its feedback dir and
 * accept, and the submission then runs again with that file as its input,
 * up to the problem's limits.validation_passes passes in all; the
 * validator's feedback dir is kept from one pass to the next (its state).
 * This is the pure decision between two passes; the passes themselves run
 * in judge.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "executor/judge/validator.h"
#include "executor/sandbox/session.h"

#define EXEC_MULTIPASS_NEXT_INPUT "nextpass.in"

enum exec_multipass_step {
	EXEC_MULTIPASS_DONE,  /* o is the case's outcome */
	EXEC_MULTIPASS_AGAIN, /* run the submission again on *next */
};

/* After pass `pass` (1 for the first) of at most `passes`, from the
 * validator's outcome o of that pass and its run r (its feedback files).
 * AGAIN when it accepted, wrote nextpass.in and a pass is left: *next and
 * *next_len are that file's bytes, and seeds[0..*nseeds) its other
 * feedback files (at most EXEC_FEEDBACK_MAX), both borrowed from r, for
 * the next pass's feedback dir. DONE otherwise, with o turned into IE
 * (the validator broke the protocol, never the submission's fault) when
 * it asked for a pass beyond `passes` or its nextpass.in filled the whole
 * EXEC_FEEDBACK_FILE_MAX bytes a feedback file may bring back (it may have
 * been cut). A validator that rejected (WA) ends the case whatever it
 * wrote. Pure. */
enum exec_multipass_step exec_multipass_next(const struct exec_phase_result *r, uint32_t pass, uint32_t passes,
					     struct exec_validator_outcome *o, const char **next, size_t *next_len,
					     struct exec_file *seeds, size_t *nseeds);
