/* Problems as a service (issue 6), the frontend's part: the /v1/problems
 * routes, the check of a submission's problem_id before its row is stored,
 * and the feedback policy applied to every stored result a GET shows.
 *
 * The frontend never opens an uploaded archive: it stores the bytes as a
 * new 'pending' version (deploy/sql/0011_problems.sql) and an executor
 * imports it in a sandbox. Every query runs in a transaction scoped to the
 * caller's tenant and names the tenant in its WHERE clause, so another
 * tenant's problem answers exactly like a missing one (404).
 *
 * Feedback policy, per problem: {"sample": [...], "secret": [...]}, items
 * of "input", "expected", "output" (the submission's own output) and
 * "diff" (the first differing line). Default: everything for samples,
 * nothing for secret data. Set with ?feedback_sample=...&feedback_secret=...
 * (comma lists, "none" for empty) on POST/PUT with an archive, or PUT with
 * a JSON body {"feedback": {...}}. Private to frontend/. */
#pragma once

#include <jansson.h>
#include <stdbool.h>

#include "frontend/api.h"
#include "frontend/server_internal.h"

/* POST /v1/problems, GET /v1/problems, GET/PUT/DELETE /v1/problems/{id}. */
void fe_handle_problems(struct fe_req *r);

/* The last step of POST /v1/submissions with a problem_id in rows[0]'s
 * request: checks that the problem is the caller's, resolves the version
 * (default: the current ready one; 404 / 409 otherwise), checks the
 * problem's limits against the tenant's ceilings (422), then stores the
 * row with fe_submission_store. Takes rows. */
void fe_problem_submission_check(struct fe_req *r, json_t *rows, bool wait);

/* Stores the rows of a validated submission and enqueues them (submit.c).
 * Takes rows. */
void fe_submission_store(struct fe_req *r, json_t *rows, bool wait);


/* Parses the two query lists into a policy object (new reference). NULL
 * values keep the default for that class. -1 with e (400) on an unknown
 * item. */
int fe_problem_policy_from_query(const char *sample, const char *secret, json_t **out, struct fe_apierr *e);
