/* The tenant side of public playgrounds: the anonymous quota and the
 * anonymous token buckets (see playground.h). */
#include "tenants/playground.h"

#include <stdio.h>
#include <string.h>

#include "tenants/db.h"

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

void tenant_playground_quota(const struct tenant_quota *t, struct tenant_quota *anon)
{
	*anon = *t;
	/* The per-address bucket; a tenant with no rate limit of its own
	 * (requests_per_second 0) still limits each anonymous client. */
	anon->requests_per_second =
		t->requests_per_second > 0 ? min_int(t->playground_rps, t->requests_per_second) : t->playground_rps;
	anon->burst = min_int(t->playground_burst, t->burst);
	anon->playground_read_rps = t->requests_per_second > 0
					    ? min_int(t->playground_read_rps, t->requests_per_second)
					    : t->playground_read_rps;
	anon->max_queued = min_int(t->playground_max_queued, t->max_queued);
	anon->max_gpus = 0;
	snprintf(anon->egress_policy, sizeof(anon->egress_policy), "{\"mode\": \"none\"}");
	anon->allow_query_key = false;
}

static bool client_ok(const char *c)
{
	size_t n = strnlen(c, TENANT_PLAYGROUND_CLIENT_MAX + 1);
	return n > 0 && n <= TENANT_PLAYGROUND_CLIENT_MAX && strspn(c, "0123456789abcdef.:") == n;
}

static int bucket_args(const char *tenant_id, const char *kind, const char *client, int rate, int burst,
		       struct tenant_ratelimit_args *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	if (client && !client_ok(client))
		return gv_err_set(err, GV_EINVAL, "playground client: not an address bucket");
	if (rate < 1 || burst < 1)
		return gv_err_set(err, GV_EINVAL, "playground rate limit: rate and burst must be >= 1");
	int n = snprintf(out->key, sizeof(out->key), TENANT_RATELIMIT_KEY_PREFIX "pg:%s%s%s%s", tenant_id, kind,
			 client ? ":" : "", client ? client : "");
	if (n < 0 || (size_t)n >= sizeof(out->key))
		return gv_err_set(err, GV_ELIMIT, "playground rate limit: key too long");
	snprintf(out->rate, sizeof(out->rate), "%d", rate);
	snprintf(out->burst, sizeof(out->burst), "%d", burst);
	snprintf(out->cost, sizeof(out->cost), "1");
	tenant_ratelimit_args_argv(out);
	return 0;
}

int tenant_playground_ratelimit_args(const char *tenant_id, const char *client, int rate, int burst,
				     struct tenant_ratelimit_args *out, struct gv_err *err)
{
	return bucket_args(tenant_id, "", client, rate, burst, out, err);
}

int tenant_playground_read_ratelimit_args(const char *tenant_id, const char *client, int rate, int burst,
					  struct tenant_ratelimit_args *out, struct gv_err *err)
{
	return bucket_args(tenant_id, ":read", client, rate, burst, out, err);
}
