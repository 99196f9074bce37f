/* Kernel channels (kernel_channels.h).
 *
 * Lifetimes: a session (struct kchan) lives from its upgrade until its
 * WebSocket is gone and no Redis reply for it is pending (refs); a
 * watcher lives until removed, but is only unlinked and freed outside a
 * dispatch (kdispatch), so that a watcher's callback may remove any
 * watcher, itself included.
 *
 * Rate limits per WebSocket: KCHAN_MSG_RATE messages a second (burst
 * KCHAN_MSG_BURST) and KCHAN_BYTE_RATE bytes a second (burst
 * KCHAN_BYTE_BURST). A client ahead of them is not dropped: reading from
 * it pauses until it is within them again (TCP back-pressure does the
 * rest). */
#include "frontend/kernel_channels.h"

#include <hiredis/hiredis.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kernel_wire.h"
#include "common/log.h"
#include "common/queue.h"
#include "frontend/auth.h"
#include "frontend/lograte.h"
#include "frontend/ws.h"
#include "frontend/wsbudget.h"

#define KOUT_PREFIX "gavel:kout:"
#define KCHAN_PING_MS 30000
#define KCHAN_IDLE_MS 95000      /* > three pings unanswered */
#define KCHAN_WAIT_MS 250        /* a queued kernel: how often to try the open again */
/* How often a WebSocket's key is asked again: a revoked or expired key,
 * or a disabled tenant, ends it within this and one lookup. */
#define KCHAN_RECHECK_MS 10000
#define KCHAN_OUTPUT_MAX (64u * 1024 * 1024)
#define KCHAN_MSG_RATE 100.0
#define KCHAN_MSG_BURST 400.0
#define KCHAN_BYTE_RATE (16.0 * 1024 * 1024)
#define KCHAN_BYTE_BURST (32.0 * 1024 * 1024)
#define V1_PROTOCOL "v1.kernel.websocket.jupyter.org"

static struct fe_lograte kout_bad_rate;

int fe_kin_push(struct fe_worker *w, const char *tenant, const char *kid, enum gv_kin_kind kind,
		const char *header, size_t hn, const void *payload, size_t pn, fe_redis_cb cb, void *arg,
		struct gv_err *err)
{
	char *el = malloc(hn + pn + 1);
	if (!el)
		return gv_err_errno(err, "malloc");
	memcpy(el, header, hn);
	if (pn)
		memcpy(el + hn, payload, pn);
	struct gv_kin_args a;
	int rc = gv_kin_push_args(&a, tenant, kid, kind, el, hn + pn) < 0
			 ? gv_err_set(err, GV_EINVAL, "kernel id or tenant too long")
			 : fe_redis_command(w->redis, cb, arg, a.argc, a.argv, a.lens, err);
	free(el); /* hiredis copied it */
	return rc;
}

void fe_kin_drop(struct fe_worker *w, const char *tenant, const char *kid)
{
	struct gv_kin_args a;
	struct gv_err err;
	if (gv_kin_drop_args(&a, tenant, kid) < 0 ||
	    fe_redis_command(w->redis, NULL, NULL, a.argc, a.argv, a.lens, &err) < 0)
		gv_warn(NULL, "kernel %s: its command list was not deleted", kid);
}

/* ------------------------------------------------------------ watchers */

struct fe_kwatch {
	struct fe_worker *w;
	struct fe_kwatch *next;
	char kid[FE_KERNEL_ID_BUF];
	fe_kwatch_fn fn;
	void *arg;
	bool dead;
};

static void kout_channel(char *buf, size_t size, const char *kid)
{
	snprintf(buf, size, KOUT_PREFIX "%s", kid);
}

struct fe_kwatch *fe_kwatch_add(struct fe_worker *w, const char *kid, fe_kwatch_fn fn, void *arg)
{
	char ch[sizeof(KOUT_PREFIX) + FE_KERNEL_ID_BUF];
	struct gv_err err;
	if (!gv_kernel_id_valid(kid))
		return NULL;
	struct fe_kwatch *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	kout_channel(ch, sizeof(ch), kid);
	if (fe_redis_subscribe(w->redis, ch, &err) < 0) {
		gv_warn(NULL, "kernel %s: subscribe: %s", kid, err.msg);
		free(k);
		return NULL;
	}
	k->w = w;
	memcpy(k->kid, kid, FE_KERNEL_ID_BUF);
	k->fn = fn;
	k->arg = arg;
	k->next = w->kwatch;
	w->kwatch = k;
	return k;
}

static void sweep(struct fe_worker *w)
{
	for (struct fe_kwatch **pp = &w->kwatch; *pp;) {
		struct fe_kwatch *k = *pp;
		if (k->dead) {
			*pp = k->next;
			free(k);
		} else {
			pp = &k->next;
		}
	}
}

void fe_kwatch_remove(struct fe_kwatch *k)
{
	if (!k || k->dead)
		return;
	char ch[sizeof(KOUT_PREFIX) + FE_KERNEL_ID_BUF];
	kout_channel(ch, sizeof(ch), k->kid);
	fe_redis_unsubscribe(k->w->redis, ch);
	k->dead = true;
	if (k->w->kdispatch == 0)
		sweep(k->w);
}

void fe_kernel_on_kout(struct fe_worker *w, const char *kid, const uint8_t *payload, size_t len)
{
	struct fe_kout m;
	if (!gv_kernel_id_valid(kid))
		return;
	if (fe_kout_parse(payload, len, &m) < 0) {
		/* The executor checks every frame before it publishes: this is
		 * a bug or someone else writing the channel. */
		uint64_t dropped;
		if (fe_lograte_allow(&kout_bad_rate, fe_now_ms(), &dropped))
			gv_warn(NULL, "kernel %s: dropped a malformed gavel:kout message of %zu bytes (%llu more)", kid,
				len, (unsigned long long)dropped);
		return;
	}
	w->kdispatch++;
	/* Watchers added during the dispatch go to the head of the list and
	 * are not reached: they did not exist when the message came. */
	for (struct fe_kwatch *k = w->kwatch; k; k = k->next)
		if (!k->dead && !strcmp(k->kid, kid))
			k->fn(k->arg, &m, payload);
	if (--w->kdispatch == 0)
		sweep(w);
}

/* ------------------------------------------------------------ sessions */

struct kchan {
	struct fe_worker *w;
	char kid[FE_KERNEL_ID_BUF];
	char tenant[40];
	bool live;             /* its open is in the kernel's list: the kernel runs */
	bool joined;           /* counted in the per-kernel connection cap */
	struct event *wait;    /* not live yet: the next try of the open */
	struct event *recheck; /* the key asked again */
	unsigned char key_hash[TENANT_KEY_HASH_LEN];
	uint64_t conn;
	enum fe_kframing framing;
	struct fe_ws *ws;      /* NULL once gone */
	struct fe_kwatch *watch;
	struct event *tick;
	int refs;
	double msg_tokens, byte_tokens;
	uint64_t refill_ms;
};

static void kchan_unref(struct kchan *c)
{
	if (--c->refs > 0)
		return;
	if (c->tick)
		event_free(c->tick);
	if (c->wait)
		event_free(c->wait);
	if (c->recheck)
		event_free(c->recheck);
	if (c->joined)
		fe_wsbudget_kernel_leave(c->w->app->wsbudget, c->kid);
	free(c);
}

/* Why a push was refused, for the client's close frame; NULL when it was
 * not. */
static const char *refusal(long long result)
{
	switch (result) {
	case GV_KIN_FULL: return "the kernel is not reading its input";
	case GV_KIN_TENANT_FULL: return "your kernels are not reading their input";
	case GV_KIN_GLOBAL_FULL: return "the service holds too much kernel input: try again later";
	case GV_KIN_NOT_RUNNING: return "the kernel is not running";
	default: return result < 0 ? "the kernel's input was refused" : NULL;
	}
}

/* The reply to a push of one of c's client messages. */
static void on_msg_pushed(void *arg, redisReply *reply)
{
	struct kchan *c = arg;
	if (c->ws) {
		const char *why;
		if (!reply || reply->type == REDIS_REPLY_ERROR) {
			gv_warn(NULL, "kernel %s: push: %s", c->kid, reply ? reply->str : "redis unavailable");
			fe_ws_close(c->ws, FE_WS_INTERNAL, "the kernel cannot be reached");
		} else if (reply->type == REDIS_REPLY_INTEGER && (why = refusal(reply->integer))) {
			fe_ws_close(c->ws, reply->integer == GV_KIN_GLOBAL_FULL ? FE_WS_INTERNAL : FE_WS_POLICY, why);
		}
	}
	kchan_unref(c);
}

/* A push of a control element (ping, close) for c. */
static void push_control(struct kchan *c, const char *hdr, size_t hn)
{
	struct gv_err err;
	if (hn == 0 ||
	    fe_kin_push(c->w, c->tenant, c->kid, GV_KIN_CONNECTION, hdr, hn, NULL, 0, NULL, NULL, &err) < 0)
		gv_warn(NULL, "kernel %s: push: %s", c->kid, hn ? err.msg : "header");
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct kchan *c = arg;
	char hdr[FE_KIN_HEADER_MAX];
	if (c->ws && c->live)
		push_control(c, hdr, fe_kin_ping(hdr, sizeof(hdr), c->conn));
}

static void try_open(struct kchan *c);

/* The reply to c's open: live (the client's messages are read from now),
 * or the kernel is still queued (tried again), or refused. */
static void on_open_pushed(void *arg, redisReply *reply)
{
	struct kchan *c = arg;
	if (c->ws) {
		if (!reply || reply->type == REDIS_REPLY_ERROR || reply->type != REDIS_REPLY_INTEGER) {
			gv_warn(NULL, "kernel %s: open: %s", c->kid,
				reply && reply->type == REDIS_REPLY_ERROR ? reply->str : "redis unavailable");
			fe_ws_close(c->ws, FE_WS_INTERNAL, "the kernel cannot be reached");
		} else if (reply->integer == GV_KIN_NOT_RUNNING) {
			struct timeval tv = { 0, KCHAN_WAIT_MS * 1000 };
			evtimer_add(c->wait, &tv);
		} else if (reply->integer < 0) {
			fe_ws_close(c->ws, FE_WS_POLICY, refusal(reply->integer));
		} else {
			c->live = true;
			fe_ws_release(c->ws);
			struct timeval tv = { KCHAN_PING_MS / 1000, 0 };
			evtimer_add(c->tick, &tv);
		}
	}
	kchan_unref(c);
}

/* Pushes c's open: accepted only once the kernel runs, so that nothing a
 * client sends to a queued kernel is held anywhere but its own socket. */
static void try_open(struct kchan *c)
{
	char hdr[FE_KIN_HEADER_MAX];
	struct gv_err err;
	size_t hn = fe_kin_open(hdr, sizeof(hdr), c->conn, c->framing);
	c->refs++;
	if (hn == 0 || fe_kin_push(c->w, c->tenant, c->kid, GV_KIN_CONNECTION, hdr, hn, NULL, 0, on_open_pushed, c,
				   &err) < 0) {
		c->refs--;
		gv_warn(NULL, "kernel %s: open: %s", c->kid, hn ? err.msg : "header");
		fe_ws_close(c->ws, FE_WS_INTERNAL, "the kernel cannot be reached");
	}
}

static void on_rechecked(void *arg, enum fe_keycheck verdict)
{
	struct kchan *c = arg;
	if (c->ws && verdict == FE_KEY_REFUSED) {
		gv_info(NULL, "kernel %s: a WebSocket of tenant %s closed: its key no longer admits it", c->kid,
			c->tenant);
		fe_ws_close(c->ws, FE_WS_POLICY, "the API key was revoked or has expired, or the tenant is disabled");
	}
	kchan_unref(c);
}

static void on_recheck(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct kchan *c = arg;
	if (!c->ws)
		return;
	c->refs++;
	if (fe_key_recheck(c->w, c->key_hash, on_rechecked, c) < 0)
		c->refs--; /* the database is away: asked again next time */
}

static void on_wait(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct kchan *c = arg;
	if (c->ws)
		try_open(c);
}

/* Takes the tokens of one message of n bytes; returns how long reading
 * must pause (ms) to stay within the rates. */
static uint64_t rate_take(struct kchan *c, size_t n)
{
	uint64_t now = fe_now_ms();
	double dt = (double)(now - c->refill_ms) / 1000.0;
	c->refill_ms = now;
	c->msg_tokens += dt * KCHAN_MSG_RATE;
	c->byte_tokens += dt * KCHAN_BYTE_RATE;
	if (c->msg_tokens > KCHAN_MSG_BURST)
		c->msg_tokens = KCHAN_MSG_BURST;
	if (c->byte_tokens > KCHAN_BYTE_BURST)
		c->byte_tokens = KCHAN_BYTE_BURST;
	c->msg_tokens -= 1;
	c->byte_tokens -= (double)n;
	double wait_s = 0;
	if (c->msg_tokens < 0)
		wait_s = -c->msg_tokens / KCHAN_MSG_RATE;
	if (c->byte_tokens < 0 && -c->byte_tokens / KCHAN_BYTE_RATE > wait_s)
		wait_s = -c->byte_tokens / KCHAN_BYTE_RATE;
	return (uint64_t)(wait_s * 1000.0) + (wait_s > 0);
}

static void on_ws_message(void *arg, bool binary, const uint8_t *data, size_t len)
{
	struct kchan *c = arg;
	enum fe_kchannel ch;
	int ok;
	if (c->framing == FE_KFRAMING_V1) {
		if (!binary) {
			fe_ws_close(c->ws, FE_WS_POLICY, "v1.kernel.websocket.jupyter.org takes binary messages");
			return;
		}
		ok = fe_kmsg_v1_check(data, len, &ch);
	} else {
		ok = fe_kmsg_json_check(data, len, binary, &ch);
	}
	if (ok < 0) {
		fe_ws_close(c->ws, FE_WS_POLICY, "malformed message, or not on shell, control or stdin");
		return;
	}
	/* A legacy binary message is stored behind one \x00 byte (the
	 * README's json framing), which a text message never starts with. */
	size_t plen = len + (c->framing == FE_KFRAMING_JSON && binary);
	if (plen > FE_KMSG_MAX) {
		fe_ws_close(c->ws, FE_WS_TOO_BIG, "message too big");
		return;
	}
	char hdr[FE_KIN_HEADER_MAX + 1];
	size_t hn = fe_kin_msg(hdr, sizeof(hdr) - 1, c->conn, plen);
	if (plen != len)
		hdr[hn++] = '\0';
	struct gv_err err;
	c->refs++;
	if (hn == 0 || fe_kin_push(c->w, c->tenant, c->kid, GV_KIN_CONNECTION, hdr, hn, data, len, on_msg_pushed, c,
				   &err) < 0) {
		c->refs--;
		fe_ws_close(c->ws, FE_WS_INTERNAL, "the kernel cannot be reached");
		return;
	}
	uint64_t wait_ms = rate_take(c, len);
	if (wait_ms)
		fe_ws_pause(c->ws, wait_ms);
}

static void on_ws_closed(void *arg, uint16_t code)
{
	(void)code;
	struct kchan *c = arg;
	char hdr[FE_KIN_HEADER_MAX];
	c->ws = NULL;
	if (c->live)
		push_control(c, hdr, fe_kin_close(hdr, sizeof(hdr), c->conn));
	if (c->wait)
		evtimer_del(c->wait);
	if (c->recheck)
		evtimer_del(c->recheck);
	fe_kwatch_remove(c->watch);
	c->watch = NULL;
	if (c->tick)
		evtimer_del(c->tick);
	kchan_unref(c);
}

static void on_kout(void *arg, const struct fe_kout *m, const uint8_t *buf)
{
	struct kchan *c = arg;
	if (!c->ws)
		return;
	switch (m->kind) {
	case FE_KOUT_MSG:
		if (m->framing == c->framing && (m->conn == 0 || m->conn == c->conn))
			fe_ws_send(c->ws, m->binary, buf + m->off, m->len);
		break;
	case FE_KOUT_GONE: {
		char why[64];
		snprintf(why, sizeof(why), "kernel ended: %s", m->word);
		fe_ws_close(c->ws, FE_WS_NORMAL, why);
		break;
	}
	case FE_KOUT_STATE:
	case FE_KOUT_RESTARTED:
		/* A live channel: the kernel's own iopub status messages say it.
		 * A queued one: its kernel now runs (the executor says its state
		 * once it holds the model), so the open is tried now, not at the
		 * next retry: a class's kernels answer sooner. */
		if (!c->live && evtimer_pending(c->wait, NULL)) {
			evtimer_del(c->wait);
			try_open(c);
		}
		break;
	}
}

void fe_kernel_channels_open(struct fe_req *r, const char *kid)
{
	static const char *const protocols[] = { V1_PROTOCOL };
	static const struct fe_ws_ops ops = { on_ws_message, on_ws_closed };
	int chosen;
	if (fe_ws_check_request(r, protocols, 1, &chosen) < 0)
		return;
	struct kchan *c = calloc(1, sizeof(*c));
	if (!c) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	uint64_t rnd;
	randombytes_buf(&rnd, sizeof(rnd));
	c->w = r->w;
	memcpy(c->kid, kid, FE_KERNEL_ID_BUF);
	c->conn = fe_kconn_from_random(rnd);
	c->framing = chosen == 0 ? FE_KFRAMING_V1 : FE_KFRAMING_JSON;
	c->refs = 1;
	c->msg_tokens = KCHAN_MSG_BURST;
	c->byte_tokens = KCHAN_BYTE_BURST;
	c->refill_ms = fe_now_ms();
	snprintf(c->tenant, sizeof(c->tenant), "%s", r->tenant_id);
	if (!fe_wsbudget_kernel_join(r->w->app->wsbudget, kid)) {
		kchan_unref(c);
		fe_reply_error(r, 503, "unavailable", "the kernel has as many WebSockets open as it may (%d)",
			       r->w->app->cfg->websockets_per_kernel);
		return;
	}
	c->joined = true;
	c->tick = event_new(r->w->base, -1, EV_PERSIST, on_tick, c);
	c->wait = evtimer_new(r->w->base, on_wait, c);
	c->recheck = event_new(r->w->base, -1, EV_PERSIST, on_recheck, c);
	memcpy(c->key_hash, r->key_hash, sizeof(c->key_hash));
	c->watch = c->tick && c->wait && c->recheck ? fe_kwatch_add(r->w, kid, on_kout, c) : NULL;
	if (!c->watch) {
		kchan_unref(c);
		fe_reply_error(r, 503, "unavailable", "the kernel's channel cannot be watched now");
		return;
	}
	struct fe_ws_limits lim = {
		/* json: a binary message gains one byte in kin */
		.max_message = FE_KMSG_MAX,
		.max_output = KCHAN_OUTPUT_MAX,
		.ping_ms = KCHAN_PING_MS,
		.idle_ms = KCHAN_IDLE_MS,
		.tenant = r->tenant_id,
	};
	c->ws = fe_ws_upgrade(r, chosen == 0 ? V1_PROTOCOL : NULL, &lim, &ops, c);
	if (!c->ws) {
		fe_kwatch_remove(c->watch);
		kchan_unref(c);
		return;
	}
	fe_ws_hold(c->ws);
	struct timeval rtv = { KCHAN_RECHECK_MS / 1000, 0 };
	evtimer_add(c->recheck, &rtv);
	try_open(c);
}
