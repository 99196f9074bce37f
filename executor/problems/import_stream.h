/* The package stream: how the unpack sandbox (executor/unpack/) hands the
 * files of an uploaded problem package back to the host, and the rule every
 * entry path must follow. Both sides compile this file: gavel-unpack to
 * check and write, the host (executor/problems/problem_import.c) to check again
 * and parse. Pure: no I/O, no allocation.
 *
 * The stream is a sequence of records (PROTOCOL.md, "Problem import"):
 *
 *   d <path>\n                  a folder
 *   f <size> <path>\n<bytes>    a regular file of exactly size bytes
 *   e <files> <bytes>\n         the end: counts of what came before
 *
 * size, files and bytes are decimal without sign or leading zeros (a single
 * "0" is fine). A path follows exec_import_path_check. Nothing may follow
 * the end record. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Hard caps whatever the caller's limits say (keep the header line short). */
#define EXEC_IMPORT_PATH_MAX 1024
#define EXEC_IMPORT_DEPTH_MAX 64
/* Longest record header: kind, two 20-digit numbers, spaces, path, '\n'. */
#define EXEC_IMPORT_HEADER_MAX (2 + 21 + 21 + EXEC_IMPORT_PATH_MAX + 1)

/* Characters allowed in a path component besides letters and digits. */
#define EXEC_IMPORT_NAME_PUNCT "._+,=@~ -"

/* Checks one package-relative path of len bytes: 1..max_path bytes,
 * components separated by single '/', none empty, "." or "..", no leading
 * or trailing '/', each made of [A-Za-z0-9] and EXEC_IMPORT_NAME_PUNCT and
 * not starting or ending with a space, at most max_depth components. 0 when
 * it is fine; -1 with a short reason in why ("path leaves the package",
 * "absolute path", ...). */
int exec_import_path_check(const char *path, size_t len, uint32_t max_path, uint32_t max_depth, char *why,
			   size_t whysz) GV_MUST_CHECK;

/* Copies s[0..len) into out (size outsz) for a message: bytes outside
 * printable ASCII become '?', cut at outsz - 1 with "..." at the end. */
void exec_import_shown(char *out, size_t outsz, const char *s, size_t len);

struct exec_import_stream_limits {
	uint64_t max_bytes;  /* sum of file sizes */
	uint32_t max_files;  /* regular files */
	uint32_t max_dirs;   /* folder records */
	uint32_t max_path;   /* <= EXEC_IMPORT_PATH_MAX */
	uint32_t max_depth;  /* <= EXEC_IMPORT_DEPTH_MAX */
};

enum exec_import_event_kind {
	EXEC_IMPORT_EV_DIR,      /* path */
	EXEC_IMPORT_EV_FILE,     /* path, size: a file starts */
	EXEC_IMPORT_EV_DATA,     /* data, len: the next bytes of the current file */
	EXEC_IMPORT_EV_FILE_END, /* the current file is complete */
	EXEC_IMPORT_EV_END,      /* the end record, counts checked */
};

struct exec_import_event {
	enum exec_import_event_kind kind;
	const char *path; /* NUL-terminated; borrowed from the parser until the next call */
	uint64_t size;
	const char *data; /* borrowed from the caller's buffer */
	size_t len;
};

/* An incremental parser: feed it the stream in pieces of any size. */
struct exec_import_stream {
	struct exec_import_stream_limits lim;
	char line[EXEC_IMPORT_HEADER_MAX + 1];
	size_t line_len;
	char path[EXEC_IMPORT_PATH_MAX + 1];
	bool in_file;         /* between FILE and FILE_END */
	bool file_end_due;    /* all bytes of the current file were given out */
	bool ended;
	uint64_t remaining;   /* bytes of the current file still to come */
	uint64_t files, dirs, bytes;
};

void exec_import_stream_init(struct exec_import_stream *s, const struct exec_import_stream_limits *lim);

/* Takes the next event from buf[0..len), which continues the stream where
 * the previous call stopped. Returns 1 with *ev filled, 0 when buf is used up
 * and more input is needed, -1 with err filled when the stream breaks its
 * grammar or a limit. *used says how many bytes of buf were consumed; the
 * caller passes the rest again. After the END event any further byte is an
 * error. */
int exec_import_stream_next(struct exec_import_stream *s, const char *buf, size_t len, size_t *used,
			    struct exec_import_event *ev, struct gv_err *err) GV_MUST_CHECK;

/* True once the END record was parsed. */
bool exec_import_stream_done(const struct exec_import_stream *s);
