/* Rate-limited logging for errors that can repeat thousands of times a
 * second under attack (accept failures, connections refused, libevent's
 * own warnings): the first occurrence in an interval is written, the rest
 * are counted and reported with the next line written. Thread-safe. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define FE_LOGRATE_INTERVAL_MS 1000

struct fe_lograte {
	atomic_uint_fast64_t next_ms;   /* earliest time the next line may be written */
	atomic_uint_fast64_t suppressed; /* occurrences since the last line written */
};

/* true: write a line now; *suppressed is how many occurrences were
 * dropped since the previous line (to be reported in this one). false:
 * this occurrence was counted and must not be logged. now_ms is any
 * monotonic clock in milliseconds. */
bool fe_lograte_allow(struct fe_lograte *lr, uint64_t now_ms, uint64_t *suppressed);

/* Routes libevent's internal messages through gv_log, rate-limited (an
 * accept loop failing with EMFILE would otherwise write a line per try). */
void fe_lograte_libevent(void);
