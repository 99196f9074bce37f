/* gavel: the admin and local tool. Thin: it dispatches to one file per
 * subcommand, which calls the components' libraries. */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"

struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cli_command commands[] = {
	{ "run", cli_cmd_run, "compile and run one program in a fresh sandbox" },
	{ "judge", cli_cmd_judge, "judge a program against a problem package" },
	{ "migrate", cli_cmd_migrate, "apply the SQL migrations in deploy/sql" },
	{ "tenant", cli_cmd_tenant, "create, list, show, update, disable tenants; quotas" },
	{ "key", cli_cmd_key, "create, list, revoke a tenant's API keys" },
	{ "audit", cli_cmd_audit, "verify a tenant's hash-chained audit log" },
	{ "usage", cli_cmd_usage, "usage per tenant and day" },
	{ "problem", cli_cmd_problem, "push a problem package to a Gavel service" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: gavel COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n`gavel COMMAND --help` describes a command's options.\n");
}

int main(int argc, char **argv)
{
	gv_log_init("gavel", GV_LOG_WARN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "gavel: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
