/* libFuzzer target for the notebook kernels' frames
 * (executor/kernels/bridge_proto.c): the bridge's output, which kernel
 * code can forge, fed in chunks whose sizes come from the input, and the
 * frontend's commands. Beyond "does not crash": a frame handed out obeys
 * the grammar it was checked against (channel allowlist, text is UTF-8,
 * v1 messages on the header's channel, the raw bytes end with the
 * payload). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kernel_wire.h"
#include "common/utf8.h"
#include "executor/kernels/bridge_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_frame(const struct kernel_out_frame *f)
{
	if (f->kind != KERNEL_OUT_MSG)
		return;
	size_t off, len;
	if (!kernel_channel_ok(f->channel, false) || f->len > KERNEL_OUT_PAYLOAD_MAX ||
	    f->raw + f->raw_len != f->payload + f->len)
		abort();
	if (!f->binary && !gv_utf8_valid((const uint8_t *)f->payload, f->len))
		abort();
	if (f->binary && f->framing == KERNEL_FRAMING_V1 &&
	    (!gv_kernel_v1_channel((const uint8_t *)f->payload, f->len, &off, &len) || len != strlen(f->channel) ||
	     memcmp(f->payload + off, f->channel, len)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t step = (size_t)data[0] + 1;
	const char *in = (const char *)data + 1;
	size_t n = size - 1;
	struct kernel_out_decoder d;
	kernel_out_decoder_init(&d);
	for (size_t off = 0; off < n;) {
		size_t piece = n - off < step ? n - off : step, pos = 0;
		int r = 0;
		while (pos < piece) {
			struct kernel_out_frame f;
			struct gv_err err;
			size_t used = 0;
			r = kernel_out_feed(&d, in + off + pos, piece - pos, &used, &f, &err);
			if (r < 0)
				break;
			if (used > piece - pos)
				abort();
			pos += used;
			if (r == 1)
				check_frame(&f);
		}
		if (r < 0)
			break;
		off += piece;
	}
	kernel_out_decoder_free(&d);
	struct kernel_cmd c;
	struct gv_err err;
	if (kernel_cmd_parse(in, n, &c, &err) == 0 && c.kind == KERNEL_CMD_MSG &&
	    (c.payload < in || c.payload + c.len != in + n || c.len == 0))
		abort();
	return 0;
}
