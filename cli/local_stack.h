/* Settings of the CLI that default to the local stack: `make run`
 * (deploy/local/gavel-local start) leaves var/local.env in the checkout,
 * KEY=VALUE lines naming the owner's database URL, Redis, the API's URL and
 * the demo API key; `make stop` removes it. A setting comes from, in order:
 * the command's flag, the environment variable of the same name, that file.
 *
 * The file is looked for at $GAVEL_VAR/local.env when GAVEL_VAR is set,
 * else at <checkout>/var/local.env, where <checkout> is the folder above the
 * one holding the running gavel binary (build/gavel, build-x/gavel) and is
 * recognised as a Gavel checkout by its deploy/local/gavel-local. An
 * installed gavel outside a checkout reads no file. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

/* The keys the file may hold. */
#define CLI_DATABASE_URL "GAVEL_DATABASE_URL"
#define CLI_REDIS_URL "GAVEL_REDIS_URL"
#define CLI_API_URL "GAVEL_URL"
#define CLI_API_KEY "GAVEL_API_KEY"

#define CLI_LOCAL_KEYS 4
#define CLI_LOCAL_VALUE_MAX 1024

/* The settings of one local.env, in the order of the keys above; "" for a
 * key the file does not name. */
struct cli_local_values {
	char v[CLI_LOCAL_KEYS][CLI_LOCAL_VALUE_MAX];
};

/* Parses the text of a local.env: KEY=VALUE lines, blank lines and lines
 * starting with '#' skipped, no quoting (the value is the rest of the line,
 * a trailing CR dropped), unknown keys ignored so that a newer gavel-local
 * may add some, a later line winning over an earlier one. A line without
 * '=' or with an empty key, a value of CLI_LOCAL_VALUE_MAX bytes or more, or
 * a NUL byte is an error naming the line (out is then left partly filled).
 * Pure. */
int cli_local_parse(const char *text, size_t len, struct cli_local_values *out, struct gv_err *err) GV_MUST_CHECK;

/* The value of setting NAME (one of the keys above): the environment
 * variable when set and non-empty, else the local stack's value, else NULL.
 * The string is borrowed: from the environment, or from a buffer that lives
 * until the process exits. The file is read once, on the first call. */
const char *cli_setting(const char *name);

/* True when setting NAME, as cli_setting returns it, came from the local
 * stack's file rather than the environment. */
bool cli_setting_is_local(const char *name);

/* Prints to stderr that a required setting is missing, for command CMD
 * ("gavel tenant"): WHAT ("no database URL"), the flag that gives it, the
 * variable, and that `make run` in a checkout provides it; also why the
 * local stack's file could not be used when it exists but is unusable. */
void cli_setting_missing(const char *cmd, const char *what, const char *flag, const char *name);

/* After a connection with a setting from the file failed: prints to stderr
 * a hint that the local stack may be stopped. Nothing when NAME did not come
 * from the file. */
void cli_setting_hint(const char *cmd, const char *name);
