/* libFuzzer target for the parsers of bytes that come out of a sandbox:
 * exec_record_parse (result records), the frame decoder (fed in chunks whose
 * sizes come from the input; `file` and `feedback` payloads split into name
 * and bytes) and init_job_parse. Checks invariants beyond
 * "does not crash": a parsed record formats and parses back to the same
 * fields, and frames never exceed their kind's cap. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "executor/init/job.h"
#include "executor/sandbox/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct exec_frame_cap caps[] = {
	{ "stdout", 64 }, { "stderr", 16 }, { "result", 4096 }, { "end", 0 },
	{ "file", 128 }, { "feedback", 96 },
};

/* `file` / `feedback` payloads: a split name is always a legal one
 * component name and the slices stay inside the payload. */
static void check_named(const char *buf, size_t len)
{
	const char *name, *data;
	size_t nl, dl;
	struct gv_err err;
	if (exec_named_payload_split(buf, len, &name, &nl, &data, &dl, &err) != 0)
		return;
	if (!exec_file_name_ok(name, nl) || name != buf || nl + 1 + dl != len || data != buf + nl + 1)
		abort();
}

static void check_record(const char *buf, size_t len)
{
	struct exec_record r, back;
	struct gv_err err;
	if (exec_record_parse(buf, len, &r, &err) != 0)
		return;
	char out[4096];
	int n = exec_record_format(&r, out, sizeof(out), &err);
	if (n < 0)
		abort();
	if (exec_record_parse(out, (size_t)n, &back, &err) != 0)
		abort();
	if (back.phase != r.phase || back.status != r.status || back.index != r.index ||
	    back.time_ms != r.time_ms || back.wall_us != r.wall_us || back.memory_kb != r.memory_kb ||
	    back.limit != r.limit)
		abort();
}

static void check_frames(const char *buf, size_t len, unsigned chunk)
{
	struct exec_frame_decoder d;
	exec_frame_decoder_init(&d, caps, sizeof(caps) / sizeof(caps[0]));
	size_t pos = 0;
	struct gv_err err;
	while (pos < len) {
		size_t n = len - pos < chunk ? len - pos : chunk;
		size_t used;
		struct exec_frame f;
		int r = exec_frame_decoder_feed(&d, buf + pos, n, &used, &f, &err);
		if (r < 0)
			break;
		if (used > n)
			abort();
		if (r == 1) {
			size_t cap = 0;
			for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
				if (strcmp(caps[i].kind, f.kind) == 0)
					cap = caps[i].max_len;
			if (f.len > cap)
				abort();
			if (strcmp(f.kind, "result") == 0)
				check_record(f.payload, f.len);
			if (strcmp(f.kind, "file") == 0 || strcmp(f.kind, "feedback") == 0)
				check_named(f.payload, f.len);
		}
		pos += used;
		if (used == 0 && r == 0)
			break;
	}
	exec_frame_decoder_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	check_record(buf, size);
	check_named(buf, size);
	unsigned chunk = size ? (unsigned)data[0] % 7 + 1 : 1;
	check_frames(buf, size, chunk);
	struct init_job job;
	struct gv_err err;
	if (init_job_parse(buf, size, &job, &err) == 0)
		init_job_free(&job);
	return 0;
}
