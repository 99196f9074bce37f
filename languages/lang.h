/* Language definitions: one YAML file per language under languages/ (the
 * schema is in languages/README.md), loaded into a read-only registry that the
 * frontend (ids, Judge0 ids, limits), the executor (argv, limits, which
 * toolchains work) and the CLI share. Adding a language is adding a file: no
 * C changes. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* The folders of the host's /usr that every sandbox sees (read-only
 * binds), NULL-terminated: every language's programs, headers and
 * libraries must resolve inside them (lang_probe checks). Debian packages
 * install only under these; /usr/local (site configuration, package
 * managers' tokens, hand-installed tools), /usr/src, /usr/sbin, /usr/games
 * and /usr/lib32 are never mounted. */
extern const char *const lang_toolchain_dirs[];

#define LANG_ID_MAX 32           /* bytes of an id, without the NUL */
#define LANG_FILE_MAX (64 * 1024) /* bytes of one definition file */
#define LANG_MAX 256             /* definitions in one registry */
#define LANG_ARGV_MAX 64         /* words in one argv */
#define LANG_LIST_MAX 32         /* entries of extensions/packages/host_etc */
#define LANG_STR_MAX 1024        /* bytes of one string value */

/* One set of limits. Times in milliseconds, memory in MiB, output in KiB. */
struct lang_limits {
	uint32_t time_ms;
	uint32_t wall_ms;
	uint32_t memory_mb;
	uint32_t output_kb;
	uint32_t procs;
	uint32_t compile_time_ms;
	uint32_t compile_wall_ms;
	uint32_t compile_memory_mb;
	uint32_t compile_procs;
};

/* How a submission's saved file name and main class are chosen
 * (languages/lang_entry.h). */
enum lang_entry_scan {
	LANG_ENTRY_SCAN_NONE, /* always `source`; {main_class} is its stem */
	LANG_ENTRY_SCAN_JAVA, /* the package and public top-level class of the source */
};

/* One language. Every string and array is owned by the registry and lives
 * until lang_registry_free(). Arrays of strings are NULL-terminated. */
struct lang_def {
	char *id;              /* "cpp" */
	char *name;            /* "C++" */
	char *version;         /* display template: "GCC {version} (C++17)" */
	char **version_command; /* argv printing the version; the toolchain probe */
	char *version_regex;   /* POSIX ERE over version_command's output; group 1 (or the
				* whole match) is {version}; NULL: the first output line */
	enum lang_entry_scan entry_scan;
	char *source;          /* file name the source is saved as: "main.cpp" */
	char **compile;        /* argv template, NULL for languages without a compile step */
	char **run;            /* argv template */
	int judge0_id;         /* 0: none */
	char **extensions;     /* lower case, with the dot: ".cpp" */
	/* Endings of a submission's other files that a compile command's
	 * "{sources}" names after the main source (a multi-file program);
	 * NULL: extensions. */
	char **sources;
	char **packages;       /* Debian packages providing the toolchain */
	char **host_etc;       /* host /etc paths the toolchain needs in the sandbox */
	char **precompiled_headers; /* headers built ahead for compile's exact flags
				     * ("bits/stdc++.h"; languages/lang_pch.h); empty: none */
	char **compile_options; /* options a submission may add to the compile command
				 * (Judge0's compiler_options), exact words; empty: none */
	char **interpreter_options; /* options a submission may put after the run
				     * command's first word, the interpreter (Jobe's
				     * interpreterargs), as compile_options; empty: none */
	/* The fork server gavel-init runs this language's tests from
	 * ("python": executor/init/forkserver.h): the runtime is started once
	 * per submission and forked per test. NULL: one execve per test. */
	char *fork_server;
	char *compile_class_archive; /* a JVM compiler's class-data archive built
				      * ahead ("javac.jsa"; languages/lang_cds.h); NULL: none */
	bool rlimit_as;        /* limit the address space too (native code) */
	uint32_t memory_extra_mb; /* added to the sandbox's memory cap for runtime overhead */
	char **memory_errors;  /* stderr texts, any of which means the runtime's own memory limit was hit
				* ("java.lang.OutOfMemoryError"): such a failed run is MLE; NULL: none */
	double time_factor;    /* multiplies a problem's time limit; 1 by default */
	struct lang_limits defaults;
	struct lang_limits max;
	char *path;            /* the file it was loaded from */
};

/* The compile_options entry that admits every warning option ("-W" and a
 * name without ',': -Wshadow, -Wno-unused, -Wframe-larger-than=4096; never
 * -Wl,/-Wa,/-Wp, which pass words on to other tools). */
#define LANG_WARNING_OPTIONS "-W*"

/* Is word one of def's compile_options? Each entry admits that word
 * exactly, and "--std=X" too for an entry "-std=X" (GCC's other
 * spelling); LANG_WARNING_OPTIONS admits every warning option. */
bool lang_compile_option_allowed(const struct lang_def *def, const char *word);
/* Is word admitted by def's interpreter_options? As for compile options,
 * and a cluster of one-letter flags ("-BE") when each ("-B", "-E") is
 * listed, since an interpreter reads them so. */
bool lang_interpreter_option_allowed(const struct lang_def *def, const char *word);
/* The endings "{sources}" takes other files by (def->sources, else its
 * extensions), NULL-terminated. */
const char *const *lang_source_endings(const struct lang_def *def);
/* Whether file name (a plain name or a relative path) ends in one of
 * lang_source_endings, with something before it. */
bool lang_is_source(const struct lang_def *def, const char *name);

struct lang_registry {
	struct lang_def *defs; /* sorted by id */
	size_t n;
};

/* Values substituted into argv templates: "{memory_mb}",
 * "{compile_memory_mb}", "{source}" (the saved file name) and "{main_class}";
 * "{{" and "}}" stand for literal braces. A NULL string placeholder that is
 * used is an error. */
struct lang_vars {
	uint32_t memory_mb;
	uint32_t compile_memory_mb;
	const char *source;
	const char *main_class;
	/* "{sources}" (a whole argument): source, then these (NULL-terminated;
	 * NULL: none), or, with sources_in_sandbox, source and "{sources}"
	 * itself, which gavel-unpack expands inside the sandbox once the
	 * submission's archive is unpacked (its files are known only there). */
	const char *const *more_sources;
	bool sources_in_sandbox;
};

#define LANG_SOURCES_ARG "{sources}"


/* Loads every "*.yaml" file of dir (not recursive; other files are ignored)
 * into reg, which must be zeroed or freshly freed. Strict: unknown or
 * repeated keys, missing required keys, bad values, a file whose name is not
 * "<id>.yaml", and ids, extensions or Judge0 ids defined twice are errors
 * naming file:line. On error reg is left empty. */
int lang_registry_load(struct lang_registry *reg, const char *dir, struct gv_err *err) GV_MUST_CHECK;

/* Loads one definition file into def (zeroed first). def must be released
 * with lang_def_clear(). Exposed for tests and tools. */
int lang_def_load_file(struct lang_def *def, const char *path, struct gv_err *err) GV_MUST_CHECK;
/* Parses a definition from memory; name is used in messages and must be
 * "<id>.yaml" or end in "/<id>.yaml". */
int lang_def_parse(struct lang_def *def, const char *name, const char *text, size_t len,
		   struct gv_err *err) GV_MUST_CHECK;
void lang_def_clear(struct lang_def *def);

/* Releases everything; NULL-safe; leaves reg zeroed. */
void lang_registry_free(struct lang_registry *reg);

/* Look-ups; the results are borrowed from reg, NULL when absent. */
const struct lang_def *lang_find(const struct lang_registry *reg, const char *id);
/* ext with or without the leading dot, case-insensitive: ".cpp", "CC". */
const struct lang_def *lang_find_by_extension(const struct lang_registry *reg, const char *ext);
/* By the extension of a file name or path: "sol/Main.java". */
const struct lang_def *lang_find_by_filename(const struct lang_registry *reg, const char *filename);
const struct lang_def *lang_by_judge0_id(const struct lang_registry *reg, int judge0_id);

/* Expands an argv template (def->compile or def->run) into a fresh
 * NULL-terminated argv owned by the caller (free with lang_argv_free). Fails
 * on an unknown placeholder or an unbalanced brace. */
int lang_expand_argv(const char *const *tmpl, const struct lang_vars *vars, char ***out,
		     struct gv_err *err) GV_MUST_CHECK;
void lang_argv_free(char **argv);
size_t lang_argv_len(const char *const *argv);

/* Checks that the toolchain works on this host, as the sandbox will see it:
 * every absolute program of version_command, compile and run (and the program
 * that /usr/bin/env is asked to start) is an executable file whose path and
 * every symlink hop stay under /usr (the sandbox has the host's /usr and a
 * generated /etc, so a link through /etc/alternatives would break there);
 * every host_etc path exists; and version_command exits 0 within timeout_ms,
 * run through fork/execve (no shell) with the sandbox's fixed environment, no
 * stdin and cwd /tmp. Its first output line (stdout and stderr merged) goes
 * to version_out (NUL-terminated, truncated; may be NULL). */
int lang_probe(const struct lang_def *def, int timeout_ms, char *version_out, size_t outsz,
	       struct gv_err *err) GV_MUST_CHECK;

/* Runs argv (argv[0] absolute) as lang_probe runs version_command: clean
 * environment, no shell, stdin /dev/null, cwd /tmp; stdout and stderr
 * merged, the first outsz-1 bytes kept in out; killed at timeout_ms. 0 with
 * *status (wait status) and *timed_out, or -1 with err. */
int lang_run_capture(char *const *argv, int timeout_ms, char *out, size_t outsz, int *status, bool *timed_out,
		     struct gv_err *err) GV_MUST_CHECK;
/* From now on in this process, lang_run_capture ends what it runs as at
 * its deadline as soon as *stop is set (a signal handler's flag; the
 * signal interrupts its wait): a process that builds in the background
 * stops with its compiler, none left running. NULL: never. */
void lang_run_capture_stop_on(volatile sig_atomic_t *stop);

#define LANG_VERSION_MAX 64 /* bytes of a clean version, with the NUL */
#define LANG_VERSION_REGEX_MAX 128 /* bytes of version_regex */

/* Extracts the clean version ("18.19.0") from a version command's output
 * (the whole capture, NUL-terminated) with def->version_regex, or takes the
 * first non-empty line when the definition has none. Only printable ASCII
 * is kept; the result is truncated to outsz. Returns 0, or -1 with err when
 * the regex does not match. */
int lang_version_extract(const struct lang_def *def, const char *output, char *out, size_t outsz,
			 struct gv_err *err) GV_MUST_CHECK;

/* The display version shown to users: def->version with "{version}"
 * replaced by the probed clean version (NULL or "" when unknown: the
 * placeholder and one space before it are dropped). Truncates to outsz. */
void lang_display_version(const struct lang_def *def, const char *probed, char *out, size_t outsz);
