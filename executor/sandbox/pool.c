/* The pool of sandboxes created ahead of demand (executor/sandbox/pool.h).
 * It stands above the engine and the sessions: they reach it only through
 * the hooks that exec_pool_attach installs in the engine
 * (struct exec_pool_hooks, engine.h). */
#include "executor/sandbox/pool.h"

#include <string.h>
#include <time.h>

#include "common/log.h"

#define POOL_RETRY_MS 5000 /* after a failed creation: runsc or the host is in trouble */

static const struct exec_pool_hooks pool_hooks = {
	.take = exec_pool_take,
	.tick = exec_pool_tick,
	.detach = exec_pool_detach,
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int exec_pool_attach(struct exec_pool *p, struct exec_engine *e, const struct exec_pool_config *cfg,
		     struct gv_err *err)
{
	memset(p, 0, sizeof(*p));
	if (cfg->size > EXEC_POOL_MAX)
		return gv_err_set(err, GV_ECONFIG, "pool size above %d", EXEC_POOL_MAX);
	if (e->pool)
		return gv_err_set(err, GV_EINTERNAL, "engine already has a pool");
	p->e = e;
	p->cfg = *cfg;
	if (!p->cfg.idle_ms)
		p->cfg.idle_ms = 60000;
	if (p->cfg.size > 0) {
		e->pool = p;
		e->pool_hooks = &pool_hooks;
	}
	return 0;
}

/* Removes held[i], keeping the order of the others. */
static struct exec_session *unhold(struct exec_pool *p, size_t i)
{
	struct exec_session *s = p->held[i];
	memmove(&p->held[i], &p->held[i + 1], (p->n_held - i - 1) * sizeof(p->held[0]));
	p->n_held--;
	return s;
}

static void destroy(struct exec_pool *p, size_t i)
{
	exec_session_close(unhold(p, i));
}

static void note_wanted(struct exec_pool *p, const struct exec_sandbox_shape *shape)
{
	size_t i = 0;
	while (i < p->n_wanted && !exec_shape_equal(&p->wanted[i].shape, shape))
		i++;
	if (i == p->n_wanted) {
		/* A new shape: the least recently wanted one makes room. */
		if (p->n_wanted < p->cfg.size)
			p->n_wanted++;
		i = p->n_wanted - 1;
	}
	memmove(&p->wanted[1], &p->wanted[0], i * sizeof(p->wanted[0]));
	p->wanted[0].shape = *shape;
	p->wanted[0].last_wanted = now_ms();
}

struct exec_session *exec_pool_take(struct exec_pool *p, const struct exec_sandbox_shape *shape)
{
	note_wanted(p, shape);
	for (size_t i = 0; i < p->n_held; i++)
		if (exec_shape_equal(exec_session_shape(p->held[i]), shape)) {
			p->stats.hits++;
			return unhold(p, i);
		}
	p->stats.misses++;
	return NULL;
}

static bool is_wanted(const struct exec_pool *p, const struct exec_sandbox_shape *shape)
{
	for (size_t i = 0; i < p->n_wanted; i++)
		if (exec_shape_equal(&p->wanted[i].shape, shape))
			return true;
	return false;
}

static bool is_held(const struct exec_pool *p, const struct exec_sandbox_shape *shape)
{
	for (size_t i = 0; i < p->n_held; i++)
		if (exec_shape_equal(exec_session_shape(p->held[i]), shape))
			return true;
	return false;
}

/* Starts creating a sandbox for the most recently wanted shape that has
 * none. */
static void refill(struct exec_pool *p, int64_t now)
{
	struct gv_err err;
	for (size_t i = 0; i < p->n_wanted; i++) {
		if (is_held(p, &p->wanted[i].shape))
			continue;
		struct exec_session *s = NULL;
		gv_err_clear(&err);
		if (exec_session_precreate(p->e, &p->wanted[i].shape, &s, &err) != 0) {
			struct gv_log_ctx ctx = {.tenant = p->wanted[i].shape.tenant};
			gv_warn(&ctx, "pool: %s", err.msg);
			p->stats.failed++;
			p->retry_after = now + POOL_RETRY_MS;
			return;
		}
		p->held[p->n_held++] = s;
		p->stats.created++;
		return;
	}
}

void exec_pool_tick(struct exec_pool *p)
{
	if (!p || !p->e || p->ticking)
		return;
	p->ticking = true;
	int64_t now = now_ms();
	struct gv_err err;
	/* Shapes nobody asked for lately are forgotten. */
	while (p->n_wanted > 0 && now - p->wanted[p->n_wanted - 1].last_wanted > (int64_t)p->cfg.idle_ms)
		p->n_wanted--;
	bool creating = false;
	for (size_t i = 0; i < p->n_held;) {
		struct exec_session *s = p->held[i];
		gv_err_clear(&err);
		int st = exec_session_precreate_poll(s, &err);
		if (st < 0) {
			struct gv_log_ctx ctx = {.tenant = exec_session_shape(s)->tenant, .sandbox = exec_session_id(s)};
			gv_warn(&ctx, "pool: %s", err.msg);
			p->stats.failed++;
			p->retry_after = now + POOL_RETRY_MS;
			destroy(p, i);
			continue;
		}
		if (st == 1 && (!is_wanted(p, exec_session_shape(s)) ||
				now - exec_session_created_ms(s) > (int64_t)p->cfg.idle_ms)) {
			p->stats.expired++;
			destroy(p, i);
			continue;
		}
		creating |= st == 0;
		i++;
	}
	/* Refill one at a time, and only between jobs: a creation costs
	 * ~150 ms of CPU that a running job of this worker should not share.
	 * Not held back by tear-downs in flight: a job that comes right after
	 * the last one should find its sandbox (being) created, and the
	 * finished sandbox's `runsc delete` was already started by its close
	 * (exec_session_close). */
	if (!creating && p->e->n_open == 0 && now >= p->retry_after && p->n_held < p->cfg.size &&
	    (!p->cfg.has_spare || p->cfg.has_spare(p->cfg.spare_arg)))
		refill(p, now);
	p->ticking = false;
}

void exec_pool_detach(struct exec_pool *p)
{
	if (!p || !p->e)
		return;
	/* Detached first: the closes below poll the engine, which must not
	 * refill a pool being emptied. */
	if (p->e->pool == p) {
		p->e->pool = NULL;
		p->e->pool_hooks = NULL;
	}
	while (p->n_held > 0)
		destroy(p, p->n_held - 1);
	p->e = NULL;
	p->n_wanted = 0;
}
