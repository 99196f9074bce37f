/* Unit tests of the JSON and base64 helpers (common/json.c): parse limits,
 * typed getters and their messages, bounded serialisation, base64 vectors. */
#include "common/json.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- parsing ---- */

struct parse_case {
	const char *text;
	size_t max_bytes;
	unsigned max_depth;
	int code; /* 0: accepted */
	const char *msg;
};

static void json_parse__table__limits_and_syntax(void **state)
{
	(void)state;
	static const struct parse_case cases[] = {
		{ "{\"a\": [1, 2, {\"b\": null}]}", 1024, 0, 0, NULL },
		{ "[]", 2, 0, 0, NULL },
		{ "[] ", 2, 0, GV_ELIMIT, "JSON: larger than 2 bytes" },
		{ "[[[]]]", 1024, 3, 0, NULL },
		{ "[[[[]]]]", 1024, 3, GV_ELIMIT, "JSON: nested deeper than 3 levels" },
		{ "{\"a\":{\"b\":[{}]}}", 1024, 3, GV_ELIMIT, "JSON: nested deeper than 3 levels" },
		/* Brackets inside strings, escaped quotes included, do not count. */
		{ "[\"[[[[\\\"[[[[\", \"{{{{\"]", 1024, 1, 0, NULL },
		{ "{\"a\": 1, \"a\": 2}", 1024, 0, GV_EINVAL,
		  "JSON line 1 column 12: duplicate object key near '\"a\"'" },
		{ "{\"a\": }", 1024, 0, GV_EINVAL, "JSON line 1 column 7: unexpected token near '}'" },
		{ "{\"a\": \"\\u0000\"}", 1024, 0, GV_EINVAL,
		  "JSON line 1 column 14: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"\\u0000\"'" },
		{ "42", 1024, 0, GV_EINVAL, "JSON line 1 column 2: '[' or '{' expected near '42'" },
		{ "", 1024, 0, GV_EINVAL, "JSON line 1 column 0: '[' or '{' expected near end of file" },
		{ "{}\n{}", 1024, 0, GV_EINVAL, "JSON line 2 column 1: end of file expected near '{'" },
		{ "{\"\x01\": 1}", 1024, 0, GV_EINVAL,
		  "JSON line 1 column 2: control character 0x1 near '\"'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *pc = &cases[i];
		struct gv_err err = { 0 };
		json_t *j = gv_json_parse(pc->text, strlen(pc->text), pc->max_bytes, pc->max_depth, &err);
		if (pc->code == 0) {
			if (!j)
				fail_msg("case %zu: %s", i, err.msg);
			json_decref(j);
			continue;
		}
		if (j)
			fail_msg("case %zu accepted", i);
		assert_int_equal(err.code, pc->code);
		if (strcmp(err.msg, pc->msg) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, err.msg, pc->msg);
	}
}

static void json_parse__default_depth__refuses_deep_nesting_cheaply(void **state)
{
	(void)state;
	/* 1 MB of '[' would make jansson recurse to its own cap; the pre-scan
	 * stops at the 65th. */
	size_t len = 1 << 20;
	char *deep = malloc(len);
	assert_non_null(deep);
	memset(deep, '[', len);
	struct gv_err err = { 0 };
	assert_null(gv_json_parse(deep, len, len, 0, &err));
	assert_int_equal(err.code, GV_ELIMIT);
	assert_string_equal(err.msg, "JSON: nested deeper than 64 levels");
	free(deep);

	char ok[2 * GV_JSON_DEFAULT_MAX_DEPTH + 1];
	memset(ok, '[', GV_JSON_DEFAULT_MAX_DEPTH);
	memset(ok + GV_JSON_DEFAULT_MAX_DEPTH, ']', GV_JSON_DEFAULT_MAX_DEPTH);
	json_t *j = gv_json_parse(ok, 2 * GV_JSON_DEFAULT_MAX_DEPTH, sizeof(ok), 0, &err);
	assert_non_null(j);
	json_decref(j);
	assert_int_equal(gv_json_depth(ok, 2 * GV_JSON_DEFAULT_MAX_DEPTH, 1000), 64);
	assert_int_equal(gv_json_depth(ok, 2 * GV_JSON_DEFAULT_MAX_DEPTH, 10), 11);
}

/* ---- getters ---- */

static const char doc[] =
	"{\"s\": \"text\", \"i\": 42, \"neg\": -7, \"r\": 2.5, \"r2\": 2.0, \"t\": true, \"n\": null,"
	" \"o\": {\"x\": 1}, \"a\": [1, 2, 3], \"big\": 9223372036854775807}";

static json_t *doc_json(void)
{
	struct gv_err err = { 0 };
	json_t *j = gv_json_parse(doc, strlen(doc), sizeof(doc), 0, &err);
	if (!j)
		fail_msg("%s", err.msg);
	return j;
}

static void json_get_string__cases__typed_with_field_errors(void **state)
{
	(void)state;
	json_t *j = doc_json();
	struct gv_err err = { 0 };
	const char *s = "preset";
	assert_int_equal(gv_json_get_string(j, "s", GV_JSON_REQUIRED, 100, &s, &err), 0);
	assert_string_equal(s, "text");

	s = "preset";
	assert_int_equal(gv_json_get_string(j, "missing", 0, 100, &s, &err), 1);
	assert_string_equal(s, "preset");
	assert_int_equal(gv_json_get_string(j, "n", GV_JSON_NULL_OK, 100, &s, &err), 1);
	assert_string_equal(s, "preset");

	static const struct {
		const char *key;
		unsigned flags;
		size_t max;
		int code;
		const char *msg;
	} bad[] = {
		{ "missing", GV_JSON_REQUIRED, 100, GV_EINVAL, "field 'missing': required" },
		{ "n", GV_JSON_REQUIRED | GV_JSON_NULL_OK, 100, GV_EINVAL, "field 'n': required" },
		{ "n", 0, 100, GV_EINVAL, "field 'n': expected string, got null" },
		{ "i", 0, 100, GV_EINVAL, "field 'i': expected string, got integer" },
		{ "o", 0, 100, GV_EINVAL, "field 'o': expected string, got object" },
		{ "s", 0, 3, GV_ELIMIT, "field 's': longer than 3 bytes" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(gv_json_get_string(j, bad[i].key, bad[i].flags, bad[i].max, &s, &err), -1);
		assert_int_equal(err.code, bad[i].code);
		assert_string_equal(err.msg, bad[i].msg);
	}
	assert_int_equal(gv_json_get_string(j, "s", 0, 4, &s, &err), 0); /* exactly at the cap */

	/* A NUL inside a string built in code (the parser refuses \u0000). */
	json_object_set_new(j, "nul", json_stringn("a\0b", 3));
	assert_int_equal(gv_json_get_string(j, "nul", 0, 100, &s, &err), -1);
	assert_string_equal(err.msg, "field 'nul': contains a NUL byte");

	json_t *arr = json_array();
	assert_int_equal(gv_json_get_string(arr, "s", 0, 100, &s, &err), -1);
	assert_string_equal(err.msg, "field 's': expected inside an object, got array");
	json_decref(arr);
	json_decref(j);
}

static void json_get_numbers__ranges__enforced(void **state)
{
	(void)state;
	json_t *j = doc_json();
	struct gv_err err = { 0 };
	int64_t i = 0;
	assert_int_equal(gv_json_get_int(j, "i", 0, 0, 100, &i, &err), 0);
	assert_int_equal(i, 42);
	assert_int_equal(gv_json_get_int(j, "big", 0, INT64_MIN, INT64_MAX, &i, &err), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(gv_json_get_int(j, "neg", 0, 0, 100, &i, &err), -1);
	assert_string_equal(err.msg, "field 'neg': -7 out of range 0..100");
	assert_int_equal(gv_json_get_int(j, "r2", 0, 0, 100, &i, &err), -1);
	assert_string_equal(err.msg, "field 'r2': expected integer, got number");
	assert_int_equal(gv_json_get_int(j, "t", 0, 0, 100, &i, &err), -1);
	assert_string_equal(err.msg, "field 't': expected integer, got boolean");

	double d = 0;
	assert_int_equal(gv_json_get_double(j, "r", 0, 0, 10, &d, &err), 0);
	assert_true(d == 2.5);
	assert_int_equal(gv_json_get_double(j, "i", 0, 0, 100, &d, &err), 0);
	assert_true(d == 42.0);
	assert_int_equal(gv_json_get_double(j, "r", 0, 0, 1, &d, &err), -1);
	assert_string_equal(err.msg, "field 'r': 2.5 out of range 0..1");
	assert_int_equal(gv_json_get_double(j, "s", 0, 0, 1, &d, &err), -1);
	assert_string_equal(err.msg, "field 's': expected number, got string");

	bool b = false;
	assert_int_equal(gv_json_get_bool(j, "t", GV_JSON_REQUIRED, &b, &err), 0);
	assert_true(b);
	assert_int_equal(gv_json_get_bool(j, "i", 0, &b, &err), -1);
	assert_string_equal(err.msg, "field 'i': expected boolean, got integer");
	json_decref(j);
}

static void json_get_containers__caps__enforced(void **state)
{
	(void)state;
	json_t *j = doc_json();
	struct gv_err err = { 0 };
	json_t *o = NULL, *a = NULL;
	assert_int_equal(gv_json_get_object(j, "o", 0, &o, &err), 0);
	assert_true(json_is_object(o));
	assert_int_equal(gv_json_get_object(j, "a", 0, &o, &err), -1);
	assert_string_equal(err.msg, "field 'a': expected object, got array");
	assert_int_equal(gv_json_get_array(j, "a", 0, 3, &a, &err), 0);
	assert_int_equal(json_array_size(a), 3);
	assert_int_equal(gv_json_get_array(j, "a", 0, 2, &a, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	assert_string_equal(err.msg, "field 'a': more than 2 items");
	assert_int_equal(gv_json_get_array(j, "none", GV_JSON_NULL_OK, 2, &a, &err), 1);

	static const char *const allowed[] = { "s", "i", "neg", "r", "r2", "t", "n", "o", "a", "big", NULL };
	assert_int_equal(gv_json_check_keys(j, allowed, &err), 0);
	json_object_set_new(j, "evil\n\"key\"", json_true());
	assert_int_equal(gv_json_check_keys(j, allowed, &err), -1);
	assert_string_equal(err.msg, "field 'evil\\x0a\"key\"': unknown");
	json_decref(j);
}

/* ---- serialisation ---- */

static void json_dump__caps__enforced(void **state)
{
	(void)state;
	json_t *j = json_pack("{s:i, s:s}", "a", 1, "b", "x\"y");
	assert_non_null(j);
	struct gv_err err = { 0 };
	char buf[64];
	size_t len = 0;
	assert_int_equal(gv_json_dump_buf(j, JSON_COMPACT | JSON_SORT_KEYS, buf, sizeof(buf), &len, &err), 0);
	assert_string_equal(buf, "{\"a\":1,\"b\":\"x\\\"y\"}");
	assert_int_equal(len, strlen(buf));
	/* 18 bytes need 19 with the NUL. */
	assert_int_equal(gv_json_dump_buf(j, JSON_COMPACT | JSON_SORT_KEYS, buf, 18, &len, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	assert_string_equal(buf, "");
	assert_int_equal(gv_json_dump_buf(j, JSON_COMPACT | JSON_SORT_KEYS, buf, 19, &len, &err), 0);

	char *s = gv_json_dump(j, JSON_COMPACT | JSON_SORT_KEYS, 18, &len, &err);
	assert_non_null(s);
	assert_string_equal(s, "{\"a\":1,\"b\":\"x\\\"y\"}");
	assert_int_equal(len, 18);
	free(s);
	assert_null(gv_json_dump(j, JSON_COMPACT, 17, &len, &err));
	assert_int_equal(err.code, GV_ELIMIT);
	assert_string_equal(err.msg, "JSON dump: 18 bytes, more than 17");
	json_decref(j);

	json_t *str = json_string("top");
	s = gv_json_dump(str, 0, 100, NULL, &err);
	assert_string_equal(s, "\"top\"");
	free(s);
	json_decref(str);
}

/* ---- base64 ---- */

static void b64__rfc4648_vectors__round_trip(void **state)
{
	(void)state;
	static const char *const vec[][2] = {
		{ "", "" },           { "f", "Zg==" },          { "fo", "Zm8=" },
		{ "foo", "Zm9v" },     { "foob", "Zm9vYg==" },   { "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	struct gv_err err = { 0 };
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t len = 99;
		char *enc = gv_b64_encode(vec[i][0], strlen(vec[i][0]), &len, &err);
		assert_non_null(enc);
		assert_string_equal(enc, vec[i][1]);
		assert_int_equal(len, strlen(vec[i][1]));
		free(enc);
		unsigned char *dec = gv_b64_decode(vec[i][1], strlen(vec[i][1]), 100, &len, &err);
		assert_non_null(dec);
		assert_int_equal(len, strlen(vec[i][0]));
		assert_string_equal((char *)dec, vec[i][0]);
		free(dec);
	}
	unsigned char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	size_t elen, dlen;
	char *enc = gv_b64_encode(all, sizeof(all), &elen, &err);
	assert_non_null(enc);
	unsigned char *dec = gv_b64_decode(enc, elen, sizeof(all), &dlen, &err);
	assert_non_null(dec);
	assert_int_equal(dlen, sizeof(all));
	assert_memory_equal(dec, all, sizeof(all));
	free(enc);
	free(dec);
}

struct b64_case {
	const char *in;
	size_t inlen; /* 0: strlen */
	size_t max_out;
	int code; /* 0: accepted */
	const char *want;
};

static void b64_decode__table__lenient_whitespace_strict_alphabet(void **state)
{
	(void)state;
	static const struct b64_case cases[] = {
		{ "Zg", 0, 100, 0, "f" },                   /* unpadded */
		{ "Zm9vYg", 0, 100, 0, "foob" },
		{ "Zm9v\nYmFy\n", 0, 100, 0, "foobar" },    /* wrapped lines */
		{ " Zm9v\r\n\tYmE=\n", 0, 100, 0, "fooba" },
		{ "Zm9vYmFy", 0, 6, 0, "foobar" },          /* exactly at the cap */
		{ "Zm9vYmFy", 0, 5, GV_ELIMIT, NULL },
		{ "Zm9vYmE=", 0, 4, GV_ELIMIT, NULL },
		{ "Zm9v!", 0, 100, GV_EINVAL, NULL },
		{ "Z", 0, 100, GV_EINVAL, NULL },
		{ "Zg=", 0, 100, GV_EINVAL, NULL },
		{ "Zg===", 0, 100, GV_EINVAL, NULL },
		{ "Zm9v=Zm9v", 0, 100, GV_EINVAL, NULL },
		{ "-_-_", 0, 100, GV_EINVAL, NULL },        /* URL-safe alphabet */
		{ "Zm9v\0YmFy", 9, 100, GV_EINVAL, NULL },  /* NUL is not whitespace */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct b64_case *bc = &cases[i];
		struct gv_err err = { 0 };
		size_t len = 0;
		size_t inlen = bc->inlen ? bc->inlen : strlen(bc->in);
		unsigned char *out = gv_b64_decode(bc->in, inlen, bc->max_out, &len, &err);
		if (bc->code == 0) {
			if (!out)
				fail_msg("case %zu: %s", i, err.msg);
			assert_int_equal(len, strlen(bc->want));
			assert_string_equal((char *)out, bc->want);
			free(out);
		} else {
			if (out)
				fail_msg("case %zu accepted", i);
			assert_int_equal(err.code, bc->code);
		}
	}
}

/* Text a jsonb string carries exactly: UTF-8, no NUL. */
static void text_ok__table__utf8_without_nul(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t len;
		bool ok;
	} cases[] = {
		{ "", 0, true },           { "abc\n", 4, true },        { "\xc3\xa9", 2, true },
		{ "a\0b", 3, false },       { "\xff", 1, false },        { "\xc3", 1, false },
		{ "\xed\xa0\x80", 3, false }, { "\xc0\xaf", 2, false },    { "\xf0\x9f\x98\x80", 4, true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (gv_json_text_ok(cases[i].s, cases[i].len) != cases[i].ok)
			fail_msg("case %zu: want %d", i, cases[i].ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_parse__table__limits_and_syntax),
		cmocka_unit_test(json_parse__default_depth__refuses_deep_nesting_cheaply),
		cmocka_unit_test(json_get_string__cases__typed_with_field_errors),
		cmocka_unit_test(json_get_numbers__ranges__enforced),
		cmocka_unit_test(json_get_containers__caps__enforced),
		cmocka_unit_test(json_dump__caps__enforced),
		cmocka_unit_test(b64__rfc4648_vectors__round_trip),
		cmocka_unit_test(b64_decode__table__lenient_whitespace_strict_alphabet),
		cmocka_unit_test(text_ok__table__utf8_without_nul),
	};
	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
