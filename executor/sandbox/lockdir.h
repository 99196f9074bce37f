/* Lock files under a folder that every engine of a node shares (CPU slots,
 * sandbox uids): one flock()ed file per thing held. flock() locks belong to
 * an open file description, so two engines of one process never share a
 * lock, and the kernel drops a lock when its holder dies, however it dies. */
#pragma once

#include "common/err.h"

/* Makes dir if missing and opens it; it must be ours and writable by us
 * alone (what is locked there decides what sandboxes get). what names the
 * use in messages ("CPU slots"). The fd, or -1 with err. */
int exec_lockdir_open(const char *dir, const char *what, struct gv_err *err) GV_MUST_CHECK;

/* Creates dir_fd/name if missing and tries to lock it without waiting:
 * 1 with *fd holding the lock (close it to release), 0 when another holder
 * has it, -1 with err. */
int exec_lockdir_try(int dir_fd, const char *name, const char *what, int *fd, struct gv_err *err) GV_MUST_CHECK;
