/* The hash-chained audit log; see audit.h for the chain's definition.
 *
 * Append: validate here (so that callers get GV_EINVAL / GV_ELIMIT before
 * a round trip), then call gavel_audit_append (deploy/sql/0005), which
 * locks the tenant's chain for the rest of the caller's transaction, reads
 * the head, hashes the record as it will be stored and inserts it. The one
 * SQL implementation serves the C callers and the frontend's async
 * pipeline alike, so two writers can never disagree on the hash.
 * Verify: one REPEATABLE READ snapshot, pages in seq order, recompute each
 * hash here in C (independently of the SQL), stop at the first record
 * whose seq, prev_hash or hash does not hold. */
#include "tenants/audit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/pg.h"
#include "tenants/db.h"

#define VERIFY_PAGE 1000

static const char CANON_MAGIC[] = "gavel-audit-v1\n";

const char *const TENANT_AUDIT_FORBIDDEN_KEYS[] = {
	"source", "source_code", "sources", "files", "stdin", "input", "stdout", "stderr",
	"output", "compile_output", "expected_output", "expected", NULL,
};

static void put_field(crypto_hash_sha256_state *st, const void *p, size_t len, int is_null)
{
	unsigned char be[4];
	uint32_t n = is_null ? 0xFFFFFFFFu : (uint32_t)len;
	be[0] = (unsigned char)(n >> 24);
	be[1] = (unsigned char)(n >> 16);
	be[2] = (unsigned char)(n >> 8);
	be[3] = (unsigned char)n;
	crypto_hash_sha256_update(st, be, 4);
	if (!is_null && len > 0)
		crypto_hash_sha256_update(st, p, len);
}

static void put_str(crypto_hash_sha256_state *st, const char *s)
{
	put_field(st, s, s ? strlen(s) : 0, s == NULL);
}

int tenant_audit_hash(const struct tenant_audit_record *rec, unsigned char out[TENANT_AUDIT_HASH_LEN],
		      struct gv_err *err)
{
	if (sodium_init() < 0)
		return gv_err_set(err, GV_EINTERNAL, "libsodium failed to initialise");
	if (!rec->actor || !rec->action || !rec->details)
		return gv_err_set(err, GV_EINVAL, "audit record lacks actor, action or details");
	crypto_hash_sha256_state st;
	char seq[24], at[24];
	snprintf(seq, sizeof(seq), "%" PRId64, rec->seq);
	snprintf(at, sizeof(at), "%" PRId64, rec->at_us);
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const unsigned char *)CANON_MAGIC, sizeof(CANON_MAGIC) - 1);
	put_str(&st, rec->tenant_id);
	put_str(&st, seq);
	put_str(&st, at);
	put_str(&st, rec->actor);
	put_str(&st, rec->action);
	put_str(&st, rec->object);
	put_str(&st, rec->node);
	put_str(&st, rec->sandbox);
	put_str(&st, rec->details);
	put_field(&st, rec->prev_hash, TENANT_AUDIT_HASH_LEN, rec->prev_hash == NULL);
	crypto_hash_sha256_final(&st, out);
	return 0;
}

static int check_text(const char *name, const char *v, int required, struct gv_err *err)
{
	if (!v) {
		if (required)
			return gv_err_set(err, GV_EINVAL, "audit: %s is required", name);
		return 0;
	}
	size_t len = strnlen(v, TENANT_AUDIT_TEXT_MAX + 1);
	if (required && len == 0)
		return gv_err_set(err, GV_EINVAL, "audit: %s is empty", name);
	if (len > TENANT_AUDIT_TEXT_MAX)
		return gv_err_set(err, GV_ELIMIT, "audit: %s longer than %d bytes", name, TENANT_AUDIT_TEXT_MAX);
	return 0;
}

static int check_details(const char *details, struct gv_err *err)
{
	size_t len = strnlen(details, TENANT_AUDIT_DETAILS_MAX + 1);
	if (len > TENANT_AUDIT_DETAILS_MAX)
		return gv_err_set(err, GV_ELIMIT, "audit: details longer than %d bytes", TENANT_AUDIT_DETAILS_MAX);
	json_t *j = gv_json_parse(details, len, TENANT_AUDIT_DETAILS_MAX, 16, err);
	if (!j) {
		gv_err_prefix(err, "audit details");
		return -1;
	}
	int rc = 0;
	if (!json_is_object(j)) {
		rc = gv_err_set(err, GV_EINVAL, "audit details: expected a JSON object");
	} else {
		for (size_t i = 0; TENANT_AUDIT_FORBIDDEN_KEYS[i]; i++)
			if (json_object_get(j, TENANT_AUDIT_FORBIDDEN_KEYS[i])) {
				rc = gv_err_set(err, GV_EINVAL,
						"audit details: key '%s' is refused (no source code or outputs in audit records)",
						TENANT_AUDIT_FORBIDDEN_KEYS[i]);
				break;
			}
	}
	json_decref(j);
	return rc;
}

static int hex_to_hash(const char *hex, unsigned char out[TENANT_AUDIT_HASH_LEN])
{
	size_t bin_len = 0;
	if (strlen(hex) != 2 * TENANT_AUDIT_HASH_LEN)
		return -1;
	if (sodium_hex2bin(out, TENANT_AUDIT_HASH_LEN, hex, strlen(hex), NULL, &bin_len, NULL) != 0 ||
	    bin_len != TENANT_AUDIT_HASH_LEN)
		return -1;
	return 0;
}

int tenant_audit_append_seq(PGconn *conn, const char *tenant_id, const char *actor, const char *action,
			    const char *object, const char *node, const char *sandbox, const char *details_json,
			    int64_t *seq_out, struct gv_err *err)
{
	if (PQtransactionStatus(conn) != PQTRANS_INTRANS)
		return gv_err_set(err, GV_EINTERNAL, "audit append outside a transaction (or in a failed one)");
	if (tenant_id && !tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "audit: tenant id is not a uuid");
	if (!details_json)
		details_json = "{}";
	if (check_text("actor", actor, 1, err) != 0 || check_text("action", action, 1, err) != 0 ||
	    check_text("object", object, 0, err) != 0 || check_text("node", node, 0, err) != 0 ||
	    check_text("sandbox", sandbox, 0, err) != 0 || check_details(details_json, err) != 0)
		return -1;

	/* One implementation of seq and hash: gavel_audit_append (migration
	 * 0005), also called by the frontend's pipeline. */
	const char *p[] = { tenant_id, actor, action, object, node, sandbox, details_json };
	PGresult *res = gv_pg_query(conn, TENANT_SQL_AUDIT_APPEND, 7, p, err);
	if (!res) {
		gv_err_prefix(err, "audit append");
		return -1;
	}
	int64_t seq = 0;
	int rc = 0;
	if (PQntuples(res) != 1 || tenant_parse_i64(PQgetvalue(res, 0, 0), &seq) != 0)
		rc = gv_err_set(err, GV_EPROTO, "audit append: unexpected result");
	else if (seq_out)
		*seq_out = seq;
	PQclear(res);
	return rc;
}

int tenant_audit_append(PGconn *conn, const char *tenant_id, const char *actor, const char *action,
			const char *object, const char *node, const char *sandbox, const char *details_json,
			struct gv_err *err)
{
	return tenant_audit_append_seq(conn, tenant_id, actor, action, object, node, sandbox, details_json, NULL,
				       err);
}

static const char *nullable(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

static int broken(struct tenant_audit_report *rep, int64_t seq, const char *fmt, ...) GV_PRINTF(3, 4);
static int broken(struct tenant_audit_report *rep, int64_t seq, const char *fmt, ...)
{
	rep->ok = false;
	rep->broken_seq = seq;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rep->reason, sizeof(rep->reason), fmt, ap);
	va_end(ap);
	return 1;
}

/* Checks one page of rows; 1 when a broken link was found. */
static int verify_page(const PGresult *res, struct tenant_audit_report *rep, unsigned char last[TENANT_AUDIT_HASH_LEN],
		       int *have_last, struct gv_err *err)
{
	for (int i = 0; i < PQntuples(res); i++) {
		int64_t seq, at_us;
		if (tenant_parse_i64(PQgetvalue(res, i, 0), &seq) != 0 || tenant_parse_i64(PQgetvalue(res, i, 2), &at_us) != 0)
			return gv_err_set(err, GV_EPROTO, "audit verify: bad seq or time"), -1;
		int64_t expected = rep->last_seq + 1;
		if (seq != expected)
			return broken(rep, expected, "seq %" PRId64 " missing (next record is seq %" PRId64 ")", expected,
				      seq);
		unsigned char prev[TENANT_AUDIT_HASH_LEN], stored[TENANT_AUDIT_HASH_LEN], calc[TENANT_AUDIT_HASH_LEN];
		const char *prev_hex = nullable(res, i, 9);
		if (prev_hex && hex_to_hash(prev_hex, prev) != 0)
			return broken(rep, seq, "seq %" PRId64 ": prev_hash is not %d bytes", seq,
				      TENANT_AUDIT_HASH_LEN);
		if (seq == 1 && prev_hex)
			return broken(rep, seq, "seq %" PRId64 ": first record has a prev_hash", seq);
		if (seq > 1 && (!prev_hex || !*have_last || memcmp(prev, last, TENANT_AUDIT_HASH_LEN) != 0))
			return broken(rep, seq,
				      "seq %" PRId64 ": prev_hash does not match the hash of seq %" PRId64
				      " (a record was changed or replaced)",
				      seq, seq - 1);
		if (hex_to_hash(PQgetvalue(res, i, 10), stored) != 0)
			return broken(rep, seq, "seq %" PRId64 ": hash is not %d bytes", seq,
				      TENANT_AUDIT_HASH_LEN);
		struct tenant_audit_record rec = {
			.tenant_id = nullable(res, i, 1), .seq = seq, .at_us = at_us,
			.actor = PQgetvalue(res, i, 3), .action = PQgetvalue(res, i, 4),
			.object = nullable(res, i, 5), .node = nullable(res, i, 6), .sandbox = nullable(res, i, 7),
			.details = PQgetvalue(res, i, 8), .prev_hash = prev_hex ? prev : NULL,
		};
		if (tenant_audit_hash(&rec, calc, err) != 0)
			return -1;
		if (memcmp(calc, stored, TENANT_AUDIT_HASH_LEN) != 0)
			return broken(rep, seq,
				      "seq %" PRId64 ": hash mismatch (the record was altered after it was written)",
				      seq);
		memcpy(last, stored, TENANT_AUDIT_HASH_LEN);
		*have_last = 1;
		rep->last_seq = seq;
		rep->records++;
	}
	return 0;
}

int tenant_audit_verify(PGconn *conn, const char *tenant_id, struct tenant_audit_report *rep, struct gv_err *err)
{
	memset(rep, 0, sizeof(*rep));
	rep->ok = true;
	if (tenant_id && !tenant_uuid_valid(tenant_id))
		return gv_err_set(err, GV_EINVAL, "audit verify: tenant id is not a uuid");
	if (gv_pg_exec(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL, err) != 0) {
		gv_err_prefix(err, "audit verify");
		return -1;
	}
	static const char cols[] =
		"SELECT seq, tenant_id::text, (extract(epoch FROM at) * 1000000)::bigint, actor, action, object, "
		"node, sandbox, details::text, encode(prev_hash, 'hex'), encode(hash, 'hex') FROM audit_log ";
	char sql[1024];
	snprintf(sql, sizeof(sql), "%s WHERE %s AND seq > $2::bigint ORDER BY seq LIMIT %d", cols,
		 tenant_id ? "tenant_id = $1::uuid" : "tenant_id IS NULL AND $1::uuid IS NULL", VERIFY_PAGE);
	unsigned char last[TENANT_AUDIT_HASH_LEN];
	int have_last = 0;
	int rc = 0;
	for (;;) {
		char after[24];
		snprintf(after, sizeof(after), "%" PRId64, rep->last_seq);
		const char *p[] = { tenant_id, after };
		PGresult *res = gv_pg_query(conn, sql, 2, p, err);
		if (!res) {
			gv_err_prefix(err, "audit verify");
			rc = -1;
			break;
		}
		int n = PQntuples(res);
		int r = verify_page(res, rep, last, &have_last, err);
		PQclear(res);
		if (r < 0)
			rc = -1;
		if (r != 0 || n < VERIFY_PAGE)
			break;
	}
	tenant_tx_rollback(conn);
	return rc;
}
