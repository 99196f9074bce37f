/* libFuzzer target for gavel-unpack's checks (executor/unpack/unpack.c):
 * libarchive and our entry rules on arbitrary bytes, natively. Checks
 * beyond "does not crash": an accepted archive's stream parses completely
 * with the host's parser under the same limits and agrees with the summary;
 * a refused one wrote nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor/problems/import_stream.h"
#include "executor/unpack/unpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct unpack_limits lim = {
	.max_bytes = 1u << 20, .max_files = 64, .max_dirs = 64, .max_path = 255, .max_depth = 16,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/gavel-fuzz-unpack-%d", (int)getpid());
	unlink(path);
	struct unpack_summary sum;
	char reason[512];
	enum unpack_outcome o = unpack_archive(data, size, path, &lim, &sum, reason, sizeof(reason));
	FILE *f = fopen(path, "rb");
	if (o != UNPACK_OK) {
		if (f)
			abort();
		return 0;
	}
	if (!f)
		abort();
	char *s = malloc(sum.stream_bytes + 1);
	if (!s || fread(s, 1, sum.stream_bytes + 1, f) != sum.stream_bytes)
		abort();
	fclose(f);
	unlink(path);
	struct exec_import_stream ps;
	struct exec_import_stream_limits sl = { lim.max_bytes, lim.max_files, lim.max_dirs, lim.max_path,
						lim.max_depth };
	exec_import_stream_init(&ps, &sl);
	size_t pos = 0;
	struct gv_err err;
	while (pos < sum.stream_bytes) {
		size_t used;
		struct exec_import_event ev;
		if (exec_import_stream_next(&ps, s + pos, sum.stream_bytes - pos, &used, &ev, &err) < 0)
			abort();
		pos += used;
	}
	if (!exec_import_stream_done(&ps) || ps.files != sum.files || ps.bytes != sum.unpacked_bytes)
		abort();
	free(s);
	return 0;
}
