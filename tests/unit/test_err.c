/* Unit tests of the error convention (common/err.c) and the logger's
 * escaping and line format (common/log.c). */
#include "common/err.h"
#include "common/log.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void err__set__fills_code_and_message(void **state)
{
	(void)state;
	struct gv_err err = { 0 };
	assert_int_equal(gv_err_set(&err, GV_ECONFIG, "bad %s %d", "value", 7), -1);
	assert_int_equal(err.code, GV_ECONFIG);
	assert_string_equal(err.msg, "bad value 7");
	assert_int_equal(gv_err_set(NULL, GV_ECONFIG, "x"), -1);
	gv_err_clear(&err);
	assert_int_equal(err.code, GV_EOK);
	assert_string_equal(err.msg, "");
	gv_err_clear(NULL);
}

static void err__set_long_message__truncated_and_terminated(void **state)
{
	(void)state;
	char big[GV_ERR_MSG_MAX * 2];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	struct gv_err err;
	memset(&err, 0x55, sizeof(err));
	gv_err_set(&err, GV_ELIMIT, "%s", big);
	assert_int_equal(strlen(err.msg), GV_ERR_MSG_MAX - 1);
}

static void err__errno__appends_strerror_and_keeps_errno_code(void **state)
{
	(void)state;
	struct gv_err err = { 0 };
	errno = ENOENT;
	assert_int_equal(gv_err_errno(&err, "open %s", "/x"), -1);
	assert_int_equal(err.code, ENOENT);
	assert_string_equal(err.msg, "open /x: No such file or directory");
	errno = EACCES;
	assert_int_equal(gv_err_errno(NULL, "x"), -1);
	assert_int_equal(errno, EACCES);
}

static void err__errno_long_message__truncated_without_overflow(void **state)
{
	(void)state;
	char big[GV_ERR_MSG_MAX];
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	struct gv_err err = { 0 };
	errno = EIO;
	gv_err_errno(&err, "%s", big);
	assert_int_equal(err.code, EIO);
	assert_int_equal(strlen(err.msg), GV_ERR_MSG_MAX - 1);
	/* Room for part of the strerror text: it is cut, not overflowed. */
	errno = EIO;
	gv_err_errno(&err, "%.*s", GV_ERR_MSG_MAX - 6, big);
	assert_int_equal(strlen(err.msg), GV_ERR_MSG_MAX - 1);
	assert_memory_equal(err.msg + GV_ERR_MSG_MAX - 6, ": In", 4);
}

static void err__prefix__prepends_context_and_keeps_code(void **state)
{
	(void)state;
	struct gv_err err = { 0 };
	gv_err_set(&err, GV_EINVAL, "field 'x': expected string");
	gv_err_prefix(&err, "submission %d", 12);
	gv_err_prefix(&err, "tenant %s", "t1");
	assert_int_equal(err.code, GV_EINVAL);
	assert_string_equal(err.msg, "tenant t1: submission 12: field 'x': expected string");
	/* The message itself as an argument: the old text is copied first. */
	gv_err_set(&err, GV_EINVAL, "abc");
	gv_err_prefix(&err, "%s", err.msg);
	assert_string_equal(err.msg, "abc: abc");
	gv_err_prefix(NULL, "x");
}

static void err__prefix_too_long__truncated_at_buffer(void **state)
{
	(void)state;
	char big[GV_ERR_MSG_MAX + 100];
	memset(big, 'p', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	struct gv_err err = { 0 };
	gv_err_set(&err, GV_EDB, "tail");
	gv_err_prefix(&err, "%s", big);
	assert_int_equal(strlen(err.msg), GV_ERR_MSG_MAX - 1);
	assert_null(strchr(err.msg, ':'));

	/* A prefix that leaves room for part of the old message. */
	gv_err_set(&err, GV_EDB, "0123456789");
	gv_err_prefix(&err, "%.*s", GV_ERR_MSG_MAX - 8, big);
	assert_int_equal(strlen(err.msg), GV_ERR_MSG_MAX - 1);
	assert_string_equal(err.msg + GV_ERR_MSG_MAX - 8, ": 01234");
	assert_int_equal(err.code, GV_EDB);

	/* A message already full keeps the prefix and loses its tail. */
	gv_err_set(&err, GV_EDB, "%s", big);
	gv_err_prefix(&err, "ctx");
	assert_int_equal(strlen(err.msg), GV_ERR_MSG_MAX - 1);
	assert_memory_equal(err.msg, "ctx: ppp", 8);
}

static void err__code_name__stable_names(void **state)
{
	(void)state;
	static const struct {
		int code;
		const char *name;
	} cases[] = {
		{ GV_EOK, "ok" },           { GV_EINVAL, "invalid" },     { GV_ECONFIG, "config" },
		{ GV_ELIMIT, "limit" },     { GV_ENOTFOUND, "not_found" }, { GV_EDB, "database" },
		{ GV_EREDIS, "redis" },     { GV_ESANDBOX, "sandbox" },   { GV_EPROTO, "protocol" },
		{ GV_EINTERNAL, "internal" }, { ENOENT, "system" },       { EINVAL, "system" },
		{ -1, "unknown" },          { GV_EBASE, "unknown" },      { GV_EINTERNAL + 1, "unknown" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(gv_err_code_name(cases[i].code), cases[i].name);
}

struct escape_case {
	const char *in;
	size_t inlen;
	size_t outsz;
	const char *want;
};

static void log_escape__table__escaped_and_truncated(void **state)
{
	(void)state;
	static const struct escape_case cases[] = {
		{ "hello", 5, 16, "hello" },
		{ "hello", 5, 6, "hello" }, /* fits exactly: no "..." */
		{ "hello", 5, 5, "h..." },
		{ "hello world", 11, 8, "hell..." },
		{ "a\nb", 3, 16, "a\\x0ab" },
		{ "\"\\", 2, 16, "\\x22\\x5c" },
		{ "\xc3\xa9", 2, 16, "\\xc3\\xa9" },
		{ "a\0b", 3, 16, "a\\x00b" },
		{ "\x1b[31m", 5, 16, "\\x1b[31m" },
		{ "\x01\x02", 2, 8, "\\x01..." },       /* an escape is never split */
		{ "ab\n", 3, 7, "ab\\x0a" },
		{ "ab\n", 3, 6, "ab..." },
		{ "ab", 2, 3, "ab" },
		{ "abc", 3, 3, "" },                   /* no room even for "..." */
		{ "abcd", 4, 4, "..." },
		{ "", 0, 1, "" },
		{ NULL, 0, 4, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[32];
		memset(out, '#', sizeof(out));
		assert_ptr_equal(gv_log_escape(out, cases[i].outsz, cases[i].in, cases[i].inlen), out);
		if (strcmp(out, cases[i].want) != 0)
			fail_msg("case %zu: got '%s', want '%s'", i, out, cases[i].want);
		/* Nothing written past outsz. */
		for (size_t k = cases[i].outsz; k < sizeof(out); k++)
			assert_int_equal(out[k], '#');
	}
	char canary = '#';
	gv_log_escape(&canary, 0, "abc", 3);
	assert_int_equal(canary, '#');
}

static void log_level_parse__names__mapped(void **state)
{
	(void)state;
	assert_int_equal(gv_log_level_parse("debug"), GV_LOG_DEBUG);
	assert_int_equal(gv_log_level_parse("info"), GV_LOG_INFO);
	assert_int_equal(gv_log_level_parse("warn"), GV_LOG_WARN);
	assert_int_equal(gv_log_level_parse("error"), GV_LOG_ERROR);
	assert_int_equal(gv_log_level_parse("INFO"), -1);
	assert_int_equal(gv_log_level_parse(""), -1);
	assert_int_equal(gv_log_level_parse(NULL), -1);
}

/* Runs gv_log with stderr sent to a temporary file; returns what it wrote. */
static void capture_log(char *out, size_t outsz, enum gv_log_level level,
			const struct gv_log_ctx *ctx, const char *msg)
{
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	gv_log(level, ctx, "%s", msg);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	size_t n = fread(out, 1, outsz - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

static void log__line__carries_level_component_and_context(void **state)
{
	(void)state;
	char buf[4096];
	struct gv_log_ctx ctx = { .tenant = "t1", .job = "j2", .sandbox = "s3" };
	gv_log_init("test", GV_LOG_INFO);
	capture_log(buf, sizeof(buf), GV_LOG_WARN, &ctx, "hello");
	/* 2024-01-02T03:04:05.678Z warn test: tenant=t1 job=j2 sandbox=s3 hello */
	assert_int_equal(strlen(buf), 24 + strlen(" warn test: tenant=t1 job=j2 sandbox=s3 hello\n"));
	assert_string_equal(buf + 24, " warn test: tenant=t1 job=j2 sandbox=s3 hello\n");

	capture_log(buf, sizeof(buf), GV_LOG_DEBUG, NULL, "hidden");
	assert_string_equal(buf, "");

	/* An out-of-range level is logged as error, never read out of bounds. */
	capture_log(buf, sizeof(buf), (enum gv_log_level)42, NULL, "odd");
	assert_string_equal(buf + 24, " error test: odd\n");

	/* An overlong message is cut to one line that still ends in '\n'. */
	char big[4000];
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	capture_log(buf, sizeof(buf), GV_LOG_ERROR, NULL, big);
	assert_int_equal(strlen(buf), 2047);
	assert_int_equal(buf[2046], '\n');
	gv_log_init(NULL, GV_LOG_INFO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(err__set__fills_code_and_message),
		cmocka_unit_test(err__set_long_message__truncated_and_terminated),
		cmocka_unit_test(err__errno__appends_strerror_and_keeps_errno_code),
		cmocka_unit_test(err__errno_long_message__truncated_without_overflow),
		cmocka_unit_test(err__prefix__prepends_context_and_keeps_code),
		cmocka_unit_test(err__prefix_too_long__truncated_at_buffer),
		cmocka_unit_test(err__code_name__stable_names),
		cmocka_unit_test(log_escape__table__escaped_and_truncated),
		cmocka_unit_test(log_level_parse__names__mapped),
		cmocka_unit_test(log__line__carries_level_component_and_context),
	};
	return cmocka_run_group_tests_name("err", tests, NULL, NULL);
}
