/* gavel-scheduler: flags, config, signals (common/daemon.c); the work is in
 * scheduler/sched.c.
 *
 *   gavel-scheduler [--config FILE] [--check-config]
 *
 * Options come from the defaults, then FILE, then GAVEL_* environment
 * variables (GAVEL_REDIS_URL, GAVEL_DATABASE_SERVICE_URL, ...). */
#include <stddef.h>
#include <string.h>

#include "common/daemon.h"
#include "common/log.h"
#include "scheduler/sched.h"

int main(int argc, char **argv)
{
	struct gv_daemon_spec spec = {
		.program = "gavel-scheduler",
		.component = "scheduler",
		.table = sched_config_table,
		.table_len = sched_config_table_len,
		.log_level_offset = offsetof(struct sched_config, log_level),
	};
	struct sched_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	int code;
	if (gv_daemon_start(&spec, argc, argv, &cfg, &code) != 0)
		return code;
	struct gv_err err;
	struct sched *sc = sched_new(&cfg, &err);
	if (!sc) {
		gv_error(NULL, "start-up: %s", err.msg);
		gv_config_free(sched_config_table, sched_config_table_len, &cfg);
		return 1;
	}
	gv_info(NULL, "started");
	sched_run(sc, &gv_daemon_stop);
	sched_free(sc);
	gv_info(NULL, "stopped");
	gv_config_free(sched_config_table, sched_config_table_len, &cfg);
	return 0;
}
