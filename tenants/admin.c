/* Operator actions on tenants and keys; see admin.h. Each action is one
 * transaction holding the change and its audit record. */
#include "tenants/admin.h"

#include <pwd.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/pg.h"
#include "tenants/audit.h"
#include "tenants/db.h"


void tenant_operator_actor(char *out, size_t outsz)
{
	const char *name = NULL;
	struct passwd *pw = getpwuid(geteuid());
	if (pw && pw->pw_name)
		name = pw->pw_name;
	const char *sudo = getenv("SUDO_USER");
	if (sudo && sudo[0] && strlen(sudo) < 64)
		snprintf(out, outsz, "operator:%s(via %s)", sudo, name ? name : "?");
	else if (name)
		snprintf(out, outsz, "operator:%s", name);
	else
		snprintf(out, outsz, "operator:uid%u", (unsigned)geteuid());
}

int tenant_name_valid(const char *name, struct gv_err *err)
{
	size_t len = name ? strnlen(name, TENANT_NAME_MAX + 1) : 0;
	if (len == 0 || len > TENANT_NAME_MAX)
		return gv_err_set(err, GV_EINVAL, "tenant name must be 1..%d characters", TENANT_NAME_MAX);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return gv_err_set(err, GV_EINVAL, "tenant name may only hold [A-Za-z0-9._-]");
	}
	if (tenant_uuid_valid(name))
		return gv_err_set(err, GV_EINVAL, "tenant name must not look like a uuid");
	return 0;
}

/* Serialises a JSON value built here into buf (compact). */
static int dump_details(json_t *j, char *buf, size_t size, struct gv_err *err)
{
	if (!j)
		return gv_err_set(err, GV_EINTERNAL, "out of memory building audit details");
	int rc = gv_json_dump_buf(j, JSON_COMPACT | JSON_SORT_KEYS, buf, size, NULL, err);
	json_decref(j);
	return rc;
}

static void copy_text(char *out, size_t outsz, const PGresult *res, int row, int col)
{
	const char *v = PQgetisnull(res, row, col) ? "" : PQgetvalue(res, row, col);
	snprintf(out, outsz, "%s", v);
}

#define TENANT_COLS "id, name, disabled, " TENANT_SQL_TS_UTC("created_at")

static void tenant_from_row(const PGresult *res, int row, struct tenant_info *t)
{
	memset(t, 0, sizeof(*t));
	copy_text(t->id, sizeof(t->id), res, row, 0);
	copy_text(t->name, sizeof(t->name), res, row, 1);
	t->disabled = PQgetvalue(res, row, 2)[0] == 't';
	copy_text(t->created_at, sizeof(t->created_at), res, row, 3);
}

/* Stores a new webhook secret (TENANT_WEBHOOK_SECRET_LEN bytes from
 * libsodium's generator) for the tenant and writes its hex into hex. */
static int store_new_secret(PGconn *conn, const char *tenant_id, char *hex, size_t size, struct gv_err *err)
{
	unsigned char raw[TENANT_WEBHOOK_SECRET_LEN];
	if (size < 2 * sizeof(raw) + 1)
		return gv_err_set(err, GV_EINTERNAL, "secret buffer too small");
	if (sodium_init() < 0)
		return gv_err_set(err, GV_EINTERNAL, "libsodium did not initialise");
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(hex, size, raw, sizeof(raw));
	sodium_memzero(raw, sizeof(raw));
	const char *p[] = { tenant_id, hex };
	return gv_pg_exec(conn, "UPDATE tenants SET webhook_secret = decode($2, 'hex') WHERE id = $1::uuid", 2, p,
			  err);
}

int tenant_create(PGconn *conn, const char *name, int weight, const char *actor, struct tenant_info *out,
		  struct tenant_quota *quota_out, struct gv_err *err)
{
	if (tenant_name_valid(name, err) != 0)
		return -1;
	struct tenant_quota q;
	tenant_quota_defaults(&q);
	if (weight > 0) {
		char w[16];
		snprintf(w, sizeof(w), "%d", weight);
		if (tenant_quota_set(&q, "weight", w, err) != 0)
			return -1;
	}
	if (tenant_tx_begin(conn, NULL, err) != 0)
		return -1;
	const char *p[] = { name };
	PGresult *res = gv_pg_query(conn,
				    "INSERT INTO tenants (name) VALUES ($1) ON CONFLICT (name) DO NOTHING "
				    "RETURNING " TENANT_COLS,
				    1, p, err);
	if (!res)
		goto fail;
	if (PQntuples(res) != 1) {
		PQclear(res);
		gv_err_set(err, GV_EINVAL, "tenant '%s' already exists", name);
		goto fail;
	}
	tenant_from_row(res, 0, out);
	PQclear(res);
	char details[1024], secret[2 * TENANT_WEBHOOK_SECRET_LEN + 1];
	json_t *d = json_pack("{s:s, s:o*}", "name", name, "quota", tenant_quota_to_json(&q));
	if (store_new_secret(conn, out->id, secret, sizeof(secret), err) != 0) {
		json_decref(d);
		goto fail;
	}
	if (tenant_quota_save(conn, out->id, &q, err) != 0 || dump_details(d, details, sizeof(details), err) != 0 ||
	    tenant_audit_append(conn, out->id, actor, TENANT_AUDIT_TENANT_CREATED, out->id, NULL, NULL, details,
				err) != 0 ||
	    tenant_tx_commit(conn, err) != 0)
		goto fail;
	if (quota_out)
		*quota_out = q;
	return 0;
fail:
	tenant_tx_rollback(conn);
	gv_err_prefix(err, "create tenant");
	return -1;
}

int tenant_webhook_secret(PGconn *conn, const char *tenant_id, bool rotate, char *hex, size_t size,
			  struct gv_err *err)
{
	if (size < 2 * TENANT_WEBHOOK_SECRET_MAX + 1)
		return gv_err_set(err, GV_EINTERNAL, "secret buffer too small");
	if (tenant_tx_begin(conn, NULL, err) != 0)
		return -1;
	const char *p[] = { tenant_id };
	PGresult *res = gv_pg_query(conn,
				    "SELECT encode(webhook_secret, 'hex') FROM tenants WHERE id = $1::uuid FOR UPDATE",
				    1, p, err);
	if (!res)
		goto fail;
	if (PQntuples(res) != 1) {
		PQclear(res);
		gv_err_set(err, GV_ENOTFOUND, "no tenant %s", tenant_id);
		goto fail;
	}
	bool have = !PQgetisnull(res, 0, 0);
	if (have)
		snprintf(hex, size, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	if ((!have || rotate) && store_new_secret(conn, tenant_id, hex, size, err) != 0)
		goto fail;
	if (tenant_tx_commit(conn, err) != 0)
		return -1;
	return 0;
fail:
	tenant_tx_rollback(conn);
	gv_err_prefix(err, "webhook secret");
	return -1;
}

int tenant_find(PGconn *conn, const char *name_or_id, struct tenant_info *out, struct gv_err *err)
{
	const char *p[] = { name_or_id };
	const char *sql = tenant_uuid_valid(name_or_id) ? "SELECT " TENANT_COLS " FROM tenants WHERE id = $1::uuid"
							: "SELECT " TENANT_COLS " FROM tenants WHERE name = $1";
	PGresult *res = gv_pg_query(conn, sql, 1, p, err);
	if (!res)
		return -1;
	int rc = 0;
	if (PQntuples(res) != 1) {
		char shown[80];
		snprintf(shown, sizeof(shown), "%.64s", name_or_id);
		rc = gv_err_set(err, GV_ENOTFOUND, "no tenant '%s'", shown);
	} else {
		tenant_from_row(res, 0, out);
	}
	PQclear(res);
	return rc;
}

/* Turns every row of res into one element of a fresh array (elem bytes
 * each, filled by fill), clears res; *out is freed by the caller. */
static int rows_to_array(PGresult *res, size_t elem, void (*fill)(const PGresult *, int, void *), void **out,
			 size_t *n, struct gv_err *err)
{
	int rows = PQntuples(res);
	char *v = calloc(rows > 0 ? (size_t)rows : 1, elem);
	if (!v) {
		PQclear(res);
		return gv_err_set(err, GV_EINTERNAL, "out of memory");
	}
	for (int i = 0; i < rows; i++)
		fill(res, i, v + (size_t)i * elem);
	PQclear(res);
	*out = v;
	*n = (size_t)rows;
	return 0;
}

static void fill_tenant(const PGresult *res, int row, void *elem)
{
	tenant_from_row(res, row, elem);
}

int tenant_list(PGconn *conn, struct tenant_info **out, size_t *n, struct gv_err *err)
{
	*out = NULL;
	*n = 0;
	PGresult *res = gv_pg_query(conn, "SELECT " TENANT_COLS " FROM tenants ORDER BY name", 0, NULL, err);
	if (!res)
		return -1;
	void *v = NULL;
	if (rows_to_array(res, sizeof(**out), fill_tenant, &v, n, err) != 0)
		return -1;
	*out = v;
	return 0;
}

int tenant_update_quota(PGconn *conn, const char *tenant_id, const char *const *settings, size_t n,
			const char *actor, struct tenant_quota *quota_out, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	if (tenant_tx_begin(conn, NULL, err) != 0)
		return -1;
	struct tenant_quota old, q;
	json_t *from = NULL, *to = NULL, *changes = NULL;
	const char *p[] = { tenant_id };
	/* Lock the row so that two operators' updates do not interleave. */
	if (gv_pg_exec(conn, "SELECT 1 FROM tenant_quotas WHERE tenant_id = $1::uuid FOR UPDATE", 1, p, err) != 0 ||
	    tenant_quota_load(conn, tenant_id, &old, err) != 0)
		goto fail;
	q = old;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(settings[i], '=');
		if (!eq || eq == settings[i]) {
			gv_err_set(err, GV_EINVAL, "quota setting must read key=value");
			goto fail;
		}
		char key[64];
		size_t klen = (size_t)(eq - settings[i]);
		if (klen >= sizeof(key)) {
			gv_err_set(err, GV_EINVAL, "quota setting: key too long");
			goto fail;
		}
		memcpy(key, settings[i], klen);
		key[klen] = '\0';
		if (tenant_quota_set(&q, key, eq + 1, err) != 0)
			goto fail;
	}
	from = tenant_quota_to_json(&old);
	to = tenant_quota_to_json(&q);
	changes = json_object();
	if (!from || !to || !changes) {
		gv_err_set(err, GV_EINTERNAL, "out of memory");
		goto fail;
	}
	const char *k;
	json_t *v;
	json_object_foreach(to, k, v) {
		json_t *was = json_object_get(from, k);
		if (!json_equal(was, v))
			json_object_set_new(changes, k, json_pack("{s:O, s:O}", "from", was, "to", v));
	}
	char details[TENANT_AUDIT_DETAILS_MAX];
	json_t *d = json_pack("{s:O}", "changes", changes);
	if (tenant_quota_save(conn, tenant_id, &q, err) != 0 || dump_details(d, details, sizeof(details), err) != 0 ||
	    tenant_audit_append(conn, tenant_id, actor, TENANT_AUDIT_QUOTA_CHANGED, tenant_id, NULL, NULL, details,
				err) != 0 ||
	    tenant_tx_commit(conn, err) != 0)
		goto fail;
	json_decref(from);
	json_decref(to);
	json_decref(changes);
	if (quota_out)
		*quota_out = q;
	return 0;
fail:
	json_decref(from);
	json_decref(to);
	json_decref(changes);
	tenant_tx_rollback(conn);
	gv_err_prefix(err, "update quota");
	return -1;
}

int tenant_set_disabled(PGconn *conn, const char *tenant_id, bool disabled, const char *actor, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	if (tenant_tx_begin(conn, NULL, err) != 0)
		return -1;
	const char *p[] = { tenant_id, disabled ? "true" : "false" };
	PGresult *res = gv_pg_query(conn,
				    "UPDATE tenants SET disabled = $2::boolean WHERE id = $1::uuid "
				    "RETURNING (SELECT disabled FROM tenants WHERE id = $1::uuid)",
				    2, p, err);
	if (!res)
		goto fail;
	if (PQntuples(res) != 1) {
		PQclear(res);
		gv_err_set(err, GV_ENOTFOUND, "no tenant %s", tenant_id);
		goto fail;
	}
	bool was = PQgetvalue(res, 0, 0)[0] == 't';
	PQclear(res);
	char details[128];
	snprintf(details, sizeof(details), "{\"disabled\": {\"from\": %s, \"to\": %s}}", was ? "true" : "false",
		 disabled ? "true" : "false");
	if (tenant_audit_append(conn, tenant_id, actor, TENANT_AUDIT_TENANT_CHANGED, tenant_id, NULL, NULL, details,
				err) != 0 ||
	    tenant_tx_commit(conn, err) != 0)
		goto fail;
	return 0;
fail:
	tenant_tx_rollback(conn);
	gv_err_prefix(err, "%s tenant", disabled ? "disable" : "enable");
	return -1;
}

#define KEY_COLS                                                                                       \
	"id, tenant_id, label, " TENANT_SQL_TS_UTC("created_at") ", coalesce(" TENANT_SQL_TS_UTC("expires_at") ", ''), " \
	"coalesce(" TENANT_SQL_TS_UTC("revoked_at") ", '')"

static void key_from_row(const PGresult *res, int row, struct tenant_key_info *k)
{
	memset(k, 0, sizeof(*k));
	copy_text(k->id, sizeof(k->id), res, row, 0);
	copy_text(k->tenant_id, sizeof(k->tenant_id), res, row, 1);
	copy_text(k->label, sizeof(k->label), res, row, 2);
	copy_text(k->created_at, sizeof(k->created_at), res, row, 3);
	copy_text(k->expires_at, sizeof(k->expires_at), res, row, 4);
	copy_text(k->revoked_at, sizeof(k->revoked_at), res, row, 5);
}

static void fill_key(const PGresult *res, int row, void *elem)
{
	key_from_row(res, row, elem);
}

int tenant_key_create(PGconn *conn, const char *tenant_id, const char *label, const char *expires,
		      const struct tenant_pepper *pepper, const char *actor, char key_out[TENANT_KEY_BUF],
		      struct tenant_key_info *info, struct gv_err *err)
{
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	if (!label)
		label = "";
	if (strnlen(label, TENANT_LABEL_MAX + 1) > TENANT_LABEL_MAX)
		return gv_err_set(err, GV_EINVAL, "label longer than %d bytes", TENANT_LABEL_MAX);
	char key[TENANT_KEY_BUF];
	unsigned char hash[TENANT_KEY_HASH_LEN];
	char hash_param[TENANT_KEY_HASH_PARAM_BUF];
	if (tenant_key_generate(key, err) != 0 || tenant_key_hash(key, TENANT_KEY_LEN, pepper, hash, err) != 0)
		return -1;
	tenant_key_hash_param(hash, hash_param);
	if (tenant_tx_begin(conn, NULL, err) != 0)
		return -1;
	if (expires) {
		const char *ep[] = { expires };
		PGresult *r = gv_pg_query(conn, "SELECT $1::timestamptz > now()", 1, ep, err);
		if (!r) {
			tenant_tx_rollback(conn);
			gv_err_set(err, GV_EINVAL, "--expires: not a date or time PostgreSQL understands");
			return -1;
		}
		int future = PQgetvalue(r, 0, 0)[0] == 't';
		PQclear(r);
		if (!future) {
			tenant_tx_rollback(conn);
			return gv_err_set(err, GV_EINVAL, "--expires: must lie in the future");
		}
	}
	const char *p[] = { tenant_id, label, hash_param, expires };
	PGresult *res = gv_pg_query(conn,
				    "INSERT INTO api_keys (tenant_id, label, key_hash, expires_at) "
				    "VALUES ($1::uuid, $2, $3::bytea, $4::timestamptz) RETURNING " KEY_COLS,
				    4, p, err);
	if (!res)
		goto fail;
	key_from_row(res, 0, info);
	PQclear(res);
	char details[1024];
	json_t *d = json_pack("{s:s, s:s, s:s*}", "key_id", info->id, "label", label, "expires_at",
			      info->expires_at[0] ? info->expires_at : NULL);
	if (dump_details(d, details, sizeof(details), err) != 0 ||
	    tenant_audit_append(conn, tenant_id, actor, TENANT_AUDIT_KEY_CREATED, info->id, NULL, NULL, details,
				err) != 0 ||
	    tenant_tx_commit(conn, err) != 0)
		goto fail;
	memcpy(key_out, key, TENANT_KEY_BUF);
	memset(key, 0, sizeof(key));
	return 0;
fail:
	memset(key, 0, sizeof(key));
	tenant_tx_rollback(conn);
	gv_err_prefix(err, "create key");
	return -1;
}

int tenant_key_list(PGconn *conn, const char *tenant_id, struct tenant_key_info **out, size_t *n,
		    struct gv_err *err)
{
	*out = NULL;
	*n = 0;
	if (!tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "tenant id is not a uuid");
	const char *p[] = { tenant_id };
	PGresult *res = gv_pg_query(conn,
				    "SELECT " KEY_COLS " FROM api_keys WHERE tenant_id = $1::uuid "
				    "ORDER BY created_at DESC, id",
				    1, p, err);
	if (!res)
		return -1;
	void *v = NULL;
	if (rows_to_array(res, sizeof(**out), fill_key, &v, n, err) != 0)
		return -1;
	*out = v;
	return 0;
}

int tenant_key_revoke(PGconn *conn, const char *key_id, const char *actor, struct tenant_key_info *info,
		      struct gv_err *err)
{
	if (!tenant_uuid_valid(key_id))
		return gv_err_set(err, GV_EINVAL, "key id is not a uuid");
	if (tenant_tx_begin(conn, NULL, err) != 0)
		return -1;
	const char *p[] = { key_id };
	PGresult *res = gv_pg_query(conn, "SELECT " KEY_COLS " FROM api_keys WHERE id = $1::uuid FOR UPDATE", 1, p,
				    err);
	if (!res)
		goto fail;
	if (PQntuples(res) != 1) {
		PQclear(res);
		gv_err_set(err, GV_ENOTFOUND, "no key %s", key_id);
		goto fail;
	}
	key_from_row(res, 0, info);
	PQclear(res);
	if (info->revoked_at[0]) {
		gv_err_set(err, GV_EINVAL, "key %s was already revoked at %s", key_id, info->revoked_at);
		goto fail;
	}
	res = gv_pg_query(conn, "UPDATE api_keys SET revoked_at = now() WHERE id = $1::uuid RETURNING " KEY_COLS, 1,
			  p, err);
	if (!res)
		goto fail;
	key_from_row(res, 0, info);
	PQclear(res);
	char details[256];
	snprintf(details, sizeof(details), "{\"key_id\": \"%s\"}", info->id);
	if (tenant_audit_append(conn, info->tenant_id, actor, TENANT_AUDIT_KEY_REVOKED, info->id, NULL, NULL,
				details, err) != 0 ||
	    tenant_tx_commit(conn, err) != 0)
		goto fail;
	return 0;
fail:
	tenant_tx_rollback(conn);
	gv_err_prefix(err, "revoke key");
	return -1;
}
