/* Kernels that courses asked to have warm (tenants/kernel_warm.h), shared
 * by a kernel node's supervisor with its workers, whose kernel pool
 * (kernel_pool.c) keeps that many started ahead. */
#include "executor/daemon/daemon_internal.h"

#include <string.h>
#include <sys/mman.h>

#include "executor/sandbox/cpu_ceiling.h"
#include "tenants/kernel_warm.h"

#define REFRESH_MS 5000

_Static_assert(KERNEL_WARM_ASKS_MAX == TENANT_KERNEL_WARM_ASKS_MAX, "one bound for the asks");
_Static_assert(sizeof(((struct kernel_shape *)0)->tenant) >= sizeof(((struct tenant_kernel_warm_ask *)0)->tenant),
	       "a tenant id fits a shape");

int kernel_warm_asks_map(struct daemon *d, struct gv_err *err)
{
	d->warm_asks = mmap(NULL, sizeof(*d->warm_asks), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (d->warm_asks == MAP_FAILED) {
		d->warm_asks = NULL;
		return gv_err_errno(err, "mmap");
	}
	memset(d->warm_asks, 0, sizeof(*d->warm_asks));
	return 0;
}

void kernel_warm_asks_unmap(struct daemon *d)
{
	if (d->warm_asks)
		munmap(d->warm_asks, sizeof(*d->warm_asks));
	d->warm_asks = NULL;
}

/* This node's kernel memory and that of every live kernel node with
 * workers, as the scheduler sees them (scheduler/place.c puts a kernel on
 * the kernel node with the most memory free, so a course's kernels spread
 * by memory).
 * ARGV: the liveness bound (ms), this node's name. */
static const char NODES_LUA[] =
	GV_QUEUE_LUA_NOW
	"local mine, total = 0, 0 "
	"for _, n in ipairs(redis.call('SMEMBERS', '" GV_QUEUE_EXECUTORS "')) do "
	"  local h = " GV_QUEUE_LUA_EXEC_HMGET("'kernel_mb', 'capacity'") " "
	"  local mb = tonumber(h[2]) or 0 "
	"  if " GV_QUEUE_LUA_ALIVE " and mb > 0 and (tonumber(h[3]) or 0) > 0 then "
	"    total = total + mb "
	"    if n == ARGV[2] then mine = mb end "
	"  end "
	"end "
	"return {mine, total}";

/* An ask's kernels on a node whose kernel memory is mine_mb of total_mb
 * over the live kernel nodes: rounded up, so that together they hold at
 * least the count; all of it when the registry says nothing (not
 * registered yet, or alone). */
static uint32_t part_of(uint32_t kernels, uint64_t mine_mb, uint64_t total_mb)
{
	if (mine_mb == 0 || total_mb <= mine_mb)
		return kernels;
	return (uint32_t)(((uint64_t)kernels * mine_mb + total_mb - 1) / total_mb);
}

/* This node's memory and the live kernel nodes' (0, 0 when unknown). */
static void node_share(struct daemon *d, struct gv_redis *r, uint64_t *mine, uint64_t *total)
{
	*mine = *total = 0;
	struct gv_err err;
	char alive_ms[24];
	snprintf(alive_ms, sizeof(alive_ms), "%d", GV_QUEUE_HEARTBEAT_TIMEOUT_MS);
	const char *argv[] = { "EVAL", NODES_LUA, "0", alive_ms, d->node };
	redisReply *rep = r ? gv_redis_commandv(r, 5, argv, NULL, &err) : NULL;
	if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
	    rep->element[0]->type == REDIS_REPLY_INTEGER && rep->element[1]->type == REDIS_REPLY_INTEGER &&
	    rep->element[0]->integer >= 0 && rep->element[1]->integer >= rep->element[0]->integer) {
		*mine = (uint64_t)rep->element[0]->integer;
		*total = (uint64_t)rep->element[1]->integer;
		static uint64_t said_mine, said_total;
		if (*mine != said_mine || *total != said_total)
			gv_info(&d->log, "kernels asked warm ahead: this node keeps %llu MiB / %llu MiB of each count "
					 "(its kernel memory over the live kernel nodes')",
				(unsigned long long)*mine, (unsigned long long)*total);
		said_mine = *mine;
		said_total = *total;
	} else if (r) {
		static uint64_t next_warn;
		if (exec_daemon_mono_ms() >= next_warn) {
			gv_warn(&d->log, "kernels asked warm ahead: the kernel nodes' memory: %s (this node keeps whole counts)",
				rep ? "unexpected reply" : err.msg);
			next_warn = exec_daemon_mono_ms() + 60000;
		}
	}
	gv_redis_reply_free(rep);
}

void kernel_warm_asks_refresh(struct daemon *d, struct gv_pg **pg, struct gv_redis *r, uint64_t now,
			      uint64_t *next_ms)
{
	const struct exec_daemon_config *cfg = d->cfg;
	if (cfg->kernel_memory_mb <= 0 || !d->warm_asks || now < *next_ms)
		return;
	*next_ms = now + REFRESH_MS;
	static bool failing;
	struct gv_err err;
	struct tenant_kernel_warm_ask asks[TENANT_KERNEL_WARM_ASKS_MAX];
	int n = -1;
	if ((*pg || (*pg = exec_daemon_pg_open(cfg, true, &err))) && gv_pg_ensure(*pg, &err) == 0)
		n = tenant_kernel_warm_asks(gv_pg_conn(*pg), asks, TENANT_KERNEL_WARM_ASKS_MAX, &err);
	if (n < 0) {
		if (!failing)
			gv_warn(&d->log, "kernels asked warm ahead: %s (the last list stands)", err.msg);
		failing = true;
		return;
	}
	if (failing)
		gv_info(&d->log, "kernels asked warm ahead: read again");
	failing = false;
	uint64_t mine_mb, total_mb;
	node_share(d, r, &mine_mb, &total_mb);
	struct kernel_warm_asks *t = d->warm_asks;
	__atomic_add_fetch(&t->seq, 1, __ATOMIC_ACQ_REL); /* odd: being written */
	t->n = 0;
	for (int i = 0; i < n; i++) {
		struct kernel_warm_ask *a = &t->ask[t->n++];
		memset(a, 0, sizeof(*a));
		/* The shape a kernel of this tenant gets here (kernel_job.c):
		 * its CPU share clamped to the node's ceiling. */
		memcpy(a->shape.tenant, asks[i].tenant, strnlen(asks[i].tenant, sizeof(asks[i].tenant) - 1));
		a->shape.memory_mb = asks[i].memory_mb;
		a->shape.cpu_pct = exec_cpu_ceiling_clamp(asks[i].cpu_pct, (unsigned)cfg->kernel_cpu_ceiling_pct);
		a->shape.lifetime_s = asks[i].lifetime_s;
		a->shape.idle_s = asks[i].idle_s;
		a->kernels = part_of(asks[i].kernels, mine_mb, total_mb);
	}
	__atomic_add_fetch(&t->seq, 1, __ATOMIC_ACQ_REL);
}

int kernel_warm_asks_read(const struct daemon *d, struct kernel_warm_ask *out)
{
	const struct kernel_warm_asks *t = d->warm_asks;
	if (!t)
		return 0;
	unsigned seq = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return -1;
	unsigned n = t->n < KERNEL_WARM_ASKS_MAX ? t->n : KERNEL_WARM_ASKS_MAX;
	memcpy(out, t->ask, sizeof(*out) * n);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE) == seq ? (int)n : -1;
}
