/* Stopping every notebook kernel of a tenant (`gavel tenant disable`): the
 * database's side. Its queued kernels are finished at once (result reason
 * `tenant_disabled`, a kernel.stopped audit record each); its running ones
 * are listed for the caller, which asks their executors to stop them
 * through Redis (common/kernel_inbox.h), whose kernel.stopped follows
 * when each ends. */
#pragma once

#include <libpq-fe.h>
#include <stddef.h>

#include "common/err.h"
#include "tenants/key.h"

/* The reason both kinds of kernel end with: `stop <reason>` takes
 * [a-z_]{1,15}. */
#define TENANT_KERNEL_STOP_REASON "tenant_disabled"

struct tenant_kernel_ids {
	char (*ids)[40]; /* kernel ids (lower-case UUIDs); malloc'd */
	size_t n;
};

/* In one transaction as the tenant: finishes its queued kernels (their ids
 * into *queued) and lists its running ones (*running), with actor in the
 * audit records. Free both with tenant_kernel_ids_free, also on failure. */
int tenant_kernels_stop(PGconn *conn, const char *tenant_id, const char *actor, struct tenant_kernel_ids *queued,
			struct tenant_kernel_ids *running, struct gv_err *err) GV_MUST_CHECK;
void tenant_kernel_ids_free(struct tenant_kernel_ids *k);
