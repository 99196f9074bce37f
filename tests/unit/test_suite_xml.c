/* Unit tests of gavel-suite's JUnit XML scan (executor/suite/junit_xml.c):
 * trimmed copies of the reports the four frameworks really write (pytest
 * 7.2's --junitxml in the xunit1 family, the JUnit 5 console launcher's
 * legacy TEST-junit-jupiter.xml, GoogleTest's --gtest_output=xml and
 * gavel_check.h's), then the scan's rules one by one: outcomes and which
 * child wins, entities, messages from text and CDATA, comments, cut
 * documents, counts and bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/suite/junit_xml.h"

static int scan(const char *xml, struct suite_xml_case *c)
{
	return suite_xml_scan(xml, strlen(xml), c);
}

/* ---- real reports ------------------------------------------------------ */

/* pytest 7.2.1: pytest -o junit_family=xunit1 --junitxml=r.xml test_calc.py::test_add */
static const char pytest_pass[] =
	"<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites><testsuite name=\"pytest\" errors=\"0\" "
	"failures=\"0\" skipped=\"0\" tests=\"1\" time=\"0.016\" timestamp=\"2026-12-02T16:23:07.301940\" "
	"hostname=\"vm\"><testcase classname=\"test_calc\" name=\"test_add\" file=\"test_calc.py\" line=\"3\" "
	"time=\"0.000\" /></testsuite></testsuites>";

/* ... test_calc.py::test_sub, whose assert carries a message. */
static const char pytest_fail[] =
	"<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites><testsuite name=\"pytest\" errors=\"0\" "
	"failures=\"1\" skipped=\"0\" tests=\"1\" time=\"0.018\" timestamp=\"2026-12-02T16:23:07.073067\" "
	"hostname=\"vm\"><testcase classname=\"test_calc\" name=\"test_sub\" file=\"test_calc.py\" line=\"6\" "
	"time=\"0.000\"><failure message=\"AssertionError: 2+3 &lt; 6 &amp; more&#10;assert 5 == 6&#10; +  "
	"where 5 = add(2, 3)\">def test_sub():\n"
	"&gt;       assert add(2, 3) == 6, \"2+3 &lt; 6 &amp; more\"\n"
	"E       AssertionError: 2+3 &lt; 6 &amp; more\n"
	"E       assert 5 == 6\n"
	"E        +  where 5 = add(2, 3)\n"
	"\n"
	"test_calc.py:8: AssertionError</failure></testcase></testsuite></testsuites>";

/* ... sk.py::test_skip, which calls pytest.skip("not today"). */
static const char pytest_skip[] =
	"<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites><testsuite name=\"pytest\" errors=\"0\" "
	"failures=\"0\" skipped=\"1\" tests=\"1\" time=\"0.014\" timestamp=\"2026-12-02T16:23:16.572937\" "
	"hostname=\"vm\"><testcase classname=\"sk\" name=\"test_skip\" file=\"sk.py\" line=\"1\" "
	"time=\"0.001\"><skipped type=\"pytest.skip\" message=\"not today\">/tmp/rep/sk.py:3: not "
	"today</skipped></testcase></testsuite></testsuites>";

/* JUnit 5 console launcher 1.9 (--select-method CalcTest#adds
 * --include-engine=junit-jupiter), TEST-junit-jupiter.xml; properties and
 * the stack trace trimmed. */
static const char junit5_fail[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<testsuite name=\"JUnit Jupiter\" tests=\"1\" skipped=\"0\" failures=\"1\" errors=\"0\" time=\"0.043\" "
	"hostname=\"vm\" timestamp=\"2026-12-02T16:23:08\">\n"
	"<properties>\n"
	"<property name=\"file.encoding\" value=\"UTF-8\"/>\n"
	"<property name=\"java.class.path\" value=\"/usr/share/java/junit-platform-console-standalone.jar\"/>\n"
	"<property name=\"line.separator\" value=\"\n"
	"\"/>\n"
	"<property name=\"user.dir\" value=\"/tmp/rep\"/>\n"
	"</properties>\n"
	"<testcase name=\"adds()\" classname=\"CalcTest\" time=\"0.014\">\n"
	"<failure message=\"expected: &lt;5&gt; but was: &lt;6&gt;\" "
	"type=\"org.opentest4j.AssertionFailedError\"><![CDATA[org.opentest4j.AssertionFailedError: expected: "
	"<5> but was: <6>\n"
	"\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)\n"
	"\tat CalcTest.adds(CalcTest.java:5)\n"
	"]]></failure>\n"
	"<system-out><![CDATA[\n"
	"unique-id: [engine:junit-jupiter]/[class:CalcTest]/[method:adds()]\n"
	"display-name: adds()\n"
	"]]></system-out>\n"
	"</testcase>\n"
	"<system-out><![CDATA[\n"
	"unique-id: [engine:junit-jupiter]\n"
	"display-name: JUnit Jupiter\n"
	"]]></system-out>\n"
	"</testsuite>\n";

/* GoogleTest 1.12 (Debian 12's libgtest-dev):
 * calc_test --gtest_filter=Calc.Adds --gtest_output=xml:r.xml */
static const char gtest_fail[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<testsuites tests=\"1\" failures=\"1\" disabled=\"0\" errors=\"0\" time=\"0\" "
	"timestamp=\"2026-12-02T16:23:13.116\" name=\"AllTests\">\n"
	"  <testsuite name=\"Calc\" tests=\"1\" failures=\"1\" disabled=\"0\" skipped=\"0\" errors=\"0\" "
	"time=\"0\" timestamp=\"2026-12-02T16:23:13.116\">\n"
	"    <testcase name=\"Adds\" file=\"calc_test.cpp\" line=\"4\" status=\"run\" result=\"completed\" "
	"time=\"0\" timestamp=\"2026-12-02T16:23:13.116\" classname=\"Calc\">\n"
	"      <failure message=\"calc_test.cpp:4&#x0A;Expected equality of these values:&#x0A;  add(2, "
	"3)&#x0A;    Which is: 5&#x0A;  6&#x0A;a &lt; b &amp; c\" type=\"\"><![CDATA[calc_test.cpp:4\n"
	"Expected equality of these values:\n"
	"  add(2, 3)\n"
	"    Which is: 5\n"
	"  6\n"
	"a < b & c]]></failure>\n"
	"    </testcase>\n"
	"  </testsuite>\n"
	"</testsuites>\n";

/* gavel_check.h's main, for GV_TEST(adds) { GV_CHECK_INT_EQ(add(2, 2), 5); }
 * and for a test that passes. */
static const char gavel_check_fail[] = "<?xml version=\"1.0\"?>\n"
				       "<testsuite name=\"c\">\n"
				       "<testcase name=\"adds\">\n"
				       "<failure message=\"test_c.c:3: add(2, 2) is 4, expected 5\"/>\n"
				       "</testcase>\n"
				       "</testsuite>\n";
static const char gavel_check_pass[] = "<?xml version=\"1.0\"?>\n"
				       "<testsuite name=\"c\">\n"
				       "<testcase name=\"ok\"/>\n"
				       "</testsuite>\n";

static void xml__pytest_reports__pass_fail_skip(void **state)
{
	(void)state;
	struct suite_xml_case c;
	assert_int_equal(scan(pytest_pass, &c), 1);
	assert_string_equal(c.name, "test_add");
	assert_string_equal(c.classname, "test_calc");
	assert_int_equal(c.outcome, EXEC_SUITE_PASS);
	assert_string_equal(c.message, "");

	assert_int_equal(scan(pytest_fail, &c), 1);
	assert_string_equal(c.name, "test_sub");
	assert_int_equal(c.outcome, EXEC_SUITE_FAIL);
	assert_string_equal(c.message, "AssertionError: 2+3 < 6 & more\nassert 5 == 6\n +  where 5 = add(2, 3)");

	assert_int_equal(scan(pytest_skip, &c), 1);
	assert_string_equal(c.name, "test_skip");
	assert_string_equal(c.classname, "sk");
	assert_int_equal(c.outcome, EXEC_SUITE_SKIPPED);
	assert_string_equal(c.message, "not today");
}

static void xml__junit5_legacy_report__failure_message_attr(void **state)
{
	(void)state;
	struct suite_xml_case c;
	assert_int_equal(scan(junit5_fail, &c), 1);
	assert_string_equal(c.name, "adds()");
	assert_string_equal(c.classname, "CalcTest");
	assert_int_equal(c.outcome, EXEC_SUITE_FAIL);
	assert_string_equal(c.message, "expected: <5> but was: <6>");
}

static void xml__gtest_report__failure_message_attr(void **state)
{
	(void)state;
	struct suite_xml_case c;
	assert_int_equal(scan(gtest_fail, &c), 1);
	assert_string_equal(c.name, "Adds");
	assert_string_equal(c.classname, "Calc");
	assert_int_equal(c.outcome, EXEC_SUITE_FAIL);
	assert_string_equal(c.message,
			    "calc_test.cpp:4\nExpected equality of these values:\n  add(2, 3)\n    Which is: 5\n  6\na < b & c");
}

static void xml__gavel_check_reports__fail_and_pass(void **state)
{
	(void)state;
	struct suite_xml_case c;
	assert_int_equal(scan(gavel_check_fail, &c), 1);
	assert_string_equal(c.name, "adds");
	assert_string_equal(c.classname, "");
	assert_int_equal(c.outcome, EXEC_SUITE_FAIL);
	assert_string_equal(c.message, "test_c.c:3: add(2, 2) is 4, expected 5");

	assert_int_equal(scan(gavel_check_pass, &c), 1);
	assert_string_equal(c.name, "ok");
	assert_int_equal(c.outcome, EXEC_SUITE_PASS);
	assert_string_equal(c.message, "");
}

/* ---- the scan's rules -------------------------------------------------- */

struct scan_case {
	const char *name;
	const char *xml;
	int count;
	const char *tname; /* NULL: not checked */
	enum exec_suite_outcome outcome;
	const char *message; /* NULL: not checked */
};

static const struct scan_case scan_cases[] = {
	{ "empty", "", 0, "", EXEC_SUITE_UNSET, "" },
	{ "no testcase", "<?xml version=\"1.0\"?><testsuite name=\"x\" tests=\"0\"></testsuite>", 0, "",
	  EXEC_SUITE_UNSET, "" },
	{ "self-closing testcase", "<testsuite><testcase name=\"a\"/></testsuite>", 1, "a", EXEC_SUITE_PASS, "" },
	{ "testcase with a space before />", "<testcase name=\"a\" />", 1, "a", EXEC_SUITE_PASS, "" },
	{ "skipped without a message", "<testcase name=\"a\"><skipped/></testcase>", 1, "a", EXEC_SUITE_SKIPPED,
	  "" },
	{ "error", "<testcase name=\"a\"><error message=\"boom\" type=\"E\">trace</error></testcase>", 1, "a",
	  EXEC_SUITE_ERROR, "boom" },
	{ "error over an earlier failure",
	  "<testcase name=\"a\"><failure message=\"f\"/><error message=\"e\"/></testcase>", 1, "a", EXEC_SUITE_ERROR,
	  "e" },
	{ "error over a later failure",
	  "<testcase name=\"a\"><error message=\"e\"/><failure message=\"f\"/></testcase>", 1, "a", EXEC_SUITE_ERROR,
	  "e" },
	{ "failure over an earlier skip",
	  "<testcase name=\"a\"><skipped message=\"s\"/><failure message=\"f\"/></testcase>", 1, "a",
	  EXEC_SUITE_FAIL, "f" },
	{ "failure over a later skip",
	  "<testcase name=\"a\"><failure message=\"f\"/><skipped message=\"s\"/></testcase>", 1, "a",
	  EXEC_SUITE_FAIL, "f" },
	{ "named and numeric entities",
	  "<testcase name=\"a&amp;b\"><failure message=\"&lt; &gt; &amp; &quot; &apos; &#65; &#x42; &#x6a; "
	  "&foo; &#; &#xZ; & end\"/></testcase>",
	  1, "a&b", EXEC_SUITE_FAIL, "< > & \" ' A B j &foo; &#; &#xZ; & end" },
	{ "entities to UTF-8", "<testcase name=\"a\"><failure message=\"&#233;&#x20AC;&#x1F600;\"/></testcase>", 1,
	  "a", EXEC_SUITE_FAIL, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" },
	{ "bad code points as ?", "<testcase name=\"a\"><failure message=\"&#0;&#xD800;&#x110000;\"/></testcase>",
	  1, "a", EXEC_SUITE_FAIL, "???" },
	{ "message from the text when no attribute",
	  "<testcase name=\"a\"><failure type=\"T\">a &lt; b</failure></testcase>", 1, "a", EXEC_SUITE_FAIL,
	  "a < b" },
	{ "message from CDATA when no attribute",
	  "<testcase name=\"a\"><failure type=\"T\"><![CDATA[x < y & z]]></failure></testcase>", 1, "a",
	  EXEC_SUITE_FAIL, "x < y & z" },
	{ "message attribute wins over CDATA",
	  "<testcase name=\"a\"><failure message=\"m\"><![CDATA[text]]></failure></testcase>", 1, "a",
	  EXEC_SUITE_FAIL, "m" },
	{ "system-out CDATA is no message",
	  "<testcase name=\"a\"><system-out><![CDATA[printed]]></system-out></testcase>", 1, "a", EXEC_SUITE_PASS,
	  "" },
	{ "comments are skipped",
	  "<testsuite><!-- <testcase name=\"fake\"><failure/></testcase> --><testcase name=\"real\"/></testsuite>",
	  1, "real", EXEC_SUITE_PASS, "" },
	{ "CDATA is not a tag", "<testsuite><![CDATA[<testcase name=\"fake\"/>]]><testcase name=\"real\"/></testsuite>",
	  1, "real", EXEC_SUITE_PASS, "" },
	{ "cut inside a tag", "<testsuite><testcase name=\"a\"", -1, NULL, 0, NULL },
	{ "cut inside a comment", "<testsuite><!-- no end", -1, NULL, 0, NULL },
	{ "cut inside CDATA", "<testsuite><testcase name=\"a\"><failure><![CDATA[no end", -1, NULL, 0, NULL },
	{ "cut after a tag", "<testsuite><testcase name=\"a\"><failure message=\"m\"/>", 1, "a", EXEC_SUITE_FAIL,
	  "m" },
	{ "two testcases: the first filled",
	  "<testsuite><testcase name=\"a\"/><testcase name=\"b\"><failure message=\"x\"/></testcase></testsuite>", 2,
	  "a", EXEC_SUITE_PASS, "" },
	{ "two testcases: the first's failure kept",
	  "<testsuite><testcase name=\"a\"><failure message=\"x\"/></testcase><testcase name=\"b\"><error "
	  "message=\"y\"/></testcase></testsuite>",
	  2, "a", EXEC_SUITE_FAIL, "x" },
	{ "single-quoted attributes", "<testcase classname='C' name='it \"q\"'><failure message='m'/></testcase>", 1,
	  "it \"q\"", EXEC_SUITE_FAIL, "m" },
	{ "spaces around =", "<testcase\n\tname = \"a\"\r\n/>", 1, "a", EXEC_SUITE_PASS, "" },
	{ "name not taken from classname", "<testcase classname=\"C\" name=\"n\"/>", 1, "n", EXEC_SUITE_PASS, "" },
	{ "no name attribute", "<testcase classname=\"C\"/>", 1, "", EXEC_SUITE_PASS, "" },
	{ "testsuites and testcasex are no testcase", "<testsuites><testcasex name=\"a\"/></testsuites>", 0, "",
	  EXEC_SUITE_UNSET, "" },
	{ "failure outside a testcase", "<testsuite><failure message=\"x\"/><testcase name=\"a\"/></testsuite>", 1,
	  "a", EXEC_SUITE_PASS, "" },
	{ "failure after the testcase closed",
	  "<testsuite><testcase name=\"a\"></testcase><failure message=\"x\"/></testsuite>", 1, "a",
	  EXEC_SUITE_PASS, "" },
};

static void xml__scan_table__counts_outcomes_messages(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(scan_cases) / sizeof(scan_cases[0]); i++) {
		const struct scan_case *t = &scan_cases[i];
		struct suite_xml_case c;
		int n = scan(t->xml, &c);
		if (n != t->count)
			fail_msg("%s: count %d, expected %d", t->name, n, t->count);
		if (t->tname && strcmp(c.name, t->tname) != 0)
			fail_msg("%s: name '%s', expected '%s'", t->name, c.name, t->tname);
		if (t->tname && c.outcome != t->outcome)
			fail_msg("%s: outcome %s, expected %s", t->name, exec_suite_outcome_name(c.outcome),
				 exec_suite_outcome_name(t->outcome));
		if (t->message && strcmp(c.message, t->message) != 0)
			fail_msg("%s: message '%s', expected '%s'", t->name, c.message, t->message);
	}
}

static void xml__nul_byte__shown_as_question_mark(void **state)
{
	(void)state;
	static const char xml[] = "<testcase name=\"a\0b\"><failure message=\"x\0y\"/></testcase>";
	struct suite_xml_case c;
	assert_int_equal(suite_xml_scan(xml, sizeof(xml) - 1, &c), 1);
	assert_string_equal(c.name, "a?b");
	assert_string_equal(c.message, "x?y");
}

static void xml__long_values__cut_and_terminated(void **state)
{
	(void)state;
	size_t n = 3 * EXEC_SUITE_MESSAGE_MAX;
	char *xml = malloc(2 * n + 256);
	assert_non_null(xml);
	struct suite_xml_case c;

	/* An attribute. */
	size_t o = (size_t)sprintf(xml, "<testcase name=\"");
	memset(xml + o, 'n', n), o += n;
	o += (size_t)sprintf(xml + o, "\"><failure message=\"");
	memset(xml + o, 'm', n), o += n;
	o += (size_t)sprintf(xml + o, "\"/></testcase>");
	assert_int_equal(suite_xml_scan(xml, o, &c), 1);
	assert_int_equal(strlen(c.name), EXEC_SUITE_NAME_MAX);
	assert_int_equal(strlen(c.message), EXEC_SUITE_MESSAGE_MAX);
	assert_int_equal(c.outcome, EXEC_SUITE_FAIL);

	/* Text, and CDATA. */
	for (int cdata = 0; cdata <= 1; cdata++) {
		o = (size_t)sprintf(xml, "<testcase name=\"a\"><error>%s", cdata ? "<![CDATA[" : "");
		memset(xml + o, 't', n), o += n;
		o += (size_t)sprintf(xml + o, "%s</error></testcase>", cdata ? "]]>" : "");
		assert_int_equal(suite_xml_scan(xml, o, &c), 1);
		assert_int_equal(c.outcome, EXEC_SUITE_ERROR);
		assert_int_equal(strlen(c.message), EXEC_SUITE_MESSAGE_MAX);
	}

	/* A multi-byte character never split at the cut. */
	o = (size_t)sprintf(xml, "<testcase name=\"a\"><failure message=\"");
	memset(xml + o, 'm', EXEC_SUITE_MESSAGE_MAX - 1), o += EXEC_SUITE_MESSAGE_MAX - 1;
	o += (size_t)sprintf(xml + o, "&#x20AC;\"/></testcase>");
	assert_int_equal(suite_xml_scan(xml, o, &c), 1);
	assert_int_equal(strlen(c.message), EXEC_SUITE_MESSAGE_MAX - 1);
	free(xml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xml__pytest_reports__pass_fail_skip),
		cmocka_unit_test(xml__junit5_legacy_report__failure_message_attr),
		cmocka_unit_test(xml__gtest_report__failure_message_attr),
		cmocka_unit_test(xml__gavel_check_reports__fail_and_pass),
		cmocka_unit_test(xml__scan_table__counts_outcomes_messages),
		cmocka_unit_test(xml__nul_byte__shown_as_question_mark),
		cmocka_unit_test(xml__long_values__cut_and_terminated),
	};
	return cmocka_run_group_tests_name("suite_xml", tests, NULL, NULL);
}
