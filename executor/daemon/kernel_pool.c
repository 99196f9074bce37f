/* Notebook kernels started ahead of demand on this node
 * (executor/daemon/daemon_internal.h, kernel_pool_*; the kernel side is
 * exec_kernel_warm in executor/kernels/kernel.h).
 *
 * A kernel's start is a fresh sandbox plus Python importing ipykernel:
 * seconds under gVisor. So an idle worker keeps one kernel started ahead
 * for a shape (tenant, memory, CPU quota, lifetime, idle time) that this
 * node's kernels had lately, and the next kernel of that shape adopts it.
 * A course may ask ahead for a class (tenants/kernel_warm.h): during its
 * window a kernel node keeps that many of the tenant's shape started
 * ahead besides (kernel_warm_asks.c), within the memory it offers to
 * kernels; one that placed kernels need is dropped first.
 *
 * A worker process owns its sandboxes (the engine is its subreaper), so
 * the kernel job goes to the worker holding the kernel, not the kernel to
 * the job: the worker that claimed the job hands its token over through
 * the shared slots, and the holder runs the kernel.
 *
 * Security argument: a kernel started ahead is made for one tenant's
 * shape, with that tenant's cgroup limits and no network (a tenant whose
 * egress policy grants a network gets a fresh sandbox each time, with the
 * policy of the moment). Nothing of a tenant runs in it before adoption,
 * it serves exactly one kernel, and it is destroyed with it, as every
 * sandbox is. It never changes hands between tenants: its shape is
 * compared in full at adoption.
 *
 * The slot's warm_state moves only by compare-and-swap:
 *   NONE -> WARMING -> READY                      (the holder)
 *   WARMING|READY -> CLAIMED -> HANDED            (a taker, who writes the token)
 *   HANDED -> ADOPTED (the holder) -> NONE (the taker's acknowledgement)
 *   HANDED -> NONE (the taker gave up waiting: it runs the kernel itself)
 *   WARMING|READY -> NONE (the holder drops its kernel)
 */
#include "executor/daemon/daemon_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "executor/kernels/kernel.h"

enum { KPOOL_NONE, KPOOL_WARMING, KPOOL_READY, KPOOL_CLAIMED, KPOOL_HANDED, KPOOL_ADOPTED };

#define HANDOFF_WAIT_MS 3000 /* the holder looks at its slot every TAKE_WAIT_WARM_S */
#define RETRY_AFTER_FAIL_MS 30000

static int state_load(const struct kernel_pool_slot *s)
{
	return __atomic_load_n(&s->warm_state, __ATOMIC_ACQUIRE);
}

static bool state_cas(struct kernel_pool_slot *s, int from, int to)
{
	return __atomic_compare_exchange_n(&s->warm_state, &from, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static bool shape_eq(const struct kernel_shape *a, const struct kernel_shape *b)
{
	return !strcmp(a->tenant, b->tenant) && a->memory_mb == b->memory_mb && a->cpu_pct == b->cpu_pct &&
	       a->lifetime_s == b->lifetime_s && a->idle_s == b->idle_s;
}

void kernel_pool_shape(struct kernel_shape *out, const struct exec_kernel_spec *spec)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->tenant, sizeof(out->tenant), "%s", spec->tenant);
	out->memory_mb = spec->memory_mb;
	out->cpu_pct = spec->cpu_pct;
	out->lifetime_s = spec->lifetime_s;
	out->idle_s = spec->idle_s;
}

static struct kernel_pool_slot *slot_of(const struct worker *w, int k)
{
	return &w->d->slots[k].kpool;
}

void kernel_pool_want(struct worker *w, const struct kernel_shape *shape)
{
	struct kernel_pool_slot *s = slot_of(w, w->index);
	__atomic_add_fetch(&s->wanted_seq, 1, __ATOMIC_ACQ_REL); /* odd: being written */
	s->wanted = *shape;
	s->wanted_ms = (int64_t)exec_daemon_mono_ms();
	__atomic_add_fetch(&s->wanted_seq, 1, __ATOMIC_ACQ_REL);
}

/* Worker k's last wanted shape, read consistently; false when it has
 * none or it is being written. */
static bool wanted_read(const struct worker *w, int k, struct kernel_shape *shape, int64_t *at)
{
	const struct kernel_pool_slot *s = slot_of(w, k);
	unsigned seq = __atomic_load_n(&s->wanted_seq, __ATOMIC_ACQUIRE);
	if (seq == 0 || (seq & 1))
		return false;
	*shape = s->wanted;
	*at = s->wanted_ms;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->wanted_seq, __ATOMIC_ACQUIRE) == seq;
}

/* What the node holds ahead: every kernel (any state but none), those
 * still starting, and those of shape (when not NULL). */
struct held_count {
	unsigned all, starting, of_shape;
};

static struct held_count held(const struct worker *w, const struct kernel_shape *shape)
{
	struct held_count h = {0, 0, 0};
	for (int k = 0; k < w->d->workers; k++) {
		const struct kernel_pool_slot *s = slot_of(w, k);
		int st = state_load(s);
		if (st == KPOOL_NONE)
			continue;
		h.all++;
		h.starting += st == KPOOL_WARMING;
		if (shape && (st == KPOOL_WARMING || st == KPOOL_READY) && shape_eq(&s->warm, shape))
			h.of_shape++;
	}
	return h;
}

/* The demand for shape: how many workers' last kernel had it, within
 * kernel_pool_idle (each worker remembers one); *last when it was
 * last wanted. */
static unsigned demand(const struct worker *w, const struct kernel_shape *shape, int64_t now, int64_t *last)
{
	unsigned n = 0;
	*last = -1;
	for (int k = 0; k < w->d->workers; k++) {
		struct kernel_shape sh;
		int64_t t;
		if (!wanted_read(w, k, &sh, &t) || now - t > (int64_t)w->d->cfg->kernel_pool_idle_ms ||
		    !shape_eq(&sh, shape))
			continue;
		n++;
		if (t > *last)
			*last = t;
	}
	return n;
}

/* demand(), where executor.kernel_pool is set: without it only a
 * course's ask starts kernels ahead. */
static unsigned pool_demand(const struct worker *w, const struct kernel_shape *shape, int64_t now, int64_t *last)
{
	*last = -1;
	return w->d->cfg->kernel_pool > 0 ? demand(w, shape, now, last) : 0;
}

/* The kernels courses asked to have warm now, read once per tick. */
struct asks {
	int n; /* -1: the table was being written (decide nothing by it) */
	struct kernel_warm_ask a[KERNEL_WARM_ASKS_MAX];
};

/* Worker k's job, when it is a kernel placed by memory (its token,
 * copied out of the shared slot and parsed). */
static bool kernel_of(const struct worker *w, int k, struct gv_queue_token *t)
{
	char token[GV_QUEUE_TOKEN_MAX + 1];
	memcpy(token, (const char *)w->d->slots[k].token, sizeof(token));
	token[GV_QUEUE_TOKEN_MAX] = '\0';
	struct gv_err err;
	return token[0] && gv_queue_token_parse(token, strlen(token), t, &err) == 0 && t->kernel_mb > 0;
}

/* The kernels of tenant placed on this node now. */
static unsigned tenant_kernels_here(const struct worker *w, const char *tenant)
{
	unsigned n = 0;
	struct gv_queue_token t;
	for (int k = 0; k < w->d->workers; k++)
		n += kernel_of(w, k, &t) && !strcmp(t.tid, tenant);
	return n;
}

/* What a course asked to have warm for shape; with less_running, less
 * its kernels already running here (the class that came needs no more
 * started; but one held is not dropped for them: a kernel being handed to
 * its holder shows as running first). */
static unsigned asked_for(const struct worker *w, const struct asks *as, const struct kernel_shape *shape,
			  bool less_running)
{
	for (int i = 0; i < as->n; i++)
		if (shape_eq(&as->a[i].shape, shape)) {
			unsigned here = less_running ? tenant_kernels_here(w, shape->tenant) : 0;
			return as->a[i].kernels > here ? as->a[i].kernels - here : 0;
		}
	return 0;
}

/* How many kernels the node may hold ahead: kernel_pool, plus what
 * courses asked for. */
static unsigned pool_cap(const struct worker *w, const struct asks *as)
{
	unsigned cap = w->d->cfg->kernel_pool > 0 ? (unsigned)w->d->cfg->kernel_pool : 0;
	for (int i = 0; i < as->n; i++)
		cap += as->a[i].kernels;
	return cap;
}

/* On a kernel node, the memory its kernels hold: those placed here (the
 * ":k<mb>" of the workers' tokens) and those started ahead. */
static uint64_t kernel_mb_in_use(const struct worker *w)
{
	uint64_t mb = 0;
	for (int k = 0; k < w->d->workers; k++) {
		struct gv_queue_token t;
		if (kernel_of(w, k, &t))
			mb += t.kernel_mb;
		const struct kernel_pool_slot *s = slot_of(w, k);
		int st = state_load(s);
		if (st == KPOOL_WARMING || st == KPOOL_READY || st == KPOOL_CLAIMED)
			mb += s->warm.memory_mb;
	}
	return mb;
}

static bool memory_for(const struct worker *w, const struct kernel_shape *shape)
{
	int offered = w->d->cfg->kernel_memory_mb;
	return offered <= 0 || kernel_mb_in_use(w) + shape->memory_mb <= (uint64_t)offered;
}

/* The shape whose demand (kernels wanted lately, or asked for by a course)
 * exceeds what is held by most, the most recently wanted first. */
static void consider(const struct worker *w, const struct asks *as, const struct kernel_shape *sh, int64_t now,
		     struct kernel_shape *out, unsigned *best_gap, int64_t *best_at)
{
	int64_t last;
	unsigned want = pool_demand(w, sh, now, &last);
	unsigned asked = asked_for(w, as, sh, true);
	if (asked > want)
		want = asked;
	unsigned have = held(w, sh).of_shape;
	if (want <= have || !memory_for(w, sh))
		return;
	if (want - have > *best_gap || (want - have == *best_gap && last > *best_at)) {
		*out = *sh;
		*best_gap = want - have;
		*best_at = last;
	}
}

/* The shape to start a kernel ahead for: none while one is starting on
 * the node (one at a time: starts running side by side only slow each
 * other and the node's jobs down) or while it holds pool_cap; else the
 * one consider() finds. */
static bool shape_to_warm(const struct worker *w, const struct asks *as, int64_t now, struct kernel_shape *out)
{
	struct held_count h = held(w, NULL);
	if (as->n < 0 || h.starting > 0 || h.all >= pool_cap(w, as))
		return false;
	int64_t best_at = -1;
	unsigned best_gap = 0;
	for (int k = 0; k < w->d->workers; k++) {
		struct kernel_shape sh;
		int64_t t;
		if (wanted_read(w, k, &sh, &t))
			consider(w, as, &sh, now, out, &best_gap, &best_at);
	}
	for (int i = 0; i < as->n; i++)
		consider(w, as, &as->a[i].shape, now, out, &best_gap, &best_at);
	return best_gap > 0;
}

static void drop_warm(struct worker *w, const char *why)
{
	gv_info(&w->d->log, "worker %d: kernel started ahead dropped (%s)", w->index, why);
	exec_gate_give(w, EXEC_GATE_START);
	exec_kernel_warm_free(w->warm);
	w->warm = NULL;
	w->warm_over_ms = 0;
}

/* Starts a kernel ahead for the most wanted shape not held yet. */
static void warm_start(struct worker *w, const struct asks *as, int64_t now)
{
	struct kernel_pool_slot *s = slot_of(w, w->index);
	struct kernel_shape shape;
	if (now < w->warm_retry_ms || !shape_to_warm(w, as, now, &shape))
		return;
	struct gv_err err;
	/* The tenant's policy of now: a network means no kernel ahead. */
	int loaded = exec_daemon_load_egress(w, shape.tenant, &err);
	if (w->d->cfg->kernel_memory_mb > 0)
		gv_pg_release(w->pg); /* not held through the start (node_gate.c) */
	if (loaded != 0 || w->egress_granted) {
		w->warm_retry_ms = now + RETRY_AFTER_FAIL_MS;
		return;
	}
	s->warm = shape;
	if (!state_cas(s, KPOOL_NONE, KPOOL_WARMING))
		return;
	/* Other idle workers may have decided at once: never more than
	 * pool_cap, one starting (all may back off; the next turn tries
	 * again). */
	struct held_count h = held(w, NULL);
	/* On a kernel node, a place of its start gate too: kernels started
	 * for a class wait behind none started ahead (node_gate.c). */
	const struct exec_daemon_config *cfg = w->d->cfg;
	if (h.all > pool_cap(w, as) || h.starting > 1 ||
	    (cfg->kernel_memory_mb > 0 && !exec_gate_take(w, EXEC_GATE_START, exec_daemon_start_places(cfg), 0))) {
		state_cas(s, KPOOL_WARMING, KPOOL_NONE);
		return;
	}
	struct exec_kernel_spec spec = {.tenant = shape.tenant, .lifetime_s = shape.lifetime_s,
					.idle_s = shape.idle_s, .memory_mb = shape.memory_mb, .cpu_pct = shape.cpu_pct};
	w->warm = kernel_images_restore(w, &spec, cfg->kernel_pool_idle_ms);
	if (!w->warm && exec_kernel_warm_start(&w->engine, w->bridge, w->bridge_len, &spec, cfg->kernel_pool_idle_ms,
					       &w->warm, &err) != 0) {
		gv_warn(&w->d->log, "worker %d: starting a kernel ahead: %s", w->index, err.msg);
		exec_gate_give(w, EXEC_GATE_START);
		w->warm_retry_ms = now + RETRY_AFTER_FAIL_MS;
		w->warm = NULL;
		/* Claimed meanwhile: the handed kernel starts fresh here. */
		state_cas(s, KPOOL_WARMING, KPOOL_NONE);
		return;
	}
	w->warm_made_ms = now;
	w->warm_shape = shape;
	gv_info(&w->d->log, "worker %d: kernel started ahead in %s for tenant %s%s", w->index,
		exec_kernel_warm_sandbox(w->warm), shape.tenant,
		exec_kernel_warm_restored(w->warm) ? " (restored from the node's image)" : "");
}

/* The memory budgets of the kernels wanted lately or asked for, without
 * repeats; how many went into mb. */
static size_t wanted_budgets(const struct worker *w, const struct asks *as, int64_t now, uint32_t *mb, size_t cap)
{
	size_t n = 0;
	for (int k = 0; k < w->d->workers + as->n; k++) {
		struct kernel_shape sh;
		int64_t t;
		if (k < w->d->workers) {
			if (!wanted_read(w, k, &sh, &t) || now - t > (int64_t)w->d->cfg->kernel_pool_idle_ms)
				continue;
		} else {
			sh = as->a[k - w->d->workers].shape;
		}
		size_t i = 0;
		while (i < n && mb[i] != sh.memory_mb)
			i++;
		if (i == n && n < cap)
			mb[n++] = sh.memory_mb;
	}
	return n;
}

/* Whether no worker after this one holds a kernel of this one's shape
 * (any shape, when !same_shape): of several too many, the last drops its
 * own. */
static bool last_holder(const struct worker *w, bool same_shape)
{
	for (int k = w->index + 1; k < w->d->workers; k++) {
		const struct kernel_pool_slot *s = slot_of(w, k);
		int st = state_load(s);
		if ((st == KPOOL_WARMING || st == KPOOL_READY) && (!same_shape || shape_eq(&s->warm, &w->warm_shape)))
			return false;
	}
	return true;
}

/* The held kernel: its start, its death, its expiry. */
static void warm_watch(struct worker *w, const struct asks *as, int64_t now)
{
	struct kernel_pool_slot *s = slot_of(w, w->index);
	struct gv_err err;
	int r = exec_kernel_warm_step(w->warm, &err);
	if (r == 1) {
		if (state_cas(s, KPOOL_WARMING, KPOOL_READY))
			gv_info(&w->d->log, "worker %d: kernel started ahead is ready", w->index);
		exec_gate_give(w, EXEC_GATE_START); /* it answers: started */
	}
	const char *why = r < 0 ? err.msg : NULL;
	if (!why && now - w->warm_made_ms > (int64_t)w->d->cfg->kernel_pool_idle_ms)
		why = "unused for executor.kernel_pool_idle";
	int64_t last;
	unsigned want = pool_demand(w, &w->warm_shape, now, &last);
	unsigned asked = as->n >= 0 ? asked_for(w, as, &w->warm_shape, false) : 0;
	if (asked > want)
		want = asked;
	if (!why && as->n >= 0 && want == 0)
		why = "its shape was not wanted for executor.kernel_pool_idle, nor asked for";
	if (!why && as->n >= 0 && held(w, &w->warm_shape).of_shape > want && last_holder(w, true))
		why = "more are held for its shape than wanted";
	/* Kernels just placed count beside the held ones they are about to
	 * adopt until the hand-over: only an excess that outlasts one is
	 * real (it dropped a class's kernel at its claim). */
	int offered = w->d->cfg->kernel_memory_mb;
	bool over = offered > 0 && kernel_mb_in_use(w) > (uint64_t)offered;
	if (!over)
		w->warm_over_ms = 0;
	else if (!w->warm_over_ms)
		w->warm_over_ms = now;
	if (!why && over && now - w->warm_over_ms >= HANDOFF_WAIT_MS && last_holder(w, false))
		why = "the kernels placed on this node need its memory";
	if (!why)
		return;
	if (state_cas(s, KPOOL_WARMING, KPOOL_NONE) || state_cas(s, KPOOL_READY, KPOOL_NONE)) {
		drop_warm(w, why);
		if (r < 0)
			w->warm_retry_ms = now + RETRY_AFTER_FAIL_MS;
	} else if (r < 0) {
		/* Being handed a kernel: it starts fresh instead. */
		drop_warm(w, why);
	}
}

void kernel_pool_tick(struct worker *w)
{
	const struct kernel_warm_asks *t = w->d->warm_asks;
	/* Images serve kernels with no pool too: made while workers idle. */
	if (w->d->cfg->kernel_pool <= 0 && !w->warm && !(t && __atomic_load_n(&t->n, __ATOMIC_RELAXED)) &&
	    !w->d->cfg->kernel_images)
		return;
	struct kernel_pool_slot *s = slot_of(w, w->index);
	int st = state_load(s);
	if (st == KPOOL_HANDED) {
		/* The token is ours (the supervisor hands it back if we die)
		 * before the taker lets go of it. */
		struct worker_slot *ws = &w->d->slots[w->index];
		snprintf(ws->token, sizeof(ws->token), "%s", s->handoff);
		if (!state_cas(s, KPOOL_HANDED, KPOOL_ADOPTED)) {
			ws->token[0] = '\0';
			return;
		}
		struct exec_kernel_warm *warm = w->warm;
		struct kernel_shape shape = s->warm;
		w->warm = NULL;
		exec_daemon_kernel_run_handed(w, ws->token, &shape, warm);
		ws->token[0] = '\0';
		state_cas(s, KPOOL_ADOPTED, KPOOL_NONE); /* the taker did not acknowledge */
		return;
	}
	if (st == KPOOL_CLAIMED || st == KPOOL_HANDED)
		return; /* the taker is writing */
	int64_t now = (int64_t)exec_daemon_mono_ms();
	if (w->warm && st == KPOOL_NONE) {
		/* A taker gave up on it: held again. */
		if (!state_cas(s, KPOOL_NONE, KPOOL_WARMING)) {
			drop_warm(w, "slot changed");
			return;
		}
	}
	struct asks as;
	as.n = kernel_warm_asks_read(w->d, as.a);
	if (w->warm) {
		warm_watch(w, &as, now);
		return;
	}
	uint32_t budgets[KERNEL_WARM_ASKS_MAX + DAEMON_MAX_WORKERS + DAEMON_MAX_BURST];
	if (st == KPOOL_NONE && as.n >= 0 &&
	    kernel_images_tick(w, budgets, wanted_budgets(w, &as, now, budgets, sizeof(budgets) / sizeof(budgets[0]))))
		return;
	if (st == KPOOL_NONE && pool_cap(w, &as) > 0)
		warm_start(w, &as, now);
}

bool kernel_pool_busy(const struct worker *w)
{
	return w->warm != NULL || state_load(slot_of(w, w->index)) != KPOOL_NONE;
}

bool kernel_pool_handover_pending(const struct worker *w)
{
	int st = state_load(slot_of(w, w->index));
	return st == KPOOL_CLAIMED || st == KPOOL_HANDED;
}

struct exec_kernel_warm *kernel_pool_take_own(struct worker *w, const struct kernel_shape *shape)
{
	struct kernel_pool_slot *s = slot_of(w, w->index);
	if (!w->warm || !shape_eq(&w->warm_shape, shape))
		return NULL;
	if (!state_cas(s, KPOOL_READY, KPOOL_NONE) && !state_cas(s, KPOOL_WARMING, KPOOL_NONE))
		return NULL;
	struct exec_kernel_warm *warm = w->warm;
	w->warm = NULL;
	return warm;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Claims worker k's kernel if it is of shape and in state `want`, its
 * worker idle (a holder busy with a job would keep the kernel waiting). */
static bool claim_slot(struct worker *w, int k, int want, const struct kernel_shape *shape)
{
	struct kernel_pool_slot *s = slot_of(w, k);
	if (k == w->index || state_load(s) != want || ((const volatile char *)w->d->slots[k].token)[0] ||
	    !shape_eq(&s->warm, shape) || !state_cas(s, want, KPOOL_CLAIMED))
		return false;
	/* s->warm cannot change now (its holder writes it only in NONE):
	 * compared again, in full, as it is now. */
	if (!shape_eq(&s->warm, shape)) {
		__atomic_store_n(&s->warm_state, want, __ATOMIC_RELEASE);
		return false;
	}
	return true;
}

int kernel_pool_hand_over(struct worker *w, const char *token, const struct kernel_shape *shape)
{
	int k = -1;
	for (int i = 0; i < w->d->workers && k < 0; i++)
		if (claim_slot(w, i, KPOOL_READY, shape))
			k = i;
	for (int i = 0; i < w->d->workers && k < 0; i++)
		if (claim_slot(w, i, KPOOL_WARMING, shape))
			k = i;
	if (k < 0)
		return -1;
	struct kernel_pool_slot *s = slot_of(w, k);
	snprintf(s->handoff, sizeof(s->handoff), "%s", token);
	__atomic_store_n(&s->warm_state, KPOOL_HANDED, __ATOMIC_RELEASE);
	uint64_t until = exec_daemon_mono_ms() + HANDOFF_WAIT_MS;
	for (;;) {
		int st = state_load(s);
		if (st == KPOOL_ADOPTED) {
			state_cas(s, KPOOL_ADOPTED, KPOOL_NONE);
			return k;
		}
		if (st != KPOOL_HANDED)
			return -1; /* its worker died and was replaced */
		if (exec_daemon_mono_ms() >= until) {
			if (state_cas(s, KPOOL_HANDED, KPOOL_NONE))
				return -1;
			continue; /* adopted just now */
		}
		sleep_ms(2);
	}
}

void kernel_pool_drop(struct worker *w)
{
	struct kernel_pool_slot *s = slot_of(w, w->index);
	if (!state_cas(s, KPOOL_WARMING, KPOOL_NONE))
		state_cas(s, KPOOL_READY, KPOOL_NONE);
	exec_kernel_warm_free(w->warm);
	w->warm = NULL;
}
