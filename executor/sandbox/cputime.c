/* CPU time that does not grow with the node's load: the decision rules,
 * pure, tested as a table in tests/unit/test_cputime.c. The mechanism and
 * why it is sound are in cputime.h. */
#include "executor/sandbox/cputime.h"

#include <string.h>

/* init's own bound on cpu_ms (executor/init/job.c). */
#define GUEST_LIMIT_MAX 43200000ull

uint64_t exec_cpu_guest_limit(uint64_t limit_ms, uint64_t wall_ms)
{
	uint64_t g = wall_ms > GUEST_LIMIT_MAX ? GUEST_LIMIT_MAX : wall_ms;
	return g < limit_ms ? limit_ms : g;
}

uint64_t exec_cpu_host_kill_ns(uint64_t limit_ms)
{
	if (limit_ms > GUEST_LIMIT_MAX)
		limit_ms = GUEST_LIMIT_MAX;
	return (2 * limit_ms + 200) * 1000000ull;
}

enum exec_cpu_outcome exec_cpu_settle(const char *status, const char *limit, uint64_t guest_ms,
				      uint64_t host_us, uint64_t limit_ms, uint64_t *time_ms)
{
	uint64_t host_ms = host_us / 1000;
	uint64_t t = guest_ms < host_ms ? guest_ms : host_ms;
	*time_ms = t;
	/* init ranks output and memory above CPU; IE is our failure. */
	if (!strcmp(status, "OLE") || !strcmp(status, "MLE") || !strcmp(status, "IE"))
		return EXEC_CPU_KEEP;
	if (t >= limit_ms)
		return EXEC_CPU_TLE;
	/* Killed for CPU at the loose limit, yet below the real one by the
	 * host's count: cut short by the load, not by its own use. */
	if (!strcmp(status, "TLE") && !strcmp(limit, "cpu"))
		return EXEC_CPU_STARVED;
	return EXEC_CPU_KEEP;
}
