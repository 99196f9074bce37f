/* Strict JSON helpers on jansson for request bodies and messages: a parser
 * with a size cap and a nesting cap checked before jansson recurses, typed
 * getters whose errors name the field ("field 'stdin': expected string"),
 * bounded serialisation, and base64 (the Judge0 API's base64_encoded mode)
 * through libsodium. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Nesting cap of gv_json_parse when the caller passes 0. Far below
 * jansson's own JSON_PARSER_MAX_DEPTH (2048), which bounds recursion but
 * not the cost of walking a deep tree in every later consumer. */
#define GV_JSON_DEFAULT_MAX_DEPTH 64

/* Getter flags. */
#define GV_JSON_REQUIRED (1u << 0) /* absent (or null without NULL_OK): error */
#define GV_JSON_NULL_OK  (1u << 1) /* null counts as absent instead of a type error */

/* Parses buf[0..len) as one JSON value. Refuses (GV_ELIMIT) more than
 * max_bytes, or arrays/objects nested deeper than max_depth (0: the
 * default), before jansson sees the text; refuses duplicate object keys and
 * "\u0000" in strings (GV_EINVAL, "JSON line L column C: ..."). Returns a
 * new reference (json_decref it) or NULL with err filled. */
json_t *gv_json_parse(const char *buf, size_t len, size_t max_bytes, unsigned max_depth,
		      struct gv_err *err) GV_MUST_CHECK;

/* Depth of the deepest array/object in buf, counted without recursion and
 * ignoring brackets inside strings; stops counting at limit + 1. */
unsigned gv_json_depth(const char *buf, size_t len, unsigned limit);

/* Typed getters on an object. Each returns 0 with *out set, 1 when the field
 * is absent (or null with GV_JSON_NULL_OK) and not GV_JSON_REQUIRED, with
 * *out untouched so that a preset default stands, or -1 with err filled
 * (GV_EINVAL "field 'key': expected string, got number", "field 'key':
 * required", GV_ELIMIT for length caps). obj must be an object. */

/* *out is borrowed from obj and lives as long as obj does. A string longer
 * than max_len bytes, or holding a NUL byte, is refused. */
int gv_json_get_string(const json_t *obj, const char *key, unsigned flags, size_t max_len,
		       const char **out, struct gv_err *err) GV_MUST_CHECK;
/* Integers only (2.0 is refused), within [min, max]. */
int gv_json_get_int(const json_t *obj, const char *key, unsigned flags, int64_t min, int64_t max,
		    int64_t *out, struct gv_err *err) GV_MUST_CHECK;
/* Integers or reals, finite, within [min, max]. */
int gv_json_get_double(const json_t *obj, const char *key, unsigned flags, double min, double max,
		       double *out, struct gv_err *err) GV_MUST_CHECK;
int gv_json_get_bool(const json_t *obj, const char *key, unsigned flags, bool *out,
		     struct gv_err *err) GV_MUST_CHECK;
/* *out is borrowed from obj. */
int gv_json_get_object(const json_t *obj, const char *key, unsigned flags, json_t **out,
		       struct gv_err *err) GV_MUST_CHECK;
/* *out is borrowed from obj; more than max_items elements is refused. */
int gv_json_get_array(const json_t *obj, const char *key, unsigned flags, size_t max_items,
		      json_t **out, struct gv_err *err) GV_MUST_CHECK;

/* Refuses (GV_EINVAL "field 'x': unknown") any key of obj not in allowed
 * (NULL-terminated), for APIs that reject misspelt fields. */
int gv_json_check_keys(const json_t *obj, const char *const *allowed,
		       struct gv_err *err) GV_MUST_CHECK;

/* "string", "number", "object", ... for messages. */
const char *gv_json_type_name(const json_t *json);

/* Serialises json (any value) into buf (size bytes, NUL-terminated);
 * flags are jansson's dump flags (e.g. JSON_COMPACT). Refuses (GV_ELIMIT)
 * output that does not fit. *len (may be NULL) gets the length without NUL. */
int gv_json_dump_buf(const json_t *json, size_t flags, char *buf, size_t size, size_t *len,
		     struct gv_err *err) GV_MUST_CHECK;
/* Same into a new malloc'd string (the caller frees it), refusing output
 * longer than max_bytes before allocating it. NULL with err on failure. */
char *gv_json_dump(const json_t *json, size_t flags, size_t max_bytes, size_t *len,
		   struct gv_err *err) GV_MUST_CHECK;

/* Standard base64 with padding, in a new malloc'd NUL-terminated string;
 * *outlen (may be NULL) gets its length. NULL with err on failure. */
char *gv_b64_encode(const void *in, size_t inlen, size_t *outlen, struct gv_err *err) GV_MUST_CHECK;
/* Decodes standard base64, padded or not, ignoring whitespace (encoders
 * wrap lines). Refuses (GV_ELIMIT) output over max_out bytes without
 * allocating more than max_out + 1, and bad input (GV_EINVAL). The result
 * is malloc'd with a NUL after its *outlen bytes, so text can be used as a
 * C string when it holds no NUL itself. */
unsigned char *gv_b64_decode(const char *in, size_t inlen, size_t max_out, size_t *outlen,
			     struct gv_err *err) GV_MUST_CHECK;

/* True when buf[0..len) is valid UTF-8 without a NUL byte: bytes a JSON
 * string stored as jsonb carries exactly. Pure. */
bool gv_json_text_ok(const char *buf, size_t len);

/* A JSON string from arbitrary bytes (program output is attacker bytes):
 * valid UTF-8 is kept, every invalid byte becomes U+FFFD, NUL bytes are kept
 * as \u0000. Returns a new reference, NULL only when out of memory. */
json_t *gv_json_string_lossy(const char *buf, size_t len);
