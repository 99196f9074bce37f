/* gavel-frontend: the HTTP API daemon. Thin: flags, config, languages,
 * signals, then the server library. */
#include <getopt.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/daemon.h"
#include "common/log.h"
#include "frontend/config.h"
#include "frontend/server.h"

extern char **environ;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gavel-frontend [--config FILE] [--port N] [--ready-fd FD]\n"
		"\n"
		"Serves the native /v1, Judge0- and Piston-compatible APIs. Options come\n"
		"from the [frontend], [database], [redis] and [log] sections of FILE and\n"
		"GAVEL_* variables (GAVEL_FRONTEND_PORT, GAVEL_DATABASE_SERVICE_URL: the\n"
		"URL of the gavel_frontend role, ...).\n"
		"\n"
		"  --config FILE   configuration file [none]\n"
		"  --port N        overrides frontend.port (0: any free port)\n"
		"  --ready-fd FD   write the bound port to FD once listening (tests)\n");
}

/* What a reload needs: the running config, and what main did to it after
 * loading (the file, the --port override). */
struct reload_ctx {
	struct fe_config *cfg;
	const char *path;
	int port;
};

/* SIGHUP: re-read the file and the environment, apply the flags as at
 * start, and take the reloadable options (log.level); a file that no longer
 * loads or changes a restart-only option changes nothing. */
static void reload_config(void *arg)
{
	const struct reload_ctx *rc = arg;
	struct fe_config next;
	struct gv_err err;
	if (fe_config_load(&next, rc->path, environ, &err) < 0) {
		gv_error(NULL, "config reload refused, keeping the running config: %s", err.msg);
		fe_config_free(&next);
		return;
	}
	if (rc->port >= 0 && rc->port <= 65535)
		next.port = rc->port;
	(void)gv_config_reload_apply(fe_config_table, fe_config_table_len, rc->cfg, &next,
				     offsetof(struct fe_config, log_level), rc->path);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "ready-fd", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	int port = -1, ready_fd = -1, c;
	while ((c = getopt_long(argc, argv, "c:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'r': ready_fd = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	gv_log_init("gavel-frontend", GV_LOG_INFO);
	struct fe_config cfg;
	struct gv_err err;
	if (fe_config_load(&cfg, config, environ, &err) < 0) {
		fprintf(stderr, "gavel-frontend: %s\n", err.msg);
		return 2;
	}
	gv_log_init("gavel-frontend", (enum gv_log_level)cfg.log_level);
	if (port >= 0 && port <= 65535)
		cfg.port = port;
	if (!fe_config_db_url(&cfg)[0]) {
		fprintf(stderr, "gavel-frontend: no database URL (database.service_url or database.url)\n");
		fe_config_free(&cfg);
		return 2;
	}
	/* Signals are taken by sigwait in this thread; block them before any
	 * worker thread starts so that none of them receives one. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct fe_app app;
	if (fe_app_init(&app, &cfg, &err) < 0) {
		fprintf(stderr, "gavel-frontend: %s\n", err.msg);
		fe_config_free(&cfg);
		return 1;
	}
	struct reload_ctx reload = { .cfg = &cfg, .path = config, .port = port };
	int rc = fe_server_run(&app, ready_fd, reload_config, &reload, &err);
	if (rc < 0)
		fprintf(stderr, "gavel-frontend: %s\n", err.msg);
	fe_app_free(&app);
	fe_config_free(&cfg);
	return rc < 0 ? 1 : 0;
}
