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

void kernel_warm_asks_refresh(struct daemon *d, struct gv_pg **pg, uint64_t now, uint64_t *next_ms)
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
		a->kernels = asks[i].kernels;
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
