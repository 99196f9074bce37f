/* gavel-frontend's configuration: one declarative table (common/config.h)
 * filling struct fe_config from defaults, an optional file and GAVEL_*
 * environment variables. Options of the [frontend] section plus the shared
 * [log], [database] and [redis] ones that the frontend uses. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"
#include "frontend/client_addr.h"

struct fe_config {
	int log_level;               /* enum gv_log_level */
	char *database_url;          /* owner role: used only when service_url is empty */
	char *database_service_url;  /* what the frontend connects with */
	uint64_t database_connect_timeout_ms;
	uint64_t database_statement_timeout_ms;
	char *redis_url;
	uint64_t redis_connect_timeout_ms;
	char *listen;
	int port;
	int threads;
	uint64_t max_body_size;
	uint64_t max_header_size;
	int max_connections;
	int max_connections_per_address; /* 0: no cap */
	uint64_t websocket_memory;            /* bytes all WebSockets may hold (wsbudget.h) */
	uint64_t websocket_memory_per_tenant; /* one tenant's share of it */
	int websockets_per_kernel;            /* open on one kernel, per process; 0: no cap */
	uint64_t request_timeout_ms;
	uint64_t header_timeout_ms;   /* whole request head, from accept or its first byte */
	uint64_t body_timeout_ms;     /* whole request body, from the end of the head */
	uint64_t upload_timeout_ms;   /* same for a problem package */
	char *metrics_token;          /* GET /metrics on the API port: Bearer token, "" refused */
	char *metrics_listen;
	int metrics_port;             /* 0: no metrics listener */
	uint64_t wait_timeout_ms;     /* longest wait=true hold */
	uint64_t sse_max_duration_ms;
	int max_batch_size;
	uint64_t max_source_size;
	int max_tests;
	uint64_t max_test_size;       /* one input or expected output */
	uint64_t max_additional_files_size; /* the archive of additional files, decoded */
	uint64_t jobe_file_ttl_ms;    /* Jobe's uploaded files: how long one is kept */
	uint64_t jobe_files_per_tenant; /* bytes one tenant's files may hold */
	uint64_t jobe_files_total;    /* bytes all tenants' files may hold */
	uint64_t max_problem_size;    /* POST/PUT /v1/problems archive */
	char *languages_dir;
	uint64_t auth_cache_ttl_ms;
	/* Comma-separated "lang=id" Judge0 id overrides: "python3=71,cpp=54". */
	struct gv_config_list judge0_ids;
	/* Browser origins allowed for a tenant whose own cors_origins is empty
	 * ("" none, "*" any; tenants/origin.h), as fe_config_load normalised it. */
	char *cors_origins;
	/* Reverse proxies whose client-address header is believed
	 * (frontend/client_addr.h), as written and as fe_config_load parsed
	 * them into proxies. */
	char *trusted_proxies;
	char *client_address_header;
	bool proxy_protocol;          /* trusted proxies send PROXY v1 lines */
	struct fe_proxies proxies;
};

extern const struct gv_config_option fe_config_table[];
extern const size_t fe_config_table_len;

/* Loads defaults, then path (NULL: no file), then envp. On failure err says
 * FILE:LINE: reason and *cfg holds nothing (fe_config_free is safe). */
int fe_config_load(struct fe_config *cfg, const char *path, char *const *envp,
		   struct gv_err *err) GV_MUST_CHECK;
void fe_config_free(struct fe_config *cfg);
/* The URL the daemon uses: service_url, else url. Borrowed from cfg. */
const char *fe_config_db_url(const struct fe_config *cfg);
