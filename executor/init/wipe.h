/* File-tree hygiene between runs: empty the writable places (/tmp) and make
 * the work dir read-only by mode. Both walk with dirfds and never follow a
 * symlink the program could have planted. They are run only after every
 * process of the program is dead, so the tree cannot change under them. */
#pragma once

#include <sys/types.h>

#include "common/err.h"

#define INIT_WIPE_DEPTH_MAX 32   /* deeper directories are moved up, not recursed into */
#define INIT_LOCK_DEPTH_MAX 32   /* a deeper work dir is refused */

/* Removes every entry inside the directory open at dirfd (which stays).
 * Symlinks are unlinked, never followed; directories without permissions
 * are chmod-ed 0700 first (init owns them: same uid). Trees deeper than
 * INIT_WIPE_DEPTH_MAX are flattened by renaming their deep part into dirfd.
 * On success *removed (if not NULL) gets the number of entries removed. */
int init_wipe_dir(int dirfd, unsigned long *removed, struct gv_err *err) GV_MUST_CHECK;

/* Makes the tree at dirfd read-only: directories 0555, other files keep
 * their execute bits and lose every write bit (0444 / 0555), setuid/setgid/
 * sticky bits cleared. Symlinks are skipped. An entry whose mode we may not
 * change is accepted only if uid/gid (the program's) cannot write it. The
 * directory at dirfd itself is locked too. */
int init_lock_tree(int dirfd, uid_t uid, gid_t gid, struct gv_err *err) GV_MUST_CHECK;
