/* Precompiled headers, built ahead by the trusted side for a language's
 * exact compile flags, used by the compiler inside the sandbox.
 *
 * Most C++ submissions on competitive-programming sites start with
 * `#include <bits/stdc++.h>`; parsing it is most of their compile, several
 * seconds inside gVisor. A language lists such headers
 * (`precompiled_headers:`) and has `-I/pch/<id>` in its compile argv. The
 * node builds `<dir>/<id>/<header>.gch` with the host's compiler from the
 * system header (trusted input: no submission byte is involved) and the
 * flags of the language's compile argv, and the engine mounts <dir>
 * read-only at /pch in every sandbox. GCC looks for `<header>.gch` in each
 * include directory before the header itself, checks that the file was
 * built by the same compiler with compatible flags and the same macros
 * defined before the include, and otherwise ignores it silently and goes on
 * to the system header: a mismatch (other flags, a newer compiler, an
 * include after other code) falls back to an ordinary compile, and the
 * program built is the same either way. The submission cannot change the
 * files (read-only mount, built outside any sandbox). */
#pragma once

#include <stddef.h>

#include "common/err.h"
#include "languages/lang.h"

/* Where sandboxes see the PCH folder, and where nodes keep it unless
 * configured otherwise (executor.pch_dir; GAVEL_PCH_DIR for gavel run and
 * gavel judge). */
#define LANG_PCH_MOUNT_NAME "pch"
#define LANG_PCH_MOUNT "/" LANG_PCH_MOUNT_NAME
#define LANG_PCH_DEFAULT_DIR "/var/cache/gavel/pch"

/* The compile flags a PCH must be built with for def: def->compile
 * without its program, "-o FILE", the source file, placeholders and the
 * -I/pch/<id> option, joined with single spaces into out. 0, or -1 when
 * def has no compile step or the flags do not fit. */
int lang_pch_flags(const struct lang_def *def, char *out, size_t outsz);

/* True when def's compile argv looks in LANG_PCH_MOUNT "/<id>" and def
 * lists headers to precompile. */
bool lang_pch_wanted(const struct lang_def *def);

/* What the PCH builder and the class-archive builder (lang_cds.h) share. */
#define PCH_STAMP_MAX 2048 /* bytes of a stamp file */
/* def->compile holds opt as one word. */
bool lang_pch_compile_has(const struct lang_def *def, const char *opt);
/* The first line of def's version_command output; -1 when it fails. */
int lang_pch_compiler_version(const struct lang_def *def, char *out, size_t outsz);
/* lang_fd/name holds exactly stamp. */
bool lang_pch_stamp_is(int lang_fd, const char *name, const char *stamp);
/* Removes from lang_fd/sub (sub NULL: lang_fd itself) every entry named
 * prefix, digits (a builder's pid), suffix: the temporary files and
 * folders of a builder that was stopped. Call it holding the build lock. */
void lang_pch_sweep(int lang_fd, const char *sub, const char *prefix, const char *suffix);
/* dir_fd/<id> made 0755 if missing and opened (no link followed); -1 with
 * the reason in why. dir names dir_fd in messages. */
int lang_pch_lang_dir(int dir_fd, const char *dir, const char *id, char *why, size_t whysz);

/* Makes dir (0755, with its parents) when a language of reg wants it,
 * before any sandbox starts: the engine mounts the folder only when it
 * exists at its start, and then sees what a builder renames into it
 * later. 0, or -1 with err. */
int lang_pch_make_dir(const struct lang_registry *reg, const char *dir, struct gv_err *err) GV_MUST_CHECK;

/* Builds, under dir (created 0755 with its parents if missing), every precompiled header of
 * every language of reg that wants them, and every JVM compiler's class
 * archive (languages/lang_cds.h), unless dir/<id>/stamp already
 * names the same compiler version and flags. Each .gch is written to a
 * temporary name and renamed into place; one builder at a time per dir
 * (flock on dir/.lock). *built counts the languages built now. A language
 * whose build fails is skipped with its reason appended to report (and
 * compiles without the header, as before); -1 only when dir itself is
 * unusable. */
int lang_pch_prepare(const struct lang_registry *reg, const char *dir, unsigned *built, char *report,
		     size_t report_size, struct gv_err *err) GV_MUST_CHECK;
