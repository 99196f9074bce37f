/* The fake sandbox runtime of the unit tests (fake_runtime.h). */
#include "tests/support/fake_runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "executor/sandbox/record.h"

static struct fake_runtime *g_fake; /* one fake engine per test process at a time */

/* ---- the runtime ---- */

static int fk_check(struct exec_engine *e, struct gv_err *err)
{
	(void)e, (void)err;
	return 0;
}

static int fk_sweep(struct exec_engine *e, unsigned *n, struct gv_err *err)
{
	(void)e, (void)err;
	*n = 0;
	return 0;
}

static int fk_run(struct exec_engine *e, const struct exec_runtime_sandbox *sb, pid_t *sandbox_pid,
		  struct gv_err *err)
{
	g_fake->runs++;
	if (g_fake->fail_run)
		return gv_err_set(err, GV_ESANDBOX, "fake runtime: run failed");
	char box[PATH_MAX];
	snprintf(box, sizeof(box), "%s/box", sb->bundle);
	pid_t pid = fork();
	if (pid < 0)
		return gv_err_errno(err, "fork");
	if (pid == 0) {
		if (dup2(sb->stdio[0], 0) < 0 || dup2(sb->stdio[1], 1) < 0 || dup2(sb->stdio[2], 2) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		_exit(g_fake->init ? g_fake->init(0, 1, box, g_fake->sh) : 0);
	}
	if (exec_reaper_watch(&e->reaper, pid, err) != 0) {
		kill(pid, SIGKILL);
		return -1;
	}
	*sandbox_pid = pid;
	return 0;
}

static int fk_delete_start(struct exec_engine *e, const char *id, pid_t *pid, struct gv_err *err)
{
	(void)id;
	g_fake->deletes++;
	pid_t p = fork();
	if (p < 0)
		return gv_err_errno(err, "fork");
	if (p == 0)
		_exit(0);
	*pid = p;
	return exec_reaper_watch(&e->reaper, p, err);
}

/* No create_spawn, read_pid_file or start: a sandbox created ahead of
 * demand cannot be made here, which the tests use to see a missing op
 * fail closed. */
static const struct exec_runtime_ops fake_ops = {
	.name = "fake",
	.own_uid = false,
	.check = fk_check,
	.sweep = fk_sweep,
	.run = fk_run,
	.delete_start = fk_delete_start,
};

static const struct exec_runtime_ops fake_ops_no_run = {
	.name = "fake-no-run",
	.own_uid = false,
	.check = fk_check,
	.sweep = fk_sweep,
	.delete_start = fk_delete_start,
};

/* ---- the cgroup ---- */

static int fcg_check(const struct exec_cgroup *cg, struct gv_err *err)
{
	(void)cg, (void)err;
	return 0;
}

static int fcg_oom(const struct exec_cgroup *cg, const char *rel, uint64_t *out, struct gv_err *err)
{
	(void)cg, (void)rel, (void)err;
	*out = g_fake->sh->oom_kills;
	return 0;
}

static int fcg_peak(const struct exec_cgroup *cg, const char *rel, uint64_t *out, struct gv_err *err)
{
	(void)cg, (void)rel, (void)err;
	*out = 0;
	return 0;
}

static int fcg_cpu(const struct exec_cgroup *cg, const char *rel, uint64_t *out, struct gv_err *err)
{
	(void)cg, (void)rel;
	if (g_fake->sh->cpu_unreadable)
		return gv_err_set(err, EIO, "fake cgroup: cpu unreadable");
	*out = g_fake->sh->cpu_ns;
	return 0;
}

static int fcg_remove(const struct exec_cgroup *cg, const char *rel, struct gv_err *err)
{
	(void)cg, (void)rel, (void)err;
	return 0;
}

static const struct exec_cgroup_ops fake_cg_ops = {
	.name = "fake",
	.check = fcg_check,
	.oom_kills = fcg_oom,
	.peak_memory = fcg_peak,
	.cpu_usage = fcg_cpu,
	.remove = fcg_remove,
};

/* ---- the engine ---- */

int fake_engine_init(struct exec_engine *e, struct fake_runtime *f, uint64_t session_wall_ms, struct gv_err *err)
{
	memset(e, 0, sizeof(*e));
	e->work_root_fd = -1;
	e->uids.dir_fd = -1;
	g_fake = f;
	if (!f->sh) {
		f->sh = mmap(NULL, sizeof(*f->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (f->sh == MAP_FAILED) {
			f->sh = NULL;
			return gv_err_errno(err, "mmap");
		}
	}
	memset((void *)f->sh, 0, sizeof(*f->sh));
	snprintf(f->work_root, sizeof(f->work_root), "/tmp/gavel-fake-XXXXXX");
	if (!mkdtemp(f->work_root))
		return gv_err_errno(err, "mkdtemp");
	e->cfg = (struct exec_engine_config){
		.runsc_path = "/nonexistent/runsc",
		.runsc_root = f->work_root,
		.work_root = f->work_root,
		.init_path = "/nonexistent/gavel-init",
		.cgroup_parent = "gavel",
		.tmp_size_kb = 65536,
		.headroom_kb = 65536,
		.session_wall_ms = session_wall_ms ? session_wall_ms : 1800000,
		.cpu_quota_pct = 100,
		.pids_limit = 4096,
	};
	e->cg.ops = &fake_cg_ops;
	e->runsc.reaper = &e->reaper;
	e->rt = f->no_run ? &fake_ops_no_run : &fake_ops;
	signal(SIGPIPE, SIG_IGN);
	e->work_root_fd = open(f->work_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (e->work_root_fd < 0)
		return gv_err_errno(err, "open %s", f->work_root);
	exec_bundle_default_etc_binds(e->etc_binds);
	exec_bundle_default_usr_dirs(e->usr_dirs);
	return 0;
}

void fake_engine_fini(struct exec_engine *e, struct fake_runtime *f)
{
	exec_engine_fini(e);
	rmdir(f->work_root);
	g_fake = NULL;
}

/* ---- for stand-ins ---- */

int fake_read_frame(int fd, char kind[17], char **payload, size_t *len)
{
	char hdr[64];
	size_t n = 0;
	for (;;) {
		if (n == sizeof(hdr) - 1)
			return -1;
		ssize_t r = read(fd, &hdr[n], 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (hdr[n] == '\n')
			break;
		n++;
	}
	hdr[n] = '\0';
	unsigned long l = 0;
	if (sscanf(hdr, "%16s %lu", kind, &l) != 2 || l > (64ul << 20))
		return -1;
	*payload = malloc(l + 1);
	if (!*payload)
		return -1;
	for (size_t got = 0; got < l;) {
		ssize_t r = read(fd, *payload + got, l - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(*payload);
			return -1;
		}
		got += (size_t)r;
	}
	(*payload)[l] = '\0';
	*len = l;
	return 0;
}

int fake_send(int fd, const char *kind, const void *payload, size_t len)
{
	char hdr[EXEC_FRAME_HEADER_MAX + 1];
	struct gv_err err;
	int h = exec_frame_header(hdr, sizeof(hdr), kind, len, &err);
	if (h < 0 || gv_write_all(fd, hdr, (size_t)h) != 0)
		return -1;
	return len ? gv_write_all(fd, payload, len) : 0;
}

int fake_send_phase(int fd, const char *out, int phase, uint32_t index, int status, int limit, uint64_t time_ms)
{
	struct exec_record r = {
		.phase = (enum exec_phase)phase,
		.index = index,
		.status = (enum exec_status)status,
		.limit = (enum exec_limit)limit,
		.time_ms = time_ms,
		.present = index ? EXEC_REC_INDEX : 0u,
	};
	char rec[1024];
	struct gv_err err;
	int n = exec_record_format(&r, rec, sizeof(rec), &err);
	if (n < 0)
		return -1;
	if (fake_send(fd, "stdout", out, out ? strlen(out) : 0) != 0 || fake_send(fd, "stderr", "", 0) != 0)
		return -1;
	return fake_send(fd, "result", rec, (size_t)n);
}
