/* WebSocket memory budget (wsbudget.h). Tenants and kernels with a charge
 * or a connection are few at any moment: both tables are small arrays
 * scanned under the mutex, an entry removed (swapped with the last) when
 * it falls to zero, and capped in size so that a table cannot grow
 * without bound (a tenant or kernel beyond it is refused). */
#include "frontend/wsbudget.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ID_BUF 40 /* a UUID and its NUL, with room */
#define ENTRIES_MAX 4096

struct entry {
	char id[ID_BUF];
	size_t n;
};

struct table {
	struct entry *e;
	size_t used;
};

struct fe_wsbudget {
	pthread_mutex_t mu;
	size_t total, share, used;
	unsigned per_kernel;
	struct table tenants, kernels;
};

struct fe_wsbudget *fe_wsbudget_new(size_t total, size_t tenant_share, unsigned per_kernel)
{
	struct fe_wsbudget *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->tenants.e = calloc(ENTRIES_MAX, sizeof(struct entry));
	b->kernels.e = calloc(ENTRIES_MAX, sizeof(struct entry));
	if (!b->tenants.e || !b->kernels.e || pthread_mutex_init(&b->mu, NULL) != 0) {
		free(b->tenants.e);
		free(b->kernels.e);
		free(b);
		return NULL;
	}
	b->total = total;
	b->share = tenant_share;
	b->per_kernel = per_kernel;
	return b;
}

void fe_wsbudget_free(struct fe_wsbudget *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->mu);
	free(b->tenants.e);
	free(b->kernels.e);
	free(b);
}

/* id's entry, or a new zero one at the end (NULL: the table is full). */
static struct entry *find(struct table *t, const char *id, bool create)
{
	for (size_t i = 0; i < t->used; i++)
		if (!strcmp(t->e[i].id, id))
			return &t->e[i];
	if (!create || t->used == ENTRIES_MAX || strlen(id) >= ID_BUF)
		return NULL;
	struct entry *e = &t->e[t->used++];
	strcpy(e->id, id);
	e->n = 0;
	return e;
}

static void drop_if_zero(struct table *t, struct entry *e)
{
	if (e->n)
		return;
	*e = t->e[--t->used];
}

int fe_wsbudget_charge(struct fe_wsbudget *b, const char *tenant, size_t *charged, size_t want)
{
	if (want == *charged)
		return 0;
	int rc = 0;
	pthread_mutex_lock(&b->mu);
	struct entry *e = find(&b->tenants, tenant, want > *charged);
	if (want < *charged) {
		size_t d = *charged - want;
		b->used -= d;
		if (e) {
			e->n = e->n > d ? e->n - d : 0;
			drop_if_zero(&b->tenants, e);
		}
		*charged = want;
	} else {
		size_t d = want - *charged;
		if (!e || b->used + d > b->total || e->n + d > b->share) {
			if (e)
				drop_if_zero(&b->tenants, e);
			rc = -1;
		} else {
			b->used += d;
			e->n += d;
			*charged = want;
		}
	}
	pthread_mutex_unlock(&b->mu);
	return rc;
}

bool fe_wsbudget_kernel_join(struct fe_wsbudget *b, const char *kid)
{
	bool ok = false;
	pthread_mutex_lock(&b->mu);
	struct entry *e = find(&b->kernels, kid, true);
	if (e && (b->per_kernel == 0 || e->n < b->per_kernel)) {
		e->n++;
		ok = true;
	} else if (e) {
		drop_if_zero(&b->kernels, e);
	}
	pthread_mutex_unlock(&b->mu);
	return ok;
}

void fe_wsbudget_kernel_leave(struct fe_wsbudget *b, const char *kid)
{
	pthread_mutex_lock(&b->mu);
	struct entry *e = find(&b->kernels, kid, false);
	if (e && e->n) {
		e->n--;
		drop_if_zero(&b->kernels, e);
	}
	pthread_mutex_unlock(&b->mu);
}

size_t fe_wsbudget_used(struct fe_wsbudget *b)
{
	pthread_mutex_lock(&b->mu);
	size_t n = b->used;
	pthread_mutex_unlock(&b->mu);
	return n;
}
