/* Submission rows as every read shows them: the columns a SELECT returns
 * (FE_ROW_COLS), their load into the API layer's struct fe_subrow with the
 * problem's feedback policy applied, the read of one row for the caller's
 * tenant, and the reply in the request's API. Separate from the routes so
 * that creation (wait=true), reads, deletes and SSE all load and render a
 * row the one same way. */
#include "frontend/rows.h"

#include "frontend/api_jobe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/feedback.h"
#include "common/log.h"
#include "frontend/metrics.h"

/* Column 9: the feedback policy of the submission's problem (issue 6),
 * applied in fe_row_load; reads without it apply the default policy. */
#define PROBLEM_POLICY                                                                           \
	"(SELECT p.feedback::text FROM problems p WHERE p.tenant_id = submissions.tenant_id "   \
	"AND p.id = submissions.problem_id)"
/* $3: only a submission made through the playground (an anonymous read
 * of a tenant without token_capability, frontend/playground.h). A
 * notebook kernel's row is no submission of these APIs (kernels.c). */
#define ROW_SCOPE                                                                                  \
	" FROM submissions WHERE tenant_id = $1::uuid AND id = $2 AND kind = 'submission' "          \
	"AND (NOT $3::boolean OR playground)"
static const char SQL_GET[] = "SELECT " FE_ROW_COLS ", NULL, NULL, " PROBLEM_POLICY ROW_SCOPE;
static const char SQL_GET_REQ[] = "SELECT " FE_ROW_COLS ", request::text, NULL, " PROBLEM_POLICY ROW_SCOPE;

static const char *val(const PGresult *res, int i, int c)
{
	return PQgetisnull(res, i, c) ? NULL : PQgetvalue(res, i, c);
}

void fe_row_load(const PGresult *res, int i, struct fe_rowbuf *rb)
{
	memset(rb, 0, sizeof(*rb));
	rb->row.id = val(res, i, 0);
	rb->row.language = val(res, i, 1);
	rb->row.status = val(res, i, 2);
	rb->row.verdict = val(res, i, 3);
	rb->row.created_at = val(res, i, 4);
	rb->row.finished_at = val(res, i, 5);
	const char *r = val(res, i, 6), *q = val(res, i, 7);
	/* Written by our own daemons; NULs inside strings are legal there. */
	if (r)
		rb->res = json_loads(r, JSON_ALLOW_NUL, NULL);
	if (q)
		rb->req = json_loads(q, JSON_ALLOW_NUL, NULL);
	rb->row.result = rb->res;
	rb->row.request = rb->req;
	if (PQnfields(res) > 8 && !PQgetisnull(res, i, 8))
		rb->total = atoll(PQgetvalue(res, i, 8));
	/* What the submitter may see of a problem's tests: filtered here,
	 * before any API renders the row. */
	gv_feedback_filter(rb->res, PQnfields(res) > 9 ? val(res, i, 9) : NULL);
}

void fe_row_clear(struct fe_rowbuf *rb)
{
	json_decref(rb->req);
	json_decref(rb->res);
	memset(rb, 0, sizeof(*rb));
}

bool fe_row_final(const struct fe_subrow *row)
{
	return row->status && (strcmp(row->status, "queued") && strcmp(row->status, "running"));
}

struct fetch_ctx {
	struct fe_req *r;
	fe_row_cb cb;
};

static void on_fetch(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fetch_ctx *c = arg;
	struct fe_req *r = c->r;
	fe_row_cb cb = c->cb;
	free(c);
	r->fetching = false;
	if (error || n < 1 || !res[0]) {
		cb(r, NULL, error ? error : "no result");
	} else if (PQntuples(res[0]) == 0) {
		cb(r, NULL, NULL);
	} else {
		struct fe_rowbuf rb;
		fe_row_load(res[0], 0, &rb);
		if (fe_row_final(&rb.row) && rb.row.verdict)
			fe_metrics_verdict(r->w->app->metrics, rb.row.verdict);
		cb(r, &rb, NULL);
		fe_row_clear(&rb);
	}
	fe_req_unref(r);
}

void fe_row_fetch(struct fe_req *r, bool with_request, fe_row_cb cb)
{
	struct gv_err err;
	struct fetch_ctx *c = malloc(sizeof(*c));
	if (!c) {
		cb(r, NULL, "out of memory");
		return;
	}
	c->r = r;
	c->cb = cb;
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, with_request ? SQL_GET_REQ : SQL_GET, 3, r->tenant_id, r->sid,
			r->anonymous && r->pg_rows_only ? "true" : "false");
	fe_req_ref(r);
	r->fetching = true;
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_fetch, c, &err) < 0) {
		r->fetching = false;
		free(c);
		fe_req_unref(r);
		cb(r, NULL, err.msg);
	}
}

void fe_row_answer(struct fe_req *r, int status, struct fe_rowbuf *rb)
{
	struct fe_app *app = r->w->app;
	json_t *j = NULL;
	switch (r->api) {
	case FE_API_JUDGE0: j = fe_j0_render(&rb->row, r->j0_fields, r->j0_base64, &app->cat); break;
	case FE_API_PISTON:
		j = fe_piston_render(&rb->row, r->lang ? r->lang : lang_find(&app->langs, rb->row.language),
				     &app->cat);
		break;
	case FE_API_JOBE: j = fe_jobe_render(&rb->row); break;
	default: j = fe_native_render(&rb->row); break;
	}
	fe_reply_json(r, status, j);
}


void fe_req_set_sid(struct fe_req *r, const char *id)
{
	size_t n = strnlen(id, FE_SID_BUF - 1);
	memcpy(r->sid, id, n);
	r->sid[n] = '\0';
}
