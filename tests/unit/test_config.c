/* Unit tests of the table-driven config loader (common/config*.c): a table of
 * refused inputs with their exact messages, a table of size and duration
 * spellings, and cases for sections, quoting, the environment, dumps,
 * reloads and files on disk. */
#include "common/config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

struct tcfg {
	char *name;
	char *url;
	char *password;
	int port;
	int workers;
	bool debug;
	uint64_t body;
	uint64_t timeout;
	int level;
	struct gv_config_list langs;
};

static const char *const levels[] = { "debug", "info", "warn", "error", NULL };

static const struct gv_config_option table[] = {
	{ .name = "name", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct tcfg, name), .def = "gavel",
	  .doc = "instance name" },
	{ .name = "database.url", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct tcfg, url),
	  .flags = GV_CONFIG_REQUIRED, .doc = "PostgreSQL URL" },
	{ .name = "database.password", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct tcfg, password),
	  .min = 8, .max = 256, .flags = GV_CONFIG_SECRET, .doc = "password" },
	{ .name = "server.port", .type = GV_CONFIG_INT, GV_CONFIG_FIELD(struct tcfg, port), .def = "2358",
	  .min = 1, .max = 65535, .doc = "TCP port" },
	{ .name = "server.workers", .type = GV_CONFIG_INT, GV_CONFIG_FIELD(struct tcfg, workers),
	  .def = "4", .min = 1, .max = 64, .flags = GV_CONFIG_RELOADABLE, .doc = "workers" },
	{ .name = "server.debug", .type = GV_CONFIG_BOOL, GV_CONFIG_FIELD(struct tcfg, debug),
	  .def = "false", .doc = "debug mode" },
	{ .name = "server.max_body_size", .type = GV_CONFIG_SIZE, GV_CONFIG_FIELD(struct tcfg, body),
	  .def = "1m", .min = 1, .max = 1 << 30, .doc = "body cap" },
	{ .name = "server.request_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct tcfg, timeout), .def = "30s", .flags = GV_CONFIG_RELOADABLE,
	  .doc = "request timeout" },
	{ .name = "log.level", .type = GV_CONFIG_ENUM, GV_CONFIG_FIELD(struct tcfg, level),
	  .def = "info", .choices = levels, .flags = GV_CONFIG_RELOADABLE, .doc = "log level" },
	{ .name = "executor.languages", .type = GV_CONFIG_LIST, GV_CONFIG_FIELD(struct tcfg, langs),
	  .def = "c, cpp", .doc = "languages" },
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

static int load(struct tcfg *c, const char *text, char *const *envp, struct gv_err *err)
{
	memset(c, 0, sizeof(*c));
	return gv_config_load_text(table, NTABLE, c, "test.conf", text, text ? strlen(text) : 0, envp,
				   err);
}

/* ---- refused inputs: one named cmocka test per row ---- */

struct bad_case {
	const char *name;
	const char *text; /* NULL: no file */
	size_t len;       /* 0: strlen(text) */
	const char *env[3];
	int code;
	const char *msg; /* the exact message */
};

static char long_line[GV_CONFIG_LINE_MAX + 64];
static char long_env[GV_CONFIG_LINE_MAX + 64];

static const struct bad_case bad_cases[] = {
	{ "config__unknown_key__refused_with_file_line", "database.url = x\n[server]\nportt = 1\n", 0,
	  { 0 }, GV_ECONFIG, "test.conf:3: unknown option 'server.portt'" },
	{ "config__unknown_top_level_key__refused_with_file_line", "# c\n\nbogus = 1\n", 0, { 0 },
	  GV_ECONFIG, "test.conf:3: unknown option 'bogus'" },
	{ "config__bad_number__refused_with_file_line", "database.url = x\nserver.port = 12a\n", 0, { 0 },
	  GV_ECONFIG, "test.conf:2: option 'server.port': expected an integer, got '12a'" },
	{ "config__empty_number__refused", "database.url = x\nserver.port =\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:2: option 'server.port': expected an integer, got ''" },
	{ "config__number_out_of_range__refused", "database.url = x\nserver.port = 70000\n", 0, { 0 },
	  GV_ECONFIG, "test.conf:2: option 'server.port': integer out of range 1..65535, got '70000'" },
	{ "config__number_below_range__refused", "database.url = x\nserver.port = -1\n", 0, { 0 },
	  GV_ECONFIG, "test.conf:2: option 'server.port': integer out of range 1..65535, got '-1'" },
	{ "config__number_overflowing_64_bits__refused",
	  "database.url = x\nserver.port = 99999999999999999999999\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:2: option 'server.port': integer out of range 1..65535, got '99999999999999999999999'" },
	{ "config__missing_required__refused_naming_file", "server.port = 80\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf: missing required option 'database.url'" },
	{ "config__missing_required_without_file__names_env_variable", NULL, 0, { 0 }, GV_ECONFIG,
	  "missing required option 'database.url' (no config file; set GAVEL_DATABASE_URL)" },
	{ "config__duplicate_key__refused_with_both_lines", "database.url = a\n\ndatabase.url = b\n", 0,
	  { 0 }, GV_ECONFIG, "test.conf:3: duplicate option 'database.url' (first set on line 1)" },
	{ "config__duplicate_through_section__refused", "database.url = a\n[database]\nurl = b\n", 0,
	  { 0 }, GV_ECONFIG, "test.conf:3: duplicate option 'database.url' (first set on line 1)" },
	{ "config__bad_bool__refused", "database.url = x\nserver.debug = maybe\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:2: option 'server.debug': expected true or false, got 'maybe'" },
	{ "config__bad_enum__refused_listing_choices", "database.url = x\n[log]\nlevel = loud\n", 0,
	  { 0 }, GV_ECONFIG,
	  "test.conf:3: option 'log.level': expected one of debug, info, warn, error, got 'loud'" },
	{ "config__enum_is_case_sensitive__refused", "database.url = x\nlog.level = INFO\n", 0, { 0 },
	  GV_ECONFIG,
	  "test.conf:2: option 'log.level': expected one of debug, info, warn, error, got 'INFO'" },
	{ "config__bad_size_suffix__refused", "database.url = x\nserver.max_body_size = 10x\n", 0, { 0 },
	  GV_ECONFIG,
	  "test.conf:2: option 'server.max_body_size': expected a size such as 512, 64k, 16m or 2g, got '10x'" },
	{ "config__size_out_of_range__refused", "database.url = x\nserver.max_body_size = 2g\n", 0,
	  { 0 }, GV_ECONFIG,
	  "test.conf:2: option 'server.max_body_size': size out of range 1..1073741824 bytes, got '2g'" },
	{ "config__size_overflowing_64_bits__refused",
	  "database.url = x\nserver.max_body_size = 99999999999t\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:2: option 'server.max_body_size': size out of range 1..1073741824 bytes, got '99999999999t'" },
	{ "config__duration_without_unit__refused", "database.url = x\nserver.request_timeout = 30\n",
	  0, { 0 }, GV_ECONFIG,
	  "test.conf:2: option 'server.request_timeout': expected a duration with a unit such as 500ms, 30s, 5m or 1h, got '30'" },
	{ "config__negative_duration__refused", "database.url = x\nserver.request_timeout = -5s\n", 0,
	  { 0 }, GV_ECONFIG,
	  "test.conf:2: option 'server.request_timeout': expected a duration with a unit such as 500ms, 30s, 5m or 1h, got '-5s'" },
	{ "config__empty_list_item__refused", "database.url = x\nexecutor.languages = c,,cpp\n", 0,
	  { 0 }, GV_ECONFIG,
	  "test.conf:2: option 'executor.languages': empty item in list, got 'c,,cpp'" },
	{ "config__secret_value__never_echoed", "database.url = x\ndatabase.password = \"abc\"\n", 0,
	  { 0 }, GV_ECONFIG, "test.conf:2: option 'database.password': length 3 out of range 8..256" },
	{ "config__value_with_control_bytes__escaped_in_message", "database.url = x\nserver.port = \"1\\t\"\n",
	  0, { 0 }, GV_ECONFIG, "test.conf:2: option 'server.port': expected an integer, got '1\\x09'" },
	{ "config__long_line__refused_with_limit", long_line, 0, { 0 }, GV_ELIMIT,
	  "test.conf:2: line longer than 4096 bytes" },
	{ "config__nul_byte__refused", "database.url = x\nname = a\0b\n", 28, { 0 }, GV_ECONFIG,
	  "test.conf:2: NUL byte in line" },
	{ "config__unterminated_quote__refused", "database.url = \"abc\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:1: unterminated quoted value" },
	{ "config__backslash_at_line_end__refused", "database.url = \"abc\\\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:1: unterminated quoted value" },
	{ "config__unknown_escape__refused", "database.url = \"a\\qb\"\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:1: unknown escape in quoted value: '\\q'" },
	{ "config__text_after_quoted_value__refused", "database.url = \"a\" b\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:1: unexpected text after quoted value" },
	{ "config__stray_quote_in_bare_value__refused", "database.url = a\"b\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:1: stray '\"' in value (quote the whole value)" },
	{ "config__line_without_equals__refused", "database.url = x\nhello world\n", 0, { 0 },
	  GV_ECONFIG, "test.conf:2: expected 'key = value', '[section]' or a comment" },
	{ "config__upper_case_key__refused", "Database.url = x\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:1: expected 'key = value', '[section]' or a comment" },
	{ "config__bad_section_header__refused", "[data base]\nurl = x\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:1: bad section header" },
	{ "config__unclosed_section_header__refused", "[database\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:1: bad section header" },
	{ "config__text_after_section_header__refused", "[database] x\n", 0, { 0 }, GV_ECONFIG,
	  "test.conf:1: unexpected text after section header" },
	{ "config__env_bad_value__refused_naming_variable", "database.url = x\n", 0,
	  { "GAVEL_SERVER_PORT=abc" }, GV_ECONFIG,
	  "environment GAVEL_SERVER_PORT: option 'server.port': expected an integer, got 'abc'" },
	{ "config__env_bad_bool__refused", "database.url = x\n", 0, { "GAVEL_SERVER_DEBUG=2" },
	  GV_ECONFIG, "environment GAVEL_SERVER_DEBUG: option 'server.debug': expected true or false, got '2'" },
	{ "config__env_long_value__refused", "database.url = x\n", 0, { long_env }, GV_ELIMIT,
	  "environment GAVEL_NAME: value longer than 4096 bytes" },
};

static void test_bad_case(void **state)
{
	const struct bad_case *bc = *state;
	struct tcfg c;
	struct gv_err err = { 0 };
	memset(&c, 0, sizeof(c));
	size_t len = bc->text ? (bc->len ? bc->len : strlen(bc->text)) : 0;
	assert_int_equal(gv_config_load_text(table, NTABLE, &c, "test.conf", bc->text, len,
					     (char *const *)bc->env, &err),
			 -1);
	assert_string_equal(err.msg, bc->msg);
	assert_int_equal(err.code, bc->code);
	/* A failed load owns nothing. */
	assert_null(c.name);
	assert_null(c.url);
	assert_null(c.langs.items);
	gv_config_free(table, NTABLE, &c);
}

/* ---- size and duration spellings ---- */

struct scaled_case {
	enum gv_config_type type;
	const char *text;
	int ok;
	uint64_t want;
};

static const struct scaled_case scaled_cases[] = {
	{ GV_CONFIG_SIZE, "0", 1, 0 },
	{ GV_CONFIG_SIZE, "512", 1, 512 },
	{ GV_CONFIG_SIZE, "512b", 1, 512 },
	{ GV_CONFIG_SIZE, "64k", 1, 64 << 10 },
	{ GV_CONFIG_SIZE, "64K", 1, 64 << 10 },
	{ GV_CONFIG_SIZE, "64KiB", 1, 64 << 10 },
	{ GV_CONFIG_SIZE, "16m", 1, 16 << 20 },
	{ GV_CONFIG_SIZE, "16MB", 1, 16 << 20 },
	{ GV_CONFIG_SIZE, "2g", 1, 2ull << 30 },
	{ GV_CONFIG_SIZE, "1t", 1, 1ull << 40 },
	{ GV_CONFIG_SIZE, "1.5m", 0, 0 },
	{ GV_CONFIG_SIZE, "m", 0, 0 },
	{ GV_CONFIG_SIZE, "-1k", 0, 0 },
	{ GV_CONFIG_SIZE, "1 k", 0, 0 },
	{ GV_CONFIG_SIZE, "", 0, 0 },
	{ GV_CONFIG_DURATION, "0", 1, 0 },
	{ GV_CONFIG_DURATION, "250ms", 1, 250 },
	{ GV_CONFIG_DURATION, "30s", 1, 30000 },
	{ GV_CONFIG_DURATION, "5m", 1, 300000 },
	{ GV_CONFIG_DURATION, "2h", 1, 7200000 },
	{ GV_CONFIG_DURATION, "10S", 1, 10000 },
	{ GV_CONFIG_DURATION, "10", 0, 0 },
	{ GV_CONFIG_DURATION, "1d", 0, 0 },
	{ GV_CONFIG_DURATION, "s", 0, 0 },
};

/* One gavel.conf for every binary: sections of Gavel's that this table has
 * no option in are another binary's and are skipped; a typo in a section
 * the table does own, or an unknown section, is still refused. */
static void config__other_binaries_sections__skipped_own_typos_refused(void **state)
{
	(void)state;
	struct tcfg c;
	struct gv_err err;
	assert_int_equal(load(&c, "database.url = x\n[scheduler]\ntick = 5\n[frontend]\nport = 1\n", NULL,
			      &err),
			 0);
	gv_config_free(table, NTABLE, &c);
	assert_int_equal(load(&c, "database.url = x\n[executor]\nlanguagez = c\n", NULL, &err), -1);
	assert_string_equal(err.msg, "test.conf:3: unknown option 'executor.languagez'");
	gv_config_free(table, NTABLE, &c);
	assert_int_equal(load(&c, "database.url = x\n[nosuch]\nkey = 1\n", NULL, &err), -1);
	gv_config_free(table, NTABLE, &c);
}

static void config__size_and_duration_suffixes__scaled(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(scaled_cases) / sizeof(scaled_cases[0]); i++) {
		const struct scaled_case *sc = &scaled_cases[i];
		const struct gv_config_option one[] = {
			{ .name = "v", .type = sc->type, .offset = 0, .size = sizeof(uint64_t) },
		};
		uint64_t v = 77;
		char text[64];
		struct gv_err err = { 0 };
		snprintf(text, sizeof(text), "v = %s\n", sc->text);
		int rc = gv_config_load_text(one, 1, &v, "t", text, strlen(text), NULL, &err);
		if (sc->ok) {
			if (rc != 0)
				fail_msg("'%s': %s", sc->text, err.msg);
			assert_int_equal(v, sc->want);
		} else {
			if (rc != -1)
				fail_msg("'%s' accepted as %llu", sc->text, (unsigned long long)v);
			assert_int_equal(err.code, GV_ECONFIG);
		}
	}
}

/* ---- accepted inputs ---- */

static void config__defaults__applied_from_table(void **state)
{
	(void)state;
	struct tcfg c;
	struct gv_err err = { 0 };
	memset(&c, 0, sizeof(c));
	assert_int_equal(gv_config_defaults(table, NTABLE, &c, &err), 0);
	assert_string_equal(c.name, "gavel");
	assert_null(c.url);
	assert_null(c.password);
	assert_int_equal(c.port, 2358);
	assert_int_equal(c.workers, 4);
	assert_false(c.debug);
	assert_int_equal(c.body, 1 << 20);
	assert_int_equal(c.timeout, 30000);
	assert_int_equal(c.level, 1);
	assert_int_equal(c.langs.count, 2);
	assert_string_equal(c.langs.items[0], "c");
	assert_string_equal(c.langs.items[1], "cpp");
	gv_config_free(table, NTABLE, &c);
	assert_null(c.name);
	assert_int_equal(c.langs.count, 0);
	gv_config_free(table, NTABLE, &c); /* idempotent */
}

static void config__sections_and_comments__prefix_keys(void **state)
{
	(void)state;
	static const char text[] =
		"# top comment\n"
		"name = judge-1   # trailing comment\n"
		"\n"
		"   [database]   # section comment\n"
		"url = postgres://h/db#frag\n"
		"\tpassword = \"s3cret-pass\"\n"
		"[server]\n"
		"port=8080\n"
		"debug = YES\n"
		"max_body_size = 64k\n"
		"[log]\n"
		"level = debug\n"
		"[executor]\n"
		"languages = python3 ,  c  \n"
		"[server]\n"
		"workers = 8\n";
	struct tcfg c;
	struct gv_err err = { 0 };
	if (load(&c, text, NULL, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c.name, "judge-1");
	assert_string_equal(c.url, "postgres://h/db#frag");
	assert_string_equal(c.password, "s3cret-pass");
	assert_int_equal(c.port, 8080);
	assert_true(c.debug);
	assert_int_equal(c.body, 64 << 10);
	assert_int_equal(c.level, 0);
	assert_int_equal(c.langs.count, 2);
	assert_string_equal(c.langs.items[0], "python3");
	assert_string_equal(c.langs.items[1], "c");
	assert_int_equal(c.workers, 8);
	assert_int_equal(c.timeout, 30000); /* untouched default */
	gv_config_free(table, NTABLE, &c);
}

static void config__quoted_values__unescaped(void **state)
{
	(void)state;
	static const char text[] =
		"database.url = \"a \\\"b\\\" \\\\ c\\nd\\te # not a comment\"   # a comment\n"
		"name = \"\"\n"
		"executor.languages = \"\"\r\n";
	struct tcfg c;
	struct gv_err err = { 0 };
	if (load(&c, text, NULL, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c.url, "a \"b\" \\ c\nd\te # not a comment");
	assert_string_equal(c.name, "");
	assert_int_equal(c.langs.count, 0);
	gv_config_free(table, NTABLE, &c);
}

static void config__crlf_line_endings__accepted(void **state)
{
	(void)state;
	struct tcfg c;
	struct gv_err err = { 0 };
	if (load(&c, "[database]\r\nurl = x\r\n[server]\r\nport = 99\r\n", NULL, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c.url, "x");
	assert_int_equal(c.port, 99);
	gv_config_free(table, NTABLE, &c);
}

static void config__env_override__wins_over_file(void **state)
{
	(void)state;
	char *const env[] = { "PATH=/bin", "GAVEL_ROOT=/srv/gavel", "GAVEL_SERVER_PORT=9000",
			      "GAVEL_DATABASE_URL=postgres://env", "GAVEL_LOG_LEVEL=warn",
			      "GAVEL_SERVER_PORT=1", /* the first one wins, as with getenv */
			      "GAVEL_EXECUTOR_LANGUAGES=rust", NULL };
	struct tcfg c;
	struct gv_err err = { 0 };
	if (load(&c, "database.url = file\nserver.port = 80\nname = n\n", env, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c.url, "postgres://env");
	assert_int_equal(c.port, 9000);
	assert_int_equal(c.level, 2);
	assert_string_equal(c.name, "n");
	assert_int_equal(c.langs.count, 1);
	assert_string_equal(c.langs.items[0], "rust");
	gv_config_free(table, NTABLE, &c);
}

static void config__required_from_env_only__accepted(void **state)
{
	(void)state;
	char *const env[] = { "GAVEL_DATABASE_URL=postgres://env", NULL };
	struct tcfg c;
	struct gv_err err = { 0 };
	if (load(&c, NULL, env, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c.url, "postgres://env");
	gv_config_free(table, NTABLE, &c);
}

static void config__dump__masks_secrets_and_reloads(void **state)
{
	(void)state;
	static const char text[] =
		"database.url = \"p#q \\\"x\\\"\"\n"
		"database.password = hunter2hunter2\n"
		"server.max_body_size = 1000\n"
		"server.request_timeout = 1500ms\n"
		"executor.languages = a, b c\n";
	struct tcfg c, d;
	struct gv_err err = { 0 };
	if (load(&c, text, NULL, &err) != 0)
		fail_msg("%s", err.msg);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(gv_config_dump(table, NTABLE, &c, f, &err), 0);
	fclose(f);
	assert_null(strstr(buf, "hunter2"));
	assert_non_null(strstr(buf, "password = \"***\"\n"));
	assert_non_null(strstr(buf, "name = \"gavel\"\n"));
	assert_non_null(strstr(buf, "[database]\nurl = \"p#q \\\"x\\\"\"\n"));
	assert_non_null(strstr(buf, "max_body_size = 1000\n"));
	assert_non_null(strstr(buf, "request_timeout = 1500ms\n"));
	assert_non_null(strstr(buf, "port = 2358\n"));
	assert_non_null(strstr(buf, "level = \"info\"\n"));
	assert_non_null(strstr(buf, "languages = \"a, b c\"\n"));
	/* The dump is itself a valid config (the secret reads back as "***",
	 * which fails its length bound: drop that line). */
	char *pw = strstr(buf, "password = ");
	memset(pw, ' ', (size_t)(strchr(pw, '\n') - pw));
	if (load(&d, buf, NULL, &err) != 0)
		fail_msg("%s\n%s", err.msg, buf);
	assert_string_equal(d.url, c.url);
	assert_int_equal(d.body, c.body);
	assert_int_equal(d.timeout, c.timeout);
	assert_int_equal(d.langs.count, 2);
	assert_string_equal(d.langs.items[1], "b c");
	free(buf);
	gv_config_free(table, NTABLE, &c);
	gv_config_free(table, NTABLE, &d);
}

static void config__reload__swaps_reloadable_refuses_others(void **state)
{
	(void)state;
	struct tcfg cur, next;
	struct gv_err err = { 0 };
	assert_int_equal(load(&cur, "database.url = a\n", NULL, &err), 0);
	assert_int_equal(load(&next, "database.url = a\nserver.workers = 9\nlog.level = error\n", NULL,
			      &err),
			 0);
	assert_int_equal(gv_config_reload(table, NTABLE, &cur, &next, &err), 0);
	assert_int_equal(cur.workers, 9);
	assert_int_equal(cur.level, 3);
	assert_int_equal(next.workers, 4);
	gv_config_free(table, NTABLE, &next);

	assert_int_equal(load(&next, "database.url = b\nserver.workers = 2\n", NULL, &err), 0);
	assert_int_equal(gv_config_reload(table, NTABLE, &cur, &next, &err), -1);
	assert_string_equal(err.msg, "option 'database.url' cannot change without a restart");
	assert_int_equal(cur.workers, 9); /* nothing applied */
	gv_config_free(table, NTABLE, &next);
	gv_config_free(table, NTABLE, &cur);
}

struct bad_table_case {
	struct gv_config_option opt[2];
	size_t n;
	const char *msg;
};

static void config__bad_table__refused_as_internal(void **state)
{
	(void)state;
	static const char *const none[] = { NULL };
	const struct bad_table_case cases[] = {
		{ { { .name = "a.b", .type = GV_CONFIG_INT, .def = "x" } }, 1,
		  "config table: bad default: option 'a.b': expected an integer, got 'x'" },
		{ { { .name = "a.b", .type = GV_CONFIG_INT, .size = 8 } }, 1,
		  "config table: option 'a.b': field has 8 bytes, type needs 4" },
		{ { { .name = "A.b", .type = GV_CONFIG_INT } }, 1, "config table: bad option name 'A.b'" },
		{ { { .name = "a..b", .type = GV_CONFIG_INT } }, 1, "config table: bad option name 'a..b'" },
		{ { { .name = "a.b", .type = GV_CONFIG_ENUM, .choices = none } }, 1,
		  "config table: option 'a.b': no choices" },
		{ { { .name = "a.b", .type = GV_CONFIG_INT, .min = 5, .max = 1 } }, 1,
		  "config table: option 'a.b': bad range" },
		{ { { .name = "a.b", .type = GV_CONFIG_STRING, .def = "x", .flags = GV_CONFIG_REQUIRED } }, 1,
		  "config table: option 'a.b': required with a default" },
		{ { { .name = "a.b_c", .type = GV_CONFIG_INT }, { .name = "a_b.c", .type = GV_CONFIG_INT, .offset = 4 } },
		  2, "config table: options 'a.b_c' and 'a_b.c' collide (GAVEL_A_B_C)" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int target[4] = { 0 };
		struct gv_err err = { 0 };
		assert_int_equal(gv_config_defaults(cases[i].opt, cases[i].n, target, &err), -1);
		assert_int_equal(err.code, GV_EINTERNAL);
		assert_string_equal(err.msg, cases[i].msg);
	}
}

/* ---- files on disk ---- */

static char *write_temp(const char *text, size_t len)
{
	char *path = strdup("/tmp/gavel-test-config.XXXXXX");
	assert_non_null(path);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		assert_true(w > 0);
		off += (size_t)w;
	}
	close(fd);
	return path;
}

static void config__file__loaded_and_errors_name_path(void **state)
{
	(void)state;
	static const char text[] = "[database]\nurl = x\n[server]\nport = 0\n";
	char *path = write_temp(text, strlen(text));
	struct tcfg c;
	struct gv_err err = { 0 };
	memset(&c, 0, sizeof(c));
	assert_int_equal(gv_config_load(table, NTABLE, &c, path, NULL, &err), -1);
	char want[256];
	snprintf(want, sizeof(want), "%s:4: option 'server.port': integer out of range 1..65535, got '0'",
		 path);
	assert_string_equal(err.msg, want);
	gv_config_free(table, NTABLE, &c);

	unlink(path);
	free(path);

	static const char good[] = "[database]\nurl = x\n[server]\nport = 80\n";
	path = write_temp(good, strlen(good));
	char *const env[] = { "GAVEL_SERVER_PORT=7", NULL };
	memset(&c, 0, sizeof(c));
	if (gv_config_load(table, NTABLE, &c, path, env, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c.url, "x");
	assert_int_equal(c.port, 7);
	gv_config_free(table, NTABLE, &c);
	unlink(path);
	free(path);
}

static void config__missing_file__refused_with_errno(void **state)
{
	(void)state;
	struct tcfg c;
	struct gv_err err = { 0 };
	memset(&c, 0, sizeof(c));
	assert_int_equal(gv_config_load(table, NTABLE, &c, "/nonexistent/gavel.conf", NULL, &err), -1);
	assert_int_equal(err.code, ENOENT);
	assert_string_equal(err.msg, "/nonexistent/gavel.conf: open: No such file or directory");
	gv_config_free(table, NTABLE, &c);
}

static void config__oversized_file__refused_before_parsing(void **state)
{
	(void)state;
	size_t len = GV_CONFIG_FILE_MAX + 1;
	char *text = malloc(len);
	assert_non_null(text);
	memset(text, '\n', len);
	char *path = write_temp(text, len);
	free(text);
	struct tcfg c;
	struct gv_err err = { 0 };
	memset(&c, 0, sizeof(c));
	assert_int_equal(gv_config_load(table, NTABLE, &c, path, NULL, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	assert_non_null(strstr(err.msg, ": larger than 1048576 bytes"));
	unlink(path);
	free(path);

	memset(&c, 0, sizeof(c));
	assert_int_equal(gv_config_load(table, NTABLE, &c, "/", NULL, &err), -1);
	assert_string_equal(err.msg, "/: not a regular file");
}


/* ---- deploy/gavel.conf.example ---- */

int main(void)
{
	/* The long line sits on line 2; the long env value names 'name'. */
	int n = snprintf(long_line, sizeof(long_line), "database.url = x\nname = ");
	memset(long_line + n, 'a', GV_CONFIG_LINE_MAX);
	long_line[sizeof(long_line) - 1] = '\0';
	n = snprintf(long_env, sizeof(long_env), "GAVEL_NAME=");
	memset(long_env + n, 'a', GV_CONFIG_LINE_MAX + 1);
	long_env[n + GV_CONFIG_LINE_MAX + 1] = '\0';

	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(config__size_and_duration_suffixes__scaled),
		cmocka_unit_test(config__defaults__applied_from_table),
		cmocka_unit_test(config__sections_and_comments__prefix_keys),
		cmocka_unit_test(config__quoted_values__unescaped),
		cmocka_unit_test(config__crlf_line_endings__accepted),
		cmocka_unit_test(config__env_override__wins_over_file),
		cmocka_unit_test(config__other_binaries_sections__skipped_own_typos_refused),
		cmocka_unit_test(config__required_from_env_only__accepted),
		cmocka_unit_test(config__dump__masks_secrets_and_reloads),
		cmocka_unit_test(config__reload__swaps_reloadable_refuses_others),
		cmocka_unit_test(config__bad_table__refused_as_internal),
		cmocka_unit_test(config__file__loaded_and_errors_name_path),
		cmocka_unit_test(config__missing_file__refused_with_errno),
		cmocka_unit_test(config__oversized_file__refused_before_parsing),
	};
	enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]),
	       NBAD = sizeof(bad_cases) / sizeof(bad_cases[0]) };
	static struct CMUnitTest tests[NFIXED + NBAD];
	memcpy(tests, fixed, sizeof(fixed));
	for (size_t i = 0; i < NBAD; i++)
		tests[NFIXED + i] = (struct CMUnitTest){ .name = bad_cases[i].name,
							 .test_func = test_bad_case,
							 .initial_state = (void *)&bad_cases[i] };
	return _cmocka_run_group_tests("config", tests, NFIXED + NBAD, NULL, NULL);
}
