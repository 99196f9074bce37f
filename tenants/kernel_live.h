/* A tenant's notebook kernels of the moment, for the operator (`gavel
 * tenant kernels`): each queued or running kernel with its budgets and
 * node, and the totals against the tenant's max_kernels. */
#pragma once

#include <jansson.h>
#include <libpq-fe.h>

#include "common/err.h"

/* At most 1000 are listed (the oldest); the totals count all. */

/* {"running":N,"queued":N,"memory_mb_running":N,"max_kernels":N,
 *  "kernels":[{"id","status","memory_mb","cpu_pct","node","created","started"}]}
 * for tenant_id (a uuid), queried under its row-level security; NULL with
 * err. */
json_t *tenant_kernels_live(PGconn *conn, const char *tenant_id, struct gv_err *err);
