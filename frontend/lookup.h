/* Reading and deleting submissions (lookup.c). Private to frontend/. */
#pragma once

#include "frontend/server_internal.h"

/* GET /v1/submissions/{id}, GET /submissions/{token} (Judge0). */
void fe_handle_get(struct fe_req *r);
/* GET /submissions/batch?tokens=... (Judge0). */
void fe_handle_batch_get(struct fe_req *r);
/* GET /submissions (Judge0): a page of the tenant's submissions. */
void fe_handle_list(struct fe_req *r);
/* DELETE /submissions/{token} (Judge0): finished ones only. */
void fe_handle_delete(struct fe_req *r);
