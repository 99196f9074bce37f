/* Small I/O helpers shared by the daemons, the CLI and the programs that
 * run inside a sandbox (gavel-unpack): nothing here allocates or logs. */
#pragma once

#include <stddef.h>

#include "common/err.h"

/* Writes all len bytes, retrying short writes and EINTR. Returns 0, or -1
 * with errno set (a write that returns 0 counts as EIO). */
int gv_write_all(int fd, const void *buf, size_t len);

/* Makes the absolute path and any missing parents, each new one 0700
 * (existing ones are left as they are). */
int gv_mkdir_parents(const char *path, struct gv_err *err) GV_MUST_CHECK;
