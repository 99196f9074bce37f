/* runsc as the engine's sandbox runtime (executor/sandbox/runtime.h): each
 * op is the engine's struct exec_runsc, with the sandbox's own user and
 * network namespaces set per call, handed to executor/sandbox/runsc.c. */
#include "executor/sandbox/runtime.h"

#include "executor/sandbox/engine.h"
#include "executor/sandbox/runsc.h"

/* The engine's runsc with sb's namespaces. Security argument: --network
 * is "host" only when sb names the sandbox's own network namespace, which
 * runsc joins (with the bundle naming it too), so "host" is that
 * namespace and never the executor's; every other sandbox gets
 * --network=none. The user namespace maps nobody to the sandbox's own
 * host uid (sandbox_uid.h). */
static struct exec_runsc sandbox_runsc(const struct exec_engine *e, const struct exec_runtime_sandbox *sb)
{
	struct exec_runsc rs = e->runsc;
	rs.join_userns = sb->userns_fd >= 0;
	rs.userns_fd = sb->userns_fd;
	rs.network_host = sb->netns_fd >= 0;
	rs.join_netns = sb->netns_fd >= 0;
	rs.netns_fd = sb->netns_fd;
	return rs;
}

static int rt_check(struct exec_engine *e, struct gv_err *err)
{
	return exec_runsc_check(&e->runsc, err);
}

static int rt_sweep(struct exec_engine *e, unsigned *n, struct gv_err *err)
{
	return exec_runsc_sweep(&e->runsc, n, err);
}

static int rt_run(struct exec_engine *e, const struct exec_runtime_sandbox *sb, pid_t *sandbox_pid,
		  struct gv_err *err)
{
	struct exec_runsc rs = sandbox_runsc(e, sb);
	return exec_runsc_run_detached(&rs, sb->bundle, sb->pid_file, sb->id, sb->stdio, sandbox_pid, err);
}

static int rt_create_spawn(struct exec_engine *e, const struct exec_runtime_sandbox *sb, pid_t *cli_pid,
			   struct gv_err *err)
{
	struct exec_runsc rs = sandbox_runsc(e, sb);
	return exec_runsc_create_spawn(&rs, sb->bundle, sb->pid_file, sb->id, sb->stdio, cli_pid, err);
}

static int rt_read_pid_file(struct exec_engine *e, const char *pid_file, pid_t *sandbox_pid, struct gv_err *err)
{
	return exec_runsc_read_pid_file(&e->runsc, pid_file, sandbox_pid, err);
}

static int rt_start(struct exec_engine *e, const char *id, struct gv_err *err)
{
	return exec_runsc_start(&e->runsc, id, err);
}

static int rt_delete_start(struct exec_engine *e, const char *id, pid_t *pid, struct gv_err *err)
{
	return exec_runsc_delete_start(&e->runsc, id, pid, err);
}

static int rt_checkpoint(struct exec_engine *e, const char *id, const char *image_dir, struct gv_err *err)
{
	return exec_runsc_checkpoint(&e->runsc, id, image_dir, err);
}

static int rt_restore(struct exec_engine *e, const struct exec_runtime_sandbox *sb, const char *image_dir,
		      pid_t *sandbox_pid, struct gv_err *err)
{
	struct exec_runsc rs = sandbox_runsc(e, sb);
	return exec_runsc_restore_detached(&rs, sb->bundle, sb->pid_file, image_dir, sb->id, sb->stdio, sandbox_pid,
					   err);
}

const struct exec_runtime_ops exec_runtime_runsc = {
	.name = "runsc",
	.own_uid = true,
	.check = rt_check,
	.sweep = rt_sweep,
	.run = rt_run,
	.create_spawn = rt_create_spawn,
	.read_pid_file = rt_read_pid_file,
	.start = rt_start,
	.delete_start = rt_delete_start,
	.checkpoint = rt_checkpoint,
	.restore = rt_restore,
};
