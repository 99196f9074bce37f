/* Importing an uploaded problem package (zip or tar.gz): attacker bytes.
 *
 * The archive is never parsed in a daemon. exec_problem_import runs a
 * one-shot sandbox (the same engine and layers as a submission) in which a
 * small libarchive-based unpacker checks every entry against the limits
 * below and refuses absolute paths, "..", symlinks, hardlinks, device nodes,
 * FIFOs and anything but regular files and folders, naming the entry. What
 * comes back to the host is parsed with bounds and every path is checked
 * again on the host; the host writes the files itself into dest_dir (a fresh
 * folder it created, O_EXCL|O_NOFOLLOW throughout), never following anything
 * the sandbox made. A package zipped with its folder on top (every entry
 * below one folder holding problem.yaml, nothing at the root) lands with
 * that folder dropped. The sandbox step and the stream it returns are in
 * PROTOCOL.md ("Problem import"), the security argument in SECURITY.md.
 *
 * Then the package in dest_dir is loaded with exec_problem_load (errors name
 * the file, line and field of problem.yaml), and every output validator or
 * interactor in it is compiled once, in a sandbox, so that a broken one is
 * reported at upload and not at the first submission. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct exec_engine;
struct lang_registry;

struct exec_import_limits {
	uint64_t max_compressed_bytes; /* the archive itself; default 64 MiB */
	uint64_t max_unpacked_bytes;   /* sum of file sizes; default 1 GiB */
	uint32_t max_files;            /* regular files (and, apart, folders); default 20000 */
	uint32_t max_path_bytes;       /* per entry path; default 255 */
	uint32_t max_depth;            /* folder nesting; default 16 */
	uint32_t wall_ms;              /* the unpack sandbox's wall clock; default 120000 */
	/* Optional (0 / NULL: the default in brackets). */
	uint32_t stream_window_bytes; /* what one phase of the sandbox hands back, <= 32 MiB [32 MiB] */
	const char *tenant;        /* cgroup parent of the import's sandboxes, [A-Za-z0-9_-]{1,64} ["import"] */
	const char *unpacker_path; /* absolute path of gavel-unpack [beside the engine's gavel-init] */
};

/* Fills the defaults above. */
void exec_import_limits_default(struct exec_import_limits *l);

enum exec_import_status {
	EXEC_IMPORT_OK = 0,
	EXEC_IMPORT_REJECTED, /* the package's fault: message says which entry or field */
	EXEC_IMPORT_INTERNAL, /* ours: sandbox could not run, disk, ...; err filled */
};

struct exec_import_report {
	enum exec_import_status status;
	char *message;        /* REJECTED: "entry '../x': path leaves the package" or
	                       * "problem.yaml:3: limits.time_limit: not a number";
	                       * also a validator's bounded compiler output on CE */
	uint64_t unpacked_bytes;
	uint32_t files;
	char **warnings;      /* NULL-terminated, from exec_problem_load; may be NULL */
};

void exec_import_report_free(struct exec_import_report *r);

/* Unpacks archive (len bytes, zip or tar.gz, detected from content) into
 * dest_dir, which must not exist yet, validates it as a package and compiles
 * its validators. Returns 0 when the import ran to a verdict (report->status
 * says which), -1 with err filled when it could not run (the report is then
 * EXEC_IMPORT_INTERNAL). On anything but EXEC_IMPORT_OK, dest_dir is removed
 * (when this call created it). gavel-unpack is found beside the engine's
 * gavel-init unless limits->unpacker_path says otherwise; limits NULL: the
 * defaults. Runs one sandbox for the archive and one per validator. */
int exec_problem_import(struct exec_engine *e, const struct lang_registry *langs, const void *archive,
			size_t len, const char *dest_dir, const struct exec_import_limits *limits,
			struct exec_import_report *report, struct gv_err *err) GV_MUST_CHECK;
