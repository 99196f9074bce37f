/* WebSocket sessions on evhttp connections (ws.h).
 *
 * Taking the connection over: after the request's head, evhttp is in its
 * "writing the reply" state and will not touch the bufferevent until a
 * reply is sent, which never happens. bufferevent_setcb replaces evhttp's
 * callbacks with ours (the guard's input hook is removed by
 * fe_conn_upgrade), the 101 goes straight into the output buffer, and the
 * bytes the client sent after its head (if any) are read as frames.
 *
 * Freeing: wslay's context must not be freed inside wslay_event_recv, and
 * nothing is freed inside a bufferevent callback either: every end goes
 * through `dead` and the deferred event, whose callback frees the evhttp
 * connection; its close callback (ours, or the guard's reporting to us)
 * calls gone(), which frees the session. evhttp_free at shutdown reaches
 * gone() the same way. */
#include "frontend/ws.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/keyvalq_struct.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wslay/wslay.h>

#include "common/log.h"
#include "frontend/conn.h"
#include "frontend/metrics.h"
#include "frontend/sha1.h"
#include "frontend/wsbudget.h"
#include "common/utf8.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define CLOSE_WAIT_MS 5000
#define READ_HIGH_WATER (1u << 20)
/* Frames of one message: wslay keeps each fragment as its own chunk, so a
 * message in a million one-byte fragments held ~90 bytes per byte sent. */
#define FRAGMENTS_MAX 1024

struct fe_ws {
	struct fe_worker *w;
	struct evhttp_connection *evcon; /* NULL once gone */
	struct bufferevent *bev;
	wslay_event_context_ptr ctx;
	struct fe_ws_limits lim;
	struct fe_ws_ops ops;
	void *arg;
	struct event *defer;  /* deferred work: read what is buffered, or end */
	struct event *ping;
	struct event *resume; /* end of a pause */
	struct event *close_wait;
	bool in_recv;
	bool paused;
	bool dead;            /* ending: the deferred event frees the connection */
	bool closing;         /* our close frame is queued */
	bool draining;        /* ours sent without the client's: reading to discard */
	uint16_t code;        /* the close code to report */
	bool held;            /* reads held until fe_ws_release */
	bool overflow;        /* past a cap while receiving: dropped */
	char tenant[40];      /* whose budget share it charges */
	size_t charged;       /* bytes charged to the process's budget */
	size_t in_msg;        /* bytes of the message being received */
	unsigned frags;       /* its frames so far */
};

/* ---------------------------------------------------------------- pure */

void fe_ws_accept_value(const char *key, size_t len, char out[FE_WS_ACCEPT_BUF])
{
	char buf[256 + sizeof(WS_GUID)];
	uint8_t d[FE_SHA1_LEN];
	if (len > 256)
		len = 256; /* a valid key is 24 bytes; the caller checked it */
	memcpy(buf, key, len);
	memcpy(buf + len, WS_GUID, sizeof(WS_GUID) - 1);
	fe_sha1(buf, len + sizeof(WS_GUID) - 1, d);
	sodium_bin2base64(out, FE_WS_ACCEPT_BUF, d, sizeof(d), sodium_base64_VARIANT_ORIGINAL);
}

bool fe_ws_key_valid(const char *key)
{
	unsigned char raw[18];
	size_t n = 0;
	const char *end = NULL;
	if (!key || strlen(key) != 24)
		return false;
	return sodium_base642bin(raw, sizeof(raw), key, 24, NULL, &n, &end, sodium_base64_VARIANT_ORIGINAL) == 0 &&
	       n == 16 && end == key + 24;
}

bool fe_ws_token_in(const char *list, const char *token)
{
	size_t tn = strlen(token);
	const char *p = list;
	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *s = p;
		while (*p && *p != ',' && *p != ' ' && *p != '\t')
			p++;
		size_t n = (size_t)(p - s);
		if (n == tn && n && !strncasecmp(s, token, n))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------- request */

int fe_ws_check_request(struct fe_req *r, const char *const *protocols, int nprot, int *chosen)
{
	struct evkeyvalq *h = evhttp_request_get_input_headers(r->req);
	const char *up = evhttp_find_header(h, "Upgrade"), *conn = evhttp_find_header(h, "Connection");
	const char *ver = evhttp_find_header(h, "Sec-WebSocket-Version"), *key = evhttp_find_header(h, "Sec-WebSocket-Key");
	*chosen = -1;
	if (r->method != FE_M_GET || !up || !fe_ws_token_in(up, "websocket") || !conn ||
	    !fe_ws_token_in(conn, "upgrade")) {
		fe_reply_error(r, 400, "invalid_request", "Can \"Upgrade\" only to \"WebSocket\".");
		return -1;
	}
	if (!ver || strcmp(ver, "13") != 0) {
		evhttp_add_header(evhttp_request_get_output_headers(r->req), "Sec-WebSocket-Version", "13");
		fe_reply_error(r, 426, "upgrade_required", "WebSocket version 13 is the only one spoken here");
		return -1;
	}
	if (!fe_ws_key_valid(key)) {
		fe_reply_error(r, 400, "invalid_request", "missing or invalid Sec-WebSocket-Key");
		return -1;
	}
	for (int i = 0; i < nprot && *chosen < 0; i++)
		for (struct evkeyval *kv = h->tqh_first; kv; kv = kv->next.tqe_next)
			if (!strcasecmp(kv->key, "Sec-WebSocket-Protocol") && fe_ws_token_in(kv->value, protocols[i])) {
				*chosen = i;
				break;
			}
	return 0;
}

/* ------------------------------------------------------------ sessions */

static void schedule(struct fe_ws *ws)
{
	event_active(ws->defer, EV_TIMEOUT, 1);
}

/* Ends the session from the loop (never inside wslay or a bufferevent
 * callback). */
static void kill_ws(struct fe_ws *ws)
{
	if (ws->dead)
		return;
	ws->dead = true;
	schedule(ws);
}

/* The connection is freed (our close callback, or the guard's): so is the
 * session. */
static void gone(void *arg)
{
	struct fe_ws *ws = arg;
	if (ws->bev)
		bufferevent_setcb(ws->bev, NULL, NULL, NULL, NULL);
	ws->evcon = NULL;
	ws->bev = NULL;
	event_free(ws->defer);
	event_free(ws->ping);
	event_free(ws->resume);
	event_free(ws->close_wait);
	if (ws->ctx)
		wslay_event_context_free(ws->ctx);
	if (ws->w->app->wsbudget)
		fe_wsbudget_charge(ws->w->app->wsbudget, ws->tenant, &ws->charged, 0);
	ws->ops.on_closed(ws->arg, ws->code);
	free(ws);
}

static void on_evcon_close(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	gone(arg);
}

static void arm_close_wait(struct fe_ws *ws);

/* Charges what ws holds now (plus extra bytes about to be queued) to the
 * process's WebSocket budget; false when refused: ws is then dropped. */
static bool recharge(struct fe_ws *ws, size_t extra)
{
	struct fe_wsbudget *b = ws->w->app->wsbudget;
	if (!b || ws->dead)
		return !ws->dead;
	size_t want = evbuffer_get_length(bufferevent_get_output(ws->bev)) +
		      evbuffer_get_length(bufferevent_get_input(ws->bev)) +
		      wslay_event_get_queued_msg_length(ws->ctx) + ws->in_msg + extra;
	if (fe_wsbudget_charge(b, ws->tenant, &ws->charged, want) == 0)
		return true;
	gv_warn(NULL, "websocket: dropped a client of tenant %s past the WebSocket memory budget (%zu bytes held)",
		ws->tenant, want);
	kill_ws(ws);
	return false;
}

/* Sends what wslay has queued, then checks the caps and whether the
 * session is over. */
static void flush(struct fe_ws *ws)
{
	if (ws->dead || ws->in_recv)
		return;
	if (wslay_event_want_write(ws->ctx) && wslay_event_send(ws->ctx) != 0) {
		kill_ws(ws);
		return;
	}
	size_t out = evbuffer_get_length(bufferevent_get_output(ws->bev));
	if (out > ws->lim.max_output) {
		gv_warn(NULL, "websocket: dropped a client that left %zu bytes unread", out);
		kill_ws(ws);
		return;
	}
	if (!recharge(ws, 0))
		return;
	if (!wslay_event_want_read(ws->ctx) && !wslay_event_want_write(ws->ctx)) {
		if (wslay_event_get_close_sent(ws->ctx))
			ws->code = wslay_event_get_status_code_sent(ws->ctx);
		if (!wslay_event_get_close_received(ws->ctx)) {
			/* Ours sent after a protocol error (too big, not UTF-8),
			 * while the client may still be sending: closing now
			 * would reset the connection before it reads our close
			 * frame. What it sends is discarded until it closes, or
			 * the close wait ends. */
			if (!ws->draining) {
				ws->draining = true;
				arm_close_wait(ws);
				evbuffer_drain(bufferevent_get_input(ws->bev), evbuffer_get_length(bufferevent_get_input(ws->bev)));
			}
			return;
		}
		/* Both close frames exchanged: the end, once the output is
		 * out (write callback). */
		if (out == 0)
			kill_ws(ws);
	}
}

static void do_recv(struct fe_ws *ws)
{
	if (ws->draining) {
		struct evbuffer *in = bufferevent_get_input(ws->bev);
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	if (ws->dead || ws->paused || !wslay_event_want_read(ws->ctx))
		return;
	ws->in_recv = true;
	int rc = wslay_event_recv(ws->ctx);
	ws->in_recv = false;
	if (rc != 0) {
		kill_ws(ws);
		return;
	}
	if (wslay_event_get_close_received(ws->ctx) && !ws->closing)
		ws->code = wslay_event_get_status_code_received(ws->ctx);
	flush(ws);
}

static void on_defer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_ws *ws = arg;
	if (ws->dead) {
		if (ws->evcon)
			evhttp_connection_free(ws->evcon); /* -> gone() */
		else
			gone(ws);
		return;
	}
	do_recv(ws);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	(void)bev;
	do_recv(arg);
}

static void on_write(struct bufferevent *bev, void *arg)
{
	(void)bev;
	struct fe_ws *ws = arg;
	if (!ws->dead && !ws->draining && !wslay_event_want_read(ws->ctx) && !wslay_event_want_write(ws->ctx))
		kill_ws(ws);
	else
		recharge(ws, 0); /* the output drained */
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct fe_ws *ws = arg;
	if (what & BEV_EVENT_TIMEOUT)
		gv_info(NULL, "websocket: dropped a client %s", what & BEV_EVENT_READING ? "silent too long"
											: "not reading");
	kill_ws(ws);
}

static void on_ping(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_ws *ws = arg;
	if (ws->dead || ws->closing)
		return;
	struct wslay_event_msg m = { WSLAY_PING, (const uint8_t *)"gavel", 5 };
	if (wslay_event_queue_msg(ws->ctx, &m) == 0)
		flush(ws);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_ws *ws = arg;
	ws->paused = false;
	if (ws->dead)
		return;
	bufferevent_enable(ws->bev, EV_READ);
	do_recv(ws);
}

static void arm_close_wait(struct fe_ws *ws)
{
	struct timeval tv = { CLOSE_WAIT_MS / 1000, 0 };
	evtimer_add(ws->close_wait, &tv);
}

static void on_close_wait(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	kill_ws(arg);
}

static ssize_t recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user)
{
	(void)flags;
	struct fe_ws *ws = user;
	if (ws->overflow) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	if (ws->paused || ws->dead) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	int n = evbuffer_remove(bufferevent_get_input(ws->bev), buf, len);
	if (n <= 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	return n;
}

static ssize_t send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *user)
{
	(void)flags;
	struct fe_ws *ws = user;
	if (ws->dead || evbuffer_add(bufferevent_get_output(ws->bev), data, len) != 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return (ssize_t)len;
}

/* Counts the frames and bytes of the message being received: past
 * FRAGMENTS_MAX frames or the budget, the client is dropped (recv_cb fails
 * the next read, so wslay stops where it is). */
static void on_frame_start(wslay_event_context_ptr ctx, const struct wslay_event_on_frame_recv_start_arg *arg,
			   void *user)
{
	(void)ctx;
	struct fe_ws *ws = user;
	if (arg->opcode >= 8)
		return; /* control frames: small, answered at once */
	if (arg->opcode != 0) {
		ws->frags = 0;
		ws->in_msg = 0;
	}
	ws->frags++;
	ws->in_msg += arg->payload_length < ws->lim.max_message ? arg->payload_length : ws->lim.max_message;
	if (ws->frags > FRAGMENTS_MAX) {
		gv_warn(NULL, "websocket: dropped a client sending a message in more than %d frames", FRAGMENTS_MAX);
		ws->overflow = true;
		kill_ws(ws);
	} else if (!recharge(ws, 0)) {
		ws->overflow = true;
	}
}

static void on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg, void *user)
{
	struct fe_ws *ws = user;
	ws->in_msg = 0;
	ws->frags = 0;
	if (ws->dead || ws->closing)
		return;
	if (arg->opcode != WSLAY_TEXT_FRAME && arg->opcode != WSLAY_BINARY_FRAME)
		return; /* ping (wslay answers), pong, close (wslay answers) */
	if (arg->opcode == WSLAY_TEXT_FRAME && !gv_utf8_valid(arg->msg, arg->msg_length)) {
		static const char why[] = "text message is not UTF-8";
		ws->closing = true;
		ws->code = FE_WS_INVALID_DATA;
		if (wslay_event_queue_close(ctx, FE_WS_INVALID_DATA, (const uint8_t *)why, sizeof(why) - 1) == 0) {
			wslay_event_shutdown_read(ctx);
			arm_close_wait(ws);
		} else {
			kill_ws(ws);
		}
		return;
	}
	ws->ops.on_message(ws->arg, arg->opcode == WSLAY_BINARY_FRAME, arg->msg, arg->msg_length);
}

int fe_ws_send(struct fe_ws *ws, bool binary, const void *data, size_t len)
{
	if (ws->dead || ws->closing)
		return -1;
	size_t out = evbuffer_get_length(bufferevent_get_output(ws->bev)) + wslay_event_get_queued_msg_length(ws->ctx);
	if (out + len > ws->lim.max_output) {
		gv_warn(NULL, "websocket: dropped a client that left %zu bytes unread", out);
		kill_ws(ws);
		return -1;
	}
	if (!recharge(ws, len))
		return -1;
	struct wslay_event_msg m = { binary ? WSLAY_BINARY_FRAME : WSLAY_TEXT_FRAME, data, len };
	if (wslay_event_queue_msg(ws->ctx, &m) != 0) {
		kill_ws(ws);
		return -1;
	}
	flush(ws);
	return ws->dead ? -1 : 0;
}

void fe_ws_close(struct fe_ws *ws, uint16_t code, const char *reason)
{
	if (ws->dead || ws->closing)
		return;
	ws->closing = true;
	ws->code = code;
	size_t rn = reason ? strnlen(reason, 120) : 0;
	if (wslay_event_queue_close(ws->ctx, code, (const uint8_t *)reason, rn) != 0) {
		kill_ws(ws);
		return;
	}
	arm_close_wait(ws);
	flush(ws);
}

void fe_ws_hold(struct fe_ws *ws)
{
	if (ws->dead)
		return;
	ws->held = ws->paused = true;
	evtimer_del(ws->resume);
	bufferevent_disable(ws->bev, EV_READ);
}

void fe_ws_release(struct fe_ws *ws)
{
	if (ws->dead || !ws->held)
		return;
	ws->held = ws->paused = false;
	bufferevent_enable(ws->bev, EV_READ);
	schedule(ws); /* what came meanwhile is buffered */
}

void fe_ws_pause(struct fe_ws *ws, uint64_t ms)
{
	if (ws->dead || ws->paused || ms == 0)
		return;
	ws->paused = true;
	bufferevent_disable(ws->bev, EV_READ);
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	evtimer_add(ws->resume, &tv);
}

/* The 101 and the Sec-WebSocket-Key of r's request into out. */
static int write_101(struct fe_req *r, struct evbuffer *out, const char *protocol)
{
	const char *key = evhttp_find_header(evhttp_request_get_input_headers(r->req), "Sec-WebSocket-Key");
	char accept[FE_WS_ACCEPT_BUF];
	fe_ws_accept_value(key, strlen(key), accept);
	return evbuffer_add_printf(out,
				   "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
				   "Sec-WebSocket-Accept: %s\r\n%s%s%s\r\n",
				   accept, protocol ? "Sec-WebSocket-Protocol: " : "", protocol ? protocol : "",
				   protocol ? "\r\n" : "") < 0
		       ? -1
		       : 0;
}

struct fe_ws *fe_ws_upgrade(struct fe_req *r, const char *protocol, const struct fe_ws_limits *lim,
			    const struct fe_ws_ops *ops, void *arg)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(r->req);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
	struct fe_ws *ws = bev ? calloc(1, sizeof(*ws)) : NULL;
	struct wslay_event_callbacks cbs = { .recv_callback = recv_cb, .send_callback = send_cb,
					     .on_frame_recv_start_callback = on_frame_start,
					     .on_msg_recv_callback = on_msg };
	if (ws) {
		ws->defer = event_new(r->w->base, -1, 0, on_defer, ws);
		ws->ping = event_new(r->w->base, -1, EV_PERSIST, on_ping, ws);
		ws->resume = evtimer_new(r->w->base, on_resume, ws);
		ws->close_wait = evtimer_new(r->w->base, on_close_wait, ws);
	}
	if (!ws || !ws->defer || !ws->ping || !ws->resume || !ws->close_wait ||
	    wslay_event_context_server_init(&ws->ctx, &cbs, ws) != 0 ||
	    write_101(r, bufferevent_get_output(bev), protocol) < 0) {
		if (ws) {
			if (ws->ctx)
				wslay_event_context_free(ws->ctx);
			event_free(ws->defer);
			event_free(ws->ping);
			event_free(ws->resume);
			event_free(ws->close_wait);
			free(ws);
		}
		fe_reply_error(r, 500, "internal", "out of memory");
		return NULL;
	}
	ws->w = r->w;
	ws->evcon = evcon;
	ws->bev = bev;
	ws->lim = *lim;
	snprintf(ws->tenant, sizeof(ws->tenant), "%s", lim->tenant ? lim->tenant : "");
	ws->ops = *ops;
	ws->arg = arg;
	ws->code = 1006;
	wslay_event_config_set_max_recv_msg_length(ws->ctx, lim->max_message);
	/* The request is over as far as evhttp and the pipeline know; its
	 * connection is ours from here. */
	if (!fe_conn_upgrade(r, gone, ws))
		evhttp_connection_set_closecb(evcon, on_evcon_close, ws);
	r->replied = true;
	fe_metrics_request(r->w->app->metrics, r->m.route ? r->m.route->id : FE_ROUTE_NONE, 101,
			   fe_now_us() - r->t0_us);
	fe_req_unref(r);

	bufferevent_setcb(bev, on_read, on_write, on_event, ws);
	bufferevent_setwatermark(bev, EV_READ, 0, READ_HIGH_WATER);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	struct timeval idle = { (time_t)(lim->idle_ms / 1000), (suseconds_t)(lim->idle_ms % 1000) * 1000 };
	struct timeval wto = idle;
	bufferevent_set_timeouts(bev, &idle, &wto);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	struct timeval ping = { (time_t)(lim->ping_ms / 1000), (suseconds_t)(lim->ping_ms % 1000) * 1000 };
	evtimer_add(ws->ping, &ping);
	/* Frames that came right behind the head are already buffered. */
	if (evbuffer_get_length(bufferevent_get_input(bev)) > 0)
		schedule(ws);
	return ws;
}
