/* The frames of hosted notebook kernels as the frontend sees them
 * (executor/kernels/README.md has the grammars): kernel ids, WebSocket
 * connection ids, the check of a client's message in each framing (v1:
 * `v1.kernel.websocket.jupyter.org`; json: Jupyter's legacy text and
 * binary messages), the elements pushed on gavel:kin:<kid>, and the parse
 * of a gavel:kout:<kid> message. Pure functions over bytes, no I/O: the
 * unit tests drive them with tables and tests/fuzz/fuzz_kernel_frames.c
 * with anything. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A client's WebSocket message (what one kin `msg` element carries). */
#define FE_KMSG_MAX (10u * 1024 * 1024)
/* A kout message's payload (the executor's own cap on the bridge). */
#define FE_KOUT_PAYLOAD_MAX (16u * 1024 * 1024)
/* A kout header line, its '\n' included. */
#define FE_KOUT_HEADER_MAX 128
/* "msg <conn> <len>\n" and the other kin headers, with room. */
#define FE_KIN_HEADER_MAX 64
/* A kernel id: lower-case UUID, 8-4-4-4-12 hex, and its NUL. */
#define FE_KERNEL_ID_BUF 37
/* A connection id in decimal, with its NUL. */
#define FE_KCONN_BUF 20
/* Nesting a legacy JSON message may have (Jupyter comm messages carry
 * widget state: deeper than the API bodies' default). */
#define FE_KMSG_JSON_DEPTH 256
/* Parts of a v1 message (channel, header, parent, metadata, content,
 * buffers) and buffers of a legacy binary message. */
#define FE_KMSG_PARTS_MAX 1024

enum fe_kframing { FE_KFRAMING_V1, FE_KFRAMING_JSON };
enum fe_kchannel { FE_KCH_SHELL, FE_KCH_CONTROL, FE_KCH_STDIN, FE_KCH_IOPUB };

/* "v1" / "json"; "shell" ... */
const char *fe_kframing_name(enum fe_kframing f);
const char *fe_kchannel_name(enum fe_kchannel c);

/* ----------------------------------------------------------- ids */

/* Kernel ids are checked with gv_kernel_id_valid (common/kernel_wire.h). */
/* The id of random bytes b as a UUID version 4 (RFC 4122 section 4.4). */
void fe_kernel_id_format(const uint8_t b[16], char out[FE_KERNEL_ID_BUF]);

/* A connection id from 64 random bits: uniform enough over
 * 1..999999999999999999 ([1-9][0-9]{0,17}). */
uint64_t fe_kconn_from_random(uint64_t r);
/* s[0..n) is `0` (when zero_ok) or `[1-9][0-9]{0,17}`; *out its value. */
bool fe_kconn_parse(const char *s, size_t n, bool zero_ok, uint64_t *out);

/* ------------------------------------------- client -> kernel checks */

/* A v1 message: u64 little-endian offset count k (2..FE_KMSG_PARTS_MAX),
 * k offsets, the first 8*(k+1), none decreasing, the last the message's
 * length; the channel (first part) shell, control or stdin. 0 with *ch,
 * -1 when malformed. */
int fe_kmsg_v1_check(const uint8_t *p, size_t n, enum fe_kchannel *ch);
/* A legacy (json framing) message: text (binary false) is a JSON object;
 * binary is Jupyter's serialize_binary_message (u32 big-endian count of
 * parts, their offsets, the first 4*(count+1), the first part the JSON
 * object). The object's "channel" is shell, control or stdin (none at all:
 * shell, as Jupyter's server takes it). JSON at most
 * FE_KMSG_JSON_DEPTH deep, no duplicate keys. 0 with *ch, -1 otherwise. */
int fe_kmsg_json_check(const uint8_t *p, size_t n, bool binary, enum fe_kchannel *ch);

/* --------------------------------------------------- kin elements */

/* The header of a kin element into buf (size >= FE_KIN_HEADER_MAX):
 * "open <conn> <framing>\n", "close <conn>\n", "ping <conn>\n",
 * "msg <conn> <len>\n". Returns its length. */
size_t fe_kin_open(char *buf, size_t size, uint64_t conn, enum fe_kframing f);
size_t fe_kin_close(char *buf, size_t size, uint64_t conn);
size_t fe_kin_ping(char *buf, size_t size, uint64_t conn);
size_t fe_kin_msg(char *buf, size_t size, uint64_t conn, size_t len);

/* ------------------------------------------------- kout messages */

enum fe_kout_kind { FE_KOUT_MSG, FE_KOUT_STATE, FE_KOUT_RESTARTED, FE_KOUT_GONE };

struct fe_kout {
	enum fe_kout_kind kind;
	/* msg */
	uint64_t conn;            /* 0: every connection of the framing */
	enum fe_kframing framing;
	bool binary;              /* opcode */
	enum fe_kchannel channel;
	size_t off;               /* the payload: buf[off..off+len) */
	size_t len;
	/* state: starting idle busy restarting; gone: the reason
	 * ([a-z_]{1,32}) */
	char word[33];
};

/* Parses one gavel:kout:<kid> message exactly as the README's grammar
 * says: header at most FE_KOUT_HEADER_MAX bytes, single spaces, decimal
 * numbers without leading zeros, a msg's payload exactly <len> bytes (at
 * most FE_KOUT_PAYLOAD_MAX) and nothing after a header of the others. A
 * text payload must be UTF-8. 0, or -1 when malformed. */
int fe_kout_parse(const uint8_t *buf, size_t n, struct fe_kout *out);
