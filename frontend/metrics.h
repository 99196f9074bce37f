/* Prometheus counters of the frontend: plain atomics bumped by the workers,
 * rendered in text format by GET /metrics together with figures read from
 * Redis at scrape time. */
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "frontend/router.h"

#define FE_METRICS_LAT_BUCKETS 12

struct fe_metrics {
	/* requests by route and status class (1xx..5xx -> 0..4) */
	atomic_ulong requests[FE_ROUTE_COUNT_][5];
	atomic_ulong unmatched[5];
	/* request latency histogram (all routes), cumulative at render */
	atomic_ulong lat_bucket[FE_METRICS_LAT_BUCKETS + 1];
	atomic_ulong lat_count;
	atomic_ullong lat_sum_us;
	atomic_ulong submissions_created;
	atomic_ulong connections_refused; /* at accept: over max_connections, none to evict */
	/* The connection guard (conn.c). conns_open is also the count the
	 * max_connections cap is checked against. */
	atomic_int conns_open;
	atomic_ulong conns_refused_addr;
	atomic_ulong conns_evicted;
	atomic_ulong header_timeouts;
	atomic_ulong body_timeouts;
	atomic_ulong preauth_refused;
	atomic_ulong auth_failures;
	atomic_ulong rate_limited;
	atomic_ulong enqueue_failures;
	atomic_ulong waits_timed_out;
	atomic_ulong verdicts[16]; /* as seen by wait=true / SSE / polling */
};

extern const double fe_metrics_lat_bounds_s[FE_METRICS_LAT_BUCKETS];

void fe_metrics_request(struct fe_metrics *m, enum fe_route_id route, int status, uint64_t us);
/* Counts a verdict seen in a finished row (AC, WA, ...). */
void fe_metrics_verdict(struct fe_metrics *m, const char *verdict);
/* Appends the text format of the counters to buf (evbuffer-like writer). */
struct evbuffer;
void fe_metrics_render(const struct fe_metrics *m, int connections, struct evbuffer *out);
