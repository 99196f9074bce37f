/* `gavel usage`: per tenant and day usage (submissions, sandbox CPU,
 * GPU seconds, egress bytes) for the operator. */
#include "cli/commands.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db.h"
#include "cli/local_stack.h"
#include "common/json.h"
#include "common/pg.h"
#include "tenants/admin.h"
#include "tenants/usage.h"

static void usage_usage(FILE *out)
{
	fprintf(out,
		"usage: gavel usage [--tenant NAME|ID] [--since YYYY-MM-DD] [--json]\n"
		"  --database-url URL  owner role's URL [env GAVEL_DATABASE_URL, else make run's]\n");
}

int cli_cmd_usage(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "database-url", required_argument, NULL, 'u' }, { "tenant", required_argument, NULL, 't' },
		{ "since", required_argument, NULL, 's' },	  { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },		  { NULL, 0, NULL, 0 },
	};
	const char *url = cli_setting(CLI_DATABASE_URL), *tenant = NULL, *since = NULL;
	int as_json = 0, c;
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 't':
			tenant = optarg;
			break;
		case 's':
			since = optarg;
			break;
		case 'j':
			as_json = 1;
			break;
		case 'h':
			usage_usage(stdout);
			return 0;
		default:
			usage_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage_usage(stderr);
		return 2;
	}
	if (cli_db_url_check("gavel usage", url) < 0)
		return 2;
	PGconn *conn = cli_db_connect("gavel usage", url, false);
	if (!conn)
		return 1;
	struct gv_err err;
	int rc = 1;
	struct tenant_info t;
	json_t *rows = NULL;
	if (tenant && tenant_find(conn, tenant, &t, &err) != 0) {
		fprintf(stderr, "gavel usage: %s\n", err.msg);
		goto out;
	}
	rows = tenant_usage_report(conn, tenant ? t.id : NULL, since, &err);
	if (!rows) {
		fprintf(stderr, "gavel usage: %s\n", err.msg);
		goto out;
	}
	if (as_json) {
		char *s = gv_json_dump(rows, JSON_INDENT(2), 64 << 20, NULL, &err);
		if (!s) {
			fprintf(stderr, "gavel usage: %s\n", err.msg);
			goto out;
		}
		printf("%s\n", s);
		free(s);
	} else {
		printf("%-24s  %-10s  %11s  %12s  %11s  %14s  %14s\n", "TENANT", "DAY", "SUBMISSIONS", "CPU_SECONDS",
		       "GPU_SECONDS", "EGRESS_BYTES", "KERNEL_SECONDS");
		size_t i;
		json_t *r;
		json_array_foreach(rows, i, r) {
			printf("%-24s  %-10s  %11lld  %12.3f  %11.3f  %14lld  %14.3f\n",
			       json_string_value(json_object_get(r, "tenant")), json_string_value(json_object_get(r, "day")),
			       (long long)json_integer_value(json_object_get(r, "submissions")),
			       json_real_value(json_object_get(r, "sandbox_cpu_seconds")),
			       json_real_value(json_object_get(r, "gpu_seconds")),
			       (long long)json_integer_value(json_object_get(r, "egress_bytes")),
			       json_real_value(json_object_get(r, "kernel_seconds")));
		}
	}
	rc = 0;
out:
	json_decref(rows);
	PQfinish(conn);
	return rc;
}
