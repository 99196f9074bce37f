/* Private to frontend/: the worker and request structures shared by
 * server.c (pipeline, replies, auth) and the route handlers. */
#pragma once

#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "frontend/db.h"
#include "frontend/redis.h"
#include "frontend/router.h"
#include "frontend/server.h"
#include "tenants/quota.h"

#define FE_AUTH_CACHE_SLOTS 256
#define FE_SID_BUF 65
#define FE_CLIENT_BUF 46   /* INET6_ADDRSTRLEN */
#define FE_PG_REST_MAX 256 /* the path after /playground/{tenant} */
#define FE_ACTOR_BUF 80    /* "key:<uuid>", "anonymous:<address>" */

struct fe_auth_entry {
	bool used;
	unsigned char hash[TENANT_KEY_HASH_LEN];
	uint64_t fetched_ms; /* when the query was sent */
	struct tenant_auth_row row;
	struct tenant_quota quota;
};

struct fe_req;
struct fe_pg_entry;
struct fe_kwatch;
struct fe_kreq;

struct fe_worker {
	struct fe_app *app;
	int index;
	struct event_base *base;
	struct evhttp *http;
	int listen_fd;
	struct fe_db *db;
	struct fe_redis *redis;
	pthread_t thread;
	struct fe_req *waiters; /* requests waiting for gavel:done */
	struct fe_auth_entry *auth_cache;
	struct fe_pg_entry *pg_cache; /* playground tenants by name (playground.c) */
	/* SHA1 of the rate-limit script once SCRIPT LOAD answered: the bucket
	 * is then taken with EVALSHA (a few dozen bytes) instead of sending
	 * and hashing the whole script on every request. */
	char rl_sha[41];
	bool rl_sha_loading;
	/* Group commit of submission INSERTs (commit.c), one transaction
	 * in flight per process, on worker 0: the submissions of every worker
	 * wait in worker 0's queue (store_head) and go out together next; each
	 * outcome comes back to its worker's store_done list. store_ev wakes
	 * the worker for either. Guarded by commit.c's store_mu. */
	struct fe_store *store_head, *store_tail;
	size_t store_n;
	bool store_busy;
	struct fe_store *store_done_head, *store_done_tail;
	struct event *store_ev;
	bool closing;
	/* The guard's connections of this worker, oldest first (conn.c). */
	struct fe_conn *conns_head, *conns_tail;
	/* Worker 0 only: GET /metrics without a token (frontend.metrics_port). */
	struct evhttp *metrics_http;
	/* Who listens to which kernel's gavel:kout:<kid> (kernel_channels.c):
	 * WebSockets and requests waiting for a restart or a stop. */
	struct fe_kwatch *kwatch;
	int kdispatch; /* > 0 while a kout message is being handed out */
};

typedef void (*fe_wake_fn)(struct fe_req *r);

struct fe_req {
	struct fe_worker *w;
	struct evhttp_request *req;
	int refs;
	bool replied;
	bool gone;      /* the client closed the connection */
	struct fe_conn *conn; /* the guard's record of its connection (conn.c) */
	bool guarded;         /* conn set by the guard: its close callback is the guard's */
	bool metrics_listener; /* arrived on frontend.metrics_port */
	uint64_t t0_us;
	enum fe_method method;
	struct fe_match m;
	struct evkeyvalq query;
	bool query_ok;
	/* after authentication */
	char tenant_id[TENANT_UUID_BUF];
	char key_id[TENANT_UUID_BUF];
	struct tenant_quota quota;
	unsigned char key_hash[TENANT_KEY_HASH_LEN];
	bool key_in_query;    /* the key came in the query string, not a header */
	/* CORS (frontend/cors.h): the request's valid Origin ("" none), and
	 * whether the tenant refused it */
	char origin[TENANT_ORIGIN_MAX + 1];
	bool origin_invalid;  /* an Origin header that is no valid origin */
	bool origin_null;     /* ... and it was "null" */
	bool cors_refused;
	/* A public playground's request (playground.h): the path is under
	 * /playground/; anonymous once admitted as the tenant's principal
	 * (no key: key_id empty), with the settings' access and, unless
	 * token_capability is on, reads limited to the playground's own
	 * submissions. client: the peer address, as the audit shows it. */
	bool playground;
	bool anonymous;
	bool pg_rows_only;
	unsigned pg_access;
	enum fe_match_result pg_mr;
	char pg_tenant[FE_ROUTE_PARAM_MAX];
	char pg_rest[FE_PG_REST_MAX];
	char pg_bucket[48];
	int pg_tenant_rps, pg_tenant_burst; /* the tenant's own rate limit */
	bool pg_rl_tenant;                  /* the tenant-wide bucket's turn */
	char client[FE_CLIENT_BUF];
	/* extra response headers (rate limit) */
	char rl_limit[24], rl_remaining[24], rl_reset[24];
	/* waiting for a submission to finish (wait=true, SSE, Piston) */
	char sid[FE_SID_BUF];
	struct fe_req *wnext;
	bool waiting;
	fe_wake_fn on_wake;
	struct event *timer;   /* wait deadline / SSE max duration */
	struct event *ping;    /* SSE keep-alive */
	bool sse;
	bool sse_subscribed;
	bool fetching;
	/* handler state */
	int api;               /* enum fe_api */
	bool j0_base64;
	uint64_t j0_fields;
	const struct lang_def *lang;
	json_t *batch_result;  /* Judge0 batch create answer being built */
	char **batch_ids;
	size_t batch_n;
	struct fe_stats *stats; /* /v1/health, /metrics, /workers in flight */
	uint32_t problem_version; /* /v1/problems: the version uploaded (r->sid: the problem) */
	struct fe_kreq *kreq;  /* /api/kernels* (kernels.c) */
};

/* The API of the route: errors take its shape (Jupyter: {"message",
 * "reason"}; Jobe: a bare JSON string). */
enum fe_api { FE_API_NATIVE, FE_API_JUDGE0, FE_API_PISTON, FE_API_JUPYTER, FE_API_JOBE };

uint64_t fe_now_us(void);
uint64_t fe_now_ms(void);

void fe_req_ref(struct fe_req *r);
void fe_req_unref(struct fe_req *r);
/* Unhooks r from its connection's close callback. Call it before the last
 * send of r's reply (evhttp_send_reply, _send_error, _send_reply_end): the
 * connection outlives the request (keep-alive, the end of an SSE stream),
 * and its close must not reach r once r is freed. */
void fe_req_detach_conn(struct fe_req *r);

/* Replies (each at most once per request; later calls are ignored). */
void fe_reply_raw(struct fe_req *r, int status, const char *ctype, struct evbuffer *body);
/* Steals json. */
void fe_reply_json(struct fe_req *r, int status, json_t *json);
void fe_reply_error(struct fe_req *r, int status, const char *code, const char *fmt, ...)
	GV_PRINTF(4, 5);
void fe_reply_apierr(struct fe_req *r, const struct fe_apierr *e);
/* Logs why the database failed (NULL: no result) and answers 503. */
void fe_reply_db_error(struct fe_req *r, const char *error);

/* A new submission or problem id: 128 random bits, base64url (22 chars). */
void fe_new_id(char out[FE_SID_BUF]);

/* Query parameter (decoded) or NULL. */
const char *fe_query(struct fe_req *r, const char *name);
bool fe_query_bool(struct fe_req *r, const char *name);

/* Waiters: waiters.h. Group commit: commit.h. */

/* The rest of the pipeline once r's route is matched (server.c): 404,
 * CORS preflight, 405, then authentication, the playground's admission or
 * the handler. */
void fe_route_matched(struct fe_req *r, enum fe_match_result mr);

/* Route handlers (handlers.c); called after authentication when needed. */
void fe_handle(struct fe_req *r);
/* Hands an admitted request to fe_handle (server.c), or answers 499 when
 * its client already left. */
void fe_dispatch(struct fe_req *r);
/* Frees handler state held by r (timers, subscriptions). */
void fe_handler_cleanup(struct fe_req *r);

/* The OpenAPI document (openapi.c). */
extern const char fe_openapi_json[];
