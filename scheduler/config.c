/* The option table of gavel-scheduler. Every option is documented here in
 * one line; deploy/gavel.conf.example carries the longer text. */
#include "scheduler/sched.h"

#include "common/log.h"
#include "common/queue.h"

const struct gv_config_option sched_config_table[] = {
	{ .name = "log.level", .type = GV_CONFIG_ENUM, GV_CONFIG_FIELD(struct sched_config, log_level),
	  .def = "info", .choices = gv_log_level_names, .flags = GV_CONFIG_RELOADABLE,
	  .doc = "lowest level written: debug, info, warn or error" },
	{ .name = "database.url", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct sched_config, database_owner_url),
	  .flags = GV_CONFIG_SECRET, .doc = "owner role URL (used only when service_url is empty)" },
	{ .name = "database.service_url", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct sched_config, database_url),
	  .flags = GV_CONFIG_SECRET, .doc = "URL of the gavel_scheduler role" },
	{ .name = "database.connect_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, db_connect_timeout_ms), .def = "5s", .doc = "per connection" },
	{ .name = "database.statement_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, db_statement_timeout_ms), .def = "30s", .doc = "per statement" },
	{ .name = "redis.url", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct sched_config, redis_url),
	  .def = "redis://127.0.0.1:6379/0", .flags = GV_CONFIG_SECRET, .doc = "Redis URL" },
	{ .name = "redis.connect_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, redis_connect_timeout_ms), .def = "2s", .doc = "per connection" },
	{ .name = "scheduler.redis_command_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, redis_command_timeout_ms), .def = "5s", .doc = "per command" },
	{ .name = "scheduler.node_heartbeat_timeout", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, node_heartbeat_timeout_ms),
	  .def = GV_QUEUE_HEARTBEAT_TIMEOUT_TEXT, .min = 1, .max = 86400000,
	  .flags = GV_CONFIG_RELOADABLE, .doc = "an executor silent this long is dead" },
	{ .name = "scheduler.leader_lock_ttl", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, leader_lock_ttl_ms), .def = "10s", .min = 300, .max = 86400000,
	  .doc = "leader lock lifetime; renewed every third" },
	{ .name = "scheduler.tick_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, tick_interval_ms), .def = "100ms", .min = 1, .max = 86400000,
	  .flags = GV_CONFIG_RELOADABLE, .doc = "placement period" },
	{ .name = "scheduler.wake_min_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, wake_min_interval_ms), .def = "2ms", .min = 0, .max = 60000,
	  .doc = "a queued job or a freed slot starts a pass at once, but passes are at least this far apart" },
	{ .name = "scheduler.reconcile_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, reconcile_interval_ms), .def = "30s", .min = 1, .max = 86400000,
	  .doc = "PostgreSQL vs Redis check period" },
	{ .name = "scheduler.reconcile_min_age", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, reconcile_min_age_ms), .def = "10s",
	  .doc = "only submissions older than this are re-enqueued" },
	{ .name = "scheduler.retention_interval", .type = GV_CONFIG_DURATION,
	  GV_CONFIG_FIELD(struct sched_config, retention_interval_ms), .def = "1h", .min = 0, .max = 604800000,
	  .doc = "period of the retention job (old finished submissions deleted); 0: never" },
	{ .name = "scheduler.instance", .type = GV_CONFIG_STRING, GV_CONFIG_FIELD(struct sched_config, instance),
	  .doc = "name in the leader lock; empty: host name and pid" },
};
const size_t sched_config_table_len = sizeof(sched_config_table) / sizeof(sched_config_table[0]);
