/* The memory that WebSockets hold in one frontend process, under one
 * budget for the process and a share of it per tenant: what a client has
 * not read yet (queued output) and the part of a message it has sent but
 * not finished (fragments). One tenant's kernels streaming to clients that
 * never read, or one client sending a message in a million fragments, is
 * refused at its share, not at the process's memory.
 *
 * Shared by every worker thread (a mutex); each WebSocket holds its own
 * charge and moves it with fe_wsbudget_charge. Also counts WebSockets per
 * kernel, for the per-kernel connection cap. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fe_wsbudget;

/* total: bytes for all WebSockets of the process; tenant_share: for one
 * tenant's; per_kernel: WebSockets open on one kernel (0: no cap). NULL
 * when out of memory. */
struct fe_wsbudget *fe_wsbudget_new(size_t total, size_t tenant_share, unsigned per_kernel);
void fe_wsbudget_free(struct fe_wsbudget *b);

/* Moves tenant's charge of one holder from *charged to want bytes. A
 * shrink always succeeds; a growth past the process's budget or the
 * tenant's share is refused (-1, *charged unchanged). */
int fe_wsbudget_charge(struct fe_wsbudget *b, const char *tenant, size_t *charged, size_t want);

/* One more WebSocket on kernel kid: false at the per-kernel cap (nothing
 * counted). fe_wsbudget_kernel_leave undoes a successful join. */
bool fe_wsbudget_kernel_join(struct fe_wsbudget *b, const char *kid);
void fe_wsbudget_kernel_leave(struct fe_wsbudget *b, const char *kid);

/* Bytes charged now, for /metrics. */
size_t fe_wsbudget_used(struct fe_wsbudget *b);
