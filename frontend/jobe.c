/* Jobe's REST API 1.0 under /jobe/index.php/restapi/, so that Moodle's
 * CodeRunner, pointed at Gavel as its "Jobe server", runs every answer in
 * a Gavel sandbox as a normal submission of the tenant whose key it sends
 * (X-API-KEY). api_jobe.c translates; this file is the I/O around it
 * (languages.c lists the languages, as for the other APIs):
 * runs wait for their result (202 with the run id after
 * frontend.wait_timeout), runresults reads a row, and the file store.
 *
 * The file store is a cache in Redis, per tenant: a file's key carries the
 * tenant's id (never the client's word for it), so one tenant can neither
 * read nor overwrite another's, and HEAD answers only for the caller's own
 * files. What a tenant can make Redis hold is bounded twice, by a budget
 * per tenant and one for all (frontend.jobe_files_per_tenant,
 * jobe_files_total), and every file expires (frontend.jobe_file_ttl). The
 * accounting is one Lua script, atomic in Redis: it first forgets the
 * files whose time is up (a bounded number per call, so a call costs
 * little), then admits the new file only within both budgets. A run that
 * names a file the store does not hold (expired, or never sent) answers
 * 404, and CodeRunner uploads its files and runs again. A run's files
 * reach its sandbox as a tar archive beside the source, which only
 * gavel-unpack opens, inside that sandbox. They are fetched by one more
 * script that first weighs them by their stored sizes and answers the
 * bytes only within the run's budget: a run naming 32 files of the
 * largest size never makes the frontend hold them to refuse them. */
#include "frontend/jobe.h"

#include <event2/buffer.h>
#include <hiredis/hiredis.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/queue.h"
#include "frontend/api_jobe.h"
#include "frontend/api_tenant.h"
#include "frontend/api_internal.h"
#include "frontend/rows.h"
#include "frontend/submit.h"

#define JOBE_FILE_KEY "gavel:jobe:f:" /* + <tenant>/<id>: the bytes */
#define JOBE_EXPIRY "gavel:jobe:exp"  /* zset <tenant>/<id> -> expiry (ms) */
#define JOBE_SIZES "gavel:jobe:size"  /* hash <tenant>/<id> -> bytes */
#define JOBE_USED "gavel:jobe:used"   /* hash <tenant> -> bytes, "*" -> all */
/* Expired files forgotten per call: bounded work for one request; the
 * store catches up over later calls. */
#define JOBE_PURGE_BATCH "128"

/* ARGV: tenant, id, bytes, now (ms), ttl (ms), tenant budget, total
 * budget. Returns {1} stored, or {0, "tenant"|"total", used}. */
static const char JOBE_PUT_LUA[] =
	"local now = tonumber(ARGV[4]) "
	"for _, m in ipairs(redis.call('ZRANGEBYSCORE', '" JOBE_EXPIRY "', '-inf', now, 'LIMIT', 0, " JOBE_PURGE_BATCH ")) do "
	"  local s = tonumber(redis.call('HGET', '" JOBE_SIZES "', m) or '0') "
	"  redis.call('HDEL', '" JOBE_SIZES "', m) "
	"  redis.call('ZREM', '" JOBE_EXPIRY "', m) "
	"  redis.call('DEL', '" JOBE_FILE_KEY "' .. m) "
	"  local t = string.match(m, '^([^/]+)/') "
	"  if t then redis.call('HINCRBY', '" JOBE_USED "', t, -s) end "
	"  redis.call('HINCRBY', '" JOBE_USED "', '*', -s) "
	"end "
	"local m = ARGV[1] .. '/' .. ARGV[2] "
	"local old = tonumber(redis.call('HGET', '" JOBE_SIZES "', m) or '0') "
	"local size = string.len(ARGV[3]) "
	"local tu = tonumber(redis.call('HGET', '" JOBE_USED "', ARGV[1]) or '0') - old "
	"local all = tonumber(redis.call('HGET', '" JOBE_USED "', '*') or '0') - old "
	"if tu + size > tonumber(ARGV[6]) then return {0, 'tenant', tu} end "
	"if all + size > tonumber(ARGV[7]) then return {0, 'total', all} end "
	"redis.call('SET', '" JOBE_FILE_KEY "' .. m, ARGV[3], 'PX', ARGV[5]) "
	"redis.call('ZADD', '" JOBE_EXPIRY "', now + tonumber(ARGV[5]), m) "
	"redis.call('HSET', '" JOBE_SIZES "', m, size) "
	"redis.call('HINCRBY', '" JOBE_USED "', ARGV[1], size - old) "
	"redis.call('HINCRBY', '" JOBE_USED "', '*', size - old) "
	"return {1}";

/* KEYS: a run's files. ARGV: the bytes a run's files may hold together,
 * the bytes their archive may take. Returns {0} when a file is not held,
 * {1, bytes, archive bytes} over either budget (weighed by STRLEN: no
 * byte is read), else {2, file, file...} in KEYS' order. Atomic, so what
 * was weighed is what is answered. */
static const char JOBE_FETCH_LUA[] =
	"local total, tar = 0, 1024 "
	"for i = 1, #KEYS do "
	"  local n = redis.call('STRLEN', KEYS[i]) "
	"  if n == 0 and redis.call('EXISTS', KEYS[i]) == 0 then return {0} end "
	"  total = total + n "
	"  tar = tar + 512 + math.ceil(n / 512) * 512 "
	"end "
	"if total > tonumber(ARGV[1]) or tar > tonumber(ARGV[2]) then return {1, total, tar} end "
	"local out = redis.call('MGET', unpack(KEYS)) "
	"table.insert(out, 1, 2) "
	"return out";

/* The Redis key of r's tenant's file id. */
static void file_key(const struct fe_req *r, const char *id, char *buf, size_t size)
{
	snprintf(buf, size, JOBE_FILE_KEY "%s/%s", r->tenant_id, id);
}

/* ---------------------------------------------------------------- files */

static void on_file_put(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	const struct fe_config *cfg = r->w->app->cfg;
	if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_INTEGER) {
		gv_warn(NULL, "jobe file store: %s",
			reply && reply->type == REDIS_REPLY_ERROR ? reply->str : "redis down");
		fe_reply_error(r, 503, "unavailable", "the file store is not available now");
	} else if (reply->element[0]->integer != 1) {
		bool tenant = reply->elements > 1 && reply->element[1]->type == REDIS_REPLY_STRING &&
			      !strcmp(reply->element[1]->str, "tenant");
		fe_audit_refusal(r, tenant ? "jobe_files_per_tenant" : "jobe_files_total", tenant ? 413 : 503, 0,
				 (int64_t)(tenant ? cfg->jobe_files_per_tenant : cfg->jobe_files_total));
		if (tenant)
			fe_reply_error(r, 413, "too_large",
				       "this tenant's files take their whole budget (%llu bytes) until some expire",
				       (unsigned long long)cfg->jobe_files_per_tenant);
		else
			fe_reply_error(r, 503, "unavailable", "the file store is full; try again later");
	} else if (r->m.route->id == FE_ROUTE_JOBE_FILES_POST) {
		fe_reply_json(r, 201, json_string(r->sid));
	} else {
		fe_reply_raw(r, 204, "application/json", NULL);
	}
	fe_req_unref(r);
}

/* PUT files/{id} and POST files: {"file_contents": base64}. */
static void handle_file_upload(struct fe_req *r)
{
	const struct fe_config *cfg = r->w->app->cfg;
	bool put = r->m.route->id == FE_ROUTE_JOBE_FILE_PUT;
	if (put && !fe_jobe_file_id_ok(r->m.params[0])) {
		fe_reply_error(r, 400, "invalid_request", "A file id is 8 to 64 letters, digits, '_' or '-'");
		return;
	}
	json_t *body = fe_read_json_body(r);
	if (!body)
		return;
	const json_t *c = json_object_get(body, "file_contents");
	if (!json_is_string(c)) {
		json_decref(body);
		fe_reply_error(r, 400, "invalid_request", "file_contents (base64) is required");
		return;
	}
	struct gv_err err;
	size_t len = 0;
	/* Bounded: the decoder refuses more than one file may hold. */
	unsigned char *data = gv_b64_decode(json_string_value(c), json_string_length(c),
					    cfg->max_additional_files_size, &len, &err);
	json_decref(body);
	if (!data) {
		if (err.code == GV_ELIMIT)
			fe_reply_error(r, 413, "too_large", "file_contents: more than %llu bytes",
				       (unsigned long long)cfg->max_additional_files_size);
		else
			fe_reply_error(r, 400, "invalid_request", "file_contents is not valid base64");
		return;
	}
	if (put) {
		fe_req_set_sid(r, r->m.params[0]);
	} else {
		/* Our own id: the content's hash, so the same bytes posted
		 * twice are one file. */
		unsigned char h[crypto_hash_sha256_BYTES];
		crypto_hash_sha256(h, data, len);
		char hex[2 * crypto_hash_sha256_BYTES + 1];
		sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
		hex[40] = '\0';
		fe_req_set_sid(r, hex);
	}
	char now[24], ttl[24], per[24], total[24];
	snprintf(now, sizeof(now), "%llu", (unsigned long long)(fe_now_us() / 1000));
	snprintf(ttl, sizeof(ttl), "%llu", (unsigned long long)cfg->jobe_file_ttl_ms);
	snprintf(per, sizeof(per), "%llu", (unsigned long long)cfg->jobe_files_per_tenant);
	snprintf(total, sizeof(total), "%llu", (unsigned long long)cfg->jobe_files_total);
	const char *argv[] = { "EVAL", JOBE_PUT_LUA, "0", r->tenant_id, r->sid, (const char *)data, now, ttl, per,
			       total };
	size_t argvlen[10];
	for (size_t i = 0; i < 10; i++)
		argvlen[i] = i == 5 ? len : strlen(argv[i]);
	fe_req_ref(r);
	int rc = fe_redis_command(r->w->redis, on_file_put, r, 10, argv, argvlen, &err);
	free(data);
	if (rc < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "the file store is not available now");
	}
}

static void on_file_check(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	if (!reply || reply->type != REDIS_REPLY_INTEGER) {
		fe_reply_error(r, 503, "unavailable", "the file store is not available now");
	} else if (reply->integer != 1) {
		fe_reply_error(r, 404, "not_found", "File not found");
	} else {
		fe_reply_raw(r, 204, "application/json", NULL);
	}
	fe_req_unref(r);
}

/* HEAD files/{id} (and GET): 204 when this tenant's store holds it. */
static void handle_file_check(struct fe_req *r)
{
	if (!fe_jobe_file_id_ok(r->m.params[0])) {
		fe_reply_error(r, 404, "not_found", "File not found");
		return;
	}
	char key[256];
	file_key(r, r->m.params[0], key, sizeof(key));
	const char *argv[] = { "EXISTS", key };
	struct gv_err err;
	fe_req_ref(r);
	if (fe_redis_command(r->w->redis, on_file_check, r, 2, argv, NULL, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "the file store is not available now");
	}
}

/* ----------------------------------------------------------------- runs */

struct run_ctx {
	struct fe_req *r;
	struct fe_jobe_run run;
};

/* The run's files (files[0..n_files), as JOBE_FETCH_LUA answered them),
 * into its spec as one archive. */
static int attach_files(struct run_ctx *c, redisReply **files, struct fe_apierr *e)
{
	struct fe_jobe_run *run = &c->run;
	size_t max = c->r->w->app->bounds.max_additional_files;
	const char *names[FE_JOBE_FILES_MAX], *data[FE_JOBE_FILES_MAX];
	size_t lens[FE_JOBE_FILES_MAX], total = 0;
	for (size_t i = 0; i < run->n_files; i++) {
		redisReply *f = files[i];
		if (f->type != REDIS_REPLY_STRING)
			return fe_apierr_set(e, 404, "not_found",
					     "One or more of the specified files is missing/unavailable");
		names[i] = run->files[i].name;
		data[i] = f->str;
		lens[i] = f->len;
		total += f->len;
	}
	if (total > max)
		return fe_apierr_set(e, 413, "too_large", "file_list: the files together are more than %zu bytes", max);
	char *tar, *b64 = NULL;
	size_t tarlen;
	struct gv_err err;
	if (fe_jobe_tar(names, data, lens, run->n_files, &tar, &tarlen) < 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	b64 = gv_b64_encode(tar, tarlen, NULL, &err);
	free(tar);
	json_t *v = b64 ? json_string(b64) : NULL;
	free(b64);
	if (!v)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	/* The archive's headers count too: the bound is the spec's own. */
	enum fe_extra_result x = fe_spec_additional_files(v, GV_JOBSPEC_ADDITIONAL_FILES_MAX, &run->job);
	json_decref(v);
	if (x == FE_EXTRA_TOO_LARGE)
		return fe_apierr_set(e, 413, "too_large", "file_list: the files together are too large");
	if (x != FE_EXTRA_OK)
		return fe_apierr_set(e, 500, "internal", "the files could not be attached");
	return 0;
}

static void on_run_files(void *arg, redisReply *reply)
{
	struct run_ctx *c = arg;
	struct fe_req *r = c->r;
	struct fe_apierr e;
	long long code = reply && reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 &&
				 reply->element[0]->type == REDIS_REPLY_INTEGER
			 ? reply->element[0]->integer
			 : -1;
	if (code == 0) {
		fe_jobe_run_clear(&c->run);
		fe_reply_error(r, 404, "not_found", "One or more of the specified files is missing/unavailable");
	} else if (code == 1 && reply->elements == 3 && reply->element[1]->type == REDIS_REPLY_INTEGER) {
		/* Jobe answers every bad request 400. */
		fe_jobe_run_clear(&c->run);
		fe_reply_error(r, 400, "invalid_request",
			       "file_list: the files together are %lld bytes, more than the %zu a run may hold",
			       reply->element[1]->integer, r->w->app->bounds.max_additional_files);
	} else if (code != 2 || reply->elements != c->run.n_files + 1) {
		fe_jobe_run_clear(&c->run);
		fe_reply_error(r, 503, "unavailable", "the file store is not available now");
	} else if (attach_files(c, reply->element + 1, &e) < 0) {
		fe_jobe_run_clear(&c->run);
		fe_reply_apierr(r, &e);
	} else {
		fe_submit_job(r, &c->run.job, true);
	}
	free(c);
	fe_req_unref(r);
}

static void handle_run(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	json_t *body = fe_read_json_body(r);
	if (!body)
		return;
	struct run_ctx *c = calloc(1, sizeof(*c));
	if (!c) {
		json_decref(body);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	c->r = r;
	struct fe_apierr e;
	int rc = fe_jobe_parse(body, &app->cat, &app->bounds, &r->quota, &c->run, &e);
	json_decref(body);
	if (rc < 0) {
		free(c);
		fe_reply_apierr(r, &e);
		return;
	}
	if (c->run.n_files == 0) {
		fe_submit_job(r, &c->run.job, true);
		free(c);
		return;
	}
	/* The tenant's own keys: another tenant's file of the same id is
	 * another key. Weighed before they are read (JOBE_FETCH_LUA). */
	size_t n = c->run.n_files;
	char keys[FE_JOBE_FILES_MAX][256], nkeys[24], max[24], tar_max[24];
	const char *argv[FE_JOBE_FILES_MAX + 5];
	snprintf(nkeys, sizeof(nkeys), "%zu", n);
	snprintf(max, sizeof(max), "%zu", app->bounds.max_additional_files);
	snprintf(tar_max, sizeof(tar_max), "%u", GV_JOBSPEC_ADDITIONAL_FILES_MAX);
	argv[0] = "EVAL";
	argv[1] = JOBE_FETCH_LUA;
	argv[2] = nkeys;
	for (size_t i = 0; i < n; i++) {
		file_key(r, c->run.files[i].id, keys[i], sizeof(keys[i]));
		argv[3 + i] = keys[i];
	}
	argv[3 + n] = max;
	argv[4 + n] = tar_max;
	struct gv_err err;
	fe_req_ref(r);
	if (fe_redis_command(r->w->redis, on_run_files, c, (int)n + 5, argv, NULL, &err) < 0) {
		fe_req_unref(r);
		fe_jobe_run_clear(&c->run);
		free(c);
		fe_reply_error(r, 503, "unavailable", "the file store is not available now");
	}
}

/* -------------------------------------------------------------- results */

static void on_result_row(struct fe_req *r, struct fe_rowbuf *rb, const char *error)
{
	if (error) {
		fe_reply_db_error(r, error);
		return;
	}
	if (!rb) {
		fe_reply_error(r, 404, "not_found", "Run ID not found");
		return;
	}
	if (!fe_row_final(&rb->row)) {
		struct evbuffer *b = evbuffer_new();
		if (!b) {
			fe_reply_error(r, 500, "internal", "out of memory");
			return;
		}
		fe_reply_raw(r, 204, "application/json", b);
		evbuffer_free(b);
		return;
	}
	fe_row_answer(r, 200, rb);
}

static void handle_result(struct fe_req *r)
{
	const char *id = r->m.params[0];
	if (!gv_queue_sid_ok(id)) {
		fe_reply_error(r, 404, "not_found", "Run ID not found");
		return;
	}
	fe_req_set_sid(r, id);
	fe_row_fetch(r, false, on_result_row);
}

void fe_handle_jobe(struct fe_req *r)
{
	switch (r->m.route->id) {
	case FE_ROUTE_JOBE_RUNS: handle_run(r); return;
	case FE_ROUTE_JOBE_RUNRESULT: handle_result(r); return;
	case FE_ROUTE_JOBE_FILES_POST:
	case FE_ROUTE_JOBE_FILE_PUT: handle_file_upload(r); return;
	case FE_ROUTE_JOBE_FILE_CHECK: handle_file_check(r); return;
	default: fe_reply_error(r, 404, "not_found", "no such route"); return;
	}
}
