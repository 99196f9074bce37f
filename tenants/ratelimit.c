/* The request-rate token bucket in Redis and the scheduling-config mirror;
 * see quota.h. The bucket is one Lua script so that reading, refilling and
 * taking a token are one atomic step for every frontend, and it uses
 * Redis's clock (TIME) so that frontends' clocks do not matter. */
#include "tenants/quota.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/pg.h"
#include "tenants/db.h"

/* KEYS[1] bucket; ARGV rate (tokens/s), burst, cost. State: tokens (a
 * fraction) and ts (microseconds of the last refill). Reply: allowed,
 * remaining, reset_s, retry_after_s, retry_after_ms. */
const char TENANT_RATELIMIT_SCRIPT[] =
	"local rate = tonumber(ARGV[1])\n"
	"local burst = tonumber(ARGV[2])\n"
	"local cost = tonumber(ARGV[3])\n"
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"local st = redis.call('HMGET', KEYS[1], 'tokens', 'ts')\n"
	"local tokens = tonumber(st[1])\n"
	"local ts = tonumber(st[2])\n"
	"if tokens == nil or ts == nil then\n"
	"  tokens = burst\n"
	"  ts = now\n"
	"end\n"
	"if now > ts then\n"
	"  tokens = tokens + (now - ts) * rate / 1000000\n"
	"  ts = now\n"
	"end\n"
	"if tokens > burst then tokens = burst end\n"
	"local allowed = 0\n"
	"local retry_ms = 0\n"
	"if tokens >= cost then\n"
	"  tokens = tokens - cost\n"
	"  allowed = 1\n"
	"else\n"
	"  retry_ms = math.ceil((cost - tokens) * 1000 / rate)\n"
	"end\n"
	"redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'ts', string.format('%.0f', ts))\n"
	"redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)\n"
	"local reset_ms = math.ceil((burst - tokens) * 1000 / rate)\n"
	"return {allowed, math.floor(tokens), math.ceil(reset_ms / 1000), math.ceil(retry_ms / 1000), retry_ms}\n";

void tenant_ratelimit_args_argv(struct tenant_ratelimit_args *out)
{
	out->argc = TENANT_RATELIMIT_ARGC;
	out->argv[0] = "EVAL";
	out->argv[1] = TENANT_RATELIMIT_SCRIPT;
	out->argv[2] = "1";
	out->argv[3] = out->key;
	out->argv[4] = out->rate;
	out->argv[5] = out->burst;
	out->argv[6] = out->cost;
	for (int i = 0; i < TENANT_RATELIMIT_ARGC; i++)
		out->argvlen[i] = strlen(out->argv[i]);
}

int tenant_ratelimit_args(const char *tenant_id, const struct tenant_quota *q, int cost,
			  struct tenant_ratelimit_args *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	if (q->requests_per_second <= 0)
		return gv_err_set(err, GV_EINVAL, "tenant has no rate limit");
	if (cost < 1 || cost > q->burst)
		return gv_err_set(err, GV_EINVAL, "rate limit cost %d outside 1..burst (%d)", cost, q->burst);
	snprintf(out->key, sizeof(out->key), TENANT_RATELIMIT_KEY_PREFIX "%s", tenant_id);
	snprintf(out->rate, sizeof(out->rate), "%d", q->requests_per_second);
	snprintf(out->burst, sizeof(out->burst), "%d", q->burst);
	snprintf(out->cost, sizeof(out->cost), "%d", cost);
	tenant_ratelimit_args_argv(out);
	return 0;
}

int tenant_ratelimit_parse_reply(const redisReply *reply, struct tenant_ratelimit_result *out, struct gv_err *err)
{
	int64_t limit = out->limit;
	memset(out, 0, sizeof(*out));
	out->limit = limit;
	if (!reply)
		return gv_err_set(err, GV_EREDIS, "rate limit: no reply");
	if (reply->type == REDIS_REPLY_ERROR)
		return gv_err_set(err, GV_EREDIS, "rate limit: %.*s", (int)(reply->len > 200 ? 200 : reply->len),
				  reply->str ? reply->str : "");
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 5)
		return gv_err_set(err, GV_EPROTO, "rate limit: expected an array of 5 integers");
	int64_t v[5];
	for (size_t i = 0; i < 5; i++) {
		if (reply->element[i]->type != REDIS_REPLY_INTEGER)
			return gv_err_set(err, GV_EPROTO, "rate limit: element %zu is not an integer", i);
		v[i] = reply->element[i]->integer;
	}
	if ((v[0] != 0 && v[0] != 1) || v[1] < 0 || v[2] < 0 || v[3] < 0 || v[4] < 0)
		return gv_err_set(err, GV_EPROTO, "rate limit: values out of range");
	out->allowed = v[0] == 1;
	out->remaining = v[1];
	out->reset_s = v[2];
	out->retry_after_s = out->allowed ? 0 : (v[3] < 1 ? 1 : v[3]);
	out->retry_after_ms = v[4];
	return 0;
}

int tenant_ratelimit_take(struct gv_redis *r, const char *tenant_id, const struct tenant_quota *q, int cost,
			  struct tenant_ratelimit_result *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (q->requests_per_second <= 0) {
		out->allowed = true;
		out->limit = q->burst;
		out->remaining = q->burst;
		return 0;
	}
	struct tenant_ratelimit_args a;
	if (tenant_ratelimit_args(tenant_id, q, cost, &a, err) != 0)
		return -1;
	redisReply *reply = gv_redis_commandv(r, a.argc, a.argv, a.argvlen, err);
	if (!reply) {
		gv_err_prefix(err, "rate limit");
		return -1;
	}
	out->limit = q->burst;
	int rc = tenant_ratelimit_parse_reply(reply, out, err);
	gv_redis_reply_free(reply);
	return rc;
}

int tenant_sched_cfg_publish(struct gv_redis *r, const char *tenant_id, const struct tenant_quota *q,
			     bool disabled, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	char key[sizeof(TENANT_SCHED_CFG_KEY_PREFIX) + 40];
	char weight[16], running[16], gpus[16], queued[16];
	snprintf(key, sizeof(key), TENANT_SCHED_CFG_KEY_PREFIX "%s", tenant_id);
	snprintf(weight, sizeof(weight), "%d", q->weight);
	snprintf(running, sizeof(running), "%d", q->max_running);
	snprintf(gpus, sizeof(gpus), "%d", q->max_gpus);
	snprintf(queued, sizeof(queued), "%d", q->max_queued);
	const char *argv[] = { "HSET", key,	"weight",   weight, "max_running", running, "max_gpus",
			       gpus,   "max_queued", queued, "disabled", disabled ? "1" : "0" };
	redisReply *reply = gv_redis_commandv(r, (int)(sizeof(argv) / sizeof(argv[0])), argv, NULL, err);
	if (!reply) {
		gv_err_prefix(err, "publish %s", key);
		return -1;
	}
	gv_redis_reply_free(reply);
	return 0;
}

int tenant_sched_cfg_publish_all(PGconn *conn, struct gv_redis *r, int *count, struct gv_err *err)
{
	if (count)
		*count = 0;
	PGresult *res = gv_pg_query(conn,
				    "SELECT t.id, t.disabled, " TENANT_QUOTA_COLUMNS
				    " FROM tenants t LEFT JOIN tenant_quotas q ON q.tenant_id = t.id ORDER BY t.id",
				    0, NULL, err);
	if (!res) {
		gv_err_prefix(err, "list tenants");
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < PQntuples(res) && rc == 0; i++) {
		struct tenant_quota q;
		rc = tenant_quota_from_pg(res, i, 2, &q, err);
		if (rc == 0)
			rc = tenant_sched_cfg_publish(r, PQgetvalue(res, i, 0), &q, PQgetvalue(res, i, 1)[0] == 't',
						      err);
		if (rc == 0 && count)
			(*count)++;
	}
	PQclear(res);
	return rc;
}
