/* API keys: generation, hashing for storage, parsing a presented key, and
 * the authentication decision the frontend takes from one database row.
 *
 * Key format: "gv_" followed by 43 characters of unpadded base64url
 * (RFC 4648 §5) encoding 32 bytes (256 bits) from libsodium's
 * randombytes_buf. 46 characters in all; the last character carries 2 zero
 * padding bits, so exactly one spelling of each key is valid.
 *
 * Storage: only a hash is stored, api_keys.key_hash = BLAKE2b-256
 * (crypto_generichash, 32 bytes) over "gavel-api-key-v1\0" || key text.
 * Optional server pepper: when configured (config `auth.key_pepper`,
 * environment GAVEL_AUTH_KEY_PEPPER: 32 to 128 hex digits, i.e. 16 to 64
 * bytes), it is the BLAKE2b key. The pepper is not needed for security of
 * 256-bit random keys (a leaked hash cannot be brute-forced) — it only
 * means a stolen database dump plus a chosen key cannot be checked offline.
 * Default: no pepper. Every frontend and the CLI must agree: changing the
 * pepper invalidates every stored key.
 *
 * Authentication flow of the frontend (the tenant is unknown until the key
 * is looked up, so the lookup goes through the SECURITY DEFINER function
 * gavel_key_lookup(bytea) of migration 0002, which bypasses row-level
 * security for exactly that one row):
 *   1. tenant_key_parse(presented)        malformed -> 401, no query
 *   2. tenant_key_hash(...)               -> 32 bytes
 *   3. TENANT_SQL_KEY_LOOKUP with $1 = the hash (tenant_key_hash_param
 *      gives the text form "\\x<64 hex>", or send it in binary format)
 *   4. tenant_auth_row_from_pg + tenant_auth_decide -> ok / 401 / 403
 *
 * CACHING RULE (every frontend): a lookup result — positive or negative —
 * may be reused for at most TENANT_AUTH_CACHE_MAX_MS (1000 ms) after the
 * query that produced it was sent. Revocation, expiry and disabling a tenant
 * take effect on the database at once, so this bound is what guarantees
 * "a revoked key stops working within one second on every frontend". Cache
 * by key hash, never by key text. Expiry is re-decided on every use from the
 * cached row (tenant_auth_decide with the current time).
 */
#pragma once

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define TENANT_KEY_PREFIX "gv_"
#define TENANT_KEY_PREFIX_LEN 3
#define TENANT_KEY_RANDOM_BYTES 32
#define TENANT_KEY_B64_LEN 43                                 /* 32 bytes, base64url, no padding */
#define TENANT_KEY_LEN (TENANT_KEY_PREFIX_LEN + TENANT_KEY_B64_LEN) /* 46 */
#define TENANT_KEY_BUF (TENANT_KEY_LEN + 1)
/* Presented credentials longer than this are refused without further
 * work (a header value could be anything up to evhttp's header cap). */
#define TENANT_KEY_PRESENTED_MAX 256
#define TENANT_KEY_HASH_LEN 32
/* "\\x" + 64 hex digits + NUL: the text form of a bytea parameter. */
#define TENANT_KEY_HASH_PARAM_BUF (2 + 2 * TENANT_KEY_HASH_LEN + 1)
#define TENANT_KEY_PEPPER_MIN 16
#define TENANT_KEY_PEPPER_MAX 64
#define TENANT_KEY_PEPPER_ENV "GAVEL_AUTH_KEY_PEPPER"

/* Upper bound on how long any frontend may reuse a key lookup. */
#define TENANT_AUTH_CACHE_MAX_MS 1000

#define TENANT_UUID_BUF 37 /* canonical text uuid + NUL */

/* A server pepper; len 0 = none. */
struct tenant_pepper {
	unsigned char bytes[TENANT_KEY_PEPPER_MAX];
	size_t len;
};

/* Initialises libsodium (idempotent, thread-safe). Every function below
 * that needs it calls it; exposed for daemons that want to fail at
 * start-up rather than on the first request. */
int tenant_crypto_init(struct gv_err *err) GV_MUST_CHECK;

/* Parses a pepper given as hex (whitespace around it ignored); NULL or ""
 * gives len 0 (no pepper). 16..64 bytes, else GV_ECONFIG. */
int tenant_pepper_parse(const char *hex, struct tenant_pepper *out, struct gv_err *err) GV_MUST_CHECK;
/* tenant_pepper_parse of getenv(TENANT_KEY_PEPPER_ENV). */
int tenant_pepper_from_env(struct tenant_pepper *out, struct gv_err *err) GV_MUST_CHECK;

/* Writes a new random key (TENANT_KEY_LEN chars + NUL) into out. */
int tenant_key_generate(char out[TENANT_KEY_BUF], struct gv_err *err) GV_MUST_CHECK;

/* Checks that key[0..len) is a well-formed key: prefix, exact length,
 * base64url charset, canonical final character. Pure, no allocation,
 * constant work per byte; 0 when valid, -1 with GV_EINVAL otherwise (the
 * message never contains the presented text). */
int tenant_key_parse(const char *key, size_t len, struct gv_err *err) GV_MUST_CHECK;

/* The storage hash of key[0..len) (parsed first: malformed keys are
 * refused). pepper may be NULL (= none). */
int tenant_key_hash(const char *key, size_t len, const struct tenant_pepper *pepper,
		    unsigned char out[TENANT_KEY_HASH_LEN], struct gv_err *err) GV_MUST_CHECK;

/* Constant-time comparison of two hashes (sodium_memcmp). */
bool tenant_key_hash_equal(const unsigned char a[TENANT_KEY_HASH_LEN],
			   const unsigned char b[TENANT_KEY_HASH_LEN]);

/* "\\x" + lowercase hex of hash: the text-format bytea parameter. */
void tenant_key_hash_param(const unsigned char hash[TENANT_KEY_HASH_LEN],
			   char out[TENANT_KEY_HASH_PARAM_BUF]);

/* The lookup, $1 = key hash (bytea). At most one row, columns in this
 * order (epoch columns are whole seconds since 1970, NULL when unset):
 *   0 tenant_id uuid, 1 tenant_disabled bool, 2 key_id uuid,
 *   3 expires_at_s bigint, 4 revoked_at_s bigint,
 *   5.. the tenant's quota, TENANT_QUOTA_NCOLS columns in the order of
 *       TENANT_QUOTA_COLUMNS (tenants/quota.h; tenant_quota_from_pg with
 *       first_col = TENANT_AUTH_QUOTA_COL1 reads them).
 * Works for gavel_frontend without any tenant set. */
#define TENANT_SQL_KEY_LOOKUP                                                        \
	"SELECT tenant_id, tenant_disabled, key_id, expires_at_s, revoked_at_s, "   \
	"requests_per_second, burst, max_queued, max_running, max_cpu_ms, "          \
	"max_wall_ms, max_memory_mb, max_output_kb, allowed_languages, max_gpus, "   \
	"egress_policy, retention_days, weight, allow_query_key, cors_origins, "     \
	"playground, token_capability, playground_rps, playground_burst, "          \
	"playground_max_queued, max_kernels, kernels_per_minute, kernel_idle_s, " \
	"kernel_lifetime_s, kernel_memory_mb, kernel_cpu_pct, browser_clients, playground_read_rps " \
	"FROM gavel_key_lookup($1::bytea)"
#define TENANT_AUTH_QUOTA_COL1 5

/* One row of TENANT_SQL_KEY_LOOKUP (or none). */
struct tenant_auth_row {
	bool found;                   /* false: no row (unknown key) */
	char tenant_id[TENANT_UUID_BUF];
	char key_id[TENANT_UUID_BUF];
	bool tenant_disabled;
	bool has_expiry;
	int64_t expires_at_s;         /* valid when has_expiry */
	bool revoked;                 /* revoked_at set */
	int64_t revoked_at_s;         /* valid when revoked */
};

enum tenant_auth_decision {
	TENANT_AUTH_OK = 0,
	TENANT_AUTH_MISSING,   /* 401: no credential presented */
	TENANT_AUTH_MALFORMED, /* 401: not a key of our format */
	TENANT_AUTH_UNKNOWN,   /* 401: no such key */
	TENANT_AUTH_REVOKED,   /* 401 */
	TENANT_AUTH_EXPIRED,   /* 401 */
	TENANT_AUTH_DISABLED,  /* 403: valid key, disabled tenant */
};

/* Fills *out from row `row` of a TENANT_SQL_KEY_LOOKUP result; a result
 * with no rows gives found = false. res is borrowed. */
int tenant_auth_row_from_pg(const PGresult *res, int row, struct tenant_auth_row *out,
			    struct gv_err *err) GV_MUST_CHECK;

/* The decision for a looked-up row at time now_s (seconds since 1970).
 * A key is expired when now_s >= expires_at_s, revoked when revoked_at_s
 * <= now_s. Revocation and expiry are reported before a disabled tenant,
 * so a dead key never learns whether its tenant exists. Pure. */
enum tenant_auth_decision tenant_auth_decide(const struct tenant_auth_row *row, int64_t now_s);

/* 200, 401 or 403. */
int tenant_auth_http_status(enum tenant_auth_decision d);
/* Stable error code for {"error":{"code":...}}: "ok", "unauthorized",
 * "forbidden". Deliberately the same code for every 401 cause. */
const char *tenant_auth_error_code(enum tenant_auth_decision d);
/* A short message for the client ("missing API key", "invalid API key",
 * "API key expired", "API key revoked", "tenant disabled"). */
const char *tenant_auth_message(enum tenant_auth_decision d);
/* Short name for logs and audit details ("unknown", "revoked", ...). */
const char *tenant_auth_decision_name(enum tenant_auth_decision d);

struct tenant_quota;

/* Blocking helper (CLI, tests, any non-event-loop caller): parse, hash,
 * look up, decide. *row and *quota (either may be NULL) are filled when
 * the key was found. Returns 0 with *decision set, -1 only on a database
 * error. */
int tenant_key_authenticate(PGconn *conn, const char *presented, const struct tenant_pepper *pepper,
			    int64_t now_s, enum tenant_auth_decision *decision,
			    struct tenant_auth_row *row, struct tenant_quota *quota,
			    struct gv_err *err) GV_MUST_CHECK;
