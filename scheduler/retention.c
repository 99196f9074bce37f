/* The retention driver: the leader deletes old finished submissions
 * (tenants/retention.h) one tenant at a time, in slices short enough that
 * a long pass never keeps it from renewing its lock. Separate from the
 * tick: it keeps its own cursor across ticks. */
#include "scheduler/sched_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenants/retention.h"

/* One slice of a retention pass: tenants after the cursor, one at a time,
 * until budget_ms is spent, so that a long pass never keeps the leader
 * from renewing its lock. Each tenant's deletion is batched and audited
 * (tenant_retention_run); the job runs as gavel_scheduler, scoped to one
 * tenant per transaction. */
int sched_retention_step(struct sched *s, uint64_t budget_ms, struct gv_err *err)
{
	uint64_t t0 = sched_mono_ms();
	if (gv_pg_ensure(s->pg, err) != 0)
		return -1;
	PGconn *c = gv_pg_conn(s->pg);
	if (!s->retention_active) {
		s->retention_active = true;
		s->retention_cursor[0] = '\0';
		s->retention_deleted = 0;
	}
	while (sched_mono_ms() - t0 < budget_ms) {
		const char *p[] = { s->retention_cursor[0] ? s->retention_cursor : NULL };
		PGresult *res = gv_pg_query(c,
					    "SELECT t::text FROM gavel_tenant_ids() t WHERE $1::uuid IS NULL OR t > $1::uuid "
					    "ORDER BY t LIMIT 1",
					    1, p, err);
		if (!res)
			return -1;
		if (PQntuples(res) == 0) {
			PQclear(res);
			s->retention_active = false;
			if (s->retention_deleted)
				gv_info(&s->log, "retention: %lld old submissions deleted",
					(long long)s->retention_deleted);
			return 0;
		}
		snprintf(s->retention_cursor, sizeof(s->retention_cursor), "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
		struct tenant_retention_report rep;
		if (tenant_retention_run(c, s->retention_cursor, "system:retention", &rep, err) != 0)
			return -1;
		s->retention_deleted += rep.deleted;
	}
	return 0;
}
