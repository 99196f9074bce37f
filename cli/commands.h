/* The subcommands of the `gavel` CLI. Each takes the argv after the
 * subcommand name (argv[0] is the subcommand) and returns the process exit
 * status. */
#pragma once

int cli_cmd_migrate(int argc, char **argv);
int cli_cmd_run(int argc, char **argv);
int cli_cmd_judge(int argc, char **argv);
int cli_cmd_tenant(int argc, char **argv);
int cli_cmd_key(int argc, char **argv);
int cli_cmd_audit(int argc, char **argv);
int cli_cmd_usage(int argc, char **argv);
int cli_cmd_problem(int argc, char **argv);
