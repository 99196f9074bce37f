/* Retention: deletes submissions (their source, outputs and results live
 * in the row and in rows that reference it with ON DELETE CASCADE) older
 * than the tenant's retention_days. Only finished submissions (done,
 * failed, cancelled) are deleted; audit records are kept, and one
 * retention.purged record per tenant notes how many rows went.
 * Runs as the owner role (the CLI `gavel retention run`) or as
 * gavel_scheduler (the scheduler leader's periodic job,
 * scheduler.retention_interval): tenants are listed through the definer
 * function gavel_tenant_ids (0005) and each batch runs in a transaction
 * scoped to its tenant. Deletes in batches so that no lock is held for
 * long. */
#pragma once

#include <libpq-fe.h>
#include <stdint.h>

#include "common/err.h"

#define TENANT_RETENTION_BATCH 1000

struct tenant_retention_report {
	int tenants;      /* tenants examined */
	int64_t deleted;  /* submissions deleted in all */
};

/* tenant_id NULL = every tenant. actor names who runs it for the audit
 * record ("operator:root", "system:retention"). conn must be idle. */
int tenant_retention_run(PGconn *conn, const char *tenant_id, const char *actor,
			 struct tenant_retention_report *rep, struct gv_err *err) GV_MUST_CHECK;
