/* Requests that wait for a submission to finish (wait=true, Piston, SSE,
 * problem imports): each worker keeps its waiters in a list, and the
 * worker's Redis subscriber wakes them on gavel:done and on progress events
 * (gavel:ev:<sid>), and all of them after a resubscription, since a message
 * may have been missed. Separate from the routes: the list and its wake-up
 * rules are shared by every route that waits, and by the server's shutdown
 * and client-gone paths. */
#include "frontend/waiters.h"

#include <string.h>

#include "common/queue.h"
#include "frontend/kernel_channels.h"
#include "frontend/sse.h"

void fe_wait_start(struct fe_req *r, fe_wake_fn on_wake)
{
	if (r->waiting)
		return;
	r->waiting = true;
	r->on_wake = on_wake;
	r->wnext = r->w->waiters;
	r->w->waiters = r;
	fe_req_ref(r);
}

void fe_wait_stop(struct fe_req *r)
{
	if (!r->waiting)
		return;
	for (struct fe_req **pp = &r->w->waiters; *pp; pp = &(*pp)->wnext) {
		if (*pp == r) {
			*pp = r->wnext;
			break;
		}
	}
	r->waiting = false;
	r->wnext = NULL;
	if (r->timer)
		evtimer_del(r->timer);
	if (r->ping)
		evtimer_del(r->ping);
	if (r->sse_subscribed) {
		char ch[GV_QUEUE_KEY_MAX];
		struct gv_err err;
		if (gv_queue_key_events(ch, sizeof(ch), r->sid, &err) == 0)
			fe_redis_unsubscribe(r->w->redis, ch);
		r->sse_subscribed = false;
	}
	fe_req_unref(r);
}

void fe_worker_on_message(void *arg, const char *channel, const char *payload, size_t len)
{
	struct fe_worker *w = arg;
	if (!strncmp(channel, "gavel:kout:", 11)) {
		fe_kernel_on_kout(w, channel + 11, (const uint8_t *)payload, len);
		return;
	}
	bool done = !strcmp(channel, GV_QUEUE_DONE_CHANNEL);
	const char *sid = NULL;
	if (!done) {
		size_t plen = sizeof(GV_QUEUE_EV_PREFIX) - 1;
		if (strncmp(channel, GV_QUEUE_EV_PREFIX, plen))
			return;
		sid = channel + plen;
	}
	/* Collect first: a wake may reply and unlink itself. */
	struct fe_req *hits[64];
	size_t n = 0;
	for (struct fe_req *r = w->waiters; r && n < 64; r = r->wnext) {
		if (done ? (strlen(r->sid) == len && !memcmp(r->sid, payload, len)) : !strcmp(r->sid, sid))
			hits[n++] = r;
	}
	for (size_t i = 0; i < n; i++)
		fe_req_ref(hits[i]);
	for (size_t i = 0; i < n; i++) {
		struct fe_req *r = hits[i];
		if (r->waiting) {
			if (!done && r->sse) {
				/* progress: forward as an SSE event named by its "event" */
				json_t *j = json_loadb(payload, len, 0, NULL);
				const char *ev = j ? json_string_value(json_object_get(j, "event")) : NULL;
				if (ev && (!strcmp(ev, "queued") || !strcmp(ev, "compiling") ||
					   !strcmp(ev, "running")))
					fe_sse_event(r, ev, payload, len);
				bool is_done = ev && !strcmp(ev, "done");
				json_decref(j);
				if (is_done && r->on_wake)
					r->on_wake(r);
			} else if (done && r->on_wake) {
				r->on_wake(r);
			}
		}
		fe_req_unref(r);
	}
}

void fe_worker_on_resync(void *arg)
{
	struct fe_worker *w = arg;
	struct fe_req *hits[256];
	size_t n = 0;
	for (struct fe_req *r = w->waiters; r && n < 256; r = r->wnext)
		hits[n++] = r;
	for (size_t i = 0; i < n; i++)
		fe_req_ref(hits[i]);
	for (size_t i = 0; i < n; i++) {
		if (hits[i]->waiting && hits[i]->on_wake)
			hits[i]->on_wake(hits[i]);
		fe_req_unref(hits[i]);
	}
}

void fe_handle_gone(struct fe_req *r)
{
	/* A waiting request has nobody to answer: stop waiting and release
	 * it (the reply call frees libevent's request object). */
	if (r->waiting) {
		fe_req_ref(r);
		fe_wait_stop(r);
		if (r->sse) {
			r->replied = true;
			fe_req_detach_conn(r);
			evhttp_send_reply_end(r->req);
			fe_req_unref(r);
		} else {
			fe_reply_error(r, 499, "client_closed", "client closed the connection");
		}
		fe_req_unref(r);
	}
}

int fe_wait_timer(struct fe_req *r, uint64_t ms, event_callback_fn cb)
{
	if (!r->timer)
		r->timer = evtimer_new(r->w->base, cb, r);
	if (!r->timer)
		return -1;
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	return evtimer_add(r->timer, &tv);
}
