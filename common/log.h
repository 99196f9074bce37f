/* One logger with context: every line carries level, component and, where
 * known, tenant= job= node= sandbox=. Tenant-controlled text is escaped and
 * truncated before it is written (gv_log_escape). */
#pragma once

#include <stddef.h>

#include "common/err.h"

enum gv_log_level { GV_LOG_DEBUG, GV_LOG_INFO, GV_LOG_WARN, GV_LOG_ERROR };
/* The levels' names, in enum order, NULL-terminated: every daemon's
 * log.level option takes these and no other (GV_CONFIG_ENUM choices). */
extern const char *const gv_log_level_names[];

/* Borrowed strings; any may be NULL. */
struct gv_log_ctx {
	const char *tenant;
	const char *job;
	const char *node;
	const char *sandbox;
};

/* Process-wide settings, set once in main before threads start. */
void gv_log_init(const char *component, enum gv_log_level min_level);
/* Parses "debug|info|warn|error"; -1 when unknown. */
int gv_log_level_parse(const char *name);
/* Changes the lowest level written; safe while other threads log (a
 * config reload). */
void gv_log_set_level(enum gv_log_level min_level);

void gv_log(enum gv_log_level level, const struct gv_log_ctx *ctx, const char *fmt, ...)
	GV_PRINTF(3, 4);

#define gv_debug(ctx, ...) gv_log(GV_LOG_DEBUG, ctx, __VA_ARGS__)
#define gv_info(ctx, ...) gv_log(GV_LOG_INFO, ctx, __VA_ARGS__)
#define gv_warn(ctx, ...) gv_log(GV_LOG_WARN, ctx, __VA_ARGS__)
#define gv_error(ctx, ...) gv_log(GV_LOG_ERROR, ctx, __VA_ARGS__)

/* Copies untrusted text into out (size outsz) with control bytes, quotes,
 * backslashes and non-ASCII written as \xNN. Text that does not fit whole is
 * cut at a character boundary and ends in "..." (when outsz >= 4). Always
 * NUL-terminates when outsz > 0; outsz 0 writes nothing. Returns out. */
char *gv_log_escape(char *out, size_t outsz, const char *in, size_t inlen);
