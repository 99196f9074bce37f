/* The /v1/problems routes, the problem check of a submission and the
 * feedback policy (frontend/api_problems.h). */
#include "frontend/api_problems.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/feedback.h"
#include "common/json.h"
#include "common/log.h"
#include "common/queue.h"
#include "frontend/waiters.h"

#define LIST_LIMIT_DEFAULT 50
#define LIST_LIMIT_MAX 200

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* One version as the API shows it. */
#define VERSION_JSON                                                                                           \
	"jsonb_build_object('version', v.version, 'status', v.status, 'message', v.message, "                 \
	"'created_at', " TS("v.created_at") ", 'imported_at', " TS("v.imported_at") ", "                       \
	"'archive_bytes', v.archive_bytes, 'name', v.name, 'type', v.type, 'interactive', v.interactive, "     \
	"'custom_validation', v.custom_validation, 'limits', jsonb_build_object('time_ms', v.time_limit_ms, " \
	"'memory_mb', v.memory_mb, 'output_mb', v.output_mb), 'summary', v.summary)"

/* A problem with its newest version's status and message up front. */
#define PROBLEM_JSON                                                                                           \
	"jsonb_build_object('id', p.id, 'created_at', " TS("p.created_at") ", 'updated_at', "                  \
	TS("p.updated_at") ", 'current_version', p.current_version, 'latest_version', p.latest_version, "     \
	"'feedback', p.feedback, 'status', l.status, 'message', l.message, 'name', coalesce(c.name, l.name))"

#define PROBLEM_JOINS                                                                                          \
	"LEFT JOIN problem_versions l ON l.tenant_id = p.tenant_id AND l.problem_id = p.id "                  \
	"AND l.version = p.latest_version "                                                                   \
	"LEFT JOIN problem_versions c ON c.tenant_id = p.tenant_id AND c.problem_id = p.id "                  \
	"AND c.version = p.current_version "

static const char SQL_GET[] =
	"SELECT (" PROBLEM_JSON " || jsonb_build_object('versions', coalesce((SELECT jsonb_agg(" VERSION_JSON
	" ORDER BY v.version) FROM problem_versions v WHERE v.tenant_id = p.tenant_id AND v.problem_id = p.id), "
	"'[]'::jsonb)))::text FROM problems p " PROBLEM_JOINS
	"WHERE p.tenant_id = $1::uuid AND p.id = $2 AND p.deleted_at IS NULL";
static const char SQL_LIST[] =
	"SELECT (" PROBLEM_JSON ")::text, count(*) OVER () FROM problems p " PROBLEM_JOINS
	"WHERE p.tenant_id = $1::uuid AND p.deleted_at IS NULL ORDER BY p.created_at DESC, p.id "
	"LIMIT $2::int OFFSET $3::int";
static const char SQL_VERSION[] =
	"SELECT (jsonb_build_object('id', v.problem_id) || " VERSION_JSON ")::text, v.status "
	"FROM problem_versions v WHERE v.tenant_id = $1::uuid AND v.problem_id = $2 AND v.version = $3::int";
static const char SQL_CREATE_PROBLEM[] =
	"INSERT INTO problems (id, tenant_id, latest_version, feedback) "
	"VALUES ($2, $1::uuid, 1, coalesce($3::jsonb, '{\"sample\": [\"input\", \"expected\", \"output\", \"diff\"], "
	"\"secret\": []}'::jsonb))";
static const char SQL_CREATE_VERSION[] =
	"INSERT INTO problem_versions (tenant_id, problem_id, version, archive, archive_bytes, archive_sha256) "
	"VALUES ($1::uuid, $2, 1, $3, $4::bigint, $5) RETURNING version";
static const char SQL_NEW_VERSION[] =
	"WITH p AS (UPDATE problems SET latest_version = latest_version + 1, updated_at = now(), "
	"feedback = coalesce($6::jsonb, feedback) "
	"WHERE tenant_id = $1::uuid AND id = $2 AND deleted_at IS NULL RETURNING latest_version) "
	"INSERT INTO problem_versions (tenant_id, problem_id, version, archive, archive_bytes, archive_sha256) "
	"SELECT $1::uuid, $2, p.latest_version, $3, $4::bigint, $5 FROM p RETURNING version";
/* $1 tenant, $2 actor, $3 problem, $4 action, $5 bytes: only for a
 * problem that exists (a 404 writes nothing). */
static const char SQL_AUDIT[] =
	"SELECT gavel_audit_append($1::uuid, $2, $4, $3, NULL, NULL, jsonb_build_object('version', "
	"p.latest_version, 'archive_bytes', $5::bigint)) FROM problems p WHERE p.tenant_id = $1::uuid AND p.id = $3";
static const char SQL_SET_FEEDBACK[] =
	"UPDATE problems SET feedback = $3::jsonb, updated_at = now() "
	"WHERE tenant_id = $1::uuid AND id = $2 AND deleted_at IS NULL RETURNING id";
static const char SQL_DELETE[] =
	"UPDATE problems SET deleted_at = now(), updated_at = now() "
	"WHERE tenant_id = $1::uuid AND id = $2 AND deleted_at IS NULL RETURNING id";
static const char SQL_RESOLVE[] =
	"SELECT p.current_version, v.version, v.status, v.time_limit_ms, v.memory_mb FROM problems p "
	"LEFT JOIN problem_versions v ON v.tenant_id = p.tenant_id AND v.problem_id = p.id "
	"AND v.version = coalesce(nullif($3::int, 0), p.current_version) "
	"WHERE p.tenant_id = $1::uuid AND p.id = $2 AND p.deleted_at IS NULL";

/* ------------------------------------------------------------- policy */

#define ITEMS gv_feedback_items
#define N_ITEMS GV_FEEDBACK_ITEMS

static int parse_list(const char *s, const char *field, json_t **out, struct fe_apierr *e)
{
	bool want[N_ITEMS] = { false };
	if (strcmp(s, "none") != 0 && *s) {
		for (const char *p = s; *p;) {
			size_t n = strcspn(p, ",");
			bool known = false;
			for (size_t i = 0; i < N_ITEMS; i++) {
				if (n == strlen(ITEMS[i]) && !strncmp(p, ITEMS[i], n)) {
					want[i] = true;
					known = true;
				}
			}
			if (!known)
				return fe_apierr_set(e, 400, "invalid_request",
						     "'%s': items are input, expected, output, diff or none", field);
			p += n;
			if (*p == ',')
				p++;
		}
	}
	json_t *a = json_array();
	for (size_t i = 0; a && i < N_ITEMS; i++)
		if (want[i])
			json_array_append_new(a, json_string(ITEMS[i]));
	if (!a)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	*out = a;
	return 0;
}

int fe_problem_policy_from_query(const char *sample, const char *secret, json_t **out, struct fe_apierr *e)
{
	*out = NULL;
	json_t *p = gv_feedback_default_policy();
	if (!p)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	json_t *a;
	if (sample) {
		if (parse_list(sample, "feedback_sample", &a, e) < 0)
			goto fail;
		json_object_set_new(p, "sample", a);
	}
	if (secret) {
		if (parse_list(secret, "feedback_secret", &a, e) < 0)
			goto fail;
		json_object_set_new(p, "secret", a);
	}
	*out = p;
	return 0;
fail:
	json_decref(p);
	return -1;
}

/* A JSON policy from a PUT body, rewritten in the canonical form. */
static int policy_from_json(const json_t *j, json_t **out, struct fe_apierr *e)
{
	*out = NULL;
	if (!json_is_object(j))
		return fe_apierr_set(e, 400, "invalid_request", "field 'feedback': expected an object");
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)j, key, v) {
		if (strcmp(key, "sample") && strcmp(key, "secret"))
			return fe_apierr_set(e, 400, "invalid_request", "field 'feedback.%.40s': unknown", key);
		if (!json_is_array(v) || json_array_size(v) > N_ITEMS)
			return fe_apierr_set(e, 400, "invalid_request", "field 'feedback.%s': expected a list", key);
	}
	char lists[2][64];
	const char *cls[2] = { "sample", "secret" };
	for (int k = 0; k < 2; k++) {
		json_t *a = json_object_get(j, cls[k]);
		size_t off = 0, i;
		json_t *it;
		lists[k][0] = '\0';
		json_array_foreach(a, i, it) {
			if (!json_is_string(it) || strlen(json_string_value(it)) > 10)
				return fe_apierr_set(e, 400, "invalid_request", "field 'feedback.%s': items are strings",
						     cls[k]);
			off += (size_t)snprintf(lists[k] + off, sizeof(lists[k]) - off, "%s%s", off ? "," : "",
						json_string_value(it));
		}
		if (!a)
			snprintf(lists[k], sizeof(lists[k]), "%s", k == 0 ? "input,expected,output,diff" : "none");
		else if (!off)
			snprintf(lists[k], sizeof(lists[k]), "none");
	}
	return fe_problem_policy_from_query(lists[0], lists[1], out, e);
}

/* ------------------------------------------------------------ helpers */

/* Replies with the JSON text of column 0 (our own SQL made it). */
static void reply_text(struct fe_req *r, int status, const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	if (!j)
		fe_reply_error(r, 500, "internal", "unreadable row");
	else
		fe_reply_json(r, status, j);
}

static void actor_of(const struct fe_req *r, char *buf, size_t size)
{
	snprintf(buf, size, "key:%s", r->key_id);
}

/* ---------------------------------------------------- GET one, list */

static void on_get(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0])
		fe_reply_db_error(r, error);
	else if (PQntuples(res[0]) == 0)
		fe_reply_error(r, 404, "not_found", "no such problem");
	else
		reply_text(r, 200, PQgetvalue(res[0], 0, 0));
	fe_req_unref(r);
}

static void get_problem(struct fe_req *r, const char *id)
{
	struct fe_db_stmt s;
	struct gv_err err;
	fe_db_stmt_text(&s, SQL_GET, 2, r->tenant_id, id);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_get, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

static void on_list(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0]) {
		fe_reply_db_error(r, error);
		fe_req_unref(r);
		return;
	}
	json_t *arr = json_array();
	long long total = 0;
	for (int i = 0; arr && i < PQntuples(res[0]); i++) {
		json_t *j = json_loads(PQgetvalue(res[0], i, 0), 0, NULL);
		if (j)
			json_array_append_new(arr, j);
		total = atoll(PQgetvalue(res[0], i, 1));
	}
	fe_reply_json(r, 200, json_pack("{s:o,s:I}", "problems", arr ? arr : json_array(), "total", (json_int_t)total));
	fe_req_unref(r);
}

static void list_problems(struct fe_req *r)
{
	const char *ls = fe_query(r, "limit"), *os = fe_query(r, "offset");
	long limit = ls ? atol(ls) : LIST_LIMIT_DEFAULT, offset = os ? atol(os) : 0;
	if (limit < 1 || limit > LIST_LIMIT_MAX || offset < 0 || offset > 100000000) {
		fe_reply_error(r, 400, "invalid_request", "'limit' must be 1..%d and 'offset' >= 0", LIST_LIMIT_MAX);
		return;
	}
	char l[24], o[24];
	snprintf(l, sizeof(l), "%ld", limit);
	snprintf(o, sizeof(o), "%ld", offset);
	struct fe_db_stmt s;
	struct gv_err err;
	fe_db_stmt_text(&s, SQL_LIST, 3, r->tenant_id, l, o);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_list, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* ------------------------------------------------------ version waits */

static void fetch_version(struct fe_req *r);

static void on_version(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	r->fetching = false;
	if (!r->waiting) {
		fe_req_unref(r);
		return;
	}
	if (error || n < 1 || !res[0] || PQntuples(res[0]) != 1) {
		/* Keep waiting: the deadline answers if it stays so. */
		if (error)
			gv_warn(NULL, "problem wait: %s", error);
		fe_req_unref(r);
		return;
	}
	const char *status = PQgetvalue(res[0], 0, 1);
	if (strcmp(status, "pending") != 0) {
		fe_wait_stop(r);
		reply_text(r, !strcmp(status, "ready") ? 201 : 422, PQgetvalue(res[0], 0, 0));
	}
	fe_req_unref(r);
}

static void fetch_version(struct fe_req *r)
{
	if (r->fetching)
		return;
	char ver[16];
	snprintf(ver, sizeof(ver), "%u", r->problem_version);
	struct fe_db_stmt s;
	struct gv_err err;
	fe_db_stmt_text(&s, SQL_VERSION, 3, r->tenant_id, r->sid, ver);
	fe_req_ref(r);
	r->fetching = true;
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_version, r, &err) < 0) {
		r->fetching = false;
		fe_req_unref(r);
	}
}

static void on_wait_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_req *r = arg;
	if (!r->waiting)
		return;
	fe_req_ref(r);
	fe_wait_stop(r);
	fe_reply_json(r, 202, json_pack("{s:s,s:i,s:s}", "id", r->sid, "version", (int)r->problem_version, "status",
					"pending"));
	fe_req_unref(r);
}

/* Answers the upload of (r->sid, r->problem_version): 202 now, or with
 * wait=true once the import has a verdict (201 ready, 422 rejected). */
static void answer_upload(struct fe_req *r, int created_status)
{
	if (!fe_query_bool(r, "wait")) {
		fe_reply_json(r, created_status == 0 ? 202 : created_status,
			      json_pack("{s:s,s:i,s:s}", "id", r->sid, "version", (int)r->problem_version, "status",
					"pending"));
		return;
	}
	fe_wait_start(r, fetch_version);
	if (fe_wait_timer(r, r->w->app->cfg->wait_timeout_ms, on_wait_deadline) != 0) {
		fe_wait_stop(r);
		fe_reply_error(r, 500, "internal", "timer setup failed");
		return;
	}
	/* The import may have finished before the subscription. */
	fetch_version(r);
}

/* ------------------------------------------------------------ uploads */

struct upload {
	struct fe_req *r;
	bool is_new;
	char actor[64];
	char bytes[24];
	char *policy; /* JSON text or NULL */
	unsigned char sha[crypto_hash_sha256_BYTES];
};

static void on_uploaded(void *arg, PGresult *const *res, int n, const char *error)
{
	struct upload *u = arg;
	struct fe_req *r = u->r;
	int k = u->is_new ? 1 : 0;
	const PGresult *vr = !error && n > k ? res[k] : NULL;
	if (!vr) {
		fe_reply_db_error(r, error);
	} else if (PQntuples(vr) != 1) {
		fe_reply_error(r, 404, "not_found", "no such problem");
	} else {
		r->problem_version = (uint32_t)atol(PQgetvalue(vr, 0, 0));
		answer_upload(r, 0);
	}
	free(u->policy);
	free(u);
	fe_req_unref(r);
}

static bool archive_type_ok(const char *ct)
{
	if (!ct)
		return false;
	size_t n = strcspn(ct, "; ");
	static const char *const ok[] = { "application/zip", "application/gzip", "application/x-gzip",
					  "application/x-zip-compressed", "application/octet-stream" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (n == strlen(ok[i]) && !strncasecmp(ct, ok[i], n))
			return true;
	return false;
}

/* POST (id NULL) or PUT with an archive body. */
static void upload(struct fe_req *r, const char *id)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(r->req);
	size_t len = evbuffer_get_length(in);
	size_t max = r->w->app->cfg->max_problem_size;
	if (len > max) {
		fe_reply_error(r, 413, "too_large", "package over %zu bytes", max);
		return;
	}
	if (len == 0) {
		fe_reply_error(r, 400, "invalid_request", "empty body; send the package archive (zip or tar.gz)");
		return;
	}
	struct fe_apierr e;
	json_t *pol = NULL;
	const char *qs = fe_query(r, "feedback_sample"), *qt = fe_query(r, "feedback_secret");
	if ((qs || qt) && fe_problem_policy_from_query(qs, qt, &pol, &e) < 0) {
		fe_reply_apierr(r, &e);
		return;
	}
	struct upload *u = calloc(1, sizeof(*u));
	const unsigned char *buf = evbuffer_pullup(in, (ev_ssize_t)len);
	if (!u || !buf) {
		free(u);
		json_decref(pol);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	u->r = r;
	u->is_new = id == NULL;
	u->policy = pol ? json_dumps(pol, JSON_COMPACT) : NULL;
	json_decref(pol);
	crypto_hash_sha256(u->sha, buf, len);
	actor_of(r, u->actor, sizeof(u->actor));
	snprintf(u->bytes, sizeof(u->bytes), "%zu", len);
	if (u->is_new) {
		fe_new_id(r->sid);
	} else {
		snprintf(r->sid, sizeof(r->sid), "%s", id);
	}
	struct fe_db_stmt s[3];
	int ns = 0;
	if (u->is_new)
		fe_db_stmt_text(&s[ns++], SQL_CREATE_PROBLEM, 3, r->tenant_id, r->sid, u->policy);
	struct fe_db_stmt *v = &s[ns++];
	if (u->is_new)
		fe_db_stmt_text(v, SQL_CREATE_VERSION, 5, r->tenant_id, r->sid, "", u->bytes, "");
	else
		fe_db_stmt_text(v, SQL_NEW_VERSION, 6, r->tenant_id, r->sid, "", u->bytes, "", u->policy);
	/* The archive and its hash as binary parameters: bytes, not text. */
	v->values[2] = (const char *)buf;
	v->lengths[2] = (int)len;
	v->formats[2] = 1;
	v->values[4] = (const char *)u->sha;
	v->lengths[4] = (int)sizeof(u->sha);
	v->formats[4] = 1;
	fe_db_stmt_text(&s[ns++], SQL_AUDIT, 5, r->tenant_id, u->actor, r->sid,
			u->is_new ? "problem.created" : "problem.version_uploaded", u->bytes);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, s, ns, on_uploaded, u, &err) < 0) {
		fe_req_unref(r);
		free(u->policy);
		free(u);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* ------------------------------------------- PUT feedback, DELETE */

static void on_changed(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0])
		fe_reply_db_error(r, error);
	else if (PQntuples(res[0]) == 0)
		fe_reply_error(r, 404, "not_found", "no such problem");
	else if (r->method == FE_M_DELETE)
		fe_reply_json(r, 200, json_pack("{s:s,s:b}", "id", r->sid, "deleted", 1));
	else
		get_problem(r, r->sid);
	fe_req_unref(r);
}

static void put_feedback(struct fe_req *r, const char *id)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(r->req);
	size_t len = evbuffer_get_length(in);
	if (len == 0 || len > 4096) {
		fe_reply_error(r, len ? 413 : 400, len ? "too_large" : "invalid_json", "expected a small JSON body");
		return;
	}
	struct gv_err err;
	const char *buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
	json_t *body = buf ? gv_json_parse(buf, len, 4096, 0, &err) : NULL;
	if (!body) {
		fe_reply_error(r, 400, "invalid_json", "malformed JSON");
		return;
	}
	struct fe_apierr e;
	json_t *pol = NULL;
	const char *key;
	json_t *v;
	json_object_foreach(body, key, v) {
		(void)v;
		if (strcmp(key, "feedback")) {
			json_decref(body);
			fe_reply_error(r, 400, "invalid_request", "field '%.40s': unknown (a new version is a PUT of "
				       "the archive)", key);
			return;
		}
	}
	int rc = policy_from_json(json_object_get(body, "feedback"), &pol, &e);
	json_decref(body);
	if (rc < 0) {
		fe_reply_apierr(r, &e);
		return;
	}
	char *text = json_dumps(pol, JSON_COMPACT);
	json_decref(pol);
	if (!text) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	snprintf(r->sid, sizeof(r->sid), "%s", id);
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, SQL_SET_FEEDBACK, 3, r->tenant_id, id, text);
	fe_req_ref(r);
	rc = fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_changed, r, &err);
	free(text);
	if (rc < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

static void delete_problem(struct fe_req *r, const char *id)
{
	char actor[64];
	actor_of(r, actor, sizeof(actor));
	snprintf(r->sid, sizeof(r->sid), "%s", id);
	struct fe_db_stmt s[2];
	fe_db_stmt_text(&s[0], SQL_DELETE, 2, r->tenant_id, id);
	fe_db_stmt_text(&s[1], SQL_AUDIT, 5, r->tenant_id, actor, id, "problem.deleted", "0");
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, s, 2, on_changed, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

void fe_handle_problems(struct fe_req *r)
{
	switch (r->m.route->id) {
	case FE_ROUTE_V1_PROBLEMS_LIST: list_problems(r); return;
	case FE_ROUTE_V1_PROBLEMS_CREATE: {
		const char *ct = evhttp_find_header(evhttp_request_get_input_headers(r->req), "Content-Type");
		if (!archive_type_ok(ct)) {
			fe_reply_error(r, 415, "unsupported_media_type",
				       "send the package as application/zip or application/gzip (tar.gz)");
			return;
		}
		upload(r, NULL);
		return;
	}
	default: break;
	}
	const char *id = r->m.params[0];
	if (!gv_queue_sid_ok(id)) {
		fe_reply_error(r, 404, "not_found", "no such problem");
		return;
	}
	switch (r->m.route->id) {
	case FE_ROUTE_V1_PROBLEM: get_problem(r, id); return;
	case FE_ROUTE_V1_PROBLEM_DELETE: delete_problem(r, id); return;
	case FE_ROUTE_V1_PROBLEM_PUT: {
		const char *ct = evhttp_find_header(evhttp_request_get_input_headers(r->req), "Content-Type");
		if (ct && !strncasecmp(ct, "application/json", 16))
			put_feedback(r, id);
		else if (archive_type_ok(ct))
			upload(r, id);
		else
			fe_reply_error(r, 415, "unsupported_media_type",
				       "send a new package (application/zip or application/gzip) or a JSON body "
				       "{\"feedback\": ...}");
		return;
	}
	default: fe_reply_error(r, 404, "not_found", "no such route"); return;
	}
}

/* -------------------------------------------------- submission check */

struct sub_check {
	struct fe_req *r;
	json_t *rows;
	bool wait;
};

static void on_resolved(void *arg, PGresult *const *res, int n, const char *error)
{
	struct sub_check *c = arg;
	struct fe_req *r = c->r;
	json_t *req = json_object_get(json_array_get(c->rows, 0), "request");
	json_int_t asked = json_integer_value(json_object_get(req, "problem_version"));
	if (error || n < 1 || !res[0]) {
		fe_reply_db_error(r, error);
		goto out;
	}
	const PGresult *q = res[0];
	if (PQntuples(q) != 1) {
		fe_reply_error(r, 404, "not_found", "no such problem");
		goto out;
	}
	if (PQgetisnull(q, 0, 1)) {
		if (asked)
			fe_reply_error(r, 404, "not_found", "problem has no version %lld", (long long)asked);
		else
			fe_reply_error(r, 409, "problem_not_ready", "the problem has no ready version yet");
		goto out;
	}
	const char *status = PQgetvalue(q, 0, 2);
	if (strcmp(status, "ready") != 0) {
		fe_reply_error(r, 409, "problem_not_ready", "version %s of the problem is %s", PQgetvalue(q, 0, 1),
			       status);
		goto out;
	}
	long long tl = atoll(PQgetvalue(q, 0, 3)), mem = atoll(PQgetvalue(q, 0, 4));
	if ((r->quota.max_cpu_ms > 0 && tl > r->quota.max_cpu_ms) ||
	    (r->quota.max_memory_mb > 0 && mem > r->quota.max_memory_mb)) {
		fe_reply_error(r, 422, "quota_exceeded",
			       "the problem's limits (%lld ms, %lld MiB) are over the tenant's (%lld ms, %lld MiB)", tl,
			       mem, (long long)r->quota.max_cpu_ms, (long long)r->quota.max_memory_mb);
		goto out;
	}
	json_object_set_new(req, "problem_version", json_integer(atoll(PQgetvalue(q, 0, 1))));
	fe_submission_store(r, c->rows, c->wait);
	c->rows = NULL;
out:
	json_decref(c->rows);
	free(c);
	fe_req_unref(r);
}

void fe_problem_submission_check(struct fe_req *r, json_t *rows, bool wait)
{
	json_t *req = json_object_get(json_array_get(rows, 0), "request");
	const char *pid = json_string_value(json_object_get(req, "problem_id"));
	struct sub_check *c = calloc(1, sizeof(*c));
	if (!c || !pid) {
		free(c);
		json_decref(rows);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	*c = (struct sub_check){ .r = r, .rows = rows, .wait = wait };
	char ver[24];
	snprintf(ver, sizeof(ver), "%lld", (long long)json_integer_value(json_object_get(req, "problem_version")));
	struct fe_db_stmt s;
	struct gv_err err;
	fe_db_stmt_text(&s, SQL_RESOLVE, 3, r->tenant_id, pid, ver);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_resolved, c, &err) < 0) {
		fe_req_unref(r);
		json_decref(rows);
		free(c);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}
