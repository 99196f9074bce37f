/* GET /v1/audit and GET /v1/usage, and the audit records the frontend
 * writes (see api_tenant.h). Every query runs in a transaction scoped to
 * the caller's tenant (row-level security) and names the tenant in its
 * WHERE clause as well, like the other handlers. Appends go through
 * gavel_audit_append (deploy/sql/0005), the one implementation of the
 * chain's seq and hash, from this async pipeline as from the C daemons. */
#include "frontend/api_tenant.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "tenants/audit.h"
#include "tenants/usage.h"

#define AUDIT_LIMIT_DEFAULT 100
#define AUDIT_LIMIT_MAX 1000
#define REFUSAL_SLOTS 256
#define REFUSAL_PROBES 8

/* The caller's records after a seq, oldest first. $1 tenant, $2 after
 * seq, $3 since (timestamptz or NULL), $4 until (exclusive, or NULL),
 * $5 action or NULL, $6 limit. */
static const char SQL_AUDIT_AFTER[] =
	"SELECT seq, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), actor, action, object, "
	"node, sandbox, details::text, encode(hash, 'hex'), encode(prev_hash, 'hex') FROM audit_log "
	"WHERE tenant_id = $1::uuid AND seq > $2::bigint "
	"AND ($3::timestamptz IS NULL OR at >= $3::timestamptz) AND ($4::timestamptz IS NULL OR at < $4::timestamptz) "
	"AND ($5::text IS NULL OR action = $5) ORDER BY seq LIMIT $6::int";

/* The audit records of the submission INSERTs of one tenant sent just
 * before in the same transaction (see fe_audit_created_stmt), appended in
 * one call of gavel_audit_append_many: one lock, one read of the chain
 * head. $1 tenant, $2 the requests: a JSON array of {actor, api, maxq,
 * ids}, in the order of their INSERTs. Each request's records follow each
 * other in that order: its `submission.created` records in ids order, or
 * its one `quota.refused` when its INSERT stored none of its ids.
 * The stored rows are looked up once, by primary key (id = ANY), and the
 * rest is joined in memory: the planner cannot see how few rows the JSON
 * holds, and a join against the table itself became a scan of all the
 * tenant's submissions. */
static const char SQL_AUDIT_CREATED[] =
	"WITH it AS MATERIALIZED ("
	"SELECT p.j->>'actor' AS actor, p.j->>'api' AS api, (p.j->>'maxq')::int AS maxq, "
	"jsonb_array_length(p.j->'ids') AS nids, p.o1, u.id, u.o2 "
	"FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS p(j, o1) "
	"CROSS JOIN LATERAL jsonb_array_elements_text(p.j->'ids') WITH ORDINALITY AS u(id, o2)), "
	"found AS MATERIALIZED ("
	"SELECT s.id, s.language, s.request FROM submissions s "
	"WHERE s.tenant_id = $1::uuid AND s.id = ANY (ARRAY(SELECT it.id FROM it))), "
	"x AS ("
	"SELECT it.actor, 'submission.created'::text AS action, f.id AS object, jsonb_build_object("
	"'api', it.api, 'language', f.language, "
	"'file_count', jsonb_array_length(f.request->'files'), "
	"'source_bytes', (SELECT coalesce(sum(octet_length(e->>'content')), 0) "
	"FROM jsonb_array_elements(f.request->'files') e), "
	"'stdin_bytes', coalesce(octet_length(f.request->>'stdin'), "
	"octet_length(decode(f.request->>'stdin_b64', 'base64')), 0), "
	"'tests', CASE WHEN jsonb_typeof(f.request->'tests') = 'array' "
	"THEN jsonb_array_length(f.request->'tests') ELSE 0 END, "
	"'limits', f.request->'limits') || jsonb_strip_nulls(jsonb_build_object('student', f.request->'student', "
	"'assignment', f.request->'assignment')) AS details, it.o1, it.o2 "
	"FROM it JOIN found f ON f.id = it.id "
	"UNION ALL "
	"SELECT min(it.actor), 'quota.refused', NULL, jsonb_build_object('api', min(it.api), 'limit', 'max_queued', "
	"'status', 429, 'allowed', min(it.maxq), 'requested', min(it.nids), 'refused', 1), it.o1, 0 "
	"FROM it LEFT JOIN found f ON f.id = it.id GROUP BY it.o1 HAVING count(f.id) = 0) "
	"SELECT gavel_audit_append_many($1::uuid, array_agg(x.actor ORDER BY x.o1, x.o2), "
	"array_agg(x.action ORDER BY x.o1, x.o2), array_agg(x.object ORDER BY x.o1, x.o2), NULL, NULL, "
	"array_agg(x.details ORDER BY x.o1, x.o2)) FROM x";

const char *fe_api_name(const struct fe_req *r)
{
	switch (r->api) {
	case FE_API_JUDGE0: return "judge0";
	case FE_API_PISTON: return "piston";
	case FE_API_JUPYTER: return "jupyter";
	case FE_API_JOBE: return "jobe";
	default: return "native";
	}
}

/* Who made the request: its API key, or the client address of a
 * playground's anonymous request. */
static void actor_of(const struct fe_req *r, char *buf, size_t size)
{
	if (r->anonymous)
		snprintf(buf, size, "anonymous:%s", r->client);
	else
		snprintf(buf, size, "key:%s", r->key_id);
}

static const char *val(const PGresult *res, int i, int c)
{
	return PQgetisnull(res, i, c) ? NULL : PQgetvalue(res, i, c);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* A database error caused by the client's parameter (SQLSTATE class 22:
 * a time PostgreSQL cannot read) is a 400; anything else a 503. */
static void reply_query_error(struct fe_req *r, const char *error)
{
	if (strstr(error, "(SQLSTATE 22")) {
		fe_reply_error(r, 400, "invalid_request", "invalid query parameter: %.200s", error);
		return;
	}
	gv_warn(NULL, "database: %s", error);
	fe_reply_error(r, 503, "unavailable", "the database is unavailable, try again");
}

/* A query parameter that is NULL (absent), or a non-empty string of at
 * most max bytes drawn from allowed. */
static bool param_ok(const char *v, size_t max, const char *allowed)
{
	if (!v)
		return true;
	size_t n = strlen(v);
	return n > 0 && n <= max && strspn(v, allowed) == n;
}

static bool parse_count(const char *v, long long lo, long long hi, long long *out)
{
	if (!v)
		return true;
	char *end;
	long long x = strtoll(v, &end, 10);
	if (!*v || *end || x < lo || x > hi)
		return false;
	*out = x;
	return true;
}

/* ------------------------------------------------------------ /v1/audit */

static void on_audit(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0]) {
		reply_query_error(r, error ? error : "no result");
		fe_req_unref(r);
		return;
	}
	json_t *arr = json_array();
	int rows = PQntuples(res[0]);
	for (int i = 0; arr && i < rows; i++) {
		const PGresult *p = res[0];
		json_t *details = json_loads(PQgetvalue(p, i, 7), 0, NULL);
		json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:s,s:o}", "seq",
				      (json_int_t)strtoll(PQgetvalue(p, i, 0), NULL, 10), "at", PQgetvalue(p, i, 1),
				      "actor", PQgetvalue(p, i, 2), "action", PQgetvalue(p, i, 3), "object",
				      str_or_null(val(p, i, 4)), "node", str_or_null(val(p, i, 5)), "sandbox",
				      str_or_null(val(p, i, 6)), "details", details ? details : json_object(), "hash",
				      PQgetvalue(p, i, 8), "prev_hash", str_or_null(val(p, i, 9)));
		if (!o || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	/* A full page: there may be more after its last seq. */
	long long limit = AUDIT_LIMIT_DEFAULT;
	json_t *next = json_null();
	if (parse_count(fe_query(r, "limit"), 1, AUDIT_LIMIT_MAX, &limit) && arr && rows > 0 && rows == limit)
		next = json_integer(strtoll(PQgetvalue(res[0], rows - 1, 0), NULL, 10));
	if (!arr) {
		json_decref(next);
		fe_reply_error(r, 500, "internal", "out of memory");
	} else {
		fe_reply_json(r, 200, json_pack("{s:o,s:o}", "records", arr, "next_after", next));
	}
	fe_req_unref(r);
}

void fe_handle_audit(struct fe_req *r)
{
	static const char time_chars[] = "0123456789-:.TZtz+ ";
	const char *since = fe_query(r, "since"), *until = fe_query(r, "until");
	const char *action = fe_query(r, "action");
	long long after = 0, limit = AUDIT_LIMIT_DEFAULT;
	if (!parse_count(fe_query(r, "after"), 0, INT64_MAX, &after) ||
	    !parse_count(fe_query(r, "limit"), 1, AUDIT_LIMIT_MAX, &limit)) {
		fe_reply_error(r, 400, "invalid_request", "'after' must be a seq >= 0 and 'limit' 1..%d",
			       AUDIT_LIMIT_MAX);
		return;
	}
	if (!param_ok(since, 40, time_chars) || !param_ok(until, 40, time_chars)) {
		fe_reply_error(r, 400, "invalid_request", "'since' and 'until' must be ISO 8601 times");
		return;
	}
	if (!param_ok(action, 64, "abcdefghijklmnopqrstuvwxyz0123456789._-")) {
		fe_reply_error(r, 400, "invalid_request", "'action' must be an action name such as submission.created");
		return;
	}
	char a[24], l[24];
	snprintf(a, sizeof(a), "%lld", after);
	snprintf(l, sizeof(l), "%lld", limit);
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, SQL_AUDIT_AFTER, 6, r->tenant_id, a, since, until, action, l);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_audit, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* ------------------------------------------------------------ /v1/usage */

static bool date_ok(const char *v)
{
	if (!v)
		return true;
	if (strlen(v) != 10 || v[4] != '-' || v[7] != '-')
		return false;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && (v[i] < '0' || v[i] > '9'))
			return false;
	return true;
}

static void on_usage(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0]) {
		reply_query_error(r, error ? error : "no result");
		fe_req_unref(r);
		return;
	}
	json_t *arr = json_array();
	long long tot[4] = { 0, 0, 0, 0 };
	for (int i = 0; arr && i < PQntuples(res[0]); i++) {
		long long v[4];
		for (int k = 0; k < 4; k++) {
			v[k] = strtoll(PQgetvalue(res[0], i, k + 1), NULL, 10);
			tot[k] += v[k];
		}
		json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I}", "day", PQgetvalue(res[0], i, 0), "submissions",
				      (json_int_t)v[0], "sandbox_cpu_ms", (json_int_t)v[1], "gpu_ms", (json_int_t)v[2],
				      "egress_bytes", (json_int_t)v[3]);
		if (!o || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	if (!arr)
		fe_reply_error(r, 500, "internal", "out of memory");
	else
		fe_reply_json(r, 200,
			      json_pack("{s:o,s:{s:I,s:I,s:I,s:I}}", "days", arr, "totals", "submissions",
					(json_int_t)tot[0], "sandbox_cpu_ms", (json_int_t)tot[1], "gpu_ms",
					(json_int_t)tot[2], "egress_bytes", (json_int_t)tot[3]));
	fe_req_unref(r);
}

void fe_handle_usage(struct fe_req *r)
{
	const char *since = fe_query(r, "since"), *until = fe_query(r, "until");
	if (!date_ok(since) || !date_ok(until)) {
		fe_reply_error(r, 400, "invalid_request", "'since' and 'until' must be dates (YYYY-MM-DD)");
		return;
	}
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, TENANT_SQL_USAGE_SELECT, 3, r->tenant_id, since, until);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_usage, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* ------------------------------------------------------ audit records */

int fe_audit_created_stmt(struct fe_req *const *reqs, size_t n, char **text, struct fe_db_stmt *s)
{
	*text = NULL;
	json_t *items = json_array();
	for (size_t i = 0; items && i < n; i++) {
		struct fe_req *r = reqs[i];
		char actor[FE_ACTOR_BUF];
		actor_of(r, actor, sizeof(actor));
		json_t *ids = json_array();
		for (size_t k = 0; ids && k < r->batch_n; k++)
			if (json_array_append_new(ids, json_string(r->batch_ids[k])) != 0)
				json_decref(ids), ids = NULL;
		json_t *it = ids ? json_pack("{s:s,s:s,s:i,s:o}", "actor", actor, "api", fe_api_name(r), "maxq",
					     r->quota.max_queued, "ids", ids)
				 : NULL;
		if (!it || json_array_append_new(items, it) != 0)
			json_decref(items), items = NULL;
	}
	if (items)
		*text = json_dumps(items, JSON_COMPACT);
	json_decref(items);
	if (!*text)
		return -1;
	fe_db_stmt_text(s, SQL_AUDIT_CREATED, 2, reqs[0]->tenant_id, *text);
	return 0;
}

struct refusal_slot {
	char key[TENANT_UUID_BUF + 32]; /* tenant '/' limit */
	uint64_t sec;
	uint64_t suppressed;
};

/* Per frontend thread: each worker runs its own loop on its own thread. */
static _Thread_local struct refusal_slot refusals[REFUSAL_SLOTS];

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* 1 with *refused = the refusals this record stands for, 0 when this
 * refusal is only counted (or dropped: table full of this second). */
static int refusal_take(const char *key, uint64_t sec, uint64_t *refused)
{
	uint32_t h = fnv1a(key);
	struct refusal_slot *free_slot = NULL;
	for (int i = 0; i < REFUSAL_PROBES; i++) {
		struct refusal_slot *s = &refusals[(h + (uint32_t)i) % REFUSAL_SLOTS];
		if (strcmp(s->key, key) == 0) {
			if (s->sec == sec) {
				s->suppressed++;
				return 0;
			}
			*refused = s->suppressed + 1;
			s->sec = sec;
			s->suppressed = 0;
			return 1;
		}
		if (!free_slot && (s->key[0] == '\0' || s->sec != sec))
			free_slot = s;
	}
	if (!free_slot)
		return 0;
	snprintf(free_slot->key, sizeof(free_slot->key), "%s", key);
	free_slot->sec = sec;
	free_slot->suppressed = 0;
	*refused = 1;
	return 1;
}

static void on_refusal_logged(void *arg, PGresult *const *res, int n, const char *error)
{
	(void)arg;
	(void)res;
	(void)n;
	if (error)
		gv_warn(NULL, "audit quota.refused: %s", error);
}

void fe_audit_refusal(struct fe_req *r, const char *limit, int status, int64_t requested, int64_t allowed)
{
	char key[TENANT_UUID_BUF + 32];
	uint64_t refused;
	snprintf(key, sizeof(key), "%s/%.30s", r->tenant_id, limit);
	if (!refusal_take(key, fe_now_ms() / 1000, &refused))
		return;
	char details[320], actor[FE_ACTOR_BUF];
	int len = snprintf(details, sizeof(details),
			   "{\"api\":\"%s\",\"limit\":\"%.30s\",\"status\":%d,\"requested\":%" PRId64
			   ",\"allowed\":%" PRId64 ",\"refused\":%" PRIu64 "}",
			   fe_api_name(r), limit, status, requested, allowed, refused);
	if (len < 0 || (size_t)len >= sizeof(details))
		return;
	actor_of(r, actor, sizeof(actor));
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, TENANT_SQL_AUDIT_APPEND, 7, r->tenant_id, actor, TENANT_AUDIT_QUOTA_REFUSED,
			r->m.route ? r->m.route->name : NULL, NULL, NULL, details);
	struct gv_err err;
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_refusal_logged, NULL, &err) < 0)
		gv_warn(NULL, "audit quota.refused: %s", err.msg);
}
