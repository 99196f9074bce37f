/* `gavel audit verify`: walks a tenant's hash-chained audit log and names
 * the first broken link; exits 1 when the chain is broken. */
#include "cli/commands.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db.h"
#include "cli/local_stack.h"
#include "common/pg.h"
#include "tenants/admin.h"
#include "tenants/audit.h"

static void audit_usage(FILE *out)
{
	fprintf(out,
		"usage: gavel audit verify --tenant NAME|ID [--database-url URL]\n"
		"\n"
		"Recomputes every record's hash and link in seq order and names the first\n"
		"record that does not hold. Exit status 0: intact, 1: broken or error.\n"
		"  --database-url URL  owner role's URL [env GAVEL_DATABASE_URL, else make run's]\n");
}

int cli_cmd_audit(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "verify") != 0) {
		int help = argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
		audit_usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	static const struct option longopts[] = {
		{ "database-url", required_argument, NULL, 'u' },
		{ "tenant", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *url = cli_setting(CLI_DATABASE_URL), *tenant = NULL;
	int c;
	optind = 0;
	while ((c = getopt_long(argc - 1, argv + 1, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 't':
			tenant = optarg;
			break;
		case 'h':
			audit_usage(stdout);
			return 0;
		default:
			audit_usage(stderr);
			return 2;
		}
	}
	if (!tenant || optind != argc - 1) {
		audit_usage(stderr);
		return 2;
	}
	if (cli_db_url_check("gavel audit", url) < 0)
		return 2;
	PGconn *conn = cli_db_connect("gavel audit", url, false);
	if (!conn)
		return 1;
	struct gv_err err;
	int rc = 1;
	struct tenant_info t;
	struct tenant_audit_report rep;
	if (tenant_find(conn, tenant, &t, &err) != 0 || tenant_audit_verify(conn, t.id, &rep, &err) != 0) {
		fprintf(stderr, "gavel audit: %s\n", err.msg);
	} else if (!rep.ok) {
		printf("audit: tenant %s: chain BROKEN at seq %lld: %s (%lld record(s) verified before it)\n", t.name,
		       (long long)rep.broken_seq, rep.reason, (long long)rep.records);
	} else {
		printf("audit: tenant %s: %lld record(s), chain intact (last seq %lld)\n", t.name,
		       (long long)rep.records, (long long)rep.last_seq);
		rc = 0;
	}
	PQfinish(conn);
	return rc;
}
