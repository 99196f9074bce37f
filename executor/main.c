/* gavel-executor: flags, config, signals; the node itself is
 * executor/daemon.c.
 *
 *   gavel-executor [--config FILE] [--check-config]
 *
 * Options come from the defaults, then FILE, then GAVEL_* environment
 * variables (GAVEL_EXECUTOR_NODE_NAME, GAVEL_REDIS_URL, ...). Needs root. */
#include <getopt.h>
#include <signal.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "executor/daemon.h"

extern char **environ;

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	int check = 0, c;
	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'k': check = 1; break;
		case 'h':
			printf("usage: gavel-executor [--config FILE] [--check-config]\n");
			return 0;
		default: return 2;
		}
	}
	struct exec_daemon_config cfg;
	struct gv_err err;
	memset(&cfg, 0, sizeof(cfg));
	if (gv_config_load(exec_daemon_config_table, exec_daemon_config_table_len, &cfg, path, environ, &err) != 0) {
		fprintf(stderr, "gavel-executor: %s\n", err.msg);
		return 2;
	}
	/* Relative paths in the config are relative to where the daemon was
	 * started (the checkout for `make run`); the engine wants absolute
	 * ones, since runsc runs elsewhere. */
	char *paths[] = { cfg.init_path, cfg.languages_dir };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!paths[i] || paths[i][0] == '/')
			continue;
		char *abs = realpath(paths[i], NULL);
		if (!abs) {
			fprintf(stderr, "gavel-executor: %s: %s\n", paths[i], strerror(errno));
			gv_config_free(exec_daemon_config_table, exec_daemon_config_table_len, &cfg);
			return 2;
		}
		if (paths[i] == cfg.init_path) {
			free(cfg.init_path);
			cfg.init_path = abs;
		} else {
			free(cfg.languages_dir);
			cfg.languages_dir = abs;
		}
	}
	int level = gv_log_level_parse(cfg.log_level ? cfg.log_level : "info");
	gv_log_init("executor", level < 0 ? GV_LOG_INFO : (enum gv_log_level)level);
	if (check) {
		int rc = gv_config_dump(exec_daemon_config_table, exec_daemon_config_table_len, &cfg, stdout, &err) ? 1 : 0;
		gv_config_free(exec_daemon_config_table, exec_daemon_config_table_len, &cfg);
		return rc;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int rc = exec_daemon_run(&cfg, &stop_flag, &err);
	if (rc != 0)
		gv_error(NULL, "start-up failed, nothing registered: %s", err.msg);
	gv_config_free(exec_daemon_config_table, exec_daemon_config_table_len, &cfg);
	return rc == 0 ? 0 : 1;
}
