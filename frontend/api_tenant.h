/* The tenant's own view of its audit trail and usage (GET /v1/audit,
 * GET /v1/usage), and the audit records the frontend writes:
 * `submission.created` in the transaction of the submission INSERT, and
 * `quota.refused` when a quota turns a request away. Private to
 * frontend/. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "frontend/db.h"
#include "frontend/server_internal.h"

/* GET /v1/audit: the caller's records in seq order, paged with
 * ?after=<seq>&limit=<1..1000>, filtered by ?since= / ?until= (ISO 8601
 * times, until exclusive) and ?action=. 400 on a malformed parameter. */
void fe_handle_audit(struct fe_req *r);
/* GET /v1/usage: the caller's usage per UTC day, ?since= / ?until=
 * (YYYY-MM-DD, both inclusive), with totals. */
void fe_handle_usage(struct fe_req *r);

/* The statement that writes the audit records of the submission INSERTs
 * of reqs[0..n), which all belong to one tenant, to be sent in the same
 * transaction after them: for each request in order, one
 * `submission.created` per id of its batch that its INSERT stored (with
 * language, sizes, number of tests and limits, read back from the stored
 * request; never source, input or output), or, when its INSERT stored none
 * of them (the max_queued quota refused it), one `quota.refused` record.
 * All of them are appended to the tenant's chain by one call (one lock).
 * *text receives the parameter text (the caller frees it after fe_db_txn);
 * s->values borrow it and reqs[0]. -1 when out of memory. */
int fe_audit_created_stmt(struct fe_req *const *reqs, size_t n, char **text, struct fe_db_stmt *s);

/* "native", "judge0" or "piston": the API r came through. Static string. */
const char *fe_api_name(const struct fe_req *r);

/* Records that a quota refused r (limit: the quota field, e.g.
 * "requests_per_second", "max_cpu_ms"; status 422 or 429) in its own
 * transaction, without waiting for it: the reply does not depend on it,
 * and a failure is logged, never shown to the client.
 *
 * Cost bound: a tenant over its rate limit can send refusals as fast as
 * the network allows, so records are throttled: at most one per tenant
 * and limit per second on each frontend thread (a small fixed table per
 * thread; when it is full of this second's entries, further refusals of
 * that second go unrecorded). Each record's details.refused counts the
 * refusals it stands for: itself plus those suppressed since the previous
 * record of that tenant and limit on that thread. max_queued refusals are
 * not recorded here but in the INSERT's own transaction
 * (fe_audit_created_stmt). */
void fe_audit_refusal(struct fe_req *r, const char *limit, int status, int64_t requested, int64_t allowed);
