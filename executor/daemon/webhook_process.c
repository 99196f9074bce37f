/* The webhook delivery process of a node (executor/daemon/webhook.h): a
 * process of its own so that a slow receiver or a hung DNS lookup never
 * delays the supervisor's heartbeats or a worker's jobs. It drops to an
 * unprivileged user before it touches any tenant URL, then delivers until
 * SIGTERM. It holds no job, so the supervisor may kill and respawn it at
 * any time (an item it held comes back when its lease ends). */
#include "executor/daemon/daemon_internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/backoff.h"
#include "executor/daemon/webhook.h"

static volatile sig_atomic_t webhook_stop;
static void webhook_on_term(int sig)
{
	(void)sig;
	webhook_stop = 1;
}

/* Delivers until SIGTERM, or until Redis is lost and cannot be reached
 * again as the delivery user. */
static void deliver(struct exec_webhook_env *env)
{
	struct gv_err err;
	gv_err_clear(&err);
	uint64_t last_err = 0;
	while (!webhook_stop) {
		int got = exec_webhook_step(env, &err);
		if (got < 0 && !gv_redis_context(env->r) && gv_redis_ensure(env->r, &err) != 0) {
			/* Redis lost, and not reachable again as the delivery
			 * user (a socket only the executor's user may open): a
			 * new process connects before its drop. */
			gv_error(env->log, "webhooks: %s; the executor starts a new delivery process", err.msg);
			break;
		}
		if (got < 0) {
			if (exec_daemon_mono_ms() - last_err > 5000) {
				gv_error(env->log, "webhooks: %s", err.msg);
				last_err = exec_daemon_mono_ms();
			}
			gv_backoff_sleep_ms(1000);
		} else if (got == 0) {
			gv_backoff_sleep_ms(200);
		}
	}
}

/* The delivery process: runs no sandbox and never returns. */
static void webhook_main(struct daemon *d)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = webhook_on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	const struct exec_daemon_config *c = d->cfg;
	struct gv_err err;
	gv_err_clear(&err);
	prctl(PR_SET_NAME, "gavel-webhook");
	/* Before any tenant URL or response is touched: an unprivileged
	 * user, no capabilities, no_new_privs, only stdio inherited. The
	 * Redis connection alone is opened before the drop, to the
	 * operator's configured URL (no tenant input): a local Redis socket
	 * may admit only the executor's user (deploy/local/gavel-local lets
	 * no other user than the service user and root reach it), and the
	 * delivery user is not meant to reach it. */
	uid_t wuid;
	gid_t wgid;
	if (close_range(3, ~0u, 0) != 0 || exec_webhook_user_resolve(c->webhook_user, &wuid, &wgid, &err) != 0) {
		gv_error(&d->log, "webhooks: %s; not delivering", err.code ? err.msg : strerror(errno));
		gv_backoff_sleep_ms(5000);
		_exit(3);
	}
	struct gv_redis *r = exec_daemon_redis_open(c, (int)c->redis_command_timeout_ms, &err);
	if (!r) {
		gv_error(&d->log, "webhooks: %s; retrying", err.msg);
		gv_backoff_sleep_ms(5000);
		_exit(3);
	}
	if (exec_webhook_drop_privileges(wuid, wgid, &err) != 0) {
		gv_error(&d->log, "webhooks: %s; not delivering", err.msg);
		gv_backoff_sleep_ms(5000);
		_exit(3);
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || sodium_init() < 0) {
		gv_error(&d->log, "webhooks: libcurl or libsodium did not initialise");
		_exit(3);
	}
	struct gv_pg *pg = exec_daemon_pg_open(c, false, &err);
	if (!pg) {
		gv_error(&d->log, "webhooks: %s; retrying", err.msg);
		gv_redis_free(r);
		gv_backoff_sleep_ms(5000);
		_exit(3);
	}
	struct exec_webhook_opts o = {
		.max_attempts = (unsigned)c->webhook_max_attempts,
		.timeout_ms = c->webhook_timeout_ms,
		.backoff_ms = c->webhook_backoff_ms,
		.backoff_max_ms = c->webhook_backoff_max_ms,
		.allow_loopback = c->webhook_allow_loopback,
		.recover_after_ms = c->webhook_recover_after_ms,
	};
	if (o.allow_loopback)
		gv_warn(&d->log, "webhooks: executor.webhook_allow_loopback is on: a test setting, never for production");
	struct exec_webhook_env env = { .opts = &o, .r = r, .pg = pg, .log = &d->log };
	deliver(&env);
	bool lost = !webhook_stop;
	gv_redis_free(r);
	gv_pg_free(pg);
	curl_global_cleanup();
	_exit(lost ? 3 : 0);
}

pid_t exec_daemon_webhook_spawn(struct daemon *d)
{
	pid_t pid = fork();
	if (pid == 0)
		webhook_main(d);
	if (pid < 0)
		gv_error(&d->log, "fork (webhook delivery): %s", strerror(errno));
	return pid;
}
