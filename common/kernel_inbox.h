/* The byte budgets of notebook kernels' command lists in Redis
 * (gavel:kin:<kid>, executor/kernels/README.md): what a tenant's clients
 * can make Redis hold for its kernels is counted in bytes, per kernel, per
 * tenant and for all tenants, by three Lua scripts run atomically in Redis:
 *
 * - push (frontend): RPUSH one element, or refuse it;
 * - take (executor, after its BLPOP of an element): uncount it;
 * - drop (executor at a kernel's end, frontend at a queued kernel's
 *   cancel): delete the list and the model, uncount what the list held.
 *
 * Counts: gavel:kinb:<tenant> (HASH kid -> bytes in that kernel's list)
 * and gavel:kinb (HASH tenant -> bytes in all its lists). A tenant's total
 * is summed from its hash at each push, and a field whose list is gone
 * (expired, or its executor died between BLPOP and take) is dropped then:
 * a count can be off only while its list exists.
 *
 * Pure: argv builders over caller-owned buffers, no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A kernel's list holds at most this many bytes of client messages (two
 * of the largest message, 10 MiB, fit). */
#define GV_KIN_KERNEL_BYTES (24u * 1024 * 1024)
/* All of one tenant's kernels' lists. */
#define GV_KIN_TENANT_BYTES (64u * 1024 * 1024)
/* All tenants together: under the local stack's Redis maxmemory (1 GiB),
 * with room for the queues. */
#define GV_KIN_GLOBAL_BYTES (256u * 1024 * 1024)
/* Elements of one list, control elements included (they are never
 * refused for bytes, but they are for count). */
#define GV_KIN_ELEMENTS_MAX 4096

/* What push answered (its integer reply). */
enum gv_kin_push_result {
	GV_KIN_PUSHED = 1,        /* the list's new length: >= 1 */
	GV_KIN_DROPPED = 0,       /* a close for a kernel that is not running: nothing to do */
	GV_KIN_FULL = -1,         /* the kernel's bytes or elements */
	GV_KIN_NOT_RUNNING = -2,  /* no model: queued, or already ended; nothing pushed */
	GV_KIN_TENANT_FULL = -3,  /* the tenant's bytes */
	GV_KIN_GLOBAL_FULL = -4,  /* every tenant's bytes */
};

/* Who may push what. */
enum gv_kin_kind {
	/* open, msg, ping, close of a WebSocket: only while the kernel runs
	 * (its model exists); msg counts against the byte budgets. */
	GV_KIN_CONNECTION,
	/* stop, interrupt, restart (REST calls): pushed whatever the state,
	 * never refused for bytes, only for the element count. */
	GV_KIN_COMMAND,
};

#define GV_KIN_KEY_MAX 96
#define GV_KIN_PUSH_ARGC 17
#define GV_KIN_TAKE_ARGC 8
#define GV_KIN_DROP_ARGC 9

/* Argument buffers of one script call: keys and numbers. */
struct gv_kin_args {
	char keys[4][GV_KIN_KEY_MAX];
	char nums[6][24];
	const char *argv[GV_KIN_PUSH_ARGC];
	size_t lens[GV_KIN_PUSH_ARGC];
	int argc;
};

/* EVAL of push for element el[0..n) of kind for kernel kid of tenant.
 * a->argv stays valid while a and el do. -1 when an id does not fit. */
int gv_kin_push_args(struct gv_kin_args *a, const char *tenant, const char *kid, enum gv_kin_kind kind,
		     const void *el, size_t n);
/* EVAL of take: n bytes of kid's list were popped. */
int gv_kin_take_args(struct gv_kin_args *a, const char *tenant, const char *kid, size_t n);
/* EVAL of drop: kid ended (or was cancelled while queued). */
int gv_kin_drop_args(struct gv_kin_args *a, const char *tenant, const char *kid);
