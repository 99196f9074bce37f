/* The sandbox engine: sessions of one runsc sandbox each, talking to
 * gavel-init over pipes with the framed protocol of executor/PROTOCOL.md.
 * The host side enforces what must hold even if everything inside is
 * compromised: a wall-clock deadline per phase and per sandbox, caps on
 * every byte read from the sandbox, the cgroup's OOM counter read before
 * the sandbox is deleted, and removal of everything the sandbox touched
 * without following a single link it could have planted. */
#include "executor/sandbox/session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "executor/sandbox/cpuslot.h"
#include "executor/sandbox/cputime.h"
#include "executor/sandbox/pool.h"
#include "executor/sandbox/record.h"

#define KB 1024ull
#define TEST_INPUT_MAX (64u << 20)
#define MAX_FILES 64
/* Sources, or an uploaded package archive (<= 64 MiB) plus gavel-unpack. */
#define MAX_FILES_BYTES (80u << 20)
#define MAX_ARGS 64
#define MAX_ARG_LEN 4096
#define DIAG_CAP (64u << 10)     /* init's own fd 2, per PROTOCOL.md */
#define DEFAULT_STDERR (64u << 10)
#define BACKSTOP_GRACE_MS 5000   /* host backstop beyond init's wall limit */
#define BOOT_GRACE_MS 20000      /* sandbox boot before the compile phase */

struct exec_session {
	struct exec_engine *e;
	char id[40];
	char cg_rel[256];
	char dir[4096];     /* absolute bundle dir */
	struct exec_limits compile_limits, run_limits;
	pid_t pid;          /* the sandbox process, our child */
	int pidfd;
	int in_fd, out_fd, err_fd; /* host ends: commands, results, init's diagnostics */
	struct exec_frame_decoder dec;
	struct exec_frame_cap caps[5];
	bool feedback_dir, interactive;
	char *diag;         /* init's stderr, DIAG_CAP bytes at most */
	size_t diag_len;
	int64_t deadline;   /* whole sandbox, monotonic ms */
	uint32_t tests_run;
	/* The sandbox cgroup's CPU time (ns) when the current phase began
	 * (host-side accounting, executor/sandbox/cputime.h); starved: the last
	 * phase's guest clock ran past init's loose limit while the host
	 * figure stayed below the real one (no verdict from that run). */
	uint64_t cpu0_ns;
	/* The sandbox cgroup's CPU time just before the sandbox started (0
	 * for one created and started at once): where its compile is counted
	 * from, since init compiles as soon as it boots. */
	uint64_t boot_cpu_ns;
	int64_t cpu_next_ms; /* the next host CPU check of the running phase (monotonic ms) */
	bool starved;
	bool dir_made, created, reaped, dead, out_eof, err_eof;
	int wait_status;
	struct exec_sandbox_shape shape;
	/* Created ahead of demand (exec_session_precreate): `runsc create`
	 * in flight (-1 when none) and the child ends of the stdio pipes,
	 * held until it exits; started once a job adopted it. */
	pid_t create_pid;
	int child_fd[3];
	int64_t created_at;
	bool started, counted;
	/* A network of its own (tenant egress policy,
	 * executor/sandbox/netpolicy.h); its slot is held until the clean-up
	 * removed it. */
	bool has_net;
	struct exec_net net;
	/* Its own host uid (executor/sandbox/sandbox_uid.h), held until the
	 * clean-up after `runsc delete`. */
	bool has_uid;
	unsigned uid_slot;
	/* GPUs of a fresh sandbox's job (exec_job), read by build_bundle;
	 * borrowed from the job while the sandbox is opened. */
	const char *gpu_visible;
	const struct exec_gpu_node *gpu_nodes;
	size_t n_gpu_nodes;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void exec_phase_result_free(struct exec_phase_result *r)
{
	if (!r)
		return;
	free(r->out);
	free(r->err_out);
	for (size_t i = 0; i < r->n_feedback; i++)
		free(r->feedback[i].data);
	memset(r, 0, sizeof(*r));
}

const struct exec_feedback_file *exec_phase_feedback(const struct exec_phase_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_feedback; i++)
		if (strcmp(r->feedback[i].name, name) == 0)
			return &r->feedback[i];
	return NULL;
}

/* Keeps one `feedback` frame (already bounded by its cap). */
static int add_feedback(struct exec_phase_result *r, const struct exec_frame *f, struct gv_err *err)
{
	const char *name, *data;
	size_t nlen, dlen;
	if (exec_named_payload_split(f->payload, f->len, &name, &nlen, &data, &dlen, err) != 0)
		return -1;
	if (r->n_feedback == EXEC_FEEDBACK_MAX)
		return gv_err_set(err, GV_EPROTO, "more than %d feedback files", EXEC_FEEDBACK_MAX);
	if (dlen > EXEC_FEEDBACK_FILE_MAX)
		return gv_err_set(err, GV_EPROTO, "feedback file over %d bytes", EXEC_FEEDBACK_FILE_MAX);
	for (size_t i = 0; i < r->n_feedback; i++)
		if (strlen(r->feedback[i].name) == nlen && memcmp(r->feedback[i].name, name, nlen) == 0)
			return gv_err_set(err, GV_EPROTO, "feedback file sent twice");
	struct exec_feedback_file *fb = &r->feedback[r->n_feedback];
	fb->data = malloc(dlen + 1);
	if (!fb->data)
		return gv_err_set(err, ENOMEM, "feedback frame");
	memcpy(fb->name, name, nlen);
	fb->name[nlen] = '\0';
	memcpy(fb->data, data, dlen);
	fb->data[dlen] = '\0';
	fb->len = dlen;
	r->n_feedback++;
	return 0;
}

static void result_init(struct exec_phase_result *r)
{
	memset(r, 0, sizeof(*r));
}

static void result_set(struct exec_phase_result *r, const char *status, const char *limit,
		       const char *msg)
{
	snprintf(r->status, sizeof(r->status), "%s", status);
	snprintf(r->limit, sizeof(r->limit), "%s", limit);
	snprintf(r->message, sizeof(r->message), "%s", msg);
}

bool exec_session_alive(const struct exec_session *s)
{
	return s && !s->dead;
}

const char *exec_session_id(const struct exec_session *s)
{
	return s->id;
}

const char *exec_session_cgroup(const struct exec_session *s)
{
	return s->cg_rel;
}

const struct exec_net *exec_session_net(const struct exec_session *s)
{
	return s->has_net ? &s->net : NULL;
}

/* ---- job validation and the job record ---- */

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
	if (l->wall_ms > 7200000 || l->memory_kb > (64ull << 20) || l->memory_kb < 1024 ||
	    l->output_bytes > (64u << 20) || l->stderr_bytes > (64u << 20) || l->procs > 4096)
		return gv_err_set(err, GV_ELIMIT, "%s limits out of range", what);
	return 0;
}

static int check_job(const struct exec_job *job, struct gv_err *err)
{
	if (!exec_cgroup_name_ok(job->tenant))
		return gv_err_set(err, GV_EINVAL, "tenant name not usable for a sandbox");
	if (!job->run_argv || check_argv(job->run_argv, "run argv", err) != 0)
		return job->run_argv ? -1 : gv_err_set(err, GV_EINVAL, "no run argv");
	if (job->compile_argv && check_argv(job->compile_argv, "compile argv", err) != 0)
		return -1;
	if (check_limits(&job->run_limits, "run", err) != 0)
		return -1;
	if (job->compile_argv && check_limits(&job->compile_limits, "compile", err) != 0)
		return -1;
	if (job->n_files > MAX_FILES)
		return gv_err_set(err, GV_ELIMIT, "more than %d files", MAX_FILES);
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

/* ---- talking to init ---- */

static void read_diag(struct exec_session *s)
{
	char buf[4096];
	while (!s->err_eof) {
		ssize_t n = read(s->err_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			s->err_eof = true;
		if (n <= 0)
			return;
		/* Past the cap the bytes are drained and dropped, so init
		 * never blocks on a full pipe. */
		size_t k = (size_t)n;
		if (k > DIAG_CAP - s->diag_len)
			k = DIAG_CAP - s->diag_len;
		memcpy(s->diag + s->diag_len, buf, k);
		s->diag_len += k;
	}
}

/* The last line of init's diagnostics, escaped, for error messages. */
static const char *diag_tail(const struct exec_session *s, char *out, size_t outsz)
{
	size_t end = s->diag_len;
	while (end > 0 && s->diag[end - 1] == '\n')
		end--;
	size_t start = end;
	while (start > 0 && s->diag[start - 1] != '\n' && end - start < 200)
		start--;
	return gv_log_escape(out, outsz, s->diag + start, end - start);
}

static int copy_payload(char **dst, size_t *dst_len, const struct exec_frame *f)
{
	free(*dst);
	*dst = malloc(f->len + 1);
	if (!*dst)
		return -1;
	memcpy(*dst, f->payload, f->len);
	(*dst)[f->len] = '\0';
	*dst_len = f->len;
	return 0;
}

static void fill_from_record(struct exec_phase_result *r, const struct exec_record *rec)
{
	snprintf(r->status, sizeof(r->status), "%s", exec_status_name(rec->status));
	snprintf(r->limit, sizeof(r->limit), "%s",
		 rec->limit == EXEC_LIMIT_UNSET ? "none" : exec_limit_name(rec->limit));
	snprintf(r->message, sizeof(r->message), "%s", rec->message);
	r->exit_code = rec->exit_code;
	r->signal = rec->signal;
	r->time_ms = rec->time_ms;
	r->guest_time_ms = rec->time_ms;
	r->wall_ms = rec->wall_ms;
	r->wall_us = rec->wall_us;
	r->memory_kb = rec->memory_kb;
	r->stdout_bytes = rec->stdout_bytes;
	r->stderr_bytes = rec->stderr_bytes;
}

/* SIGKILLs the sandbox process. Safe by pid: it is our child and not yet
 * reaped, so the pid cannot have been reused. Killing the Sentry ends
 * every process inside at once. */
static void kill_sandbox(struct exec_session *s)
{
	if (s->pid > 0 && !s->reaped)
		kill(s->pid, SIGKILL);
}

static void wait_sandbox(struct exec_session *s, long timeout_ms)
{
	if (s->pid > 0 && !s->reaped &&
	    exec_reaper_wait(&s->e->reaper, s->pid, &s->wait_status, timeout_ms)) {
		s->reaped = true;
		exec_reaper_forget(&s->e->reaper, s->pid);
	}
}

/* PH_CPU: the host's count of the sandbox's CPU passed the phase's limit
 * (exec_cpu_host_kill_ns). */
enum phase_end { PH_RESULT, PH_DIED, PH_TIMEOUT, PH_PROTO, PH_CPU };

static int sandbox_cpu_ns(struct exec_session *s, uint64_t *ns, struct gv_err *err);

/* The host's CPU check of a running phase: PH_CPU once the sandbox used
 * kill_ns since the phase began, PH_PROTO if the count cannot be read
 * (fail closed), else PH_RESULT with *wait_ms the earliest the limit can
 * be reached: the sandbox cannot use more than its CPU quota, so nothing
 * is missed by sleeping that long. kill_ns 0: no check. */
static enum phase_end cpu_check(struct exec_session *s, uint64_t kill_ns, int *wait_ms, struct gv_err *err)
{
	if (!kill_ns)
		return PH_RESULT;
	/* Read only when the limit can have been reached: a phase that
	 * wakes the host often (interactive relays, streamed output) does
	 * not pay a cgroup read per wake-up. */
	int64_t t = now_ms();
	if (t < s->cpu_next_ms) {
		if (s->cpu_next_ms - t < *wait_ms)
			*wait_ms = (int)(s->cpu_next_ms - t);
		return PH_RESULT;
	}
	uint64_t now = 0;
	if (sandbox_cpu_ns(s, &now, err) != 0)
		return PH_PROTO;
	uint64_t used = now > s->cpu0_ns ? now - s->cpu0_ns : 0;
	if (used >= kill_ns)
		return PH_CPU;
	/* The quota is in % of one CPU: at most quota/100 CPU-ms per ms. */
	uint64_t pct = s->e->cfg.cpu_quota_pct ? s->e->cfg.cpu_quota_pct : 100;
	uint64_t ms = (kill_ns - used) / 1000000 * 100 / pct + 1;
	if (ms > 1000)
		ms = 1000;
	s->cpu_next_ms = t + (int64_t)ms;
	if (ms < (uint64_t)*wait_ms)
		*wait_ms = (int)ms;
	return PH_RESULT;
}

/* Sends the pending command bytes and reads one phase's frames (stdout,
 * stderr, result) until the result, the sandbox's death, the deadline or a
 * protocol error. Every frame is bounded by s->caps before allocation. */
static enum phase_end pump_phase(struct exec_session *s, const char *cmd, size_t cmd_len,
				 int64_t deadline, uint64_t kill_ns, struct exec_phase_result *r,
				 struct gv_err *err)
{
	size_t sent = 0;
	char buf[65536];
	bool have_result = false;
	while (!have_result) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return PH_TIMEOUT;
		int cap = s->e->n_pending ? 10 : 1000;
		enum phase_end ce = cpu_check(s, kill_ns, &cap, err);
		if (ce != PH_RESULT)
			return ce;
		struct pollfd p[4];
		nfds_t np = 0;
		p[np++] = (struct pollfd){s->out_fd, POLLIN, 0};
		p[np++] = (struct pollfd){s->pidfd, POLLIN, 0};
		if (!s->err_eof)
			p[np++] = (struct pollfd){s->err_fd, POLLIN, 0};
		if (sent < cmd_len)
			p[np++] = (struct pollfd){s->in_fd, POLLOUT, 0};
		/* Closed sessions' tear-down goes on meanwhile: wake often
		 * enough to reap their gofers and collect `runsc delete` (cap,
		 * lowered above to the host's next CPU check). */
		int n = poll(p, np, left > cap ? cap : (int)left);
		if (n < 0 && errno != EINTR) {
			gv_err_errno(err, "poll");
			return PH_PROTO;
		}
		exec_engine_poll(s->e);
		read_diag(s);
		if (sent < cmd_len) {
			ssize_t w = write(s->in_fd, cmd + sent, cmd_len - sent);
			if (w > 0)
				sent += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				return PH_DIED; /* EPIPE: init is gone */
		}
		for (;;) {
			ssize_t k = read(s->out_fd, buf, sizeof(buf));
			if (k < 0 && errno == EINTR)
				continue;
			if (k == 0) {
				s->out_eof = true;
				return PH_DIED;
			}
			if (k < 0)
				break;
			size_t off = 0;
			while (off < (size_t)k) {
				struct exec_frame f;
				size_t used = 0;
				int fr = exec_frame_decoder_feed(&s->dec, buf + off, (size_t)k - off, &used, &f, err);
				off += used;
				if (fr < 0)
					return PH_PROTO;
				if (fr == 0)
					continue;
				if (have_result) {
					gv_err_set(err, GV_EPROTO, "frame %s after the result", f.kind);
					return PH_PROTO;
				}
				if (strcmp(f.kind, "stdout") == 0) {
					if (copy_payload(&r->out, &r->out_len, &f) != 0)
						return gv_err_set(err, ENOMEM, "stdout frame"), PH_PROTO;
				} else if (strcmp(f.kind, "stderr") == 0) {
					if (copy_payload(&r->err_out, &r->err_len, &f) != 0)
						return gv_err_set(err, ENOMEM, "stderr frame"), PH_PROTO;
				} else if (strcmp(f.kind, "feedback") == 0) {
					/* Only a job with feedback_dir has this cap. */
					if (add_feedback(r, &f, err) != 0)
						return PH_PROTO;
				} else if (strcmp(f.kind, "data") == 0) {
					gv_err_set(err, GV_EPROTO, "`data` outside an interactive test");
					return PH_PROTO;
				} else {
					struct exec_record rec;
					if (exec_record_parse(f.payload, f.len, &rec, err) != 0) {
						gv_err_prefix(err, "result record");
						return PH_PROTO;
					}
					fill_from_record(r, &rec);
					have_result = true;
				}
			}
		}
		if (!have_result) {
			/* Exited: what is still in the pipe is taken first. */
			struct pollfd pf[2] = {{s->pidfd, POLLIN, 0}, {s->out_fd, POLLIN, 0}};
			if (poll(pf, 2, 0) > 0 && (pf[0].revents & POLLIN) && !(pf[1].revents & POLLIN))
				return PH_DIED;
		}
	}
	return PH_RESULT;
}

static uint64_t out_cap(const struct exec_limits *l)
{
	return l->output_bytes ? l->output_bytes : 65536;
}

/* Reads the cgroup's OOM counter. The sandbox memcg covers the Sentry,
 * the gofer and every process inside: a kill there means the sandbox as a
 * whole ran out of memory, which only the program can have caused (the
 * headroom covers gVisor itself). */
static int oom_kills(struct exec_session *s, uint64_t *n, struct gv_err *err)
{
	const struct exec_cgroup *cg = &s->e->cg;
	if (cg->ops->oom_kills(cg, s->cg_rel, n, err) != 0) {
		gv_err_prefix(err, "sandbox %s", s->id);
		return -1;
	}
	return 0;
}

static void mark_dead(struct exec_session *s)
{
	s->dead = true;
	kill_sandbox(s);
	wait_sandbox(s, 5000);
}

/* The frame caps of one phase, in the decoder's order: stdout, stderr,
 * result, then `feedback` (feedback_dir jobs) and `data` (interactive
 * jobs; stdout comes as `data` there and its `stdout` frame is empty). */
static void phase_caps(struct exec_session *s, const struct exec_limits *l, bool compile)
{
	uint64_t oc = out_cap(l);
	uint64_t ec = compile ? oc : (l->stderr_bytes ? l->stderr_bytes : DEFAULT_STDERR);
	size_t n = 0;
	s->caps[n++] = (struct exec_frame_cap){"stdout", (size_t)oc};
	s->caps[n++] = (struct exec_frame_cap){"stderr", (size_t)ec};
	s->caps[n++] = (struct exec_frame_cap){"result", EXEC_RECORD_MAX_BYTES};
	if (s->feedback_dir)
		s->caps[n++] = (struct exec_frame_cap){"feedback", EXEC_FILE_NAME_MAX + 1 + EXEC_FEEDBACK_FILE_MAX};
	if (s->interactive)
		s->caps[n++] = (struct exec_frame_cap){"data", EXEC_DATA_FRAME_MAX};
}

static int finish_phase(struct exec_session *s, enum phase_end end, const struct exec_limits *l,
			struct exec_phase_result *r, struct gv_err *err);

/* The sandbox cgroup's CPU time so far, in ns, read from the host kernel:
 * every thread of the sandbox (Sentry, gofer, the program's) counts, and
 * only for the time it really ran. Nothing inside can change it. */
static int sandbox_cpu_ns(struct exec_session *s, uint64_t *ns, struct gv_err *err)
{
	const struct exec_cgroup *cg = &s->e->cg;
	if (cg->ops->cpu_usage(cg, s->cg_rel, ns, err) != 0) {
		gv_err_prefix(err, "sandbox %s: CPU time", s->id);
		return -1;
	}
	return 0;
}

/* Marks the start of a phase for the host-side CPU figure. Fails closed:
 * without it the phase is not run (the caller reports IE). */
static int phase_cpu_start(struct exec_session *s, struct exec_phase_result *r, struct gv_err *err)
{
	s->starved = false;
	s->cpu_next_ms = 0;
	if (s->e->cfg.guest_cpu_time)
		return 0;
	if (sandbox_cpu_ns(s, &s->cpu0_ns, err) != 0) {
		mark_dead(s);
		result_set(r, "IE", "none", "cannot read the sandbox's CPU time");
		return -1;
	}
	return 0;
}

/* Settles a phase's CPU time and CPU verdict from init's figure and the
 * host's (executor/sandbox/cputime.h) against the real limit l->cpu_ms. */
static int phase_cpu_settle(struct exec_session *s, const struct exec_limits *l, struct exec_phase_result *r,
			    struct gv_err *err)
{
	if (s->e->cfg.guest_cpu_time)
		return 0;
	uint64_t cpu1 = 0;
	if (sandbox_cpu_ns(s, &cpu1, err) != 0 || cpu1 < s->cpu0_ns) {
		if (cpu1 < s->cpu0_ns)
			gv_err_set(err, GV_ESANDBOX, "sandbox %s: cgroup CPU time went backwards", s->id);
		mark_dead(s);
		result_set(r, "IE", "none", "cannot read the sandbox's CPU time");
		return -1;
	}
	r->host_cpu_us = (cpu1 - s->cpu0_ns) / 1000;
	switch (exec_cpu_settle(r->status, r->limit, r->guest_time_ms, r->host_cpu_us, l->cpu_ms, &r->time_ms)) {
	case EXEC_CPU_TLE:
		if (strcmp(r->status, "TLE") != 0)
			result_set(r, "TLE", "cpu", "time limit exceeded");
		break;
	case EXEC_CPU_STARVED:
		s->starved = true;
		break;
	case EXEC_CPU_KEEP:
		break;
	}
	return 0;
}

/* One phase: the command (NULL for the compile phase, which init runs on
 * its own) and its frames back. 0 with r filled for anything the program
 * did, -1 with err (and r->status "IE") for a failure of the machinery. */
static int run_phase(struct exec_session *s, const char *cmd, size_t cmd_len,
		     const struct exec_limits *l, bool compile, struct exec_phase_result *r,
		     struct gv_err *err)
{
	phase_caps(s, l, compile);

	/* A test runs with a CPU of its own (executor/sandbox/cpuslot.h). The
	 * compile phase starts with the sandbox, before this is reached, and
	 * takes none. Waiting for a slot counts in no limit of the test. */
	struct exec_cpuslot slot = { -1, -1 };
	const struct exec_engine_config *cfg = &s->e->cfg;
	if (!compile && cfg->cpu_slots > 0) {
		const char *dir = cfg->cpu_slot_dir ? cfg->cpu_slot_dir : EXEC_CPU_SLOT_DIR;
		unsigned n = cfg->cpu_slots;
		int64_t asked = now_ms();
		if (exec_cpuslot_acquire(dir, n, s->deadline, &slot, err) != 0) {
			result_set(r, "IE", "none", "no CPU slot for the test");
			return -1;
		}
		/* The sandbox did nothing while it waited: the wait does not
		 * shorten what is left of its lifetime deadline. */
		s->deadline += now_ms() - asked;
	}

	/* Host backstop: init enforces wall_ms itself; if it does not answer
	 * within wall_ms + grace (+ the boot for the first phase), the whole
	 * sandbox is killed. Never later than the sandbox's own deadline. */
	int64_t deadline = now_ms() + (int64_t)l->wall_ms + BACKSTOP_GRACE_MS +
			   (compile ? BOOT_GRACE_MS : 0);
	if (deadline > s->deadline)
		deadline = s->deadline;

	if (phase_cpu_start(s, r, err) != 0) {
		exec_cpuslot_release(&slot);
		return -1;
	}
	/* gavel-init starts the compile as soon as the sandbox boots, before
	 * this is reached: the compile is counted from the start (the boot's
	 * CPU with it, which only errs on the high side of min(guest, host)). */
	if (compile)
		s->cpu0_ns = s->boot_cpu_ns;
	uint64_t kill_ns = cfg->guest_cpu_time ? 0 : exec_cpu_host_kill_ns(l->cpu_ms);
	enum phase_end end = pump_phase(s, cmd, cmd_len, deadline, kill_ns, r, err);
	exec_cpuslot_release(&slot);
	return finish_phase(s, end, l, r, err);
}

/* Turns how a phase ended into its result: the OOM counter decides a
 * whole-sandbox kill; the backstop is WLE; a dead sandbox or a broken
 * protocol is our failure (-1, IE). */
static int finish_phase(struct exec_session *s, enum phase_end end, const struct exec_limits *l,
			struct exec_phase_result *r, struct gv_err *err)
{
	uint64_t ooms = 0;
	char tail[256];
	switch (end) {
	case PH_RESULT:
		/* A sandbox-wide OOM kill can hit a helper thread and leave init
		 * answering: the counter decides, not the answer. */
		if (oom_kills(s, &ooms, err) != 0) {
			mark_dead(s);
			result_set(r, "IE", "none", "cannot read the sandbox's OOM counter");
			return -1;
		}
		if (ooms > 0) {
			mark_dead(s);
			result_set(r, "MLE", "memory", "sandbox out of memory (host cgroup OOM kill)");
			return 0;
		}
		return phase_cpu_settle(s, l, r, err);
	case PH_CPU:
		/* The host's kill (executor/sandbox/cputime.h): the sandbox is
		 * killed mid-test, so the session ends; the counters are read
		 * after the kill, before runsc delete. */
		mark_dead(s);
		if (oom_kills(s, &ooms, err) != 0) {
			result_set(r, "IE", "none", "sandbox killed for CPU; OOM counter unreadable");
			return -1;
		}
		if (ooms > 0) {
			result_set(r, "MLE", "memory", "sandbox out of memory (host cgroup OOM kill)");
			r->memory_kb = l->memory_kb;
			return 0;
		}
		result_set(r, "TLE", "cpu", "time limit exceeded (the host's count of the sandbox's CPU)");
		{
			uint64_t now = 0;
			struct gv_err ignored;
			/* Only a figure for the report: the verdict is made. */
			if (sandbox_cpu_ns(s, &now, &ignored) == 0 && now > s->cpu0_ns)
				r->host_cpu_us = (now - s->cpu0_ns) / 1000;
			r->time_ms = r->host_cpu_us / 1000;
		}
		return 0;
	case PH_TIMEOUT:
		mark_dead(s);
		result_set(r, "WLE", "wall", "host wall-clock backstop: sandbox killed");
		r->wall_ms = l->wall_ms;
		return 0;
	case PH_DIED:
		/* The Sentry is gone (or init closed its pipes): kill whatever
		 * is left, reap, then read the counter before runsc delete. */
		mark_dead(s);
		read_diag(s);
		if (oom_kills(s, &ooms, err) != 0) {
			result_set(r, "IE", "none", "sandbox died; OOM counter unreadable");
			return -1;
		}
		if (ooms > 0) {
			result_set(r, "MLE", "memory", "sandbox out of memory (host cgroup OOM kill)");
			r->memory_kb = l->memory_kb;
			return 0;
		}
		diag_tail(s, tail, sizeof(tail));
		gv_err_set(err, GV_ESANDBOX, "sandbox %s exited unexpectedly (%s %d): %s", s->id,
			   s->reaped && WIFSIGNALED(s->wait_status) ? "signal" : "exit",
			   !s->reaped ? -1
			   : WIFSIGNALED(s->wait_status) ? WTERMSIG(s->wait_status)
							 : WEXITSTATUS(s->wait_status),
			   tail);
		result_set(r, "IE", "none", "sandbox exited unexpectedly");
		return -1;
	case PH_PROTO:
	default:
		mark_dead(s);
		gv_err_prefix(err, "sandbox %s", s->id);
		result_set(r, "IE", "none", "protocol failure talking to gavel-init");
		return -1;
	}
}

/* A phase the load cut short twice (or once, where it cannot be run
 * again): no verdict can be drawn from it, so it is our failure (IE). */
static int starved_error(struct exec_session *s, struct exec_phase_result *r, struct gv_err *err)
{
	uint64_t g = r->guest_time_ms, h = r->host_cpu_us;
	result_set(r, "IE", "none", "node too busy: the sandbox's CPU clock ran far ahead of the host's");
	return gv_err_set(err, GV_ESANDBOX,
			  "sandbox %s starved of CPU: guest %" PRIu64 " ms, host %" PRIu64 " us of CPU", s->id, g, h);
}

int exec_session_run_test(struct exec_session *s, const void *input, size_t len,
			  struct exec_phase_result *out, struct gv_err *err)
{
	return exec_session_run_test_files(s, NULL, 0, input, len, out, err);
}

/* The command that starts one test: `file` frames, then `test` with the
 * input. Owned by the caller (free). NULL with err (and out's status IE)
 * for a bad argument or no memory. */
static char *test_command(const struct exec_file *files, size_t nfiles, const void *input, size_t len,
			  size_t *cmd_len, struct exec_phase_result *out, struct gv_err *err)
{
	if (len > TEST_INPUT_MAX) {
		result_set(out, "IE", "none", "input too large");
		return gv_err_set(err, GV_ELIMIT, "test input of %zu bytes over %u", len, TEST_INPUT_MAX), NULL;
	}
	if (nfiles > EXEC_TEST_FILES_MAX) {
		result_set(out, "IE", "none", "too many test files");
		return gv_err_set(err, GV_ELIMIT, "more than %d test files", EXEC_TEST_FILES_MAX), NULL;
	}
	/* Every length was checked above and below, so the sum cannot
	 * overflow. */
	size_t total = EXEC_FRAME_HEADER_MAX + 1 + len;
	for (size_t i = 0; i < nfiles; i++) {
		if (!files[i].name || !exec_file_name_ok(files[i].name, strlen(files[i].name)) ||
		    files[i].len > TEST_INPUT_MAX) {
			result_set(out, "IE", "none", "bad test file");
			return gv_err_set(err, GV_EINVAL, "test file %zu: bad name or over %u bytes", i,
					  TEST_INPUT_MAX), NULL;
		}
		total += EXEC_FRAME_HEADER_MAX + 1 + strlen(files[i].name) + 1 + files[i].len;
	}
	char *cmd = malloc(total);
	if (!cmd) {
		result_set(out, "IE", "none", "out of memory");
		return gv_err_set(err, ENOMEM, "test input: out of memory"), NULL;
	}
	size_t cl = 0;
	for (size_t i = 0; i < nfiles; i++) {
		size_t nl = strlen(files[i].name);
		int h = exec_frame_header(cmd + cl, total - cl, "file", nl + 1 + files[i].len, err);
		if (h < 0) {
			free(cmd);
			result_set(out, "IE", "none", "bad test file");
			return NULL;
		}
		cl += (size_t)h;
		memcpy(cmd + cl, files[i].name, nl);
		cmd[cl + nl] = '\n';
		cl += nl + 1;
		if (files[i].len)
			memcpy(cmd + cl, files[i].data, files[i].len);
		cl += files[i].len;
	}
	int hl = exec_frame_header(cmd + cl, total - cl, "test", len, err);
	if (hl < 0) {
		free(cmd);
		result_set(out, "IE", "none", "bad test input");
		return NULL;
	}
	cl += (size_t)hl;
	if (len)
		memcpy(cmd + cl, input, len);
	cl += len;
	*cmd_len = cl;
	return cmd;
}

int exec_session_run_test_files(struct exec_session *s, const struct exec_file *files, size_t nfiles,
				const void *input, size_t len, struct exec_phase_result *out,
				struct gv_err *err)
{
	result_init(out);
	if (!s || s->dead) {
		result_set(out, "IE", "none", "sandbox is gone");
		return gv_err_set(err, EXEC_EDEAD, "sandbox %s is dead: open a new session",
				  s ? s->id : "(null)");
	}
	if (s->interactive) {
		result_set(out, "IE", "none", "interactive sandbox");
		return gv_err_set(err, GV_EINVAL, "sandbox %s is interactive: use exec_session_interact", s->id);
	}
	size_t cl = 0;
	char *cmd = test_command(files, nfiles, input, len, &cl, out, err);
	if (!cmd)
		return -1;
	int rc = run_phase(s, cmd, cl, &s->run_limits, false, out, err);
	/* Cut short by the node's load (executor/sandbox/cputime.h): once more.
	 * A test leaves nothing behind in the sandbox (init kills every process
	 * and empties /tmp), so the second run is a run of the same test. */
	if (rc == 0 && s->starved && !s->dead) {
		struct gv_log_ctx ctx = {.sandbox = s->id};
		gv_warn(&ctx, "test starved of CPU (guest %" PRIu64 " ms, host %" PRIu64 " us): running it again",
			out->guest_time_ms, out->host_cpu_us);
		exec_phase_result_free(out);
		rc = run_phase(s, cmd, cl, &s->run_limits, false, out, err);
	}
	free(cmd);
	s->tests_run++;
	if (rc == 0 && s->starved)
		return starved_error(s, out, err);
	return rc;
}

/* ---- interactive tests: the host relay ---- */

#define RELAY_FWD_MAX (EXEC_FRAME_HEADER_MAX + 1 + EXEC_DATA_FRAME_MAX)
#define RELAY_READ_MAX 65536

/* One side of the relay. Memory is bounded: rbuf (what was read from this
 * side and not decoded yet), the decoder's one frame (capped), and fwd,
 * one `data` frame towards this side. A side's output is read and decoded
 * only while the other side's fwd is empty, so a program that does not
 * read its stdin stops the other one at its full pipes, never grows a
 * buffer here. */
struct relay_side {
	struct exec_session *s;
	struct exec_phase_result *r;
	char *cmd;                 /* the opening command (`file` frames, `test`); owned */
	size_t cmd_len, cmd_sent;
	char fwd[RELAY_FWD_MAX];   /* one `data` frame towards this side */
	size_t fwd_len, fwd_sent;
	bool eof_queued;           /* the empty `data` (end of its stdin) is queued or sent */
	char rbuf[RELAY_READ_MAX];
	size_t rlen, roff;
	int64_t deadline;          /* host backstop of this side */
	uint64_t kill_ns;          /* the host's CPU kill (0: none) */
	int wait_ms;               /* until its next CPU check */
	bool done;                 /* its result is in, or its sandbox is gone */
	uint64_t relayed;          /* payload bytes of its program's stdout passed on */
	uint32_t frames;
};

static bool relay_fwd_idle(const struct relay_side *x)
{
	return x->fwd_sent == x->fwd_len;
}

/* y takes x's next `data` frame now: y's previous one is written, or y
 * ended (then x's output is dropped). */
static bool relay_can_take(const struct relay_side *y)
{
	return y->done || relay_fwd_idle(y);
}

/* Writes what x's command pipe takes now: the opening command, then fwd.
 * A frame begun is always finished, even after x's result (its init then
 * drops the rest of the `data`); one not begun is dropped once x ended.
 * Returns false when x's init is gone (EPIPE). */
static bool relay_write(struct relay_side *x)
{
	if (x->s->dead)
		return true;
	if (x->done && x->fwd_sent == 0)
		x->fwd_len = 0;
	while (x->cmd_sent < x->cmd_len || x->fwd_sent < x->fwd_len) {
		bool c = x->cmd_sent < x->cmd_len;
		const char *p = c ? x->cmd + x->cmd_sent : x->fwd + x->fwd_sent;
		size_t n = c ? x->cmd_len - x->cmd_sent : x->fwd_len - x->fwd_sent;
		ssize_t w = write(x->s->in_fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return true;
		if (w < 0)
			return false;
		if (c)
			x->cmd_sent += (size_t)w;
		else
			x->fwd_sent += (size_t)w;
	}
	x->fwd_len = x->fwd_sent = 0;
	return true;
}

/* Queues one frame towards x (x's fwd is idle). */
static void relay_queue(struct relay_side *x, const char *data, size_t len)
{
	struct gv_err ignored;
	int h = exec_frame_header(x->fwd, sizeof(x->fwd), "data", len, &ignored);
	if (h < 0)
		return; /* len <= EXEC_DATA_FRAME_MAX: cannot happen */
	if (len)
		memcpy(x->fwd + h, data, len);
	x->fwd_len = (size_t)h + len;
	x->fwd_sent = 0;
}

/* Decodes x's buffered bytes while y can take a `data` frame. Returns
 * PH_RESULT when x's result came, PH_PROTO on a protocol error, PH_TIMEOUT
 * (meaning "nothing final yet") otherwise. */
static enum phase_end relay_decode(struct relay_side *x, struct relay_side *y, struct gv_err *err)
{
	while (!x->done && x->roff < x->rlen && relay_can_take(y)) {
		struct exec_frame f;
		size_t used = 0;
		int fr = exec_frame_decoder_feed(&x->s->dec, x->rbuf + x->roff, x->rlen - x->roff, &used, &f, err);
		x->roff += used;
		if (fr < 0)
			return PH_PROTO;
		if (fr == 0)
			continue;
		if (strcmp(f.kind, "data") == 0) {
			if (f.len && !y->done && !y->eof_queued) {
				relay_queue(y, f.payload, f.len);
				x->relayed += f.len;
				x->frames++;
			}
		} else if (strcmp(f.kind, "stdout") == 0) {
			if (copy_payload(&x->r->out, &x->r->out_len, &f) != 0)
				return gv_err_set(err, ENOMEM, "stdout frame"), PH_PROTO;
		} else if (strcmp(f.kind, "stderr") == 0) {
			if (copy_payload(&x->r->err_out, &x->r->err_len, &f) != 0)
				return gv_err_set(err, ENOMEM, "stderr frame"), PH_PROTO;
		} else if (strcmp(f.kind, "feedback") == 0) {
			if (add_feedback(x->r, &f, err) != 0)
				return PH_PROTO;
		} else {
			struct exec_record rec;
			if (exec_record_parse(f.payload, f.len, &rec, err) != 0) {
				gv_err_prefix(err, "result record");
				return PH_PROTO;
			}
			fill_from_record(x->r, &rec);
			if (x->roff != x->rlen) {
				gv_err_set(err, GV_EPROTO, "bytes after the result");
				return PH_PROTO;
			}
			return PH_RESULT;
		}
	}
	return PH_TIMEOUT;
}

/* Reads what x's result pipe holds (when there is room). PH_DIED at EOF;
 * PH_TIMEOUT ("nothing final") otherwise. */
static enum phase_end relay_read(struct relay_side *x, const struct relay_side *y)
{
	if (x->done || x->roff < x->rlen || !relay_can_take(y))
		return PH_TIMEOUT;
	for (;;) {
		ssize_t k = read(x->s->out_fd, x->rbuf, sizeof(x->rbuf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0) {
			x->s->out_eof = true;
			return PH_DIED;
		}
		if (k > 0) {
			x->rlen = (size_t)k;
			x->roff = 0;
		}
		return PH_TIMEOUT;
	}
}

int exec_session_interact(struct exec_session *sub, struct exec_session *itr,
			  const struct exec_file *itr_files, size_t n_itr_files,
			  struct exec_phase_result *sub_out, struct exec_phase_result *itr_out,
			  struct exec_interaction *ia, struct gv_err *err)
{
	result_init(sub_out);
	result_init(itr_out);
	memset(ia, 0, sizeof(*ia));
	if (!sub || !itr || sub->dead || itr->dead) {
		result_set(sub_out, "IE", "none", "sandbox is gone");
		result_set(itr_out, "IE", "none", "sandbox is gone");
		return gv_err_set(err, EXEC_EDEAD, "sandbox %s is dead: open a new session",
				  !sub || sub->dead ? (sub ? sub->id : "(null)") : itr->id);
	}
	if (!sub->interactive || !itr->interactive || sub == itr || sub->e != itr->e) {
		result_set(sub_out, "IE", "none", "not an interactive pair");
		result_set(itr_out, "IE", "none", "not an interactive pair");
		return gv_err_set(err, GV_EINVAL, "exec_session_interact needs two interactive sessions");
	}
	struct relay_side *side = calloc(2, sizeof(*side));
	if (!side) {
		result_set(sub_out, "IE", "none", "out of memory");
		result_set(itr_out, "IE", "none", "out of memory");
		return gv_err_set(err, ENOMEM, "relay: out of memory");
	}
	side[0].s = sub, side[0].r = sub_out;
	side[1].s = itr, side[1].r = itr_out;
	int rc = 0;
	side[0].cmd = test_command(NULL, 0, NULL, 0, &side[0].cmd_len, sub_out, err);
	side[1].cmd = side[0].cmd ? test_command(itr_files, n_itr_files, NULL, 0, &side[1].cmd_len, itr_out, err)
				  : NULL;
	if (!side[0].cmd || !side[1].cmd) {
		if (!sub_out->status[0])
			result_set(sub_out, "IE", "none", "relay set-up failed");
		if (!itr_out->status[0])
			result_set(itr_out, "IE", "none", "relay set-up failed");
		rc = -1;
		goto out;
	}
	int64_t t0 = now_ms();
	for (int i = 0; i < 2; i++) {
		struct exec_session *x = side[i].s;
		phase_caps(x, &x->run_limits, false);
		/* Host backstop, as for run_test: init enforces wall_ms. */
		side[i].deadline = t0 + (int64_t)x->run_limits.wall_ms + BACKSTOP_GRACE_MS;
		if (side[i].deadline > x->deadline)
			side[i].deadline = x->deadline;
		if (phase_cpu_start(x, side[i].r, err) != 0) {
			rc = -1;
			goto out;
		}
		side[i].kill_ns = x->e->cfg.guest_cpu_time ? 0 : exec_cpu_host_kill_ns(x->run_limits.cpu_ms);
	}
	for (;;) {
		for (int i = 0; i < 2; i++) {
			struct relay_side *x = &side[i], *y = &side[1 - i];
			enum phase_end end = PH_TIMEOUT;
			/* The other side ended: end of this side's stdin. */
			if (y->done && !x->done && !x->eof_queued && relay_fwd_idle(x)) {
				relay_queue(x, NULL, 0);
				x->eof_queued = true;
			}
			if (!relay_write(x) && !x->done)
				end = PH_DIED;
			for (int k = 0; end == PH_TIMEOUT && k < 2 && !x->done; k++) {
				end = relay_decode(x, y, err);
				if (end == PH_TIMEOUT && k == 0)
					end = relay_read(x, y);
			}
			if (end == PH_TIMEOUT && !x->done) {
				x->wait_ms = 1000;
				if (now_ms() >= x->deadline) {
					end = PH_TIMEOUT;
				} else if ((end = cpu_check(x->s, x->kill_ns, &x->wait_ms, err)) != PH_RESULT) {
					/* PH_CPU, or PH_PROTO: the count is unreadable. */
				} else {
					end = PH_TIMEOUT;
					/* Exited: what is still in the pipe is taken first. */
					struct pollfd pf[2] = {{x->s->pidfd, POLLIN, 0}, {x->s->out_fd, POLLIN, 0}};
					if (poll(pf, 2, 0) > 0 && (pf[0].revents & POLLIN) &&
					    !(pf[1].revents & POLLIN))
						end = PH_DIED;
					else
						continue;
				}
			}
			if (x->done)
				continue;
			x->done = true;
			if (!y->done)
				ia->interactor_first = i == 1;
			if (finish_phase(x->s, end, &x->s->run_limits, x->r, err) != 0 ||
			    (x->s->starved && starved_error(x->s, x->r, err) != 0)) {
				gv_err_prefix(err, "%s", i == 0 ? "submission" : "interactor");
				rc = -1;
				goto out;
			}
		}
		bool busy = false;
		for (int i = 0; i < 2; i++)
			if (!side[i].done || (!side[i].s->dead && side[i].fwd_sent > 0 && !relay_fwd_idle(&side[i])))
				busy = true;
		if (!busy)
			break;
		struct pollfd p[10];
		nfds_t np = 0;
		int64_t until = INT64_MAX;
		for (int i = 0; i < 2; i++) {
			struct relay_side *x = &side[i], *y = &side[1 - i];
			if (x->s->dead)
				continue;
			if (!x->done) {
				p[np++] = (struct pollfd){x->s->pidfd, POLLIN, 0};
				if (x->roff == x->rlen && relay_can_take(y))
					p[np++] = (struct pollfd){x->s->out_fd, POLLIN, 0};
				if (x->deadline < until)
					until = x->deadline;
				if (x->kill_ns && now_ms() + x->wait_ms < until)
					until = now_ms() + x->wait_ms;
			}
			if (x->cmd_sent < x->cmd_len || !relay_fwd_idle(x))
				p[np++] = (struct pollfd){x->s->in_fd, POLLOUT, 0};
			if (!x->s->err_eof)
				p[np++] = (struct pollfd){x->s->err_fd, POLLIN, 0};
		}
		int cap = sub->e->n_pending ? 10 : 1000;
		int64_t left = until == INT64_MAX ? cap : until - now_ms();
		if (left < 0)
			left = 0;
		if (poll(p, np, left > cap ? cap : (int)left) < 0 && errno != EINTR) {
			gv_err_errno(err, "poll");
			rc = -1;
			goto out;
		}
		exec_engine_poll(sub->e);
		read_diag(sub);
		read_diag(itr);
	}
	ia->wall_ms = (uint64_t)(now_ms() - t0);
	ia->to_interactor_bytes = side[0].relayed;
	ia->to_interactor_frames = side[0].frames;
	ia->to_submission_bytes = side[1].relayed;
	ia->to_submission_frames = side[1].frames;
out:
	if (rc != 0) {
		/* Mid-test, neither init is in a known state any more. */
		for (int i = 0; i < 2; i++) {
			if (!side[i].s->dead)
				mark_dead(side[i].s);
			if (strcmp(side[i].r->status, "IE") != 0 || !side[i].r->message[0])
				result_set(side[i].r, "IE", "none", "interactive relay failed");
		}
	}
	sub->tests_run++;
	itr->tests_run++;
	free(side[0].cmd);
	free(side[1].cmd);
	free(side);
	return rc;
}

/* ---- open / close ---- */

static int make_id(char *out, size_t outsz, struct gv_err *err)
{
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return gv_err_errno(err, "getrandom");
	int n = snprintf(out, outsz, "gv-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
			 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	return n > 0 && (size_t)n < outsz ? 0 : gv_err_set(err, GV_EINTERNAL, "sandbox id");
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void exec_job_shape(const struct exec_engine *e, const struct exec_job *job, struct exec_sandbox_shape *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->tenant, sizeof(out->tenant), "%s", job->tenant ? job->tenant : "");
	uint64_t prog_kb = max_u64(job->run_limits.memory_kb,
				   job->compile_argv ? job->compile_limits.memory_kb : 0);
	uint64_t fsize_kb = max_u64(max_u64(job->run_limits.fsize_kb, job->compile_limits.fsize_kb),
				    256 * 1024);
	/* Program + tmpfs contents (held in Sentry memory) + gVisor's own
	 * overhead (measured ~20 MB; default headroom 64 MiB). */
	out->memory_limit_bytes = (prog_kb + e->cfg.tmp_size_kb + e->cfg.headroom_kb) * KB;
	out->fsize_bytes = fsize_kb * KB;
}

bool exec_shape_equal(const struct exec_sandbox_shape *a, const struct exec_sandbox_shape *b)
{
	return strcmp(a->tenant, b->tenant) == 0 && a->memory_limit_bytes == b->memory_limit_bytes &&
	       a->fsize_bytes == b->fsize_bytes;
}

const struct exec_sandbox_shape *exec_session_shape(const struct exec_session *s)
{
	return &s->shape;
}

int64_t exec_session_created_ms(const struct exec_session *s)
{
	return s->created_at;
}

/* Builds the bundle in the fresh dir s->dir (fd bfd): skeleton, /etc, an
 * empty work dir, config.json with the limits of s->shape. */
static int build_bundle(struct exec_session *s, int bfd, struct gv_err *err)
{
	const struct exec_engine_config *c = &s->e->cfg;
	if (exec_bundle_write_skeleton(bfd, s->e->etc_binds, s->e->usr_dirs, err) != 0)
		return -1;
	/* /box: owned by the sandbox user, mode 0755 (PROTOCOL.md), so that
	 * gavel-init can lock it read-only after the compile phase. chown and
	 * chmod act on the fd of the directory we just created, never on a
	 * path. The files written into it later (write_job_files) are
	 * root-owned 0644: readable inside, never writable there. */
	if (mkdirat(bfd, "box", 0700) != 0)
		return gv_err_errno(err, "mkdir box");
	int box = openat(bfd, "box", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (box < 0)
		return gv_err_errno(err, "open box");
	int rc = 0;
	/* The host's view of the sandbox user: its own uid (nobody inside). */
	uid_t host_uid = exec_uids_uid(&s->e->uids, s->uid_slot);
	if (fchown(box, host_uid, host_uid) != 0 || fchmod(box, 0755) != 0)
		rc = gv_err_errno(err, "chown/chmod box");
	close(box);
	if (rc != 0)
		return -1;

	char etc[4200], boxp[4200];
	snprintf(etc, sizeof(etc), "%s/etc", s->dir);
	snprintf(boxp, sizeof(boxp), "%s/box", s->dir);
	struct exec_bundle_params p = {
		.hostname = "gavel",
		.cgroups_path = NULL,
		.init_path = c->init_path,
		.etc_path = etc,
		.box_path = boxp,
		.memory_limit_bytes = s->shape.memory_limit_bytes,
		.pids_limit = c->pids_limit,
		.cpu_quota_us = (uint64_t)c->cpu_quota_pct * 1000,
		.cpu_period_us = 100000,
		.tmp_size_bytes = c->tmp_size_kb * KB,
		.nofile = 4096,
		.nproc = 4096,
		.fsize_bytes = s->shape.fsize_bytes,
		.etc_binds = s->e->etc_binds,
		.usr_dirs = s->e->usr_dirs,
		.pch_path = s->e->pch_path,
		.seccomp = true,
		.netns_path = s->has_net ? s->net.netns_path : NULL,
		.gpu_visible = s->gpu_visible,
		.gpu_nodes = s->gpu_nodes,
		.n_gpu_nodes = s->n_gpu_nodes,
	};
	char cgpath[300];
	snprintf(cgpath, sizeof(cgpath), "/%s", s->cg_rel);
	p.cgroups_path = cgpath;
	json_t *cfg = exec_bundle_config(&p, err);
	if (!cfg)
		return -1;
	rc = exec_bundle_write_config(bfd, cfg, err);
	json_decref(cfg);
	return rc;
}

/* Writes the job record and the job's files into the work dir. Security
 * argument: this happens before the sandbox starts (before `runsc run`,
 * or between `runsc create` and `runsc start` for a sandbox created ahead
 * of demand), so nothing inside has run and nothing can have been planted;
 * every file is created with O_EXCL|O_NOFOLLOW through the dir's fd,
 * itself opened with O_NOFOLLOW. */
static int write_job_files(struct exec_session *s, const struct exec_job *job, struct gv_err *err)
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

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* The sandbox's stdio: three fresh pipes. Our ends are close-on-exec, so
 * no other sandbox or runsc ever holds them; the child ends go to runsc
 * and are closed by close_child_fds once it has them. */
static int make_pipes(struct exec_session *s, struct gv_err *err)
{
	int in[2], out[2], er[2];
	if (pipe2(in, O_CLOEXEC) != 0)
		return gv_err_errno(err, "pipe");
	if (pipe2(out, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		return gv_err_errno(err, "pipe");
	}
	if (pipe2(er, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		return gv_err_errno(err, "pipe");
	}
	s->in_fd = in[1];
	s->out_fd = out[0];
	s->err_fd = er[0];
	s->child_fd[0] = in[0];
	s->child_fd[1] = out[1];
	s->child_fd[2] = er[1];
	set_nonblock(s->in_fd);
	set_nonblock(s->out_fd);
	set_nonblock(s->err_fd);
	return 0;
}

static void close_child_fds(struct exec_session *s)
{
	for (int i = 0; i < 3; i++)
		close_fd(&s->child_fd[i]);
}

static int open_pidfd(struct exec_session *s, struct gv_err *err)
{
	s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	if (s->pidfd < 0)
		return gv_err_errno(err, "pidfd_open %d", (int)s->pid);
	return 0;
}

/* Creates and starts the sandbox in one `runsc run --detach`. */
static int start_sandbox(struct exec_session *s, struct gv_err *err)
{
	if (make_pipes(s, err) != 0)
		return -1;
	char pidf[4200];
	snprintf(pidf, sizeof(pidf), "%s/pid", s->dir);
	int64_t t0 = now_ms();
	/* One `run --detach` instead of create + start: one runsc start-up
	 * (~25 ms of CLI) less per submission. */
	/* --network=host only with the bundle naming the sandbox's own
	 * network namespace (build_bundle); every other sandbox: none. */
	struct exec_runsc rs = s->e->runsc;
	rs.network_host = s->has_net;
	rs.join_userns = true;
	rs.userns_fd = exec_uids_userns(&s->e->uids, s->uid_slot);
	if (s->has_net) {
		rs.join_netns = true;
		rs.netns_fd = open(s->net.netns_path, O_RDONLY | O_CLOEXEC);
		if (rs.netns_fd < 0) {
			close_child_fds(s);
			return gv_err_errno(err, "open %s", s->net.netns_path);
		}
	}
	int rc = exec_runsc_run_detached(&rs, s->dir, pidf, s->id, s->child_fd, &s->pid, err);
	if (rs.join_netns)
		close(rs.netns_fd);
	int64_t t1 = now_ms();
	/* runsc create always "created" something worth a delete --force. */
	s->created = true;
	s->started = true;
	close_child_fds(s);
	if (rc != 0) {
		char tail[256];
		read_diag(s);
		gv_err_prefix(err, "%s", diag_tail(s, tail, sizeof(tail)));
		return -1;
	}
	if (open_pidfd(s, err) != 0)
		return -1;
	struct gv_log_ctx ctx = {.sandbox = s->id};
	gv_debug(&ctx, "runsc run --detach %lld ms, pidfd %lld ms", (long long)(t1 - t0),
		 (long long)(now_ms() - t1));
	return 0;
}

/* A session with no sandbox yet; NULL when out of memory. */
static struct exec_session *session_new(struct exec_engine *e)
{
	struct exec_session *s = calloc(1, sizeof(*s));
	char *diag = malloc(DIAG_CAP);
	if (!s || !diag) {
		free(s);
		free(diag);
		return NULL;
	}
	s->e = e;
	s->diag = diag;
	s->pid = -1;
	s->create_pid = -1;
	s->pidfd = s->in_fd = s->out_fd = s->err_fd = -1;
	s->child_fd[0] = s->child_fd[1] = s->child_fd[2] = -1;
	s->deadline = now_ms() + (int64_t)e->cfg.session_wall_ms;
	s->created_at = now_ms();
	/* Until a job sets its own caps: stdout, stderr, result. */
	exec_frame_decoder_init(&s->dec, s->caps, 3);
	return s;
}

/* The job's side of a session: its limits, its flags and the frame kinds
 * its phases may send. */
static void session_set_job(struct exec_session *s, const struct exec_job *job)
{
	s->compile_limits = job->compile_limits;
	s->run_limits = job->run_limits;
	s->feedback_dir = job->feedback_dir;
	s->interactive = job->interactive;
	/* `feedback` frames are accepted from validator sandboxes only,
	 * `data` from interactive ones (and only inside exec_session_interact). */
	exec_frame_decoder_free(&s->dec);
	exec_frame_decoder_init(&s->dec, s->caps, 3 + (job->feedback_dir ? 1 : 0) + (job->interactive ? 1 : 0));
}

/* Id, cgroup path, work dir and bundle (with an empty /box) of s->shape. */
static int session_setup(struct exec_session *s, struct gv_err *err)
{
	struct exec_engine *e = s->e;
	if (make_id(s->id, sizeof(s->id), err) != 0 ||
	    exec_cgroup_path(s->cg_rel, sizeof(s->cg_rel), e->cfg.cgroup_parent, s->shape.tenant, s->id,
			     err) != 0)
		return -1;
	int n = snprintf(s->dir, sizeof(s->dir), "%s/%s", e->cfg.work_root, s->id);
	if (n < 0 || (size_t)n >= sizeof(s->dir))
		return gv_err_set(err, GV_ELIMIT, "work dir path too long");
	/* Fail closed: no uid of its own, no sandbox. */
	if (exec_uids_take(&e->uids, &s->uid_slot, err) != 0)
		return -1;
	s->has_uid = true;
	if (mkdirat(e->work_root_fd, s->id, 0700) != 0)
		return gv_err_errno(err, "mkdir %s", s->dir);
	s->dir_made = true;
	int bfd = openat(e->work_root_fd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0)
		return gv_err_errno(err, "open %s", s->dir);
	int rc = build_bundle(s, bfd, err);
	close(bfd);
	return rc;
}

/* The compile phase (trivially OK without a compile step) comes by
 * itself, before any command. */
static int first_phase(struct exec_session *s, const struct exec_job *job, struct exec_phase_result *compile,
		       struct gv_err *err)
{
	const struct exec_limits *cl = job->compile_argv ? &job->compile_limits : &job->run_limits;
	if (run_phase(s, NULL, 0, cl, true, compile, err) != 0)
		return -1;
	/* init runs the compile phase once, by itself: it cannot be rerun. */
	return s->starved ? starved_error(s, compile, err) : 0;
}

int exec_session_precreate(struct exec_engine *e, const struct exec_sandbox_shape *shape,
			   struct exec_session **out, struct gv_err *err)
{
	*out = NULL;
	if (!exec_cgroup_name_ok(shape->tenant))
		return gv_err_set(err, GV_EINVAL, "tenant name not usable for a sandbox");
	struct exec_session *s = session_new(e);
	if (!s)
		return gv_err_set(err, ENOMEM, "session: out of memory");
	s->shape = *shape;
	char pidf[4200];
	if (session_setup(s, err) != 0 || make_pipes(s, err) != 0)
		goto fail;
	snprintf(pidf, sizeof(pidf), "%s/pid", s->dir);
	struct exec_runsc rs = e->runsc;
	rs.join_userns = true;
	rs.userns_fd = exec_uids_userns(&e->uids, s->uid_slot);
	if (exec_runsc_create_spawn(&rs, s->dir, pidf, s->id, s->child_fd, &s->create_pid, err) != 0)
		goto fail;
	s->created = true;
	*out = s;
	return 0;
fail:
	gv_err_prefix(err, "sandbox %s (ahead of demand)", s->id[0] ? s->id : "(none)");
	exec_session_close(s);
	return -1;
}

int exec_session_precreate_poll(struct exec_session *s, struct gv_err *err)
{
	if (s->dead)
		return gv_err_set(err, GV_ESANDBOX, "sandbox %s: creation failed earlier", s->id);
	if (s->create_pid < 0) {
		/* Created: still there? (A created sandbox idles; its death is
		 * the host's doing, e.g. the OOM killer.) */
		if (s->pid > 0 && !s->reaped && exec_reaper_done(&s->e->reaper, s->pid, &s->wait_status)) {
			s->reaped = true;
			exec_reaper_forget(&s->e->reaper, s->pid);
		}
		if (s->reaped) {
			s->dead = true;
			return gv_err_set(err, GV_ESANDBOX, "sandbox %s died before it was used", s->id);
		}
		return 1;
	}
	int st = 0;
	if (!exec_reaper_done(&s->e->reaper, s->create_pid, &st))
		return 0;
	exec_reaper_forget(&s->e->reaper, s->create_pid);
	s->create_pid = -1;
	/* runsc has passed the child ends on to the sandbox. */
	close_child_fds(s);
	char pidf[4200];
	snprintf(pidf, sizeof(pidf), "%s/pid", s->dir);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		s->dead = true;
		char tail[256];
		read_diag(s);
		return gv_err_set(err, GV_ESANDBOX, "sandbox %s: runsc create failed (%s %d): %s", s->id,
				  WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
				  diag_tail(s, tail, sizeof(tail)));
	}
	if (exec_runsc_read_pid_file(&s->e->runsc, pidf, &s->pid, err) != 0 || open_pidfd(s, err) != 0) {
		s->dead = true;
		gv_err_prefix(err, "sandbox %s", s->id);
		return -1;
	}
	return 1;
}

#define ADOPT_CREATE_WAIT_MS 60000

/* Gives the created sandbox s to job: waits for `runsc create` if it is
 * still running, writes the job into /box, `runsc start`, and runs the
 * compile phase into *compile. -1 with *fresh_ok when the job never
 * reached the sandbox (creation or start failed): the caller may open a
 * fresh one instead. s is closed on every failure. */
static int session_adopt(struct exec_session *s, const struct exec_job *job, struct exec_phase_result *compile,
			 bool *fresh_ok, struct gv_err *err)
{
	*fresh_ok = true;
	struct exec_sandbox_shape want;
	exec_job_shape(s->e, job, &want);
	int ready = 0;
	int64_t until = now_ms() + ADOPT_CREATE_WAIT_MS;
	while ((ready = exec_session_precreate_poll(s, err)) == 0 && now_ms() < until)
		exec_reaper_wait(&s->e->reaper, s->create_pid, NULL, 10);
	if (ready == 0)
		gv_err_set(err, GV_ESANDBOX, "runsc create still running after %d ms", ADOPT_CREATE_WAIT_MS);
	/* A pool hands out only its shape's sandboxes; checked again since a
	 * sandbox with other limits must never run this job. */
	if (ready == 1 && !exec_shape_equal(&want, &s->shape))
		ready = gv_err_set(err, GV_EINTERNAL, "sandbox of another shape");
	if (ready == 1 && s->dead)
		ready = gv_err_set(err, GV_ESANDBOX, "sandbox died while waiting");
	if (ready != 1)
		goto fail;
	session_set_job(s, job);
	if (write_job_files(s, job, err) != 0)
		goto fail;
	int64_t t0 = now_ms();
	/* Created ahead, its cgroup has counted its creation and its idle
	 * time: the compile is counted from here (fails closed). */
	if (!s->e->cfg.guest_cpu_time && sandbox_cpu_ns(s, &s->boot_cpu_ns, err) != 0)
		goto fail;
	if (exec_runsc_start(&s->e->runsc, s->id, err) != 0)
		goto fail;
	s->started = true;
	*fresh_ok = false;
	s->deadline = now_ms() + (int64_t)s->e->cfg.session_wall_ms;
	struct gv_log_ctx ctx = {.sandbox = s->id};
	gv_debug(&ctx, "pooled sandbox: runsc start %lld ms", (long long)(now_ms() - t0));
	if (first_phase(s, job, compile, err) != 0)
		goto fail;
	return 0;
fail:
	gv_err_prefix(err, "sandbox %s (created ahead)", s->id);
	if (!compile->status[0])
		result_set(compile, "IE", "none", "sandbox could not be set up");
	exec_session_close(s);
	return -1;
}

/* Gives s a network of its own under policy (resolving its host names
 * now), in a free slot of the engine's pool. Fails closed: the job does
 * not run without the filter and shaping it was promised. */
static int session_net_open(struct exec_session *s, const struct tenant_egress_policy *policy,
			    struct gv_err *err)
{
	struct exec_engine *e = s->e;
	unsigned slot = 0;
	while (slot < e->cfg.net.slots && slot < EXEC_NET_SLOTS_MAX && e->net_slot_used[slot])
		slot++;
	if (!e->cfg.net.prefix || !e->cfg.net.prefix[0])
		return gv_err_set(err, GV_ESANDBOX, "egress granted, but this executor has no egress pool");
	if (slot >= e->cfg.net.slots || slot >= EXEC_NET_SLOTS_MAX)
		return gv_err_set(err, GV_ELIMIT, "no free sandbox network slot");
	struct tenant_egress_policy *resolved = malloc(sizeof(*resolved));
	if (!resolved)
		return gv_err_set(err, ENOMEM, "egress: out of memory");
	int rc = exec_net_resolve(policy, resolved, err);
	if (rc == 0) {
		rc = exec_net_setup(&e->cfg.net, slot, resolved, &s->net, err);
		if (rc == 0)
			s->has_net = true;
		/* A failed set-up that could not remove all it made keeps its
		 * slot until the next engine start sweeps it. */
		if (rc == 0 || s->net.made)
			e->net_slot_used[slot] = true;
	}
	free(resolved);
	return rc;
}

int exec_session_open(struct exec_engine *e, const struct exec_job *job, struct exec_session **out,
		      struct exec_phase_result *compile, struct gv_err *err)
{
	result_init(compile);
	*out = NULL;
	exec_engine_poll(e);
	if (check_job(job, err) != 0) {
		result_set(compile, "IE", "none", "invalid job");
		return -1;
	}
	struct exec_sandbox_shape shape;
	exec_job_shape(e, job, &shape);
	/* Sandboxes created ahead of demand have no network and no devices:
	 * a job granted egress or GPUs always gets a fresh one. */
	bool wants_net = job->egress && job->egress->grants;
	bool wants_gpu = job->gpu_visible || job->n_gpu_nodes > 0;
	struct exec_session *pooled =
		e->pool && !wants_net && !wants_gpu ? exec_pool_take(e->pool, &shape) : NULL;
	if (pooled) {
		bool fresh_ok = false;
		/* Counted as open from here (a failed adoption's close uncounts
		 * it): the engine polls while the job's first phase runs, and
		 * the pool must not start a creation next to it. */
		pooled->counted = true;
		e->n_open++;
		if (session_adopt(pooled, job, compile, &fresh_ok, err) == 0) {
			*out = pooled;
			return 0;
		}
		if (!fresh_ok)
			return -1;
		struct gv_log_ctx ctx = {.tenant = job->tenant};
		gv_warn(&ctx, "%s; opening a fresh sandbox instead", err->msg);
		result_init(compile);
		gv_err_clear(err);
	}
	struct exec_session *s = session_new(e);
	if (!s) {
		result_set(compile, "IE", "none", "out of memory");
		return gv_err_set(err, ENOMEM, "session: out of memory");
	}
	s->shape = shape;
	s->counted = true; /* as above: no pool creation next to its first phase */
	e->n_open++;
	session_set_job(s, job);
	s->gpu_visible = job->gpu_visible;
	s->gpu_nodes = job->gpu_nodes;
	s->n_gpu_nodes = job->n_gpu_nodes;
	if ((wants_net && session_net_open(s, job->egress, err) != 0) || session_setup(s, err) != 0 ||
	    write_job_files(s, job, err) != 0 || start_sandbox(s, err) != 0 ||
	    first_phase(s, job, compile, err) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	gv_err_prefix(err, "sandbox %s", s->id[0] ? s->id : "(none)");
	if (!compile->status[0])
		result_set(compile, "IE", "none", "sandbox could not be set up");
	exec_session_close(s);
	return -1;
}

/* ---- tear-down ---- */

enum { PENDING_REAP, PENDING_DELETE, PENDING_CLEANUP, PENDING_DONE };

#define PENDING_REAP_MS 5000     /* a SIGKILLed Sentry is reaped in ~3 ms */
#define PENDING_DELETE_MS 30000  /* then `runsc delete` is SIGKILLed */
#define CLOSE_REAP_MS 50         /* exec_session_close waits this long for the Sentry */

/* Advances one closed session's tear-down; with block, waits until it is
 * done. Order matters: the sandbox is reaped (with the gofer, which exits
 * after it) before `runsc delete`, or delete times out; the cgroups go
 * after delete; the work dir last, with the no-follow removal. Failures
 * are logged: a leftover is swept at the next engine start. Security: the
 * Sentry was SIGKILLed by exec_session_close, so nothing of the sandbox
 * runs any more; what is left are host-side records of it. */
static void pending_step(struct exec_engine *e, struct exec_pending *p, bool block)
{
	struct gv_log_ctx ctx = {.sandbox = p->id};
	struct gv_err err;
	gv_err_clear(&err);
	for (;;) {
		int64_t now = now_ms();
		switch (p->step) {
		case PENDING_REAP:
			if (p->sandbox_pid > 0) {
				long left = (long)(p->since + PENDING_REAP_MS - now);
				bool reaped = block ? exec_reaper_wait(&e->reaper, p->sandbox_pid, NULL,
								       left > 0 ? left : 0)
						    : exec_reaper_done(&e->reaper, p->sandbox_pid, NULL);
				if (!reaped && now < p->since + PENDING_REAP_MS)
					return;
				if (!reaped)
					gv_warn(&ctx, "sandbox process %d not reaped after SIGKILL",
						(int)p->sandbox_pid);
				exec_reaper_forget(&e->reaper, p->sandbox_pid);
				p->sandbox_pid = -1;
			}
			p->step = PENDING_DELETE;
			p->since = now;
			break;
		case PENDING_DELETE:
			if (p->created && p->delete_pid < 0) {
				if (exec_runsc_delete_start(&e->runsc, p->id, &p->delete_pid, &err) != 0) {
					gv_warn(&ctx, "%s", err.msg);
					p->delete_pid = -1;
					p->step = PENDING_CLEANUP;
					break;
				}
			}
			if (p->delete_pid > 0) {
				int st = 0;
				bool done = block ? exec_reaper_wait(&e->reaper, p->delete_pid, &st, 1000)
						  : exec_reaper_done(&e->reaper, p->delete_pid, &st);
				if (!done) {
					if (!p->delete_killed && now_ms() > p->since + PENDING_DELETE_MS) {
						gv_warn(&ctx, "runsc delete: timed out, killed");
						kill(p->delete_pid, SIGKILL);
						p->delete_killed = true;
					}
					if (!block)
						return;
					break;
				}
				exec_reaper_forget(&e->reaper, p->delete_pid);
				p->delete_pid = -1;
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
					gv_warn(&ctx, "runsc delete failed (%s %d)",
						WIFEXITED(st) ? "exit" : "signal",
						WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			}
			p->step = PENDING_CLEANUP;
			break;
		case PENDING_CLEANUP:
			if (p->cg_rel[0]) {
				if (e->cg.ops->remove(&e->cg, p->cg_rel, &err) != 0)
					gv_warn(&ctx, "%s", err.msg);
				exec_cgroup_remove_parent_if_empty(&e->cg, p->cg_rel);
			}
			if (p->dir_made && gv_remove_tree_at(e->work_root_fd, p->id, &err) != 0)
				gv_warn(&ctx, "could not remove work dir %s: %s", p->id, err.msg);
			if (p->has_net) {
				/* A leftover keeps its slot until the next
				 * engine start sweeps it. */
				if (exec_net_teardown(&e->cfg.net, &p->net, &err) != 0)
					gv_warn(&ctx, "%s", err.msg);
				else if (p->net.slot < EXEC_NET_SLOTS_MAX)
					e->net_slot_used[p->net.slot] = false;
				p->has_net = false;
			}
			/* Its processes are dead and reaped (or, past the
			 * bound, SIGKILLed and deleted): the uid is free. */
			if (p->has_uid)
				exec_uids_give(&e->uids, p->uid_slot);
			p->has_uid = false;
			p->step = PENDING_DONE;
			return;
		default:
			return;
		}
	}
}

static void pending_compact(struct exec_engine *e)
{
	size_t k = 0;
	for (size_t i = 0; i < e->n_pending; i++)
		if (e->pending[i].step != PENDING_DONE)
			e->pending[k++] = e->pending[i];
	e->n_pending = k;
}

void exec_engine_poll(struct exec_engine *e)
{
	if (!e)
		return;
	if (e->n_pending > 0) {
		for (size_t i = 0; i < e->n_pending; i++)
			pending_step(e, &e->pending[i], false);
		pending_compact(e);
	}
	exec_pool_tick(e->pool);
}

void exec_engine_drain(struct exec_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_pending; i++)
		pending_step(e, &e->pending[i], true);
	pending_compact(e);
}

/* Kills the sandbox now and hands the rest of the tear-down to the engine
 * (pending_step). Security: SIGKILL of the Sentry ends every process
 * inside at once, so the program cannot outlive close; the OOM counter was
 * read after every phase, while the cgroup existed. */
void exec_session_close(struct exec_session *s)
{
	if (!s)
		return;
	struct exec_engine *e = s->e;
	if (s->counted && e->n_open > 0)
		e->n_open--;
	if (s->create_pid > 0) {
		/* Closed while `runsc create` runs (a pool emptied at shutdown):
		 * let it finish, bounded, so that the sandbox it leaves is ours
		 * to kill; past the bound, `runsc delete --force` below ends it. */
		int st = 0;
		bool done = exec_reaper_wait(&e->reaper, s->create_pid, &st, 10000);
		if (!done) {
			kill(s->create_pid, SIGKILL);
			exec_reaper_wait(&e->reaper, s->create_pid, NULL, 5000);
		}
		exec_reaper_forget(&e->reaper, s->create_pid);
		s->create_pid = -1;
		char pidf[4200];
		snprintf(pidf, sizeof(pidf), "%s/pid", s->dir);
		struct gv_err ignored;
		if (done && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
		    exec_runsc_read_pid_file(&e->runsc, pidf, &s->pid, &ignored) != 0)
			s->pid = -1;
	}
	close_child_fds(s);
	kill_sandbox(s);
	/* A SIGKILLed Sentry is reaped in ~3 ms: waiting that long here lets
	 * the poll below start `runsc delete` at once, rather than at the
	 * next poll (up to a second later in an idle worker), so a finished
	 * sandbox is not listed next to the pool's refill. Bounded: a slow
	 * death is left to the tear-down's own reap step. */
	wait_sandbox(s, CLOSE_REAP_MS);
	close_fd(&s->pidfd);
	close_fd(&s->in_fd);
	close_fd(&s->out_fd);
	close_fd(&s->err_fd);
	if (e->n_pending == EXEC_PENDING_MAX) {
		/* Never more than this many tear-downs in flight: finish the
		 * oldest (its `runsc delete` has had the longest). */
		pending_step(e, &e->pending[0], true);
		pending_compact(e);
	}
	if (e->n_pending == EXEC_PENDING_MAX)
		exec_engine_drain(e);
	struct exec_pending *p = &e->pending[e->n_pending++];
	memset(p, 0, sizeof(*p));
	snprintf(p->id, sizeof(p->id), "%s", s->id);
	snprintf(p->cg_rel, sizeof(p->cg_rel), "%s", s->cg_rel);
	p->sandbox_pid = s->pid > 0 && !s->reaped ? s->pid : -1;
	p->delete_pid = -1;
	p->since = now_ms();
	p->step = PENDING_REAP;
	p->created = s->created;
	p->dir_made = s->dir_made;
	p->has_uid = s->has_uid;
	p->uid_slot = s->uid_slot;
	if (s->has_net) {
		/* Its blocked connection attempts, read while its filter
		 * exists (the clean-up removes it). */
		uint64_t blocked = 0;
		struct gv_err nerr;
		if (exec_net_blocked(&e->cfg.net, &s->net, &blocked, &nerr) == 0)
			e->net_blocked += blocked;
		else
			gv_warn(&(struct gv_log_ctx){.sandbox = s->id}, "%s", nerr.msg);
		p->has_net = true;
		p->net = s->net;
	}
	exec_frame_decoder_free(&s->dec);
	free(s->diag);
	free(s);
	exec_engine_poll(e);
}

/* ---- engine ---- */

/* Creates dir 0700 if missing and checks it is a root-owned directory,
 * not a link, writable by nobody else: runsc's state and our bundles hold
 * what decides how sandboxes are built. */
static int private_dir(const char *path, struct gv_err *err)
{
	if (!path || path[0] != '/')
		return gv_err_set(err, GV_ECONFIG, "%s: must be an absolute path", path ? path : "(null)");
	/* Missing parents are made private too (root, 0700); existing ones are
	 * left as they are. */
	if (gv_mkdir_parents(path, err) != 0)
		return -1;
	struct stat st;
	if (lstat(path, &st) != 0)
		return gv_err_errno(err, "stat %s", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return gv_err_set(err, GV_ECONFIG,
				  "%s must be a root-owned directory not writable by others", path);
	return 0;
}

static int check_init(const char *path, struct gv_err *err)
{
	struct stat st;
	if (!path || path[0] != '/')
		return gv_err_set(err, GV_ECONFIG, "gavel-init path must be absolute");
	if (stat(path, &st) != 0)
		return gv_err_errno(err, "gavel-init %s", path);
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0001) || (st.st_mode & 022) || st.st_uid != 0)
		return gv_err_set(err, GV_ECONFIG,
				  "gavel-init %s must be a root-owned file, executable by all, "
				  "writable by root only", path);
	return 0;
}

/* Removes stale work dirs "gv-*" under the work root (a crashed executor's
 * leftovers), with the same no-follow removal as a session close. */
static unsigned sweep_work_root(int fd)
{
	unsigned n = 0;
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	char names[256][40];
	size_t k = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL && k < 256)
		if (strncmp(de->d_name, "gv-", 3) == 0 && strlen(de->d_name) < sizeof(names[0]))
			memcpy(names[k++], de->d_name, strlen(de->d_name) + 1);
	closedir(d);
	for (size_t i = 0; i < k; i++)
		if (gv_remove_tree_at(fd, names[i], NULL) == 0)
			n++;
	return n;
}

/* What exec_engine_init made before a later step failed. */
static void engine_init_undo(struct exec_engine *e)
{
	close_fd(&e->work_root_fd);
	exec_uids_fini(&e->uids);
	exec_uids_release_root(e->cfg.work_root, e->work_root_bound);
	e->work_root_bound = false;
}

int exec_engine_init(struct exec_engine *e, const struct exec_engine_config *cfg, struct gv_err *err)
{
	memset(e, 0, sizeof(*e));
	e->work_root_fd = -1;
	e->uids.dir_fd = -1; /* count 0: nothing else to undo before exec_uids_init */
	e->cfg = *cfg;
	struct exec_engine_config *c = &e->cfg;
	if (!c->tmp_size_kb)
		c->tmp_size_kb = 65536;
	if (!c->headroom_kb)
		c->headroom_kb = 65536;
	if (!c->session_wall_ms)
		c->session_wall_ms = 1800000;
	if (!c->cpu_quota_pct)
		c->cpu_quota_pct = 100;
	if (!c->pids_limit)
		c->pids_limit = 4096;
	if (!c->cgroup_parent)
		c->cgroup_parent = "gavel";
	if (c->pids_limit < EXEC_BUNDLE_MIN_PIDS)
		return gv_err_set(err, GV_ECONFIG, "pids_limit below %d panics the Sentry",
				  EXEC_BUNDLE_MIN_PIDS);
	if (c->cpu_quota_pct > 6400)
		return gv_err_set(err, GV_ECONFIG, "cpu_quota_pct out of range");
	if (geteuid() != 0)
		return gv_err_set(err, GV_ESANDBOX, "the executor must run as root to drive runsc");
	if (private_dir(c->runsc_root, err) != 0 || private_dir(c->work_root, err) != 0 ||
	    check_init(c->init_path, err) != 0)
		return -1;
	if (exec_cgroup_detect(&e->cg, c->cgroup_root, err) != 0)
		return -1;
	e->runsc = (struct exec_runsc){
		.path = c->runsc_path,
		.root = c->runsc_root,
		.platform = c->platform,
		.file_access_exclusive = !c->file_access_shared,
		.nvproxy = c->nvproxy,
		.reaper = &e->reaper,
	};
	/* Orphans of runsc create (sandbox, gofer) must become our children:
	 * we wait4 the sandbox and reap the gofer. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		return gv_err_errno(err, "PR_SET_CHILD_SUBREAPER");
	/* A write to a dead sandbox's pipe must be an EPIPE, not our death. */
	signal(SIGPIPE, SIG_IGN);
	if (!c->skip_runsc_check && exec_runsc_check(&e->runsc, err) != 0)
		return -1;
	if (exec_uids_prepare_root(c->work_root, &e->work_root_bound, err) != 0)
		return -1;
	e->work_root_fd = open(c->work_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (e->work_root_fd < 0) {
		gv_err_errno(err, "open %s", c->work_root);
		exec_uids_release_root(c->work_root, e->work_root_bound);
		return -1;
	}
	exec_bundle_default_etc_binds(e->etc_binds);
	exec_bundle_default_usr_dirs(e->usr_dirs);
	if (!e->usr_dirs[0]) {
		engine_init_undo(e);
		return gv_err_set(err, GV_EINVAL, "none of the toolchain folders of /usr exists on this host");
	}
	if (exec_uids_init(&e->uids, c->sandbox_uid_dir,
			   c->sandbox_uid_base ? c->sandbox_uid_base : EXEC_UIDS_DEFAULT_BASE,
			   c->sandbox_uid_count ? c->sandbox_uid_count : EXEC_UIDS_DEFAULT_COUNT, err) != 0) {
		engine_init_undo(e);
		return -1;
	}
	struct stat pch_st;
	/* Speed only: without the folder, compiles parse the headers. */
	e->pch_path = cfg->pch_dir && stat(cfg->pch_dir, &pch_st) == 0 && S_ISDIR(pch_st.st_mode) ? cfg->pch_dir : NULL;
	/* Leftovers of an earlier run: containers first (their processes hold
	 * the cgroups), then cgroups, then work dirs. */
	if (exec_runsc_sweep(&e->runsc, &e->swept_containers, err) != 0 ||
	    exec_cgroup_sweep(&e->cg, c->cgroup_parent, &e->swept_cgroups, err) != 0) {
		engine_init_undo(e);
		gv_err_prefix(err, "sweeping leftovers");
		return -1;
	}
	exec_reaper_collect(&e->reaper);
	e->swept_dirs = sweep_work_root(e->work_root_fd);
	/* Sandbox networks of an earlier run (their sandboxes are gone). */
	if (exec_net_config_check(&c->net, err) != 0 || exec_net_sweep(&c->net, &e->swept_net, err) != 0) {
		engine_init_undo(e);
		gv_err_prefix(err, "sweeping sandbox networks");
		return -1;
	}
	return 0;
}

void exec_engine_fini(struct exec_engine *e)
{
	if (!e)
		return;
	exec_pool_detach(e->pool);
	exec_engine_drain(e);
	close_fd(&e->work_root_fd);
	exec_reaper_collect(&e->reaper);
	exec_uids_fini(&e->uids);
	exec_uids_release_root(e->cfg.work_root, e->work_root_bound);
}
