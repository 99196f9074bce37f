/* The option table of gavel-frontend. Every option is documented here in
 * one line; deploy/gavel.conf.example carries the longer text. */
#include "frontend/config.h"

#include <string.h>

#include "common/jobspec.h"
#include "common/log.h"
#include "tenants/origin.h"

#define F(field) GV_CONFIG_FIELD(struct fe_config, field)


const struct gv_config_option fe_config_table[] = {
	{ .name = "log.level", .type = GV_CONFIG_ENUM, F(log_level), .def = "info",
	  .choices = gv_log_level_names, .flags = GV_CONFIG_RELOADABLE, .doc = "lowest level written" },
	{ .name = "database.url", .type = GV_CONFIG_STRING, F(database_url), .def = "",
	  .flags = GV_CONFIG_SECRET, .doc = "owner role URL (fallback when service_url is empty)" },
	{ .name = "database.service_url", .type = GV_CONFIG_STRING, F(database_service_url), .def = "",
	  .flags = GV_CONFIG_SECRET, .doc = "URL of the gavel_frontend role" },
	{ .name = "database.connect_timeout", .type = GV_CONFIG_DURATION,
	  F(database_connect_timeout_ms), .def = "5s", .min = 100, .max = 600000,
	  .doc = "time allowed to establish one connection" },
	{ .name = "database.statement_timeout", .type = GV_CONFIG_DURATION,
	  F(database_statement_timeout_ms), .def = "30s", .min = 0, .max = 3600000,
	  .doc = "longest a single statement may run (0: none)" },
	{ .name = "redis.url", .type = GV_CONFIG_STRING, F(redis_url), .def = "redis://127.0.0.1:6379/0",
	  .flags = GV_CONFIG_SECRET, .doc = "Redis URL" },
	{ .name = "redis.connect_timeout", .type = GV_CONFIG_DURATION, F(redis_connect_timeout_ms),
	  .def = "2s", .min = 100, .max = 600000, .doc = "time allowed to establish one connection" },
	{ .name = "frontend.listen", .type = GV_CONFIG_STRING, F(listen), .def = "127.0.0.1",
	  .min = 1, .max = 255, .doc = "address to listen on" },
	{ .name = "frontend.port", .type = GV_CONFIG_INT, F(port), .def = "2358", .min = 0, .max = 65535,
	  .doc = "TCP port (0: any free port, for tests)" },
	{ .name = "frontend.threads", .type = GV_CONFIG_INT, F(threads), .def = "4", .min = 1, .max = 256,
	  .doc = "event-loop threads" },
	{ .name = "frontend.max_body_size", .type = GV_CONFIG_SIZE, F(max_body_size), .def = "1m",
	  .min = 1024, .max = 1024LL * 1024 * 1024, .doc = "largest request body (413 beyond)" },
	{ .name = "frontend.max_header_size", .type = GV_CONFIG_SIZE, F(max_header_size), .def = "16k",
	  .min = 1024, .max = 1024 * 1024, .doc = "largest request header block" },
	{ .name = "frontend.max_connections", .type = GV_CONFIG_INT, F(max_connections), .def = "4096",
	  .min = 16, .max = 1000000,
	  .doc = "open client connections, counted from accept; beyond, the oldest idle one or the new one is closed" },
	{ .name = "frontend.max_connections_per_address", .type = GV_CONFIG_INT,
	  F(max_connections_per_address), .def = "256", .min = 0, .max = 1000000,
	  .doc = "open connections from one IPv4 address or IPv6 /64 (0: no cap)" },
	{ .name = "frontend.websocket_memory", .type = GV_CONFIG_SIZE, F(websocket_memory), .def = "256m",
	  .min = 1024 * 1024, .max = 64LL * 1024 * 1024 * 1024,
	  .doc = "bytes all WebSockets of the process may hold (unread output, unfinished messages); a client "
		 "past it is dropped" },
	{ .name = "frontend.websocket_memory_per_tenant", .type = GV_CONFIG_SIZE, F(websocket_memory_per_tenant),
	  .def = "64m", .min = 1024 * 1024, .max = 64LL * 1024 * 1024 * 1024,
	  .doc = "one tenant's share of frontend.websocket_memory" },
	{ .name = "frontend.websockets_per_kernel", .type = GV_CONFIG_INT, F(websockets_per_kernel), .def = "8",
	  .min = 0, .max = 100000, .doc = "WebSockets open on one notebook kernel, per process (0: no cap)" },
	{ .name = "frontend.request_timeout", .type = GV_CONFIG_DURATION, F(request_timeout_ms),
	  .def = "30s", .min = 100, .max = 3600000,
	  .doc = "idle time allowed while a client sends its request, reads the reply or keeps the connection" },
	{ .name = "frontend.header_timeout", .type = GV_CONFIG_DURATION, F(header_timeout_ms), .def = "10s",
	  .min = 100, .max = 3600000, .doc = "time for the whole request head, from accept or its first byte" },
	{ .name = "frontend.body_timeout", .type = GV_CONFIG_DURATION, F(body_timeout_ms), .def = "30s",
	  .min = 100, .max = 3600000, .doc = "time for the whole request body, from the end of the head" },
	{ .name = "frontend.upload_timeout", .type = GV_CONFIG_DURATION, F(upload_timeout_ms), .def = "5m",
	  .min = 100, .max = 86400000, .doc = "time for the whole body of a problem package upload" },
	{ .name = "frontend.metrics_token", .type = GV_CONFIG_STRING, F(metrics_token), .def = "",
	  .max = 4096, .flags = GV_CONFIG_SECRET,
	  .doc = "Bearer token for GET /metrics on the API port (empty: refused there)" },
	{ .name = "frontend.metrics_listen", .type = GV_CONFIG_STRING, F(metrics_listen), .def = "127.0.0.1",
	  .min = 1, .max = 255, .doc = "address of the metrics listener" },
	{ .name = "frontend.metrics_port", .type = GV_CONFIG_INT, F(metrics_port), .def = "0", .min = 0,
	  .max = 65535, .doc = "port serving GET /metrics without a token (0: none)" },
	{ .name = "frontend.wait_timeout", .type = GV_CONFIG_DURATION, F(wait_timeout_ms), .def = "20s",
	  .min = 0, .max = 3600000, .doc = "longest a wait=true request is held before 202" },
	{ .name = "frontend.sse_max_duration", .type = GV_CONFIG_DURATION, F(sse_max_duration_ms),
	  .def = "10m", .min = 1000, .max = 86400000, .doc = "longest an SSE stream stays open" },
	{ .name = "frontend.max_batch_size", .type = GV_CONFIG_INT, F(max_batch_size), .def = "20",
	  .min = 1, .max = 1000, .doc = "submissions in one Judge0 batch" },
	{ .name = "frontend.max_source_size", .type = GV_CONFIG_SIZE, F(max_source_size), .def = "256k",
	  .min = 1, .max = 64LL * 1024 * 1024, .doc = "bytes of source (all files together)" },
	{ .name = "frontend.max_tests", .type = GV_CONFIG_INT, F(max_tests), .def = "100", .min = 1,
	  .max = 10000, .doc = "inline tests in one submission" },
	{ .name = "frontend.max_test_size", .type = GV_CONFIG_SIZE, F(max_test_size), .def = "1m",
	  .min = 1, .max = 1024LL * 1024 * 1024, .doc = "bytes of one stdin, input or expected output" },
	{ .name = "frontend.max_additional_files_size", .type = GV_CONFIG_SIZE, F(max_additional_files_size),
	  .def = "1m", .min = 1, .max = GV_JOBSPEC_ADDITIONAL_FILES_MAX,
	  .doc = "bytes of a submission's additional files archive (decoded; at most 10m)" },
	{ .name = "frontend.jobe_file_ttl", .type = GV_CONFIG_DURATION, F(jobe_file_ttl_ms), .def = "24h",
	  .min = 1000, .max = 30LL * 86400000, .doc = "how long a file uploaded through Jobe's API is kept" },
	{ .name = "frontend.jobe_files_per_tenant", .type = GV_CONFIG_SIZE, F(jobe_files_per_tenant), .def = "64m",
	  .min = 1024, .max = 64LL * 1024 * 1024 * 1024, .doc = "bytes of Jobe files one tenant may hold in Redis" },
	{ .name = "frontend.jobe_files_total", .type = GV_CONFIG_SIZE, F(jobe_files_total), .def = "1g",
	  .min = 1024, .max = 1024LL * 1024 * 1024 * 1024, .doc = "bytes of Jobe files all tenants together may hold in Redis" },
	{ .name = "frontend.languages_dir", .type = GV_CONFIG_STRING, F(languages_dir),
	  .def = "languages", .min = 1, .max = 4096, .doc = "folder of language definition files" },
	{ .name = "frontend.auth_cache_ttl", .type = GV_CONFIG_DURATION, F(auth_cache_ttl_ms),
	  .def = "1s", .min = 0, .max = 1000, .doc = "how long a looked-up key is trusted (<= 1s)" },
	{ .name = "frontend.judge0_ids", .type = GV_CONFIG_LIST, F(judge0_ids), .def = "",
	  .doc = "Judge0 language id overrides: lang=id, ..." },
	{ .name = "frontend.cors_origins", .type = GV_CONFIG_STRING, F(cors_origins), .def = "",
	  .max = TENANT_ORIGINS_BUF - 1,
	  .doc = "browser origins allowed for tenants without their own list (\"\" none, * any)" },
	{ .name = "frontend.trusted_proxies", .type = GV_CONFIG_STRING, F(trusted_proxies), .def = "",
	  .max = 4096, .doc = "reverse proxies whose client-address header is believed: addresses and CIDR ranges" },
	{ .name = "frontend.client_address_header", .type = GV_CONFIG_STRING, F(client_address_header),
	  .def = "X-Forwarded-For", .min = 1, .max = 64,
	  .doc = "the header the trusted proxies set: X-Forwarded-For or Forwarded" },
	{ .name = "frontend.proxy_protocol", .type = GV_CONFIG_BOOL, F(proxy_protocol), .def = "false",
	  .doc = "the trusted proxies start each connection with a PROXY protocol v1 line (required from them)" },
	{ .name = "frontend.max_problem_size", .type = GV_CONFIG_SIZE, F(max_problem_size), .def = "64m",
	  .min = 1024, .max = 1024LL * 1024 * 1024, .doc = "largest problem package upload (413 beyond)" },
};

const size_t fe_config_table_len = sizeof(fe_config_table) / sizeof(fe_config_table[0]);

int fe_config_load(struct fe_config *cfg, const char *path, char *const *envp, struct gv_err *err)
{
	memset(cfg, 0, sizeof(*cfg));
	if (gv_config_load(fe_config_table, fe_config_table_len, cfg, path, envp, err) != 0)
		return -1;
	/* Stored in the normal form tenant_origins_allow reads. */
	char origins[TENANT_ORIGINS_BUF];
	if (tenant_origins_parse(cfg->cors_origins, origins, sizeof(origins), err) != 0) {
		gv_err_prefix(err, "frontend.cors_origins");
		return -1;
	}
	size_t len = strlen(origins);
	if (len <= strlen(cfg->cors_origins))
		memcpy(cfg->cors_origins, origins, len + 1);
	if (fe_proxies_parse(cfg->trusted_proxies, cfg->client_address_header, &cfg->proxies, err) != 0) {
		gv_err_prefix(err, "frontend");
		return -1;
	}
	cfg->proxies.proxy_protocol = cfg->proxy_protocol;
	return 0;
}

void fe_config_free(struct fe_config *cfg)
{
	if (cfg)
		gv_config_free(fe_config_table, fe_config_table_len, cfg);
}

const char *fe_config_db_url(const struct fe_config *cfg)
{
	if (cfg->database_service_url && cfg->database_service_url[0])
		return cfg->database_service_url;
	return cfg->database_url ? cfg->database_url : "";
}
