/* Connection guard (see conn.h for the libevent hooks it stands on).
 *
 * A connection's life, one phase at a time:
 *   HEAD  from accept (or the end of the previous reply's keep-alive wait)
 *         until the empty line ending the request head: header_timeout for
 *         the whole head, from accept or from its first byte;
 *   HOLD  the head is complete, a write route's key is being checked:
 *         reading stops, evhttp has not seen the head's end yet;
 *   BODY  evhttp reads the body, within the route's limit: body_timeout
 *         (upload_timeout for problem packages) for the whole body;
 *   BUSY  the request is with its handler and its reply: no deadline of
 *         ours (request_timeout, evhttp's inactivity timeout, still holds);
 *   IDLE  keep-alive between requests: request_timeout.
 *   UPGRADED  no longer HTTP (a WebSocket, ws.c): the guard only counts
 *         it and reports its end; the new owner keeps its own deadlines.
 * A deadline passed closes the connection (408 when it was sending).
 *
 * Accounting: the process-wide count and the per-address table are taken
 * right after accept (in the same loop iteration, before any byte is read)
 * and given back in the connection's close callback.
 * Over max_connections, the accepting worker closes its own oldest
 * connection that has no request in progress (HEAD or IDLE) to make room,
 * else the new one; over the per-address cap, the new one. Addresses are
 * counted per IPv4 address and per IPv6 /64 (one host's usual share).
 *
 * Behind a reverse proxy every client has the proxy's address, which
 * accept is all the guard knows. A connection from a trusted proxy
 * (frontend.trusted_proxies, client_addr.h) is therefore counted only
 * against max_connections at accept; once its request's head is parsed,
 * the request is counted under the client the proxy names, for as long
 * as the request lasts (a WebSocket: as long as the connection), and one
 * over max_connections_per_address is answered 503. An L7 proxy opens a
 * connection to us per request in flight (idle client connections stay
 * at the proxy), so this caps what one client holds here; what a client
 * holds at the proxy is the proxy's to cap.
 *
 * With frontend.proxy_protocol, a trusted proxy is a TCP load balancer
 * that starts each connection with a PROXY v1 line naming the client
 * (PROXY phase, before HEAD: evhttp is held off by the read watermark
 * until the line is read and drained). The connection is then that
 * client's from the start and counted under it like any other; a
 * connection from such a proxy without a valid line is closed (400). */
#include "frontend/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "common/log.h"
#include "frontend/client_addr.h"
#include "frontend/config.h"
#include "frontend/lograte.h"
#include "frontend/metrics.h"
#include "frontend/reqscan.h"
#include "frontend/router.h"
#include "frontend/server_internal.h"

/* Descriptors kept for everything but client connections: listeners,
 * PostgreSQL and Redis connections of each worker, logs, the event loops'
 * own. */
#define RESERVED_FDS_BASE 64
#define RESERVED_FDS_PER_THREAD 8
/* The descriptor table is indexed by fd; above this, connections are
 * served without the guard's per-request hooks (their deadlines and caps
 * still hold). */
#define BY_FD_MAX (1u << 22)
/* Accept errors (EMFILE, ENFILE, ENOBUFS): the listener pauses this long
 * instead of retrying at once, which spins the loop. */
#define ACCEPT_PAUSE_MS 100

enum conn_phase { PHASE_PROXY, PHASE_HEAD, PHASE_HOLD, PHASE_BODY, PHASE_BUSY, PHASE_IDLE, PHASE_UPGRADED };

struct addr_key {
	unsigned char b[17]; /* family tag, then 4 or 8 bytes of address, zeros */
};

struct addr_slot {
	struct addr_key key;
	int count; /* 0: empty */
};

/* Open addressing, linear probing, backward-shift deletion; never more
 * entries than connections, and at least twice as many slots. */
struct fe_addrtab {
	pthread_mutex_t mu;
	struct addr_slot *slots;
	size_t mask;
};

struct hold;

struct fe_conn {
	struct fe_worker *w;
	struct fe_conn *prev, *next; /* the worker's list, oldest first */
	struct bufferevent *bev;
	struct evhttp_connection *evcon; /* once set up */
	struct evbuffer_cb_entry *input_cb;
	struct event *timer;
	int fd;                          /* registered in app->by_fd when >= 0 */
	bool set_up;
	bool counted;                    /* in metrics->conns_open (admitted) */
	bool addr_counted;
	bool want_close;                 /* closed from the timer (not from a buffer callback) */
	enum conn_phase phase;
	uint64_t deadline_ms;            /* 0: none */
	int timeout_status;              /* 408 when the deadline passes while sending */
	struct addr_key addr;
	char addr_text[INET6_ADDRSTRLEN];
	struct fe_reqscan scan;
	struct hold *hold;               /* the key check in flight (HOLD) */
	struct fe_req *req;              /* the request in BUSY */
	bool upload;                     /* the held request is a problem upload */
	bool preauth_route;
	fe_conn_gone_fn gone;            /* UPGRADED: told of the end */
	void *gone_arg;
	bool from_proxy;                 /* the peer is a trusted proxy */
	bool proxied;                    /* a PROXY line named the client: */
	struct sockaddr_storage client;  /* ... this one */
	struct addr_key fwd;             /* the client it named, while counted */
	bool fwd_counted;
	bool fwd_over;                   /* ... over max_connections_per_address */
};

struct hold {
	struct fe_conn *c; /* NULL once the connection is gone */
};

static struct fe_lograte refused_rate, accept_rate, timeout_rate;

static uint64_t now_ms(void)
{
	return fe_now_ms();
}

/* ------------------------------------------------------- address table */

static size_t addr_hash(const struct addr_key *k)
{
	/* FNV-1a: the table is private and bounded, collisions cost probes. */
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < sizeof(k->b); i++) {
		h ^= k->b[i];
		h *= 1099511628211ull;
	}
	return (size_t)h;
}

/* Adds delta (+1/-1) to key's count; returns the new count. */
static int addr_add(struct fe_addrtab *t, const struct addr_key *k, int delta)
{
	pthread_mutex_lock(&t->mu);
	size_t i = addr_hash(k) & t->mask, probes = 0;
	while (t->slots[i].count > 0 && memcmp(&t->slots[i].key, k, sizeof(*k)) && probes++ <= t->mask)
		i = (i + 1) & t->mask;
	int n;
	if (t->slots[i].count == 0 || probes > t->mask) {
		/* Sized for every admitted connection plus one being decided
		 * per worker, so never full; if it were, over the cap. */
		if (delta < 0 || probes > t->mask) {
			pthread_mutex_unlock(&t->mu);
			return delta < 0 ? 0 : INT_MAX;
		}
		t->slots[i].key = *k;
	}
	n = t->slots[i].count += delta;
	if (n <= 0) {
		/* Backward shift: pull later entries of the run into the hole
		 * so that lookups never stop early. */
		t->slots[i].count = 0;
		size_t hole = i, j = i;
		for (;;) {
			j = (j + 1) & t->mask;
			if (t->slots[j].count == 0)
				break;
			size_t home = addr_hash(&t->slots[j].key) & t->mask;
			/* j's entry may move to hole when home is not in (hole, j]. */
			bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
			if (stays)
				continue;
			t->slots[hole] = t->slots[j];
			t->slots[j].count = 0;
			hole = j;
		}
		n = 0;
	}
	pthread_mutex_unlock(&t->mu);
	return n;
}

static void addr_of(const struct sockaddr *sa, struct addr_key *k, char *text, size_t text_size)
{
	memset(k, 0, sizeof(*k));
	text[0] = '\0';
	if (!sa)
		return;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		k->b[0] = 4;
		memcpy(k->b + 1, &in->sin_addr, 4);
		inet_ntop(AF_INET, &in->sin_addr, text, (socklen_t)text_size);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, text, (socklen_t)text_size);
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			k->b[0] = 4;
			memcpy(k->b + 1, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			k->b[0] = 6;
			memcpy(k->b + 1, in6->sin6_addr.s6_addr, 8);
		}
	}
}

/* ------------------------------------------------------------- set-up */

int fe_conn_init(struct fe_app *app, struct gv_err *err)
{
	const struct fe_config *cfg = app->cfg;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return gv_err_errno(err, "getrlimit(RLIMIT_NOFILE)");
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			gv_warn(NULL, "setrlimit(RLIMIT_NOFILE, %llu): %s", (unsigned long long)rl.rlim_max,
				strerror(errno));
			rl.rlim_cur = was;
		}
	}
	unsigned long long nofile = rl.rlim_cur == RLIM_INFINITY ? 1ull << 30 : (unsigned long long)rl.rlim_cur;
	unsigned long long reserved = RESERVED_FDS_BASE + (unsigned long long)RESERVED_FDS_PER_THREAD * (unsigned)cfg->threads;
	app->conn_max = cfg->max_connections;
	if (nofile <= reserved + 16) {
		return gv_err_set(err, GV_ECONFIG, "RLIMIT_NOFILE is %llu: too low to serve (at least %llu needed)",
				  nofile, reserved + 16);
	}
	if ((unsigned long long)app->conn_max > nofile - reserved) {
		gv_warn(NULL, "max_connections %d lowered to %llu: RLIMIT_NOFILE is %llu (raise the hard limit, "
			"LimitNOFILE= in the unit)", app->conn_max, nofile - reserved, nofile);
		app->conn_max = (int)(nofile - reserved);
	}
	app->conn_max_per_addr = cfg->max_connections_per_address;
	gv_info(NULL, "connections: at most %d, %d per client address%s; descriptors %llu", app->conn_max,
		app->conn_max_per_addr, app->conn_max_per_addr ? "" : " (no cap)", nofile);

	app->by_fd_len = nofile < BY_FD_MAX ? (size_t)nofile : BY_FD_MAX;
	/* calloc of this size maps zero pages: only the slots of descriptors
	 * in use are ever touched. */
	app->by_fd = calloc(app->by_fd_len, sizeof(*app->by_fd));
	struct fe_addrtab *t = calloc(1, sizeof(*t));
	size_t cap = 64;
	while (cap < ((size_t)app->conn_max + (size_t)cfg->threads) * 2 + 16)
		cap <<= 1;
	if (t)
		t->slots = calloc(cap, sizeof(*t->slots));
	if (!app->by_fd || !t || !t->slots) {
		if (t)
			free(t->slots);
		free(t);
		free(app->by_fd);
		app->by_fd = NULL;
		return gv_err_set(err, ENOMEM, "connection tables: out of memory");
	}
	t->mask = cap - 1;
	pthread_mutex_init(&t->mu, NULL);
	app->addrs = t;
	fe_lograte_libevent();
	return 0;
}

void fe_conn_free(struct fe_app *app)
{
	if (app->addrs) {
		pthread_mutex_destroy(&app->addrs->mu);
		free(app->addrs->slots);
		free(app->addrs);
		app->addrs = NULL;
	}
	free(app->by_fd);
	app->by_fd = NULL;
}

/* ------------------------------------------------------------ helpers */

static void set_deadline(struct fe_conn *c, uint64_t ms, int status)
{
	c->deadline_ms = now_ms() + ms;
	c->timeout_status = status;
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	evtimer_add(c->timer, &tv);
}

static void clear_deadline(struct fe_conn *c)
{
	c->deadline_ms = 0;
	evtimer_del(c->timer);
}

/* Runs the timer callback at once (from the loop, not from inside a
 * buffer callback where freeing the connection is not safe). */
static void kick(struct fe_conn *c)
{
	event_active(c->timer, EV_TIMEOUT, 1);
}

/* A fixed answer written straight to the socket before the connection is
 * closed: it has no evhttp request to answer through (refused at accept,
 * a deadline passed mid-head). Best effort: a full socket buffer drops it. */
static void raw_reply(struct fe_conn *c, int status, const char *code, const char *msg)
{
	int fd = bufferevent_getfd(c->bev);
	if (fd < 0)
		return;
	char body[256], buf[512];
	int bn = snprintf(body, sizeof(body), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n", code, msg);
	if (bn < 0 || (size_t)bn >= sizeof(body))
		return;
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
			 "Connection: close\r\n%s\r\n%s",
			 status, status == 503 ? "Service Unavailable" : status == 400 ? "Bad Request" : "Request Timeout", bn,
			 status == 503 ? "Retry-After: 1\r\n" : "", body);
	if (n > 0 && (size_t)n < sizeof(buf))
		(void)!send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void log_limited(struct fe_lograte *lr, const char *what, const struct fe_conn *c)
{
	uint64_t dropped;
	if (fe_lograte_allow(lr, now_ms(), &dropped))
		gv_warn(NULL, "%s (client %s; %llu more like it in the last interval)", what,
			c && c->addr_text[0] ? c->addr_text : "?", (unsigned long long)dropped);
}

/* Closes the connection through evhttp; its close callback frees c. */
static void close_conn(struct fe_conn *c)
{
	if (c->evcon)
		evhttp_connection_free(c->evcon);
}

/* ------------------------------------------------------- close and free */

static void unlink_conn(struct fe_conn *c)
{
	struct fe_worker *w = c->w;
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns_head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		w->conns_tail = c->prev;
	c->prev = c->next = NULL;
}

/* The forwarded client's count, given back when its request ends. */
static void fwd_release(struct fe_conn *c)
{
	if (c->fwd_counted)
		addr_add(c->w->app->addrs, &c->fwd, -1);
	c->fwd_counted = false;
	c->fwd_over = false;
}

static void conn_release(struct fe_conn *c)
{
	struct fe_app *app = c->w->app;
	fwd_release(c);
	if (c->req) {
		struct fe_req *r = c->req;
		c->req = NULL;
		r->conn = NULL;
		fe_req_conn_closed(r);
	}
	if (c->hold) {
		c->hold->c = NULL;
		c->hold = NULL;
	}
	if (c->gone) {
		fe_conn_gone_fn fn = c->gone;
		c->gone = NULL;
		fn(c->gone_arg);
	}
	if (c->fd >= 0 && (size_t)c->fd < app->by_fd_len)
		atomic_store_explicit(&app->by_fd[c->fd], NULL, memory_order_relaxed);
	if (c->addr_counted)
		addr_add(app->addrs, &c->addr, -1);
	if (c->counted)
		atomic_fetch_sub(&app->metrics->conns_open, 1);
	if (c->input_cb && c->bev)
		evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->input_cb);
	unlink_conn(c);
	event_free(c->timer);
	free(c);
}

static void on_evcon_close(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	conn_release(arg);
}

/* ----------------------------------------------------- the head's end */

static void start_body(struct fe_conn *c, uint64_t limit, bool upload)
{
	const struct fe_config *cfg = c->w->app->cfg;
	evhttp_connection_set_max_body_size(c->evcon, (ev_ssize_t)limit);
	c->phase = PHASE_BODY;
	set_deadline(c, upload ? cfg->upload_timeout_ms : cfg->body_timeout_ms, 408);
}

static void on_key_checked(void *arg, bool ok)
{
	struct hold *h = arg;
	struct fe_conn *c = h->c;
	free(h);
	if (!c)
		return;
	c->hold = NULL;
	const struct fe_config *cfg = c->w->app->cfg;
	if (!ok)
		atomic_fetch_add(&c->w->app->metrics->preauth_refused, 1);
	bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
	if (c->phase != PHASE_HOLD)
		return;
	start_body(c, ok ? (c->upload ? cfg->max_problem_size : cfg->max_body_size) : FE_CONN_KEYLESS_BODY_MAX,
		   ok && c->upload);
	bufferevent_enable(c->bev, EV_READ);
	/* The head's end has waited in the input buffer since the hold: let
	 * evhttp parse it now, synchronously (a deferred run could land
	 * after evhttp handed the request over, in a state where a read
	 * callback aborts the process). */
	bufferevent_trigger(c->bev, EV_READ, 0);
}

/* The key of a raw query string (X-Auth-Token, else api_key, as auth.c
 * picks them), decoded into out; false when none fits. */
static bool query_key(const char *query, char *out, size_t size)
{
	static const char *const names[] = { "X-Auth-Token=", "api_key=" };
	for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
		size_t nl = strlen(names[n]);
		for (const char *p = query; p && *p;) {
			size_t len = strcspn(p, "&");
			if (len > nl && !strncmp(p, names[n], nl)) {
				char raw[TENANT_KEY_PRESENTED_MAX * 3 + 1];
				size_t vl = len - nl, dl = 0;
				if (vl >= sizeof(raw))
					return false;
				memcpy(raw, p + nl, vl);
				raw[vl] = '\0';
				char *dec = evhttp_uridecode(raw, 1, &dl);
				bool ok = dec && dl > 0 && dl < size && !memchr(dec, '\0', dl);
				if (ok)
					memcpy(out, dec, dl + 1);
				free(dec);
				return ok;
			}
			p += len;
			if (*p == '&')
				p++;
		}
	}
	return false;
}

/* The empty line ending the head was just seen, before evhttp parses it.
 * may_hold: evhttp has not been given the head's end yet (called from the
 * input callback, whose read trigger the hold suppresses). */
static void head_complete(struct fe_conn *c, bool may_hold)
{
	struct fe_worker *w = c->w;
	const struct fe_config *cfg = w->app->cfg;
	enum fe_method m;
	char path[FE_REQSCAN_LINE_MAX], query[FE_REQSCAN_LINE_MAX];
	struct fe_match match;
	bool write_route = false;
	c->upload = false;
	if (c->scan.bad_byte) {
		/* Never handed to evhttp: nothing of it is parsed or served. */
		bufferevent_setwatermark(c->bev, EV_READ, SIZE_MAX, 0);
		bufferevent_disable(c->bev, EV_READ);
		raw_reply(c, 400, "bad_request", "the request head holds a NUL or another control byte");
		c->want_close = true;
		kick(c);
		return;
	}
	if (fe_reqscan_target(&c->scan, &m, path, sizeof(path), query, sizeof(query)) &&
	    fe_route_match(m, path, &match) == FE_MATCH_OK && match.route->auth &&
	    (m == FE_M_POST || m == FE_M_PUT || m == FE_M_PATCH)) {
		write_route = true;
		c->upload = match.route->id == FE_ROUTE_V1_PROBLEMS_CREATE ||
			    match.route->id == FE_ROUTE_V1_PROBLEM_PUT;
	}
	if (!write_route) {
		start_body(c, FE_CONN_KEYLESS_BODY_MAX, false);
		return;
	}
	/* A header key, else one in the query string (taken there only for a
	 * tenant with browser_clients on: fe_key_check asks). */
	const char *key = fe_reqscan_key(&c->scan);
	char qkey[TENANT_KEY_PRESENTED_MAX + 1];
	bool in_query = false;
	if (!key[0] && query_key(query, qkey, sizeof(qkey))) {
		key = qkey;
		in_query = true;
	}
	if (!key[0] || !may_hold) {
		/* Without a key the handler answers 401 to a small body; a
		 * large one is refused unread. A pipelined request cannot wait
		 * for its key's check: it is treated as keyless. */
		start_body(c, FE_CONN_KEYLESS_BODY_MAX, false);
		return;
	}
	struct hold *h = calloc(1, sizeof(*h));
	if (!h) {
		start_body(c, FE_CONN_KEYLESS_BODY_MAX, false);
		return;
	}
	h->c = c;
	switch (fe_key_check(w, key, in_query, on_key_checked, h)) {
	case FE_KEY_OK:
		free(h);
		start_body(c, c->upload ? cfg->max_problem_size : cfg->max_body_size, c->upload);
		return;
	case FE_KEY_REFUSED:
		free(h);
		atomic_fetch_add(&w->app->metrics->preauth_refused, 1);
		start_body(c, FE_CONN_KEYLESS_BODY_MAX, false);
		return;
	case FE_KEY_PENDING:
		break;
	}
	/* Hold: no read callback for what is buffered (its low watermark is
	 * out of reach) and no more reading until the key's answer. The
	 * header deadline still runs. */
	c->hold = h;
	c->phase = PHASE_HOLD;
	bufferevent_setwatermark(c->bev, EV_READ, SIZE_MAX, 0);
	bufferevent_disable(c->bev, EV_READ);
}

/* Feeds buffered bytes [off, off+n) of the head to the scanner. */
static void scan_bytes(struct fe_conn *c, struct evbuffer *buf, size_t off, size_t n, bool may_hold)
{
	struct evbuffer_ptr pos;
	if (n == 0 || evbuffer_ptr_set(buf, &pos, off, EVBUFFER_PTR_SET) < 0)
		return;
	while (n > 0 && !fe_reqscan_done(&c->scan)) {
		struct evbuffer_iovec v[8];
		int k = evbuffer_peek(buf, (ev_ssize_t)n, &pos, v, 8);
		if (k <= 0)
			return;
		size_t took = 0;
		for (int i = 0; i < k && i < 8 && n > 0; i++) {
			size_t len = v[i].iov_len < n ? v[i].iov_len : n;
			fe_reqscan_feed(&c->scan, v[i].iov_base, len);
			took += len;
			n -= len;
			if (fe_reqscan_done(&c->scan))
				break;
		}
		if (evbuffer_ptr_set(buf, &pos, took, EVBUFFER_PTR_ADD) < 0)
			break;
	}
	if (fe_reqscan_done(&c->scan))
		head_complete(c, may_hold);
}

static void start_head(struct fe_conn *c)
{
	c->phase = PHASE_HEAD;
	fe_reqscan_reset(&c->scan);
	set_deadline(c, c->w->app->cfg->header_timeout_ms, 408);
}

static bool count_addr(struct fe_conn *c);

/* The PROXY phase: the line, once whole, is parsed and drained, and the
 * connection is the named client's from now on; then evhttp may read
 * (the watermark set at accept is lifted) what followed it, which the
 * scanner sees first. Anything else closes the connection. */
static void proxy_line(struct fe_conn *c, struct evbuffer *buf)
{
	char line[FE_PROXY_LINE_MAX];
	size_t len = evbuffer_get_length(buf);
	ev_ssize_t got = evbuffer_copyout(buf, line, len < sizeof(line) ? len : sizeof(line));
	const char *lf = got > 0 ? memchr(line, '\n', (size_t)got) : NULL;
	if (!lf) {
		if (len < sizeof(line))
			return; /* not whole yet; header_timeout runs */
	} else {
		size_t n = (size_t)(lf - line) + 1;
		struct sockaddr_storage client;
		int rc = fe_proxy_line_parse(line, n, &client);
		if (rc >= 0) {
			evbuffer_drain(buf, n);
			if (rc == 1) {
				c->proxied = true;
				c->client = client;
				addr_of((const struct sockaddr *)&client, &c->addr, c->addr_text, sizeof(c->addr_text));
				if (!count_addr(c))
					return;
			}
			c->phase = PHASE_HEAD;
			bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
			len = evbuffer_get_length(buf);
			if (len)
				scan_bytes(c, buf, 0, len, true);
			/* bufferevent's read callback runs evhttp's next, below
			 * the lifted watermark, for what is buffered. */
			return;
		}
	}
	bufferevent_disable(c->bev, EV_READ);
	log_limited(&refused_rate, "closed a connection: a trusted proxy's connection without a valid PROXY line", c);
	raw_reply(c, 400, "bad_request", "a PROXY protocol v1 line was expected");
	c->want_close = true;
	kick(c);
}

static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct fe_conn *c = arg;
	if (info->n_added == 0 || !c->set_up)
		return;
	size_t len = evbuffer_get_length(buf);
	size_t added = info->n_added < len ? info->n_added : len;
	switch (c->phase) {
	case PHASE_PROXY:
		proxy_line(c, buf);
		break;
	case PHASE_IDLE:
		start_head(c);
		/* fall through */
	case PHASE_HEAD:
		scan_bytes(c, buf, len - added, added, true);
		break;
	case PHASE_BUSY:
		/* Bytes sent while a reply is written (evhttp reads them for
		 * close detection, without a bound): a pipelined request fits
		 * in a head; more is not a client we serve. */
		if (len > c->w->app->cfg->max_header_size && !c->want_close) {
			c->want_close = true;
			kick(c);
		}
		break;
	case PHASE_HOLD:
	case PHASE_BODY:
	case PHASE_UPGRADED:
		break;
	}
}

/* ----------------------------------------------- accept, timer, evict */

/* The oldest connection of w that no request is using, other than keep. */
static struct fe_conn *victim(struct fe_worker *w, const struct fe_conn *keep)
{
	for (struct fe_conn *v = w->conns_head; v; v = v->next)
		if (v != keep && v->set_up && v->evcon && !v->want_close &&
		    (v->phase == PHASE_HEAD || v->phase == PHASE_IDLE))
			return v;
	return NULL;
}

static void refuse(struct fe_conn *c, atomic_ulong *counter, const char *why)
{
	atomic_fetch_add(counter, 1);
	log_limited(&refused_rate, why, c);
	raw_reply(c, 503, "too_many_connections", why);
	close_conn(c);
}

/* Counts c under the client its PROXY line named (c->addr) against
 * max_connections_per_address; false: over it, refused and being closed
 * (from the loop: this runs inside a buffer callback). */
static bool count_addr(struct fe_conn *c)
{
	struct fe_app *app = c->w->app;
	if (app->conn_max_per_addr <= 0 || !c->addr.b[0] || c->addr_counted)
		return true;
	c->addr_counted = true;
	if (addr_add(app->addrs, &c->addr, 1) > app->conn_max_per_addr) {
		bufferevent_disable(c->bev, EV_READ);
		atomic_fetch_add(&app->metrics->conns_refused_addr, 1);
		log_limited(&refused_rate, "connection refused: over max_connections_per_address", c);
		raw_reply(c, 503, "too_many_connections", "connection refused: over max_connections_per_address");
		c->want_close = true;
		kick(c);
		return false;
	}
	return true;
}

/* Right after evhttp took the accepted socket (same loop iteration, before
 * any of its bytes are read). */
static void set_up(struct fe_conn *c)
{
	struct fe_worker *w = c->w;
	struct fe_app *app = w->app;
	bufferevent_event_cb ecb = NULL;
	void *cbarg = NULL;
	bufferevent_getcb(c->bev, NULL, NULL, &ecb, &cbarg);
	if (!ecb || !cbarg) {
		/* evhttp failed to set the connection up and freed the
		 * bufferevent: ours was the last reference. */
		struct bufferevent *bev = c->bev;
		evbuffer_remove_cb_entry(bufferevent_get_input(bev), c->input_cb);
		c->input_cb = NULL;
		c->bev = NULL;
		conn_release(c);
		bufferevent_decref(bev);
		return;
	}
	c->evcon = cbarg;
	c->set_up = true;
	evhttp_connection_set_closecb(c->evcon, on_evcon_close, c);
	bufferevent_decref(c->bev);
	int fd = bufferevent_getfd(c->bev);
	if (fd >= 0 && (size_t)fd < app->by_fd_len) {
		c->fd = fd;
		atomic_store_explicit(&app->by_fd[fd], c, memory_order_relaxed);
	}
	const struct sockaddr *peer = evhttp_connection_get_addr(c->evcon);
	addr_of(peer, &c->addr, c->addr_text, sizeof(c->addr_text));
	c->from_proxy = fe_proxies_trust(&app->cfg->proxies, peer);
	start_head(c);
	if (c->from_proxy && app->cfg->proxies.proxy_protocol) {
		/* evhttp reads nothing until the PROXY line is drained. */
		c->phase = PHASE_PROXY;
		bufferevent_setwatermark(c->bev, EV_READ, SIZE_MAX, 0);
	}

	if (app->conn_max_per_addr > 0 && c->addr.b[0] && !c->from_proxy) {
		c->addr_counted = true;
		if (addr_add(app->addrs, &c->addr, 1) > app->conn_max_per_addr) {
			refuse(c, &app->metrics->conns_refused_addr,
			       "connection refused: over max_connections_per_address");
			return;
		}
	}
	/* Counted once admitted, so that the count never holds the accepted
	 * ones still waiting for this decision; taken only below the cap (a
	 * compare-and-swap, since every worker thread admits), so that the
	 * count, which /metrics shows, never reads over max_connections. At the
	 * cap, this worker's oldest idle connection makes room; a few tries, as
	 * another thread may take the room first. */
	for (int tries = 0;; tries++) {
		int open = atomic_load_explicit(&app->metrics->conns_open, memory_order_relaxed);
		if (open < app->conn_max) {
			if (atomic_compare_exchange_weak(&app->metrics->conns_open, &open, open + 1))
				break;
			continue;
		}
		struct fe_conn *v = tries < 4 ? victim(w, c) : NULL;
		if (!v) {
			refuse(c, &app->metrics->connections_refused, "connection refused: over max_connections");
			return;
		}
		atomic_fetch_add(&app->metrics->conns_evicted, 1);
		log_limited(&refused_rate, "closed the oldest idle connection: over max_connections", v);
		if (v->phase == PHASE_HEAD)
			raw_reply(v, 503, "too_many_connections", "the server is at its connection limit");
		close_conn(v);
	}
	c->counted = true;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_conn *c = arg;
	if (!c->set_up) {
		set_up(c);
		return;
	}
	if (c->want_close) {
		close_conn(c);
		return;
	}
	if (!c->deadline_ms)
		return;
	uint64_t now = now_ms();
	if (now < c->deadline_ms) {
		/* Woken early (a kick): wait for the rest. */
		uint64_t left = c->deadline_ms - now;
		struct timeval tv = { (time_t)(left / 1000), (suseconds_t)(left % 1000) * 1000 };
		evtimer_add(c->timer, &tv);
		return;
	}
	struct fe_metrics *m = c->w->app->metrics;
	switch (c->phase) {
	case PHASE_PROXY:
	case PHASE_HEAD:
	case PHASE_HOLD:
		atomic_fetch_add(&m->header_timeouts, 1);
		log_limited(&timeout_rate, "closed a connection: request head not complete within header_timeout", c);
		/* A connection that never sent a byte gets no answer. */
		if (c->scan.head_bytes > 0)
			raw_reply(c, 408, "request_timeout", "the request head took longer than allowed");
		break;
	case PHASE_BODY:
		atomic_fetch_add(&m->body_timeouts, 1);
		log_limited(&timeout_rate, "closed a connection: request body not complete within its deadline", c);
		raw_reply(c, 408, "request_timeout", "the request body took longer than allowed");
		break;
	case PHASE_IDLE:
		break;
	case PHASE_BUSY:
	case PHASE_UPGRADED:
		return;
	}
	close_conn(c);
}

static struct bufferevent *on_bev(struct event_base *base, void *arg)
{
	struct fe_worker *w = arg;
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	struct fe_conn *c = bev ? calloc(1, sizeof(*c)) : NULL;
	if (c)
		c->timer = evtimer_new(base, on_timer, c);
	if (c && c->timer)
		c->input_cb = evbuffer_add_cb(bufferevent_get_input(bev), on_input, c);
	if (!c || !c->timer || !c->input_cb) {
		/* Served without the guard; the cap counts what it can. */
		if (c && c->timer)
			event_free(c->timer);
		free(c);
		return bev;
	}
	c->w = w;
	c->bev = bev;
	c->fd = -1;
	c->prev = w->conns_tail;
	if (w->conns_tail)
		w->conns_tail->next = c;
	else
		w->conns_head = c;
	w->conns_tail = c;
	/* Our reference keeps the bufferevent readable by set_up even if
	 * evhttp fails to take it and frees it. */
	bufferevent_incref(bev);
	kick(c);
	return bev;
}

static void on_accept_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	evconnlistener_enable(arg);
}

static void on_accept_error(struct evconnlistener *lev, void *arg)
{
	(void)arg;
	int e = EVUTIL_SOCKET_ERROR();
	uint64_t dropped;
	if (fe_lograte_allow(&accept_rate, now_ms(), &dropped))
		gv_error(NULL, "accept: %s; pausing the listener %d ms (%llu more in the last interval)",
			 strerror(e), ACCEPT_PAUSE_MS, (unsigned long long)dropped);
	struct timeval tv = { 0, ACCEPT_PAUSE_MS * 1000 };
	if (evconnlistener_disable(lev) == 0 &&
	    event_base_once(evconnlistener_get_base(lev), -1, EV_TIMEOUT, on_accept_resume, lev, &tv) < 0)
		evconnlistener_enable(lev);
}

void fe_conn_attach(struct fe_worker *w, struct evhttp *http, struct evhttp_bound_socket *bound)
{
	evhttp_set_bevcb(http, on_bev, w);
	evhttp_set_max_body_size(http, FE_CONN_KEYLESS_BODY_MAX);
	struct evconnlistener *lev = bound ? evhttp_bound_socket_get_listener(bound) : NULL;
	if (lev)
		evconnlistener_set_error_cb(lev, on_accept_error);
}

/* ------------------------------------------------- the request pipeline */

static void on_reply_done(struct evhttp_request *req, void *arg)
{
	(void)req;
	struct fe_conn *c = arg;
	if (c->req) {
		c->req->conn = NULL;
		c->req = NULL;
	}
	fwd_release(c);
	/* The next request on this connection starts with the small limit
	 * again; its head decides. */
	evhttp_connection_set_max_body_size(c->evcon, FE_CONN_KEYLESS_BODY_MAX);
	struct evbuffer *in = bufferevent_get_input(c->bev);
	size_t len = evbuffer_get_length(in);
	if (len == 0) {
		c->phase = PHASE_IDLE;
		set_deadline(c, c->w->app->cfg->request_timeout_ms, 0);
		return;
	}
	/* A pipelined request already buffered: evhttp reads it as soon as
	 * this returns, so it cannot be held for a key check (its body gets
	 * the keyless limit). */
	start_head(c);
	scan_bytes(c, in, 0, len, false);
}

bool fe_conn_request(struct fe_worker *w, struct evhttp_request *req, struct fe_req *r)
{
	struct fe_app *app = w->app;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
	int fd = bev ? bufferevent_getfd(bev) : -1;
	if (fd < 0 || (size_t)fd >= app->by_fd_len)
		return false;
	struct fe_conn *c = atomic_load_explicit(&app->by_fd[fd], memory_order_relaxed);
	if (!c || c->evcon != evcon)
		return false;
	c->phase = PHASE_BUSY;
	clear_deadline(c);
	c->req = r;
	r->conn = c;
	evhttp_request_set_on_complete_cb(req, on_reply_done, c);
	if (c->from_proxy && !c->proxied && app->conn_max_per_addr > 0) {
		/* The client the proxy names; its own requests (no header: a
		 * health check) count only against max_connections. */
		struct sockaddr_storage ss;
		char text[INET6_ADDRSTRLEN];
		fwd_release(c);
		fe_client_of_evreq(&app->cfg->proxies, req, NULL, &ss);
		addr_of((const struct sockaddr *)&ss, &c->fwd, text, sizeof(text));
		if (c->fwd.b[0] && memcmp(&c->fwd, &c->addr, sizeof(c->fwd)) != 0) {
			c->fwd_counted = true;
			if (addr_add(app->addrs, &c->fwd, 1) > app->conn_max_per_addr) {
				c->fwd_over = true;
				atomic_fetch_add(&app->metrics->conns_refused_addr, 1);
				log_limited(&refused_rate, "request refused: its forwarded client is over "
					    "max_connections_per_address", c);
			}
		}
	}
	return true;
}

bool fe_conn_proxied_addr(const struct fe_req *r, struct sockaddr_storage *out)
{
	if (!r->conn || !r->conn->proxied)
		return false;
	*out = r->conn->client;
	return true;
}

bool fe_conn_client_over_cap(const struct fe_req *r)
{
	return r->conn && r->conn->fwd_over;
}

bool fe_conn_head_bad(const struct fe_req *r)
{
	return r->conn && r->conn->scan.bad_byte;
}

void fe_conn_forget(struct fe_req *r)
{
	if (r->conn) {
		r->conn->req = NULL;
		r->conn = NULL;
	}
}

bool fe_conn_upgrade(struct fe_req *r, fe_conn_gone_fn gone, void *arg)
{
	struct fe_conn *c = r->conn;
	if (!c)
		return false;
	c->req = NULL;
	r->conn = NULL;
	c->phase = PHASE_UPGRADED;
	clear_deadline(c);
	if (c->input_cb) {
		evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->input_cb);
		c->input_cb = NULL;
	}
	c->gone = gone;
	c->gone_arg = arg;
	return true;
}
