/* The scheduler loop (scheduler/sched.h): the leader lock (taken,
 * renewed every third of its lifetime, given up when a renewal fails or a
 * script is fenced) and the tick, whose steps live in snapshot.c,
 * place.c, reconcile.c and retention.c (sched_internal.h). Everything the leader changes in
 * Redis goes through the fenced scripts of common/queue.c, so a leader that
 * lost its lock (a long pause, a partition) cannot move a job after its
 * successor took over. The leader keeps no state between ticks that Redis
 * does not hold: running counts are recomputed from the node lists on every
 * tick, so a crash at any point leaves nothing to repair. */
#include "scheduler/sched_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/backoff.h"
#include "common/daemon.h"

uint64_t sched_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct sched *sched_new(struct sched_config *cfg, struct gv_err *err)
{
	struct sched *s = calloc(1, sizeof(*s));
	if (!s) {
		gv_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	s->cfg = cfg;
	s->nodes = calloc(SCHED_MAX_NODES, sizeof(*s->nodes));
	s->tenants = calloc(SCHED_MAX_TENANTS, sizeof(*s->tenants));
	if (!s->nodes || !s->tenants) {
		sched_free(s);
		gv_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	if (cfg->instance && *cfg->instance) {
		snprintf(s->instance, sizeof(s->instance), "%s", cfg->instance);
	} else {
		char host[64] = "host";
		gethostname(host, sizeof(host) - 1);
		snprintf(s->instance, sizeof(s->instance), "%s-%ld", host, (long)getpid());
	}
	s->log.node = s->instance;
	const char *url = cfg->database_url && *cfg->database_url ? cfg->database_url : cfg->database_owner_url;
	if (!url || !*url) {
		sched_free(s);
		gv_err_set(err, GV_ECONFIG, "database.service_url (or database.url) is required");
		return NULL;
	}
	struct gv_redis_opts ro = {
		.url = cfg->redis_url,
		.connect_timeout_ms = (int)cfg->redis_connect_timeout_ms,
		.command_timeout_ms = (int)cfg->redis_command_timeout_ms,
		.max_attempts = 3,
	};
	struct gv_pg_opts po = {
		.url = url,
		.connect_timeout_s = (int)((cfg->db_connect_timeout_ms + 999) / 1000),
		.statement_timeout_ms = (int)cfg->db_statement_timeout_ms,
		.max_attempts = 3,
	};
	if (!(s->r = gv_redis_new(&ro, err))) {
		gv_err_prefix(err, "redis");
		sched_free(s);
		return NULL;
	}
	if (!(s->pg = gv_pg_new(&po, err))) {
		gv_err_prefix(err, "postgresql");
		sched_free(s);
		return NULL;
	}
	return s;
}

void sched_free(struct sched *s)
{
	if (!s)
		return;
	if (s->leader && s->r) {
		struct gv_err err;
		if (gv_queue_lock_release(s->r, s->lock, &err) != 0)
			gv_warn(&s->log, "releasing the leader lock: %s", err.msg);
	}
	gv_redis_free(s->r);
	gv_pg_free(s->pg);
	free(s->nodes);
	free(s->tenants);
	free(s);
}

bool sched_is_leader(const struct sched *s)
{
	return s->leader;
}

redisReply *sched_cmd(struct sched *s, struct gv_err *err, int argc, const char **argv)
{
	return gv_redis_commandv(s->r, argc, argv, NULL, err);
}

unsigned sched_to_uint(const char *s, unsigned dflt, unsigned max)
{
	if (!s || !*s)
		return dflt;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || v > max || s[0] == '-')
		return dflt;
	return (unsigned)v;
}

int sched_tick(struct sched *s, struct gv_err *err)
{
	if (sched_scan(s, err) != 0 || sched_place(s, err) != 0 || sched_publish_running(s, err) != 0)
		return -1;
	uint64_t m = sched_mono_ms();
	if (m >= s->next_reconcile_ms) {
		s->next_reconcile_ms = m + s->cfg->reconcile_interval_ms;
		if (sched_reconcile(s, err) != 0) {
			gv_err_prefix(err, "reconciler");
			return -1;
		}
	}
	if (s->cfg->retention_interval_ms > 0 && (s->retention_active || m >= s->next_retention_ms)) {
		if (!s->retention_active)
			s->next_retention_ms = m + s->cfg->retention_interval_ms;
		uint64_t budget = s->cfg->leader_lock_ttl_ms / 6 ? s->cfg->leader_lock_ttl_ms / 6 : 1;
		if (sched_retention_step(s, budget, err) != 0) {
			/* Start over at the next period; the batches done stay done. */
			s->retention_active = false;
			gv_err_prefix(err, "retention");
			return -1;
		}
	}
	return 0;
}

static void sleep_until(uint64_t deadline, volatile sig_atomic_t *stop)
{
	while (!*stop) {
		uint64_t now = sched_mono_ms();
		if (now >= deadline)
			return;
		uint64_t d = deadline - now;
		gv_backoff_sleep_ms((long)(d > 100 ? 100 : d));
	}
}

/* Between passes: until the next tick, or earlier when a job is queued
 * while a slot is free or a running job ends, so that neither waits for
 * the tick; but no sooner than wake_min_interval after the last pass, so
 * that a flood of enqueues does not become a flood of passes. */
static void wait_for_wake(struct sched *s, uint64_t tick_start, volatile sig_atomic_t *stop)
{
	const struct sched_config *c = s->cfg;
	uint64_t deadline = tick_start + c->tick_interval_ms;
	bool any_free = false;
	for (size_t i = 0; i < s->n_nodes && !any_free; i++)
		any_free = sched_node_free(&s->nodes[i], true) > 0;
	while (!*stop) {
		uint64_t now = sched_mono_ms();
		if (now >= deadline)
			return;
		/* Short waits: a stop signal is seen within a second. */
		uint64_t d = deadline - now < 1000 ? deadline - now : 1000;
		struct gv_err err;
		int woken = gv_queue_wait_wake(s->r, any_free, (double)d / 1000.0, &err);
		if (woken < 0) {
			/* The next pass reports Redis's state. */
			sleep_until(deadline, stop);
			return;
		}
		if (woken == 1) {
			sleep_until(tick_start + c->wake_min_interval_ms, stop);
			return;
		}
	}
}

void sched_run(struct sched *s, volatile sig_atomic_t *stop)
{
	const struct sched_config *c = s->cfg;
	uint64_t third = c->leader_lock_ttl_ms / 3;
	uint64_t standby_poll = c->leader_lock_ttl_ms / 5 < 1000 ? c->leader_lock_ttl_ms / 5 : 1000;
	struct gv_err err;
	uint64_t last_error_log = 0;
	while (!*stop) {
		/* Between two passes: the reloadable options are read per pass. */
		if (gv_daemon_reload_asked)
			(void)gv_daemon_reload(s->cfg, sizeof(*s->cfg));
		uint64_t now = sched_mono_ms();
		if (!s->leader) {
			int got = gv_queue_lock_acquire(s->r, s->instance, (long)c->leader_lock_ttl_ms, s->lock,
							sizeof(s->lock), &err);
			if (got == 1) {
				s->leader = true;
				s->last_renew_ms = s->last_renew_ok_ms = now;
				s->next_reconcile_ms = now; /* a new leader checks at once */
				gv_info(&s->log, "now the leader (lock %s)", s->lock);
			} else {
				if (got < 0 && now - last_error_log > 5000) {
					gv_warn(&s->log, "standby: %s", err.msg);
					last_error_log = now;
				}
				sleep_until(now + standby_poll, stop);
				continue;
			}
		}
		if (now - s->last_renew_ms >= third) {
			s->last_renew_ms = now;
			int r = gv_queue_lock_renew(s->r, s->lock, (long)c->leader_lock_ttl_ms, &err);
			if (r == 1) {
				s->last_renew_ok_ms = now;
			} else if (r == 0 || now - s->last_renew_ok_ms >= c->leader_lock_ttl_ms) {
				gv_warn(&s->log, "lost the leader lock%s%s; standing by", r < 0 ? ": " : "",
					r < 0 ? err.msg : "");
				s->leader = false;
				continue;
			}
		}
		if (sched_tick(s, &err) != 0) {
			if (err.code == GV_EQUEUE_FENCED) {
				gv_warn(&s->log, "fenced: another scheduler holds the lock; standing by");
				s->leader = false;
				continue;
			}
			if (now - last_error_log > 2000) {
				gv_error(&s->log, "tick: %s", err.msg);
				last_error_log = now;
			}
			sleep_until(now + 500, stop);
			continue;
		}
		wait_for_wake(s, now, stop);
	}
}
