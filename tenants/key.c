/* API keys: random generation, storage hash, strict parsing of presented
 * keys and the pure authentication decision; see key.h.
 *
 * Security argument: keys carry 256 bits from the OS CSPRNG (libsodium), so
 * an unkeyed hash suffices for storage (no dictionary to try); hashes are
 * compared with sodium_memcmp; a presented key is never logged or copied
 * into error messages; parsing bounds its work by TENANT_KEY_LEN. */
#include "tenants/key.h"

#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/pg.h"
#include "tenants/db.h"
#include "tenants/quota.h"

static const char HASH_DOMAIN[] = "gavel-api-key-v1"; /* hashed with its NUL */

int tenant_crypto_init(struct gv_err *err)
{
	if (sodium_init() < 0)
		return gv_err_set(err, GV_EINTERNAL, "libsodium failed to initialise");
	return 0;
}

int tenant_pepper_parse(const char *hex, struct tenant_pepper *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!hex)
		return 0;
	while (*hex == ' ' || *hex == '\t' || *hex == '\n' || *hex == '\r')
		hex++;
	size_t len = strlen(hex);
	while (len > 0 && (hex[len - 1] == ' ' || hex[len - 1] == '\t' || hex[len - 1] == '\n' ||
			   hex[len - 1] == '\r'))
		len--;
	if (len == 0)
		return 0;
	if (len % 2 != 0 || len / 2 < TENANT_KEY_PEPPER_MIN || len / 2 > TENANT_KEY_PEPPER_MAX)
		return gv_err_set(err, GV_ECONFIG, "key pepper: expected %d to %d hex digits (an even count)",
				  2 * TENANT_KEY_PEPPER_MIN, 2 * TENANT_KEY_PEPPER_MAX);
	/* Without hex_end, anything but hex digits in hex[0..len) fails. */
	size_t n = 0;
	if (sodium_hex2bin(out->bytes, sizeof(out->bytes), hex, len, NULL, &n, NULL) != 0 || n != len / 2) {
		sodium_memzero(out, sizeof(*out));
		return gv_err_set(err, GV_ECONFIG, "key pepper: not hexadecimal");
	}
	out->len = n;
	return 0;
}

int tenant_pepper_from_env(struct tenant_pepper *out, struct gv_err *err)
{
	if (tenant_pepper_parse(getenv(TENANT_KEY_PEPPER_ENV), out, err) != 0) {
		gv_err_prefix(err, "environment %s", TENANT_KEY_PEPPER_ENV);
		return -1;
	}
	return 0;
}

int tenant_key_generate(char out[TENANT_KEY_BUF], struct gv_err *err)
{
	if (tenant_crypto_init(err) != 0)
		return -1;
	unsigned char raw[TENANT_KEY_RANDOM_BYTES];
	char b64[sodium_base64_ENCODED_LEN(TENANT_KEY_RANDOM_BYTES, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2base64(b64, sizeof(b64), raw, sizeof(raw), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof(raw));
	if (strlen(b64) != TENANT_KEY_B64_LEN) {
		sodium_memzero(b64, sizeof(b64));
		return gv_err_set(err, GV_EINTERNAL, "key encoding has an unexpected length");
	}
	memcpy(out, TENANT_KEY_PREFIX, TENANT_KEY_PREFIX_LEN);
	memcpy(out + TENANT_KEY_PREFIX_LEN, b64, TENANT_KEY_B64_LEN + 1);
	sodium_memzero(b64, sizeof(b64));
	return 0;
}

static int b64url_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '_';
}

/* The value of a base64url character (valid input only). */
static int b64url_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '-' ? 62 : 63;
}

int tenant_key_parse(const char *key, size_t len, struct gv_err *err)
{
	if (!key || len == 0)
		return gv_err_set(err, GV_EINVAL, "API key missing");
	if (len != TENANT_KEY_LEN)
		return gv_err_set(err, GV_EINVAL, "API key has the wrong length");
	if (memcmp(key, TENANT_KEY_PREFIX, TENANT_KEY_PREFIX_LEN) != 0)
		return gv_err_set(err, GV_EINVAL, "API key lacks the '" TENANT_KEY_PREFIX "' prefix");
	for (size_t i = TENANT_KEY_PREFIX_LEN; i < len; i++)
		if (!b64url_char((unsigned char)key[i]))
			return gv_err_set(err, GV_EINVAL, "API key holds a character outside base64url");
	/* 43 characters carry 258 bits for 256: the last one's low 2 bits
	 * must be zero, or two spellings would name one key. */
	if ((b64url_value((unsigned char)key[len - 1]) & 3) != 0)
		return gv_err_set(err, GV_EINVAL, "API key is not canonically encoded");
	return 0;
}

int tenant_key_hash(const char *key, size_t len, const struct tenant_pepper *pepper,
		    unsigned char out[TENANT_KEY_HASH_LEN], struct gv_err *err)
{
	if (tenant_key_parse(key, len, err) != 0)
		return -1;
	if (tenant_crypto_init(err) != 0)
		return -1;
	crypto_generichash_state st;
	const unsigned char *k = pepper && pepper->len ? pepper->bytes : NULL;
	size_t klen = pepper ? pepper->len : 0;
	if (crypto_generichash_init(&st, k, klen, TENANT_KEY_HASH_LEN) != 0 ||
	    crypto_generichash_update(&st, (const unsigned char *)HASH_DOMAIN, sizeof(HASH_DOMAIN)) != 0 ||
	    crypto_generichash_update(&st, (const unsigned char *)key, len) != 0 ||
	    crypto_generichash_final(&st, out, TENANT_KEY_HASH_LEN) != 0) {
		sodium_memzero(&st, sizeof(st));
		return gv_err_set(err, GV_EINTERNAL, "BLAKE2b failed");
	}
	sodium_memzero(&st, sizeof(st));
	return 0;
}

bool tenant_key_hash_equal(const unsigned char a[TENANT_KEY_HASH_LEN], const unsigned char b[TENANT_KEY_HASH_LEN])
{
	return sodium_memcmp(a, b, TENANT_KEY_HASH_LEN) == 0;
}

void tenant_key_hash_param(const unsigned char hash[TENANT_KEY_HASH_LEN], char out[TENANT_KEY_HASH_PARAM_BUF])
{
	static const char digits[] = "0123456789abcdef";
	out[0] = '\\';
	out[1] = 'x';
	for (size_t i = 0; i < TENANT_KEY_HASH_LEN; i++) {
		out[2 + 2 * i] = digits[hash[i] >> 4];
		out[3 + 2 * i] = digits[hash[i] & 15];
	}
	out[TENANT_KEY_HASH_PARAM_BUF - 1] = '\0';
}

static int copy_uuid(char out[TENANT_UUID_BUF], const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return -1;
	const char *v = PQgetvalue(res, row, col);
	if (strlen(v) != TENANT_UUID_BUF - 1)
		return -1;
	memcpy(out, v, TENANT_UUID_BUF);
	return 0;
}

int tenant_auth_row_from_pg(const PGresult *res, int row, struct tenant_auth_row *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK)
		return gv_err_set(err, GV_EPROTO, "key lookup: not a row set");
	if (PQntuples(res) == 0)
		return 0;
	if (row < 0 || row >= PQntuples(res) || PQnfields(res) < 5)
		return gv_err_set(err, GV_EPROTO, "key lookup: unexpected result shape");
	if (copy_uuid(out->tenant_id, res, row, 0) != 0 || copy_uuid(out->key_id, res, row, 2) != 0)
		return gv_err_set(err, GV_EPROTO, "key lookup: bad tenant or key id");
	out->tenant_disabled = !PQgetisnull(res, row, 1) && PQgetvalue(res, row, 1)[0] == 't';
	if (!PQgetisnull(res, row, 3)) {
		if (tenant_parse_i64(PQgetvalue(res, row, 3), &out->expires_at_s) != 0)
			return gv_err_set(err, GV_EPROTO, "key lookup: bad expires_at_s");
		out->has_expiry = true;
	}
	if (!PQgetisnull(res, row, 4)) {
		if (tenant_parse_i64(PQgetvalue(res, row, 4), &out->revoked_at_s) != 0)
			return gv_err_set(err, GV_EPROTO, "key lookup: bad revoked_at_s");
		out->revoked = true;
	}
	out->found = true;
	return 0;
}

enum tenant_auth_decision tenant_auth_decide(const struct tenant_auth_row *row, int64_t now_s)
{
	if (!row || !row->found)
		return TENANT_AUTH_UNKNOWN;
	if (row->revoked && row->revoked_at_s <= now_s)
		return TENANT_AUTH_REVOKED;
	if (row->has_expiry && now_s >= row->expires_at_s)
		return TENANT_AUTH_EXPIRED;
	if (row->tenant_disabled)
		return TENANT_AUTH_DISABLED;
	return TENANT_AUTH_OK;
}

int tenant_auth_http_status(enum tenant_auth_decision d)
{
	switch (d) {
	case TENANT_AUTH_OK:
		return 200;
	case TENANT_AUTH_DISABLED:
		return 403;
	default:
		return 401;
	}
}

const char *tenant_auth_error_code(enum tenant_auth_decision d)
{
	switch (d) {
	case TENANT_AUTH_OK:
		return "ok";
	case TENANT_AUTH_DISABLED:
		return "forbidden";
	default:
		return "unauthorized";
	}
}

const char *tenant_auth_message(enum tenant_auth_decision d)
{
	switch (d) {
	case TENANT_AUTH_OK:
		return "ok";
	case TENANT_AUTH_MISSING:
		return "missing API key";
	case TENANT_AUTH_MALFORMED:
	case TENANT_AUTH_UNKNOWN:
		return "invalid API key";
	case TENANT_AUTH_REVOKED:
		return "API key revoked";
	case TENANT_AUTH_EXPIRED:
		return "API key expired";
	case TENANT_AUTH_DISABLED:
		return "tenant disabled";
	}
	return "invalid API key";
}

const char *tenant_auth_decision_name(enum tenant_auth_decision d)
{
	switch (d) {
	case TENANT_AUTH_OK:
		return "ok";
	case TENANT_AUTH_MISSING:
		return "missing";
	case TENANT_AUTH_MALFORMED:
		return "malformed";
	case TENANT_AUTH_UNKNOWN:
		return "unknown";
	case TENANT_AUTH_REVOKED:
		return "revoked";
	case TENANT_AUTH_EXPIRED:
		return "expired";
	case TENANT_AUTH_DISABLED:
		return "disabled";
	}
	return "unknown";
}

int tenant_key_authenticate(PGconn *conn, const char *presented, const struct tenant_pepper *pepper,
			    int64_t now_s, enum tenant_auth_decision *decision, struct tenant_auth_row *row,
			    struct tenant_quota *quota, struct gv_err *err)
{
	struct tenant_auth_row local;
	struct tenant_auth_row *r = row ? row : &local;
	memset(r, 0, sizeof(*r));
	if (!presented || !presented[0]) {
		*decision = TENANT_AUTH_MISSING;
		return 0;
	}
	size_t len = strnlen(presented, TENANT_KEY_PRESENTED_MAX + 1);
	unsigned char hash[TENANT_KEY_HASH_LEN];
	struct gv_err perr;
	if (len > TENANT_KEY_PRESENTED_MAX || tenant_key_hash(presented, len, pepper, hash, &perr) != 0) {
		if (len <= TENANT_KEY_PRESENTED_MAX && perr.code != GV_EINVAL)
			return gv_err_set(err, perr.code, "%s", perr.msg);
		*decision = TENANT_AUTH_MALFORMED;
		return 0;
	}
	char param[TENANT_KEY_HASH_PARAM_BUF];
	tenant_key_hash_param(hash, param);
	const char *params[] = { param };
	PGresult *res = gv_pg_query(conn, TENANT_SQL_KEY_LOOKUP, 1, params, err);
	if (!res) {
		gv_err_prefix(err, "key lookup");
		return -1;
	}
	int rc = tenant_auth_row_from_pg(res, 0, r, err);
	if (rc == 0 && r->found && quota)
		rc = tenant_quota_from_pg(res, 0, TENANT_AUTH_QUOTA_COL1, quota, err);
	PQclear(res);
	if (rc != 0)
		return -1;
	*decision = tenant_auth_decide(r, now_s);
	return 0;
}
