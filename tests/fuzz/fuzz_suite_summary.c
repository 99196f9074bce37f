/* libFuzzer target for what an instructor test suite's run leaves behind:
 * the group's summary (exec_suite_summary_parse, executor/judge/
 * suite_summary.h) that the host reads out of the sandbox, and the JUnit
 * XML scan of gavel-suite (suite_xml_scan, executor/suite/junit_xml.h) over
 * a report the tests wrote, both on the same bytes. Checks beyond "does
 * not crash": an accepted summary holds only what its grammar allows
 * (names, counts, outcomes, bounded NUL-terminated values) and written
 * back with exec_suite_escape it parses to the same summary; the scan's
 * strings are NUL-terminated inside their arrays and its count is -1 or
 * more, with an outcome exactly when a testcase was seen. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/judge/suite_summary.h"
#include "executor/suite/junit_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

/* The summary grammar's test name, written out again here. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > EXEC_SUITE_NAME_MAX || s[0] == ' ' || s[n - 1] == ' ')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '\\')
			return false;
	return true;
}

struct out {
	char *p;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		if (!(o->p = realloc(o->p, o->cap)))
			abort();
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void put_str(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* key:<escaped value>\n; the whole value must fit the escape buffer. */
static void put_escaped(struct out *o, const char *key, const char *v, size_t len)
{
	size_t cap = 4 * len + 1;
	char *esc = malloc(cap);
	if (!esc)
		abort();
	if (exec_suite_escape(v, len, esc, cap) != len)
		abort();
	put_str(o, key);
	put_str(o, ":");
	put_str(o, esc);
	put_str(o, "\n");
	free(esc);
}

/* Writes s back as gavel-suite would and parses it again. */
static void round_trip(const struct exec_suite_summary *s)
{
	struct out o = { 0 };
	char line[64];
	put_str(&o, "suite:1\n");
	put_str(&o, s->build_ok ? "build:ok\n" : "build:fail\n");
	if (s->build_message[0])
		put_escaped(&o, "build_message", s->build_message, strlen(s->build_message));
	for (size_t i = 0; i < s->ntests; i++) {
		const struct exec_suite_test_result *t = &s->tests[i];
		put_str(&o, "test:");
		put_str(&o, t->name);
		snprintf(line, sizeof(line), "\noutcome:%s\ntime_ms:%llu\nwall_ms:%llu\n",
			 exec_suite_outcome_name(t->outcome), (unsigned long long)t->time_ms,
			 (unsigned long long)t->wall_ms);
		put_str(&o, line);
		if (t->message[0])
			put_escaped(&o, "message", t->message, strlen(t->message));
		if (t->output)
			put_escaped(&o, "output", t->output, t->output_len);
	}
	snprintf(line, sizeof(line), "end:%zu\n", s->ntests);
	put_str(&o, line);
	/* The time lines the input may have left out can make it longer
	 * than the cap; only a summary within it must parse. */
	if (o.len <= EXEC_SUITE_SUMMARY_MAX) {
		struct exec_suite_summary b;
		struct gv_err err;
		if (exec_suite_summary_parse(o.p, o.len, &b, &err) != 0)
			abort();
		if (b.build_ok != s->build_ok || strcmp(b.build_message, s->build_message) != 0 ||
		    b.ntests != s->ntests)
			abort();
		for (size_t i = 0; i < s->ntests; i++) {
			const struct exec_suite_test_result *x = &s->tests[i], *y = &b.tests[i];
			if (strcmp(x->name, y->name) != 0 || x->outcome != y->outcome || x->time_ms != y->time_ms ||
			    x->wall_ms != y->wall_ms || strcmp(x->message, y->message) != 0 ||
			    !x->output != !y->output || x->output_len != y->output_len ||
			    (x->output && memcmp(x->output, y->output, x->output_len) != 0))
				abort();
		}
		exec_suite_summary_free(&b);
	}
	free(o.p);
}

static void check_summary(const char *buf, size_t len)
{
	struct exec_suite_summary s;
	struct gv_err err;
	if (exec_suite_summary_parse(buf, len, &s, &err) != 0) {
		if (s.tests || s.ntests)
			abort();
		exec_suite_summary_free(&s);
		return;
	}
	if (s.ntests > EXEC_SUITE_TESTS_MAX || (s.ntests && !s.tests))
		abort();
	if (!terminated(s.build_message, sizeof(s.build_message)))
		abort();
	for (size_t i = 0; i < s.ntests; i++) {
		const struct exec_suite_test_result *t = &s.tests[i];
		if (!terminated(t->name, sizeof(t->name)) || !name_ok(t->name))
			abort();
		if (t->outcome <= EXEC_SUITE_UNSET || t->outcome > EXEC_SUITE_CRASH)
			abort();
		if (!terminated(t->message, sizeof(t->message)))
			abort();
		if (t->output && (t->output_len > EXEC_SUITE_OUTPUT_MAX || t->output[t->output_len] != '\0'))
			abort();
		if (!t->output && t->output_len)
			abort();
	}
	round_trip(&s);
	exec_suite_summary_free(&s);
}

static void check_xml(const char *buf, size_t len)
{
	struct suite_xml_case c;
	int n = suite_xml_scan(buf, len < SUITE_XML_MAX ? len : SUITE_XML_MAX, &c);
	if (n < -1)
		abort();
	if (!terminated(c.name, sizeof(c.name)) || !terminated(c.classname, sizeof(c.classname)) ||
	    !terminated(c.message, sizeof(c.message)))
		abort();
	if (n == 0 && (c.outcome != EXEC_SUITE_UNSET || c.name[0] || c.message[0]))
		abort();
	if (n > 0 && c.outcome != EXEC_SUITE_PASS && c.outcome != EXEC_SUITE_FAIL && c.outcome != EXEC_SUITE_ERROR &&
	    c.outcome != EXEC_SUITE_SKIPPED)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	check_summary(buf, size);
	check_xml(buf, size);
	return 0;
}
