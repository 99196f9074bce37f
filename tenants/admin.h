/* Operator actions on tenants and keys, as the owner role (the CLI). Each
 * runs in a transaction of its own (conn must be idle) and writes its audit
 * record in that same transaction: the change and its record commit
 * together or not at all. Redis is not touched here; the CLI publishes the
 * scheduling config (tenant_sched_cfg_publish) after a commit. */
#pragma once

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "tenants/key.h"
#include "tenants/quota.h"

#define TENANT_NAME_MAX 200
#define TENANT_LABEL_MAX 200
#define TENANT_TIME_BUF 40 /* "YYYY-MM-DDTHH:MM:SSZ" and more */

struct tenant_info {
	char id[TENANT_UUID_BUF];
	char name[TENANT_NAME_MAX + 1];
	bool disabled;
	char created_at[TENANT_TIME_BUF]; /* ISO 8601 UTC */
};

struct tenant_key_info {
	char id[TENANT_UUID_BUF];
	char tenant_id[TENANT_UUID_BUF];
	char label[TENANT_LABEL_MAX + 1];
	char created_at[TENANT_TIME_BUF];
	char expires_at[TENANT_TIME_BUF]; /* "" = never */
	char revoked_at[TENANT_TIME_BUF]; /* "" = not revoked */
};

/* Tenant names: 1..200 bytes of [A-Za-z0-9._-], not a uuid (so that a
 * name and an id are never confused on the command line). Pure. */
int tenant_name_valid(const char *name, struct gv_err *err) GV_MUST_CHECK;

/* Creates the tenant with default quotas (weight overrides the default
 * when > 0) and records tenant.created. GV_EINVAL when the name is taken. */
int tenant_create(PGconn *conn, const char *name, int weight, const char *actor,
		  struct tenant_info *out, struct tenant_quota *quota_out,
		  struct gv_err *err) GV_MUST_CHECK;

/* Webhook signing secrets (migration 0006, executor/daemon/webhook.h): random
 * bytes from libsodium; tenant_create makes one. */
#define TENANT_WEBHOOK_SECRET_LEN 32
#define TENANT_WEBHOOK_SECRET_MAX 64
/* The tenant's secret as lowercase hex in hex (size >= 2 *
 * TENANT_WEBHOOK_SECRET_MAX + 1): the stored one, or a new one when it has
 * none or rotate is set (the old one stops verifying at once). */
int tenant_webhook_secret(PGconn *conn, const char *tenant_id, bool rotate, char *hex, size_t size,
			  struct gv_err *err) GV_MUST_CHECK;

/* Finds a tenant by name or id. GV_ENOTFOUND when there is none. */
int tenant_find(PGconn *conn, const char *name_or_id, struct tenant_info *out,
		struct gv_err *err) GV_MUST_CHECK;

/* Every tenant, by name. *out is malloc'd (free()), *n its length. */
int tenant_list(PGconn *conn, struct tenant_info **out, size_t *n, struct gv_err *err) GV_MUST_CHECK;

/* Applies "key=value" settings (tenant_quota_set) to the stored quota,
 * validates, saves, and records quota.changed with {"changes":{k:{"from",
 * "to"}}}. *quota_out (may be NULL) gets the new quota. */
int tenant_update_quota(PGconn *conn, const char *tenant_id, const char *const *settings, size_t n,
			const char *actor, struct tenant_quota *quota_out,
			struct gv_err *err) GV_MUST_CHECK;

/* Disables (or re-enables) a tenant; records tenant.changed. Its keys then
 * answer 403 within TENANT_AUTH_CACHE_MAX_MS. */
int tenant_set_disabled(PGconn *conn, const char *tenant_id, bool disabled, const char *actor,
			struct gv_err *err) GV_MUST_CHECK;

/* Creates a key: generates it, stores its hash, records key.created (the
 * key itself never enters the audit log). expires: NULL or an ISO 8601
 * date/time PostgreSQL understands ("2030-01-31", "2030-01-31T12:00Z"),
 * which must lie in the future. key_out gets the key: show it once. */
int tenant_key_create(PGconn *conn, const char *tenant_id, const char *label, const char *expires,
		      const struct tenant_pepper *pepper, const char *actor,
		      char key_out[TENANT_KEY_BUF], struct tenant_key_info *info,
		      struct gv_err *err) GV_MUST_CHECK;

/* A tenant's keys, newest first. *out malloc'd, *n its length. */
int tenant_key_list(PGconn *conn, const char *tenant_id, struct tenant_key_info **out, size_t *n,
		    struct gv_err *err) GV_MUST_CHECK;

/* Revokes key key_id (revoked_at = now()); records key.revoked. Revoking
 * an already revoked key is GV_EINVAL; an unknown id GV_ENOTFOUND. */
int tenant_key_revoke(PGconn *conn, const char *key_id, const char *actor,
		      struct tenant_key_info *info, struct gv_err *err) GV_MUST_CHECK;

/* "operator:<login name>" for CLI audit records. */
void tenant_operator_actor(char *out, size_t outsz);
