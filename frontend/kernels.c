/* The kernel gateway REST API (kernels.h), in Jupyter Server's shapes
 * (jupyter_server/services/kernels/handlers.py, kernelspecs/handlers.py):
 * errors are {"message", "reason"}, a kernel that is not the caller's, or
 * is over, is "Kernel does not exist: <id>" (404).
 *
 * A kernel's model joins its row (status, name, created_at) with the
 * executor's gavel:kstate:<kid> hash (execution_state, last_activity_ms,
 * connections); a queued kernel is "starting".
 *
 * Creation: the tenant's kernel budgets are read (max_kernels and the live
 * count, kernels_per_minute), the per-minute token bucket taken in Redis
 * (the request-rate script, on a key of its own), then one transaction
 * takes the tenant's kernel lock, inserts the row with its limits copied
 * from tenant_quotas unless max_kernels is reached meanwhile, and appends
 * `kernel.created` (or `quota.refused`); the kernel is then enqueued like
 * a submission. Every refusal is 403, as Kernel Gateway answers over its
 * kernel limit. */
#include "frontend/kernels.h"

#include <event2/buffer.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/kernel_wire.h"
#include "common/log.h"
#include "common/queue.h"
#include "frontend/api_tenant.h"
#include "frontend/auth.h"
#include "frontend/kernel_channels.h"
#include "frontend/kernel_frames.h"
#include "frontend/waiters.h"
#include "tenants/audit.h"

#define KERNEL_NAME "python3"
#define KERNEL_LANGUAGE "python3" /* the Gavel language of the row */
#define KERNELS_LIST_MAX 1000
#define KSTATE_PREFIX "gavel:kstate:"
#define KRATE_KEY_PREFIX TENANT_RATELIMIT_KEY_PREFIX "kernels:"
#define DELETE_WAIT_MS 10000
#define RESTART_WAIT_MS 30000
/* pg_advisory_xact_lock's first key for a tenant's kernel creations
 * ("kern"); the second is hashtext of the tenant uuid. */
#define KERNEL_LOCK_CLASS "1801810542"

#define ISO_UTC "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

static const char SQL_KROW[] =
	"SELECT id, status, coalesce(request->'kernel'->>'name', '" KERNEL_NAME "'), " ISO_UTC " FROM submissions "
	"WHERE tenant_id = $1::uuid AND id = $2 AND kind = 'kernel'";

static const char SQL_KLIST[] =
	"SELECT id, status, coalesce(request->'kernel'->>'name', '" KERNEL_NAME "'), " ISO_UTC " FROM submissions "
	"WHERE tenant_id = $1::uuid AND kind = 'kernel' AND status IN ('queued', 'running') "
	"ORDER BY created_at LIMIT $2::int";

static const char SQL_KBUDGET[] =
	"SELECT q.max_kernels, q.kernels_per_minute, (SELECT count(*) FROM submissions s "
	"WHERE s.tenant_id = $1::uuid AND s.kind = 'kernel' AND s.status IN ('queued', 'running')) "
	"FROM tenant_quotas q WHERE q.tenant_id = $1::uuid";

static const char SQL_KLOCK[] = "SELECT pg_advisory_xact_lock(" KERNEL_LOCK_CLASS ", hashtext($1))";

/* $1 tenant, $2 kernel id, $3 kernel name. Nothing when max_kernels is
 * reached. */
static const char SQL_KINSERT[] =
	"INSERT INTO submissions (id, tenant_id, language, source, request, kind) "
	"SELECT $2, $1::uuid, '" KERNEL_LANGUAGE "', ''::bytea, jsonb_build_object('kind', 'kernel', 'kernel', "
	"jsonb_build_object('name', $3::text, 'lifetime_s', q.kernel_lifetime_s, 'idle_s', q.kernel_idle_s, "
	"'memory_mb', q.kernel_memory_mb, 'cpu_pct', q.kernel_cpu_pct)), 'kernel' "
	"FROM tenant_quotas q WHERE q.tenant_id = $1::uuid AND (SELECT count(*) FROM submissions s "
	"WHERE s.tenant_id = $1::uuid AND s.kind = 'kernel' AND s.status IN ('queued', 'running')) < q.max_kernels "
	"RETURNING id, " ISO_UTC;

/* $1 tenant, $2 actor, $3 kernel id, $4 kernel.created, $5 quota.refused:
 * the record of what SQL_KINSERT did just before. */
static const char SQL_KAUDIT[] =
	"SELECT gavel_audit_append($1::uuid, $2, CASE WHEN s.id IS NULL THEN $5 ELSE $4 END, s.id, NULL, NULL, "
	"CASE WHEN s.id IS NULL THEN jsonb_build_object('api', 'jupyter', 'limit', 'max_kernels', 'status', 403, "
	"'refused', 1) ELSE jsonb_build_object('api', 'jupyter', 'kernel', s.request->'kernel') END) "
	"FROM (SELECT 1) one LEFT JOIN submissions s ON s.tenant_id = $1::uuid AND s.id = $3 AND s.kind = 'kernel'";

/* deploy/sql/0017: a queued kernel is finished at once (reason client). */
static const char SQL_KCANCEL[] = "SELECT gavel_kernel_cancel_queued($1::uuid, $2)";

enum kop { K_GET, K_LIST, K_CREATE, K_DELETE, K_INTERRUPT, K_RESTART, K_CHANNELS };

struct krow {
	char id[FE_KERNEL_ID_BUF];
	char status[16];
	char name[64];
	char created[40];
	char state[16];   /* "" unknown */
	int64_t last_ms;  /* 0 unknown */
	long long conns;
};

struct fe_kreq {
	struct fe_req *r;
	enum kop op;
	char kid[FE_KERNEL_ID_BUF];
	struct krow *rows;
	size_t n, pending;
	struct fe_kwatch *watch;
	long long max_kernels, kpm, live;
};

void fe_kernels_cleanup(struct fe_req *r)
{
	struct fe_kreq *k = r->kreq;
	if (!k)
		return;
	fe_kwatch_remove(k->watch);
	free(k->rows);
	free(k);
	r->kreq = NULL;
}

static void reply_no_kernel(struct fe_req *r, const char *kid)
{
	fe_reply_error(r, 404, "not_found", "Kernel does not exist: %s", kid);
}

/* ------------------------------------------------------------ models */

/* ISO 8601 UTC with microseconds, as jupyter_client writes datetimes. */
static void iso_of_ms(int64_t ms, char *buf, size_t size)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	char t[32];
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03d000Z", t, (int)(ms % 1000));
}

static json_t *model_of(const struct krow *k)
{
	char last[40];
	if (k->last_ms > 0)
		iso_of_ms(k->last_ms, last, sizeof(last));
	else
		snprintf(last, sizeof(last), "%s", k->created);
	const char *state = strcmp(k->status, "queued") && k->state[0] ? k->state : "starting";
	return json_pack("{s:s,s:s,s:s,s:s,s:I}", "id", k->id, "name", k->name, "last_activity", last,
			 "execution_state", state, "connections", (json_int_t)k->conns);
}

static void answer(struct fe_req *r)
{
	struct fe_kreq *k = r->kreq;
	if (k->op == K_LIST) {
		json_t *arr = json_array();
		for (size_t i = 0; arr && i < k->n; i++)
			json_array_append_new(arr, model_of(&k->rows[i]));
		fe_reply_json(r, 200, arr);
		return;
	}
	if (k->op == K_CREATE) {
		char loc[64];
		snprintf(loc, sizeof(loc), "/api/kernels/%s", k->rows[0].id);
		evhttp_add_header(evhttp_request_get_output_headers(r->req), "Location", loc);
		fe_reply_json(r, 201, model_of(&k->rows[0]));
		return;
	}
	fe_reply_json(r, 200, model_of(&k->rows[0]));
}

struct kstate_pending {
	struct fe_req *r;
	size_t i;
};

static void on_kstate(void *arg, redisReply *reply)
{
	struct kstate_pending *p = arg;
	struct fe_req *r = p->r;
	struct fe_kreq *k = r->kreq;
	if (k && p->i < k->n && reply && reply->type == REDIS_REPLY_ARRAY) {
		struct krow *row = &k->rows[p->i];
		for (size_t j = 0; j + 1 < reply->elements; j += 2) {
			const redisReply *f = reply->element[j], *v = reply->element[j + 1];
			if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
				continue;
			if (!strcmp(f->str, "execution_state") && v->len < sizeof(row->state) &&
			    strspn(v->str, "abcdefghijklmnopqrstuvwxyz") == v->len)
				memcpy(row->state, v->str, v->len + 1);
			else if (!strcmp(f->str, "last_activity_ms"))
				row->last_ms = strtoll(v->str, NULL, 10);
			else if (!strcmp(f->str, "connections"))
				row->conns = strtoll(v->str, NULL, 10);
		}
		if (row->last_ms < 0)
			row->last_ms = 0;
		if (row->conns < 0)
			row->conns = 0;
	}
	free(p);
	if (k && k->pending > 0 && --k->pending == 0)
		answer(r);
	fe_req_unref(r);
}

/* Reads every row's gavel:kstate hash, then answers. Without Redis the
 * rows answer with what PostgreSQL knows. */
static void fetch_states(struct fe_req *r)
{
	struct fe_kreq *k = r->kreq;
	struct gv_err err;
	k->pending = k->n + 1; /* held until every command is sent */
	for (size_t i = 0; i < k->n; i++) {
		struct kstate_pending *p = malloc(sizeof(*p));
		char key[sizeof(KSTATE_PREFIX) + FE_KERNEL_ID_BUF];
		snprintf(key, sizeof(key), KSTATE_PREFIX "%s", k->rows[i].id);
		const char *argv[] = { "HGETALL", key };
		if (p) {
			p->r = r;
			p->i = i;
			fe_req_ref(r);
			if (fe_redis_command(r->w->redis, on_kstate, p, 2, argv, NULL, &err) == 0)
				continue;
			fe_req_unref(r);
			free(p);
		}
		k->pending--;
	}
	if (--k->pending == 0)
		answer(r);
}

static void row_load(const PGresult *res, int i, struct krow *k)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->id, sizeof(k->id), "%s", PQgetvalue(res, i, 0));
	snprintf(k->status, sizeof(k->status), "%s", PQgetvalue(res, i, 1));
	snprintf(k->name, sizeof(k->name), "%s", PQgetvalue(res, i, 2));
	snprintf(k->created, sizeof(k->created), "%s", PQgetvalue(res, i, 3));
}

static bool live(const struct krow *k)
{
	return !strcmp(k->status, "queued") || !strcmp(k->status, "running");
}

/* ------------------------------------------------------ kernel specs */

/* The one kernel spec, when r's tenant may use its language and the
 * language is defined here. */
static bool spec_offered(struct fe_req *r)
{
	if (!lang_find(&r->w->app->langs, KERNEL_LANGUAGE))
		return false;
	if (r->quota.n_allowed_languages == 0)
		return true;
	for (size_t i = 0; i < r->quota.n_allowed_languages; i++)
		if (!strcmp(r->quota.allowed_languages[i], KERNEL_LANGUAGE))
			return true;
	return false;
}

/* Every field present: @jupyterlab/services validates the model. */
static json_t *spec_json(void)
{
	return json_pack("{s:s,s:{s:[sssss],s:{},s:s,s:s,s:s,s:{}},s:{}}", "name", KERNEL_NAME, "spec", "argv",
			 "python3", "-m", "ipykernel_launcher", "-f", "{connection_file}", "env", "display_name",
			 "Python 3 (ipykernel)", "language", "python", "interrupt_mode", "signal", "metadata",
			 "resources");
}

static void handle_specs(struct fe_req *r)
{
	json_t *specs = json_object();
	if (specs && spec_offered(r))
		json_object_set_new(specs, KERNEL_NAME, spec_json());
	fe_reply_json(r, 200, json_pack("{s:s,s:o}", "default", KERNEL_NAME, "kernelspecs", specs));
}

static void handle_spec(struct fe_req *r)
{
	const char *name = r->m.params[0];
	if (strcmp(name, KERNEL_NAME) || !spec_offered(r)) {
		fe_reply_error(r, 404, "not_found", "Kernel spec %s not found", name);
		return;
	}
	fe_reply_json(r, 200, spec_json());
}

/* -------------------------------------------------- one kernel's row */

static void after_row(struct fe_req *r);

static void on_row(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0]) {
		fe_reply_db_error(r, error);
	} else if (PQntuples(res[0]) < 1) {
		reply_no_kernel(r, r->kreq->kid);
	} else {
		row_load(res[0], 0, &r->kreq->rows[0]);
		if (live(&r->kreq->rows[0]))
			after_row(r);
		else
			reply_no_kernel(r, r->kreq->kid);
	}
	fe_req_unref(r);
}

static void fetch_row(struct fe_req *r)
{
	struct fe_db_stmt s;
	struct gv_err err;
	fe_db_stmt_text(&s, SQL_KROW, 2, r->tenant_id, r->kreq->kid);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_row, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* A command for the kernel's executor (interrupt, restart, stop): small,
 * never refused for a full list. */
static int push_command(struct fe_req *r, const char *cmd)
{
	struct gv_err err;
	if (fe_kin_push(r->w, r->tenant_id, r->kreq->kid, GV_KIN_COMMAND, cmd, strlen(cmd), NULL, 0, NULL, NULL, &err) <
	    0) {
		fe_reply_error(r, 503, "unavailable", "the kernel cannot be reached now: %s", err.msg);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- delete */

static void delete_done(struct fe_req *r)
{
	if (r->waiting)
		fe_wait_stop(r);
	if (r->kreq) {
		fe_kwatch_remove(r->kreq->watch);
		r->kreq->watch = NULL;
	}
	fe_reply_raw(r, 204, "application/json", NULL);
}

static void on_delete_gone(void *arg, const struct fe_kout *m, const uint8_t *buf)
{
	(void)buf;
	if (m->kind == FE_KOUT_GONE)
		delete_done(arg);
}

static void on_delete_row(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (!error && n >= 1 && res[0] && PQntuples(res[0]) > 0 && r->waiting &&
	    strcmp(PQgetvalue(res[0], 0, 1), "queued") && strcmp(PQgetvalue(res[0], 0, 1), "running"))
		delete_done(r);
	fe_req_unref(r);
}

/* gavel:done of the kernel, or a resubscription: over yet? */
static void delete_wake(struct fe_req *r)
{
	struct fe_db_stmt s;
	struct gv_err err;
	fe_db_stmt_text(&s, SQL_KROW, 2, r->tenant_id, r->kreq->kid);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_delete_row, r, &err) < 0)
		fe_req_unref(r);
}

static void on_delete_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_req *r = arg;
	/* Asked to stop: the executor ends it when it reads the command.
	 * Jupyter's DELETE answers once the shutdown is requested. */
	gv_info(NULL, "kernel %s: not gone %d ms after its stop", r->kreq->kid, DELETE_WAIT_MS);
	delete_done(r);
}

/* The kernel runs: stop client, then wait for its end. */
static void delete_running(struct fe_req *r)
{
	struct fe_kreq *k = r->kreq;
	k->watch = fe_kwatch_add(r->w, k->kid, on_delete_gone, r);
	snprintf(r->sid, sizeof(r->sid), "%s", k->kid);
	fe_wait_start(r, delete_wake);
	if (!k->watch || fe_wait_timer(r, DELETE_WAIT_MS, on_delete_timeout) < 0) {
		fe_wait_stop(r);
		fe_kwatch_remove(k->watch);
		k->watch = NULL;
		fe_reply_error(r, 503, "unavailable", "the kernel's channel cannot be watched now");
		return;
	}
	if (push_command(r, "stop client\n") < 0) {
		fe_wait_stop(r);
		fe_kwatch_remove(k->watch);
		k->watch = NULL;
	}
}

/* What a queued kernel's cancel leaves in Redis: its connections close and
 * whoever waits for it hears that it is done. */
static void announce_cancel(struct fe_req *r)
{
	struct gv_err err;
	char ch[64];
	const char *kid = r->kreq->kid;
	snprintf(ch, sizeof(ch), "gavel:kout:%s", kid);
	const char *gone[] = { "PUBLISH", ch, "gone client\n" };
	const char *done[] = { "PUBLISH", GV_QUEUE_DONE_CHANNEL, kid };
	if (fe_redis_command(r->w->redis, NULL, NULL, 3, gone, NULL, &err) < 0 ||
	    fe_redis_command(r->w->redis, NULL, NULL, 3, done, NULL, &err) < 0)
		gv_warn(NULL, "kernel %s: cancelled, but not announced: %s", kid, err.msg);
	fe_kin_drop(r->w, r->tenant_id, kid);
}

static void on_cancel(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	if (error || n < 1 || !res[0] || PQntuples(res[0]) < 1)
		fe_reply_db_error(r, error);
	else if (!strcmp(PQgetvalue(res[0], 0, 0), "t")) {
		announce_cancel(r);
		fe_reply_raw(r, 204, "application/json", NULL);
	} else {
		/* Claimed meanwhile: stop it as a running one. */
		delete_running(r);
	}
	fe_req_unref(r);
}

static void handle_delete(struct fe_req *r)
{
	struct fe_kreq *k = r->kreq;
	if (strcmp(k->rows[0].status, "queued")) {
		delete_running(r);
		return;
	}
	struct fe_db_stmt s;
	struct gv_err err;
	fe_db_stmt_text(&s, SQL_KCANCEL, 2, r->tenant_id, k->kid);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_cancel, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* ------------------------------------------------------------ restart */

static void restart_end(struct fe_req *r)
{
	fe_kwatch_remove(r->kreq->watch);
	r->kreq->watch = NULL;
	if (r->timer)
		evtimer_del(r->timer);
}

static void on_restart_kout(void *arg, const struct fe_kout *m, const uint8_t *buf)
{
	(void)buf;
	struct fe_req *r = arg;
	if (m->kind == FE_KOUT_RESTARTED) {
		restart_end(r);
		fe_req_ref(r);
		fetch_row(r); /* -> the model */
		fe_req_unref(r);
	} else if (m->kind == FE_KOUT_GONE) {
		restart_end(r);
		reply_no_kernel(r, r->kreq->kid);
	}
}

static void on_restart_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fe_req *r = arg;
	restart_end(r);
	fe_reply_error(r, 500, "internal", "Exception restarting kernel: no answer within %d s", RESTART_WAIT_MS / 1000);
}

static void handle_restart(struct fe_req *r)
{
	struct fe_kreq *k = r->kreq;
	if (!strcmp(k->rows[0].status, "queued")) {
		/* Nothing runs yet: it starts fresh anyway. */
		fetch_states(r);
		return;
	}
	/* Watch before pushing: the answer comes on the kernel's channel. */
	k->watch = fe_kwatch_add(r->w, k->kid, on_restart_kout, r);
	if (!k->watch || fe_wait_timer(r, RESTART_WAIT_MS, on_restart_timeout) < 0) {
		restart_end(r);
		fe_reply_error(r, 503, "unavailable", "the kernel's channel cannot be watched now");
		return;
	}
	k->op = K_GET; /* the next row fetch answers the model */
	if (push_command(r, "restart\n") < 0)
		restart_end(r);
}

/* ------------------------------------------------------------- create */

static void on_enqueued(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	if (!reply || reply->type != REDIS_REPLY_ARRAY)
		gv_warn(NULL, "kernel %s: enqueue failed: %s (the reconciler re-enqueues)", r->kreq->kid,
			reply && reply->type == REDIS_REPLY_ERROR ? reply->str : "redis down");
	fetch_states(r);
	fe_req_unref(r);
}

/* As a submission is enqueued (submit.c): one MULTI/EXEC. */
static void enqueue(struct fe_req *r)
{
	struct fe_redis *rd = r->w->redis;
	struct gv_err err;
	struct gv_queue_argv a;
	const char *multi[] = { "MULTI" }, *exec[] = { "EXEC" };
	if (gv_queue_enqueue_argv(&a, r->tenant_id, r->kreq->kid, false, &err) < 0 ||
	    fe_redis_command(rd, NULL, NULL, 1, multi, NULL, &err) < 0)
		goto fail;
	for (int i = 0; i < 3; i++)
		if (fe_redis_command(rd, NULL, NULL, a.argc[i], a.argv[i], a.argvlen[i], &err) < 0)
			goto fail;
	for (int i = 0; i < 2; i++)
		if (fe_redis_command(rd, NULL, NULL, gv_queue_wake_queued_argc[i],
				     (const char **)gv_queue_wake_queued_argv[i], NULL, &err) < 0)
			goto fail;
	fe_req_ref(r);
	if (fe_redis_command(rd, on_enqueued, r, 1, exec, NULL, &err) == 0)
		return;
	fe_req_unref(r);
fail:
	gv_warn(NULL, "kernel %s: enqueue failed: %s (the reconciler re-enqueues)", r->kreq->kid, err.msg);
	fetch_states(r);
}

static void refuse_max(struct fe_req *r, long long max)
{
	fe_reply_error(r, 403, "quota_exceeded",
		       "Resource Limit: max_kernels: at most %lld kernels queued or running", max);
}

static void on_inserted(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	struct fe_kreq *k = r->kreq;
	if (error || n < 3 || !res[1]) {
		fe_reply_db_error(r, error);
	} else if (PQntuples(res[1]) < 1) {
		refuse_max(r, k->max_kernels); /* audited in the transaction */
	} else {
		struct krow *row = &k->rows[0];
		memset(row, 0, sizeof(*row));
		snprintf(row->id, sizeof(row->id), "%s", k->kid);
		snprintf(row->status, sizeof(row->status), "queued");
		snprintf(row->name, sizeof(row->name), "%s", KERNEL_NAME);
		snprintf(row->created, sizeof(row->created), "%s", PQgetvalue(res[1], 0, 1));
		enqueue(r);
	}
	fe_req_unref(r);
}

static void insert(struct fe_req *r)
{
	struct fe_kreq *k = r->kreq;
	uint8_t rnd[16];
	randombytes_buf(rnd, sizeof(rnd));
	fe_kernel_id_format(rnd, k->kid);
	char actor[FE_ACTOR_BUF];
	snprintf(actor, sizeof(actor), "key:%s", r->key_id);
	struct fe_db_stmt s[3];
	fe_db_stmt_text(&s[0], SQL_KLOCK, 1, r->tenant_id);
	fe_db_stmt_text(&s[1], SQL_KINSERT, 3, r->tenant_id, k->kid, KERNEL_NAME);
	fe_db_stmt_text(&s[2], SQL_KAUDIT, 5, r->tenant_id, actor, k->kid, TENANT_AUDIT_KERNEL_CREATED,
			TENANT_AUDIT_QUOTA_REFUSED);
	struct gv_err err;
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, s, 3, on_inserted, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

static int send_bucket(struct fe_req *r, bool eval);

static void on_bucket(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	struct fe_kreq *k = r->kreq;
	struct tenant_ratelimit_result rl;
	struct gv_err err;
	if (reply && reply->type == REDIS_REPLY_ERROR && !strncmp(reply->str, "NOSCRIPT", 8)) {
		r->w->rl_sha[0] = '\0';
		if (send_bucket(r, true) == 0) {
			fe_req_unref(r);
			return;
		}
		reply = NULL;
	}
	if (reply && tenant_ratelimit_parse_reply(reply, &rl, &err) == 0) {
		if (!rl.allowed) {
			char ra[24];
			snprintf(ra, sizeof(ra), "%lld", (long long)rl.retry_after_s);
			evhttp_add_header(evhttp_request_get_output_headers(r->req), "Retry-After", ra);
			fe_audit_refusal(r, "kernels_per_minute", 403, 1, k->kpm);
			fe_reply_error(r, 403, "quota_exceeded",
				       "Resource Limit: kernels_per_minute: at most %lld kernels a minute", k->kpm);
			fe_req_unref(r);
			return;
		}
	} else {
		/* Fail open, as the request rate does: max_kernels still holds. */
		gv_warn(NULL, "kernel creation rate unavailable: %s", reply ? err.msg : "redis down");
	}
	insert(r);
	fe_req_unref(r);
}

static int send_bucket(struct fe_req *r, bool eval)
{
	struct tenant_ratelimit_args a;
	memset(&a, 0, sizeof(a));
	snprintf(a.key, sizeof(a.key), KRATE_KEY_PREFIX "%s", r->tenant_id);
	snprintf(a.rate, sizeof(a.rate), "%.6f", (double)r->kreq->kpm / 60.0);
	snprintf(a.burst, sizeof(a.burst), "%lld", r->kreq->kpm);
	snprintf(a.cost, sizeof(a.cost), "1");
	tenant_ratelimit_args_argv(&a);
	return fe_ratelimit_send(r, &a, eval, on_bucket);
}

static void on_budget(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	struct fe_kreq *k = r->kreq;
	if (error || n < 1 || !res[0] || PQntuples(res[0]) < 1) {
		fe_reply_db_error(r, error);
		fe_req_unref(r);
		return;
	}
	k->max_kernels = strtoll(PQgetvalue(res[0], 0, 0), NULL, 10);
	k->kpm = strtoll(PQgetvalue(res[0], 0, 1), NULL, 10);
	k->live = strtoll(PQgetvalue(res[0], 0, 2), NULL, 10);
	if (k->live >= k->max_kernels) {
		fe_audit_refusal(r, "max_kernels", 403, k->live + 1, k->max_kernels);
		refuse_max(r, k->max_kernels);
	} else if (k->kpm < 1 || send_bucket(r, false) < 0) {
		insert(r); /* Redis down: fail open (the enqueue says so) */
	}
	fe_req_unref(r);
}

static void handle_create(struct fe_req *r)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(r->req);
	size_t len = evbuffer_get_length(in);
	const char *name = KERNEL_NAME;
	json_t *body = NULL;
	if (len > 0) {
		/* Any Content-Type: Jupyter's clients send text/plain too. */
		const char *buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
		struct gv_err err;
		body = buf ? gv_json_parse(buf, len, r->w->app->cfg->max_body_size, 0, &err) : NULL;
		if (!body || !(json_is_object(body) || json_is_null(body))) {
			json_decref(body);
			fe_reply_error(r, 400, "invalid_request", "Invalid JSON in body of request");
			return;
		}
		json_t *jn = json_object_get(body, "name");
		if (jn && !json_is_null(jn)) {
			if (!json_is_string(jn)) {
				json_decref(body);
				fe_reply_error(r, 400, "invalid_request", "'name' must be a kernel spec name");
				return;
			}
			name = json_string_value(jn);
		}
		/* "env" and "path" are dropped: nothing of the client's reaches
		 * the kernel's environment. */
	}
	bool known = !strcmp(name, KERNEL_NAME) && spec_offered(r);
	if (!known) {
		/* jupyter_client's NoSuchKernel; the name is printable ASCII
		 * in the message, at most 64 bytes. */
		char shown[65];
		size_t i = 0;
		for (; name[i] && i < 64; i++)
			shown[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
		shown[i] = '\0';
		json_decref(body);
		fe_reply_error(r, 404, "not_found", "No such kernel named %s", shown);
		return;
	}
	json_decref(body);
	struct fe_db_stmt s;
	struct gv_err err;
	fe_db_stmt_text(&s, SQL_KBUDGET, 1, r->tenant_id);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_budget, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* --------------------------------------------------------------- list */

static void on_list(void *arg, PGresult *const *res, int n, const char *error)
{
	struct fe_req *r = arg;
	struct fe_kreq *k = r->kreq;
	if (error || n < 1 || !res[0]) {
		fe_reply_db_error(r, error);
		fe_req_unref(r);
		return;
	}
	int rows = PQntuples(res[0]);
	k->rows = rows > 0 ? calloc((size_t)rows, sizeof(*k->rows)) : k->rows;
	if (rows > 0 && !k->rows) {
		fe_reply_error(r, 500, "internal", "out of memory");
		fe_req_unref(r);
		return;
	}
	for (int i = 0; i < rows; i++)
		row_load(res[0], i, &k->rows[i]);
	k->n = (size_t)rows;
	fetch_states(r);
	fe_req_unref(r);
}

static void handle_list(struct fe_req *r)
{
	struct fe_db_stmt s;
	struct gv_err err;
	char lim[16];
	snprintf(lim, sizeof(lim), "%d", KERNELS_LIST_MAX);
	free(r->kreq->rows);
	r->kreq->rows = NULL;
	fe_db_stmt_text(&s, SQL_KLIST, 2, r->tenant_id, lim);
	fe_req_ref(r);
	if (fe_db_txn(r->w->db, r->tenant_id, &s, 1, on_list, r, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "%s", err.msg);
	}
}

/* ------------------------------------------------------------ routing */

static void after_row(struct fe_req *r)
{
	struct fe_kreq *k = r->kreq;
	switch (k->op) {
	case K_GET: fetch_states(r); return;
	case K_DELETE: handle_delete(r); return;
	case K_INTERRUPT:
		/* A queued kernel has nothing to interrupt yet. */
		if (!strcmp(k->rows[0].status, "queued") || push_command(r, "interrupt\n") == 0)
			fe_reply_raw(r, 204, "application/json", NULL);
		return;
	case K_RESTART: handle_restart(r); return;
	case K_CHANNELS: fe_kernel_channels_open(r, k->kid); return;
	case K_LIST:
	case K_CREATE: break;
	}
	fe_reply_error(r, 500, "internal", "unexpected kernel operation");
}

void fe_handle_kernels(struct fe_req *r)
{
	enum fe_route_id id = r->m.route->id;
	if (id == FE_ROUTE_KERNELSPECS) {
		handle_specs(r);
		return;
	}
	if (id == FE_ROUTE_KERNELSPEC) {
		handle_spec(r);
		return;
	}
	struct fe_kreq *k = calloc(1, sizeof(*k));
	if (k)
		k->rows = calloc(1, sizeof(*k->rows));
	if (!k || !k->rows) {
		free(k);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	k->r = r;
	k->n = 1;
	r->kreq = k;
	switch (id) {
	case FE_ROUTE_KERNELS_LIST: k->op = K_LIST; handle_list(r); return;
	case FE_ROUTE_KERNELS_CREATE: k->op = K_CREATE; handle_create(r); return;
	case FE_ROUTE_KERNEL: k->op = K_GET; break;
	case FE_ROUTE_KERNEL_DELETE: k->op = K_DELETE; break;
	case FE_ROUTE_KERNEL_INTERRUPT: k->op = K_INTERRUPT; break;
	case FE_ROUTE_KERNEL_RESTART: k->op = K_RESTART; break;
	case FE_ROUTE_KERNEL_CHANNELS: k->op = K_CHANNELS; break;
	default: fe_reply_error(r, 404, "not_found", "no such route"); return;
	}
	/* Ids are lower-case UUIDs: anything else names no kernel (and is
	 * echoed only as the router's parameter grammar lets it through). */
	snprintf(k->kid, sizeof(k->kid), "%.36s", r->m.params[0]);
	if (!gv_kernel_id_valid(r->m.params[0])) {
		reply_no_kernel(r, r->m.params[0]);
		return;
	}
	fetch_row(r);
}
