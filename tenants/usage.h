/* Usage accounting per tenant and UTC day (table usage_daily, migration
 * 0002): submissions, sandbox CPU milliseconds, GPU milliseconds, egress
 * bytes. The executor daemon adds a job's figures in the same transaction
 * that writes its result, and only when that write actually recorded the
 * result (a job delivered twice must be counted once). */
#pragma once

#include <jansson.h>
#include <libpq-fe.h>
#include <stdint.h>

#include "common/err.h"

struct tenant_usage_delta {
	int64_t submissions;
	int64_t sandbox_cpu_ms;
	int64_t gpu_ms;
	int64_t egress_bytes;
};

/* Adds d to tenant_id's row of today (UTC), creating it. Every field must
 * be >= 0. Runs in the caller's transaction if one is open (as
 * gavel_executor, with the tenant set: tenant_tx_begin). */
int tenant_usage_add(PGconn *conn, const char *tenant_id, const struct tenant_usage_delta *d,
		     struct gv_err *err) GV_MUST_CHECK;

/* Adds one ended kernel's figures to tenant_id's row of today: its time
 * alive, its sandboxes' CPU, and its peak memory (the day's highest). In
 * the caller's transaction, as tenant_usage_add. */
int tenant_usage_add_kernel(PGconn *conn, const char *tenant_id, uint64_t kernel_ms, uint64_t cpu_ms,
			    uint64_t peak_memory_kb, struct gv_err *err) GV_MUST_CHECK;

/* The upsert, for async callers: $1 tenant uuid, $2 submissions,
 * $3 sandbox_cpu_ms, $4 gpu_ms, $5 egress_bytes (decimal text). */
#define TENANT_SQL_USAGE_ADD                                                                     \
	"INSERT INTO usage_daily AS u (tenant_id, day, submissions, sandbox_cpu_ms, gpu_ms, "         \
	"egress_bytes) VALUES ($1::uuid, (now() AT TIME ZONE 'UTC')::date, $2::bigint, $3::bigint, "    \
	"$4::bigint, $5::bigint) ON CONFLICT (tenant_id, day) DO UPDATE SET "                           \
	"submissions = u.submissions + EXCLUDED.submissions, "                                          \
	"sandbox_cpu_ms = u.sandbox_cpu_ms + EXCLUDED.sandbox_cpu_ms, "                                 \
	"gpu_ms = u.gpu_ms + EXCLUDED.gpu_ms, egress_bytes = u.egress_bytes + EXCLUDED.egress_bytes"

/* GET /v1/usage: $1 tenant uuid, $2 since date (inclusive) or NULL,
 * $3 until date (inclusive) or NULL. Columns: day (YYYY-MM-DD),
 * submissions, sandbox_cpu_ms, gpu_ms, egress_bytes; oldest first. */
#define TENANT_SQL_USAGE_SELECT                                                                  \
	"SELECT to_char(day, 'YYYY-MM-DD'), submissions, sandbox_cpu_ms, gpu_ms, egress_bytes "       \
	"FROM usage_daily WHERE tenant_id = $1::uuid AND ($2::date IS NULL OR day >= $2::date) "      \
	"AND ($3::date IS NULL OR day <= $3::date) ORDER BY day LIMIT 3660"

/* Usage as a JSON array of {"tenant", "day", "submissions",
 * "sandbox_cpu_seconds", "gpu_seconds", "egress_bytes"} (operator view):
 * tenant_id NULL = every tenant, since NULL = all days (else YYYY-MM-DD).
 * Returns a new reference or NULL with err. */
json_t *tenant_usage_report(PGconn *conn, const char *tenant_id, const char *since,
			    struct gv_err *err) GV_MUST_CHECK;
