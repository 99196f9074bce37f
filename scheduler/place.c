/* Placement: weighted fair share (scheduler/fairshare.h) picks the
 * tenant, the node with the most free slots that offers the job's language
 * and GPUs takes its head job; burst slots only to tenants below their
 * share; notebook kernels go to kernel nodes by memory when there are any;
 * a head that waits for GPUs, kernel memory or a slot lets the tenant's
 * jobs that need something else pass. Then the pass's running counts are
 * published. */
#include "scheduler/sched_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/fairshare.h"

static bool lang_offered(const struct sched_node *n, const char *lang)
{
	size_t len = strlen(lang);
	for (const char *p = n->languages; *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == len && strncmp(p, lang, len) == 0)
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

/* Free slots of a node: regular ones, and with burst_ok its burst ones
 * too (scheduler/fairshare.h says who may take those). */
unsigned sched_node_free(const struct sched_node *n, bool burst_ok)
{
	unsigned cap = n->capacity + (burst_ok ? n->burst : 0);
	return n->used < cap ? cap - n->used : 0;
}

/* Whether a kernel node (executor.kernel_memory_mb) registered: then every
 * notebook kernel goes to one, admitted by memory, and none takes a judging
 * slot; with none, a kernel takes a slot as a submission does. */
static bool any_kernel_node(const struct sched *s)
{
	for (size_t i = 0; i < s->n_nodes; i++)
		if (s->nodes[i].kernel_mb > 0)
			return true;
	return false;
}

/* Whether a node of the kind that takes m is registered: a judging job
 * waits for a judging node while only kernel nodes are up (a kernel node
 * starts sooner than a judging one, which probes its languages first), and
 * is finished IE for a language only when judging nodes are up and none
 * offers it. */
static bool any_node_for(const struct sched *s, const struct sched_job *m)
{
	bool by_memory = m->kernel_mb > 0 && any_kernel_node(s);
	for (size_t i = 0; i < s->n_nodes; i++)
		if ((s->nodes[i].kernel_mb > 0) == by_memory)
			return true;
	return false;
}

/* A kernel node's memory not held by its kernels, when it has a worker free. */
static unsigned kernel_mb_free(const struct sched_node *n)
{
	if (n->used >= n->capacity || n->kernel_used_mb >= n->kernel_mb)
		return 0;
	return n->kernel_mb - n->kernel_used_mb;
}

/* Whether some kernel node could take a kernel now (a judging head that
 * waits is searched past only then: the search costs a query per job). */
static bool kernel_room(const struct sched *s)
{
	for (size_t i = 0; i < s->n_nodes; i++)
		if (s->nodes[i].kernel_mb > 0 && kernel_mb_free(&s->nodes[i]) > 0)
			return true;
	return false;
}

/* The node that can take the job: for a kernel, when kernel nodes exist,
 * the kernel node with the most memory free that fits it; otherwise the
 * judging node with the most free regular slots, else (burst_ok) the one
 * with the most free burst slots. *anyone: some node could ever take it. */
static struct sched_node *choose_node(struct sched *s, const struct sched_job *m, bool burst_ok, bool *anyone)
{
	struct sched_node *best = NULL;
	bool by_memory = m->kernel_mb > 0 && any_kernel_node(s);
	*anyone = false;
	for (size_t i = 0; i < s->n_nodes; i++) {
		struct sched_node *n = &s->nodes[i];
		if (!lang_offered(n, m->language) || n->gpus < m->gpus || (n->kernel_mb > 0) != by_memory)
			continue;
		if (by_memory) {
			if (n->kernel_mb < m->kernel_mb)
				continue;
			*anyone = true;
			if (kernel_mb_free(n) < m->kernel_mb)
				continue;
			if (!best || kernel_mb_free(n) > kernel_mb_free(best))
				best = n;
			continue;
		}
		*anyone = true;
		if (sched_node_free(n, burst_ok) == 0 || n->gpus - n->gpus_used < m->gpus)
			continue;
		if (!best || sched_node_free(n, false) > sched_node_free(best, false) ||
		    (sched_node_free(n, false) == sched_node_free(best, false) && sched_node_free(n, true) > sched_node_free(best, true)))
			best = n;
	}
	return best;
}

/* What a job waits for when it waits: a judging slot, GPUs, or a kernel
 * node's memory. */
enum job_class { CLASS_SLOT, CLASS_GPU, CLASS_KERNEL_MEMORY };

static enum job_class job_class(const struct sched *s, const struct sched_job *m)
{
	if (m->gpus > 0)
		return CLASS_GPU;
	return m->kernel_mb > 0 && any_kernel_node(s) ? CLASS_KERNEL_MEMORY : CLASS_SLOT;
}

/* A tenant whose head job waits for what it needs (GPUs, free ones on a
 * node or room in its GPU quota; a kernel node's memory; a judging slot
 * while kernel nodes have room) must not hold back its jobs that need
 * something else: the first SCHED_SKIP_AHEAD entries behind the head are
 * searched for a queued job of another class that a node can take now, and
 * that one is assigned out of order (*placed, *tok). GPU jobs never pass,
 * so a GPU job is never starved by smaller GPU jobs behind it; jobs of the
 * head's own class never pass it either. 1: one assigned; 0: none; -1:
 * failed. */
#define SCHED_SKIP_AHEAD 8
static int assign_behind_waiting_head(struct sched *s, struct sched_tenant *t, enum job_class head, bool burst_ok,
				      struct sched_node **placed, struct gv_queue_token *tok, struct gv_err *err)
{
	char tq[GV_QUEUE_KEY_MAX], last[8];
	if (gv_queue_key_tenant(tq, sizeof(tq), t->tid, err) != 0)
		return -1;
	snprintf(last, sizeof(last), "%d", SCHED_SKIP_AHEAD);
	const char *argv[] = { "LRANGE", tq, "1", last };
	redisReply *rep = sched_cmd(s, err, 4, argv);
	if (!rep)
		return -1;
	int rc = 0;
	for (size_t k = 0; k < rep->elements && rc == 0; k++) {
		const char *sid = rep->element[k]->type == REDIS_REPLY_STRING ? rep->element[k]->str : NULL;
		if (!sid || !gv_queue_sid_ok(sid))
			continue;
		struct sched_job m;
		if (sched_job_load(s, t->tid, sid, &m, err) != 0) {
			rc = -1;
			break;
		}
		if (!m.found || strcmp(m.status, "queued") != 0)
			continue;
		enum job_class c = job_class(s, &m);
		if (c == CLASS_GPU || c == head)
			continue;
		long attempts = sched_job_attempts(s, sid, err);
		if (attempts < 0) {
			rc = -1;
			break;
		}
		if (attempts >= GV_QUEUE_MAX_ATTEMPTS)
			continue; /* finished as IE when it reaches the head */
		bool anyone;
		struct sched_node *n = choose_node(s, &m, burst_ok, &anyone);
		if (!n)
			continue;
		long a = 0;
		*tok = (struct gv_queue_token){ .kernel_mb = n->kernel_mb ? m.kernel_mb : 0 };
		snprintf(tok->tid, sizeof(tok->tid), "%s", t->tid);
		snprintf(tok->sid, sizeof(tok->sid), "%s", sid);
		int ok = gv_queue_assign_behind(s->r, s->lock, tok, n->name, &a, err);
		if (ok < 0) {
			rc = -1;
			break;
		}
		if (ok == 0)
			continue;
		*placed = n;
		struct gv_log_ctx ctx = { .tenant = t->tid, .job = sid, .node = s->instance };
		gv_debug(&ctx, "assigned to %s past a job waiting at the head for %s (attempt %ld)", n->name,
			 head == CLASS_GPU ? "GPUs" : head == CLASS_KERNEL_MEMORY ? "kernel memory" : "a slot", a);
		rc = 1;
	}
	gv_redis_reply_free(rep);
	return rc;
}

/* Counts a job just assigned to n into the pass's figures: a kernel on a
 * kernel node holds memory there, not its tenant's judging share. */
static void count_assigned(struct sched_node *n, struct sched_tenant *t, struct sched_fs_tenant *f,
			   const struct gv_queue_token *tok, size_t *free_slots)
{
	n->used++;
	n->gpus_used += tok->gpus;
	n->kernel_used_mb += tok->kernel_mb;
	t->gpus_used += tok->gpus;
	f->queued--;
	if (!tok->kernel_mb) {
		f->running++;
		t->running++;
	}
	(*free_slots)--;
}

/* The tenant's next job to place: its queue head, once it is known to be
 * queued (or running: handed out again) with attempts left. 1: sid and m
 * set; 0: nothing to place now (the queue is empty, or a malformed,
 * finished or exhausted head was dropped, f's count updated); -1: failed. */
static int next_job(struct sched *s, struct sched_tenant *t, struct sched_fs_tenant *f,
		    char sid[GV_QUEUE_SID_MAX + 1], struct sched_job *m, struct gv_err *err)
{
	struct gv_log_ctx ctx = { .tenant = t->tid, .node = s->instance };
	long attempts = -1;
	int got;
	if (t->head[0]) {
		/* Once: whatever happens to it, the tenant's next pick asks. */
		memcpy(sid, t->head, GV_QUEUE_SID_MAX + 1);
		attempts = t->head_attempts;
		t->head[0] = '\0';
		got = 1;
	} else {
		got = gv_queue_peek(s->r, t->tid, sid, GV_QUEUE_SID_MAX + 1, err);
	}
	if (got < 0)
		return -1;
	if (got == 0 || !gv_queue_sid_ok(sid)) {
		if (got == 1) {
			gv_warn(&ctx, "dropping a malformed submission id from the tenant queue");
			if (gv_queue_drop_head(s->r, s->lock, t->tid, sid, err) < 0)
				return -1;
			f->queued--;
			return 0;
		}
		f->queued = 0;
		return 0;
	}
	ctx.job = sid;
	if (sched_job_load(s, t->tid, sid, m, err) != 0)
		return -1;
	if (!m->found || strcmp(m->status, "queued") != 0) {
		if (!m->found || strcmp(m->status, "running") != 0) {
			/* Finished, cancelled or gone: nothing to run. */
			if (gv_queue_drop_head(s->r, s->lock, t->tid, sid, err) < 0)
				return -1;
			gv_info(&ctx, "dropped from the queue: %s", m->found ? m->status : "not in PostgreSQL");
			f->queued--;
			return 0;
		}
	}
	if (attempts < 0)
		attempts = sched_job_attempts(s, sid, err);
	if (attempts < 0)
		return -1;
	if (attempts >= GV_QUEUE_MAX_ATTEMPTS) {
		char why[128];
		snprintf(why, sizeof(why), "the job failed %ld attempts (executors lost while running it)", attempts);
		if (sched_job_finish_ie(s, t->tid, sid, m->judged, why, err) != 0 ||
		    gv_queue_drop_head(s->r, s->lock, t->tid, sid, err) < 0)
			return -1;
		f->queued--;
		return 0;
	}
	return 1;
}

/* Assigns t's head job sid (m) to a node; or, when it waits for GPUs, one
 * of the tenant's jobs without GPUs behind it; or leaves it waiting (f
 * blocked); or finishes it as IE when no executor offers its language.
 * Updates the pass's counts. 0, or -1 when failed. */
static int place_job(struct sched *s, struct sched_tenant *t, struct sched_fs_tenant *f, bool burst_ok,
		     const char *sid, const struct sched_job *m, size_t *free_slots, struct gv_err *err)
{
	struct gv_log_ctx ctx = { .tenant = t->tid, .job = sid, .node = s->instance };
	bool anyone;
	struct sched_node *n = choose_node(s, m, burst_ok, &anyone);
	bool over_gpu_quota = t->max_gpus >= 0 && m->gpus > 0 && t->gpus_used + m->gpus > (unsigned long)t->max_gpus;
	enum job_class c = job_class(s, m);
	if (anyone && (!n || over_gpu_quota) && (c != CLASS_SLOT || kernel_room(s))) {
		struct sched_node *other = NULL;
		struct gv_queue_token tok;
		int got = assign_behind_waiting_head(s, t, c, burst_ok, &other, &tok, err);
		if (got < 0)
			return -1;
		if (got == 0) {
			f->blocked = true; /* the head keeps its place */
			return 0;
		}
		count_assigned(other, t, f, &tok, free_slots);
		return 0;
	}
	if (!n) {
		if (!anyone && any_node_for(s, m)) {
			char why[160];
			snprintf(why, sizeof(why), "no executor offers language '%s'%s", m->language,
				 m->gpus ? " with that many GPUs" : "");
			if (sched_job_finish_ie(s, t->tid, sid, m->judged, why, err) != 0 ||
			    gv_queue_drop_head(s->r, s->lock, t->tid, sid, err) < 0)
				return -1;
			f->queued--;
			return 0;
		}
		f->blocked = true; /* head-of-line waits for a fitting node */
		return 0;
	}
	if (t->max_gpus >= 0 && m->gpus > 0 && t->gpus_used + m->gpus > (unsigned long)t->max_gpus) {
		f->blocked = true;
		return 0;
	}
	long a = 0;
	struct gv_queue_token tok = { .gpus = m->gpus, .kernel_mb = n->kernel_mb ? m->kernel_mb : 0 };
	snprintf(tok.tid, sizeof(tok.tid), "%s", t->tid);
	snprintf(tok.sid, sizeof(tok.sid), "%s", sid);
	int ok = gv_queue_assign(s->r, s->lock, &tok, n->name, &a, err);
	if (ok < 0)
		return -1;
	if (ok == 0)
		return 0; /* the head changed under us: look again */
	count_assigned(n, t, f, &tok, free_slots);
	gv_debug(&ctx, "assigned to %s (attempt %ld)", n->name, a);
	return 0;
}

int sched_place(struct sched *s, struct gv_err *err)
{
	/* A kernel node's workers count as free while it has memory free;
	 * only judging nodes make the share of regular slots. */
	size_t free_slots = 0, regular = 0;
	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct sched_node *n = &s->nodes[i];
		if (n->kernel_mb > 0) {
			free_slots += kernel_mb_free(n) ? n->capacity - n->used : 0;
			continue;
		}
		free_slots += sched_node_free(n, true);
		regular += n->capacity;
	}
	if (free_slots == 0 || s->n_tenants == 0)
		return 0;
	struct sched_fs_tenant *fs = calloc(s->n_tenants, sizeof(*fs));
	if (!fs)
		return gv_err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n_tenants; i++)
		fs[i] = (struct sched_fs_tenant){
			.weight = s->tenants[i].weight,
			.running = s->tenants[i].running,
			.max_running = s->tenants[i].max_running,
			.queued = s->tenants[i].queued,
		};
	int rc = 0;
	size_t guard = free_slots * 4 + 64;
	while (free_slots > 0 && guard-- > 0) {
		/* Regular slots by weighted fair share while any is free; then
		 * the burst slots, only to tenants below their share. */
		bool regular_free = false;
		for (size_t k = 0; k < s->n_nodes && !regular_free; k++)
			regular_free = s->nodes[k].kernel_mb > 0 ? kernel_mb_free(&s->nodes[k]) > 0
								 : sched_node_free(&s->nodes[k], false) > 0;
		int i = regular_free ? sched_fairshare_pick(fs, s->n_tenants)
				     : sched_fairshare_pick_burst(fs, s->n_tenants, regular);
		if (i < 0)
			break;
		bool burst_ok = sched_fairshare_below_share(fs, s->n_tenants, (size_t)i, regular);
		struct sched_tenant *t = &s->tenants[i];
		char sid[GV_QUEUE_SID_MAX + 1];
		struct sched_job m;
		int got = next_job(s, t, &fs[i], sid, &m, err);
		if (got == 1)
			got = place_job(s, t, &fs[i], burst_ok, sid, &m, &free_slots, err);
		if (got < 0) {
			rc = -1;
			break;
		}
	}
	free(fs);
	return rc;
}

int sched_publish_running(struct sched *s, struct gv_err *err)
{
	static const char lua[] = "redis.call('DEL', KEYS[1]);"
				  "for i = 1, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1]) end;"
				  "return 1";
	size_t n = 0;
	for (size_t i = 0; i < s->n_tenants; i++)
		if (s->tenants[i].running)
			n++;
	if (n > 256)
		n = 256;
	const char **argv = calloc(4 + 2 * n, sizeof(*argv));
	char(*nums)[16] = calloc(n ? n : 1, sizeof(*nums));
	if (!argv || !nums) {
		free(argv);
		free(nums);
		return gv_err_set(err, ENOMEM, "out of memory");
	}
	int argc = 0;
	argv[argc++] = "EVAL";
	argv[argc++] = lua;
	argv[argc++] = "1";
	argv[argc++] = GV_QUEUE_RUNNING;
	size_t k = 0;
	for (size_t i = 0; i < s->n_tenants && k < n; i++) {
		if (!s->tenants[i].running)
			continue;
		snprintf(nums[k], sizeof(nums[k]), "%u", s->tenants[i].running);
		argv[argc++] = s->tenants[i].tid;
		argv[argc++] = nums[k++];
	}
	redisReply *rep = sched_cmd(s, err, argc, argv);
	free(argv);
	free(nums);
	if (!rep)
		return -1;
	gv_redis_reply_free(rep);
	return 0;
}
