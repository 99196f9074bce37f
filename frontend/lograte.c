/* One line per interval per call site; the count of the lines dropped
 * rides on the next line written, so nothing is lost but the repetition. */
#include "frontend/lograte.h"

#include <event2/event.h>
#include <time.h>

#include "common/log.h"

bool fe_lograte_allow(struct fe_lograte *lr, uint64_t now_ms, uint64_t *suppressed)
{
	uint_fast64_t next = atomic_load_explicit(&lr->next_ms, memory_order_relaxed);
	/* One thread wins the interval; the others count. */
	if (now_ms < next || !atomic_compare_exchange_strong(&lr->next_ms, &next,
							     now_ms + FE_LOGRATE_INTERVAL_MS)) {
		atomic_fetch_add_explicit(&lr->suppressed, 1, memory_order_relaxed);
		return false;
	}
	*suppressed = atomic_exchange_explicit(&lr->suppressed, 0, memory_order_relaxed);
	return true;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* libevent gives no context pointer to its log callback: the limiter is
 * per process, as libevent's logging is. */
static struct fe_lograte libevent_rate;

static void on_libevent_log(int severity, const char *msg)
{
	uint64_t dropped;
	if (severity < EVENT_LOG_WARN || !fe_lograte_allow(&libevent_rate, mono_ms(), &dropped))
		return;
	gv_log(severity >= EVENT_LOG_ERR ? GV_LOG_ERROR : GV_LOG_WARN, NULL,
	       "libevent: %s (%llu similar messages dropped in the last interval)", msg,
	       (unsigned long long)dropped);
}

void fe_lograte_libevent(void)
{
	event_set_log_callback(on_libevent_log);
}
