/* GET /v1/submissions/{id}/events: a submission's progress as a
 * Server-Sent Events stream (queued, compiling, running per test, done
 * with the result), kept alive by a ping every 15 s and closed after
 * frontend.sse_max_duration. The stream is a waiter (waiters.c) that also
 * subscribes to the submission's own event channel. */
#include "frontend/sse.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/queue.h"
#include "frontend/cors.h"
#include "frontend/metrics.h"
#include "frontend/rows.h"
#include "frontend/waiters.h"

void fe_sse_event(struct fe_req *r, const char *event, const char *data, size_t len)
{
	if (r->gone || !r->sse)
		return;
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return;
	evbuffer_add_printf(b, "event: %s\ndata: ", event);
	/* One data line: JSON has no raw newlines, but program bytes in a
	 * payload must not be able to start a new field. */
	for (size_t i = 0; i < len; i++)
		evbuffer_add(b, data[i] == '\n' || data[i] == '\r' ? " " : &data[i], 1);
	evbuffer_add(b, "\n\n", 2);
	evhttp_send_reply_chunk(r->req, b);
	evbuffer_free(b);
}

static void sse_finish(struct fe_req *r)
{
	fe_req_ref(r);
	fe_wait_stop(r);
	if (!r->replied) {
		r->replied = true;
		/* The connection stays open after the stream (keep-alive). */
		fe_req_detach_conn(r);
		evhttp_send_reply_end(r->req);
		fe_metrics_request(r->w->app->metrics, r->m.route->id, 200, fe_now_us() - r->t0_us);
		fe_req_unref(r);
	}
	fe_req_unref(r);
}

static void on_sse_row(struct fe_req *r, struct fe_rowbuf *rb, const char *error)
{
	if (!r->waiting)
		return;
	if (error || !rb)
		return;
	if (!fe_row_final(&rb->row))
		return;
	json_t *j = fe_native_render(&rb->row);
	struct gv_err err;
	char *t = j ? gv_json_dump(j, JSON_COMPACT, 512u * 1024 * 1024, NULL, &err) : NULL;
	json_decref(j);
	if (t)
		fe_sse_event(r, "done", t, strlen(t));
	free(t);
	sse_finish(r);
}

static void sse_wake(struct fe_req *r)
{
	if (!r->fetching)
		fe_row_fetch(r, false, on_sse_row);
}

static void on_sse_ping(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_req *r = arg;
	if (r->gone || !r->waiting)
		return;
	struct evbuffer *b = evbuffer_new();
	if (b) {
		evbuffer_add_printf(b, ": ping\n\n");
		evhttp_send_reply_chunk(r->req, b);
		evbuffer_free(b);
	}
	struct timeval tv = { 15, 0 };
	evtimer_add(r->ping, &tv);
}

static void on_sse_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_req *r = arg;
	if (r->waiting)
		sse_finish(r);
}

static void on_sse_first(struct fe_req *r, struct fe_rowbuf *rb, const char *error)
{
	if (error) {
		fe_wait_stop(r);
		fe_reply_db_error(r, error);
		return;
	}
	if (!rb) {
		fe_wait_stop(r);
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
	evhttp_add_header(h, "Content-Type", "text/event-stream");
	evhttp_add_header(h, "Cache-Control", "no-cache");
	evhttp_add_header(h, "X-Accel-Buffering", "no");
	fe_cors_reply_headers(r, h);
	struct evhttp_connection *evcon = evhttp_request_get_connection(r->req);
	if (evcon)
		evhttp_connection_set_timeout(evcon, (int)(r->w->app->cfg->sse_max_duration_ms / 1000) + 60);
	evhttp_send_reply_start(r->req, 200, "OK");
	r->sse = true;
	char first[128];
	snprintf(first, sizeof(first), "{\"event\":\"%s\"}",
		 !strcmp(rb->row.status, "running") ? "running" : "queued");
	if (!fe_row_final(&rb->row)) {
		fe_sse_event(r, !strcmp(rb->row.status, "running") ? "running" : "queued", first, strlen(first));
		r->ping = evtimer_new(r->w->base, on_sse_ping, r);
		struct timeval tv = { 15, 0 };
		if (r->ping)
			evtimer_add(r->ping, &tv);
		fe_wait_timer(r, r->w->app->cfg->sse_max_duration_ms, on_sse_deadline);
		return;
	}
	on_sse_row(r, rb, NULL);
}

void fe_handle_events(struct fe_req *r)
{
	const char *id = r->m.params[0];
	if (!gv_queue_sid_ok(id)) {
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	fe_req_set_sid(r, id);
	char ch[GV_QUEUE_KEY_MAX];
	struct gv_err err;
	/* Subscribe before reading the row, so no event falls in between. */
	if (gv_queue_key_events(ch, sizeof(ch), r->sid, &err) < 0 ||
	    fe_redis_subscribe(r->w->redis, ch, &err) < 0) {
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
		return;
	}
	r->sse_subscribed = true;
	fe_wait_start(r, sse_wake);
	fe_row_fetch(r, false, on_sse_first);
}
