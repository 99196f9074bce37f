/* Weighted fair share (scheduler/fairshare.h): deficit order over running
 * jobs. Comparisons are cross-multiplied in 64 bits, so no division and no
 * rounding decide who runs. */
#include "scheduler/fairshare.h"

#include <stdint.h>
#include <string.h>

static bool eligible(const struct sched_fs_tenant *t)
{
	return t->queued > 0 && !t->blocked && (t->max_running == 0 || t->running < t->max_running);
}

/* True when a should go before b. */
static bool before(const struct sched_fs_tenant *a, const struct sched_fs_tenant *b)
{
	uint64_t wa = a->weight ? a->weight : 1, wb = b->weight ? b->weight : 1;
	uint64_t la = (uint64_t)a->running * wb, lb = (uint64_t)b->running * wa;
	if (la != lb)
		return la < lb;
	if (wa != wb)
		return wa > wb;
	return a->queued > b->queued;
}

int sched_fairshare_pick(const struct sched_fs_tenant *t, size_t n)
{
	int best = -1;
	for (size_t i = 0; i < n; i++) {
		if (!eligible(&t[i]))
			continue;
		if (best < 0 || before(&t[i], &t[best]))
			best = (int)i;
	}
	return best;
}

size_t sched_fairshare_plan(struct sched_fs_tenant *t, size_t n, size_t slots, unsigned *given)
{
	if (given)
		memset(given, 0, n * sizeof(*given));
	size_t k = 0;
	for (; k < slots; k++) {
		int i = sched_fairshare_pick(t, n);
		if (i < 0)
			break;
		t[i].running++;
		t[i].queued--;
		if (given)
			given[i]++;
	}
	return k;
}

bool sched_fairshare_below_share(const struct sched_fs_tenant *t, size_t n, size_t i, size_t capacity)
{
	uint64_t sum = 0;
	for (size_t k = 0; k < n; k++)
		if (k == i || t[k].queued > 0 || t[k].running > 0)
			sum += t[k].weight ? t[k].weight : 1;
	uint64_t w = t[i].weight ? t[i].weight : 1;
	return (uint64_t)t[i].running * sum < (uint64_t)capacity * w;
}

int sched_fairshare_pick_burst(const struct sched_fs_tenant *t, size_t n, size_t capacity)
{
	int best = -1;
	for (size_t i = 0; i < n; i++) {
		if (!eligible(&t[i]) || !sched_fairshare_below_share(t, n, i, capacity))
			continue;
		if (best < 0 || before(&t[i], &t[best]))
			best = (int)i;
	}
	return best;
}
