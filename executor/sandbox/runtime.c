/* The engine's calls into its sandbox runtime (executor/sandbox/runtime.h),
 * each failing closed: an engine without a runtime, or a runtime without
 * the op asked for, makes or starts no sandbox and returns an error the
 * caller turns into IE. */
#include "executor/sandbox/runtime.h"

#include "executor/sandbox/engine.h"

static int missing(const struct exec_engine *e, const char *op, struct gv_err *err)
{
	return gv_err_set(err, GV_ESANDBOX, "sandbox runtime %s: no %s", e->rt ? e->rt->name : "(none)", op);
}

bool exec_runtime_own_uid(const struct exec_engine *e)
{
	return !e->rt || e->rt->own_uid;
}

int exec_runtime_check(struct exec_engine *e, struct gv_err *err)
{
	return e->rt && e->rt->check ? e->rt->check(e, err) : missing(e, "check", err);
}

int exec_runtime_sweep(struct exec_engine *e, unsigned *n, struct gv_err *err)
{
	return e->rt && e->rt->sweep ? e->rt->sweep(e, n, err) : missing(e, "sweep", err);
}

int exec_runtime_run(struct exec_engine *e, const struct exec_runtime_sandbox *sb, pid_t *sandbox_pid,
		     struct gv_err *err)
{
	return e->rt && e->rt->run ? e->rt->run(e, sb, sandbox_pid, err) : missing(e, "run", err);
}

int exec_runtime_create_spawn(struct exec_engine *e, const struct exec_runtime_sandbox *sb, pid_t *cli_pid,
			      struct gv_err *err)
{
	return e->rt && e->rt->create_spawn ? e->rt->create_spawn(e, sb, cli_pid, err)
					    : missing(e, "create", err);
}

int exec_runtime_read_pid_file(struct exec_engine *e, const char *pid_file, pid_t *sandbox_pid,
			       struct gv_err *err)
{
	return e->rt && e->rt->read_pid_file ? e->rt->read_pid_file(e, pid_file, sandbox_pid, err)
					     : missing(e, "pid file", err);
}

int exec_runtime_start(struct exec_engine *e, const char *id, struct gv_err *err)
{
	return e->rt && e->rt->start ? e->rt->start(e, id, err) : missing(e, "start", err);
}

int exec_runtime_delete_start(struct exec_engine *e, const char *id, pid_t *pid, struct gv_err *err)
{
	*pid = -1;
	return e->rt && e->rt->delete_start ? e->rt->delete_start(e, id, pid, err) : missing(e, "delete", err);
}

int exec_runtime_checkpoint(struct exec_engine *e, const char *id, const char *image_dir, struct gv_err *err)
{
	return e->rt && e->rt->checkpoint ? e->rt->checkpoint(e, id, image_dir, err) : missing(e, "checkpoint", err);
}

int exec_runtime_restore(struct exec_engine *e, const struct exec_runtime_sandbox *sb, const char *image_dir,
			 pid_t *sandbox_pid, struct gv_err *err)
{
	return e->rt && e->rt->restore ? e->rt->restore(e, sb, image_dir, sandbox_pid, err)
				       : missing(e, "restore", err);
}
