/* Language listings (languages.c). Private to frontend/. */
#pragma once

#include "frontend/server_internal.h"

/* GET /v1/languages, /languages, /languages/{id} (Judge0), /api/v2/runtimes
 * (Piston). */
void fe_handle_languages(struct fe_req *r);
