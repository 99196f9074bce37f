/* libFuzzer target for the native API's request parser: the body of
 * POST /v1/submissions, read as the frontend reads it (gv_json_parse) and
 * given to fe_native_parse. An accepted request must give a spec the
 * executor takes (fz_check_job); the body also stands for a stored result
 * when rendering the row in every API's shape. */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct fe_catalog *cat = fz_catalog();
	json_t *body = fz_body((const char *)data, size);
	if (!body)
		return 0;
	struct fe_job job;
	struct fe_apierr e;
	if (fe_native_parse(body, cat, &fz_bounds, &job, &e) == 0) {
		fz_check_job(&job);
		fz_render_row(&job, body);
		fe_job_clear(&job);
	} else {
		fz_render_row(NULL, body);
	}
	json_decref(body);
	return 0;
}
