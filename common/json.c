/* Strict JSON helpers on jansson and base64 on libsodium. Everything that
 * reads untrusted bytes checks a size or depth limit before it allocates or
 * recurses; every error names the field it is about. */
#include "common/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>


/* Client text quoted in an error message: printable ASCII kept as is (the
 * message is read by people and JSON-escaped by whoever sends it on),
 * anything else written as \xNN, cut to fit. */
static void sanitize(char *out, size_t outsz, const char *in)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (; *in && o + 5 <= outsz; in++) {
		unsigned char c = (unsigned char)*in;
		if (c >= 0x20 && c < 0x7f) {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
}

unsigned gv_json_depth(const char *buf, size_t len, unsigned limit)
{
	unsigned depth = 0, max = 0;
	bool in_string = false, escaped = false;
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (in_string) {
			if (escaped)
				escaped = false;
			else if (c == '\\')
				escaped = true;
			else if (c == '"')
				in_string = false;
			continue;
		}
		switch (c) {
		case '"':
			in_string = true;
			break;
		case '[':
		case '{':
			if (++depth > max) {
				max = depth;
				if (max > limit)
					return max;
			}
			break;
		case ']':
		case '}':
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
	}
	return max;
}

json_t *gv_json_parse(const char *buf, size_t len, size_t max_bytes, unsigned max_depth,
		      struct gv_err *err)
{
	if (!buf && len) {
		gv_err_set(err, GV_EINVAL, "JSON: no buffer");
		return NULL;
	}
	if (len > max_bytes) {
		gv_err_set(err, GV_ELIMIT, "JSON: larger than %zu bytes", max_bytes);
		return NULL;
	}
	if (max_depth == 0)
		max_depth = GV_JSON_DEFAULT_MAX_DEPTH;
	if (gv_json_depth(buf, len, max_depth) > max_depth) {
		gv_err_set(err, GV_ELIMIT, "JSON: nested deeper than %u levels", max_depth);
		return NULL;
	}
	json_error_t jerr;
	json_t *json = json_loadb(len ? buf : "", len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json) {
		/* jansson quotes input near the error: escape it. */
		char text[sizeof(jerr.text)];
		sanitize(text, sizeof(text), jerr.text);
		gv_err_set(err, GV_EINVAL, "JSON line %d column %d: %s", jerr.line, jerr.column, text);
		return NULL;
	}
	return json;
}

const char *gv_json_type_name(const json_t *json)
{
	switch (json ? json_typeof(json) : JSON_NULL) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "unknown";
}

/* 0 with *v set, 1 absent (not required), -1 error. */
static int lookup(const json_t *obj, const char *key, unsigned flags, json_t **v, struct gv_err *err)
{
	if (!json_is_object(obj))
		return gv_err_set(err, GV_EINVAL, "field '%s': expected inside an object, got %s", key,
				  gv_json_type_name(obj));
	json_t *x = json_object_get(obj, key);
	if (x && json_is_null(x) && (flags & GV_JSON_NULL_OK))
		x = NULL;
	if (!x) {
		if (flags & GV_JSON_REQUIRED)
			return gv_err_set(err, GV_EINVAL, "field '%s': required", key);
		return 1;
	}
	*v = x;
	return 0;
}

static int type_error(const char *key, const char *want, const json_t *got, struct gv_err *err)
{
	return gv_err_set(err, GV_EINVAL, "field '%s': expected %s, got %s", key, want,
			  gv_json_type_name(got));
}

int gv_json_get_string(const json_t *obj, const char *key, unsigned flags, size_t max_len,
		       const char **out, struct gv_err *err)
{
	json_t *v;
	int rc = lookup(obj, key, flags, &v, err);
	if (rc != 0)
		return rc;
	if (!json_is_string(v))
		return type_error(key, "string", v, err);
	size_t len = json_string_length(v);
	const char *s = json_string_value(v);
	if (len > max_len)
		return gv_err_set(err, GV_ELIMIT, "field '%s': longer than %zu bytes", key, max_len);
	if (memchr(s, '\0', len))
		return gv_err_set(err, GV_EINVAL, "field '%s': contains a NUL byte", key);
	*out = s;
	return 0;
}

int gv_json_get_int(const json_t *obj, const char *key, unsigned flags, int64_t min, int64_t max,
		    int64_t *out, struct gv_err *err)
{
	json_t *v;
	int rc = lookup(obj, key, flags, &v, err);
	if (rc != 0)
		return rc;
	if (!json_is_integer(v))
		return type_error(key, "integer", v, err);
	json_int_t i = json_integer_value(v);
	if (i < min || i > max)
		return gv_err_set(err, GV_EINVAL,
				  "field '%s': %" PRId64 " out of range %" PRId64 "..%" PRId64, key,
				  (int64_t)i, min, max);
	*out = (int64_t)i;
	return 0;
}

int gv_json_get_double(const json_t *obj, const char *key, unsigned flags, double min, double max,
		       double *out, struct gv_err *err)
{
	json_t *v;
	int rc = lookup(obj, key, flags, &v, err);
	if (rc != 0)
		return rc;
	if (!json_is_number(v))
		return type_error(key, "number", v, err);
	double d = json_number_value(v);
	if (!isfinite(d) || d < min || d > max)
		return gv_err_set(err, GV_EINVAL, "field '%s': %g out of range %g..%g", key, d, min, max);
	*out = d;
	return 0;
}

int gv_json_get_bool(const json_t *obj, const char *key, unsigned flags, bool *out,
		     struct gv_err *err)
{
	json_t *v;
	int rc = lookup(obj, key, flags, &v, err);
	if (rc != 0)
		return rc;
	if (!json_is_boolean(v))
		return type_error(key, "boolean", v, err);
	*out = json_is_true(v);
	return 0;
}

int gv_json_get_object(const json_t *obj, const char *key, unsigned flags, json_t **out,
		       struct gv_err *err)
{
	json_t *v;
	int rc = lookup(obj, key, flags, &v, err);
	if (rc != 0)
		return rc;
	if (!json_is_object(v))
		return type_error(key, "object", v, err);
	*out = v;
	return 0;
}

int gv_json_get_array(const json_t *obj, const char *key, unsigned flags, size_t max_items,
		      json_t **out, struct gv_err *err)
{
	json_t *v;
	int rc = lookup(obj, key, flags, &v, err);
	if (rc != 0)
		return rc;
	if (!json_is_array(v))
		return type_error(key, "array", v, err);
	if (json_array_size(v) > max_items)
		return gv_err_set(err, GV_ELIMIT, "field '%s': more than %zu items", key, max_items);
	*out = v;
	return 0;
}

int gv_json_check_keys(const json_t *obj, const char *const *allowed, struct gv_err *err)
{
	if (!json_is_object(obj))
		return gv_err_set(err, GV_EINVAL, "expected an object, got %s", gv_json_type_name(obj));
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		(void)v;
		bool known = false;
		for (size_t i = 0; allowed && allowed[i] && !known; i++)
			known = strcmp(key, allowed[i]) == 0;
		if (!known) {
			/* The key is the client's text: escape and cut it. */
			char esc[72];
			sanitize(esc, sizeof(esc), key);
			return gv_err_set(err, GV_EINVAL, "field '%s': unknown", esc);
		}
	}
	return 0;
}

int gv_json_dump_buf(const json_t *json, size_t flags, char *buf, size_t size, size_t *len,
		     struct gv_err *err)
{
	if (!json || !buf || size == 0)
		return gv_err_set(err, GV_EINVAL, "JSON dump: no value or buffer");
	size_t n = json_dumpb(json, buf, size, flags | JSON_ENCODE_ANY);
	if (n == 0)
		return gv_err_set(err, GV_EINVAL, "JSON dump: value cannot be serialised");
	if (n >= size) {
		buf[0] = '\0';
		return gv_err_set(err, GV_ELIMIT, "JSON dump: %zu bytes do not fit in %zu", n, size - 1);
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return 0;
}

char *gv_json_dump(const json_t *json, size_t flags, size_t max_bytes, size_t *len,
		   struct gv_err *err)
{
	if (!json) {
		gv_err_set(err, GV_EINVAL, "JSON dump: no value");
		return NULL;
	}
	/* A first pass measures: the output is never allocated past the cap. */
	size_t n = json_dumpb(json, NULL, 0, flags | JSON_ENCODE_ANY);
	if (n == 0) {
		gv_err_set(err, GV_EINVAL, "JSON dump: value cannot be serialised");
		return NULL;
	}
	if (n > max_bytes) {
		gv_err_set(err, GV_ELIMIT, "JSON dump: %zu bytes, more than %zu", n, max_bytes);
		return NULL;
	}
	char *out = malloc(n + 1);
	if (!out) {
		gv_err_set(err, ENOMEM, "JSON dump: out of memory");
		return NULL;
	}
	if (json_dumpb(json, out, n, flags | JSON_ENCODE_ANY) != n) {
		free(out);
		gv_err_set(err, GV_EINTERNAL, "JSON dump: size changed between passes");
		return NULL;
	}
	out[n] = '\0';
	if (len)
		*len = n;
	return out;
}

char *gv_b64_encode(const void *in, size_t inlen, size_t *outlen, struct gv_err *err)
{
	/* sodium_base64_ENCODED_LEN must not overflow. */
	if (inlen > (SIZE_MAX / 4 - 2) * 3) {
		gv_err_set(err, GV_ELIMIT, "base64: input too large");
		return NULL;
	}
	size_t size = sodium_base64_ENCODED_LEN(inlen, sodium_base64_VARIANT_ORIGINAL);
	char *out = malloc(size);
	if (!out) {
		gv_err_set(err, ENOMEM, "base64: out of memory");
		return NULL;
	}
	sodium_bin2base64(out, size, inlen ? in : (const void *)"", inlen,
			  sodium_base64_VARIANT_ORIGINAL);
	if (outlen)
		*outlen = size - 1;
	return out;
}

unsigned char *gv_b64_decode(const char *in, size_t inlen, size_t max_out, size_t *outlen,
			     struct gv_err *err)
{
	static const char ignore[] = " \t\r\n";
	if (!in && inlen) {
		gv_err_set(err, GV_EINVAL, "base64: no input");
		return NULL;
	}
	if (!in)
		in = "";
	/* libsodium's ignore test is strchr(), which also matches a NUL byte:
	 * refuse NUL here so that it is not silently skipped. */
	if (memchr(in, '\0', inlen)) {
		gv_err_set(err, GV_EINVAL, "base64: NUL byte in input");
		return NULL;
	}
	/* The decoded size follows from the count of alphabet characters, so
	 * the cap is checked before anything is allocated or decoded. */
	size_t sig = 0;
	for (size_t i = 0; i < inlen; i++)
		sig += !strchr(ignore, in[i]) && in[i] != '=';
	size_t need = sig / 4 * 3 + (sig % 4 * 3) / 4;
	if (need > max_out) {
		gv_err_set(err, GV_ELIMIT, "base64: decodes to more than %zu bytes", max_out);
		return NULL;
	}
	unsigned char *out = malloc(need + 1);
	if (!out) {
		gv_err_set(err, ENOMEM, "base64: out of memory");
		return NULL;
	}
	static const int variants[] = { sodium_base64_VARIANT_ORIGINAL,
					sodium_base64_VARIANT_ORIGINAL_NO_PADDING };
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		size_t n = 0;
		if (sodium_base642bin(out, need, in, inlen, ignore, &n, NULL, variants[i]) == 0) {
			out[n] = '\0';
			if (outlen)
				*outlen = n;
			return out;
		}
	}
	free(out);
	gv_err_set(err, GV_EINVAL, "base64: invalid input");
	return NULL;
}

/* Length of the valid UTF-8 sequence starting at s (n bytes left), 0 when
 * the bytes there are not one (overlongs, surrogates, > U+10FFFF refused). */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned min;
	unsigned cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool gv_json_text_ok(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	for (size_t i = 0; i < len;) {
		size_t l = s[i] ? utf8_seq_len(s + i, len - i) : 0;
		if (!l)
			return false;
		i += l;
	}
	return true;
}

json_t *gv_json_string_lossy(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t bad = 0;
	for (size_t i = 0; i < len;) {
		size_t l = utf8_seq_len(s + i, len - i);
		if (!l) {
			bad++;
			l = 1;
		}
		i += l;
	}
	if (!bad)
		return json_stringn(len ? buf : "", len);
	/* Each bad byte grows from 1 to 3 bytes (EF BF BD). */
	if (bad > (SIZE_MAX - len) / 2)
		return NULL;
	char *out = malloc(len + 2 * bad + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t l = utf8_seq_len(s + i, len - i);
		if (!l) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, l);
		o += l;
		i += l;
	}
	json_t *j = json_stringn(out, o);
	free(out);
	return j;
}
