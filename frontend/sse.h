/* Server-Sent Events of a submission (sse.c). Private to frontend/. */
#pragma once

#include <stddef.h>

#include "frontend/server_internal.h"

/* GET /v1/submissions/{id}/events. */
void fe_handle_events(struct fe_req *r);
/* Sends one event to r's stream (nothing when r is not a live stream);
 * newlines in data are sent as spaces. */
void fe_sse_event(struct fe_req *r, const char *event, const char *data, size_t len);
