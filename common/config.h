/* The table-driven config loader. Each binary declares one table of options
 * (name, type, target field in its own config struct, default, flags, doc);
 * the loader fills the struct from the defaults, then a file, then the
 * environment, and refuses anything it does not understand with "FILE:LINE:
 * reason". No globals: the struct is the caller's and is passed explicitly.
 *
 * File format (deploy/gavel.conf.example documents it for users):
 *   # comment                     blank lines are ignored
 *   [database]                    a section: prefixes the keys below it
 *   url = postgres://x            ≡ database.url = postgres://x
 *   name = "a \"quoted\" value"   escapes: \" \\ \n \t \r
 *   port = 2358   # comment      '#' starts a comment at line start or
 *                                 after whitespace outside quotes
 * Environment: GAVEL_DATABASE_URL overrides database.url (upper case, dots
 * become underscores); the environment wins over the file. GAVEL_ variables
 * that name no option of this table are ignored (the binaries share one
 * environment, and GAVEL_ROOT etc. are not options).
 *
 * Value syntax per type:
 *   STRING    any text; min/max bound its length in bytes when not both 0
 *   INT       decimal, optional sign; min/max inclusive (both 0: int range)
 *   BOOL      true/false, yes/no, on/off, 1/0 (any case)
 *   SIZE      bytes: 512, 64k, 1m, 2g, 1t (binary multiples; kb/kib also)
 *   DURATION  milliseconds: 500ms, 30s, 5m, 1h; a bare number only for 0
 *   ENUM      one of the option's choices, exactly
 *   LIST      comma-separated items, each trimmed, none empty; "" is empty */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"

enum gv_config_type {
	GV_CONFIG_STRING,   /* char *, owned (malloc'd), NULL when unset */
	GV_CONFIG_INT,      /* int */
	GV_CONFIG_BOOL,     /* bool */
	GV_CONFIG_SIZE,     /* uint64_t, bytes */
	GV_CONFIG_DURATION, /* uint64_t, milliseconds */
	GV_CONFIG_ENUM,     /* int, index into choices */
	GV_CONFIG_LIST,     /* struct gv_config_list, owned */
};

/* Option flags. */
#define GV_CONFIG_REQUIRED   (1u << 0) /* must be set by the file or env */
#define GV_CONFIG_RELOADABLE (1u << 1) /* may change in gv_config_reload */
#define GV_CONFIG_SECRET     (1u << 2) /* never printed: "***" in dumps */

/* Bounds: a longer line (or environment value) is refused, not cut. */
#define GV_CONFIG_LINE_MAX 4096
#define GV_CONFIG_FILE_MAX (1024 * 1024)
#define GV_CONFIG_NAME_MAX 128

struct gv_config_list {
	char **items; /* owned, each owned */
	size_t count;
};

struct gv_config_option {
	const char *name;            /* "section.key": [a-z0-9_], dots between */
	enum gv_config_type type;
	size_t offset;               /* offsetof(struct yours, field) */
	size_t size;                 /* sizeof the field; 0 = unchecked */
	const char *def;             /* default as text; NULL: zero / NULL */
	int64_t min, max;            /* see the value syntax above */
	const char *const *choices;  /* ENUM: NULL-terminated */
	unsigned flags;              /* GV_CONFIG_REQUIRED | ... */
	const char *doc;             /* one line, for dumps and docs */
};

/* Sets .offset and .size of a table entry: GV_CONFIG_FIELD(struct fe_config, port). */
#define GV_CONFIG_FIELD(type, field) .offset = offsetof(type, field), .size = sizeof(((type *)0)->field)

/* Checks the table and sets every field it names to its default. target
 * must be zeroed or already passed to gv_config_free: its fields are
 * overwritten, not freed. A bad table (bad name, duplicate, field size
 * mismatch, unparseable default) fails with GV_EINTERNAL, target
 * untouched; any failure leaves gv_config_free(target) safe. */
int gv_config_defaults(const struct gv_config_option *table, size_t n, void *target,
		       struct gv_err *err) GV_MUST_CHECK;

/* Defaults, then the file at path (NULL: none), then the environment
 * (envp: NULL-terminated "NAME=value" strings, e.g. environ; NULL: none).
 * target must be zeroed or freed, as for gv_config_defaults. Errors (GV_ECONFIG,
 * GV_ELIMIT, or errno for I/O) read "FILE:LINE: reason",
 * "environment GAVEL_X: reason" or "FILE: missing required option 'x'".
 * On failure every owned field is already freed (target is safe to pass to
 * gv_config_free again, but holds no usable config). */
int gv_config_load(const struct gv_config_option *table, size_t n, void *target,
		   const char *path, char *const *envp, struct gv_err *err) GV_MUST_CHECK;

/* gv_config_load over text already in memory; name stands for the file in
 * messages. The pure core of the loader, and the fuzz entry point. */
int gv_config_load_text(const struct gv_config_option *table, size_t n, void *target,
			const char *name, const char *text, size_t len, char *const *envp,
			struct gv_err *err) GV_MUST_CHECK;

/* Frees owned fields (strings, lists) and resets them to NULL / empty.
 * Idempotent; other fields are left alone. */
void gv_config_free(const struct gv_config_option *table, size_t n, void *target);

/* Applies a freshly loaded config (next) to the running one (cur): fails
 * with GV_ECONFIG "option 'x' cannot change without a restart" when an
 * option not flagged RELOADABLE differs, changing nothing; otherwise swaps
 * every reloadable field between cur and next. The caller then frees next
 * with gv_config_free (it holds the old values). Not thread-safe: the
 * caller owns any locking around cur. */
int gv_config_reload(const struct gv_config_option *table, size_t n, void *cur, void *next,
		     struct gv_err *err) GV_MUST_CHECK;

/* Writes the effective config to out in the file format (reloadable by
 * the loader), options without a section first, then one [section] per
 * run of options; SECRET options print as "***". Returns -1 with errno
 * in err when writing fails. */
int gv_config_dump(const struct gv_config_option *table, size_t n, const void *target,
		   FILE *out, struct gv_err *err) GV_MUST_CHECK;
