/* Submission rows (rows.c): columns, load, one-row read, reply. Private to
 * frontend/. */
#pragma once

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>

#include "frontend/api.h"
#include "frontend/server_internal.h"

/* The first seven columns of every submission read: id, language, status,
 * verdict, created_at, finished_at (ISO 8601, UTC), result. Columns 8..10,
 * when the query has them: request, count(*) OVER (), the problem's
 * feedback policy. */
#define FE_ROW_COLS                                                                         \
	"id, language, status, verdict, "                                                   \
	"to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "     \
	"to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), result::text"

/* One loaded row: row's strings borrow from the PGresult it was loaded
 * from; req and res are owned (fe_row_clear). */
struct fe_rowbuf {
	struct fe_subrow row;
	json_t *req, *res;
	long long total; /* list: count(*) over () */
};

/* Loads row i of res (FE_ROW_COLS first) into rb, filtering the result by
 * the problem's feedback policy. */
void fe_row_load(const PGresult *res, int i, struct fe_rowbuf *rb);
void fe_row_clear(struct fe_rowbuf *rb);
/* Neither queued nor running. */
bool fe_row_final(const struct fe_subrow *row);

typedef void (*fe_row_cb)(struct fe_req *r, struct fe_rowbuf *rb, const char *error);
/* Reads r->sid for r's tenant (with its request column when with_request).
 * cb runs exactly once (rb NULL: not found or error); rb lives for the
 * call only. */
void fe_row_fetch(struct fe_req *r, bool with_request, fe_row_cb cb);

/* Replies with the row rendered in r's API (native, Judge0, Piston). */
void fe_row_answer(struct fe_req *r, int status, struct fe_rowbuf *rb);
/* Copies id, which passed gv_queue_sid_ok (at most 64 bytes), to r->sid. */
void fe_req_set_sid(struct fe_req *r, const char *id);
