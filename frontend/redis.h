/* Asynchronous Redis for the event loop: hiredis 0.14.1's async API on its
 * libevent adapter, one command connection and one subscriber connection
 * per worker thread, each reconnecting with bounded backoff. The subscriber
 * keeps a reference-counted set of channels and resubscribes them after a
 * reconnect; every message is handed to one callback.
 *
 * Reply ownership: replies passed to callbacks are borrowed (hiredis frees
 * them after the callback returns). */
#pragma once

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct fe_redis;

/* reply NULL: the connection failed or was lost before the answer. */
typedef void (*fe_redis_cb)(void *arg, redisReply *reply);
/* A pub/sub message: channel and payload are borrowed. */
typedef void (*fe_redis_msg_cb)(void *arg, const char *channel, const char *payload, size_t len);
/* Called each time the subscriber connection is (re)established and has
 * subscribed: messages sent while it was down are lost, so waiters re-check
 * their state. */
typedef void (*fe_redis_resync_cb)(void *arg);

struct fe_redis *fe_redis_new(struct event_base *base, const char *url, int connect_timeout_ms,
			      fe_redis_msg_cb on_msg, fe_redis_resync_cb on_resync, void *arg,
			      struct gv_err *err) GV_MUST_CHECK;
void fe_redis_free(struct fe_redis *r);

bool fe_redis_ready(const struct fe_redis *r);
bool fe_redis_sub_ready(const struct fe_redis *r);

/* Sends one command (arguments copied during the call). 0: cb will be
 * called exactly once (reply NULL on failure); -1 with err when the command
 * connection is down (cb never called). cb may be NULL. */
int fe_redis_command(struct fe_redis *r, fe_redis_cb cb, void *arg, int argc, const char **argv,
		     const size_t *argvlen, struct gv_err *err) GV_MUST_CHECK;

/* Reference-counted SUBSCRIBE / UNSUBSCRIBE of channel (<= 200 bytes). */
int fe_redis_subscribe(struct fe_redis *r, const char *channel, struct gv_err *err) GV_MUST_CHECK;
void fe_redis_unsubscribe(struct fe_redis *r, const char *channel);
