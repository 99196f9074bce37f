/* Tenant quotas: the model stored in PostgreSQL (table tenant_quotas,
 * migration 0002, one row per tenant), the pure per-job ceiling checks the
 * frontend applies before accepting a submission (-> 422 naming the
 * limit), the request-rate token bucket kept in Redis and shared by every
 * frontend (-> 429), and the mirror of scheduling settings into Redis for
 * the scheduler.
 *
 * Applied without restart: the frontend gets the quota together with the
 * key lookup (TENANT_SQL_KEY_LOOKUP, tenants/key.h) and therefore never
 * holds it longer than TENANT_AUTH_CACHE_MAX_MS. The scheduler reads
 * TENANT_SCHED_CFG_KEY_PREFIX<tenant_id>, which `gavel tenant create|update|
 * disable` rewrite (tenant_sched_cfg_publish) and `gavel tenant sync`
 * rewrites for every tenant (after a Redis flush).
 *
 * Implemented in quota.c (model, checks, SQL) and ratelimit.c (Redis). */
#pragma once

#include <hiredis/hiredis.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/redis.h"
#include "tenants/origin.h"

#define TENANT_MAX_LANGUAGES 64
#define TENANT_LANG_ID_MAX 32       /* bytes, like LANG_ID_MAX */
#define TENANT_EGRESS_POLICY_MAX 4096 /* bytes of JSON text */

/* Every field is a ceiling for the tenant; 0 in a count or size means
 * "none allowed" only where stated, see each field. */
struct tenant_quota {
	int requests_per_second; /* token refill rate; 0 = no rate limit */
	int burst;               /* bucket capacity (>= 1) */
	int max_queued;          /* submissions in status queued; -> 429 */
	int max_running;         /* concurrently running jobs (scheduler) */
	int64_t max_cpu_ms;      /* per job (per test CPU time limit) */
	int64_t max_wall_ms;     /* per job (per test wall time limit) */
	int max_memory_mb;       /* per job */
	int max_output_kb;       /* per job (captured output per test) */
	/* Language ids the tenant may use; none listed = every language. */
	size_t n_allowed_languages;
	char allowed_languages[TENANT_MAX_LANGUAGES][TENANT_LANG_ID_MAX + 1];
	int max_gpus;            /* GPUs in use at once (0: no GPU jobs) */
	/* JSON object, jsonb in the table. {"mode":"none"} (default) or
	 * {"mode":"allowlist","allow":["[tcp:|udp:]TARGET:PORT[-PORT]", ...],
	 *  "rate_kbit":N | "egress_kbit":N,"ingress_kbit":N}: the grammar is
	 * tenants/egress.h; the executor applies it
	 * (executor/sandbox/netpolicy.h). */
	char egress_policy[TENANT_EGRESS_POLICY_MAX];
	int retention_days;      /* submissions older than this are deleted */
	int weight;              /* fair-share weight (>= 1) */
	/* An API key may come in the query string (?api_key=) on the routes a
	 * browser can reach no other way: the SSE stream, whose EventSource
	 * sends no headers. Off by default: such URLs end up in access logs
	 * and browser histories. No other route ever takes one. */
	bool allow_query_key;
	/* Browser origins whose pages may call the API with this tenant's keys
	 * (CORS), joined by ',' as tenant_origins_parse writes them
	 * (tenants/origin.h): "" = the frontend's frontend.cors_origins
	 * default, "*" = any origin. Credentials (cookies) are never allowed:
	 * a key travels in a header the page sets itself. */
	char cors_origins[TENANT_ORIGINS_BUF];
	/* A public playground: anonymous access, under /playground/<tenant>/,
	 * to the routes that run code and read their own result
	 * (frontend/playground.h). Off by default. A tenant whose
	 * egress_policy grants network access cannot turn it on: anonymous
	 * code never gets the network. */
	bool playground;
	/* A submission's id is a capability for reading that one submission
	 * (Judge0's own model): GET of it under /playground/<tenant>/ works
	 * without a key, for every submission of the tenant. Off by default:
	 * then only the playground's own (anonymous) submissions are readable
	 * there. Ids are 128 random bits (fe_new_id). */
	bool token_capability;
	/* Anonymous budgets, each never above the tenant's own: requests per
	 * second and burst of each client address (IPv4 address, IPv6 /64),
	 * and the queued submissions below which an anonymous one is taken. */
	int playground_rps;
	int playground_burst;
	int playground_max_queued;
	/* Notebook kernels (executor/kernels/README.md): at most max_kernels
	 * queued or running, kernels_per_minute created, each culled after
	 * kernel_idle_s without activity or connection, ended after
	 * kernel_lifetime_s, with kernel_memory_mb of memory and
	 * kernel_cpu_pct of one CPU. */
	int max_kernels;
	int kernels_per_minute;
	int kernel_idle_s;
	int kernel_lifetime_s;
	int kernel_memory_mb;
	int kernel_cpu_pct;
	/* Clients that cannot be given a key header, unchanged (Judge0's own
	 * pages, piston-client): the tenant's keys are taken in the query
	 * string (?X-Auth-Token=, ?api_key=) on every route, reads and writes,
	 * and GET of one of its submissions at the root paths works without a
	 * key, the id being the capability (128 random bits, fe_new_id). Off by
	 * default: such URLs end up in access logs and browser histories, and
	 * whoever holds an id reads that submission, source included. */
	bool browser_clients;
	/* Anonymous reads of one submission (a playground's own or a token
	 * read) per second from one client address, counted apart from
	 * playground_rps: a page polls a result every 100 ms or so. */
	int playground_read_rps;
};

/* Column list of tenant_quotas, in the order tenant_quota_from_pg reads
 * (allowed_languages comma-joined, egress_policy as JSON text). */
#define TENANT_QUOTA_COLUMNS                                                           \
	"requests_per_second, burst, max_queued, max_running, max_cpu_ms, "           \
	"max_wall_ms, max_memory_mb, max_output_kb, array_to_string(allowed_languages, ','), " \
	"max_gpus, egress_policy::text, retention_days, weight, allow_query_key, "   \
	"array_to_string(cors_origins, ','), playground, token_capability, playground_rps, " \
	"playground_burst, playground_max_queued, max_kernels, kernels_per_minute, "    \
	"kernel_idle_s, kernel_lifetime_s, kernel_memory_mb, kernel_cpu_pct, browser_clients, " \
	"playground_read_rps"
#define TENANT_QUOTA_NCOLS 28

/* The quota row of tenant $1 (uuid): TENANT_QUOTA_COLUMNS, one row when the
 * tenant exists (0002 creates the row with the tenant). */
#define TENANT_SQL_QUOTA_SELECT "SELECT " TENANT_QUOTA_COLUMNS " FROM tenant_quotas WHERE tenant_id = $1::uuid"

/* The defaults of a new tenant (the column defaults of 0002):
 * 20 rps, burst 40, 1000 queued, 4 running, 10 s CPU, 20 s wall, 512 MB,
 * 1024 KB output, all languages, 0 GPUs, {"mode":"none"}, 30 days, weight 1,
 * no query-string keys, no playground (2 rps, burst 10, 10 queued, 20 reads
 * per second when on), no token capability, no browser clients. */
void tenant_quota_defaults(struct tenant_quota *q);

/* Reads TENANT_QUOTA_NCOLS columns of row `row` starting at first_col
 * (0 for TENANT_SQL_QUOTA_SELECT, TENANT_AUTH_QUOTA_COL1 for the key
 * lookup). res is borrowed. GV_EPROTO on a value out of range. */
int tenant_quota_from_pg(const PGresult *res, int row, int first_col, struct tenant_quota *q,
			 struct gv_err *err) GV_MUST_CHECK;

/* Checks every field's range and the egress policy's shape. Pure. */
int tenant_quota_validate(const struct tenant_quota *q, struct gv_err *err) GV_MUST_CHECK;

/* Applies one "key=value" setting (the CLI's --quota): key is a field name
 * above; allowed_languages takes a comma-separated list ("" or "*" = all);
 * egress_policy takes JSON; allow_query_key true or false; cors_origins a
 * comma-separated list of origins ("" = the frontend's default, "*" = any;
 * tenants/origin.h); playground, token_capability and browser_clients
 * true or false.
 * Validates the result. Pure. */
int tenant_quota_set(struct tenant_quota *q, const char *key, const char *value,
		     struct gv_err *err) GV_MUST_CHECK;

/* The quota as a JSON object (field names as above), a new reference;
 * NULL only when out of memory. */
json_t *tenant_quota_to_json(const struct tenant_quota *q);

/* Loads tenant_id's quota. GV_ENOTFOUND when there is no row. */
int tenant_quota_load(PGconn *conn, const char *tenant_id, struct tenant_quota *q,
		      struct gv_err *err) GV_MUST_CHECK;
/* Writes (upserts) tenant_id's quota after validating it. Runs inside the
 * caller's transaction if there is one. */
int tenant_quota_save(PGconn *conn, const char *tenant_id, const struct tenant_quota *q,
		      struct gv_err *err) GV_MUST_CHECK;

/* ------------------------------------------------ per-job ceilings (422) */

/* What a submission asks for, after the frontend resolved defaults (the
 * language's default limits where the client gave none). 0 in a limit
 * field = not specified (not checked); language NULL = not checked. */
struct tenant_job_request {
	const char *language;
	int64_t cpu_ms;
	int64_t wall_ms;
	int64_t memory_mb;
	int64_t output_kb;
	int64_t gpus;
	bool wants_egress;
};

struct tenant_quota_violation {
	const char *limit;   /* static: the quota field name, e.g. "max_cpu_ms" */
	int64_t requested;   /* what was asked (0 for language/egress) */
	int64_t allowed;     /* the ceiling */
	char message[256];   /* "max_cpu_ms: requested 20000, allowed 10000" */
};

/* 0 when the job fits every ceiling, 1 when it does not (then *v names
 * the first limit exceeded, in the field order of struct tenant_quota:
 * language, cpu, wall, memory, output, gpus, egress) -> HTTP 422 with
 * error code "quota_exceeded" and v->message. Pure. */
int tenant_quota_check_job(const struct tenant_quota *q, const struct tenant_job_request *r,
			   struct tenant_quota_violation *v);

/* 0 when one more submission may be queued given `queued` already queued,
 * 1 when not (then *v names "max_queued") -> HTTP 429. Pure. */
int tenant_quota_check_queued(const struct tenant_quota *q, int64_t queued,
			      struct tenant_quota_violation *v);

/* ------------------------------------------- request rate (Redis, 429) */

/* The token bucket, one Redis hash per tenant:
 *   key  TENANT_RATELIMIT_KEY_PREFIX<tenant_id>  {tokens, ts}
 * EVAL TENANT_RATELIMIT_SCRIPT 1 <key> <rate per s> <burst> <cost>
 * Time is Redis's own (TIME), so frontends with skewed clocks share one
 * bucket correctly; the script is atomic. Reply: an array of 5 integers
 *   {allowed (1|0), remaining (whole tokens left), reset_s (seconds until
 *    the bucket is full again), retry_after_s (0 when allowed, else >= 1),
 *    retry_after_ms}
 * Headers for a 429: Retry-After: retry_after_s, X-RateLimit-Limit: burst,
 * X-RateLimit-Remaining: remaining, X-RateLimit-Reset: reset_s (also on
 * successful responses, if the frontend wants). */
#define TENANT_RATELIMIT_KEY_PREFIX "gavel:ratelimit:"
extern const char TENANT_RATELIMIT_SCRIPT[];

#define TENANT_RATELIMIT_ARGC 7
struct tenant_ratelimit_args {
	int argc;                                 /* TENANT_RATELIMIT_ARGC */
	const char *argv[TENANT_RATELIMIT_ARGC];  /* point into this struct / the script */
	size_t argvlen[TENANT_RATELIMIT_ARGC];
	char key[sizeof(TENANT_RATELIMIT_KEY_PREFIX) + 96];
	char rate[24], burst[24], cost[24];
};

/* Builds the EVAL command for redisAsyncCommandArgv / redisCommandArgv.
 * The struct must outlive the call that sends it (hiredis copies the
 * arguments into its output buffer during the call, so a stack struct is
 * fine). GV_EINVAL when the quota has no rate limit (requests_per_second
 * 0: do not call Redis at all) or cost < 1. */
/* The command's argv over out's key, rate, burst and cost (already
 * written): EVAL of the bucket script. */
void tenant_ratelimit_args_argv(struct tenant_ratelimit_args *out);
int tenant_ratelimit_args(const char *tenant_id, const struct tenant_quota *q, int cost,
			  struct tenant_ratelimit_args *out, struct gv_err *err) GV_MUST_CHECK;

struct tenant_ratelimit_result {
	bool allowed;
	int64_t limit;          /* = burst, for X-RateLimit-Limit */
	int64_t remaining;
	int64_t reset_s;
	int64_t retry_after_s;
	int64_t retry_after_ms;
};

/* Parses the script's reply (borrowed); limit is set from q->burst by the
 * caller or by tenant_ratelimit_take. GV_EPROTO on an unexpected shape,
 * GV_EREDIS on an error reply. */
int tenant_ratelimit_parse_reply(const redisReply *reply, struct tenant_ratelimit_result *out,
				 struct gv_err *err) GV_MUST_CHECK;

/* Blocking helper (tests, CLI): one EVAL. A quota without a rate limit
 * answers allowed without calling Redis. */
int tenant_ratelimit_take(struct gv_redis *r, const char *tenant_id, const struct tenant_quota *q,
			  int cost, struct tenant_ratelimit_result *out, struct gv_err *err) GV_MUST_CHECK;

/* --------------------------------------- scheduling config for Redis */

/* Hash read by the scheduler:
 *   TENANT_SCHED_CFG_KEY_PREFIX<tenant_id> {weight, max_running, max_gpus,
 *                                           max_queued, disabled (0|1)}
 * all decimal integers. When the hash is missing the scheduler uses the
 * defaults of tenant_quota_defaults (weight 1, max_running 4, max_gpus 0). */
#define TENANT_SCHED_CFG_KEY_PREFIX "gavel:tenantcfg:"

int tenant_sched_cfg_publish(struct gv_redis *r, const char *tenant_id, const struct tenant_quota *q,
			     bool disabled, struct gv_err *err) GV_MUST_CHECK;
/* Republishes every tenant's hash from PostgreSQL; *count (may be NULL)
 * gets the number published. */
int tenant_sched_cfg_publish_all(PGconn *conn, struct gv_redis *r, int *count,
				 struct gv_err *err) GV_MUST_CHECK;
