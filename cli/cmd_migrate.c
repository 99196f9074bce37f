/* `gavel migrate`: applies the SQL migrations of deploy/sql to the
 * database, as the owner role. Thin: common/migrate.c does the work. */
#include "cli/commands.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/db.h"
#include "cli/local_stack.h"
#include "common/migrate.h"
#include "common/pg.h"

static void migrate_usage(FILE *out)
{
	fprintf(out,
		"usage: gavel migrate [--database-url URL] [--dir DIR]\n"
		"\n"
		"Applies the pending NNNN_name.sql files of DIR in order, each in its own\n"
		"transaction, and records them in schema_migrations. Safe to run again and\n"
		"from several processes at once.\n"
		"\n"
		"  --database-url URL  owner role's URL [env GAVEL_DATABASE_URL, else make run's]\n"
		"  --dir DIR           migrations folder [$GAVEL_ROOT/deploy/sql, else deploy/sql]\n");
}

int cli_cmd_migrate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "database-url", required_argument, NULL, 'u' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *url = cli_setting(CLI_DATABASE_URL);
	const char *dir = NULL;
	int c;
	optind = 0; /* glibc: restart scanning; argv[0] is "migrate" */
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			migrate_usage(stdout);
			return 0;
		default:
			migrate_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gavel migrate: unexpected argument '%s'\n", argv[optind]);
		migrate_usage(stderr);
		return 2;
	}
	if (cli_db_url_check("gavel migrate", url) < 0)
		return 2;
	char dirbuf[4096];
	if (!dir) {
		const char *root = getenv("GAVEL_ROOT");
		if (root && root[0]) {
			int n = snprintf(dirbuf, sizeof(dirbuf), "%s/deploy/sql", root);
			if (n < 0 || (size_t)n >= sizeof(dirbuf)) {
				fprintf(stderr, "gavel migrate: GAVEL_ROOT is too long\n");
				return 2;
			}
			dir = dirbuf;
		} else {
			dir = "deploy/sql";
		}
	}

	PGconn *conn = cli_db_connect("gavel migrate", url, true);
	if (!conn)
		return 1;
	struct gv_err err;
	gv_err_clear(&err);
	struct gv_migrate_report rep;
	int rc = gv_migrate(conn, dir, &rep, &err);
	PQfinish(conn);
	if (rc != 0) {
		fprintf(stderr, "gavel migrate: %s\n", err.msg);
		if (rep.applied > 0)
			fprintf(stderr, "gavel migrate: %d migration(s) applied before the failure, up to %s\n",
				rep.applied, rep.last_applied);
		return 1;
	}
	if (rep.applied > 0)
		printf("migrate: applied %d migration(s), last %s; schema at version %d\n", rep.applied,
		       rep.last_applied, rep.version);
	else
		printf("migrate: nothing to apply; schema at version %d\n", rep.version);
	return 0;
}
