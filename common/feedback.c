/* The feedback policy's filter (common/feedback.h). */
#include "common/feedback.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/jobspec.h"

const char *const gv_feedback_items[GV_FEEDBACK_ITEMS] = { "input", "expected", "output", "diff" };

json_t *gv_feedback_default_policy(void)
{
	return json_pack("{s:[ssss],s:[]}", "sample", "input", "expected", "output", "diff", "secret");
}

static bool granted(const json_t *list, const char *item)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), item))
			return true;
	return false;
}

static bool verdict_is(const json_t *test, const char *name)
{
	const char *v = json_string_value(json_object_get(test, "verdict"));
	return v && !strcmp(v, name);
}

/* The test whose outcome the result's own exit code and message describe:
 * the first that failed, else the last that ran (as the judge picks it);
 * -1 when none ran (CE); -2 when a test has no readable verdict, so that
 * which one decided is unknown. */
static long deciding_test(const json_t *tests)
{
	long last_run = -1;
	size_t i;
	json_t *t;
	json_array_foreach(tests, i, t) {
		if (!json_is_string(json_object_get(t, "verdict")))
			return -2;
		if (verdict_is(t, "SKIPPED"))
			continue;
		if (!verdict_is(t, "AC"))
			return (long)i;
		last_run = (long)i;
	}
	return last_run;
}

/* Drops what the program printed: each output field and its exact-bytes
 * twin (common/jobspec.h), together, so that neither outlives the other. */
static void drop_output(json_t *obj, const char *const *keys)
{
	for (const char *const *k = keys; *k; k++) {
		char twin[64];
		snprintf(twin, sizeof(twin), "%s" GV_RESULT_B64_SUFFIX, *k);
		json_object_del(obj, *k);
		json_object_del(obj, twin);
	}
}

void gv_feedback_filter(json_t *result, const char *policy)
{
	static const char *const test_output[] = { "stdout", NULL };
	static const char *const run_output[] = { "stdout", "stderr", NULL };
	if (!json_is_object(result) || !json_object_get(result, "problem"))
		return;
	json_t *pol = policy ? json_loads(policy, 0, NULL) : NULL;
	json_t *sample = json_object_get(pol, "sample"), *secret = json_object_get(pol, "secret");
	if (!json_is_array(sample) || !json_is_array(secret)) {
		json_decref(pol);
		pol = gv_feedback_default_policy();
		sample = json_object_get(pol, "sample");
		secret = json_object_get(pol, "secret");
	}
	json_t *tests = json_object_get(result, "tests");
	long decider = deciding_test(tests);
	/* Fail closed: with no readable tests, nothing about them shows. */
	bool decider_hides_exit = true, decider_hides_message = true;
	size_t i;
	json_t *t;
	json_array_foreach(tests, i, t) {
		const json_t *list = json_is_true(json_object_get(t, "sample")) ? sample : secret;
		json_t *fb = json_object_get(t, "feedback");
		if (fb) {
			/* Every key not granted goes, known item or not: fail
			 * closed against any shape the stored result has. */
			const char *key;
			json_t *v;
			void *tmp;
			json_object_foreach_safe(fb, tmp, key, v) {
				bool known = false;
				for (size_t k = 0; k < GV_FEEDBACK_ITEMS; k++)
					known |= !strcmp(key, gv_feedback_items[k]);
				if (!json_is_object(fb) || !known || !list || !granted(list, key))
					json_object_del(fb, key);
			}
			if (!json_is_object(fb) || json_object_size(fb) == 0)
				json_object_del(t, "feedback");
		}
		bool hide_message = !list || (!granted(list, "expected") && !granted(list, "diff"));
		bool hide_exit = !list || !granted(list, "output");
		if (hide_message)
			json_object_set_new(t, "message", json_string(""));
		if (hide_exit) {
			json_object_set_new(t, "exit_code", json_null());
			json_object_set_new(t, "signal", json_null());
			drop_output(t, test_output);
		}
		if ((long)i == decider) {
			decider_hides_exit = hide_exit;
			decider_hides_message = hide_message;
		}
	}
	if (decider == -1) {
		/* Nothing ran: the result's figures describe no test. */
		decider_hides_exit = decider_hides_message = false;
	}
	if (decider_hides_exit) {
		json_object_set_new(result, "exit_code", json_null());
		json_object_set_new(result, "signal", json_null());
		drop_output(result, run_output);
	}
	if (decider_hides_message && json_object_get(result, "message"))
		json_object_set_new(result, "message", json_string(""));
	json_decref(pol);
}
