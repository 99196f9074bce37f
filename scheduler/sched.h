/* gavel-scheduler's library: leader election with a fenced lock, the
 * executor registry (heartbeats, dead nodes' work back to the front of its
 * tenants' queues), weighted fair share (scheduler/fairshare.h) and
 * placement onto node queues, the attempt limit (a job handed out
 * GV_QUEUE_MAX_ATTEMPTS times and not finished is finished as IE) and the
 * reconciler that re-enqueues what PostgreSQL shows unfinished but Redis
 * lost. Key names and atomic steps are common/queue.h's.
 *
 * Slots: a node's regular slots (executor.max_parallel) go by weighted fair
 * share; its burst slots (executor.burst_slots) only to tenants below their
 * share, so a newcomer does not wait behind a backlogged tenant.
 * GPUs: a job asking for N is placed only on a node with N free (counted
 * from the job tokens of its lists, so a dead node's re-queued jobs free
 * theirs) and while the tenant's GPUs in use stay within max_gpus; else it
 * waits at the head of its queue, and the tenant's jobs without GPUs behind
 * it are placed past it. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"

struct sched_config {
	int log_level;            /* enum gv_log_level */
	char *database_url;         /* database.service_url, else database.url */
	char *database_owner_url;   /* database.url (unused unless service_url empty) */
	uint64_t db_connect_timeout_ms;
	uint64_t db_statement_timeout_ms;
	char *redis_url;
	uint64_t redis_connect_timeout_ms;
	uint64_t redis_command_timeout_ms;
	uint64_t node_heartbeat_timeout_ms;
	uint64_t leader_lock_ttl_ms;
	uint64_t tick_interval_ms;
	uint64_t wake_min_interval_ms;
	uint64_t reconcile_interval_ms;
	uint64_t reconcile_min_age_ms;
	uint64_t retention_interval_ms; /* 0: no retention job */
	char *instance;             /* empty: host name + pid */
};

extern const struct gv_config_option sched_config_table[];
extern const size_t sched_config_table_len;

struct sched;

/* Connects to Redis and PostgreSQL (with retries). cfg is borrowed for
 * the scheduler's lifetime; sched_run writes its reloadable options when
 * the daemon is asked to reload (SIGHUP, common/daemon.h). */
struct sched *sched_new(struct sched_config *cfg, struct gv_err *err) GV_MUST_CHECK;
/* Releases the lock if held; NULL-safe. */
void sched_free(struct sched *s);

/* Runs until *stop becomes non-zero: standby (trying the lock every
 * ttl/3) or leader (a tick every tick_interval, and at once when a job
 * is queued while a slot is free or a job ends: common/queue.h's wake-up
 * lists; the lock renewed every ttl/3, stepping down when a renewal fails).
 * Errors of one tick are logged and retried; it never returns early because
 * of Redis or PostgreSQL. A reload asked by SIGHUP is applied between two
 * passes (gv_daemon_reload). */
void sched_run(struct sched *s, volatile sig_atomic_t *stop);

/* One leader tick (exposed for tests): registry, placement, and the
 * reconciler when due. -1 with err on a Redis/PostgreSQL failure or when
 * fenced (err->code GV_EQUEUE_FENCED: the caller steps down). */
int sched_tick(struct sched *s, struct gv_err *err) GV_MUST_CHECK;
bool sched_is_leader(const struct sched *s);
