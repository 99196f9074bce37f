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

/* The statement that writes the audit records of a submission INSERT,
 * to be sent in the same transaction right after it: one
 * `submission.created` per id of ids[0..n) that the INSERT stored (with
 * language, sizes, number of tests and limits, read back from the stored
 * request; never source, input or output), or, when the INSERT stored
 * none of them (the max_queued quota refused the request), one
 * `quota.refused` record. buf (size >= FE_AUDIT_IDS_BUF(n)) receives the
 * ids array and actor parameters and must outlive the fe_db_txn call; maxq is the
 * max_queued text parameter of the INSERT. s->values borrow r, buf and
 * maxq. */
#define FE_AUDIT_IDS_BUF(n) ((n) * (FE_SID_BUF + 1) + 3 + 8 + TENANT_UUID_BUF)
int fe_audit_created_stmt(struct fe_req *r, char *const *ids, size_t n, const char *maxq, char *buf,
			  size_t size, struct fe_db_stmt *s);

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
