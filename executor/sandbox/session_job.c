/* A job as the sandbox receives it: the job's checks before any sandbox
 * is made, the job record of executor/PROTOCOL.md, and the files staged
 * into the work dir (/box) before the sandbox starts. */
#include "executor/sandbox/session_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "executor/sandbox/cputime.h"

#define MAX_FILES 64
/* Sources, or an uploaded package archive (<= 64 MiB) plus gavel-unpack. */
#define MAX_FILES_BYTES (80u << 20)
#define MAX_ARGS 64
#define MAX_ARG_LEN 4096

static bool file_name_ok(const char *n)
{
	size_t len = n ? strlen(n) : 0;
	if (len == 0 || len > 64 || strcmp(n, ".") == 0 || strcmp(n, "..") == 0 ||
	    strcmp(n, "job") == 0)
		return false;
	return strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == len;
}

static int check_argv(const char *const *argv, const char *what, struct gv_err *err)
{
	size_t n = 0;
	for (; argv[n]; n++) {
		if (n >= MAX_ARGS)
			return gv_err_set(err, GV_ELIMIT, "%s: more than %d arguments", what, MAX_ARGS);
		size_t l = strlen(argv[n]);
		if (l > MAX_ARG_LEN)
			return gv_err_set(err, GV_ELIMIT, "%s: argument longer than %d", what, MAX_ARG_LEN);
		/* A newline would inject a key into the job record. */
		if (memchr(argv[n], '\n', l))
			return gv_err_set(err, GV_EINVAL, "%s: argument contains a newline", what);
	}
	if (n == 0)
		return gv_err_set(err, GV_EINVAL, "%s is empty", what);
	return 0;
}

static int check_limits(const struct exec_limits *l, const char *what, struct gv_err *err)
{
	if (!l->cpu_ms || !l->wall_ms || !l->memory_kb)
		return gv_err_set(err, GV_EINVAL, "%s limits: cpu_ms, wall_ms and memory_kb are required", what);
	if (l->wall_ms < l->cpu_ms)
		return gv_err_set(err, GV_EINVAL, "%s limits: wall_ms below cpu_ms", what);
	if (l->wall_ms > 43200000 || l->memory_kb > (64ull << 20) || l->memory_kb < 1024 ||
	    l->output_bytes > (64u << 20) || l->stderr_bytes > (64u << 20) || l->procs > 4096 || l->sample_ms > 1000)
		return gv_err_set(err, GV_ELIMIT, "%s limits out of range", what);
	return 0;
}

int exec_job_check(const struct exec_job *job, struct gv_err *err)
{
	if (!exec_cgroup_name_ok(job->tenant))
		return gv_err_set(err, GV_EINVAL, "tenant name not usable for a sandbox");
	if (!job->run_argv || check_argv(job->run_argv, "run argv", err) != 0)
		return job->run_argv ? -1 : gv_err_set(err, GV_EINVAL, "no run argv");
	if (job->compile_argv && check_argv(job->compile_argv, "compile argv", err) != 0)
		return -1;
	if (check_limits(&job->run_limits, "run", err) != 0)
		return -1;
	if (job->cpu_quota_pct > 6400)
		return gv_err_set(err, GV_ELIMIT, "cpu_quota_pct above 6400");
	if (job->compile_argv && check_limits(&job->compile_limits, "compile", err) != 0)
		return -1;
	if (job->n_files > MAX_FILES)
		return gv_err_set(err, GV_ELIMIT, "more than %d files", MAX_FILES);
	/* A file I/O name is a plain name that no job file has: init creates
	 * those files afresh in /box and never replaces one of the job's. */
	const char *io[2] = { job->input_file, job->output_file };
	for (size_t k = 0; k < 2; k++) {
		if (!io[k])
			continue;
		if (job->interactive || !file_name_ok(io[k]) || strncmp(io[k], ".gavel", 6) == 0)
			return gv_err_set(err, GV_EINVAL, "file I/O name not allowed%s",
					  job->interactive ? " in an interactive job" : "");
		for (size_t i = 0; i < job->n_files; i++)
			if (strcmp(io[k], job->files[i].name) == 0)
				return gv_err_set(err, GV_EINVAL, "file I/O name %s is one of the job's files", io[k]);
	}
	if (io[0] && io[1] && strcmp(io[0], io[1]) == 0)
		return gv_err_set(err, GV_EINVAL, "input_file and output_file are the same file");
	size_t total = 0;
	for (size_t i = 0; i < job->n_files; i++) {
		if (!file_name_ok(job->files[i].name))
			return gv_err_set(err, GV_EINVAL, "file name not allowed in the work dir");
		if (job->files[i].len > MAX_FILES_BYTES - total)
			return gv_err_set(err, GV_ELIMIT, "files larger than %u bytes", MAX_FILES_BYTES);
		total += job->files[i].len;
		for (size_t j = 0; j < i; j++)
			if (strcmp(job->files[i].name, job->files[j].name) == 0)
				return gv_err_set(err, GV_EINVAL, "duplicate file name");
	}
	return 0;
}

struct strbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

GV_PRINTF(2, 3) static void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t ncap = (b->cap + (size_t)n + 1) * 2;
		char *np = realloc(b->p, ncap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
}

/* host_cpu: init gets the loose CPU limit of exec_cpu_guest_limit and the
 * host decides TLE from its own figure (executor/sandbox/cputime.h). */
static void limits_record(struct strbuf *b, const char *pfx, const struct exec_limits *l, bool test,
			  bool host_cpu)
{
	uint64_t cpu = host_cpu ? exec_cpu_guest_limit(l->cpu_ms, l->wall_ms) : l->cpu_ms;
	sb_printf(b, "%scpu_ms:%" PRIu64 "\n%swall_ms:%" PRIu64 "\n%smemory_kb:%" PRIu64 "\n", pfx,
		  cpu, pfx, l->wall_ms, pfx, l->memory_kb);
	if (l->output_bytes || test)
		sb_printf(b, "%soutput_bytes:%" PRIu64 "\n", pfx, l->output_bytes);
	/* The real time limit, for gavel-init's idle rule (PROTOCOL.md). */
	if (test)
		sb_printf(b, "idle_ms:%" PRIu64 "\n", l->cpu_ms);
	if (test && l->stderr_bytes)
		sb_printf(b, "stderr_bytes:%" PRIu64 "\n", l->stderr_bytes);
	if (test && l->stack_kb)
		sb_printf(b, "stack_kb:%" PRIu64 "\n", l->stack_kb);
	if (test && l->sample_ms)
		sb_printf(b, "sample_ms:%" PRIu32 "\n", l->sample_ms);
	if (l->procs)
		sb_printf(b, "%sprocs:%" PRIu32 "\n", pfx, l->procs);
	if (l->open_files)
		sb_printf(b, "%sopen_files:%" PRIu32 "\n", pfx, l->open_files);
	if (l->fsize_kb)
		sb_printf(b, "%sfsize_kb:%" PRIu64 "\n", pfx, l->fsize_kb);
	sb_printf(b, "%srlimit_as:%d\n", pfx, l->rlimit_as ? 1 : 0);
}

/* The job record of PROTOCOL.md. Arguments were checked to hold no '\n'. */
static char *job_record(const struct exec_job *job, bool host_cpu, size_t *len)
{
	struct strbuf b = {0};
	sb_printf(&b, "version:1\n");
	for (size_t i = 0; job->compile_argv && job->compile_argv[i]; i++)
		sb_printf(&b, "compile_arg:%s\n", job->compile_argv[i]);
	for (size_t i = 0; job->run_argv[i]; i++)
		sb_printf(&b, "run_arg:%s\n", job->run_argv[i]);
	if (job->compile_argv)
		limits_record(&b, "compile_", &job->compile_limits, false, host_cpu);
	limits_record(&b, "", &job->run_limits, true, host_cpu);
	if (job->feedback_dir)
		sb_printf(&b, "feedback_dir:1\n");
	if (job->interactive)
		sb_printf(&b, "interactive:1\n");
	if (job->stderr_to_stdout)
		sb_printf(&b, "stderr_to_stdout:1\n");
	if (job->writable_box)
		sb_printf(&b, "writable_box:1\n");
	if (job->fork_server)
		sb_printf(&b, "fork_server:%s\n", job->fork_server);
	if (job->input_file)
		sb_printf(&b, "input_file:%s\n", job->input_file);
	if (job->output_file)
		sb_printf(&b, "output_file:%s\n", job->output_file);
	/* Only after the sandbox's filtered network was made (open). */
	if (job->egress && job->egress->grants)
		sb_printf(&b, "network:1\n");
	sb_printf(&b, "seccomp:default\n");
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

/* Writes a new file into the work dir. Security argument: the work dir is
 * fresh (created by us a moment ago, before any sandbox exists), the name
 * was checked to be one plain component, and O_EXCL|O_NOFOLLOW refuse
 * anything already there. Mode 0644 (0755 for a program of ours the job
 * runs) owned by root: the sandbox (uid 65534) reads them but cannot write
 * them. */
static int write_box_file(int box_fd, const char *name, const void *data, size_t len, mode_t mode,
			  struct gv_err *err)
{
	int fd = openat(box_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return gv_err_errno(err, "work dir: create %s", name);
	if (gv_write_all(fd, data, len) != 0) {
		gv_err_errno(err, "work dir: write %s", name);
		close(fd);
		return -1;
	}
	if (fchmod(fd, mode) != 0 || close(fd) != 0)
		return gv_err_errno(err, "work dir: finish %s", name);
	return 0;
}

/* Writes the job record and the job's files into the work dir. Security
 * argument: this happens before the sandbox starts (before `runsc run`,
 * or between `runsc create` and `runsc start` for a sandbox created ahead
 * of demand), so nothing inside has run and nothing can have been planted;
 * every file is created with O_EXCL|O_NOFOLLOW through the dir's fd,
 * itself opened with O_NOFOLLOW. */
int exec_job_write_files(struct exec_session *s, const struct exec_job *job, struct gv_err *err)
{
	int bfd = openat(s->e->work_root_fd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0)
		return gv_err_errno(err, "open %s", s->dir);
	int box = openat(bfd, "box", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(bfd);
	if (box < 0)
		return gv_err_errno(err, "open box");
	size_t jlen = 0;
	char *jrec = job_record(job, !s->e->cfg.guest_cpu_time, &jlen);
	int rc = jrec ? 0 : gv_err_set(err, ENOMEM, "job record");
	if (rc == 0)
		rc = write_box_file(box, "job", jrec, jlen, 0644, err);
	free(jrec);
	for (size_t i = 0; rc == 0 && i < job->n_files; i++)
		rc = write_box_file(box, job->files[i].name, job->files[i].data, job->files[i].len,
				    job->files[i].executable ? 0755 : 0644, err);
	close(box);
	return rc;
}
