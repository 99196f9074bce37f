/* Judge0 status ids and descriptions (common/judge0.h). */
#include "common/judge0.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobspec.h"
#include "common/json.h"

static const char *const status_desc[] = {
	NULL,
	"In Queue",
	"Processing",
	"Accepted",
	"Wrong Answer",
	"Time Limit Exceeded",
	"Compilation Error",
	"Runtime Error (SIGSEGV)",
	"Runtime Error (SIGXFSZ)",
	"Runtime Error (SIGFPE)",
	"Runtime Error (SIGABRT)",
	"Runtime Error (NZEC)",
	"Runtime Error (Other)",
	"Internal Error",
	"Exec Format Error",
};

const char *gv_judge0_status_description(int id)
{
	if (id < 1 || id > 14)
		return NULL;
	return status_desc[id];
}

int gv_judge0_status_id(const char *status, const char *verdict, const json_t *result)
{
	if (!status || !strcmp(status, "queued"))
		return 1;
	if (!strcmp(status, "running"))
		return 2;
	if (strcmp(status, "done"))
		return 13; /* failed, cancelled */
	if (!verdict && result)
		verdict = json_string_value(json_object_get(result, "verdict"));
	if (!verdict)
		return 13;
	if (!strcmp(verdict, "AC"))
		return 3;
	if (!strcmp(verdict, "WA") || !strcmp(verdict, "PE"))
		return 4;
	if (!strcmp(verdict, "TLE"))
		return 5;
	if (!strcmp(verdict, "CE"))
		return 6;
	if (!strcmp(verdict, "OLE"))
		return 8; /* isolate's file size limit: SIGXFSZ */
	if (!strcmp(verdict, "MLE"))
		return 12;
	if (!strcmp(verdict, "RE")) {
		json_int_t sig = result ? json_integer_value(json_object_get(result, "signal")) : 0;
		switch (sig) {
		case 11: return 7;
		case 25: return 8;
		case 8: return 9;
		case 6: return 10;
		case 0: return 11;
		default: return 12;
		}
	}
	return 13;
}

json_t *gv_judge0_b64(const json_t *obj, const char *key)
{
	char twin[64];
	snprintf(twin, sizeof(twin), "%s" GV_RESULT_B64_SUFFIX, key);
	const json_t *b = json_object_get(obj, twin), *v = json_object_get(obj, key);
	if (json_is_string(b))
		return json_string(json_string_value(b));
	if (!json_is_string(v))
		return json_null();
	struct gv_err err;
	char *e = gv_b64_encode(json_string_value(v), json_string_length(v), NULL, &err);
	json_t *j = e ? json_string(e) : NULL;
	free(e);
	return j;
}
