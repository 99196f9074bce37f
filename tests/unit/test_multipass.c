/* The decision between two passes of a multi-pass problem
 * (executor/judge/multipass.h): another pass only after an accepting
 * validator wrote nextpass.in and a pass is left; beyond the limit, or a
 * nextpass.in that may have been cut, is the validator's fault (IE). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "executor/judge/multipass.h"

static void add_fb(struct exec_phase_result *r, const char *name, const char *data, size_t len)
{
	struct exec_feedback_file *f = &r->feedback[r->n_feedback++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->data = malloc(len + 1);
	assert_non_null(f->data);
	memset(f->data, 'x', len);
	if (data)
		memcpy(f->data, data, strlen(data));
	f->data[len] = '\0';
	f->len = len;
}

static struct exec_validator_outcome accepted(void)
{
	struct exec_validator_outcome o;
	memset(&o, 0, sizeof(o));
	o.verdict = EXEC_VERDICT_AC;
	return o;
}

static void multipass__next_input__another_pass_with_the_other_files_as_seeds(void **state)
{
	(void)state;
	struct exec_phase_result r;
	memset(&r, 0, sizeof(r));
	add_fb(&r, "state.txt", "6\n", 2);
	add_fb(&r, "nextpass.in", "second 6\n", 9);
	add_fb(&r, "judgemessage.txt", "ok\n", 3);
	struct exec_validator_outcome o = accepted();
	const char *next;
	size_t next_len, nseeds;
	struct exec_file seeds[EXEC_FEEDBACK_MAX];
	assert_int_equal(exec_multipass_next(&r, 1, 2, &o, &next, &next_len, seeds, &nseeds), EXEC_MULTIPASS_AGAIN);
	assert_int_equal(next_len, 9);
	assert_memory_equal(next, "second 6\n", 9);
	assert_int_equal(nseeds, 2);
	assert_string_equal(seeds[0].name, "state.txt");
	assert_string_equal(seeds[1].name, "judgemessage.txt");
	assert_int_equal(o.verdict, EXEC_VERDICT_AC);
	exec_phase_result_free(&r);
}

static void multipass__no_next_input_or_rejected__ends_the_case(void **state)
{
	(void)state;
	struct exec_phase_result r;
	memset(&r, 0, sizeof(r));
	add_fb(&r, "state.txt", "6\n", 2);
	struct exec_validator_outcome o = accepted();
	const char *next;
	size_t next_len, nseeds;
	struct exec_file seeds[EXEC_FEEDBACK_MAX];
	assert_int_equal(exec_multipass_next(&r, 1, 2, &o, &next, &next_len, seeds, &nseeds), EXEC_MULTIPASS_DONE);
	assert_int_equal(o.verdict, EXEC_VERDICT_AC);
	assert_null(next);
	/* A rejection ends the case even with a next input written. */
	add_fb(&r, "nextpass.in", "again\n", 6);
	o = accepted();
	o.verdict = EXEC_VERDICT_WA;
	assert_int_equal(exec_multipass_next(&r, 1, 2, &o, &next, &next_len, seeds, &nseeds), EXEC_MULTIPASS_DONE);
	assert_int_equal(o.verdict, EXEC_VERDICT_WA);
	exec_phase_result_free(&r);
}

static void multipass__beyond_the_limit_or_cut__is_a_judge_error(void **state)
{
	(void)state;
	struct exec_phase_result r;
	memset(&r, 0, sizeof(r));
	add_fb(&r, "nextpass.in", "again\n", 6);
	struct exec_validator_outcome o = accepted();
	const char *next;
	size_t next_len, nseeds;
	struct exec_file seeds[EXEC_FEEDBACK_MAX];
	assert_int_equal(exec_multipass_next(&r, 3, 3, &o, &next, &next_len, seeds, &nseeds), EXEC_MULTIPASS_DONE);
	assert_int_equal(o.verdict, EXEC_VERDICT_IE);
	assert_non_null(strstr(o.message, "pass 4"));
	assert_non_null(strstr(o.message, "at most 3"));
	exec_phase_result_free(&r);
	memset(&r, 0, sizeof(r));
	add_fb(&r, "nextpass.in", NULL, EXEC_FEEDBACK_FILE_MAX);
	o = accepted();
	assert_int_equal(exec_multipass_next(&r, 1, 2, &o, &next, &next_len, seeds, &nseeds), EXEC_MULTIPASS_DONE);
	assert_int_equal(o.verdict, EXEC_VERDICT_IE);
	assert_non_null(strstr(o.message, "nextpass.in"));
	exec_phase_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(multipass__next_input__another_pass_with_the_other_files_as_seeds),
		cmocka_unit_test(multipass__no_next_input_or_rejected__ends_the_case),
		cmocka_unit_test(multipass__beyond_the_limit_or_cut__is_a_judge_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
