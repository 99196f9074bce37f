/* Unit tests of the reconnect backoff (common/backoff.c) and of the
 * password redaction of database URLs (common/pg.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>

#include "common/backoff.h"
#include "common/pg.h"

static void backoff__doubles__until_cap(void **state)
{
	(void)state;
	long want[] = { 100, 200, 400, 800, 1600, 3200, 5000, 5000 };
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(gv_backoff_delay_ms(i, 100, 5000), want[i]);
}

static void backoff__huge_attempt__no_overflow(void **state)
{
	(void)state;
	assert_int_equal(gv_backoff_delay_ms(1000, 100, 5000), 5000);
	assert_int_equal(gv_backoff_delay_ms(UINT_MAX, 1, LONG_MAX), LONG_MAX);
	assert_true(gv_backoff_delay_ms(62, 1, LONG_MAX) > 0);
}

static void backoff__bad_inputs__zero_or_cap(void **state)
{
	(void)state;
	assert_int_equal(gv_backoff_delay_ms(3, 0, 5000), 0);
	assert_int_equal(gv_backoff_delay_ms(3, 100, 0), 0);
	assert_int_equal(gv_backoff_delay_ms(0, 9000, 5000), 5000);
}

static void backoff__jitter__within_half_and_full(void **state)
{
	(void)state;
	unsigned seed = 12345;
	for (int i = 0; i < 1000; i++) {
		long j = gv_backoff_jitter_ms(1000, &seed);
		assert_true(j >= 500 && j <= 1000);
	}
	assert_int_equal(gv_backoff_jitter_ms(0, &seed), 0);
	assert_int_equal(gv_backoff_jitter_ms(1, &seed), 1);
	assert_int_equal(gv_backoff_jitter_ms(-5, &seed), 0);
}

struct redact_case {
	const char *in;
	const char *out;
};

static void pg_url__redact__hides_passwords(void **state)
{
	(void)state;
	static const struct redact_case cases[] = {
		{ "postgresql://u:secret@127.0.0.1:5433/gavel", "postgresql://u:***@127.0.0.1:5433/gavel" },
		{ "postgres://u:s@cr@t@h/db", "postgres://u:***@h/db" },
		{ "postgresql://u@h/db", "postgresql://u@h/db" },
		{ "postgresql://h/db?password=secret&sslmode=disable", "postgresql://h/db?password=***&sslmode=disable" },
		{ "postgresql:///db?host=/tmp", "postgresql:///db?host=/tmp" },
		{ "host=h password=secret dbname=x", "host=h password=*** dbname=x" },
		{ "host=h password = 'se cret' dbname=x", "host=h password=*** dbname=x" },
		{ "password=secret", "password=***" },
		{ "", "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[256];
		gv_pg_url_redact(cases[i].in, out, sizeof(out));
		assert_string_equal(out, cases[i].out);
	}
	char small[8];
	gv_pg_url_redact("postgresql://u:secret@h/db", small, sizeof(small));
	assert_int_equal(strlen(small), 7);
	assert_null(strstr(small, "secret"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(backoff__doubles__until_cap),
		cmocka_unit_test(backoff__huge_attempt__no_overflow),
		cmocka_unit_test(backoff__bad_inputs__zero_or_cap),
		cmocka_unit_test(backoff__jitter__within_half_and_full),
		cmocka_unit_test(pg_url__redact__hides_passwords),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
