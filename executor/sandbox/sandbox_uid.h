/* Host uids of sandboxes. runsc runs every sandbox's Sentry as the host
 * uid that "nobody" (65534) maps to in runsc's own user namespace: started
 * from the host's, that is the host's nobody, shared by every sandbox and
 * by any other service running as nobody, each able to signal and ptrace
 * the others. Here each sandbox gets a host uid of its own from a range
 * reserved for Gavel: runsc is started inside a user namespace of ours
 * that maps root to root (runsc still needs the host's root for cgroups
 * and mounts) and 65534 to that uid, so the Sentry runs as it on the host.
 * A uid is held from the sandbox's creation to the end of its tear-down
 * as a flock() on a file of its own under one folder shared by every
 * engine of the node (the executor's workers, other executors, `gavel
 * run`), so no two live sandboxes of the node share one, and the kernel
 * drops the lock when its holder dies, however it dies. Uids are tried
 * round-robin, so a freed one is handed out again as late as possible.
 *
 * The user namespace of a uid is made when the uid is taken (a short-lived
 * child that unshares it while we write its maps, ~3 ms) and held as an fd
 * until it is given back: runsc's spawn joins it with setns() between fork
 * and exec (executor/sandbox/runsc.c). Single-threaded, like the engine that
 * owns it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"

#define EXEC_UIDS_MAX 4096
/* The defaults of executor.sandbox_uid_base/_count: far above the ranges
 * Debian gives users (1000..59999), system services (100..999) and
 * subordinate ids (100000 + 65536 per user), below 2^31. */
#define EXEC_UIDS_DEFAULT_BASE 1500000000u
#define EXEC_UIDS_DEFAULT_COUNT 1024u
/* Where the engines of a node keep the uids' lock files unless configured. */
#define EXEC_UIDS_DIR "/run/gavel/sandbox-uids"

struct exec_uids {
	uint32_t base;
	unsigned count;
	unsigned next;                 /* where the next search starts */
	int dir_fd;                    /* the lock files' folder */
	int lock_fd[EXEC_UIDS_MAX];    /* the held lock, -1 when free here */
	int userns_fd[EXEC_UIDS_MAX];  /* while held: its user namespace; else -1 */
};

/* count uids from base, locks under dir (NULL: EXEC_UIDS_DIR, made if
 * missing; it must be root's and writable by root alone). Refuses a
 * range that wraps, reaches 2^31 or holds 0 or 65534. */
int exec_uids_init(struct exec_uids *u, const char *dir, uint32_t base, unsigned count,
		   struct gv_err *err) GV_MUST_CHECK;
void exec_uids_fini(struct exec_uids *u);

/* Takes a uid no live sandbox of the node holds (its index in *slot) and
 * makes its user namespace. GV_ELIMIT when all are held. */
int exec_uids_take(struct exec_uids *u, unsigned *slot, struct gv_err *err) GV_MUST_CHECK;
void exec_uids_give(struct exec_uids *u, unsigned slot);

/* runsc remounts each sandbox's root (a folder under the work root)
 * read-only from inside our user namespace, where the kernel keeps a
 * mount's nosuid and nodev locked: under a work root mounted with either
 * (a hardened /var, a container, bwrap) that remount fails and no sandbox
 * starts. So a work root on such a mount is bound onto itself without
 * nosuid and nodev (*mounted: true; exec_uids_release_root undoes it).
 * Nothing but the executor writes there (it is root's, 0700), and every
 * path a sandbox sees of it is bound nosuid,nodev again by the bundle. */
int exec_uids_prepare_root(const char *work_root, bool *mounted, struct gv_err *err) GV_MUST_CHECK;
void exec_uids_release_root(const char *work_root, bool mounted);

static inline uint32_t exec_uids_uid(const struct exec_uids *u, unsigned slot)
{
	return u->base + slot;
}

/* The user namespace (an open fd) that maps 65534 to slot's uid. */
static inline int exec_uids_userns(const struct exec_uids *u, unsigned slot)
{
	return u->userns_fd[slot];
}
