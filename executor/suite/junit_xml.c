/* A bounded scan of a JUnit XML report (executor/suite/junit_xml.h). */
#include "executor/suite/junit_xml.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Appends the code point cp as UTF-8 (a bad one as '?'). */
static size_t put_utf8(char *out, size_t o, size_t cap, uint32_t cp)
{
	char b[4];
	size_t n;
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		b[0] = '?', n = 1;
	else if (cp < 0x80)
		b[0] = (char)cp, n = 1;
	else if (cp < 0x800)
		b[0] = (char)(0xc0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	else if (cp < 0x10000)
		b[0] = (char)(0xe0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
		b[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	else
		b[0] = (char)(0xf0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), b[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
	if (o + n > cap)
		return o;
	memcpy(out + o, b, n);
	return o + n;
}

/* Decodes s[0..len) (entities) into out (cap bytes plus the NUL), cut at
 * cap. */
static void decode(const char *s, size_t len, char *out, size_t cap)
{
	static const struct {
		const char *name;
		char c;
	} named[] = { { "lt;", '<' }, { "gt;", '>' }, { "amp;", '&' }, { "quot;", '"' }, { "apos;", '\'' } };
	size_t o = 0;
	for (size_t i = 0; i < len && o < cap;) {
		if (s[i] != '&') {
			out[o++] = s[i] ? s[i] : '?';
			i++;
			continue;
		}
		bool done = false;
		for (size_t k = 0; k < sizeof(named) / sizeof(named[0]) && !done; k++) {
			size_t n = strlen(named[k].name);
			if (len - i - 1 >= n && !memcmp(s + i + 1, named[k].name, n)) {
				out[o++] = named[k].c;
				i += 1 + n;
				done = true;
			}
		}
		if (!done && i + 2 < len && s[i + 1] == '#') {
			bool hex = s[i + 2] == 'x';
			size_t j = i + (hex ? 3 : 2);
			uint32_t cp = 0;
			size_t digits = 0;
			for (; j < len && digits < 8; j++, digits++) {
				char c = s[j];
				int v = c >= '0' && c <= '9' ? c - '0' :
					hex && c >= 'a' && c <= 'f' ? c - 'a' + 10 :
					hex && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
				if (v < 0)
					break;
				cp = cp * (hex ? 16 : 10) + (uint32_t)v;
			}
			if (digits && j < len && s[j] == ';') {
				o = put_utf8(out, o, cap, cp);
				i = j + 1;
				done = true;
			}
		}
		if (!done) {
			out[o++] = '&';
			i++;
		}
	}
	out[o] = '\0';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The value of attribute name of the tag text t[0..len) (after '<': the
 * element's name, then name="value" pairs), decoded into out; false when
 * absent. */
static bool attr(const char *t, size_t len, const char *name, char *out, size_t cap)
{
	size_t i = 0, n = strlen(name);
	while (i < len && !is_space(t[i]) && t[i] != '/')
		i++;
	while (i < len) {
		while (i < len && (is_space(t[i]) || t[i] == '/'))
			i++;
		size_t k = i;
		while (i < len && t[i] != '=' && !is_space(t[i]))
			i++;
		size_t klen = i - k;
		while (i < len && is_space(t[i]))
			i++;
		if (i >= len || t[i] != '=')
			return false;
		i++;
		while (i < len && is_space(t[i]))
			i++;
		if (i >= len || (t[i] != '"' && t[i] != '\''))
			return false;
		char q = t[i++];
		const char *end = memchr(t + i, q, len - i);
		if (!end)
			return false;
		size_t vlen = (size_t)(end - (t + i));
		if (klen == n && !memcmp(t + k, name, n)) {
			decode(t + i, vlen, out, cap);
			return true;
		}
		i += vlen + 1;
	}
	return false;
}

/* Only blanks? */
static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!is_space(s[i]))
			return false;
	return true;
}

/* Is the tag text t[0..len) (after '<') the element name? */
static bool tag_is(const char *t, size_t len, const char *name)
{
	size_t n = strlen(name);
	return len >= n && !memcmp(t, name, n) && (len == n || is_space(t[n]) || t[n] == '/');
}

static const char *find(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	return n <= len ? memmem(hay, len, needle, n) : NULL;
}

/* Appends the text s[0..len) (entities decoded) to c's output. */
static void add_output(struct suite_xml_case *c, const char *s, size_t len)
{
	if (c->output_len >= EXEC_SUITE_OUTPUT_MAX)
		return;
	decode(s, len, c->output + c->output_len, EXEC_SUITE_OUTPUT_MAX - c->output_len);
	c->output_len += strlen(c->output + c->output_len);
}

/* Only blank lines and section rules ("----- Captured Out -----", what
 * pytest writes around an empty capture)? */
static bool empty_capture(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(s + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - s) : len;
		if (!blank(s + i, e - i) && !(e - i >= 3 && !memcmp(s + i, "---", 3)))
			return false;
		i = e + 1;
	}
	return true;
}

/* The text between two tags, or a CDATA section, inside the current
 * case: the first result child's (its message when it has no attribute,
 * and its traceback as output), or captured output. */
static void take_text(struct suite_xml_case *c, int where, const char *s, size_t len)
{
	if (!c || blank(s, len))
		return;
	if (where == 1 && !c->message[0])
		decode(s, len, c->message, EXEC_SUITE_MESSAGE_MAX);
	if (where == 1 || (where == 2 && !empty_capture(s, len)))
		add_output(c, s, len);
}

/* A time attribute in seconds ("0.012") as milliseconds. */
static uint64_t seconds_ms(const char *s)
{
	char *end = NULL;
	double v = strtod(s, &end);
	if (end == s || !(v >= 0) || v > 1e7)
		return 0;
	return (uint64_t)(v * 1000.0 + 0.5);
}

int suite_xml_scan_all(const char *xml, size_t len, struct suite_xml_case *cases, size_t max)
{
	if (max)
		memset(cases, 0, max * sizeof(*cases));
	int count = 0;
	struct suite_xml_case *c = NULL; /* the open case, when kept */
	bool in_case = false;
	int where = 0;                   /* 1: in a result child, 2: in system-out/err */
	const char *text_from = NULL;
	size_t i = 0;
	while (i < len) {
		const char *lt = memchr(xml + i, '<', len - i);
		if (!lt)
			break;
		size_t at = (size_t)(lt - xml);
		if (in_case && text_from)
			take_text(c, where, text_from, at - (size_t)(text_from - xml));
		text_from = NULL;
		const char *rest = xml + at + 1;
		size_t rlen = len - at - 1;
		if (rlen >= 3 && !memcmp(rest, "!--", 3)) {
			const char *e = find(rest + 3, rlen - 3, "-->");
			if (!e)
				return -1;
			i = (size_t)(e - xml) + 3;
			continue;
		}
		if (rlen >= 8 && !memcmp(rest, "![CDATA[", 8)) {
			const char *e = find(rest + 8, rlen - 8, "]]>");
			if (!e)
				return -1;
			if (in_case)
				take_text(c, where, rest + 8, (size_t)(e - (rest + 8)));
			i = (size_t)(e - xml) + 3;
			continue;
		}
		const char *gt = memchr(rest, '>', rlen);
		if (!gt)
			return -1;
		size_t tlen = (size_t)(gt - rest);
		bool closing = tlen && rest[0] == '/';
		bool self_closing = tlen && rest[tlen - 1] == '/';
		i = (size_t)(gt - xml) + 1;
		if (closing) {
			if (tag_is(rest + 1, tlen - 1, "testcase"))
				in_case = false, where = 0, c = NULL;
			else if (tag_is(rest + 1, tlen - 1, "failure") || tag_is(rest + 1, tlen - 1, "error") ||
				 tag_is(rest + 1, tlen - 1, "skipped") || tag_is(rest + 1, tlen - 1, "system-out") ||
				 tag_is(rest + 1, tlen - 1, "system-err"))
				where = 0;
			continue;
		}
		if (tag_is(rest, tlen, "testcase")) {
			c = (size_t)count < max ? &cases[count] : NULL;
			count++;
			if (c) {
				char t[32] = "";
				attr(rest, tlen, "name", c->name, EXEC_SUITE_NAME_MAX);
				attr(rest, tlen, "classname", c->classname, EXEC_SUITE_NAME_MAX);
				if (attr(rest, tlen, "time", t, sizeof(t) - 1))
					c->time_ms = seconds_ms(t);
				c->outcome = EXEC_SUITE_PASS;
			}
			in_case = !self_closing;
			where = 0;
			continue;
		}
		if (!in_case)
			continue;
		if (tag_is(rest, tlen, "system-out") || tag_is(rest, tlen, "system-err")) {
			where = self_closing ? 0 : 2;
			text_from = where ? gt + 1 : NULL;
			continue;
		}
		enum exec_suite_outcome o = tag_is(rest, tlen, "failure") ? EXEC_SUITE_FAIL :
					    tag_is(rest, tlen, "error")   ? EXEC_SUITE_ERROR :
					    tag_is(rest, tlen, "skipped") ? EXEC_SUITE_SKIPPED :
									    EXEC_SUITE_UNSET;
		if (o == EXEC_SUITE_UNSET)
			continue;
		/* The worst child wins: error over failure over skipped. */
		bool worse = c && (c->outcome == EXEC_SUITE_PASS || o == EXEC_SUITE_ERROR ||
				   (o == EXEC_SUITE_FAIL && c->outcome == EXEC_SUITE_SKIPPED));
		if (worse) {
			c->outcome = o;
			c->message[0] = '\0';
			attr(rest, tlen, "message", c->message, EXEC_SUITE_MESSAGE_MAX);
		}
		where = self_closing || !worse ? 0 : 1;
		text_from = where ? gt + 1 : NULL;
	}
	return count;
}

int suite_xml_scan(const char *xml, size_t len, struct suite_xml_case *first)
{
	return suite_xml_scan_all(xml, len, first, 1);
}
