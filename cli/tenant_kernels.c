/* Stopping a disabled tenant's kernels (tenant_kernels.h). */
#include "cli/tenant_kernels.h"

#include <stdio.h>
#include <string.h>

#include "common/kernel_inbox.h"
#include "common/queue.h"
#include "common/redis.h"
#include "tenants/kernel_stop.h"

/* A queued kernel's end, as the frontend's cancel says it: its clients
 * hear `gone`, waiters `done`, and its (empty) list and counts go. */
static int announce_finished(struct gv_redis *r, const char *tenant_id, const char *kid, struct gv_err *err)
{
	char ch[GV_QUEUE_KEY_MAX];
	snprintf(ch, sizeof(ch), GV_QUEUE_KOUT_PREFIX "%s", kid);
	const char *gone[] = { "PUBLISH", ch, "gone " TENANT_KERNEL_STOP_REASON "\n" };
	const char *done[] = { "PUBLISH", GV_QUEUE_DONE_CHANNEL, kid };
	struct gv_kin_args a;
	redisReply *rep;
	if (!(rep = gv_redis_commandv(r, 3, gone, NULL, err)))
		return -1;
	gv_redis_reply_free(rep);
	if (!(rep = gv_redis_commandv(r, 3, done, NULL, err)))
		return -1;
	gv_redis_reply_free(rep);
	if (gv_kin_drop_args(&a, tenant_id, kid) != 0)
		return gv_err_set(err, GV_EINVAL, "kernel id too long");
	if (!(rep = gv_redis_commandv(r, a.argc, a.argv, a.lens, err)))
		return -1;
	gv_redis_reply_free(rep);
	return 0;
}

/* `stop tenant_disabled` for a running kernel: a command, pushed whatever
 * its state and never refused for bytes. */
static int ask_stop(struct gv_redis *r, const char *tenant_id, const char *kid, struct gv_err *err)
{
	static const char cmd[] = "stop " TENANT_KERNEL_STOP_REASON "\n";
	struct gv_kin_args a;
	if (gv_kin_push_args(&a, tenant_id, kid, GV_KIN_COMMAND, cmd, sizeof(cmd) - 1) != 0)
		return gv_err_set(err, GV_EINVAL, "kernel id too long");
	redisReply *rep = gv_redis_commandv(r, a.argc, a.argv, a.lens, err);
	if (!rep)
		return -1;
	int rc = rep->type == REDIS_REPLY_INTEGER && rep->integer > 0
			 ? 0
			 : gv_err_set(err, GV_EREDIS, "its command list refused the stop");
	gv_redis_reply_free(rep);
	return rc;
}

int cli_tenant_kernels_stop(PGconn *conn, const char *redis_url, const char *tenant_id, const char *actor)
{
	struct tenant_kernel_ids queued, running;
	struct gv_err err;
	if (tenant_kernels_stop(conn, tenant_id, actor, &queued, &running, &err) != 0) {
		fprintf(stderr, "gavel tenant: %s\n", err.msg);
		tenant_kernel_ids_free(&queued);
		tenant_kernel_ids_free(&running);
		return 1;
	}
	int status = 0;
	if (queued.n + running.n > 0 && (!redis_url || !redis_url[0])) {
		fprintf(stderr, "gavel tenant: warning: GAVEL_REDIS_URL not set; %zu running kernel(s) were not asked "
				"to stop (they end at their idle or lifetime limit)\n", running.n);
		status = 1;
	} else if (queued.n + running.n > 0) {
		struct gv_redis_opts ro = { .url = redis_url, .max_attempts = 2 };
		struct gv_redis *r = gv_redis_new(&ro, &err);
		for (size_t i = 0; r && i < queued.n; i++)
			if (announce_finished(r, tenant_id, queued.ids[i], &err) != 0) {
				fprintf(stderr, "gavel tenant: kernel %s: finished, not announced: %s\n", queued.ids[i],
					err.msg);
				status = 1;
			}
		for (size_t i = 0; r && i < running.n; i++)
			if (ask_stop(r, tenant_id, running.ids[i], &err) != 0) {
				fprintf(stderr, "gavel tenant: kernel %s: not asked to stop: %s\n", running.ids[i], err.msg);
				status = 1;
			}
		if (!r) {
			fprintf(stderr, "gavel tenant: Redis: %s; running kernels were not asked to stop\n", err.msg);
			status = 1;
		}
		gv_redis_free(r);
	}
	printf("kernels: %zu queued finished, %zu running asked to stop\n", queued.n, running.n);
	tenant_kernel_ids_free(&queued);
	tenant_kernel_ids_free(&running);
	return status;
}
