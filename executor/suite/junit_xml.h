/* Reads the JUnit XML report of one test (pytest --junitxml, JUnit 5's
 * legacy XML, GoogleTest's xml output, gavel_check.h): a bounded scan of
 * the tags, not an XML parser. It looks at <testcase> elements only: their
 * name and classname attributes and whether a <failure>, <error> or
 * <skipped> child is in them, with that child's message attribute (or its
 * text when it has none), their time, and their captured output
 * (<system-out>, <system-err>). Entities (&lt; &gt; &amp; &quot; &apos; &#N;
 * &#xN;) are decoded in what it returns. Pure. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "executor/judge/suite_summary.h"

#define SUITE_XML_MAX (1u << 20) /* bytes of a report read */

struct suite_xml_case {
	char name[EXEC_SUITE_NAME_MAX + 1];
	char classname[EXEC_SUITE_NAME_MAX + 1];
	enum exec_suite_outcome outcome; /* pass, fail, error or skipped */
	char message[EXEC_SUITE_MESSAGE_MAX + 1];
	uint64_t time_ms;                /* its time attribute; 0 when none */
	char output[EXEC_SUITE_OUTPUT_MAX + 1]; /* its system-out and system-err, cut */
	size_t output_len;
};

/* Scans xml[0..len): returns the number of <testcase> elements (or -1 when
 * the document is cut inside a tag) and fills cases[0..max) with the
 * first max of them. */
int suite_xml_scan_all(const char *xml, size_t len, struct suite_xml_case *cases, size_t max);
/* The same with the first one only. */
int suite_xml_scan(const char *xml, size_t len, struct suite_xml_case *first);
