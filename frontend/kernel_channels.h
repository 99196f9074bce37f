/* A hosted kernel's side of the frontend's Redis traffic and its
 * WebSocket channels (executor/kernels/README.md): pushing commands on
 * gavel:kin:<kid> (byte budgets per kernel, tenant and in all: only
 * while the kernel runs, common/kernel_inbox.h),
 * the per-worker watchers of gavel:kout:<kid> (one subscription per
 * kernel and worker, shared, each message parsed once and handed to every
 * watcher of that kernel), and the WebSockets themselves: one connection
 * id each, `open`/`msg`/`ping`/`close` pushed for it, every client
 * message checked (kernel_frames.h) and rate-limited, the kernel's output
 * relayed to the right connections. Private to frontend/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kernel_inbox.h"
#include "frontend/kernel_frames.h"
#include "frontend/redis.h"
#include "frontend/server_internal.h"

/* Pushes header[0..hn) followed by payload[0..pn) (may be NULL) as one
 * element of gavel:kin:<kid>, of tenant's kernel kid, under the byte
 * budgets of common/kernel_inbox.h (the reply is an enum
 * gv_kin_push_result). cb may be NULL. 0 sent (cb called once), -1 with
 * err (cb never called). */
int fe_kin_push(struct fe_worker *w, const char *tenant, const char *kid, enum gv_kin_kind kind,
		const char *header, size_t hn, const void *payload, size_t pn, fe_redis_cb cb, void *arg,
		struct gv_err *err) GV_MUST_CHECK;
/* Deletes a kernel's list and model and uncounts them (a queued kernel
 * cancelled). Fire and forget: a failure is logged. */
void fe_kin_drop(struct fe_worker *w, const char *tenant, const char *kid);

/* A watcher of one kernel's gavel:kout:<kid> messages on worker w.
 * fn(arg, m, buf): m parsed from buf (borrowed for the call). The first
 * watcher of a kernel on a worker subscribes, the last unsubscribes. */
struct fe_kwatch;
typedef void (*fe_kwatch_fn)(void *arg, const struct fe_kout *m, const uint8_t *buf);
struct fe_kwatch *fe_kwatch_add(struct fe_worker *w, const char *kid, fe_kwatch_fn fn, void *arg);
/* Stops k (NULL-safe); fn is never called after. */
void fe_kwatch_remove(struct fe_kwatch *k);

/* A message on gavel:kout:<kid> (kid: the channel's suffix), from the
 * worker's subscriber. A malformed one is logged and dropped. */
void fe_kernel_on_kout(struct fe_worker *w, const char *kid, const uint8_t *payload, size_t len);

/* GET /api/kernels/{id}/channels once the kernel is known to be r's
 * tenant's and alive: the upgrade (400/426 when r is no WebSocket
 * handshake), then the session. */
void fe_kernel_channels_open(struct fe_req *r, const char *kid);
