/* Health, metrics and workers (stats.c). Private to frontend/. */
#pragma once

#include "frontend/server_internal.h"

/* GET /v1/health, GET /metrics, GET /workers (Judge0). */
void fe_handle_stats(struct fe_req *r);
/* Frees the state of a stats request that never finished (r->stats). */
void fe_stats_free(struct fe_stats *st);
