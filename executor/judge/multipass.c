/* The decision between two passes of a multi-pass problem (multipass.h). */
#include "executor/judge/multipass.h"

#include <stdio.h>
#include <string.h>

enum exec_multipass_step exec_multipass_next(const struct exec_phase_result *r, uint32_t pass, uint32_t passes,
					     struct exec_validator_outcome *o, const char **next, size_t *next_len,
					     struct exec_file *seeds, size_t *nseeds)
{
	*next = NULL;
	*next_len = 0;
	*nseeds = 0;
	const struct exec_feedback_file *np = exec_phase_feedback(r, EXEC_MULTIPASS_NEXT_INPUT);
	if (o->verdict != EXEC_VERDICT_AC || !np)
		return EXEC_MULTIPASS_DONE;
	if (pass >= passes) {
		o->verdict = EXEC_VERDICT_IE;
		o->has_score = false;
		snprintf(o->message, sizeof(o->message),
			 "output validator asked for pass %u of a problem with at most %u (limits.validation_passes)",
			 pass + 1, passes);
		return EXEC_MULTIPASS_DONE;
	}
	if (np->len >= EXEC_FEEDBACK_FILE_MAX) {
		o->verdict = EXEC_VERDICT_IE;
		o->has_score = false;
		snprintf(o->message, sizeof(o->message), "output validator wrote a nextpass.in of %d bytes or more",
			 EXEC_FEEDBACK_FILE_MAX);
		return EXEC_MULTIPASS_DONE;
	}
	*next = np->data;
	*next_len = np->len;
	for (size_t i = 0; i < r->n_feedback && *nseeds < EXEC_FEEDBACK_MAX; i++) {
		if (strcmp(r->feedback[i].name, EXEC_MULTIPASS_NEXT_INPUT) == 0)
			continue;
		seeds[(*nseeds)++] = (struct exec_file){ .name = r->feedback[i].name, .data = r->feedback[i].data,
							 .len = r->feedback[i].len };
	}
	return EXEC_MULTIPASS_AGAIN;
}
