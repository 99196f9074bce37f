/* libFuzzer target for Piston's request parser: the body of
 * POST /api/v2/execute, read as the frontend reads it (gv_json_parse) and
 * given to fe_piston_parse, whose runtime look-up matches names, aliases
 * and version ranges against the versions executors published. An
 * accepted request must give a spec the executor takes (fz_check_job). */
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
	if (fe_piston_parse(body, cat, &fz_bounds, &job, &e) == 0) {
		fz_check_job(&job);
		fz_render_row(&job, body);
		fe_job_clear(&job);
	}
	json_decref(body);
	return 0;
}
