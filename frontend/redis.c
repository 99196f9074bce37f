/* Two hiredis async contexts per worker thread. Commands on a context that
 * is down fail at once (the caller answers 503) rather than queueing
 * without bound. Connect timeouts are ours: hiredis 0.14.1 has none for
 * async connects.
 *
 * Behind Sentinels (a redis-sentinel:// URL, common/redis.h) each
 * connection first asks the Sentinels in turn, on a context of its own
 * (the probe), where the master is, then connects there and checks ROLE;
 * a connection that lands on a replica, or whose command meets READONLY,
 * is dropped and made again the same way; and every WATCH_MS one Sentinel
 * is asked again, and a connection on another server than the one it
 * names is dropped too. Nothing here blocks the loop. */
#include "frontend/redis.h"

#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/log.h"
#include "common/redis.h"

#define CHANNEL_MAX 200

struct sub_chan {
	char name[CHANNEL_MAX + 1];
	unsigned refs;
	struct sub_chan *next;
};

struct conn {
	struct fe_redis *owner;
	bool is_sub;
	redisAsyncContext *ac;
	bool up;
	struct event *retry;
	struct event *timeout;
	unsigned attempt;
	/* Sentinel URLs: the Sentinel being asked, the next one to ask, how
	 * many this round asked, and the master's address once one answered. */
	redisAsyncContext *probe;
	size_t next_sentinel, asked;
	bool resolved;
	struct gv_redis_addr master;
};

struct fe_redis {
	struct event_base *base;
	struct gv_redis_url url;
	int connect_timeout_ms;
	fe_redis_msg_cb on_msg;
	fe_redis_resync_cb on_resync;
	void *arg;
	struct conn cmd, sub;
	struct sub_chan *chans;
	unsigned seed;
	bool closing;
	/* Sentinel URLs: every WATCH_MS one Sentinel is asked whether the
	 * master is still where the connections are. */
	struct event *watch;
	redisAsyncContext *watch_ac;
	size_t watch_next;
};

/* A planned failover (SENTINEL FAILOVER) leaves the old master a master
 * until the Sentinels look at it again, ~10 s later: connections on it
 * neither break nor meet READONLY, and what they write meanwhile (an
 * enqueue) is thrown away when it becomes a replica. */
#define WATCH_MS 1000

struct pending {
	fe_redis_cb cb;
	void *arg;
};

static void conn_start(struct conn *c);
static void probe_start(struct conn *c);
static void watch_arm(struct fe_redis *r);

static void schedule_retry(struct conn *c)
{
	struct fe_redis *r = c->owner;
	if (r->closing)
		return;
	long delay = gv_backoff_jitter_ms(gv_backoff_delay_ms(c->attempt, 100, 5000), &r->seed);
	if (c->attempt < 30)
		c->attempt++;
	struct timeval tv = { delay / 1000, (delay % 1000) * 1000 };
	evtimer_add(c->retry, &tv);
}

static void on_cmd_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
	struct pending *p = privdata;
	/* A demoted master: connect again, through the Sentinels. */
	if (gv_redis_reply_is_readonly(reply) && ac->data && !(ac->c.flags & REDIS_DISCONNECTING)) {
		gv_warn(NULL, "redis: the server became a replica; finding the master again");
		redisAsyncDisconnect(ac);
	}
	if (p->cb)
		p->cb(p->arg, reply);
	free(p);
}

static void on_sub_message(redisAsyncContext *ac, void *reply, void *privdata)
{
	(void)privdata;
	struct conn *c = ac->data;
	if (!c)
		return;
	redisReply *rep = reply;
	if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 3)
		return;
	redisReply *kind = rep->element[0], *chan = rep->element[1], *msg = rep->element[2];
	if (kind->type != REDIS_REPLY_STRING || chan->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(kind->str, "message") == 0 && msg->type == REDIS_REPLY_STRING)
		c->owner->on_msg(c->owner->arg, chan->str, msg->str, (size_t)msg->len);
}

static void on_connect(const redisAsyncContext *ac, int status)
{
	struct conn *c = ac->data;
	if (!c)
		return;
	evtimer_del(c->timeout);
	if (status != REDIS_OK) {
		/* hiredis frees the context after this callback. */
		if (c->attempt == 0 || c->attempt % 10 == 0)
			gv_warn(NULL, "redis: connect failed: %s", ac->errstr);
		c->ac = NULL;
		c->up = false;
		schedule_retry(c);
		return;
	}
	struct fe_redis *r = c->owner;
	c->up = true;
	c->attempt = 0;
	if (c->is_sub) {
		for (struct sub_chan *s = r->chans; s; s = s->next)
			redisAsyncCommand(c->ac, on_sub_message, NULL, "SUBSCRIBE %s", s->name);
		if (r->on_resync)
			r->on_resync(r->arg);
	}
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
	(void)status;
	struct conn *c = ac->data;
	if (!c)
		return;
	if (c->up && !c->owner->closing)
		gv_warn(NULL, "redis: %s connection lost: %s", c->is_sub ? "subscriber" : "command",
			ac->errstr[0] ? ac->errstr : "closed");
	c->ac = NULL;
	c->up = false;
	schedule_retry(c);
}

static void on_connect_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *c = arg;
	if (c->probe) {
		gv_warn(NULL, "redis: a Sentinel did not answer in time");
		redisAsyncContext *probe = c->probe;
		probe->data = NULL;
		c->probe = NULL;
		redisAsyncFree(probe);
		probe_start(c);
		return;
	}
	if (c->ac && !c->up) {
		gv_warn(NULL, "redis: connect timed out");
		redisAsyncContext *ac = c->ac;
		ac->data = NULL;
		c->ac = NULL;
		redisAsyncFree(ac);
		schedule_retry(c);
	}
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_start(arg);
}

static void on_probe_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
	struct conn *c = privdata;
	redisReply *rep = reply;
	if (!rep || !ac->data)
		return;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 && rep->element[0]->type == REDIS_REPLY_STRING &&
	    rep->element[1]->type == REDIS_REPLY_STRING && rep->element[0]->len > 0 &&
	    (size_t)rep->element[0]->len < sizeof(c->master.host)) {
		long port = strtol(rep->element[1]->str, NULL, 10);
		if (port >= 1 && port <= 65535) {
			memcpy(c->master.host, rep->element[0]->str, (size_t)rep->element[0]->len + 1);
			c->master.port = (int)port;
			c->resolved = true;
		}
	}
	if (!c->resolved && (c->attempt == 0 || c->attempt % 10 == 0))
		gv_warn(NULL, "redis: a Sentinel did not name the master '%s'", c->owner->url.master_name);
	redisAsyncDisconnect(ac); /* on_probe_disconnect goes on */
}

/* The probe is gone: connect to the master it found, or ask the next. */
static void probe_next(struct conn *c)
{
	c->probe = NULL;
	evtimer_del(c->timeout);
	if (c->owner->closing)
		return;
	if (c->resolved) {
		c->asked = 0;
		conn_start(c);
	} else {
		probe_start(c);
	}
}

static void on_probe_connect(const redisAsyncContext *ac, int status)
{
	struct conn *c = ac->data;
	if (!c || status == REDIS_OK)
		return;
	/* hiredis frees the context after this callback, without calling
	 * on_probe_disconnect. */
	probe_next(c);
}

static void on_probe_disconnect(const redisAsyncContext *ac, int status)
{
	(void)status;
	struct conn *c = ac->data;
	if (c)
		probe_next(c);
}

/* A connection to Sentinel number k (mod their count), its data, with
 * their AUTH and the question where the master is (on_reply gets data as
 * its privdata); NULL when it cannot even be started. */
static redisAsyncContext *sentinel_ask(struct fe_redis *r, size_t k, void *data,
				       redisConnectCallback *connected, redisDisconnectCallback *disconnected,
				       redisCallbackFn *on_reply)
{
	const struct gv_redis_addr *s = &r->url.sentinels[k % r->url.n_sentinels];
	redisAsyncContext *ac = redisAsyncConnect(s->host, s->port);
	if (!ac || ac->err) {
		if (ac)
			redisAsyncFree(ac);
		return NULL;
	}
	ac->data = data;
	redisLibeventAttach(ac, r->base);
	redisAsyncSetConnectCallback(ac, connected);
	redisAsyncSetDisconnectCallback(ac, disconnected);
	if (r->url.sentinel_user[0])
		redisAsyncCommand(ac, NULL, NULL, "AUTH %s %s", r->url.sentinel_user, r->url.sentinel_password);
	else if (r->url.sentinel_password[0])
		redisAsyncCommand(ac, NULL, NULL, "AUTH %s", r->url.sentinel_password);
	redisAsyncCommand(ac, on_reply, data, "SENTINEL get-master-addr-by-name %s", r->url.master_name);
	return ac;
}

/* Asks the next Sentinel for the master; after a round of them that named
 * none, waits (backoff) and starts over. */
static void probe_start(struct conn *c)
{
	struct fe_redis *r = c->owner;
	if (r->closing || c->probe)
		return;
	if (c->asked >= r->url.n_sentinels) {
		c->asked = 0;
		schedule_retry(c);
		return;
	}
	c->asked++;
	redisAsyncContext *ac = sentinel_ask(r, c->next_sentinel++, c, on_probe_connect, on_probe_disconnect,
					     on_probe_reply);
	if (!ac) {
		probe_start(c);
		return;
	}
	c->probe = ac;
	struct timeval tv = { r->connect_timeout_ms / 1000, (r->connect_timeout_ms % 1000) * 1000 };
	evtimer_add(c->timeout, &tv);
}

static void on_role(redisAsyncContext *ac, void *reply, void *privdata)
{
	(void)privdata;
	redisReply *rep = reply;
	if (!rep || !ac->data)
		return;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 && rep->element[0]->type == REDIS_REPLY_STRING &&
	    strcmp(rep->element[0]->str, "master") == 0)
		return;
	gv_warn(NULL, "redis: the server the Sentinels named is not a master (yet); asking again");
	redisAsyncDisconnect(ac);
}

static void conn_start(struct conn *c)
{
	struct fe_redis *r = c->owner;
	if (r->closing || c->ac)
		return;
	if (r->url.is_sentinel && !c->resolved) {
		probe_start(c);
		return;
	}
	/* A Sentinel's answer serves one connection: the next asks again. */
	c->resolved = false;
	redisAsyncContext *ac = r->url.is_unix	    ? redisAsyncConnectUnix(r->url.path)
				: r->url.is_sentinel ? redisAsyncConnect(c->master.host, c->master.port)
						     : redisAsyncConnect(r->url.host, r->url.port);
	if (!ac || ac->err) {
		if (ac)
			redisAsyncFree(ac);
		schedule_retry(c);
		return;
	}
	ac->data = c;
	c->ac = ac;
	redisLibeventAttach(ac, r->base);
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	/* Queued before the connection completes; sent first. */
	if (r->url.password[0]) {
		if (r->url.user[0])
			redisAsyncCommand(ac, NULL, NULL, "AUTH %s %s", r->url.user, r->url.password);
		else
			redisAsyncCommand(ac, NULL, NULL, "AUTH %s", r->url.password);
	}
	if (r->url.is_sentinel)
		redisAsyncCommand(ac, on_role, NULL, "ROLE");
	if (!c->is_sub && r->url.db > 0)
		redisAsyncCommand(ac, NULL, NULL, "SELECT %d", r->url.db);
	struct timeval tv = { r->connect_timeout_ms / 1000, (r->connect_timeout_ms % 1000) * 1000 };
	evtimer_add(c->timeout, &tv);
}

/* Drops the watch's Sentinel connection, if any, without its callbacks. */
static void watch_drop(struct fe_redis *r)
{
	if (!r->watch_ac)
		return;
	redisAsyncContext *ac = r->watch_ac;
	r->watch_ac = NULL;
	ac->data = NULL;
	redisAsyncFree(ac);
}

static void on_watch_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
	struct fe_redis *r = privdata;
	redisReply *rep = reply;
	if (!rep || !ac->data)
		return;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 && rep->element[0]->type == REDIS_REPLY_STRING &&
	    rep->element[1]->type == REDIS_REPLY_STRING) {
		long port = strtol(rep->element[1]->str, NULL, 10);
		struct conn *conns[] = { &r->cmd, &r->sub };
		for (size_t i = 0; i < 2; i++) {
			struct conn *c = conns[i];
			if (!c->up || !c->ac || (c->master.port == port && strcmp(c->master.host, rep->element[0]->str) == 0))
				continue;
			gv_warn(NULL, "redis: the Sentinels name %s:%ld the master; the %s connection moves there",
				rep->element[0]->str, port, c->is_sub ? "subscriber" : "command");
			redisAsyncDisconnect(c->ac);
		}
	} else {
		r->watch_next++; /* this Sentinel does not know: the next one, next time */
	}
	redisAsyncDisconnect(ac);
}

static void on_watch_connect(const redisAsyncContext *ac, int status)
{
	struct fe_redis *r = ac->data;
	if (!r || status == REDIS_OK)
		return;
	r->watch_ac = NULL; /* hiredis frees it after this callback */
	r->watch_next++;
}

static void on_watch_disconnect(const redisAsyncContext *ac, int status)
{
	(void)status;
	struct fe_redis *r = ac->data;
	if (r)
		r->watch_ac = NULL;
}

static void on_watch_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_redis *r = arg;
	if (r->closing)
		return;
	if (r->watch_ac) {
		/* The last one did not answer within WATCH_MS. */
		watch_drop(r);
		r->watch_next++;
	}
	if (r->cmd.up || r->sub.up)
		r->watch_ac = sentinel_ask(r, r->watch_next, r, on_watch_connect, on_watch_disconnect, on_watch_reply);
	watch_arm(r);
}

static void watch_arm(struct fe_redis *r)
{
	struct timeval tv = { WATCH_MS / 1000, (WATCH_MS % 1000) * 1000 };
	evtimer_add(r->watch, &tv);
}

static int conn_init(struct fe_redis *r, struct conn *c, bool is_sub)
{
	c->owner = r;
	c->is_sub = is_sub;
	c->retry = evtimer_new(r->base, on_retry, c);
	c->timeout = evtimer_new(r->base, on_connect_timeout, c);
	return c->retry && c->timeout ? 0 : -1;
}

struct fe_redis *fe_redis_new(struct event_base *base, const char *url, int connect_timeout_ms,
			      fe_redis_msg_cb on_msg, fe_redis_resync_cb on_resync, void *arg,
			      struct gv_err *err)
{
	struct fe_redis *r = calloc(1, sizeof(*r));
	if (!r) {
		gv_err_errno(err, "calloc");
		return NULL;
	}
	if (gv_redis_url_parse(url, &r->url, err) < 0) {
		free(r);
		return NULL;
	}
	r->base = base;
	r->connect_timeout_ms = connect_timeout_ms > 0 ? connect_timeout_ms : 2000;
	r->on_msg = on_msg;
	r->on_resync = on_resync;
	r->arg = arg;
	r->seed = gv_backoff_seed();
	if (conn_init(r, &r->cmd, false) < 0 || conn_init(r, &r->sub, true) < 0) {
		gv_err_set(err, ENOMEM, "out of memory");
		fe_redis_free(r);
		return NULL;
	}
	if (r->url.is_sentinel && r->url.n_sentinels > 0) {
		r->watch = evtimer_new(base, on_watch_tick, r);
		if (!r->watch) {
			gv_err_set(err, ENOMEM, "out of memory");
			fe_redis_free(r);
			return NULL;
		}
		watch_arm(r);
	}
	conn_start(&r->cmd);
	conn_start(&r->sub);
	return r;
}

static void conn_close(struct conn *c)
{
	if (c->probe) {
		redisAsyncContext *probe = c->probe;
		probe->data = NULL;
		c->probe = NULL;
		redisAsyncFree(probe);
	}
	if (c->ac) {
		/* Pending command callbacks run with a NULL reply. */
		redisAsyncContext *ac = c->ac;
		c->ac = NULL;
		c->up = false;
		redisAsyncFree(ac);
	}
	if (c->retry)
		event_free(c->retry);
	if (c->timeout)
		event_free(c->timeout);
	c->retry = c->timeout = NULL;
}

void fe_redis_free(struct fe_redis *r)
{
	if (!r)
		return;
	r->closing = true;
	if (r->watch)
		event_free(r->watch);
	watch_drop(r);
	conn_close(&r->cmd);
	conn_close(&r->sub);
	struct sub_chan *s = r->chans;
	while (s) {
		struct sub_chan *n = s->next;
		free(s);
		s = n;
	}
	free(r);
}

bool fe_redis_ready(const struct fe_redis *r)
{
	return r && r->cmd.up;
}

bool fe_redis_sub_ready(const struct fe_redis *r)
{
	return r && r->sub.up;
}

int fe_redis_command(struct fe_redis *r, fe_redis_cb cb, void *arg, int argc, const char **argv,
		     const size_t *argvlen, struct gv_err *err)
{
	if (!r->cmd.up || !r->cmd.ac)
		return gv_err_set(err, GV_EREDIS, "redis unavailable");
	struct pending *p = malloc(sizeof(*p));
	if (!p)
		return gv_err_errno(err, "malloc");
	p->cb = cb;
	p->arg = arg;
	if (redisAsyncCommandArgv(r->cmd.ac, on_cmd_reply, p, argc, argv, argvlen) != REDIS_OK) {
		free(p);
		return gv_err_set(err, GV_EREDIS, "redis unavailable");
	}
	return 0;
}

int fe_redis_subscribe(struct fe_redis *r, const char *channel, struct gv_err *err)
{
	size_t len = strlen(channel);
	if (len == 0 || len > CHANNEL_MAX)
		return gv_err_set(err, GV_EINVAL, "bad channel name");
	for (struct sub_chan *s = r->chans; s; s = s->next) {
		if (strcmp(s->name, channel) == 0) {
			s->refs++;
			return 0;
		}
	}
	struct sub_chan *s = calloc(1, sizeof(*s));
	if (!s)
		return gv_err_errno(err, "calloc");
	memcpy(s->name, channel, len + 1);
	s->refs = 1;
	s->next = r->chans;
	r->chans = s;
	if (r->sub.up && r->sub.ac)
		redisAsyncCommand(r->sub.ac, on_sub_message, NULL, "SUBSCRIBE %s", s->name);
	return 0;
}

void fe_redis_unsubscribe(struct fe_redis *r, const char *channel)
{
	for (struct sub_chan **pp = &r->chans; *pp; pp = &(*pp)->next) {
		struct sub_chan *s = *pp;
		if (strcmp(s->name, channel) != 0)
			continue;
		if (--s->refs > 0)
			return;
		*pp = s->next;
		if (r->sub.up && r->sub.ac)
			redisAsyncCommand(r->sub.ac, on_sub_message, NULL, "UNSUBSCRIBE %s", s->name);
		free(s);
		return;
	}
}
