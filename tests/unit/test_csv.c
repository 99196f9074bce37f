/* Unit tests of the grades CSV's cells (frontend/csv.h): RFC 4180 quoting,
 * semicolons for semicolon-locale spreadsheets, and the formula-injection
 * rule for every cell. A table of cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "frontend/csv.h"

static void csv_cell__table__quotes_and_defuses_formulas(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "alice", "alice" },
		{ "", "" },
		{ "0.75", "0.75" },
		{ "2026-12-06T02:40:58.000Z", "2026-12-06T02:40:58.000Z" },
		{ "a,b", "\"a,b\"" },
		{ "say \"hi\"", "\"say \"\"hi\"\"\"" },
		/* A semicolon-locale spreadsheet splits at ';': quoted. */
		{ "x;=cmd|' /C calc'!A0", "\"x;=cmd|' /C calc'!A0\"" },
		{ "a;b", "\"a;b\"" },
		/* A formula start anywhere in the first byte: quoted, and made
		 * text with a single quote inside the quotes. */
		{ "=1+1", "\"'=1+1\"" },
		{ "+1", "\"'+1\"" },
		{ "-2+3", "\"'-2+3\"" },
		{ "@SUM(A1)", "\"'@SUM(A1)\"" },
		{ "\t=1", "\"'\t=1\"" },
		{ "\r=1", "\"'\r=1\"" },
		{ "=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\"" },
		{ "=a;b,c", "\"'=a;b,c\"" },
		/* Only the first byte starts a formula. */
		{ "a=1", "a=1" },
		{ "a-b", "a-b" },
		{ "line\nbreak", "\"line\nbreak\"" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[128];
		size_t n = fe_csv_cell(cases[i].in, out, sizeof(out));
		assert_int_not_equal(n, (size_t)-1);
		assert_string_equal(out, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
}

static void csv_cell__too_small__fails_without_writing_past(void **state)
{
	(void)state;
	char out[8];
	memset(out, 'X', sizeof(out));
	assert_int_equal(fe_csv_cell("=1234567", out, 6), (size_t)-1);
	assert_int_equal(out[6], 'X');
	assert_int_equal(fe_csv_cell("abc", out, 0), (size_t)-1);
	assert_int_equal(fe_csv_cell("abc", out, 4), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(fe_csv_cell("abc", out, 3), (size_t)-1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(csv_cell__table__quotes_and_defuses_formulas),
		cmocka_unit_test(csv_cell__too_small__fails_without_writing_past),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
