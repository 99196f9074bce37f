/* gavel-executor: flags, config, signals (common/daemon.c) and absolute
 * paths; the node itself is executor/daemon/daemon.c.
 *
 *   gavel-executor [--config FILE] [--check-config]
 *   gavel-executor --prepare [--config FILE]
 *
 * Options come from the defaults, then FILE, then GAVEL_* environment
 * variables (GAVEL_EXECUTOR_NODE_NAME, GAVEL_REDIS_URL, ...). Needs root.
 * --prepare builds the node's precompiled headers and class archives
 * (exec_daemon_prepare) and exits: the install step before a node's first
 * start. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/daemon.h"
#include "common/log.h"
#include "executor/daemon/daemon.h"

int main(int argc, char **argv)
{
	struct gv_daemon_spec spec = {
		.program = "gavel-executor",
		.component = "executor",
		.table = exec_daemon_config_table,
		.table_len = exec_daemon_config_table_len,
		.log_level_offset = offsetof(struct exec_daemon_config, log_level),
	};
	/* --prepare is this program's own; the rest are every daemon's. */
	bool prepare = false;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--prepare")) {
			prepare = true;
			memmove(&argv[i], &argv[i + 1], sizeof(*argv) * (size_t)(argc - i));
			argc--;
			i--;
		}
	struct exec_daemon_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	int code;
	if (gv_daemon_start(&spec, argc, argv, &cfg, &code) != 0)
		return code;
	struct gv_err err;
	/* Relative paths in the config are relative to where the daemon was
	 * started (the checkout for `make run`); the engine wants absolute
	 * ones, since runsc runs elsewhere. */
	char **paths[] = { &cfg.init_path, &cfg.languages_dir };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!*paths[i] || (*paths[i])[0] == '/')
			continue;
		char *abs = realpath(*paths[i], NULL);
		if (!abs) {
			fprintf(stderr, "gavel-executor: %s: %s\n", *paths[i], strerror(errno));
			gv_config_free(exec_daemon_config_table, exec_daemon_config_table_len, &cfg);
			return 2;
		}
		free(*paths[i]);
		*paths[i] = abs;
	}
	int rc;
	if (prepare) {
		rc = exec_daemon_prepare(&cfg, &err);
		if (rc != 0)
			gv_error(NULL, "preparing the node: %s", err.msg);
	} else {
		rc = exec_daemon_run(&cfg, &gv_daemon_stop, &err);
		if (rc != 0)
			gv_error(NULL, "start-up failed, nothing registered: %s", err.msg);
	}
	gv_config_free(exec_daemon_config_table, exec_daemon_config_table_len, &cfg);
	return rc == 0 ? 0 : 1;
}
