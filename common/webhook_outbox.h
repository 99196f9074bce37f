/* The webhook outbox, as every writer of a finished result uses it: the
 * executor when it records a result, the scheduler when it finishes a job
 * as IE itself (attempts exhausted). Delivery (executor/daemon/webhook.h) reads
 * the outbox row and the submission when an attempt is due, so whoever
 * finished the job, the callback carries the same body: the native
 * submission, or Judge0's for a submission made through the Judge0 API.
 *
 * The row commits in the transaction of the result (gv_webhook_outbox_add);
 * after COMMIT the writer schedules the first attempt in the Redis delay
 * queue (gv_webhook_enqueue). A crash or a Redis failure between the two
 * only delays the webhook: the delivery process schedules outbox rows long
 * past due again. */
#pragma once

#include <libpq-fe.h>
#include <stdbool.h>

#include "common/err.h"
#include "common/redis.h"

/* ZSET of "<tid>:<sid>:<attempt>" scored by the due time (Redis server
 * time, ms). */
#define GV_WEBHOOK_QUEUE "gavel:webhooks"

/* In the caller's transaction, scoped to tid, which finishes sid: adds
 * sid's outbox row when its request names a callback_url (*wanted then
 * true). A row already there is kept (ON CONFLICT DO NOTHING). Call it
 * only when this transaction is the one that finished the submission, or
 * a result finished twice would be called back twice. */
int gv_webhook_outbox_add(PGconn *c, const char *tid, const char *sid, bool *wanted,
			  struct gv_err *err) GV_MUST_CHECK;

/* Schedules member ("<tid>:<sid>:<attempt>") delay_ms from now, Redis
 * server time, unless the queue holds it already (ZADD NX). 1 when added,
 * 0 when it was there, -1 with err. */
int gv_webhook_schedule(struct gv_redis *r, const char *member, long delay_ms, struct gv_err *err) GV_MUST_CHECK;

/* Schedules the first attempt for sid, due now, after the COMMIT of its
 * outbox row (gv_webhook_schedule of "<tid>:<sid>:1"). */
int gv_webhook_enqueue(struct gv_redis *r, const char *tid, const char *sid, struct gv_err *err) GV_MUST_CHECK;
