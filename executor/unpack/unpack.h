/* gavel-unpack's two jobs inside the unpack sandbox: check an uploaded
 * archive entry by entry and write the accepted files as the package stream
 * (executor/problems/import_stream.h), and hand that stream back to the host
 * one window at a time. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct unpack_limits {
	uint64_t max_bytes;  /* sum of the bytes actually read out of the entries */
	uint32_t max_files;
	uint32_t max_dirs;
	uint32_t max_path;
	uint32_t max_depth;
};

struct unpack_summary {
	uint32_t files, dirs;
	uint64_t unpacked_bytes, stream_bytes;
};

enum unpack_outcome {
	UNPACK_OK = 0,
	UNPACK_REJECTED = 2, /* the archive's fault; reason names the entry */
	UNPACK_FAILED = 1,   /* ours: out of memory, cannot write */
};

/* Checks the archive (archive_len bytes in memory, zip or tar / tar.gz) in a
 * first pass that writes nothing, then writes the stream to stream_path
 * (created, must not exist) in a second pass. reason (size reasonsz) says
 * why on anything but UNPACK_OK. */
enum unpack_outcome unpack_archive(const void *archive, size_t archive_len, const char *stream_path,
				   const struct unpack_limits *lim, struct unpack_summary *sum, char *reason,
				   size_t reasonsz);
