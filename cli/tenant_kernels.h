/* `gavel tenant disable`'s end of a tenant's notebook kernels: queued ones
 * finished in PostgreSQL (tenants/kernel_stop.h) and announced to their
 * clients, running ones asked to stop through their command lists. */
#pragma once

#include <libpq-fe.h>

/* Stops tenant_id's kernels; redis_url NULL or "": only the database's
 * side, with a warning. Prints what it did. Returns an exit status (0, or
 * 1 when a part failed: said on stderr). */
int cli_tenant_kernels_stop(PGconn *conn, const char *redis_url, const char *tenant_id, const char *actor);
