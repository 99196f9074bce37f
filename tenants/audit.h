/* The audit log: one append-only table (audit_log), hash-chained per
 * tenant. The daemons' roles may only append through gavel_audit_append
 * (and the frontend's read it: 0012's grants), so the daemons cannot
 * rewrite history; the chain makes any change by a more privileged role
 * visible to tenant_audit_verify.
 *
 * Chain: records of one tenant are numbered seq = 1, 2, ...; record n
 * stores prev_hash = hash of record n-1 (NULL for seq 1) and
 *   hash = SHA-256(canonical(record))
 * canonical(record) = "gavel-audit-v1\n" then, for each of tenant_id,
 * seq, at_us, actor, action, object, node, sandbox, details, prev_hash in
 * this order: a 4-byte big-endian length followed by that many bytes, or
 * the length 0xFFFFFFFF for NULL. tenant_id is the lowercase canonical
 * uuid text; seq and at_us (microseconds since 1970 of `at`) in decimal;
 * details as PostgreSQL's jsonb text output (a canonical form); prev_hash
 * raw 32 bytes. SHA-256 so an auditor can recompute it with PostgreSQL's
 * sha256() alone.
 *
 * One implementation: every append goes through the SQL function
 * gavel_audit_append (deploy/sql/0005_audit_sql.sql), which computes seq
 * and hash; tenant_audit_append is its C wrapper, the frontend calls it
 * from its async pipeline (TENANT_SQL_AUDIT_APPEND). tenant_audit_hash
 * and tenant_audit_verify recompute the same hash in C, independently.
 *
 * Concurrency: an append takes pg_advisory_xact_lock(TENANT_AUDIT_LOCK_CLASS,
 * hashtext(lowercase tenant uuid text, '' for system records)) first, so
 * appends of one tenant serialise until the caller's transaction ends;
 * other tenants' appends run in parallel.
 *
 * Row-level security: as a daemon's role, the transaction must have set
 * gavel.tenant_id to the record's tenant (tenant_tx_begin, tenants/db.h);
 * records without a tenant (system records) and records whose actor is
 * not "key:..." or "system:..." (operator records) can only be written by
 * the owner role (0012).
 *
 * Details never hold source code, program input or output: only ids,
 * verdicts, limits, resource figures, reasons. tenant_audit_append refuses
 * a details object whose top-level keys include any of TENANT_AUDIT_FORBIDDEN_KEYS. */
#pragma once

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"

#define TENANT_AUDIT_HASH_LEN 32
#define TENANT_AUDIT_DETAILS_MAX (16 * 1024) /* bytes of details JSON */
#define TENANT_AUDIT_TEXT_MAX 512            /* actor, action, object, node, sandbox */
#define TENANT_AUDIT_LOCK_CLASS 1635087460   /* "audi": first key of the advisory lock */

/* Action names: use these so that GET /v1/audit filters work across
 * components. Actor: "key:<key uuid>" for a tenant's API key,
 * "operator:<user>" for the CLI, "system:<component>[@node]" for daemons. */
#define TENANT_AUDIT_SUBMISSION_CREATED "submission.created"
#define TENANT_AUDIT_SANDBOX_STARTED    "sandbox.started"   /* node, sandbox, details: limits applied */
#define TENANT_AUDIT_SANDBOX_FINISHED   "sandbox.finished"  /* verdict, resources, limit hit, denials */
#define TENANT_AUDIT_SUBMISSION_DELETED "submission.deleted"
#define TENANT_AUDIT_KEY_CREATED        "key.created"
#define TENANT_AUDIT_KEY_REVOKED        "key.revoked"
#define TENANT_AUDIT_QUOTA_CHANGED      "quota.changed"
#define TENANT_AUDIT_QUOTA_REFUSED      "quota.refused"     /* details: {"limit":..., "status":422|429} */
#define TENANT_AUDIT_AUTH_DENIED        "auth.denied"       /* 403 for a disabled tenant */
#define TENANT_AUDIT_TENANT_CREATED     "tenant.created"
#define TENANT_AUDIT_TENANT_CHANGED     "tenant.changed"    /* details: {"disabled":true} ... */
#define TENANT_AUDIT_RETENTION_PURGED   "retention.purged"  /* details: {"deleted":N,"before":...} */
/* Notebook kernels (executor/kernels/): object = the kernel id. */
#define TENANT_AUDIT_KERNEL_CREATED     "kernel.created"    /* details: {"api","kernel":{name, limits}} */
#define TENANT_AUDIT_KERNEL_STARTED     "kernel.started"    /* node, sandbox, details: budgets */
#define TENANT_AUDIT_KERNEL_STOPPED     "kernel.stopped"    /* details: reason, kernel_ms, peak memory */
#define TENANT_AUDIT_KERNEL_INTERRUPTED "kernel.interrupted"
#define TENANT_AUDIT_KERNEL_RESTARTED   "kernel.restarted"  /* sandbox: the fresh one */
#define TENANT_AUDIT_KERNEL_WARM_REQUESTED "kernel.warm_requested" /* details: {id, kernels, from, until} */
#define TENANT_AUDIT_KERNEL_WARM_CANCELLED "kernel.warm_cancelled" /* details: {id} */

/* Top-level details keys refused by tenant_audit_append (NULL-terminated);
 * gavel_audit_append refuses the same list (0005). */
extern const char *const TENANT_AUDIT_FORBIDDEN_KEYS[];

/* Appends one record. Must run inside the caller's open transaction (the
 * record commits or rolls back with the caller's work; GV_EINTERNAL when
 * conn is not in a transaction). tenant_id NULL = system record. actor and
 * action required; object, node, sandbox may be NULL; details_json NULL =
 * "{}", else a JSON object of at most TENANT_AUDIT_DETAILS_MAX bytes.
 * *seq_out (may be NULL) gets the record's seq. On failure the caller's
 * transaction is aborted (roll it back). */
int tenant_audit_append(PGconn *conn, const char *tenant_id, const char *actor, const char *action,
			const char *object, const char *node, const char *sandbox,
			const char *details_json, struct gv_err *err) GV_MUST_CHECK;
/* The append for async callers (one statement, in the caller's
 * transaction, with the tenant set): $1 tenant uuid, $2 actor, $3 action,
 * $4 object, $5 node, $6 sandbox (NULL allowed), $7 details JSON object
 * text. Returns one row: the record's seq. */
#define TENANT_SQL_AUDIT_APPEND "SELECT gavel_audit_append($1::uuid, $2, $3, $4, $5, $6, $7::jsonb)"
int tenant_audit_append_seq(PGconn *conn, const char *tenant_id, const char *actor,
			    const char *action, const char *object, const char *node,
			    const char *sandbox, const char *details_json, int64_t *seq_out,
			    struct gv_err *err) GV_MUST_CHECK;

/* The fields that enter a record's hash. Strings borrowed; NULL = SQL NULL. */
struct tenant_audit_record {
	const char *tenant_id;
	int64_t seq;
	int64_t at_us;
	const char *actor;
	const char *action;
	const char *object;
	const char *node;
	const char *sandbox;
	const char *details; /* jsonb text output */
	const unsigned char *prev_hash; /* TENANT_AUDIT_HASH_LEN bytes or NULL */
};

/* hash = SHA-256(canonical(rec)). Pure. */
int tenant_audit_hash(const struct tenant_audit_record *rec, unsigned char out[TENANT_AUDIT_HASH_LEN],
		      struct gv_err *err) GV_MUST_CHECK;

struct tenant_audit_report {
	int64_t records;        /* records checked */
	int64_t last_seq;       /* seq of the last record read */
	bool ok;                /* the whole chain holds */
	int64_t broken_seq;     /* first broken link (when !ok): the seq of the
	                           record that fails, or the missing seq */
	char reason[256];       /* "hash mismatch", "prev_hash mismatch",
	                           "seq 7 missing (found 8)", ... */
};

/* Walks tenant_id's chain (NULL = system records) in seq order in one
 * REPEATABLE READ snapshot (its own transaction: conn must be idle) and
 * stops at the first broken link. Returns 0 when the walk completed —
 * check rep->ok — and -1 on a database error. The owner role sees every
 * record; as a daemon's role, set the tenant first. Truncation of the most
 * recent records cannot be seen from the table alone. */
int tenant_audit_verify(PGconn *conn, const char *tenant_id, struct tenant_audit_report *rep,
			struct gv_err *err) GV_MUST_CHECK;

/* A page of a tenant's own records for GET /v1/audit, newest first.
 * $1 tenant uuid, $2 from timestamptz or NULL, $3 until (exclusive) or
 * NULL, $4 action or NULL, $5 before_seq bigint or NULL (paging cursor:
 * records with seq < $5), $6 limit. Columns: seq, at (ISO 8601 UTC text),
 * actor, action, object, node, sandbox, details (json text), hash (hex). */
#define TENANT_SQL_AUDIT_PAGE                                                                     \
	"SELECT seq, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), actor, "  \
	"action, object, node, sandbox, details::text, encode(hash, 'hex') FROM audit_log "          \
	"WHERE tenant_id = $1::uuid AND ($2::timestamptz IS NULL OR at >= $2::timestamptz) "          \
	"AND ($3::timestamptz IS NULL OR at < $3::timestamptz) AND ($4::text IS NULL OR action = $4) " \
	"AND ($5::bigint IS NULL OR seq < $5::bigint) ORDER BY seq DESC LIMIT $6::int"
