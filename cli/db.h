/* The CLI's database preamble (db.c): every subcommand that talks to
 * PostgreSQL takes the owner role's URL from --database-url, else
 * GAVEL_DATABASE_URL, else what `make run` wrote (cli_setting), and says
 * the same things when it is missing or does not answer. */
#pragma once

#include <libpq-fe.h>
#include <stdbool.h>

/* 0 when url is set; otherwise prints, as cmd ("gavel key"), that no
 * database URL was given and how to give one, and returns -1. */
int cli_db_url_check(const char *cmd, const char *url);

/* Connects to url (10 s to connect). On failure prints "cmd: why" (with
 * the redacted URL when show_database) and where the URL came from, and
 * returns NULL. The connection is the caller's (PQfinish). */
PGconn *cli_db_connect(const char *cmd, const char *url, bool show_database);
