/* Small I/O helpers shared by the daemons, the CLI and the programs that
 * run inside a sandbox (gavel-unpack): nothing here logs, and only the tree
 * removal allocates (a directory stream a level). */
#pragma once

#include <stddef.h>

#include "common/err.h"

/* Writes all len bytes, retrying short writes and EINTR. Returns 0, or -1
 * with errno set (a write that returns 0 counts as EIO). */
int gv_write_all(int fd, const void *buf, size_t len);

/* Reads until len bytes, end of file or an error, retrying EINTR. Returns
 * how many bytes it read: fewer than len at end of file (errno 0) or on an
 * error (errno set). */
size_t gv_read_upto(int fd, void *buf, size_t len);

/* Replaces dir_fd/name with data, mode `mode`, atomically: written to a
 * temporary name beside it (never following a link), then renamed over it,
 * so a reader sees the old file or the whole new one. */
int gv_write_file_at(int dir_fd, const char *name, const void *data, size_t len, unsigned mode,
		     struct gv_err *err) GV_MUST_CHECK;

/* Makes the absolute path and any missing parents, each new one 0700
 * (existing ones are left as they are). */
int gv_mkdir_parents(const char *path, struct gv_err *err) GV_MUST_CHECK;

/* Deepest directory level gv_remove_tree_at descends to (each level holds
 * one open descriptor while its entries are removed). */
#define GV_REMOVE_TREE_DEPTH_MAX 256

/* Removes name under parent_fd (AT_FDCWD with a path is allowed) and
 * everything below it, never following a symbolic link. A missing name is
 * success. On a failure it still removes all it can and reports the first
 * error; a tree deeper than GV_REMOVE_TREE_DEPTH_MAX is GV_ELIMIT. */
int gv_remove_tree_at(int parent_fd, const char *name, struct gv_err *err) GV_MUST_CHECK;
