/* libFuzzer target for Judge0's request parser. The input's first line is
 * the query string ("base64_encoded=true&fields=token,stdout"), the rest
 * the body of POST /submissions, read as the frontend reads it
 * (gv_json_parse) and given to fe_j0_parse; a body with a "submissions"
 * array is also taken as a batch, each element parsed as
 * POST /submissions/batch does. The `fields` value goes to
 * fe_j0_parse_fields. An accepted request must give a spec the executor
 * takes (fz_check_job) and render in every API's shape. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define QUERY_MAX 1024

/* The value of name in a query line ("a=1&b=2"), copied into out; false
 * when absent. No percent-decoding: libevent does that before the
 * handlers see a value. */
static bool query_value(const char *q, const char *name, char *out, size_t outsz)
{
	size_t nl = strlen(name);
	for (const char *p = q; *p;) {
		size_t n = strcspn(p, "&");
		if (n > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			size_t vl = n - nl - 1 < outsz - 1 ? n - nl - 1 : outsz - 1;
			memcpy(out, p + nl + 1, vl);
			out[vl] = '\0';
			return true;
		}
		p += n;
		if (*p == '&')
			p++;
	}
	return false;
}

static void parse_one(const json_t *sub, bool base64, const struct fe_catalog *cat)
{
	struct fe_job job;
	struct fe_apierr e;
	if (fe_j0_parse(sub, base64, cat, &fz_bounds, &job, &e) == 0) {
		fz_check_job(&job);
		fz_render_row(&job, NULL);
		fe_job_clear(&job);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct fe_catalog *cat = fz_catalog();
	const char *buf = (const char *)data;
	const char *nl = memchr(buf, '\n', size);
	size_t ql = nl ? (size_t)(nl - buf) : size;
	if (ql >= QUERY_MAX)
		return 0;
	char query[QUERY_MAX];
	memcpy(query, buf, ql);
	query[ql] = '\0';
	if (strlen(query) != ql) /* a NUL: not a query libevent would hand over */
		return 0;
	char v[QUERY_MAX];
	bool base64 = query_value(query, "base64_encoded", v, sizeof(v)) &&
		      (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes"));
	uint64_t fields;
	struct fe_apierr e;
	if (fe_j0_parse_fields(query_value(query, "fields", v, sizeof(v)) ? v : NULL, &fields, &e) == 0 &&
	    (fields & ~((1ull << FE_J0_FIELD_COUNT_) - 1)))
		abort();
	if (!nl)
		return 0;
	json_t *body = fz_body(nl + 1, size - ql - 1);
	if (!body)
		return 0;
	parse_one(body, base64, cat);
	json_t *subs = json_object_get(body, "submissions");
	if (json_is_array(subs) && json_array_size(subs) <= fz_bounds.max_batch)
		for (size_t i = 0; i < json_array_size(subs); i++)
			parse_one(json_array_get(subs, i), base64, cat);
	json_decref(body);
	return 0;
}
