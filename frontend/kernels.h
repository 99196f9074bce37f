/* Jupyter's kernel gateway REST API over hosted kernels (kernels.c):
 * /api/kernelspecs, /api/kernels and each kernel's model, interrupt,
 * restart and delete, and the check that opens its channels. A kernel is
 * a `submissions` row of kind 'kernel' (executor/kernels/README.md),
 * scoped to the caller's tenant like every row. Private to frontend/. */
#pragma once

#include "frontend/server_internal.h"

/* Every FE_ROUTE_KERNEL* and FE_ROUTE_KERNELSPEC* route. */
void fe_handle_kernels(struct fe_req *r);
/* Frees r's kernel handler state (fe_handler_cleanup). */
void fe_kernels_cleanup(struct fe_req *r);
