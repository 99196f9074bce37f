/* The CLI's database preamble (db.h): the URL check and the connection
 * with its error message, written once for every subcommand that opens
 * the database. */
#include "cli/db.h"

#include <stdio.h>

#include "cli/local_stack.h"
#include "common/pg.h"

int cli_db_url_check(const char *cmd, const char *url)
{
	if (url && url[0])
		return 0;
	cli_setting_missing(cmd, "no database URL", "--database-url", CLI_DATABASE_URL);
	return -1;
}

PGconn *cli_db_connect(const char *cmd, const char *url, bool show_database)
{
	struct gv_err err;
	gv_err_clear(&err);
	PGconn *conn = gv_pg_connect(url, 10, 0, &err);
	if (conn)
		return conn;
	if (show_database) {
		char shown[512];
		gv_pg_url_redact(url, shown, sizeof(shown));
		fprintf(stderr, "%s: %s (database %s)\n", cmd, err.msg, shown);
	} else {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
	}
	cli_setting_hint(cmd, CLI_DATABASE_URL);
	return NULL;
}
