/* The program `gavel run` and `gavel judge` are given: one source file,
 * several files (the first is the main one, the others go beside it), or
 * one folder, whose main file is the one named as a language's source
 * (main.c, main.py, Main.java, ...; with --lang, that language's). The
 * other files are written beside the main one in the sandbox, and the
 * languages that compile several files take theirs ("{sources}",
 * languages/README.md). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cli/local_engine.h"
#include "common/err.h"
#include "common/jobspec.h"

#define CLI_PROGRAM_BYTES_MAX (16u * 1024u * 1024u) /* all files together */

struct cli_program {
	char *main_path;   /* the main file's path (its extension names the language) */
	char *main;        /* its bytes (NUL appended) */
	size_t main_len;
	struct exec_file others[GV_JOBSPEC_FILES_MAX];
	size_t n_others;
};

/* Reads the n paths (n >= 1) into p (zeroed first; free with
 * cli_program_free, also after a failure). Names are the files' base
 * names, checked as a submission's (gv_jobspec_file_name_ok; a main file
 * saved under its language's source name may also hold '+': sol.c++), unique; at
 * most GV_JOBSPEC_FILES_MAX files and CLI_PROGRAM_BYTES_MAX bytes; a
 * folder's subfolders are refused (files go side by side), and so are
 * its hidden files. lang_id: --lang (NULL: none). any_main: a folder
 * without a file named as a language's source is fine, its first file
 * (by name) is the main one (an instructor test suite's submission). */
int cli_program_load(struct cli_program *p, const struct cli_local *l, char *const *paths, size_t n,
		     const char *lang_id, bool any_main, struct gv_err *err) GV_MUST_CHECK;
void cli_program_free(struct cli_program *p);
