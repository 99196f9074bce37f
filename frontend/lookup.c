/* Reading and deleting stored submissions: GET of one (native and
 * Judge0), Judge0's batch GET, list and DELETE. Every query runs in a
 * transaction scoped to the caller's tenant and names the tenant in its
 * WHERE clause, so another tenant's id answers exactly like a missing
 * one. */
#include "frontend/lookup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/queue.h"
#include "frontend/rows.h"

static const char SQL_GET_MANY[] =
	"SELECT " FE_ROW_COLS ", request::text FROM submissions WHERE tenant_id = $1::uuid AND id = ANY($2::text[]) "
	"AND kind = 'submission'";
static const char SQL_LIST[] =
	"SELECT " FE_ROW_COLS ", request::text, count(*) OVER () FROM submissions WHERE tenant_id = $1::uuid "
	"AND kind = 'submission' ORDER BY created_at DESC, id LIMIT $2::int OFFSET $3::int";
static const char SQL_DELETE[] =
	"DELETE FROM submissions WHERE tenant_id = $1::uuid AND id = $2 AND kind = 'submission' "
	"AND status IN ('done', 'failed', 'cancelled') RETURNING " FE_ROW_COLS ", request::text";

static void on_get_row(struct fe_req *r, struct fe_rowbuf *rb, const char *error)
{
	if (error) {
		fe_reply_db_error(r, error);
		return;
	}
	if (!rb) {
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	fe_row_answer(r, 200, rb);
}

static bool j0_needs_request(uint64_t f)
{
	uint64_t need = 1ull << FE_J0_SOURCE_CODE | 1ull << FE_J0_STDIN | 1ull << FE_J0_EXPECTED_OUTPUT |
			1ull << FE_J0_CPU_TIME_LIMIT | 1ull << FE_J0_WALL_TIME_LIMIT |
			1ull << FE_J0_MEMORY_LIMIT | 1ull << FE_J0_MAX_FILE_SIZE | 1ull << FE_J0_CALLBACK_URL |
			1ull << FE_J0_STDOUT; /* judged runs keep stdout per test */
	return (f & need) != 0;
}

void fe_handle_get(struct fe_req *r)
{
	const char *id = r->m.params[0];
	if (!gv_queue_sid_ok(id)) {
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	fe_req_set_sid(r, id);
	if (r->api == FE_API_JUDGE0) {
		struct fe_apierr e;
		r->j0_base64 = fe_query_bool(r, "base64_encoded");
		if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
			fe_reply_apierr(r, &e);
			return;
		}
		fe_row_fetch(r, j0_needs_request(r->j0_fields), on_get_row);
		return;
	}
	fe_row_fetch(r, false, on_get_row);
}

/* The list's page and page size from the query, each clamped to its range
 * (page 1..100000, per_page 1..100, 20 when absent or not a number): a
 * number past long's range read as a negative page once. */
static long query_in_range(struct fe_req *r, const char *name, long def, long lo, long hi)
{
	const char *v = fe_query(r, name);
	if (!v || !*v)
		return def;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (*end)
		return def;
	if (errno == ERANGE)
		return n < 0 ? lo : hi;
	return n < lo ? lo : n > hi ? hi : n;
}

static void list_page(struct fe_req *r, long *page, long *per)
{
	*page = query_in_range(r, "page", 1, 1, 100000);
	*per = query_in_range(r, "per_page", 20, 1, 100);
}

static void on_many(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0]) {
		fe_reply_db_error(r, error ? error : "no result");
		fe_req_unref(r);
		return;
	}
	struct fe_app *app = r->w->app;
	json_t *arr = json_array();
	bool list = r->m.route->id == FE_ROUTE_J0_LIST;
	int rows = PQntuples(res[0]);
	long long total = 0;
	if (list) {
		for (int i = 0; i < rows; i++) {
			struct fe_rowbuf rb;
			fe_row_load(res[0], i, &rb);
			total = rb.total;
			json_array_append_new(arr, fe_j0_render(&rb.row, r->j0_fields, r->j0_base64, &app->cat));
			fe_row_clear(&rb);
		}
		long page, per;
		list_page(r, &page, &per);
		long pages = (long)((total + per - 1) / per);
		json_t *meta = json_pack("{s:i,s:o,s:o,s:i,s:I}", "current_page", (int)page, "next_page",
					 page < pages ? json_integer(page + 1) : json_null(), "prev_page",
					 page > 1 ? json_integer(page - 1) : json_null(), "total_pages", (int)pages,
					 "total_count", (json_int_t)total);
		fe_reply_json(r, 200, json_pack("{s:o,s:o}", "submissions", arr, "meta", meta));
		fe_req_unref(r);
		return;
	}
	/* Batch GET: answer in the order asked, null for ids that are not
	 * this tenant's (missing and foreign look the same). */
	for (size_t k = 0; k < r->batch_n; k++) {
		json_t *item = NULL;
		for (int i = 0; i < rows && !item; i++) {
			if (strcmp(PQgetvalue(res[0], i, 0), r->batch_ids[k]))
				continue;
			struct fe_rowbuf rb;
			fe_row_load(res[0], i, &rb);
			item = fe_j0_render(&rb.row, r->j0_fields, r->j0_base64, &app->cat);
			fe_row_clear(&rb);
		}
		json_array_append_new(arr, item ? item : json_null());
	}
	fe_reply_json(r, 200, json_pack("{s:o}", "submissions", arr));
	fe_req_unref(r);
}

void fe_handle_batch_get(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	struct fe_apierr e;
	r->j0_base64 = fe_query_bool(r, "base64_encoded");
	if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
		fe_reply_apierr(r, &e);
		return;
	}
	const char *tokens = fe_query(r, "tokens");
	if (!tokens || !*tokens) {
		fe_reply_error(r, 400, "invalid_request", "query parameter 'tokens' is required");
		return;
	}
	r->batch_ids = calloc(app->bounds.max_batch, sizeof(char *));
	if (!r->batch_ids) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	size_t cap = strlen(tokens) + 3;
	char *arr = malloc(cap);
	if (!arr) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	size_t off = 0;
	arr[off++] = '{';
	for (const char *p = tokens; *p;) {
		size_t len = strcspn(p, ",");
		if (r->batch_n >= app->bounds.max_batch) {
			free(arr);
			fe_reply_error(r, 413, "too_large", "at most %zu tokens", app->bounds.max_batch);
			return;
		}
		char *t = strndup(p, len);
		if (!t) {
			free(arr);
			fe_reply_error(r, 500, "internal", "out of memory");
			return;
		}
		r->batch_ids[r->batch_n++] = t;
		/* Only valid ids go into the array literal: no quoting
		 * needed, and nothing else can reach the SQL. */
		if (gv_queue_sid_ok(t)) {
			if (off > 1)
				arr[off++] = ',';
			memcpy(arr + off, t, len);
			off += len;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	arr[off++] = '}';
	arr[off] = '\0';
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, SQL_GET_MANY, 2, r->tenant_id, arr);
	struct gv_err err;
	fe_req_ref(r);
	int rc = fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_many, r, &err);
	free(arr);
	if (rc < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

void fe_handle_list(struct fe_req *r)
{
	struct fe_apierr e;
	r->j0_base64 = fe_query_bool(r, "base64_encoded");
	if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
		fe_reply_apierr(r, &e);
		return;
	}
	long page, per;
	list_page(r, &page, &per);
	char lim[24], off[24];
	snprintf(lim, sizeof(lim), "%ld", per);
	snprintf(off, sizeof(off), "%ld", (page - 1) * per);
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, SQL_LIST, 3, r->tenant_id, lim, off);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_many, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

static void on_delete_check(struct fe_req *r, struct fe_rowbuf *rb, const char *error)
{
	if (error)
		fe_reply_db_error(r, error);
	else if (!rb)
		fe_reply_error(r, 404, "not_found", "no such submission");
	else
		fe_reply_error(r, 400, "not_finished",
			       "submission cannot be deleted because its status is %s", rb->row.status);
}

static void on_deleted2(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0]) {
		fe_reply_db_error(r, error ? error : "no result");
	} else if (PQntuples(res[0]) == 0) {
		fe_row_fetch(r, false, on_delete_check);
	} else {
		struct fe_rowbuf rb;
		fe_row_load(res[0], 0, &rb);
		fe_row_answer(r, 200, &rb);
		fe_row_clear(&rb);
	}
	fe_req_unref(r);
}

void fe_handle_delete(struct fe_req *r)
{
	const char *id = r->m.params[0];
	if (!gv_queue_sid_ok(id)) {
		fe_reply_error(r, 404, "not_found", "no such submission");
		return;
	}
	fe_req_set_sid(r, id);
	struct fe_apierr e;
	r->j0_base64 = fe_query_bool(r, "base64_encoded");
	if (fe_j0_parse_fields(fe_query(r, "fields"), &r->j0_fields, &e) < 0) {
		fe_reply_apierr(r, &e);
		return;
	}
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, SQL_DELETE, 2, r->tenant_id, r->sid);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_deleted2, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

