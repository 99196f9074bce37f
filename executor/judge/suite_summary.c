/* The summary grammar of an instructor test suite's group
 * (executor/judge/suite_summary.h). */
#include "executor/judge/suite_summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/sandbox/record.h"

static const char *const outcome_names[] = {
	[EXEC_SUITE_UNSET] = "unset",     [EXEC_SUITE_PASS] = "pass",       [EXEC_SUITE_FAIL] = "fail",
	[EXEC_SUITE_ERROR] = "error",     [EXEC_SUITE_SKIPPED] = "skipped", [EXEC_SUITE_TIMEOUT] = "timeout",
	[EXEC_SUITE_CRASH] = "crash",
};

const char *exec_suite_outcome_name(enum exec_suite_outcome o)
{
	return (size_t)o < sizeof(outcome_names) / sizeof(outcome_names[0]) ? outcome_names[o] : "unset";
}

enum exec_suite_outcome exec_suite_outcome_of(const char *s, size_t len)
{
	for (size_t i = EXEC_SUITE_PASS; i < sizeof(outcome_names) / sizeof(outcome_names[0]); i++)
		if (strlen(outcome_names[i]) == len && !memcmp(outcome_names[i], s, len))
			return (enum exec_suite_outcome)i;
	return EXEC_SUITE_UNSET;
}

size_t exec_suite_escape(const char *in, size_t len, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i = 0;
	if (cap == 0)
		return 0;
	for (; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		char esc[4];
		size_t n;
		if (c == '\\') {
			esc[0] = '\\', esc[1] = '\\', n = 2;
		} else if (c == '\n') {
			esc[0] = '\\', esc[1] = 'n', n = 2;
		} else if (c < 0x20 || c == 0x7f) {
			esc[0] = '\\', esc[1] = 'x', esc[2] = hex[c >> 4], esc[3] = hex[c & 15], n = 4;
		} else {
			esc[0] = (char)c, n = 1;
		}
		if (o + n >= cap)
			break;
		memcpy(out + o, esc, n);
		o += n;
	}
	out[o] = '\0';
	return i;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Unescapes v[0..len) into out (at most cap bytes, NUL added after them:
 * out holds cap + 1); *n gets the length. */
static int unescape(const char *v, size_t len, char *out, size_t cap, size_t *n, struct gv_err *err)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		char c = v[i];
		if (c == '\\') {
			if (i + 1 >= len)
				return gv_err_set(err, GV_EPROTO, "summary: a value ends in a lone backslash");
			char e = v[++i];
			if (e == '\\') {
				c = '\\';
			} else if (e == 'n') {
				c = '\n';
			} else if (e == 'x' && i + 2 < len && hexval(v[i + 1]) >= 0 && hexval(v[i + 2]) >= 0) {
				c = (char)(hexval(v[i + 1]) << 4 | hexval(v[i + 2]));
				i += 2;
			} else {
				return gv_err_set(err, GV_EPROTO, "summary: a bad escape in a value");
			}
		} else if ((unsigned char)c < 0x20 || c == 0x7f) {
			return gv_err_set(err, GV_EPROTO, "summary: an unescaped control byte in a value");
		}
		if (o >= cap)
			return gv_err_set(err, GV_EPROTO, "summary: a value longer than %zu bytes", cap);
		out[o++] = c;
	}
	out[o] = '\0';
	*n = o;
	return 0;
}

/* A text value as a C string: NUL bytes shown as '?'. */
static int text(const struct exec_record_field *f, char *out, size_t cap, struct gv_err *err)
{
	size_t n;
	if (unescape(f->value, f->value_len, out, cap, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!out[i])
			out[i] = '?';
	return 0;
}

void exec_suite_summary_free(struct exec_suite_summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->tests && i < s->ntests; i++)
		free(s->tests[i].output);
	free(s->tests);
	s->tests = NULL;
	s->ntests = 0;
}

static int field_of_test(struct exec_suite_test_result *t, const struct exec_record_field *f, struct gv_err *err)
{
	if (exec_record_key_is(f, "outcome")) {
		if (t->outcome != EXEC_SUITE_UNSET)
			return gv_err_set(err, GV_EPROTO, "summary: test '%s' has two outcomes", t->name);
		t->outcome = exec_suite_outcome_of(f->value, f->value_len);
		if (t->outcome == EXEC_SUITE_UNSET)
			return gv_err_set(err, GV_EPROTO, "summary: test '%s' has an unknown outcome", t->name);
		return 0;
	}
	if (exec_record_key_is(f, "time_ms"))
		return exec_record_parse_u64(f->value, f->value_len, EXEC_RECORD_MS_MAX, &t->time_ms, err);
	if (exec_record_key_is(f, "wall_ms"))
		return exec_record_parse_u64(f->value, f->value_len, EXEC_RECORD_MS_MAX, &t->wall_ms, err);
	if (exec_record_key_is(f, "message"))
		return text(f, t->message, EXEC_SUITE_MESSAGE_MAX, err);
	if (exec_record_key_is(f, "output")) {
		if (t->output)
			return gv_err_set(err, GV_EPROTO, "summary: test '%s' has two outputs", t->name);
		if (!(t->output = malloc(EXEC_SUITE_OUTPUT_MAX + 1)))
			return gv_err_errno(err, "malloc");
		return unescape(f->value, f->value_len, t->output, EXEC_SUITE_OUTPUT_MAX, &t->output_len, err);
	}
	return gv_err_set(err, GV_EPROTO, "summary: unexpected key '%.*s' in a test", (int)f->key_len, f->key);
}

bool exec_suite_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > EXEC_SUITE_NAME_MAX || s[0] == ' ' || s[len - 1] == ' ')
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '\\')
			return false;
	return true;
}

static int parse(const char *buf, size_t len, struct exec_suite_summary *out, struct gv_err *err)
{
	size_t pos = 0;
	struct exec_record_field f;
	int rc = exec_record_next(buf, len, &pos, &f, err);
	if (rc <= 0 || !exec_record_key_is(&f, "suite") || f.value_len != 1 || f.value[0] != '1')
		return rc < 0 ? -1 : gv_err_set(err, GV_EPROTO, "summary: does not start with suite:1");
	if ((rc = exec_record_next(buf, len, &pos, &f, err)) <= 0 || !exec_record_key_is(&f, "build"))
		return rc < 0 ? -1 : gv_err_set(err, GV_EPROTO, "summary: no build line");
	if (f.value_len == 2 && !memcmp(f.value, "ok", 2))
		out->build_ok = true;
	else if (!(f.value_len == 4 && !memcmp(f.value, "fail", 4)))
		return gv_err_set(err, GV_EPROTO, "summary: build is neither ok nor fail");
	if (!(out->tests = calloc(EXEC_SUITE_TESTS_MAX, sizeof(*out->tests))))
		return gv_err_errno(err, "calloc");
	struct exec_suite_test_result *t = NULL;
	while ((rc = exec_record_next(buf, len, &pos, &f, err)) > 0) {
		if (exec_record_key_is(&f, "end")) {
			uint64_t n;
			if (exec_record_parse_u64(f.value, f.value_len, EXEC_SUITE_TESTS_MAX, &n, err) < 0)
				return -1;
			if (n != out->ntests)
				return gv_err_set(err, GV_EPROTO, "summary: end says %llu tests, %zu were given",
						  (unsigned long long)n, out->ntests);
			if (t && t->outcome == EXEC_SUITE_UNSET)
				return gv_err_set(err, GV_EPROTO, "summary: test '%s' has no outcome", t->name);
			if (pos != len)
				return gv_err_set(err, GV_EPROTO, "summary: bytes after the end line");
			return 0;
		}
		if (exec_record_key_is(&f, "build_message")) {
			if (t)
				return gv_err_set(err, GV_EPROTO, "summary: build_message after a test");
			if (text(&f, out->build_message, EXEC_SUITE_MESSAGE_MAX, err) < 0)
				return -1;
			continue;
		}
		if (exec_record_key_is(&f, "test")) {
			if (t && t->outcome == EXEC_SUITE_UNSET)
				return gv_err_set(err, GV_EPROTO, "summary: test '%s' has no outcome", t->name);
			if (out->ntests >= EXEC_SUITE_TESTS_MAX)
				return gv_err_set(err, GV_EPROTO, "summary: more than %d tests", EXEC_SUITE_TESTS_MAX);
			if (!exec_suite_name_ok(f.value, f.value_len))
				return gv_err_set(err, GV_EPROTO, "summary: a bad test name");
			t = &out->tests[out->ntests++];
			memcpy(t->name, f.value, f.value_len);
			t->name[f.value_len] = '\0';
			continue;
		}
		if (!t)
			return gv_err_set(err, GV_EPROTO, "summary: '%.*s' before any test", (int)f.key_len, f.key);
		if (field_of_test(t, &f, err) < 0)
			return -1;
	}
	return rc < 0 ? -1 : gv_err_set(err, GV_EPROTO, "summary: no end line");
}

int exec_suite_summary_parse(const char *buf, size_t len, struct exec_suite_summary *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (len > EXEC_SUITE_SUMMARY_MAX)
		return gv_err_set(err, GV_EPROTO, "summary: longer than %d bytes", EXEC_SUITE_SUMMARY_MAX);
	if (parse(buf, len, out, err) < 0) {
		exec_suite_summary_free(out);
		return -1;
	}
	return 0;
}
