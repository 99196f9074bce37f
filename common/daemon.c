/* Shared daemon start-up: flags, config, logging, signals. */
#include "common/daemon.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"

extern char **environ;

volatile sig_atomic_t gv_daemon_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	gv_daemon_stop = 1;
}

int gv_daemon_start(const struct gv_daemon_spec *spec, int argc, char **argv, void *cfg, int *exit_code)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	int check = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'k': check = 1; break;
		case 'h':
			printf("usage: %s [--config FILE] [--check-config]\n", spec->program);
			*exit_code = 0;
			return -1;
		default: *exit_code = 2; return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", spec->program, argv[optind]);
		*exit_code = 2;
		return -1;
	}
	struct gv_err err;
	if (gv_config_load(spec->table, spec->table_len, cfg, path, environ, &err) != 0) {
		fprintf(stderr, "%s: %s\n", spec->program, err.msg);
		*exit_code = 2;
		return -1;
	}
	int level = *(const int *)((const char *)cfg + spec->log_level_offset);
	gv_log_init(spec->component, (enum gv_log_level)level);
	if (check) {
		*exit_code = gv_config_dump(spec->table, spec->table_len, cfg, stdout, &err) ? 1 : 0;
		gv_config_free(spec->table, spec->table_len, cfg);
		return -1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}
