/* libFuzzer target for the feedback filter (common/feedback.c), the one
 * filter every way a stored result leaves the service goes through. The
 * input is a policy (its first line) and a result (the rest), both JSON;
 * the result stands for what the executor stored, so its shape is not
 * trusted here either. Beyond "does not crash", with the default policy
 * (and with any malformed one) nothing of a test not marked a sample may
 * survive but its verdict and figures: no feedback, an empty message, no
 * exit code or signal; and the result's own exit code, signal and message
 * are gone when such a test decided it. Filtering twice changes nothing. */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/feedback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: invariant broken: %s\n", what);
	abort();
}

static bool is_hidden_test(const json_t *t)
{
	const json_t *msg = json_object_get(t, "message");
	return !json_object_get(t, "feedback") && (!msg || (json_is_string(msg) && !json_string_length(msg))) &&
	       json_is_null(json_object_get(t, "exit_code")) && json_is_null(json_object_get(t, "signal"));
}

static void check_default(const json_t *r)
{
	if (!json_is_object(r) || !json_object_get(r, "problem"))
		return;
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(r, "tests"), i, t) {
		if (json_is_object(t) && !json_is_true(json_object_get(t, "sample")) && !is_hidden_test(t))
			fail("a secret test shows more than its verdict and figures");
	}
	/* Which test the result's own figures describe, walked as the judge
	 * stops: the first that failed, else the last that ran. They must be
	 * hidden when it is secret or cannot be told. */
	bool hidden_needed = false;
	json_array_foreach(json_object_get(r, "tests"), i, t) {
		const char *v = json_string_value(json_object_get(t, "verdict"));
		if (!v) {
			hidden_needed = true;
			break;
		}
		if (!strcmp(v, "SKIPPED"))
			continue;
		hidden_needed = !json_is_true(json_object_get(t, "sample"));
		if (strcmp(v, "AC"))
			break;
	}
	if (hidden_needed &&
	    (!json_is_null(json_object_get(r, "exit_code")) || !json_is_null(json_object_get(r, "signal"))))
		fail("the result's exit code or signal may come from a secret test");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	size_t plen = nl ? (size_t)(nl - (const char *)data) : size;
	char *policy = strndup((const char *)data, plen);
	if (!policy)
		return 0;
	const char *rest = nl ? nl + 1 : (const char *)data + size;
	size_t rlen = size - (size_t)(rest - (const char *)data);
	json_t *given = json_loadb(rest, rlen, JSON_ALLOW_NUL, NULL);
	if (given) {
		json_t *r = json_deep_copy(given);
		gv_feedback_filter(r, policy);
		char *once = json_dumps(r, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
		gv_feedback_filter(r, policy);
		char *twice = json_dumps(r, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
		if ((once == NULL) != (twice == NULL) || (once && strcmp(once, twice)))
			fail("filtering twice changed the result");
		free(once);
		free(twice);
		json_decref(r);
		r = json_deep_copy(given);
		gv_feedback_filter(r, NULL);
		check_default(r);
		json_decref(r);
		json_decref(given);
	}
	free(policy);
	return 0;
}
