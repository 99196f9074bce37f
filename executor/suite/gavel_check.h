/* gavel_check.h: the plain C test harness of Gavel's instructor test
 * suites (framework `c`, executor/suite/README.md). gavel-suite places it
 * beside the test file; the test file includes it once:
 *
 *   #include "gavel_check.h"
 *   #include "calc.h"
 *
 *   GV_TEST(adds) { GV_CHECK_INT_EQ(add(2, 2), 4); }
 *   GV_TEST(subtracts) { GV_CHECK(sub(5, 3) == 2); }
 *
 * and supplies no main: this header's main runs the one test named on its
 * command line (`PROGRAM NAME REPORT`) and, only once the test's function
 * has returned, writes REPORT: a JUnit XML document with that one test
 * case, failed with the first failed check's message. A test whose process
 * ends any other way (exit, a crash, a signal) writes no report and fails. */
#ifndef GAVEL_CHECK_H
#define GAVEL_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GV_CHECK_MAX_TESTS 256

struct gv_check_test {
	const char *name;
	void (*fn)(void);
};

static struct gv_check_test gv_check_tests[GV_CHECK_MAX_TESTS];
static int gv_check_ntests;
static char gv_check_failure[512];

static void gv_check_register(const char *name, void (*fn)(void))
{
	if (gv_check_ntests < GV_CHECK_MAX_TESTS) {
		gv_check_tests[gv_check_ntests].name = name;
		gv_check_tests[gv_check_ntests].fn = fn;
		gv_check_ntests++;
	}
}

static void gv_check_fail(const char *file, int line, const char *what)
{
	if (!gv_check_failure[0])
		snprintf(gv_check_failure, sizeof(gv_check_failure), "%s:%d: %s", file, line, what);
}

#define GV_TEST(name)                                                                     \
	static void gv_test_##name(void);                                                 \
	__attribute__((constructor)) static void gv_test_register_##name(void)            \
	{                                                                                 \
		gv_check_register(#name, gv_test_##name);                                 \
	}                                                                                 \
	static void gv_test_##name(void)

#define GV_CHECK(cond)                                                                    \
	do {                                                                              \
		if (!(cond))                                                              \
			gv_check_fail(__FILE__, __LINE__, "check failed: " #cond);        \
	} while (0)

#define GV_CHECK_INT_EQ(actual, expected)                                                 \
	do {                                                                              \
		long long gv_a_ = (long long)(actual), gv_e_ = (long long)(expected);     \
		if (gv_a_ != gv_e_) {                                                     \
			char gv_m_[256];                                                  \
			snprintf(gv_m_, sizeof(gv_m_), "%s is %lld, expected %lld", #actual, \
				 gv_a_, gv_e_);                                           \
			gv_check_fail(__FILE__, __LINE__, gv_m_);                         \
		}                                                                         \
	} while (0)

#define GV_CHECK_STR_EQ(actual, expected)                                                 \
	do {                                                                              \
		const char *gv_a_ = (actual), *gv_e_ = (expected);                        \
		if (!gv_a_ || strcmp(gv_a_, gv_e_) != 0)                                  \
			gv_check_fail(__FILE__, __LINE__, "strings differ: " #actual);    \
	} while (0)

static void gv_check_xml_attr(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '&')
			fputs("&amp;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c < 0x20)
			fputc(' ', f);
		else
			fputc(c, f);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s TEST REPORT\n", argv[0]);
		return 2;
	}
	for (int i = 0; i < gv_check_ntests; i++) {
		if (strcmp(gv_check_tests[i].name, argv[1]) != 0)
			continue;
		gv_check_tests[i].fn();
		FILE *f = fopen(argv[2], "w");
		if (!f)
			return 2;
		fputs("<?xml version=\"1.0\"?>\n<testsuite name=\"c\">\n<testcase name=\"", f);
		gv_check_xml_attr(f, argv[1]);
		if (gv_check_failure[0]) {
			fputs("\">\n<failure message=\"", f);
			gv_check_xml_attr(f, gv_check_failure);
			fputs("\"/>\n</testcase>\n", f);
		} else {
			fputs("\"/>\n", f);
		}
		fputs("</testsuite>\n", f);
		return fclose(f) == 0 ? 0 : 2;
	}
	fprintf(stderr, "no test named %s\n", argv[1]);
	return 2;
}

#endif
