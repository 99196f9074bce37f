/* Finding and reading gavel-unpack (executor/unpack/), the program of ours
 * that reads attacker archives inside a sandbox: problem packages
 * (executor/problems/problem_import.c) and a submission's additional files
 * (executor/judge/judge_inline.c). Both place its bytes into the sandbox as
 * an executable job file, as they come from here. */
#pragma once

#include <stddef.h>

#include "common/err.h"
#include "executor/sandbox/engine.h"

/* Largest gavel-unpack we read. */
#define EXEC_UNPACKER_MAX (32u << 20)

/* Reads gavel-unpack from path, or when path is NULL from beside the
 * engine's gavel-init (e->cfg.init_path). The file must be an absolute
 * path to a root-owned regular file that only root may write, like
 * gavel-init: a program we run inside sandboxes is never one a user of the
 * host could have replaced. Returns a malloc'd buffer of *len bytes
 * (caller frees), or NULL with err (GV_ECONFIG for a path or file that
 * breaks those rules). */
char *exec_unpacker_read(const struct exec_engine *e, const char *path, size_t *len, struct gv_err *err);

/* The same for another file of ours beside gavel-init (name: gavel-suite,
 * gavel_check.h), of at most max bytes, under the same rules. */
char *exec_helper_read(const struct exec_engine *e, const char *name, size_t max, size_t *len, struct gv_err *err);
