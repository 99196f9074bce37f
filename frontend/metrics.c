/* Counters are relaxed atomics: a scrape sees each one consistent on its
 * own, which is what Prometheus expects. */
#include "frontend/metrics.h"

#include <event2/buffer.h>
#include <string.h>

const double fe_metrics_lat_bounds_s[FE_METRICS_LAT_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30,
};

static const char *const verdict_names[] = { "AC", "WA", "TLE", "MLE", "OLE", "RE", "CE", "PE",
					     "IE", NULL };

void fe_metrics_request(struct fe_metrics *m, enum fe_route_id route, int status, uint64_t us)
{
	int cls = status / 100 - 1;
	if (cls < 0 || cls > 4)
		cls = 4;
	if (route > FE_ROUTE_NONE && route < FE_ROUTE_COUNT_)
		atomic_fetch_add_explicit(&m->requests[route][cls], 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&m->unmatched[cls], 1, memory_order_relaxed);
	double s = (double)us / 1e6;
	int b = 0;
	while (b < FE_METRICS_LAT_BUCKETS && s > fe_metrics_lat_bounds_s[b])
		b++;
	atomic_fetch_add_explicit(&m->lat_bucket[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->lat_count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->lat_sum_us, us, memory_order_relaxed);
}

void fe_metrics_verdict(struct fe_metrics *m, const char *verdict)
{
	for (int i = 0; verdict && verdict_names[i]; i++)
		if (!strcmp(verdict_names[i], verdict))
			atomic_fetch_add_explicit(&m->verdicts[i], 1, memory_order_relaxed);
}

void fe_metrics_render(const struct fe_metrics *m, int connections, struct evbuffer *out)
{
	static const char *const cls[] = { "1xx", "2xx", "3xx", "4xx", "5xx" };
	evbuffer_add_printf(out, "# HELP gavel_http_requests_total HTTP requests answered.\n"
				 "# TYPE gavel_http_requests_total counter\n");
	for (size_t i = 0; i < fe_routes_len; i++) {
		const struct fe_route *r = &fe_routes[i];
		/* Routes sharing an id (aliases) are printed once. */
		bool dup = false;
		for (size_t j = 0; j < i; j++)
			dup |= fe_routes[j].id == r->id;
		if (dup)
			continue;
		for (int c = 0; c < 5; c++) {
			unsigned long v = atomic_load_explicit(&m->requests[r->id][c], memory_order_relaxed);
			if (v)
				evbuffer_add_printf(out,
						    "gavel_http_requests_total{route=\"%s\",code=\"%s\"} %lu\n",
						    r->name, cls[c], v);
		}
	}
	for (int c = 0; c < 5; c++) {
		unsigned long v = atomic_load_explicit(&m->unmatched[c], memory_order_relaxed);
		if (v)
			evbuffer_add_printf(out, "gavel_http_requests_total{route=\"none\",code=\"%s\"} %lu\n",
					    cls[c], v);
	}
	evbuffer_add_printf(out, "# HELP gavel_http_request_duration_seconds Time to answer a request.\n"
				 "# TYPE gavel_http_request_duration_seconds histogram\n");
	unsigned long cum = 0;
	for (int b = 0; b < FE_METRICS_LAT_BUCKETS; b++) {
		cum += atomic_load_explicit(&m->lat_bucket[b], memory_order_relaxed);
		evbuffer_add_printf(out, "gavel_http_request_duration_seconds_bucket{le=\"%g\"} %lu\n",
				    fe_metrics_lat_bounds_s[b], cum);
	}
	cum += atomic_load_explicit(&m->lat_bucket[FE_METRICS_LAT_BUCKETS], memory_order_relaxed);
	evbuffer_add_printf(out, "gavel_http_request_duration_seconds_bucket{le=\"+Inf\"} %lu\n", cum);
	evbuffer_add_printf(out, "gavel_http_request_duration_seconds_sum %.6f\n",
			    (double)atomic_load_explicit(&m->lat_sum_us, memory_order_relaxed) / 1e6);
	evbuffer_add_printf(out, "gavel_http_request_duration_seconds_count %lu\n",
			    atomic_load_explicit(&m->lat_count, memory_order_relaxed));
#define COUNTER(name, help, field)                                                                \
	evbuffer_add_printf(out, "# HELP " name " " help "\n# TYPE " name " counter\n" name " %lu\n", \
			    atomic_load_explicit(&m->field, memory_order_relaxed))
	COUNTER("gavel_submissions_created_total", "Submissions accepted and stored.", submissions_created);
	COUNTER("gavel_connections_refused_total",
		"Connections refused at accept with 503: over max_connections and none idle to close.",
		connections_refused);
	COUNTER("gavel_connections_refused_per_address_total",
		"Connections refused at accept with 503: over max_connections_per_address.", conns_refused_addr);
	COUNTER("gavel_connections_evicted_total",
		"Idle connections (no request in progress) closed to make room under max_connections.",
		conns_evicted);
	COUNTER("gavel_header_timeouts_total", "Connections closed: request head not complete within header_timeout.",
		header_timeouts);
	COUNTER("gavel_body_timeouts_total",
		"Connections closed: request body not complete within body_timeout (upload_timeout).", body_timeouts);
	COUNTER("gavel_body_key_refused_total",
		"Write requests whose key was refused before the body: body limited to 16 KiB.", preauth_refused);
	COUNTER("gavel_auth_failures_total", "Requests refused with 401 or 403.", auth_failures);
	COUNTER("gavel_rate_limited_total", "Requests refused with 429.", rate_limited);
	COUNTER("gavel_enqueue_failures_total", "Stored submissions whose Redis enqueue failed (the reconciler re-enqueues them).",
		enqueue_failures);
	COUNTER("gavel_wait_timeouts_total", "wait=true requests answered 202 after the bounded wait.",
		waits_timed_out);
#undef COUNTER
	evbuffer_add_printf(out, "# HELP gavel_verdicts_seen_total Verdicts of finished submissions served by this frontend.\n"
				 "# TYPE gavel_verdicts_seen_total counter\n");
	for (int i = 0; verdict_names[i]; i++)
		evbuffer_add_printf(out, "gavel_verdicts_seen_total{verdict=\"%s\"} %lu\n", verdict_names[i],
				    atomic_load_explicit(&m->verdicts[i], memory_order_relaxed));
	evbuffer_add_printf(out, "# HELP gavel_http_requests_in_progress Requests being handled.\n"
				 "# TYPE gavel_http_requests_in_progress gauge\ngavel_http_requests_in_progress %d\n",
			    connections);
	evbuffer_add_printf(out, "# HELP gavel_connections_open Client connections open (the max_connections cap).\n"
				 "# TYPE gavel_connections_open gauge\ngavel_connections_open %d\n",
			    atomic_load_explicit(&m->conns_open, memory_order_relaxed));
}
