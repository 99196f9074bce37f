/* The frontend's connection guard: every client connection is counted
 * and capped from the moment it is accepted (process-wide and per client
 * address), the request head and body each have a deadline for the whole
 * of them, each route's body limit is set before the body is read, and a
 * write route's key is checked before its body is read.
 *
 * libevent 2.1's evhttp offers no hook between accept and request, and
 * none between a server request's headers and its body. The guard gets
 * them from public calls: evhttp_set_bevcb (called at each accept, where
 * the guard creates the connection's bufferevent), a callback on that
 * bufferevent's input buffer (it sees every byte before evhttp parses
 * it), evhttp_connection_set_closecb (the connection's end) and
 * evhttp_connection_set_max_body_size (evhttp checks it when the headers
 * are parsed, before reading the body). */
#pragma once

#include <event2/http.h>
#include <event2/listener.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "common/err.h"

struct fe_app;
struct fe_worker;
struct fe_req;
struct fe_conn;

/* The body a request may send when its key was not checked first (no key,
 * a refused key, a route without authentication): enough for a small
 * request to reach its handler and get the proper 401 or answer; beyond
 * it evhttp answers 413 without reading the body. */
#define FE_CONN_KEYLESS_BODY_MAX (16u * 1024)

/* Raises RLIMIT_NOFILE's soft limit to its hard limit, sets up the
 * process-wide tables and fixes the effective caps in app (max_connections
 * lowered, with a warning, to what the descriptor limit leaves). */
int fe_conn_init(struct fe_app *app, struct gv_err *err) GV_MUST_CHECK;
void fe_conn_free(struct fe_app *app);

/* Puts the guard on http, one of worker w's servers, and its listener
 * (accept errors back off instead of spinning). */
void fe_conn_attach(struct fe_worker *w, struct evhttp *http, struct evhttp_bound_socket *bound);

/* The head of r's request held a NUL or another control byte (seen by the
 * scanner before evhttp cut values at it): a pipelined request, which
 * could not be stopped before evhttp parsed it, is refused with this. */
bool fe_conn_head_bad(const struct fe_req *r);

/* r came through a trusted proxy for a client already holding
 * max_connections_per_address requests here: refused with 503. */
bool fe_conn_client_over_cap(const struct fe_req *r);

/* The client a PROXY line named for r's connection (client_addr.h), into
 * out; false when there was none. */
bool fe_conn_proxied_addr(const struct fe_req *r, struct sockaddr_storage *out);

/* The request pipeline's side (server.c). fe_conn_request: r, evhttp's
 * request req, has arrived whole: its connection leaves the guard's
 * deadlines until the reply is sent, and its end is reported to r
 * (fe_req_conn_closed) until fe_conn_forget(r). false: the connection is
 * not known to the guard (the caller watches it itself). */
bool fe_conn_request(struct fe_worker *w, struct evhttp_request *req, struct fe_req *r);
void fe_conn_forget(struct fe_req *r);

/* r's connection stops being HTTP (a WebSocket, ws.c): the guard stops
 * scanning its bytes and timing it, keeps counting it, and calls
 * gone(arg) from its close callback when evhttp frees it. r no longer
 * hears of it. false: the connection is not known to the guard (the
 * caller sets its own close callback). */
typedef void (*fe_conn_gone_fn)(void *arg);
bool fe_conn_upgrade(struct fe_req *r, fe_conn_gone_fn gone, void *arg);

/* Server.c's callback when a request's connection ends under it. */
void fe_req_conn_closed(struct fe_req *r);

/* A key check before a body is read (server.c: auth cache, then the
 * database). in_query: the key came in the query string, which admits the
 * larger body only for a tenant with browser_clients on. FE_KEY_PENDING:
 * fn(arg, ok) runs later from the loop, never from inside the call. */
enum fe_keycheck { FE_KEY_OK, FE_KEY_REFUSED, FE_KEY_PENDING };
typedef void (*fe_keycheck_fn)(void *arg, bool ok);
enum fe_keycheck fe_key_check(struct fe_worker *w, const char *key, bool in_query, fe_keycheck_fn fn, void *arg);
