/* Threads, listeners and the request pipeline. Each worker owns its loop
 * and connections outright; nothing is shared between workers but the
 * read-only app, the atomic counters and the connection count.
 *
 * The cap: libevent 2.1 has no evhttp_set_max_connections. The connection
 * guard (conn.c) counts connections from accept, caps them process-wide and
 * per client address, bounds the time of each request's head and body and
 * sets each route's body limit before the body is read.
 *
 * /metrics lists tenants' queue depths: on the API port it answers only to
 * frontend.metrics_token; frontend.metrics_port serves it without a token
 * on an address of its own (loopback by default). */
#include "frontend/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sodium.h>
#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/queue.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "frontend/api_jobe.h"
#include "frontend/api_tenant.h"
#include "frontend/auth.h"
#include "frontend/wsbudget.h"
#include "frontend/commit.h"
#include "frontend/conn.h"
#include "frontend/cors.h"
#include "frontend/metrics.h"
#include "frontend/playground.h"
#include "frontend/server_internal.h"
#include "frontend/token_read.h"
#include "frontend/waiters.h"

uint64_t fe_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t fe_now_ms(void)
{
	return fe_now_us() / 1000u;
}

int fe_app_init(struct fe_app *app, const struct fe_config *cfg, struct gv_err *err)
{
	memset(app, 0, sizeof(*app));
	app->cfg = cfg;
	if (lang_registry_load(&app->langs, cfg->languages_dir, err) < 0) {
		gv_err_prefix(err, "languages");
		return -1;
	}
	if (fe_catalog_init(&app->cat, &app->langs, cfg->judge0_ids.items, cfg->judge0_ids.count, err) < 0)
		goto fail;
	app->bounds.max_source = cfg->max_source_size;
	app->bounds.max_tests = (size_t)cfg->max_tests;
	app->bounds.max_test_size = cfg->max_test_size;
	app->bounds.max_additional_files = cfg->max_additional_files_size;
	app->bounds.max_batch = (size_t)cfg->max_batch_size;
	if (tenant_crypto_init(err) < 0 || tenant_pepper_from_env(&app->pepper, err) < 0)
		goto fail;
	app->metrics = calloc(1, sizeof(*app->metrics));
	app->wsbudget = fe_wsbudget_new(cfg->websocket_memory, cfg->websocket_memory_per_tenant,
					(unsigned)cfg->websockets_per_kernel);
	if (!app->metrics || !app->wsbudget) {
		gv_err_errno(err, "calloc");
		goto fail;
	}
	return 0;
fail:
	fe_app_free(app);
	return -1;
}

void fe_app_free(struct fe_app *app)
{
	lang_registry_free(&app->langs);
	free(app->metrics);
	app->metrics = NULL;
	fe_wsbudget_free(app->wsbudget);
	app->wsbudget = NULL;
}

/* ------------------------------------------------------------ requests */

void fe_req_ref(struct fe_req *r)
{
	r->refs++;
}

void fe_req_unref(struct fe_req *r)
{
	if (--r->refs > 0)
		return;
	fe_handler_cleanup(r);
	atomic_fetch_sub(&r->w->app->connections, 1);
	if (r->query_ok)
		evhttp_clear_headers(&r->query);
	free(r);
}

void fe_req_detach_conn(struct fe_req *r)
{
	if (r->guarded) {
		/* The close callback belongs to the guard, which reports to r
		 * only while r->conn is set. */
		fe_conn_forget(r);
		return;
	}
	struct evhttp_connection *evcon = evhttp_request_get_connection(r->req);
	if (evcon)
		evhttp_connection_set_closecb(evcon, NULL, NULL);
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 301: return "Moved Permanently";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Payload Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 426: return "Upgrade Required";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Unknown";
	}
}

void fe_reply_raw(struct fe_req *r, int status, const char *ctype, struct evbuffer *body)
{
	if (r->replied)
		return;
	r->replied = true;
	struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
	evhttp_add_header(h, "Content-Type", ctype);
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	fe_cors_reply_headers(r, h);
	if (r->rl_limit[0]) {
		evhttp_add_header(h, "X-RateLimit-Limit", r->rl_limit);
		evhttp_add_header(h, "X-RateLimit-Remaining", r->rl_remaining);
		evhttp_add_header(h, "X-RateLimit-Reset", r->rl_reset);
	}
	fe_req_detach_conn(r);
	evhttp_send_reply(r->req, status, reason(status), body);
	fe_metrics_request(r->w->app->metrics, r->m.route ? r->m.route->id : FE_ROUTE_NONE, status,
			   fe_now_us() - r->t0_us);
	fe_req_unref(r);
}

void fe_reply_json(struct fe_req *r, int status, json_t *json)
{
	struct gv_err err;
	struct evbuffer *b = evbuffer_new();
	char *text = json ? gv_json_dump(json, JSON_COMPACT, 512u * 1024 * 1024, NULL, &err) : NULL;
	json_decref(json);
	if (!b || !text) {
		free(text);
		if (b)
			evbuffer_free(b);
		if (!r->replied) {
			r->replied = true;
			fe_req_detach_conn(r);
			evhttp_send_error(r->req, 500, NULL);
			fe_req_unref(r);
		}
		return;
	}
	evbuffer_add(b, text, strlen(text));
	evbuffer_add(b, "\n", 1);
	free(text);
	fe_reply_raw(r, status, "application/json", b);
	evbuffer_free(b);
}

void fe_reply_error(struct fe_req *r, int status, const char *code, const char *fmt, ...)
{
	char msg[GV_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Jobe: over quota or over the rate limit is Jobe's "server
	 * overloaded" run result; every other error is a bare JSON string,
	 * 400 for anything wrong with the request. */
	if (r->api == FE_API_JOBE && status == 429 && r->m.route && r->m.route->id == FE_ROUTE_JOBE_RUNS) {
		fe_reply_json(r, 200, fe_jobe_overload(msg));
		return;
	}
	if (r->api == FE_API_JOBE) {
		if (status == 405 && r->m.allowed) {
			char allow[96];
			fe_methods_list(r->m.allowed, allow, sizeof(allow));
			evhttp_add_header(evhttp_request_get_output_headers(r->req), "Allow", allow);
		}
		fe_reply_json(r, status == 422 ? 400 : status, json_string(msg));
		return;
	}
	/* Judge0's routes answer in Judge0's error shapes. */
	json_t *j = r->api == FE_API_JUDGE0    ? fe_j0_error_body(status, msg)
		    : r->api == FE_API_JUPYTER ? json_pack("{s:s,s:n}", "message", msg, "reason")
					       : json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg);
	/* Piston clients read a top-level "message". */
	if (j && r->api == FE_API_PISTON)
		json_object_set_new(j, "message", json_string(msg));
	if (status == 405 && r->m.allowed) {
		char allow[96];
		fe_methods_list(r->m.allowed, allow, sizeof(allow));
		evhttp_add_header(evhttp_request_get_output_headers(r->req), "Allow", allow);
	}
	fe_reply_json(r, status, j);
}

void fe_reply_apierr(struct fe_req *r, const struct fe_apierr *e)
{
	fe_reply_error(r, e->status, e->code, "%s", e->msg);
}

void fe_reply_db_error(struct fe_req *r, const char *error)
{
	gv_warn(NULL, "database: %s", error ? error : "no result");
	fe_reply_error(r, 503, "unavailable", "the database is unavailable, try again");
}

void fe_new_id(char out[FE_SID_BUF])
{
	unsigned char raw[16]; /* 128 bits */
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2base64(out, FE_SID_BUF, raw, sizeof(raw), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

const char *fe_query(struct fe_req *r, const char *name)
{
	return r->query_ok ? evhttp_find_header(&r->query, name) : NULL;
}

bool fe_query_bool(struct fe_req *r, const char *name)
{
	const char *v = fe_query(r, name);
	return v && (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes"));
}

/* ------------------------------------------------------------ pipeline */

void fe_dispatch(struct fe_req *r)
{
	if (r->gone) {
		fe_reply_error(r, 499, "client_closed", "client closed the connection");
		return;
	}
	fe_handle(r);
}

static enum fe_method method_of(enum evhttp_cmd_type t)
{
	switch (t) {
	case EVHTTP_REQ_GET: return FE_M_GET;
	case EVHTTP_REQ_POST: return FE_M_POST;
	case EVHTTP_REQ_DELETE: return FE_M_DELETE;
	case EVHTTP_REQ_HEAD: return FE_M_HEAD;
	case EVHTTP_REQ_OPTIONS: return FE_M_OPTIONS;
	case EVHTTP_REQ_PUT: return FE_M_PUT;
	case EVHTTP_REQ_PATCH: return FE_M_PATCH;
	default: return FE_M_OTHER;
	}
}

void fe_req_conn_closed(struct fe_req *r)
{
	r->gone = true;
	fe_handle_gone(r);
}

static void on_conn_close(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	fe_req_conn_closed(arg);
}

/* /metrics on the API port: only with frontend.metrics_token, compared in
 * constant time. */
static bool metrics_token_ok(struct fe_req *r)
{
	const char *want = r->w->app->cfg->metrics_token;
	if (!want || !want[0])
		return false;
	const char *a = evhttp_find_header(evhttp_request_get_input_headers(r->req), "Authorization");
	if (!a || strncasecmp(a, "Bearer ", 7))
		return false;
	a += 7;
	size_t n = strlen(want);
	return strlen(a) == n && sodium_memcmp(a, want, n) == 0;
}

/* More than one Content-Length header, or one with a list of values. */
static bool conflicting_lengths(struct evkeyvalq *h)
{
	int seen = 0;
	for (struct evkeyval *kv = h->tqh_first; kv; kv = kv->next.tqe_next) {
		if (strcasecmp(kv->key, "Content-Length"))
			continue;
		if (++seen > 1 || strchr(kv->value, ','))
			return true;
	}
	return false;
}
/* The query's key=value items into q. An item without '=' is skipped,
 * not an error: clients add bare cache-busters ("?1733139999999",
 * @jupyterlab/services), which evhttp's parser refuses. */
static int parse_query(const char *query, struct evkeyvalq *q)
{
	size_t n = strlen(query);
	char *kept = malloc(n + 1);
	if (!kept)
		return -1;
	size_t k = 0;
	for (const char *p = query; *p;) {
		size_t len = strcspn(p, "&");
		if (memchr(p, '=', len)) {
			if (k)
				kept[k++] = '&';
			memcpy(kept + k, p, len);
			k += len;
		}
		p += len;
		if (*p == '&')
			p++;
	}
	kept[k] = '\0';
	int rc = k ? evhttp_parse_query_str(kept, q) : 0;
	free(kept);
	return rc;
}


static void serve(struct evhttp_request *req, struct fe_worker *w, bool metrics_listener)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct fe_req *r = calloc(1, sizeof(*r));
	if (!r) {
		evhttp_send_error(req, 503, NULL);
		return;
	}
	r->w = w;
	r->req = req;
	r->refs = 1;
	r->t0_us = fe_now_us();
	r->method = method_of(evhttp_request_get_command(req));
	atomic_fetch_add(&w->app->connections, 1);
	r->metrics_listener = metrics_listener;
	r->guarded = fe_conn_request(w, req, r);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	const char *q = uri ? evhttp_uri_get_query(uri) : NULL;
	TAILQ_INIT(&r->query);
	r->query_ok = true;
	if (q && parse_query(q, &r->query) < 0) {
		fe_reply_error(r, 400, "invalid_request", "malformed query string");
		return;
	}
	/* Decoded values are C strings: "%00" would cut one short, so that
	 * "KEY%00junk" read as KEY. */
	if (q && strstr(q, "%00")) {
		fe_reply_error(r, 400, "invalid_request", "malformed query string: NUL byte");
		return;
	}
	if (fe_conn_client_over_cap(r)) {
		/* Through a trusted proxy: the client's connections, counted
		 * once its head named it (conn.c). */
		evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
		evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
		fe_reply_error(r, 503, "too_many_connections",
			       "too many requests at once from this client address (max_connections_per_address)");
		return;
	}
	if (fe_conn_head_bad(r)) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
		fe_reply_error(r, 400, "invalid_request", "the request head holds a NUL or another control byte");
		return;
	}
	if (conflicting_lengths(evhttp_request_get_input_headers(req))) {
		/* Request smuggling's opening: which one a proxy in front used
		 * is unknown. */
		evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
		fe_reply_error(r, 400, "invalid_request", "more than one Content-Length header");
		return;
	}
	if (evcon && !r->guarded)
		evhttp_connection_set_closecb(evcon, on_conn_close, r);
	enum fe_match_result mr;
	if (fe_playground_prefixed(path)) {
		/* Never a keyed route: the tenant's anonymous routes, if any. */
		r->playground = true;
		mr = fe_playground_match(r->method, path, &r->m, r->pg_tenant, r->pg_rest, sizeof(r->pg_rest));
	} else {
		mr = fe_route_match(r->method, path ? path : "", &r->m);
	}
	if (metrics_listener && (mr != FE_MATCH_OK || r->m.route->id != FE_ROUTE_METRICS)) {
		fe_reply_error(r, 404, "not_found", "this port serves GET /metrics only");
		return;
	}
	if (r->playground && mr != FE_MATCH_NOT_FOUND) {
		r->pg_mr = mr;
		fe_playground_resolve(r);
		return;
	}
	fe_route_matched(r, mr);
}

void fe_route_matched(struct fe_req *r, enum fe_match_result mr)
{
	struct evhttp_request *req = r->req;
	if (mr == FE_MATCH_NOT_FOUND) {
		fe_reply_error(r, 404, "not_found", "no such route");
		return;
	}
	fe_cors_note_origin(r);
	if (mr == FE_MATCH_BAD_METHOD && r->method == FE_M_OPTIONS) {
		fe_cors_preflight(r);
		return;
	}
	if (mr == FE_MATCH_BAD_METHOD) {
		fe_reply_error(r, 405, "method_not_allowed", "method not allowed on this route");
		return;
	}
	switch (r->m.route->id) {
	case FE_ROUTE_PISTON_RUNTIMES:
	case FE_ROUTE_PISTON_EXECUTE: r->api = FE_API_PISTON; break;
	case FE_ROUTE_J0_CREATE:
	case FE_ROUTE_J0_LIST:
	case FE_ROUTE_J0_GET:
	case FE_ROUTE_J0_DELETE:
	case FE_ROUTE_J0_BATCH_CREATE:
	case FE_ROUTE_J0_BATCH_GET:
	case FE_ROUTE_J0_LANGUAGES:
	case FE_ROUTE_J0_LANGUAGE:
	case FE_ROUTE_J0_STATUSES:
	case FE_ROUTE_J0_ABOUT:
	case FE_ROUTE_J0_CONFIG_INFO:
	case FE_ROUTE_J0_WORKERS: r->api = FE_API_JUDGE0; break;
	case FE_ROUTE_KERNELSPECS:
	case FE_ROUTE_KERNELSPEC:
	case FE_ROUTE_KERNELS_LIST:
	case FE_ROUTE_KERNELS_CREATE:
	case FE_ROUTE_KERNEL:
	case FE_ROUTE_KERNEL_DELETE:
	case FE_ROUTE_KERNEL_INTERRUPT:
	case FE_ROUTE_KERNEL_RESTART:
	case FE_ROUTE_KERNEL_CHANNELS: r->api = FE_API_JUPYTER; break;
	case FE_ROUTE_JOBE_LANGUAGES:
	case FE_ROUTE_JOBE_RUNS:
	case FE_ROUTE_JOBE_RUNRESULT:
	case FE_ROUTE_JOBE_FILES_POST:
	case FE_ROUTE_JOBE_FILE_PUT:
	case FE_ROUTE_JOBE_FILE_CHECK: r->api = FE_API_JOBE; break;
	default: r->api = FE_API_NATIVE;
	}
	if (r->m.route->id == FE_ROUTE_METRICS && !r->metrics_listener && !metrics_token_ok(r)) {
		/* Tenant ids and their queue depths are not for anyone who can
		 * reach the API. */
		if (r->w->app->cfg->metrics_token && r->w->app->cfg->metrics_token[0]) {
			evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate", "Bearer");
			fe_reply_error(r, 401, "unauthorized", "GET /metrics needs frontend.metrics_token");
		} else {
			fe_reply_error(r, 404, "not_found",
				       "/metrics is served on frontend.metrics_port, or here with frontend.metrics_token");
		}
		return;
	}
	if (r->anonymous)
		fe_playground_admit(r);
	else if (r->playground)
		fe_reply_error(r, 404, "not_found", "no such route"); /* never reached: resolved first */
	/* A keyless read of one submission: its id may be the capability
	 * (the tenant's browser_clients setting; token_read.h). */
	else if (fe_token_read_candidate(r))
		fe_token_read_resolve(r);
	/* config_info describes the limits of the tenant whose key comes
	 * with it, and the server's without one. */
	else if (r->m.route->auth || (r->m.route->id == FE_ROUTE_J0_CONFIG_INFO && fe_auth_presented(r)))
		fe_authenticate(r);
	else
		fe_dispatch(r);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	serve(req, arg, false);
}

static void on_metrics_request(struct evhttp_request *req, void *arg)
{
	serve(req, arg, true);
}

/* -------------------------------------------------------------- workers */

static int bind_socket(const char *host, int port, int *bound_port, struct gv_err *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char ps[16];
	snprintf(ps, sizeof(ps), "%d", port);
	int rc = getaddrinfo(host, ps, &hints, &ai);
	if (rc != 0)
		return gv_err_set(err, GV_ECONFIG, "listen address '%s': %s (a numeric address is required)",
				  host, gai_strerror(rc));
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return gv_err_errno(err, "socket");
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1024) < 0) {
		gv_err_errno(err, "bind/listen %s:%d", host, port);
		close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	/* Zeroed: clang's analyzer does not see getsockname write through
	 * glibc's transparent-union argument. */
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			*bound_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			*bound_port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return fd;
}

static void worker_free(struct fe_worker *w)
{
	if (!w)
		return;
	while (w->waiters)
		fe_wait_stop(w->waiters);
	if (w->http)
		evhttp_free(w->http);
	if (w->metrics_http)
		evhttp_free(w->metrics_http);
	w->closing = true;
	fe_store_abort(w);
	fe_db_free(w->db);
	fe_redis_free(w->redis);
	if (w->base)
		event_base_free(w->base);
	free(w->auth_cache);
	free(w->pg_cache);
	free(w);
}

/* An evhttp of worker w on listening socket fd (taken, closed on failure),
 * with the frontend's limits and the connection guard. Each route's body
 * limit is set per request by the guard; the default is the small one. */
static struct evhttp *server_new(struct fe_worker *w, int fd, void (*cb)(struct evhttp_request *, void *),
				 struct gv_err *err)
{
	const struct fe_config *cfg = w->app->cfg;
	struct evhttp *http = evhttp_new(w->base);
	struct evhttp_bound_socket *bound = http ? evhttp_accept_socket_with_handle(http, fd) : NULL;
	if (!bound) {
		close(fd);
		if (http)
			evhttp_free(http);
		gv_err_set(err, GV_EINTERNAL, "evhttp setup failed");
		return NULL;
	}
	evhttp_set_max_headers_size(http, (ev_ssize_t)cfg->max_header_size);
	struct timeval tv = { (time_t)(cfg->request_timeout_ms / 1000),
			      (suseconds_t)(cfg->request_timeout_ms % 1000) * 1000 };
	evhttp_set_timeout_tv(http, &tv);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
						 EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PUT | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(http, cb, w);
	fe_conn_attach(w, http, bound);
	return http;
}

static struct fe_worker *worker_new(struct fe_app *app, int index, struct gv_err *err)
{
	const struct fe_config *cfg = app->cfg;
	struct fe_worker *w = calloc(1, sizeof(*w));
	if (!w) {
		gv_err_errno(err, "calloc");
		return NULL;
	}
	w->app = app;
	w->index = index;
	w->listen_fd = -1;
	w->auth_cache = calloc(FE_AUTH_CACHE_SLOTS, sizeof(*w->auth_cache));
	w->pg_cache = calloc(FE_PG_CACHE_SLOTS, sizeof(*w->pg_cache));
	w->base = event_base_new();
	if (!w->base || !w->auth_cache || !w->pg_cache) {
		gv_err_set(err, ENOMEM, "event_base_new failed");
		goto fail;
	}
	int bound = app->port;
	int fd = bind_socket(cfg->listen, app->port, &bound, err);
	if (fd < 0)
		goto fail;
	app->port = bound;
	w->http = server_new(w, fd, on_request, err);
	if (!w->http)
		goto fail;
	if (index == 0 && cfg->metrics_port > 0) {
		int mbound = cfg->metrics_port;
		int mfd = bind_socket(cfg->metrics_listen, cfg->metrics_port, &mbound, err);
		if (mfd < 0) {
			gv_err_prefix(err, "metrics listener");
			goto fail;
		}
		app->metrics_port = mbound;
		w->metrics_http = server_new(w, mfd, on_metrics_request, err);
		if (!w->metrics_http)
			goto fail;
	}
	w->db = fe_db_new(w->base, fe_config_db_url(cfg), (int)(cfg->database_connect_timeout_ms / 1000),
			  (int)cfg->database_statement_timeout_ms, err);
	if (!w->db)
		goto fail;
	w->redis = fe_redis_new(w->base, cfg->redis_url, (int)cfg->redis_connect_timeout_ms,
				fe_worker_on_message, fe_worker_on_resync, w, err);
	if (!w->redis)
		goto fail;
	struct gv_err serr;
	if (fe_redis_subscribe(w->redis, "gavel:done", &serr) < 0) {
		*err = serr;
		goto fail;
	}
	return w;
fail:
	worker_free(w);
	return NULL;
}

static void *worker_main(void *arg)
{
	struct fe_worker *w = arg;
	event_base_dispatch(w->base);
	return NULL;
}

int fe_server_run(struct fe_app *app, int ready_fd, void (*on_hup)(void *arg), void *hup_arg,
		  struct gv_err *err)
{
	const struct fe_config *cfg = app->cfg;
	if (evthread_use_pthreads() != 0)
		return gv_err_set(err, GV_EINTERNAL, "evthread_use_pthreads failed");
	if (fe_conn_init(app, err) < 0)
		return -1;
	app->port = cfg->port;
	app->nworkers = cfg->threads;
	app->workers = calloc((size_t)app->nworkers, sizeof(*app->workers));
	if (!app->workers) {
		fe_conn_free(app);
		return gv_err_errno(err, "calloc");
	}
	int rc = -1, started = 0;
	for (int i = 0; i < app->nworkers; i++) {
		app->workers[i] = worker_new(app, i, err);
		if (!app->workers[i])
			goto out;
	}
	for (; started < app->nworkers; started++) {
		int e = pthread_create(&app->workers[started]->thread, NULL, worker_main, app->workers[started]);
		if (e) {
			errno = e;
			gv_err_errno(err, "pthread_create");
			goto out;
		}
	}
	gv_info(NULL, "listening on %s:%d with %d threads", cfg->listen, app->port, app->nworkers);
	if (app->metrics_port)
		gv_info(NULL, "metrics on %s:%d", cfg->metrics_listen, app->metrics_port);
	if (ready_fd >= 0) {
		dprintf(ready_fd, "%d\n", app->port);
		close(ready_fd);
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	int sig = 0;
	while (sigwait(&set, &sig) == 0 && sig == SIGHUP)
		if (on_hup)
			on_hup(hup_arg);
	gv_info(NULL, "signal %d: shutting down", sig);
	rc = 0;
out:
	for (int i = 0; i < started; i++)
		event_base_loopexit(app->workers[i]->base, NULL);
	for (int i = 0; i < started; i++)
		pthread_join(app->workers[i]->thread, NULL);
	for (int i = 0; i < app->nworkers; i++)
		worker_free(app->workers[i]);
	free(app->workers);
	app->workers = NULL;
	fe_conn_free(app);
	return rc;
}
