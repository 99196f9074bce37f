/* Unit tests of the parser of var/local.env (cli/local_stack.c), the file
 * `make run` leaves for the CLI: a table of texts and what each gives, and
 * the limits. The file handling itself is tested against a real local stack
 * in tests/integration/test_cli_local_stack.sh. */
#include "cli/local_stack.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { DB, REDIS, URL, KEY }; /* the order of the keys in struct cli_local_values */

struct parse_case {
	const char *name;
	const char *text;
	int rc;
	const char *db, *redis, *url, *key; /* expected values; NULL: "" */
	const char *err_has;                /* substring of the message when rc == -1 */
};

static const struct parse_case parse_cases[] = {
	{ "empty text", "", 0, NULL, NULL, NULL, NULL, NULL },
	{ "what gavel-local writes",
	  "# Written by gavel-local start\nGAVEL_DATABASE_URL=postgresql://gavel_owner:ab12@127.0.0.1:5433/gavel\n"
	  "GAVEL_REDIS_URL=redis://127.0.0.1:6380\nGAVEL_URL=http://127.0.0.1:2358\nGAVEL_API_KEY=gv_x\n",
	  0, "postgresql://gavel_owner:ab12@127.0.0.1:5433/gavel", "redis://127.0.0.1:6380", "http://127.0.0.1:2358",
	  "gv_x", NULL },
	{ "no final newline, CRLF, blank lines", "\r\nGAVEL_URL=http://h:1\r\n\nGAVEL_API_KEY=k", 0, NULL, NULL,
	  "http://h:1", "k", NULL },
	{ "the value is the rest of the line, '=' included", "GAVEL_API_KEY=a=b c", 0, NULL, NULL, NULL, "a=b c", NULL },
	{ "unknown keys are ignored", "GAVEL_SOMETHING_NEW=1\nGAVEL_URL=u\n", 0, NULL, NULL, "u", NULL, NULL },
	{ "a key is matched whole", "GAVEL_URLX=1\nGAVEL_UR=2\n", 0, NULL, NULL, NULL, NULL, NULL },
	{ "a later line wins", "GAVEL_URL=a\nGAVEL_URL=b\n", 0, NULL, NULL, "b", NULL, NULL },
	{ "an empty value", "GAVEL_URL=\n", 0, NULL, NULL, NULL, NULL, NULL },
	{ "a line without '='", "GAVEL_URL=a\nnonsense\n", -1, NULL, NULL, NULL, NULL, "line 2 is not KEY=VALUE" },
	{ "an empty key", "=value\n", -1, NULL, NULL, NULL, NULL, "line 1 is not KEY=VALUE" },
	{ "a comment after spaces is not a comment", "  # x\n", -1, NULL, NULL, NULL, NULL, "line 1" },
};

static void check_value(const char *case_name, const char *key, const char *got, const char *want)
{
	if (strcmp(got, want ? want : "") != 0)
		fail_msg("%s: %s is \"%s\", want \"%s\"", case_name, key, got, want ? want : "");
}

static void local_parse__table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct cli_local_values v;
		struct gv_err err = { 0 };
		int rc = cli_local_parse(c->text, strlen(c->text), &v, &err);
		if (rc != c->rc)
			fail_msg("%s: rc %d, want %d (%s)", c->name, rc, c->rc, err.msg);
		if (rc != 0) {
			if (!strstr(err.msg, c->err_has))
				fail_msg("%s: message \"%s\" lacks \"%s\"", c->name, err.msg, c->err_has);
			continue;
		}
		check_value(c->name, "database", v.v[DB], c->db);
		check_value(c->name, "redis", v.v[REDIS], c->redis);
		check_value(c->name, "url", v.v[URL], c->url);
		check_value(c->name, "key", v.v[KEY], c->key);
	}
}

static void local_parse__value_at_the_limit__refused(void **state)
{
	(void)state;
	char text[CLI_LOCAL_VALUE_MAX + 64];
	struct cli_local_values v;
	struct gv_err err = { 0 };
	/* CLI_LOCAL_VALUE_MAX - 1 bytes fit with their NUL; one more does not. */
	int n = snprintf(text, sizeof(text), "GAVEL_API_KEY=%0*d\n", CLI_LOCAL_VALUE_MAX - 1, 0);
	assert_int_equal(cli_local_parse(text, (size_t)n, &v, &err), 0);
	assert_int_equal(strlen(v.v[KEY]), CLI_LOCAL_VALUE_MAX - 1);
	n = snprintf(text, sizeof(text), "GAVEL_API_KEY=%0*d\n", CLI_LOCAL_VALUE_MAX, 0);
	assert_int_equal(cli_local_parse(text, (size_t)n, &v, &err), -1);
	assert_non_null(strstr(err.msg, "too long"));
}

static void local_parse__nul_byte__refused(void **state)
{
	(void)state;
	static const char text[] = "GAVEL_URL=http://a\0b\n";
	struct cli_local_values v;
	struct gv_err err = { 0 };
	assert_int_equal(cli_local_parse(text, sizeof(text) - 1, &v, &err), -1);
	assert_non_null(strstr(err.msg, "NUL"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(local_parse__table),
		cmocka_unit_test(local_parse__value_at_the_limit__refused),
		cmocka_unit_test(local_parse__nul_byte__refused),
	};
	return cmocka_run_group_tests_name("cli_local_stack", tests, NULL, NULL);
}
