/* Keyless reads of one submission by its id at the root paths; see
 * token_read.h for the policy. The admission after the lookup is the
 * playground's (playground.c), as for a token read under its prefix. */
#include "frontend/token_read.h"

#include <event2/http.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "frontend/auth.h"
#include "frontend/client_addr.h"
#include "frontend/playground.h"
#include "tenants/playground.h"

bool fe_token_read_candidate(struct fe_req *r)
{
	if (r->playground || r->anonymous || !r->m.route || r->m.nparams < 1)
		return false;
	if (r->method != FE_M_GET && r->method != FE_M_HEAD)
		return false;
	switch (r->m.route->id) {
	case FE_ROUTE_J0_GET:
	case FE_ROUTE_V1_SUBMISSION:
	case FE_ROUTE_V1_EVENTS: break;
	default: return false;
	}
	/* Any key presented, in a header or the query, is authenticated
	 * instead: a wrong key stays a 401, never a keyless read. */
	return !fe_auth_presented(r) && !fe_query(r, "X-Auth-Token") && !fe_query(r, "api_key");
}

struct token_pending {
	struct fe_req *r;
};

static void on_token_row(void *arg, PGresult *const *res, int n, const char *error)
{
	struct token_pending *p = arg;
	struct fe_req *r = p->r;
	free(p);
	struct gv_err err;
	if (error || n < 1 || !res[0]) {
		gv_warn(NULL, "token lookup failed: %s", error ? error : "no result");
		fe_reply_error(r, 503, "unavailable", "the service is unavailable, try again");
		fe_req_unref(r);
		return;
	}
	if (PQntuples(res[0]) < 1) {
		/* The answer to any request without a key. */
		fe_authenticate(r);
		fe_req_unref(r);
		return;
	}
	struct tenant_quota q;
	const char *tid = PQgetvalue(res[0], 0, 0);
	if (strlen(tid) >= sizeof(r->tenant_id) ||
	    tenant_quota_from_pg(res[0], 0, TENANT_PLAYGROUND_QUOTA_COL1, &q, &err) < 0) {
		gv_error(NULL, "token lookup: %s", strlen(tid) >= sizeof(r->tenant_id) ? "bad tenant id" : err.msg);
		fe_reply_error(r, 500, "internal", "the token lookup failed");
		fe_req_unref(r);
		return;
	}
	memcpy(r->tenant_id, tid, strlen(tid) + 1);
	r->key_id[0] = '\0';
	r->anonymous = true;
	r->pg_access = FE_PG_TOKEN;
	r->pg_rows_only = false;
	tenant_playground_quota(&q, &r->quota);
	r->pg_tenant_rps = q.requests_per_second;
	r->pg_tenant_burst = q.burst;
	fe_playground_admit(r);
	fe_req_unref(r);
}

void fe_token_read_resolve(struct fe_req *r)
{
	if (fe_client_of_request(r) < 0) {
		fe_authenticate(r);
		return;
	}
	struct token_pending *p = malloc(sizeof(*p));
	if (!p) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	p->r = r;
	struct fe_db_stmt s;
	fe_db_stmt_text(&s, TENANT_SQL_TOKEN_LOOKUP, 1, r->m.params[0]);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, NULL, &s, 1, on_token_row, p, &err) < 0) {
		free(p);
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}
