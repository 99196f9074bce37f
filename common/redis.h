/* Redis connection helpers on hiredis 0.14.1 (blocking API; no
 * redisConnectWithOptions, no RESP3): connection URLs, connect and command
 * timeouts, reconnect with bounded backoff, and a checked command helper
 * that turns I/O failures and error replies into a struct gv_err. Reply
 * ownership: what gv_redis_command returns belongs to the caller
 * (gv_redis_reply_free); gv_redis_exec frees the reply itself.
 *
 * URLs:
 *   redis://[[user]:password@]host[:port][/db]   host may be [ipv6]
 *   unix://[[user]:password@]/absolute/path[?db=N]
 *   redis-sentinel://[[user]:password@]host[:port],host[:port].../master[/db]
 *       [?sentinel_user=U&sentinel_password=P]
 * user and password may be percent-encoded. rediss:// (TLS) is refused.
 *
 * A redis-sentinel:// URL names Redis Sentinels (port 26379 unless given)
 * and the name of the master they watch. Every connection asks them in
 * turn which server is the master (SENTINEL get-master-addr-by-name),
 * connects there with the URL's user, password and db, and checks with
 * ROLE that it is the master; a connection that finds itself on a replica
 * (a READONLY error: the master was demoted under it) is dropped, so the
 * next command asks the Sentinels again. The Sentinels are asked with
 * AUTH [sentinel_user] sentinel_password when the URL gives them (a
 * Sentinel with requirepass or ACL users), without AUTH otherwise. */
#pragma once

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

#define GV_REDIS_HOST_MAX 256
#define GV_REDIS_PATH_MAX 108 /* sun_path */
#define GV_REDIS_USER_MAX 128
#define GV_REDIS_PASSWORD_MAX 256
#define GV_REDIS_DB_MAX 65535
#define GV_REDIS_SENTINELS_MAX 8
#define GV_REDIS_MASTER_NAME_MAX 64
#define GV_REDIS_SENTINEL_PORT 26379

struct gv_redis_addr {
	char host[GV_REDIS_HOST_MAX]; /* without brackets */
	int port;
};

struct gv_redis_url {
	bool is_unix;
	/* redis-sentinel://: host and port are empty until a connection
	 * resolves the master (gv_redis_sentinel_master). */
	bool is_sentinel;
	size_t n_sentinels;
	struct gv_redis_addr sentinels[GV_REDIS_SENTINELS_MAX];
	char master_name[GV_REDIS_MASTER_NAME_MAX + 1];
	char sentinel_user[GV_REDIS_USER_MAX];         /* empty: AUTH password only */
	char sentinel_password[GV_REDIS_PASSWORD_MAX]; /* empty: no AUTH to the Sentinels */
	char host[GV_REDIS_HOST_MAX]; /* without brackets */
	int port;                     /* 6379 unless given */
	char path[GV_REDIS_PATH_MAX]; /* unix socket path */
	int db;                       /* SELECTed after connecting when > 0 */
	char user[GV_REDIS_USER_MAX]; /* empty: AUTH password only */
	char password[GV_REDIS_PASSWORD_MAX]; /* empty: no AUTH */
};

/* Parses url into *out (fully overwritten). Pure. Error messages never
 * contain the password. */
int gv_redis_url_parse(const char *url, struct gv_redis_url *out, struct gv_err *err) GV_MUST_CHECK;

/* Asks u's Sentinels in turn (each within timeout_ms) for the address of
 * the master; fills *out. Errors name every Sentinel that did not answer. */
int gv_redis_sentinel_master(const struct gv_redis_url *u, int timeout_ms, struct gv_redis_addr *out,
			     struct gv_err *err) GV_MUST_CHECK;

/* Whether an error reply says that the server is a replica (READONLY):
 * the connection is on a demoted master and must be made again. */
bool gv_redis_reply_is_readonly(const redisReply *reply);

/* One connection attempt to u: connect within connect_timeout_ms, then
 * every command within command_timeout_ms (0 = no timeout), AUTH and
 * SELECT as the URL says; through u's Sentinels for a redis-sentinel://
 * URL (then ROLE must say master). The caller frees the context with
 * redisFree. */
redisContext *gv_redis_connect_url(const struct gv_redis_url *u, int connect_timeout_ms,
				   int command_timeout_ms, struct gv_err *err) GV_MUST_CHECK;

struct gv_redis_opts {
	const char *url;          /* parsed and kept by gv_redis_new */
	int connect_timeout_ms;   /* 0 = 2000 */
	int command_timeout_ms;   /* 0 = 5000; < 0 = none */
	int max_attempts;         /* per gv_redis_new / gv_redis_ensure; 0 = 5 */
	long backoff_initial_ms;  /* 0 = 100 */
	long backoff_max_ms;      /* 0 = 5000 */
};

struct gv_redis;

/* Parses the URL and connects (with retries as in gv_redis_ensure).
 * Returns a handle freed with gv_redis_free, or NULL with err filled. */
struct gv_redis *gv_redis_new(const struct gv_redis_opts *opts, struct gv_err *err) GV_MUST_CHECK;
/* Closes the connection; NULL-safe. */
void gv_redis_free(struct gv_redis *r);
/* 0 when connected, reconnecting with backoff first when the last command
 * broke the connection; -1 when every attempt failed. */
int gv_redis_ensure(struct gv_redis *r, struct gv_err *err) GV_MUST_CHECK;
/* The current context, borrowed until the next call on r. NULL while
 * disconnected. */
redisContext *gv_redis_context(struct gv_redis *r);
/* How many times r has reconnected since gv_redis_new. */
unsigned gv_redis_reconnects(const struct gv_redis *r);

/* Runs one command (hiredis format: %s, %b with a length, %d...; never
 * pass tenant text as the format). Ensures the connection first. Returns
 * the reply, owned by the caller, or NULL with err filled on an I/O
 * failure (the connection is then dropped; the next call reconnects) or
 * an error reply. The command is never retried: it may have run. */
redisReply *gv_redis_command(struct gv_redis *r, struct gv_err *err, const char *fmt, ...) GV_MUST_CHECK;
/* Binary-safe form: argc arguments with their lengths (argvlen NULL =
 * strlen of each). */
redisReply *gv_redis_commandv(struct gv_redis *r, int argc, const char **argv, const size_t *argvlen,
			      struct gv_err *err) GV_MUST_CHECK;
/* gv_redis_command for a reply that is not needed: frees it. */
int gv_redis_exec(struct gv_redis *r, struct gv_err *err, const char *fmt, ...) GV_MUST_CHECK;
/* NULL-safe freeReplyObject. */
void gv_redis_reply_free(redisReply *reply);
