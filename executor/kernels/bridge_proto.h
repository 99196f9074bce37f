/* The kernel frame grammars of executor/kernels/README.md, parsed with
 * bounds and no trust: the bridge's output (kernel code runs as the
 * bridge's uid, so every byte is hostile) and the commands the frontend
 * queues in gavel:kin:<kid>. Pure functions, fuzzed under tests/fuzz/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define KERNEL_HEADER_MAX 128                 /* bytes of a header line, with its \n */
#define KERNEL_OUT_PAYLOAD_MAX (16u << 20)    /* one message from the bridge */
#define KERNEL_IN_PAYLOAD_MAX (10u << 20)     /* one client message */
#define KERNEL_CONN_DIGITS 18                 /* connection ids: [1-9][0-9]{0,17} */

enum kernel_framing { KERNEL_FRAMING_V1, KERNEL_FRAMING_JSON };

/* ---- the bridge's output ---- */

enum kernel_out_kind { KERNEL_OUT_MSG, KERNEL_OUT_STATE, KERNEL_OUT_READY };

struct kernel_out_frame {
	enum kernel_out_kind kind;
	uint64_t conn;               /* msg: 0 = every connection of its framing */
	enum kernel_framing framing; /* msg */
	bool binary;                 /* msg: the WebSocket opcode */
	char channel[8];             /* msg: shell, control, stdin, iopub */
	char state[12];              /* state: starting, idle, busy */
	const char *payload;         /* msg: owned by the decoder until the next feed */
	size_t len;
	/* The frame as received (header and payload), to pass on unchanged;
	 * owned by the decoder until the next feed. */
	const char *raw;
	size_t raw_len;
};

struct kernel_out_decoder {
	char *buf;         /* header + payload of the frame being read */
	size_t len, cap;
	size_t header_len; /* 0 while the header line is incomplete */
	size_t want;       /* header_len + payload length once the header is parsed */
	bool failed;
	struct kernel_out_frame cur; /* the frame being read, from its header */
};

void kernel_out_decoder_init(struct kernel_out_decoder *d);
void kernel_out_decoder_free(struct kernel_out_decoder *d);
/* Takes bytes of the bridge's output. 1: a complete, checked frame in *f
 * (valid until the next call), *used bytes consumed; 0: all of in consumed,
 * no frame yet; -1: a protocol error (err), and every later call fails. */
int kernel_out_feed(struct kernel_out_decoder *d, const char *in, size_t n, size_t *used,
		    struct kernel_out_frame *f, struct gv_err *err) GV_MUST_CHECK;

/* ---- gavel:kin:<kid> commands ---- */

enum kernel_cmd_kind {
	KERNEL_CMD_OPEN, KERNEL_CMD_CLOSE, KERNEL_CMD_MSG, KERNEL_CMD_PING,
	KERNEL_CMD_INTERRUPT, KERNEL_CMD_RESTART, KERNEL_CMD_STOP,
};

struct kernel_cmd {
	enum kernel_cmd_kind kind;
	uint64_t conn;               /* open, close, msg, ping */
	enum kernel_framing framing; /* open */
	char reason[16];             /* stop: [a-z_]{1,15} */
	const char *payload;         /* msg: points into the element */
	size_t len;
};

/* Parses one list element (the whole of it). 0 or -1 with err. */
int kernel_cmd_parse(const char *el, size_t n, struct kernel_cmd *c, struct gv_err *err) GV_MUST_CHECK;

/* shell, control, stdin (inbound = true) or those and iopub. */
bool kernel_channel_ok(const char *ch, bool inbound);
