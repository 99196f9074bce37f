/* What `gavel run` and `gavel judge` share: the checks that no sandbox layer
 * is missing (root, runsc, gavel-init), the language registry, one engine
 * per invocation under a lock, and reading bounded input files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "executor/sandbox/session.h"
#include "languages/lang.h"

struct cli_local {
	struct exec_engine engine;
	struct lang_registry langs;
	int lock_fd;
	bool engine_up;
	char init_path[4096];
	char langs_dir[4096];
};

/* Loads languages and starts the engine: root is required, the
 * invocation-wide lock serialises concurrent CLIs (the engine sweeps its
 * runsc root at start, which would kill another invocation's sandboxes).
 * Prints nothing; errors are for the caller to report. */
int cli_local_open(struct cli_local *l, struct gv_err *err) GV_MUST_CHECK;
void cli_local_close(struct cli_local *l);

/* Only the language registry (no engine): for argument checks before the
 * sandbox starts. */
int cli_local_load_languages(struct cli_local *l, struct gv_err *err) GV_MUST_CHECK;

/* Picks the language: by id when lang_id is set, else by the extension of
 * path. */
const struct lang_def *cli_pick_language(const struct cli_local *l, const char *lang_id, const char *path,
					 struct gv_err *err);

/* Reads at most max bytes of path into a fresh buffer (NUL appended). */
int cli_read_file(const char *path, size_t max, char **out, size_t *len, struct gv_err *err) GV_MUST_CHECK;

/* Parses seconds ("1", "0.5", "2.25") into milliseconds, 1 ms .. 1 day. */
int cli_parse_seconds(const char *s, uint32_t *ms, struct gv_err *err) GV_MUST_CHECK;
/* Parses a positive integer no larger than max. */
int cli_parse_uint(const char *s, uint32_t max, uint32_t *out, struct gv_err *err) GV_MUST_CHECK;
