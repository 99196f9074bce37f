/* Kernels a course asks to have warm ahead (deploy/sql/0019): "N kernels
 * for tenant T from FROM until UNTIL". The operator's side (`gavel tenant
 * kernels-warm`: add, list, cancel, each change audited) and the kernel
 * nodes' (what to keep started ahead now, every tenant at once, through
 * gavel_kernel_warm_asks()). */
#pragma once

#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define TENANT_KERNEL_WARM_MAX_KERNELS 256 /* one request */
#define TENANT_KERNEL_WARM_PENDING_MAX 16  /* requests of one tenant not yet ended */
#define TENANT_KERNEL_WARM_ASKS_MAX 64     /* tenants a node is asked for at once */

/* Records the request, with its audit record, in one transaction; the
 * tenant's max_kernels bounds kernels, its pending requests
 * TENANT_KERNEL_WARM_PENDING_MAX; from and until are PostgreSQL
 * timestamps ("now", "2026-12-07 08:55+01", ISO 8601), until later than
 * both from and now, at most 12 h after from. *id: the request's. */
int tenant_kernel_warm_add(PGconn *conn, const char *tenant_id, long kernels, const char *from, const char *until,
			   const char *actor, long long *id, struct gv_err *err) GV_MUST_CHECK;
/* Ends request id of the tenant now (audited); GV_ENOTFOUND if it has no
 * such request not yet ended. */
int tenant_kernel_warm_cancel(PGconn *conn, const char *tenant_id, long long id, const char *actor,
			      struct gv_err *err) GV_MUST_CHECK;
/* The tenant's requests not yet ended, as a JSON array of {id, kernels,
 * from, until} (UTC), soonest first. */
json_t *tenant_kernel_warm_list(PGconn *conn, const char *tenant_id, struct gv_err *err);

/* One tenant's kernels to keep warm now, with the budgets its kernels get. */
struct tenant_kernel_warm_ask {
	char tenant[40];
	uint32_t kernels, memory_mb, cpu_pct, lifetime_s, idle_s;
};
/* Every tenant's, at most max (the largest first); the count, or -1. */
int tenant_kernel_warm_asks(PGconn *conn, struct tenant_kernel_warm_ask *out, size_t max,
			    struct gv_err *err) GV_MUST_CHECK;
