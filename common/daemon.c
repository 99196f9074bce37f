/* Shared daemon start-up: flags, config, logging, signals. */
#include "common/daemon.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

extern char **environ;

volatile sig_atomic_t gv_daemon_stop;
volatile sig_atomic_t gv_daemon_reload_asked;

/* What gv_daemon_start was given, kept for a reload: the --config path
 * (argv outlives the daemon) and a copy of the spec. */
static const char *daemon_config_path;
static struct gv_daemon_spec daemon_spec;

static void on_stop_signal(int sig)
{
	(void)sig;
	gv_daemon_stop = 1;
}

static void on_reload_signal(int sig)
{
	(void)sig;
	gv_daemon_reload_asked = 1;
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
	daemon_config_path = path;
	daemon_spec = *spec;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* SA_RESTART: a reload must not make a worker's engine calls fail
	 * with EINTR in the middle of a job (it reloads between jobs). */
	sa.sa_handler = on_reload_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int gv_config_reload_apply(const struct gv_config_option *table, size_t n, void *cfg, void *next,
			   size_t log_level_offset, const char *from)
{
	struct gv_err err;
	int applied = 0;
	if (gv_config_reload(table, n, cfg, next, &err) != 0) {
		gv_error(NULL, "config reload refused, keeping the running config: %s", err.msg);
	} else {
		gv_log_set_level((enum gv_log_level) * (const int *)((const char *)cfg + log_level_offset));
		gv_info(NULL, "config reloaded from %s", from ? from : "the environment");
		applied = 1;
	}
	/* next holds the values cfg gave up (or the refused ones): ours to free. */
	gv_config_free(table, n, next);
	return applied;
}

int gv_daemon_reload(void *cfg, size_t cfg_size)
{
	const struct gv_daemon_spec *spec = &daemon_spec;
	gv_daemon_reload_asked = 0;
	if (!spec->table) {
		gv_error(NULL, "config reload: the daemon was not started by gv_daemon_start");
		return 0;
	}
	void *next = calloc(1, cfg_size);
	if (!next) {
		gv_error(NULL, "config reload: out of memory; keeping the running config");
		return 0;
	}
	struct gv_err err;
	int applied = 0;
	if (gv_config_load(spec->table, spec->table_len, next, daemon_config_path, environ, &err) != 0) {
		gv_error(NULL, "config reload refused, keeping the running config: %s", err.msg);
		gv_config_free(spec->table, spec->table_len, next);
	} else {
		applied = gv_config_reload_apply(spec->table, spec->table_len, cfg, next, spec->log_level_offset,
						 daemon_config_path);
	}
	free(next);
	return applied;
}
