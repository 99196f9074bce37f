/* The executor's local cache of problem files by content hash, so that a
 * hot problem's test data is not fetched from PostgreSQL for every
 * submission.
 *
 * Layout: <dir>/<tenant uuid>/<sha256 hex>, mode 0444, owned by the daemon;
 * per tenant like the blobs in PostgreSQL (deploy/sql/0011), so a tenant
 * can never learn from a fast judge that another tenant holds some content.
 * A file is written to a temporary name in the same folder, its hash
 * checked against the name it will get, fsync'd and renamed into place:
 * a reader sees a whole, verified file or nothing. Several worker processes
 * share one cache; rename and link are atomic, so they need no lock.
 *
 * LRU: a hit sets the file's mtime to now; when the cache holds more than
 * its cap, the files with the oldest mtime go first. Judging uses hard links
 * to cached files (exec_testdata_cache_link), so evicting a file that a
 * running judge still uses only drops the cache's name for it. Nothing in
 * the cache is ever shown to a sandbox: packages are materialised from it
 * into a separate folder and read by the host-side judge. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define EXEC_SHA256_LEN 32
#define EXEC_SHA256_HEX (2 * EXEC_SHA256_LEN + 1)

struct exec_testdata_cache {
	char *dir;          /* owned */
	uint64_t cap_bytes; /* 0: no caching (every file fetched) */
	/* Counters of this process (logs, metrics, tests). */
	uint64_t hits, misses, evicted;
};

/* Creates dir (0700) when missing. cap_bytes 0 disables the cache: lookups
 * miss and stores are not kept. */
int exec_testdata_cache_init(struct exec_testdata_cache *c, const char *dir, uint64_t cap_bytes,
			     struct gv_err *err) GV_MUST_CHECK;
void exec_testdata_cache_fini(struct exec_testdata_cache *c);

/* Lower-case hex of a 32-byte hash into out (EXEC_SHA256_HEX bytes). */
void exec_sha256_hex(const unsigned char hash[EXEC_SHA256_LEN], char out[EXEC_SHA256_HEX]);
/* True when s is 64 lower-case hex digits. */
bool exec_sha256_hex_ok(const char *s);

/* Hard-links (or, across file systems, copies) the cached file of
 * (tenant, hex) to dest (which must not exist). 1: done (a hit; the file's
 * mtime is refreshed), 0: not cached, -1: error. */
int exec_testdata_cache_link(struct exec_testdata_cache *c, const char *tenant, const char *hex, int dest_dirfd,
			     const char *dest_name, struct gv_err *err) GV_MUST_CHECK;

/* Stores data (len bytes) under (tenant, hex) after checking that its
 * sha256 is hex: a mismatch is GV_EPROTO and nothing is stored. Then
 * evicts the least recently used files while the cache is over its cap. */
int exec_testdata_cache_put(struct exec_testdata_cache *c, const char *tenant, const char *hex, const void *data,
			    size_t len, struct gv_err *err) GV_MUST_CHECK;

/* Evicts least recently used files until the cache holds at most its cap.
 * Returns the number of bytes the cache holds afterwards, or -1. */
int64_t exec_testdata_cache_trim(struct exec_testdata_cache *c, struct gv_err *err) GV_MUST_CHECK;
