/* Webhooks: delivery of a finished submission to its `callback_url`.
 *
 * Flow. A worker commits, with a result whose request named a
 * callback_url, a row of the outbox webhook_outbox (gv_webhook_outbox_add,
 * common/webhook_outbox.h, in the result's transaction; the scheduler does
 * the same when it finishes a job as IE), then calls gv_webhook_enqueue: it
 * adds "<tid>:<sid>:1" to the Redis sorted set gavel:webhooks, scored by the
 * time it is due (Redis server time, ms). The outbox row follows the item
 * (next attempt, due time) in the transaction that records each attempt
 * and goes when the item does; a row past due by recover_after whose item
 * Redis no longer holds (the executor died between COMMIT and ZADD, Redis
 * lost it) is scheduled again (exec_webhook_recover): no webhook is lost. Every executor node runs one delivery process
 * (exec_webhook_run, forked by the supervisor next to the job workers) that
 * claims due items (an atomic script moves the item's score forward by a
 * lease, so an item whose deliverer died becomes due again), reads the row
 * and the tenant's secret from PostgreSQL, POSTs the body, records the
 * attempt in webhook_deliveries (migration 0006) and either drops the item
 * (delivered, refused, out of attempts) or re-adds it as "<tid>:<sid>:<n+1>"
 * after an exponential backoff. The job loop never waits on a receiver: it
 * spends one ZADD. Several executors share the set; each item is claimed by
 * one at a time. Delivery is at-least-once: receivers deduplicate on the
 * body's "id" (and X-Gavel-Delivery names the attempt).
 *
 * The request: POST, Content-Type application/json, the body is the
 * submission exactly as GET /v1/submissions/{id} returns it
 * (exec_webhook_body). A submission made through the Judge0 API
 * (submissions.api, migration 0008) is called back as Judge0 CE 1.13.1
 * does: PUT, the body the submission as Judge0's GET returns it with
 * base64_encoded=true and the default fields (exec_webhook_judge0_body:
 * token, time, memory, stdout, stderr, compile_output, message, status).
 * Both carry the header
 * X-Gavel-Signature: sha256=<hex HMAC-SHA256 of the body bytes, keyed with
 * the tenant's webhook secret> (`gavel tenant webhook-secret NAME` prints
 * it). A 2xx answer is delivered; anything else, a transport error or a
 * timeout is retried; the response body is read up to a bound and ignored.
 *
 * SSRF. The URL must be http or https. The host is resolved here
 * (getaddrinfo) and the delivery is refused, without retry, if ANY of its
 * addresses is not a public unicast address (exec_webhook_addr_classify):
 * a host that resolves to one public and one private address cannot be used
 * to reach the private one. libcurl is then pinned to the checked address
 * (CURLOPT_RESOLVE), so a second DNS answer (rebinding) cannot change where
 * it connects; proxies from the environment are ignored, redirects are not
 * followed, and only http/https are allowed as protocols. */
#pragma once

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/err.h"
#include "common/log.h"
#include "common/pg.h"
#include "common/redis.h"
#include "common/webhook_outbox.h"

#define EXEC_WEBHOOK_QUEUE GV_WEBHOOK_QUEUE
#define EXEC_WEBHOOK_SECRET_LEN 32      /* bytes of a generated secret */
#define EXEC_WEBHOOK_SECRET_MAX 64      /* bytes a stored secret may have */
#define EXEC_WEBHOOK_SIG_MAX 72         /* "sha256=" + 64 hex + NUL */
#define EXEC_WEBHOOK_ATTEMPTS_MAX 20
#define EXEC_WEBHOOK_RESPONSE_MAX (64u * 1024u) /* response bytes read, then dropped */
#define EXEC_WEBHOOK_HOST_MAX 255

/* What an address is, for the SSRF check. Only PUBLIC may be reached
 * (LOOPBACK too with the test-only allow_loopback). IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and
 * 6to4 (2002::/16) IPv6 addresses are classified by the IPv4 address they
 * carry. */
enum exec_webhook_addr_class {
	EXEC_WEBHOOK_ADDR_PUBLIC = 0,
	EXEC_WEBHOOK_ADDR_LOOPBACK,     /* 127/8, ::1 */
	EXEC_WEBHOOK_ADDR_PRIVATE,      /* 10/8, 172.16/12, 192.168/16, fec0::/10 */
	EXEC_WEBHOOK_ADDR_LINK_LOCAL,   /* 169.254/16, fe80::/10 */
	EXEC_WEBHOOK_ADDR_UNIQUE_LOCAL, /* fc00::/7 */
	EXEC_WEBHOOK_ADDR_THIS_NETWORK, /* 0/8, :: */
	EXEC_WEBHOOK_ADDR_CGNAT,        /* 100.64/10 */
	EXEC_WEBHOOK_ADDR_MULTICAST,    /* 224/4, ff00::/8 */
	EXEC_WEBHOOK_ADDR_METADATA,     /* 169.254.169.254, fd00:ec2::254 */
	EXEC_WEBHOOK_ADDR_RESERVED,     /* 240/4 (broadcast too), 192.0.0/24, 198.18/15,
					 * documentation ranges, 100::/64, 2001:db8::/32,
					 * 2001::/23 (Teredo, ORCHID...), unknown families */
};

/* Pure. sa may be AF_INET or AF_INET6; anything else is RESERVED. */
enum exec_webhook_addr_class exec_webhook_addr_classify(const struct sockaddr *sa);
/* "public", "loopback", ... (static strings). */
const char *exec_webhook_addr_class_name(enum exec_webhook_addr_class c);
/* True when a delivery may connect to an address of class c. */
bool exec_webhook_addr_allowed(enum exec_webhook_addr_class c, bool allow_loopback);

/* A callback URL taken apart. */
struct exec_webhook_target {
	bool https;
	char host[EXEC_WEBHOOK_HOST_MAX + 1]; /* without IPv6 brackets */
	unsigned port;
};
/* Accepts http:// and https:// URLs with a host (GV_EINVAL otherwise,
 * with a message fit for the attempt record). Pure (libcurl's URL parser). */
int exec_webhook_url_parse(const char *url, struct exec_webhook_target *out, struct gv_err *err) GV_MUST_CHECK;

/* out = "sha256=" + lowercase hex HMAC-SHA256(key, body). Pure. */
void exec_webhook_sign(const unsigned char *key, size_t key_len, const char *body, size_t body_len,
		       char out[EXEC_WEBHOOK_SIG_MAX]);

/* A finished submission row (borrowed strings), as the API reads it. */
struct exec_webhook_row {
	const char *id;
	const char *language;
	const char *status;
	const char *verdict;     /* may be NULL */
	const char *created_at;  /* ISO 8601 UTC, like the API */
	const char *finished_at; /* may be NULL */
	const json_t *result;    /* may be NULL */
};
/* The body: the same object GET /v1/submissions/{id} answers
 * (fe_native_render; a unit test keeps the two equal). New reference;
 * NULL only when out of memory. */
json_t *exec_webhook_body(const struct exec_webhook_row *row);

/* The Judge0 callback body: the submission as Judge0's GET returns it
 * with base64_encoded=true and the default fields (token, time, memory,
 * stdout, stderr, compile_output, message, status) -- fe_j0_render's
 * output for those (a unit test keeps the two equal). New reference; NULL
 * only when out of memory. */
json_t *exec_webhook_judge0_body(const struct exec_webhook_row *row);

/* Delay before attempt n+1 after attempt n failed (n >= 1): base * 2^(n-1),
 * capped at max_ms. Pure. */
long exec_webhook_retry_delay_ms(unsigned attempt, uint64_t base_ms, uint64_t max_ms);

/* Queue item "<tid>:<sid>:<attempt>". */
struct exec_webhook_item {
	char tid[65];
	char sid[65];
	unsigned attempt; /* 1-based */
};
int exec_webhook_item_parse(const char *s, struct exec_webhook_item *out, struct gv_err *err) GV_MUST_CHECK;

struct exec_webhook_opts {
	unsigned max_attempts;   /* 1..EXEC_WEBHOOK_ATTEMPTS_MAX */
	uint64_t timeout_ms;     /* one attempt, connect included */
	uint64_t backoff_ms;     /* delay after the first failure, doubling */
	uint64_t backoff_max_ms; /* cap on that delay */
	bool allow_loopback;     /* TEST ONLY: lets tests deliver to 127.0.0.1 */
	uint64_t recover_after_ms; /* outbox rows this far past due go back to Redis; 0: never */
};

/* Connections and settings of the delivery process (borrowed). */
struct exec_webhook_env {
	const struct exec_webhook_opts *opts;
	struct gv_redis *r;
	struct gv_pg *pg;
	const struct gv_log_ctx *log;
};

/* Claims one due item and handles it (deliver, record, reschedule or drop).
 * 1 when an item was handled, 0 when none was due, -1 with err when Redis
 * failed (PostgreSQL failures reschedule the item and return 1). */
int exec_webhook_step(const struct exec_webhook_env *env, struct gv_err *err) GV_MUST_CHECK;

/* The delivery process speaks to tenant URLs and reads their answers: it
 * runs as an unprivileged user. Resolves user (a name or a uid; "nobody"
 * falls back to 65534:65534 where no passwd entry names it) to its uid and
 * primary gid; refuses root. */
int exec_webhook_user_resolve(const char *user, uid_t *uid, gid_t *gid, struct gv_err *err) GV_MUST_CHECK;
/* Drops the calling process to uid/gid for good: no supplementary groups,
 * no capabilities (bounding, ambient, permitted, effective, inheritable),
 * no_new_privs; verified after. When not running as root, only the
 * capabilities and no_new_privs apply (the ids are already not root).
 * -1 with err when any step fails: the caller must not go on. */
int exec_webhook_drop_privileges(uid_t uid, gid_t gid, struct gv_err *err) GV_MUST_CHECK;

/* Schedules again (ZADD NX) every outbox row due more than
 * opts->recover_after_ms ago, at most 100 a call, oldest first. The number
 * scheduled anew, -1 with err. exec_webhook_step calls it every
 * recover_after. */
int exec_webhook_recover(const struct exec_webhook_env *env, struct gv_err *err) GV_MUST_CHECK;
