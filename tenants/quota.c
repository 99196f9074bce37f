/* The quota model: defaults, ranges, parsing of operator settings, the
 * PostgreSQL row, and the pure per-job ceiling checks; see quota.h. The
 * ranges here match the CHECK constraints of deploy/sql/0002_tenants.sql. */
#include "tenants/quota.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/pg.h"
#include "tenants/db.h"
#include "tenants/egress.h"

enum field_type { F_INT, F_I64, F_LANGS, F_JSON, F_BOOL, F_ORIGINS };

struct field {
	const char *name;
	enum field_type type;
	size_t offset;
	int64_t min, max;
};

#define FIELD(n, t, lo, hi) { #n, t, offsetof(struct tenant_quota, n), lo, hi }
/* In the column order of TENANT_QUOTA_COLUMNS. */
static const struct field FIELDS[TENANT_QUOTA_NCOLS] = {
	FIELD(requests_per_second, F_INT, 0, 1000000),
	FIELD(burst, F_INT, 1, 10000000),
	FIELD(max_queued, F_INT, 0, 10000000),
	FIELD(max_running, F_INT, 0, 100000),
	FIELD(max_cpu_ms, F_I64, 1, 86400000),
	FIELD(max_wall_ms, F_I64, 1, 86400000),
	FIELD(max_memory_mb, F_INT, 1, 1048576),
	FIELD(max_output_kb, F_INT, 1, 1048576),
	FIELD(allowed_languages, F_LANGS, 0, 0),
	FIELD(max_gpus, F_INT, 0, 1024),
	FIELD(egress_policy, F_JSON, 0, 0),
	FIELD(retention_days, F_INT, 1, 36500),
	FIELD(weight, F_INT, 1, 10000),
	FIELD(allow_query_key, F_BOOL, 0, 1),
	FIELD(cors_origins, F_ORIGINS, 0, 0),
	FIELD(playground, F_BOOL, 0, 1),
	FIELD(token_capability, F_BOOL, 0, 1),
	FIELD(playground_rps, F_INT, 1, 1000000),
	FIELD(playground_burst, F_INT, 1, 10000000),
	FIELD(playground_max_queued, F_INT, 0, 10000000),
	FIELD(max_kernels, F_INT, 0, 10000),
	FIELD(kernels_per_minute, F_INT, 1, 100000),
	FIELD(kernel_idle_s, F_INT, 10, 43200),
	FIELD(kernel_lifetime_s, F_INT, 10, 43200),
	FIELD(kernel_memory_mb, F_INT, 64, 65536),
	FIELD(kernel_cpu_pct, F_INT, 10, 6400),
	FIELD(browser_clients, F_BOOL, 0, 1),
	FIELD(playground_read_rps, F_INT, 1, 1000000),
};

static int64_t get_num(const struct tenant_quota *q, const struct field *f)
{
	const char *p = (const char *)q + f->offset;
	if (f->type == F_INT)
		return *(const int *)p;
	return *(const int64_t *)p;
}

static void put_num(struct tenant_quota *q, const struct field *f, int64_t v)
{
	char *p = (char *)q + f->offset;
	if (f->type == F_INT)
		*(int *)p = (int)v;
	else
		*(int64_t *)p = v;
}

static bool *bool_at(struct tenant_quota *q, const struct field *f)
{
	return (bool *)((char *)q + f->offset);
}

static bool get_bool(const struct tenant_quota *q, const struct field *f)
{
	return *(const bool *)((const char *)q + f->offset);
}

void tenant_quota_defaults(struct tenant_quota *q)
{
	memset(q, 0, sizeof(*q));
	q->requests_per_second = 20;
	q->burst = 40;
	q->max_queued = 1000;
	q->max_running = 4;
	q->max_cpu_ms = 10000;
	q->max_wall_ms = 20000;
	q->max_memory_mb = 512;
	q->max_output_kb = 1024;
	q->max_gpus = 0;
	snprintf(q->egress_policy, sizeof(q->egress_policy), "{\"mode\": \"none\"}");
	q->retention_days = 30;
	q->weight = 1;
	q->playground_rps = 2;
	q->playground_burst = 10;
	q->playground_max_queued = 10;
	q->max_kernels = 4;
	q->kernels_per_minute = 30;
	q->kernel_idle_s = 1200;
	q->kernel_lifetime_s = 3600;
	q->kernel_memory_mb = 1024;
	q->kernel_cpu_pct = 100;
	q->playground_read_rps = 20;
}

static int lang_id_ok(const char *s, size_t len)
{
	if (len == 0 || len > TENANT_LANG_ID_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '+' || c == '-'))
			return 0;
	}
	return 1;
}

/* "c,cpp,python3" (items trimmed; "" or "*" = every language). */
static int parse_langs(struct tenant_quota *q, const char *text, struct gv_err *err)
{
	q->n_allowed_languages = 0;
	memset(q->allowed_languages, 0, sizeof(q->allowed_languages));
	const char *p = text;
	while (*p == ' ')
		p++;
	if (*p == '\0' || strcmp(p, "*") == 0)
		return 0;
	for (;;) {
		while (*p == ' ')
			p++;
		size_t len = strcspn(p, ",");
		size_t tl = len;
		while (tl > 0 && p[tl - 1] == ' ')
			tl--;
		if (!lang_id_ok(p, tl))
			return gv_err_set(err, GV_EINVAL,
					  "allowed_languages: each item must be 1..%d characters of [A-Za-z0-9_.+-]",
					  TENANT_LANG_ID_MAX);
		if (q->n_allowed_languages >= TENANT_MAX_LANGUAGES)
			return gv_err_set(err, GV_ELIMIT, "allowed_languages: more than %d languages",
					  TENANT_MAX_LANGUAGES);
		for (size_t i = 0; i < q->n_allowed_languages; i++)
			if (strlen(q->allowed_languages[i]) == tl && memcmp(q->allowed_languages[i], p, tl) == 0)
				return gv_err_set(err, GV_EINVAL, "allowed_languages: '%.*s' listed twice", (int)tl, p);
		memcpy(q->allowed_languages[q->n_allowed_languages], p, tl);
		q->allowed_languages[q->n_allowed_languages][tl] = '\0';
		q->n_allowed_languages++;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	return 0;
}

static int langs_join(const struct tenant_quota *q, char *out, size_t outsz)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < q->n_allowed_languages; i++) {
		int n = snprintf(out + used, outsz - used, "%s%s", i ? "," : "", q->allowed_languages[i]);
		if (n < 0 || (size_t)n >= outsz - used)
			return -1;
		used += (size_t)n;
	}
	return 0;
}

/* The grammar lives in tenants/egress.c, shared with the executor that
 * applies the policy: what validates here is what the executor can apply. */
static int egress_validate(const char *text, bool *grants, struct gv_err *err)
{
	*grants = false;
	struct tenant_egress_policy *p = malloc(sizeof(*p));
	if (!p)
		return gv_err_set(err, ENOMEM, "egress_policy: out of memory");
	int rc = tenant_egress_parse(text, p, err);
	if (rc == 0)
		*grants = p->grants;
	free(p);
	return rc;
}

int tenant_quota_validate(const struct tenant_quota *q, struct gv_err *err)
{
	for (size_t i = 0; i < TENANT_QUOTA_NCOLS; i++) {
		const struct field *f = &FIELDS[i];
		if (f->type != F_INT && f->type != F_I64)
			continue;
		int64_t v = get_num(q, f);
		if (v < f->min || v > f->max)
			return gv_err_set(err, GV_EINVAL, "%s: %" PRId64 " is outside %" PRId64 "..%" PRId64, f->name,
					  v, f->min, f->max);
	}
	if (q->n_allowed_languages > TENANT_MAX_LANGUAGES)
		return gv_err_set(err, GV_ELIMIT, "allowed_languages: too many");
	for (size_t i = 0; i < q->n_allowed_languages; i++)
		if (!lang_id_ok(q->allowed_languages[i], strnlen(q->allowed_languages[i], TENANT_LANG_ID_MAX + 1)))
			return gv_err_set(err, GV_EINVAL, "allowed_languages: bad language id");
	if (!memchr(q->cors_origins, '\0', sizeof(q->cors_origins)))
		return gv_err_set(err, GV_EINVAL, "cors_origins: not terminated");
	char origins[TENANT_ORIGINS_BUF];
	if (tenant_origins_parse(q->cors_origins, origins, sizeof(origins), err) != 0) {
		gv_err_prefix(err, "cors_origins");
		return -1;
	}
	if (strcmp(origins, q->cors_origins) != 0)
		return gv_err_set(err, GV_EINVAL, "cors_origins: not in normal form");
	bool grants;
	if (egress_validate(q->egress_policy, &grants, err) != 0)
		return -1;
	/* Anonymous code never gets the network: the executor applies the
	 * tenant's policy to every job of the tenant. */
	if (q->playground && grants)
		return gv_err_set(err, GV_EINVAL,
				  "playground: a tenant whose egress_policy grants network access cannot have a "
				  "public playground");
	return 0;
}

static const struct field *field_find(const char *name)
{
	for (size_t i = 0; i < TENANT_QUOTA_NCOLS; i++)
		if (strcmp(FIELDS[i].name, name) == 0)
			return &FIELDS[i];
	return NULL;
}

int tenant_quota_set(struct tenant_quota *q, const char *key, const char *value, struct gv_err *err)
{
	const struct field *f = field_find(key);
	if (!f) {
		char shown[80];
		gv_log_escape(shown, sizeof(shown), key, strlen(key));
		return gv_err_set(err, GV_EINVAL,
				  "unknown quota '%s' (known: requests_per_second, burst, max_queued, max_running, "
				  "max_cpu_ms, max_wall_ms, max_memory_mb, max_output_kb, allowed_languages, "
				  "max_gpus, egress_policy, retention_days, weight, allow_query_key, cors_origins, "
				  "playground, token_capability, playground_rps, playground_burst, "
				  "playground_max_queued, max_kernels, kernels_per_minute, kernel_idle_s, "
				  "kernel_lifetime_s, kernel_memory_mb, kernel_cpu_pct, browser_clients, "
				  "playground_read_rps)",
				  shown);
	}
	struct tenant_quota next = *q;
	switch (f->type) {
	case F_INT:
	case F_I64: {
		int64_t v;
		if (tenant_parse_i64(value, &v) != 0)
			return gv_err_set(err, GV_EINVAL, "%s: expected an integer", f->name);
		if (v < f->min || v > f->max)
			return gv_err_set(err, GV_EINVAL, "%s: %" PRId64 " is outside %" PRId64 "..%" PRId64, f->name,
					  v, f->min, f->max);
		put_num(&next, f, v);
		break;
	}
	case F_LANGS:
		if (parse_langs(&next, value, err) != 0)
			return -1;
		break;
	case F_JSON: {
		size_t len = strlen(value);
		if (len >= sizeof(next.egress_policy))
			return gv_err_set(err, GV_ELIMIT, "egress_policy: longer than %zu bytes",
					  sizeof(next.egress_policy) - 1);
		memcpy(next.egress_policy, value, len + 1);
		break;
	}
	case F_ORIGINS:
		if (tenant_origins_parse(value, next.cors_origins, sizeof(next.cors_origins), err) != 0) {
			gv_err_prefix(err, "cors_origins");
			return -1;
		}
		break;
	case F_BOOL:
		if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "on"))
			*bool_at(&next, f) = true;
		else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "off"))
			*bool_at(&next, f) = false;
		else
			return gv_err_set(err, GV_EINVAL, "%s: expected true or false", f->name);
		break;
	}
	if (tenant_quota_validate(&next, err) != 0)
		return -1;
	*q = next;
	return 0;
}

json_t *tenant_quota_to_json(const struct tenant_quota *q)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	for (size_t i = 0; i < TENANT_QUOTA_NCOLS; i++) {
		const struct field *f = &FIELDS[i];
		json_t *v = NULL;
		if (f->type == F_INT || f->type == F_I64) {
			v = json_integer(get_num(q, f));
		} else if (f->type == F_LANGS) {
			v = json_array();
			for (size_t k = 0; v && k < q->n_allowed_languages; k++)
				json_array_append_new(v, json_string(q->allowed_languages[k]));
		} else if (f->type == F_BOOL) {
			v = json_boolean(get_bool(q, f));
		} else if (f->type == F_ORIGINS) {
			v = json_array();
			for (const char *p = q->cors_origins; v && *p;) {
				size_t n = strcspn(p, ",");
				json_array_append_new(v, json_stringn(p, n));
				p += n + (p[n] == ',');
			}
		} else {
			v = json_loads(q->egress_policy, 0, NULL);
			if (!v)
				v = json_string(q->egress_policy);
		}
		if (!v || json_object_set_new(o, f->name, v) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

int tenant_quota_from_pg(const PGresult *res, int row, int first_col, struct tenant_quota *q, struct gv_err *err)
{
	tenant_quota_defaults(q);
	if (!res || row < 0 || row >= PQntuples(res) || first_col < 0 ||
	    PQnfields(res) < first_col + TENANT_QUOTA_NCOLS)
		return gv_err_set(err, GV_EPROTO, "quota: unexpected result shape");
	for (int i = 0; i < TENANT_QUOTA_NCOLS; i++) {
		const struct field *f = &FIELDS[i];
		int col = first_col + i;
		if (PQgetisnull(res, row, col))
			continue; /* no quota row: defaults */
		const char *v = PQgetvalue(res, row, col);
		if (f->type == F_INT || f->type == F_I64) {
			int64_t n;
			if (tenant_parse_i64(v, &n) != 0 || n < f->min || n > f->max)
				return gv_err_set(err, GV_EPROTO, "quota: %s out of range", f->name);
			put_num(q, f, n);
		} else if (f->type == F_LANGS) {
			if (parse_langs(q, v, err) != 0) {
				gv_err_prefix(err, "quota");
				err->code = GV_EPROTO;
				return -1;
			}
		} else if (f->type == F_BOOL) {
			if (strcmp(v, "t") != 0 && strcmp(v, "f") != 0)
				return gv_err_set(err, GV_EPROTO, "quota: %s is not a boolean", f->name);
			*bool_at(q, f) = v[0] == 't';
		} else if (f->type == F_ORIGINS) {
			if (tenant_origins_parse(v, q->cors_origins, sizeof(q->cors_origins), err) != 0) {
				gv_err_prefix(err, "quota: cors_origins");
				err->code = GV_EPROTO;
				return -1;
			}
		} else {
			size_t len = strlen(v);
			if (len >= sizeof(q->egress_policy))
				return gv_err_set(err, GV_EPROTO, "quota: egress_policy too long");
			memcpy(q->egress_policy, v, len + 1);
		}
	}
	return 0;
}

int tenant_quota_load(PGconn *conn, const char *tenant_id, struct tenant_quota *q, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	PGresult *res = gv_pg_query(conn, TENANT_SQL_QUOTA_SELECT, 1, &tenant_id, err);
	if (!res) {
		gv_err_prefix(err, "load quota");
		return -1;
	}
	int rc;
	if (PQntuples(res) == 0)
		rc = gv_err_set(err, GV_ENOTFOUND, "no quota row for tenant %s", tenant_id);
	else
		rc = tenant_quota_from_pg(res, 0, 0, q, err);
	PQclear(res);
	return rc;
}

int tenant_quota_save(PGconn *conn, const char *tenant_id, const struct tenant_quota *q, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	if (tenant_quota_validate(q, err) != 0)
		return -1;
	char nums[TENANT_QUOTA_NCOLS][24];
	char langs[TENANT_MAX_LANGUAGES * (TENANT_LANG_ID_MAX + 1) + 1];
	const char *params[TENANT_QUOTA_NCOLS + 1];
	params[0] = tenant_id;
	for (size_t i = 0; i < TENANT_QUOTA_NCOLS; i++) {
		const struct field *f = &FIELDS[i];
		if (f->type == F_INT || f->type == F_I64) {
			snprintf(nums[i], sizeof(nums[i]), "%" PRId64, get_num(q, f));
			params[i + 1] = nums[i];
		} else if (f->type == F_LANGS) {
			if (langs_join(q, langs, sizeof(langs)) != 0)
				return gv_err_set(err, GV_ELIMIT, "allowed_languages: too long");
			params[i + 1] = langs;
		} else if (f->type == F_BOOL) {
			params[i + 1] = get_bool(q, f) ? "true" : "false";
		} else if (f->type == F_ORIGINS) {
			params[i + 1] = q->cors_origins;
		} else {
			params[i + 1] = q->egress_policy;
		}
	}
	static const char sql[] =
		"INSERT INTO tenant_quotas (tenant_id, requests_per_second, burst, max_queued, max_running, "
		"max_cpu_ms, max_wall_ms, max_memory_mb, max_output_kb, allowed_languages, max_gpus, "
		"egress_policy, retention_days, weight, allow_query_key, cors_origins, playground, token_capability, "
		"playground_rps, playground_burst, playground_max_queued, max_kernels, kernels_per_minute, "
		"kernel_idle_s, kernel_lifetime_s, kernel_memory_mb, kernel_cpu_pct, browser_clients, "
		"playground_read_rps) VALUES ($1::uuid, $2, $3, "
		"$4, $5, $6, $7, $8, $9, string_to_array($10, ','), $11, $12::jsonb, $13, $14, $15::boolean, "
		"string_to_array($16, ','), $17::boolean, $18::boolean, $19, $20, $21, $22, $23, $24, $25, $26, $27, "
		"$28::boolean, $29) "
		"ON CONFLICT (tenant_id) DO UPDATE SET "
		"requests_per_second = EXCLUDED.requests_per_second, burst = EXCLUDED.burst, "
		"max_queued = EXCLUDED.max_queued, max_running = EXCLUDED.max_running, "
		"max_cpu_ms = EXCLUDED.max_cpu_ms, max_wall_ms = EXCLUDED.max_wall_ms, "
		"max_memory_mb = EXCLUDED.max_memory_mb, max_output_kb = EXCLUDED.max_output_kb, "
		"allowed_languages = EXCLUDED.allowed_languages, max_gpus = EXCLUDED.max_gpus, "
		"egress_policy = EXCLUDED.egress_policy, retention_days = EXCLUDED.retention_days, "
		"weight = EXCLUDED.weight, allow_query_key = EXCLUDED.allow_query_key, "
		"cors_origins = EXCLUDED.cors_origins, playground = EXCLUDED.playground, "
		"token_capability = EXCLUDED.token_capability, playground_rps = EXCLUDED.playground_rps, "
		"playground_burst = EXCLUDED.playground_burst, playground_max_queued = EXCLUDED.playground_max_queued, "
		"max_kernels = EXCLUDED.max_kernels, kernels_per_minute = EXCLUDED.kernels_per_minute, "
		"kernel_idle_s = EXCLUDED.kernel_idle_s, kernel_lifetime_s = EXCLUDED.kernel_lifetime_s, "
		"kernel_memory_mb = EXCLUDED.kernel_memory_mb, kernel_cpu_pct = EXCLUDED.kernel_cpu_pct, "
		"browser_clients = EXCLUDED.browser_clients, playground_read_rps = EXCLUDED.playground_read_rps, "
		"updated_at = now()";
	if (gv_pg_exec(conn, sql, TENANT_QUOTA_NCOLS + 1, params, err) != 0) {
		gv_err_prefix(err, "save quota");
		return -1;
	}
	return 0;
}

static int violate(struct tenant_quota_violation *v, const char *limit, int64_t requested, int64_t allowed)
{
	v->limit = limit;
	v->requested = requested;
	v->allowed = allowed;
	snprintf(v->message, sizeof(v->message), "%s: requested %" PRId64 ", allowed %" PRId64, limit, requested,
		 allowed);
	return 1;
}

int tenant_quota_check_job(const struct tenant_quota *q, const struct tenant_job_request *r,
			   struct tenant_quota_violation *v)
{
	memset(v, 0, sizeof(*v));
	if (r->language && q->n_allowed_languages > 0) {
		bool found = false;
		for (size_t i = 0; i < q->n_allowed_languages && !found; i++)
			found = strcmp(q->allowed_languages[i], r->language) == 0;
		if (!found) {
			char shown[48];
			gv_log_escape(shown, sizeof(shown), r->language, strnlen(r->language, 256));
			v->limit = "allowed_languages";
			snprintf(v->message, sizeof(v->message),
				 "allowed_languages: language '%s' is not allowed for this tenant", shown);
			return 1;
		}
	}
	if (r->cpu_ms > 0 && r->cpu_ms > q->max_cpu_ms)
		return violate(v, "max_cpu_ms", r->cpu_ms, q->max_cpu_ms);
	if (r->wall_ms > 0 && r->wall_ms > q->max_wall_ms)
		return violate(v, "max_wall_ms", r->wall_ms, q->max_wall_ms);
	if (r->memory_mb > 0 && r->memory_mb > q->max_memory_mb)
		return violate(v, "max_memory_mb", r->memory_mb, q->max_memory_mb);
	if (r->output_kb > 0 && r->output_kb > q->max_output_kb)
		return violate(v, "max_output_kb", r->output_kb, q->max_output_kb);
	if (r->gpus > 0 && r->gpus > q->max_gpus)
		return violate(v, "max_gpus", r->gpus, q->max_gpus);
	if (r->wants_egress) {
		struct gv_err e;
		bool grants = false;
		if (egress_validate(q->egress_policy, &grants, &e) != 0 || !grants) {
			v->limit = "egress_policy";
			snprintf(v->message, sizeof(v->message),
				 "egress_policy: network egress is not allowed for this tenant");
			return 1;
		}
	}
	return 0;
}

int tenant_quota_check_queued(const struct tenant_quota *q, int64_t queued, struct tenant_quota_violation *v)
{
	memset(v, 0, sizeof(*v));
	if (queued < q->max_queued)
		return 0;
	violate(v, "max_queued", queued + 1, q->max_queued);
	snprintf(v->message, sizeof(v->message), "max_queued: %" PRId64 " submissions already queued, allowed %d",
		 queued, q->max_queued);
	return 1;
}
