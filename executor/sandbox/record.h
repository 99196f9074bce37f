/* Records and frames of the host <-> gavel-init protocol (executor/PROTOCOL.md).
 *
 * Everything here is pure: no I/O, no globals, bounded work per input byte.
 * It parses bytes that a sandbox produced, so it treats them as hostile:
 * every number is range-checked, every length capped before allocating, and
 * malformed input is an error (GV_EPROTO), never a guess. The same code is
 * linked into gavel-init (static), so both ends share one grammar. Fuzzed by
 * tests/fuzz/fuzz_record.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* ---- records: lines "key:value\n" ---------------------------------------- */

#define EXEC_RECORD_KEY_MAX 32        /* longest accepted key */
#define EXEC_RECORD_MESSAGE_MAX 256   /* message buffer, NUL included */
#define EXEC_RECORD_ORDER_MAX 512     /* order buffer, NUL included */
#define EXEC_RECORD_MAX_BYTES 65536   /* longest accepted result record */

/* One "key:value" line. Both slices borrow the parsed buffer; value is not
 * NUL-terminated and contains neither '\n' nor NUL. */
struct exec_record_field {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
};

/* Lexer shared by every record reader. Reads the line starting at *pos of
 * buf[0..len): returns 1 with *field filled and *pos moved past the line, 0
 * at the end of the buffer, -1 (GV_EPROTO) on a malformed line: no final
 * '\n', empty line, missing ':', key not [a-z0-9_]{1,EXEC_RECORD_KEY_MAX},
 * NUL anywhere. */
int exec_record_next(const char *buf, size_t len, size_t *pos,
		     struct exec_record_field *field, struct gv_err *err) GV_MUST_CHECK;

/* True when the field's key equals the NUL-terminated name. */
int exec_record_key_is(const struct exec_record_field *field, const char *name);

/* Parses a canonical unsigned decimal (no sign, no spaces, no leading zero
 * except "0" itself) not above max. -1 (GV_EPROTO) otherwise. */
int exec_record_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out,
			  struct gv_err *err) GV_MUST_CHECK;

enum exec_phase { EXEC_PHASE_UNSET = 0, EXEC_PHASE_COMPILE, EXEC_PHASE_TEST };

enum exec_status {
	EXEC_STATUS_UNSET = 0,
	EXEC_STATUS_OK,
	EXEC_STATUS_RE,  /* exited non-zero */
	EXEC_STATUS_SG,  /* killed by a signal that is no limit of ours */
	EXEC_STATUS_TLE, /* CPU time */
	EXEC_STATUS_WLE, /* wall clock */
	EXEC_STATUS_MLE,
	EXEC_STATUS_OLE,
	EXEC_STATUS_IE,  /* gavel-init failed: never the program's fault */
};

enum exec_limit {
	EXEC_LIMIT_UNSET = 0,
	EXEC_LIMIT_NONE,
	EXEC_LIMIT_CPU,
	EXEC_LIMIT_WALL,
	EXEC_LIMIT_MEMORY,
	EXEC_LIMIT_OUTPUT,
};

/* Upper bounds of the numeric fields; a larger value is a protocol error. */
#define EXEC_RECORD_INDEX_MAX 1000000u
#define EXEC_RECORD_MS_MAX (100ull * 24 * 3600 * 1000)    /* 100 days */
#define EXEC_RECORD_KB_MAX (1ull << 40)                   /* 1 PiB */
#define EXEC_RECORD_BYTES_MAX (1ull << 50)

/* Bits of exec_record.present. */
enum {
	EXEC_REC_PHASE = 1u << 0,
	EXEC_REC_INDEX = 1u << 1,
	EXEC_REC_STATUS = 1u << 2,
	EXEC_REC_EXIT_CODE = 1u << 3,
	EXEC_REC_SIGNAL = 1u << 4,
	EXEC_REC_TIME_MS = 1u << 5,
	EXEC_REC_WALL_MS = 1u << 6,
	EXEC_REC_MEMORY_KB = 1u << 7,
	EXEC_REC_STDOUT_BYTES = 1u << 8,
	EXEC_REC_STDERR_BYTES = 1u << 9,
	EXEC_REC_LIMIT = 1u << 10,
	EXEC_REC_MESSAGE = 1u << 11,
	EXEC_REC_WALL_US = 1u << 12,
	EXEC_REC_ORDER = 1u << 13,
};

/* A result record, typed. Absent numbers are 0; `present` says which keys
 * were seen. */
struct exec_record {
	enum exec_phase phase;
	uint32_t index;        /* 1-based, tests only */
	enum exec_status status;
	int exit_code;         /* 0..255 */
	int signal;            /* 1..64 */
	uint64_t time_ms;
	uint64_t wall_ms;
	uint64_t wall_us;      /* the same wall time in microseconds; optional */
	uint64_t memory_kb;
	uint64_t stdout_bytes;
	uint64_t stderr_bytes;
	enum exec_limit limit;
	char message[EXEC_RECORD_MESSAGE_MAX]; /* NUL-terminated; truncated if longer */
	/* The order in which the kept stdout and stderr bytes arrived:
	 * "o12,e5,o3" (segments of the captures, in order; the bytes past
	 * the last segment of each come after all segments). "" when absent. */
	char order[EXEC_RECORD_ORDER_MAX];
	unsigned present;
};

/* Is s[0..len) an order value: segments [oe][1-9][0-9]{0,9} joined by ','? */
bool exec_record_order_ok(const char *s, size_t len);

/* Parses a result record. Required: phase, status; index (>= 1) when the
 * phase is test; exit_code when status is RE; signal when status is SG.
 * Unknown keys are ignored, a repeated key keeps the last value. Fails with
 * GV_EPROTO on any malformed line, unknown enum word or out-of-range number,
 * GV_ELIMIT when len > EXEC_RECORD_MAX_BYTES. out is fully overwritten. */
int exec_record_parse(const char *buf, size_t len, struct exec_record *out,
		      struct gv_err *err) GV_MUST_CHECK;

/* Writes r as a record into buf (size bufsz). Omits unset enums and fields
 * not in r->present (phase, status, time/wall/memory/bytes and limit are
 * always written when set). '\n' and NUL in the message become ' '. Returns
 * the length, or -1 (GV_ELIMIT) when buf is too small. */
int exec_record_format(const struct exec_record *r, char *buf, size_t bufsz,
		       struct gv_err *err) GV_MUST_CHECK;

const char *exec_status_name(enum exec_status s);  /* "OK", "TLE", ...; "?" if unset */
const char *exec_limit_name(enum exec_limit l);    /* "cpu", ...; "?" if unset */
const char *exec_phase_name(enum exec_phase p);    /* "compile", "test"; "?" */

/* ---- frames: "<kind> <length>\n" + payload ------------------------------ */

#define EXEC_FRAME_KIND_MAX 16
#define EXEC_FRAME_LEN_MAX (64u << 20)
/* kind, ' ', up to 8 digits (64 MiB), '\n' */
#define EXEC_FRAME_HEADER_MAX (EXEC_FRAME_KIND_MAX + 1 + 8 + 1)

/* Accepted kinds and their payload caps; a frame of another kind, or longer
 * than its cap, is a protocol error detected from the header alone. */
struct exec_frame_cap {
	const char *kind;
	size_t max_len;    /* <= EXEC_FRAME_LEN_MAX */
};

enum exec_frame_event_type {
	EXEC_FRAME_EV_NONE = 0, /* input exhausted; feed more */
	EXEC_FRAME_EV_BEGIN,    /* a header was read: kind, len */
	EXEC_FRAME_EV_DATA,     /* a slice of the payload: data, data_len */
	EXEC_FRAME_EV_END,      /* the payload is complete */
};

struct exec_frame_event {
	enum exec_frame_event_type type;
	const char *kind;     /* NUL-terminated, owned by the decoder; valid until the next BEGIN */
	size_t len;           /* total payload length of the current frame */
	const char *data;     /* DATA: borrows the caller's input buffer */
	size_t data_len;
};

/* A frame handed out by the buffered API. */
struct exec_frame {
	const char *kind;     /* owned by the decoder */
	const char *payload;  /* owned by the decoder; valid until the next feed call */
	size_t len;
};

struct exec_frame_decoder {
	const struct exec_frame_cap *caps; /* borrowed; must outlive the decoder */
	size_t ncaps;
	int state;
	int failed;
	char header[EXEC_FRAME_HEADER_MAX];
	size_t header_len;
	char kind[EXEC_FRAME_KIND_MAX + 1];
	size_t len;
	size_t got;
	char *buf;       /* buffered API: payload being assembled */
};

/* caps is borrowed. Cannot fail. */
void exec_frame_decoder_init(struct exec_frame_decoder *d,
			     const struct exec_frame_cap *caps, size_t ncaps);
/* Releases the buffered payload; NULL-safe. The decoder may be re-inited. */
void exec_frame_decoder_free(struct exec_frame_decoder *d);

/* Streaming API: consumes bytes of in[0..in_len) (adding the count to
 * *used) and reports at most one event. Zero-copy: DATA slices point into
 * `in`. Returns 0 (event in *ev, possibly NONE when all input was used) or
 * -1 (GV_EPROTO) on a malformed header, an unknown kind or a length over
 * the kind's cap; after an error the decoder stays failed. */
int exec_frame_decoder_step(struct exec_frame_decoder *d, const char *in, size_t in_len,
			    size_t *used, struct exec_frame_event *ev,
			    struct gv_err *err) GV_MUST_CHECK;

/* Buffered API: like step, but assembles whole frames. Returns 1 when a
 * frame is ready in *out (payload allocated by the decoder at BEGIN, after
 * the cap check; NUL-terminated for convenience), 0 when in was used up
 * without completing a frame, -1 on a protocol error or ENOMEM. *used gets
 * the bytes consumed; call again with the rest. */
int exec_frame_decoder_feed(struct exec_frame_decoder *d, const char *in, size_t in_len,
			    size_t *used, struct exec_frame *out,
			    struct gv_err *err) GV_MUST_CHECK;

/* True between frames (no partial header or payload pending): at EOF this
 * tells a clean end from a truncated frame. */
int exec_frame_decoder_idle(const struct exec_frame_decoder *d);

/* ---- named payloads: "<name>\n<bytes>" (frames `file` and `feedback`) -- */

#define EXEC_FILE_NAME_MAX 64  /* bytes of a name, without the NUL */
/* Bytes of one file the host seeds into a test's feedback dir (a `feedback`
 * command frame: a multi-pass validator's state), as init sends them back. */
#define EXEC_FEEDBACK_SEED_MAX 65536

/* True when name[0..len) is [A-Za-z0-9._-]{1,EXEC_FILE_NAME_MAX} and not
 * "." or "..": one plain path component, safe to create under a directory
 * by openat. */
int exec_file_name_ok(const char *name, size_t len);

/* Splits a `file` / `feedback` payload at its first '\n' into the name
 * (checked with exec_file_name_ok) and the bytes after it (any bytes, may be
 * empty). Slices borrow payload. -1 (GV_EPROTO) when there is no '\n' within
 * EXEC_FILE_NAME_MAX + 1 bytes or the name is not allowed. */
int exec_named_payload_split(const char *payload, size_t len, const char **name, size_t *name_len,
			     const char **data, size_t *data_len, struct gv_err *err) GV_MUST_CHECK;

/* Writes "<kind> <len>\n" into out (size outsz >= EXEC_FRAME_HEADER_MAX + 1).
 * Returns its length, or -1 (GV_EINVAL) for a bad kind or len. */
int exec_frame_header(char *out, size_t outsz, const char *kind, size_t len,
		      struct gv_err *err) GV_MUST_CHECK;
