/* gavel-frontend's HTTP server: worker threads, each with its own
 * event_base, evhttp, PostgreSQL and Redis connections, all listening on
 * the same address with SO_REUSEPORT; a process-wide connection cap; the
 * request pipeline (route, authenticate, rate-limit, handle, reply). */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "frontend/api.h"
#include "frontend/config.h"
#include "languages/lang.h"
#include "tenants/key.h"

struct fe_worker;
struct fe_metrics;
struct fe_conn;
struct fe_addrtab;

/* Process-wide state, read-only once the workers run (counters atomic). */
struct fe_wsbudget;

struct fe_app {
	const struct fe_config *cfg;   /* borrowed */
	struct lang_registry langs;
	struct fe_catalog cat;
	struct fe_bounds bounds;
	struct tenant_pepper pepper;
	struct fe_metrics *metrics;
	atomic_int connections;        /* requests in progress (a gauge) */
	int port;                      /* the bound port (cfg port 0: chosen) */
	int metrics_port;              /* the metrics listener's port, 0: none */
	/* The connection guard (conn.c): effective caps, the per-address
	 * counts and each open connection by descriptor. */
	int conn_max;
	int conn_max_per_addr;         /* 0: no cap */
	struct fe_addrtab *addrs;
	_Atomic(struct fe_conn *) *by_fd;
	size_t by_fd_len;
	struct fe_worker **workers;
	int nworkers;
	struct fe_wsbudget *wsbudget;  /* every WebSocket's memory (wsbudget.h) */
};

/* Loads the languages, builds the catalog; frees with fe_app_free. */
int fe_app_init(struct fe_app *app, const struct fe_config *cfg, struct gv_err *err) GV_MUST_CHECK;
void fe_app_free(struct fe_app *app);

/* Binds, starts the workers, and serves until SIGINT/SIGTERM (blocked in
 * the calling thread, which must have blocked them and SIGHUP before
 * starting any other thread). ready_fd >= 0 gets "PORT\n" once listening
 * (tests). Each SIGHUP calls on_hup(hup_arg) in the calling thread (NULL:
 * ignored): main's config reload. */
int fe_server_run(struct fe_app *app, int ready_fd, void (*on_hup)(void *arg), void *hup_arg,
		  struct gv_err *err) GV_MUST_CHECK;
