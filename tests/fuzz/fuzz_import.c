/* libFuzzer target for the host's parser of the package stream that the
 * unpack sandbox returns (exec_import_stream_next,
 * executor/problems/import_stream.c) and the entry path rule. The first input
 * byte picks the chunk size the rest is fed in. Checks beyond "does not crash":
 * a call never claims more bytes than it was given and, returning 0, takes them
 * all; every path it hands out passes the path rule; a file's data events add
 * up to its size; the counts at the end match what was handed out and stay in
 * the limits. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "executor/problems/import_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct exec_import_stream_limits lim = {
	.max_bytes = 1u << 16, .max_files = 64, .max_dirs = 64, .max_path = 255, .max_depth = 16,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t chunk = (size_t)data[0] % 17 + 1;
	const char *buf = (const char *)data + 1;
	size_t len = size - 1;
	char why[128];
	(void)exec_import_path_check(buf, len < 300 ? len : 300, 255, 16, why, sizeof(why));

	struct exec_import_stream ps;
	exec_import_stream_init(&ps, &lim);
	struct gv_err err;
	size_t pos = 0;
	uint64_t files = 0, bytes = 0, file_left = 0;
	int in_file = 0;
	for (;;) {
		size_t avail = len - pos < chunk ? len - pos : chunk;
		size_t used = 0;
		struct exec_import_event ev;
		int r = exec_import_stream_next(&ps, buf + pos, avail, &used, &ev, &err);
		if (used > avail)
			abort();
		pos += used;
		if (r < 0)
			return 0;
		if (r == 0) {
			if (used != avail)
				abort();
			if (pos == len)
				break;
			continue;
		}
		switch (ev.kind) {
		case EXEC_IMPORT_EV_DIR:
		case EXEC_IMPORT_EV_FILE:
			if (in_file || exec_import_path_check(ev.path, strlen(ev.path), 255, 16, why, sizeof(why)) != 0)
				abort();
			if (ev.kind == EXEC_IMPORT_EV_FILE) {
				in_file = 1;
				file_left = ev.size;
				files++;
				bytes += ev.size;
			}
			break;
		case EXEC_IMPORT_EV_DATA:
			if (!in_file || ev.len > file_left || ev.data != buf + pos - used)
				abort();
			file_left -= ev.len;
			break;
		case EXEC_IMPORT_EV_FILE_END:
			if (!in_file || file_left)
				abort();
			in_file = 0;
			break;
		case EXEC_IMPORT_EV_END:
			if (in_file || files != ps.files || bytes != ps.bytes || files > lim.max_files ||
			    bytes > lim.max_bytes)
				abort();
			break;
		}
	}
	return 0;
}
