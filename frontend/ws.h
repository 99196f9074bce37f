/* WebSocket (RFC 6455) server connections over evhttp: libevent 2.1's
 * evhttp has none, so a request that asks for an upgrade is answered here
 * with our own 101 written on its connection's bufferevent, which this file
 * then drives with its own callbacks and wslay's event API (framing,
 * masking, control frames, the close handshake). Generic: nothing here
 * knows about kernels (kernel_channels.c is its user).
 *
 * The evhttp connection is never answered through evhttp again and is
 * freed with evhttp_connection_free when the WebSocket ends; the
 * connection guard (conn.h) keeps counting it until then. Limits: a
 * message larger than max_message is refused (1009, by wslay), a text
 * message that is not UTF-8 too (1007), a client that lets more than
 * max_output bytes pile up unread is dropped, one silent for idle_ms is
 * dropped (it is pinged every ping_ms). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frontend/server_internal.h"

#define FE_WS_ACCEPT_BUF 29 /* base64 of a SHA-1, and its NUL */

/* Close codes used by the callers. */
#define FE_WS_NORMAL 1000
#define FE_WS_GOING_AWAY 1001
#define FE_WS_INVALID_DATA 1007
#define FE_WS_POLICY 1008
#define FE_WS_TOO_BIG 1009
#define FE_WS_INTERNAL 1011

/* ---------------------------------------------------------------- pure */

/* Sec-WebSocket-Accept for the client's Sec-WebSocket-Key key[0..len):
 * base64(SHA-1(key + the RFC's GUID)). */
void fe_ws_accept_value(const char *key, size_t len, char out[FE_WS_ACCEPT_BUF]);
/* key is a Sec-WebSocket-Key: base64 of exactly 16 bytes. */
bool fe_ws_key_valid(const char *key);
/* list (a header value: tokens separated by commas and blanks) holds
 * token, compared without case. */
bool fe_ws_token_in(const char *list, const char *token);

/* ------------------------------------------------------------ sessions */

struct fe_ws;

struct fe_ws_ops {
	/* A whole message from the client (text: UTF-8, checked). data is
	 * borrowed for the call. The callee may call fe_ws_send, fe_ws_close
	 * and fe_ws_pause from here. */
	void (*on_message)(void *arg, bool binary, const uint8_t *data, size_t len);
	/* The WebSocket and its connection are gone (closed by either side,
	 * dropped, or freed with the server): once, and ws is freed right
	 * after; code is the close code sent or received, 1006 when none. */
	void (*on_closed)(void *arg, uint16_t code);
};

struct fe_ws_limits {
	size_t max_message; /* bytes of one received message */
	size_t max_output;  /* bytes queued to the client, unread */
	uint32_t ping_ms;   /* a ping to the client this often */
	uint32_t idle_ms;   /* nothing read from the client this long: dropped */
	/* Whose share of the process's WebSocket budget (wsbudget.h) the
	 * session's unread output and unfinished message are charged to. */
	const char *tenant;
};

/* Checks that r (a GET) asks for a WebSocket: Upgrade: websocket,
 * Connection: upgrade, Sec-WebSocket-Version 13 and a valid key. On
 * success returns 0 and *chosen = the index into protocols (nprot
 * entries, in the server's order of preference) of the first one the
 * client offers in Sec-WebSocket-Protocol, -1 when none. Else answers r
 * (400, or 426 with Sec-WebSocket-Version: 13) and returns -1. */
int fe_ws_check_request(struct fe_req *r, const char *const *protocols, int nprot, int *chosen);

/* Answers r with 101 Switching Protocols (protocol: the chosen
 * subprotocol or NULL) and makes its connection a WebSocket: r is done
 * (its reference released) and ops get the session's events with arg.
 * NULL when that failed: r was answered (500). */
struct fe_ws *fe_ws_upgrade(struct fe_req *r, const char *protocol, const struct fe_ws_limits *lim,
			    const struct fe_ws_ops *ops, void *arg);

/* Queues one message (copied). -1 when the session is closing, or when
 * the client has more than max_output unread: it is then dropped (its
 * on_closed follows, from the loop). */
int fe_ws_send(struct fe_ws *ws, bool binary, const void *data, size_t len);
/* Starts the close handshake with code and reason (at most 120 bytes);
 * the connection ends when the client answers, or after 5 s. Idempotent. */
void fe_ws_close(struct fe_ws *ws, uint16_t code, const char *reason);
/* Reads nothing more from the client for ms (rate limits): messages
 * already received are held, not dropped. */
void fe_ws_pause(struct fe_ws *ws, uint64_t ms);
/* Reads nothing from the client until fe_ws_release (a kernel that is not
 * running yet): what it sends waits in the socket, under TCP's
 * back-pressure, not in our memory. */
void fe_ws_hold(struct fe_ws *ws);
void fe_ws_release(struct fe_ws *ws);
