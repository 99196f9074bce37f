/* File I/O tests (job record `input_file` / `output_file`, PROTOCOL.md):
 * the program reads its input from a named file of its work dir and
 * writes its output to another, as olympiad tasks ask (input.txt /
 * output.txt). init places the input, an empty output file, and after the
 * run takes what the output file holds as the program's output. Each
 * function runs only while no process but init exists, and acts through
 * init's fd of /box with O_NOFOLLOW, so nothing the program did can
 * redirect it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "executor/init/run.h"

/* The named files of one test, and whether init made them (only files
 * init made are ever removed: a name that clashes with a job file is an
 * error, never a deletion). */
struct init_named_io {
	int box_fd;         /* init's fd of /box; -1: not opened yet */
	int input_fd;       /* the input file being written; -1: none */
	bool input_made, output_made;
};

/* Creates /box/<name> for the coming test's input (root's, 0600 while it is
 * written) after removing the one of the previous test; returns its fd via
 * io->input_fd. */
int init_named_input_begin(struct init_named_io *io, const char *name, struct gv_err *err) GV_MUST_CHECK;
/* Appends a slice of the input. */
int init_named_input_write(struct init_named_io *io, const char *data, size_t len,
			   struct gv_err *err) GV_MUST_CHECK;
/* Makes the complete input read-only (0444) and closes it: the program,
 * another uid without chmod in its seccomp policy, cannot change it. */
int init_named_input_end(struct init_named_io *io, struct gv_err *err) GV_MUST_CHECK;

/* Creates an empty /box/<name> (root's, 0666) for the program to write,
 * after removing the previous test's: /box is read-only for the program,
 * so this is the one file there it can write, and it can neither remove
 * nor replace it. */
int init_named_output_prepare(struct init_named_io *io, const char *name, struct gv_err *err) GV_MUST_CHECK;

/* Replaces out's bytes by what /box/<name> holds: at most cap bytes kept,
 * *size the file's whole size (the caller compares it with the output
 * limit). A file that is no longer a regular file counts as empty. */
int init_named_output_collect(struct init_named_io *io, const char *name, uint64_t cap, struct init_capture *out,
			      uint64_t *size, struct gv_err *err) GV_MUST_CHECK;
