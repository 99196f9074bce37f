/* Creating submissions (submit.c). Private to frontend/. */
#pragma once

#include "frontend/server_internal.h"

/* POST /v1/submissions, POST /submissions (Judge0), POST
 * /api/v2/execute (Piston). */
void fe_handle_create(struct fe_req *r);
/* POST /submissions/batch (Judge0). */
void fe_handle_batch_create(struct fe_req *r);
/* The request's body as JSON, bounded by frontend.max_body_size; NULL
 * when it is not (the error is answered). */
json_t *fe_read_json_body(struct fe_req *r);
/* Checks job (taken) against r's tenant's per-job ceilings, stores and
 * enqueues it; with wait the answer comes when it finishes or the wait
 * times out (fe_row_answer in r's API, 202 after the timeout). */
void fe_submit_job(struct fe_req *r, struct fe_job *job, bool wait);
