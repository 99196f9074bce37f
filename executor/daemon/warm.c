/* The node's warm-up (executor/daemon/daemon_internal.h): its precompiled
 * headers and JVM class archives (languages/lang_pch.h, lang_cds.h) are
 * built by a process of its own, at a low CPU priority, while the node
 * already takes jobs. A submission compiled meanwhile finds no header (or
 * the one of an older compiler) and compiles without it, as after any
 * mismatch: slower, never different. A file appears only whole: written
 * under a temporary name, then renamed, and the sandboxes that see the
 * folder mount it read-only. A node whose files are current (built ahead
 * by `gavel-executor --prepare`, which `make run` runs before it starts
 * the node) ends the warm-up within a second. */
#include "executor/daemon/daemon_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/backoff.h"
#include "languages/lang_pch.h"

/* Below the node's own work: the compilers it starts inherit it. */
#define WARM_NICE 10

/* Builds what is missing or stale; 0 when the folder was usable. */
static int build(const struct lang_registry *langs, const char *dir, struct gv_log_ctx *log, bool verbose)
{
	unsigned built = 0;
	char report[1024];
	struct gv_err err;
	uint64_t t0 = exec_daemon_mono_ms();
	if (lang_pch_prepare(langs, dir, &built, report, sizeof(report), &err) != 0) {
		gv_warn(log, "precompiled headers in %s: %s", dir, err.msg);
		return -1;
	}
	if (report[0])
		gv_warn(log, "precompiled headers not built (those languages compile without them): %s", report);
	if (built || verbose)
		gv_info(log, "precompiled headers and class archives: %u languages built in %s (%lld ms)", built, dir,
			(long long)(exec_daemon_mono_ms() - t0));
	return 0;
}

/* The warm-up process: runs no sandbox and never returns. SIGTERM (the
 * supervisor's handler, inherited, sets *d->stop) ends the compiler it
 * runs, so that a stopping node leaves none behind; so does the
 * supervisor's death. */
static void __attribute__((noreturn)) warm_main(struct daemon *d)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		_exit(1);
	prctl(PR_SET_NAME, "gavel-warm");
	if (setpriority(PRIO_PROCESS, 0, WARM_NICE) != 0)
		gv_warn(&d->log, "warm-up: setpriority: %s", strerror(errno));
	lang_run_capture_stop_on(d->stop);
	_exit(build(&d->langs, d->cfg->pch_dir, &d->log, false) == 0 ? 0 : 1);
}

pid_t exec_daemon_warm_spawn(struct daemon *d)
{
	if (!d->cfg->pch_dir || !*d->cfg->pch_dir)
		return 0;
	pid_t pid = fork();
	if (pid == 0)
		warm_main(d);
	if (pid < 0) {
		gv_warn(&d->log, "fork (warm-up): %s; C++ compiles without precompiled headers, javac without its "
				 "class archive, until the node restarts",
			strerror(errno));
		return 0;
	}
	return pid;
}

void exec_daemon_warm_reap(pid_t *pid, bool stop)
{
	if (*pid <= 0)
		return;
	if (stop)
		kill(*pid, SIGTERM);
	/* Stopped, it ends its compiler within a poll round (200 ms). */
	for (uint64_t t0 = exec_daemon_mono_ms();;) {
		pid_t p = waitpid(*pid, NULL, WNOHANG);
		if (p == *pid || (p < 0 && errno == ECHILD)) {
			*pid = 0;
			return;
		}
		if (!stop)
			return;
		if (exec_daemon_mono_ms() - t0 > 5000) {
			kill(*pid, SIGKILL);
			waitpid(*pid, NULL, 0);
			*pid = 0;
			return;
		}
		gv_backoff_sleep_ms(50);
	}
}

int exec_daemon_prepare(const struct exec_daemon_config *cfg, struct gv_err *err)
{
	if (!cfg->pch_dir || !*cfg->pch_dir) {
		printf("gavel-executor: executor.pch_dir is empty: no precompiled headers or class archives to build\n");
		return 0;
	}
	struct lang_registry langs;
	if (lang_registry_load(&langs, cfg->languages_dir, err) != 0) {
		gv_err_prefix(err, "languages from %s", cfg->languages_dir);
		return -1;
	}
	struct gv_log_ctx log = { 0 };
	int rc = build(&langs, cfg->pch_dir, &log, true);
	lang_registry_free(&langs);
	if (rc != 0)
		return gv_err_set(err, GV_ECONFIG, "%s is not usable (see above)", cfg->pch_dir);
	return 0;
}
