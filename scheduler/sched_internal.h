/* Private to scheduler/: the scheduler's state and the steps of a leader
 * tick, each in the file of its concern: snapshot.c (what Redis holds
 * now, dead executors), place.c (fair-share placement), jobs.c (a job's
 * row in PostgreSQL, finishing it as IE), reconcile.c, retention.c;
 * sched.c runs the leader lock and the loop. */
#pragma once

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/jobspec.h"
#include "common/log.h"
#include "common/pg.h"
#include "common/queue.h"
#include "common/redis.h"
#include "scheduler/sched.h"

#define SCHED_MAX_NODES 1024
#define SCHED_MAX_TENANTS 4096
#define SCHED_LANGS_MAX 1024
#define SCHED_RECONCILE_ROWS 10000

struct sched_node {
	char name[GV_QUEUE_NODE_MAX + 1];
	unsigned capacity, burst, used, gpus, gpus_used;
	/* A kernel node (kernel_mb > 0, executor.kernel_memory_mb) runs only
	 * notebook kernels, admitted by the memory they hold (kernel_used_mb,
	 * summed from their tokens) and by its workers (capacity). */
	unsigned kernel_mb, kernel_used_mb;
	char languages[SCHED_LANGS_MAX];
};

struct sched_tenant {
	char tid[GV_QUEUE_TID_MAX + 1];
	unsigned running, queued, weight, max_running;
	long max_gpus; /* -1: no cap */
	unsigned gpus_used;
	bool blocked, backlogged;
	/* The queue's head and its attempts as the pass's snapshot read them
	 * ("": not read, or used already: ask Redis). */
	char head[GV_QUEUE_SID_MAX + 1];
	long head_attempts;
};

struct sched {
	struct sched_config *cfg; /* written only by a reload, between passes */
	struct gv_redis *r;
	struct gv_pg *pg;
	char instance[128];
	char lock[256];
	bool leader;
	uint64_t last_renew_ms, last_renew_ok_ms, next_reconcile_ms;
	/* Retention: a pass walks the tenants in id order over as many ticks
	 * as it needs (cursor: the last tenant done, "" before the first). */
	uint64_t next_retention_ms;
	bool retention_active;
	char retention_cursor[40];
	int64_t retention_deleted;
	struct sched_node *nodes;
	size_t n_nodes;
	struct sched_tenant *tenants;
	size_t n_tenants;
	struct gv_log_ctx log;
};

struct sched_job {
	bool found;
	char status[16];
	char language[GV_JOBSPEC_LANGUAGE_MAX + 1];
	unsigned gpus;
	unsigned kernel_mb; /* a notebook kernel: its memory budget (0: not a kernel) */
	bool judged;
};

/* Monotonic clock, ms. */
uint64_t sched_mono_ms(void);
/* One Redis command on the scheduler's connection; the reply is the
 * caller's (gv_redis_reply_free), NULL with err on failure. */
redisReply *sched_cmd(struct sched *s, struct gv_err *err, int argc, const char **argv);
/* s as an unsigned no larger than max; dflt when empty, negative or not a
 * number. */
unsigned sched_to_uint(const char *s, unsigned dflt, unsigned max);

/* snapshot.c: fills s->nodes and s->tenants for a pass; dead executors'
 * jobs go back to the front of their queues. */
int sched_scan(struct sched *s, struct gv_err *err);

/* jobs.c */
int sched_job_load(struct sched *s, const char *tid, const char *sid, struct sched_job *m, struct gv_err *err);
int sched_job_finish_ie(struct sched *s, const char *tid, const char *sid, bool judged, const char *why,
			struct gv_err *err);
/* The job's assignments so far (gavel:attempts); -1 on failure. */
long sched_job_attempts(struct sched *s, const char *sid, struct gv_err *err);

/* place.c */
unsigned sched_node_free(const struct sched_node *n, bool burst_ok);
int sched_place(struct sched *s, struct gv_err *err);
/* Publishes the running counts of the pass to gavel:running. */
int sched_publish_running(struct sched *s, struct gv_err *err);

/* reconcile.c: re-enqueues what PostgreSQL shows unfinished and Redis
 * lost. */
int sched_reconcile(struct sched *s, struct gv_err *err);

/* retention.c: one slice of a retention pass, at most budget_ms. */
int sched_retention_step(struct sched *s, uint64_t budget_ms, struct gv_err *err);
