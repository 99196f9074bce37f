/* The executor's side of stored problems (deploy/sql/0011_problems.sql):
 *
 * - the import queue: a worker claims a pending problem version (a lease in
 *   PostgreSQL, so an import survives restarts of every daemon), runs
 *   exec_problem_import on the uploaded archive (unpacked and validated in a
 *   sandbox: the daemon never parses the archive), then stores every file
 *   of the package once per tenant by sha256 and the version's metadata, and
 *   marks it ready, or rejected with the package's fault;
 * - materialising a version's package folder for judging from the local
 *   test-data cache (executor/problems/testdata_cache.h), fetching only
 *   the files the cache misses from PostgreSQL.
 *
 * Every query on tenant data runs in a transaction scoped to that tenant
 * (row-level security) and names the tenant in its WHERE clause. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/log.h"
#include "common/pg.h"
#include "common/redis.h"
#include "executor/problems/problem_import.h"
#include "executor/problems/testdata_cache.h"

struct exec_engine;
struct lang_registry;

#define EXEC_PROBLEM_IMPORT_ATTEMPTS 3
#define EXEC_PROBLEM_IMPORT_LEASE_MS (15u * 60u * 1000u)
#define EXEC_PROBLEM_MESSAGE_MAX 16000

/* What a worker lends to the problem code; everything borrowed. */
struct exec_problem_env {
	struct exec_engine *engine;
	const struct lang_registry *langs;
	struct gv_pg *pg;
	struct gv_redis *r;                  /* "done" notifications; may be NULL */
	struct exec_testdata_cache *cache;
	const char *node;
	const char *scratch_dir;             /* worker-private folder, created on demand */
	const struct exec_import_limits *limits;
	const struct gv_log_ctx *log;
};

/* The import limits (exec_import_limits_default). */
void exec_problem_import_limits_default(struct exec_import_limits *l);

/* One step of the import queue. 1: a version was handled (ready, rejected,
 * or failed for good), 0: nothing pending, -1: our machinery failed (err;
 * the version is retried after a short lease). */
int exec_problem_import_step(const struct exec_problem_env *env, struct gv_err *err) GV_MUST_CHECK;

struct exec_materialize_stats {
	size_t files, cached, fetched;
	uint64_t fetched_bytes;
};

/* Builds the package folder of (tenant, problem_id, version) at dest (which
 * must not exist) from the cache, fetching misses from PostgreSQL (each
 * checked against its hash). samples_only leaves data/secret out. The
 * version must be 'ready': GV_ENOTFOUND otherwise. On failure dest is
 * removed. */
int exec_problem_materialize(const struct exec_problem_env *env, const char *tenant, const char *problem_id,
			     uint32_t version, bool samples_only, const char *dest,
			     struct exec_materialize_stats *st, struct gv_err *err) GV_MUST_CHECK;

/* Removes the tree at path (never following a symlink); ENOENT is success. */
int exec_problem_remove_tree(const char *path, struct gv_err *err) GV_MUST_CHECK;

/* True when rel is a package-relative path we store: 1..4096 bytes,
 * components of [A-Za-z0-9._+-] that are not "." or "..", at most 32 of
 * them, no leading, trailing or double '/'. Pure. */
bool exec_problem_path_ok(const char *rel);
