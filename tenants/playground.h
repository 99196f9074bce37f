/* A tenant's public playground, the tenant side: the lookup the frontend
 * makes before it knows whether a name under /playground/<tenant>/ is a
 * tenant that takes anonymous requests (gavel_playground_lookup, a
 * SECURITY DEFINER function of migration 0015), the quota an anonymous
 * request runs under, and the Redis token buckets that bound anonymous
 * traffic. The routes and the pipeline are the frontend's
 * (frontend/playground.h). Pure, but for the SQL text. */
#pragma once

#include <stdbool.h>

#include "common/err.h"
#include "tenants/quota.h"

/* $1 = the tenant's uuid or name, as `gavel tenant` takes them. At most one
 * row: 0 tenant_id uuid, 1.. the tenant's quota, TENANT_QUOTA_NCOLS
 * columns in the order of TENANT_QUOTA_COLUMNS (tenant_quota_from_pg with
 * first_col = TENANT_PLAYGROUND_QUOTA_COL1). A row only for an enabled
 * tenant with playground or token_capability on: an unknown name, a
 * disabled tenant and one with both off give none alike. */
#define TENANT_SQL_PLAYGROUND_LOOKUP                                                         \
	"SELECT tenant_id, requests_per_second, burst, max_queued, max_running, max_cpu_ms, " \
	"max_wall_ms, max_memory_mb, max_output_kb, allowed_languages, max_gpus, "            \
	"egress_policy, retention_days, weight, allow_query_key, cors_origins, playground, "  \
	"token_capability, playground_rps, playground_burst, playground_max_queued, max_kernels, kernels_per_minute, kernel_idle_s, " \
	"kernel_lifetime_s, kernel_memory_mb, kernel_cpu_pct, browser_clients, playground_read_rps " \
	"FROM gavel_playground_lookup($1)"
#define TENANT_PLAYGROUND_QUOTA_COL1 1

/* $1 = a submission's id: the row of its tenant, in the columns of
 * TENANT_SQL_PLAYGROUND_LOOKUP, only when it is a submission (not a
 * kernel) of an enabled tenant with browser_clients on
 * (gavel_token_lookup, migration 0021); no row alike for everything else. */
#define TENANT_SQL_TOKEN_LOOKUP                                                              \
	"SELECT tenant_id, requests_per_second, burst, max_queued, max_running, max_cpu_ms, " \
	"max_wall_ms, max_memory_mb, max_output_kb, allowed_languages, max_gpus, "            \
	"egress_policy, retention_days, weight, allow_query_key, cors_origins, playground, "  \
	"token_capability, playground_rps, playground_burst, playground_max_queued, max_kernels, kernels_per_minute, kernel_idle_s, " \
	"kernel_lifetime_s, kernel_memory_mb, kernel_cpu_pct, browser_clients, playground_read_rps " \
	"FROM gavel_token_lookup($1)"

/* The quota an anonymous request of tenant quota t runs under, into *anon:
 * t's per-job ceilings and CORS origins; requests_per_second and burst
 * become the per-client-address bucket (playground_rps and
 * playground_burst, each no higher than t's own when t has a rate limit);
 * max_queued becomes min(playground_max_queued, max_queued);
 * playground_read_rps no higher than t's requests_per_second when t has a
 * rate limit; no GPUs, no egress, no query-string keys. Pure. */
void tenant_playground_quota(const struct tenant_quota *t, struct tenant_quota *anon);

/* The bucket keys, under TENANT_RATELIMIT_KEY_PREFIX:
 *   pg:<tenant_id>           every anonymous request of the tenant together
 *                            (rate and burst: the tenant's own);
 *   pg:<tenant_id>:<client>  one client address's (the anonymous quota's).
 * client: NULL for the first, else 1..TENANT_PLAYGROUND_CLIENT_MAX bytes of
 * [0-9a-f.:]. Builds the same EVAL as tenant_ratelimit_args (cost 1);
 * GV_EINVAL for a bad tenant id or client, or rate < 1. */
#define TENANT_PLAYGROUND_CLIENT_MAX 40
int tenant_playground_ratelimit_args(const char *tenant_id, const char *client, int rate, int burst,
				     struct tenant_ratelimit_args *out, struct gv_err *err) GV_MUST_CHECK;

/* The same for anonymous reads of one submission, counted apart:
 *   pg:<tenant_id>:read           every anonymous read of the tenant;
 *   pg:<tenant_id>:read:<client>  one client address's.
 * A page polling its result every 100 ms (Judge0 IDE) would otherwise
 * spend the budget of the submissions themselves. */
int tenant_playground_read_ratelimit_args(const char *tenant_id, const char *client, int rate, int burst,
					  struct tenant_ratelimit_args *out, struct gv_err *err) GV_MUST_CHECK;
