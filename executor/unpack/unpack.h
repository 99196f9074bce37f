/* gavel-unpack's jobs inside a sandbox: check an uploaded archive entry by
 * entry and write the accepted files as the package stream
 * (executor/problems/import_stream.h), hand that stream back to the host
 * one window at a time, or (a submission's additional files) write the
 * accepted files into the work dir under the same checks. */
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

/* Checks the archive exactly as unpack_archive does (a first pass that
 * writes nothing), refuses it when one of its top-level names already
 * exists under dirfd, then writes its folders (0755) and regular files
 * (0644, or 0755 when the entry has an execute bit; never setuid) under
 * dirfd in a second pass: created with mkdirat / openat O_EXCL |
 * O_NOFOLLOW relative to dirfd, so nothing that exists is replaced and no
 * link is followed. sum->stream_bytes stays 0. */
enum unpack_outcome unpack_extract(const void *archive, size_t archive_len, int dirfd,
				   const struct unpack_limits *lim, struct unpack_summary *sum, char *reason,
				   size_t reasonsz);
