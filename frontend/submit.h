/* Creating submissions (submit.c). Private to frontend/. */
#pragma once

#include "frontend/server_internal.h"

/* POST /v1/submissions, POST /submissions (Judge0), POST
 * /api/v2/execute (Piston). */
void fe_handle_create(struct fe_req *r);
/* POST /submissions/batch (Judge0). */
void fe_handle_batch_create(struct fe_req *r);
