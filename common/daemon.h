/* The start-up every Gavel daemon without flags of its own shares:
 * `--config FILE`, `--check-config`, `--help`; the config table loaded
 * from the defaults, FILE and GAVEL_* variables; logging at the config's
 * log.level; SIGTERM/SIGINT setting a stop flag; SIGPIPE ignored. */
#pragma once

#include <signal.h>
#include <stddef.h>

#include "common/config.h"

struct gv_daemon_spec {
	const char *program;   /* "gavel-scheduler": usage and error prefix */
	const char *component; /* "scheduler": the logger's component */
	const struct gv_config_option *table;
	size_t table_len;
	size_t log_level_offset; /* offsetof the int log level (enum gv_log_level) in the config struct */
};

/* Set by SIGTERM and SIGINT once gv_daemon_start returned 0. */
extern volatile sig_atomic_t gv_daemon_stop;

/* Parses argv, loads the config into cfg (zeroed by the caller) and sets
 * up logging and signals. Returns 0 when the daemon should run; otherwise
 * -1 with *exit_code set (help, --check-config, bad flags or config,
 * reported on stdout/stderr) and cfg already freed. */
int gv_daemon_start(const struct gv_daemon_spec *spec, int argc, char **argv, void *cfg, int *exit_code);
