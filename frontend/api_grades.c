/* GET /v1/assignments/{name}/grades and GET /v1/grades?assignment=: one
 * grade per student of an assignment, from the caller's finished
 * submissions labelled with it (the course labels, migration 0018), as
 * JSON or CSV (frontend/api_grades.h). */
#include "frontend/api_grades.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobspec.h"
#include "common/log.h"
#include "frontend/csv.h"

/* A submission's score in [0, 1]: the stored problem's (scoring problems
 * give theirs, pass-fail ones 1 or 0), else the share of its tests that
 * passed, else 1 for AC and 0 for anything else. Per student: the latest
 * finished submission ($3 = 'latest') or the best (ties: the latest),
 * with how many finished submissions the student has. Explicitly scoped
 * by tenant ($1), with row-level security underneath. */
static const char SQL_GRADES[] =
	"WITH s AS ("
	" SELECT student, id, verdict, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS at,"
	"  created_at,"
	"  COALESCE((result->>'score')::float8,"
	"   CASE WHEN jsonb_typeof(result->'tests') = 'array' AND jsonb_array_length(result->'tests') > 0"
	"    THEN (SELECT count(*) FILTER (WHERE t->>'verdict' = 'AC')::float8 / count(*)"
	"          FROM jsonb_array_elements(result->'tests') t)"
	"    WHEN verdict = 'AC' THEN 1 ELSE 0 END) AS score,"
	"  count(*) OVER (PARTITION BY student) AS n"
	" FROM submissions"
	" WHERE tenant_id = $1::uuid AND assignment = $2 AND student IS NOT NULL AND kind = 'submission'"
	"  AND status = 'done')"
	"SELECT DISTINCT ON (student) student, round(score::numeric, 6)::float8::text, COALESCE(verdict, ''), id, at, n"
	" FROM s ORDER BY student,"
	"  CASE WHEN $3 = 'best' THEN score ELSE 0 END DESC, created_at DESC, id DESC";

#define GRADES_MAX_ROWS 100000

/* Every cell, numbers and ids too, through fe_csv_cell (the spreadsheet
 * rules). Cells are labels (at most GV_JOBSPEC_LABEL_MAX bytes) or
 * shorter; one that did not fit would be written empty, never raw. */
static void csv_field(struct evbuffer *b, const char *s)
{
	char cell[2 * GV_JOBSPEC_LABEL_MAX + 8];
	size_t n = fe_csv_cell(s, cell, sizeof(cell));
	if (n == (size_t)-1) {
		evbuffer_add(b, "\"\"", 2);
		return;
	}
	evbuffer_add(b, cell, n);
}

struct grades_req {
	struct fe_req *r;
	bool csv;
	char rule[8];
	char assignment[GV_JOBSPEC_LABEL_MAX + 1];
};

static void reply_csv(struct grades_req *g, const PGresult *res)
{
	struct evbuffer *b = evbuffer_new();
	if (!b) {
		fe_reply_error(g->r, 500, "internal", "out of memory");
		return;
	}
	evbuffer_add_printf(b, "student,score,verdict,submission,submitted_at,submissions\r\n");
	for (int i = 0; i < PQntuples(res); i++) {
		for (int c = 0; c < 6; c++) {
			if (c)
				evbuffer_add(b, ",", 1);
			csv_field(b, PQgetvalue(res, i, c));
		}
		evbuffer_add(b, "\r\n", 2);
	}
	fe_reply_raw(g->r, 200, "text/csv; charset=utf-8", b);
	evbuffer_free(b);
}

static void reply_json(struct grades_req *g, const PGresult *res)
{
	json_t *arr = json_array();
	for (int i = 0; arr && i < PQntuples(res); i++) {
		const char *v = PQgetvalue(res, i, 2);
		json_t *o = json_pack("{s:s,s:f,s:o,s:s,s:s,s:I}", "student", PQgetvalue(res, i, 0), "score",
				      strtod(PQgetvalue(res, i, 1), NULL), "verdict", *v ? json_string(v) : json_null(),
				      "submission", PQgetvalue(res, i, 3), "submitted_at", PQgetvalue(res, i, 4),
				      "submissions", (json_int_t)strtoll(PQgetvalue(res, i, 5), NULL, 10));
		if (!o || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	if (!arr) {
		fe_reply_error(g->r, 500, "internal", "out of memory");
		return;
	}
	fe_reply_json(g->r, 200, json_pack("{s:s,s:s,s:o}", "assignment", g->assignment, "rule", g->rule, "students", arr));
}

static void on_grades(void *arg, PGresult *const *res, int n, const char *error)
{
	struct grades_req *g = arg;
	if (error || n < 1 || !res[0]) {
		gv_warn(NULL, "database: %s", error ? error : "no result");
		fe_reply_error(g->r, 503, "unavailable", "the database is unavailable, try again");
	} else if (PQntuples(res[0]) > GRADES_MAX_ROWS) {
		fe_reply_error(g->r, 413, "too_large", "more than %d students", GRADES_MAX_ROWS);
	} else if (g->csv) {
		reply_csv(g, res[0]);
	} else {
		reply_json(g, res[0]);
	}
	fe_req_unref(g->r);
	free(g);
}

/* CSV when ?format=csv or the client accepts text/csv and not JSON. */
static bool wants_csv(struct fe_req *r, const char *format)
{
	if (format)
		return !strcmp(format, "csv");
	const char *accept = evhttp_find_header(evhttp_request_get_input_headers(r->req), "Accept");
	return accept && strstr(accept, "text/csv") && !strstr(accept, "application/json");
}

void fe_handle_grades(struct fe_req *r, const char *assignment)
{
	const char *rule = fe_query(r, "rule"), *format = fe_query(r, "format");
	if (!assignment || !gv_jobspec_label_ok(assignment)) {
		fe_reply_error(r, 400, "invalid_request", "the assignment: 1 to %d bytes of text without control characters",
			       GV_JOBSPEC_LABEL_MAX);
		return;
	}
	if (rule && strcmp(rule, "latest") != 0 && strcmp(rule, "best") != 0) {
		fe_reply_error(r, 400, "invalid_request", "'rule' is 'latest' (the default) or 'best'");
		return;
	}
	if (format && strcmp(format, "csv") != 0 && strcmp(format, "json") != 0) {
		fe_reply_error(r, 400, "invalid_request", "'format' is 'json' (the default) or 'csv'");
		return;
	}
	struct grades_req *g = calloc(1, sizeof(*g));
	if (!g) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	g->r = r;
	g->csv = wants_csv(r, format);
	snprintf(g->rule, sizeof(g->rule), "%s", rule ? rule : "latest");
	snprintf(g->assignment, sizeof(g->assignment), "%s", assignment);
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, SQL_GRADES, 3, r->tenant_id, g->assignment, g->rule);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_grades, g, &err) < 0) {
		fe_req_unref(r);
		free(g);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}
