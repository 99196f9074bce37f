/* Small I/O helpers shared by the daemons, the CLI and the programs that
 * run inside a sandbox (gavel-unpack): nothing here allocates or logs. */
#pragma once

#include <stddef.h>

/* Writes all len bytes, retrying short writes and EINTR. Returns 0, or -1
 * with errno set (a write that returns 0 counts as EIO). */
int gv_write_all(int fd, const void *buf, size_t len);
