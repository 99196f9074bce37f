/* Waiting requests of a worker (waiters.c). Private to frontend/. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "frontend/server_internal.h"

/* r waits for gavel:done of r->sid (holding a reference on r); on_wake
 * runs on done, on a subscriber reconnect, and never after fe_wait_stop.
 * fe_wait_stop also stops r's timers and its SSE subscription. */
void fe_wait_start(struct fe_req *r, fe_wake_fn on_wake);
void fe_wait_stop(struct fe_req *r);
/* Arms r->timer (made on first use) to call cb after ms; -1 on failure. */
int fe_wait_timer(struct fe_req *r, uint64_t ms, event_callback_fn cb);
/* The worker's Redis subscriber callbacks (arg: the worker). */
void fe_worker_on_message(void *arg, const char *channel, const char *payload, size_t len);
void fe_worker_on_resync(void *arg);
/* Called when the client went away while the request was pending. */
void fe_handle_gone(struct fe_req *r);
