/* SQL schema migrations: the files NNNN_name.sql of one folder (normally
 * deploy/sql), applied in numeric order, each in a transaction of its own,
 * and recorded in schema_migrations(version, name, applied_at) in the first
 * schema of the search_path. A whole run holds a PostgreSQL advisory lock,
 * so two processes migrating at once apply each file exactly once.
 *
 * File names: four to nine digits (the version, > 0), '_', a name of
 * lowercase letters, digits and '_', then ".sql". Names starting with '.'
 * and files that neither start with a digit nor end in ".sql" (a README)
 * are ignored; any other name is an error, so a typo never silently skips
 * a migration. A migration must not contain BEGIN/COMMIT of its own, nor
 * statements that cannot run in a transaction (CREATE INDEX CONCURRENTLY). */
#pragma once

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

#define GV_MIGRATE_NAME_MAX 101 /* name part, with NUL */
#define GV_MIGRATE_FILE_MAX 128 /* whole file name, with NUL */
#define GV_MIGRATE_MAX_FILES 10000
#define GV_MIGRATE_MAX_BYTES (16 * 1024 * 1024)
/* The advisory lock key of a migration run ("gavelmig" in ASCII). */
#define GV_MIGRATE_LOCK_KEY "7449365436630395239"

struct gv_migration {
	int version;
	char name[GV_MIGRATE_NAME_MAX];
	char file[GV_MIGRATE_FILE_MAX];
};

struct gv_migrate_report {
	int applied;                         /* files applied by this run */
	int already;                         /* files found already recorded */
	int version;                         /* highest version recorded after the run */
	char last_applied[GV_MIGRATE_FILE_MAX]; /* file name, "" when none */
};

/* True when gv_migrate_scan must consider the file (see above). Pure. */
bool gv_migrate_is_candidate(const char *file);

/* Parses a migration file name into *out. Pure. */
int gv_migrate_parse_name(const char *file, struct gv_migration *out, struct gv_err *err) GV_MUST_CHECK;

/* Sorts by version; two files with one version are an error naming both.
 * Pure. */
int gv_migrate_sort(struct gv_migration *m, size_t n, struct gv_err *err) GV_MUST_CHECK;

/* Checks what schema_migrations says against the files: a recorded version
 * whose file exists under another name is an error. Returns 1 when version
 * is among the files (already applied), 0 when it is not (an old or
 * foreign migration: ignored), -1 on a mismatch. Pure. */
int gv_migrate_check_recorded(const struct gv_migration *m, size_t n, int version, const char *name,
			      struct gv_err *err);

/* The 1-based line of a 1-based character position (PostgreSQL counts
 * characters, not bytes) in UTF-8 text of len bytes; 0 when pos is 0 or
 * past the end. Pure. */
int gv_migrate_line_of(const char *text, size_t len, int pos);

/* Lists dir's migrations, sorted. *out is malloc'd (free() it), *n its
 * length; on error nothing is returned. */
int gv_migrate_scan(const char *dir, struct gv_migration **out, size_t *n, struct gv_err *err) GV_MUST_CHECK;

/* Applies dir's pending migrations on conn (idle, outside a transaction).
 * rep (may be NULL) is filled even on failure: what was applied before.
 * On a failed migration, that migration is rolled back, later ones are not
 * tried, and err reads "FILE[:LINE]: PostgreSQL's message". Blocks while
 * another process migrates. */
int gv_migrate(PGconn *conn, const char *dir, struct gv_migrate_report *rep, struct gv_err *err) GV_MUST_CHECK;
