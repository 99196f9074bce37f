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
/* Set by SIGHUP once gv_daemon_start returned 0; gv_daemon_reload clears it. */
extern volatile sig_atomic_t gv_daemon_reload_asked;

/* Parses argv, loads the config into cfg (zeroed by the caller) and sets
 * up logging and signals. Returns 0 when the daemon should run; otherwise
 * -1 with *exit_code set (help, --check-config, bad flags or config,
 * reported on stdout/stderr) and cfg already freed. */
int gv_daemon_start(const struct gv_daemon_spec *spec, int argc, char **argv, void *cfg, int *exit_code);

/* Re-reads the config file and GAVEL_* variables gv_daemon_start used,
 * with its table, into a fresh struct of cfg_size bytes, and applies it with
 * gv_config_reload: the options flagged GV_CONFIG_RELOADABLE take their new
 * values in cfg, and log.level is applied at once. A file that no longer
 * loads, or that changes an option that is not reloadable, changes nothing
 * and is logged as an error: the daemon keeps running on what it had. Call
 * it from the thread that reads cfg, between two units of work. Returns 1
 * when the new values were applied, 0 when they were refused. */
int gv_daemon_reload(void *cfg, size_t cfg_size);

/* The second half of gv_daemon_reload, for a daemon that loads its config
 * its own way (the frontend, whose flags override options): applies next,
 * loaded fresh and adjusted as at start, to cfg, sets the log level, logs
 * the outcome naming from (the file), and frees next's fields. Returns 1
 * when applied, 0 when refused. */
int gv_config_reload_apply(const struct gv_config_option *table, size_t n, void *cfg, void *next,
			   size_t log_level_offset, const char *from);
