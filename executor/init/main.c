/* gavel-init: PID 1 of every sandbox. Reads /box/job, runs the compile
 * phase, locks the work dir, then runs the program once per `test` frame
 * from the host until `end` (executor/PROTOCOL.md). Thin: the runner,
 * policy, verdict and wipe logic live beside it.
 *
 * Security argument: init runs with the program's uid (65534), no
 * capabilities and no_new_privs (the OCI bundle). It makes itself
 * non-dumpable so that the same-uid program cannot read its memory or fds
 * through /proc or ptrace (also denied by seccomp),  it blocks (never
 * handles) every signal and the program's filter denies kill() of pid 1, and between runs it kills every other process and empties the
 * writable places, so no state survives from one test to the next. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/err.h"
#include "executor/init/job.h"
#include "executor/init/run.h"
#include "executor/init/seccomp_policy.h"
#include "executor/init/verdict.h"
#include "executor/init/wipe.h"
#include "executor/record.h"

#define BOX "/box"
#define JOB_PATH "/box/job"

/* Writable places emptied after every run; the ones that do not exist or
 * are not writable for us are skipped at start-up. */
static const char *const scratch_dirs[] = { "/tmp", "/dev/shm" };
#define NSCRATCH (sizeof(scratch_dirs) / sizeof(scratch_dirs[0]))

struct init_state {
	struct init_job job;
	struct init_runner runner;
	struct init_bpf bpf_program;
	struct init_bpf bpf_compile;
	int scratch_fd[NSCRATCH];
	uint32_t next_index;
	int compile_failed;
	int as_root;   /* init is uid 0 (recommended): children drop to 65534 */
};

static int write_all(int fd, const struct iovec *iov, int n, struct gv_err *err)
{
	struct iovec v[6];
	if (n > 6)
		return gv_err_set(err, GV_EINTERNAL, "write_all: too many parts");
	memcpy(v, iov, sizeof(v[0]) * (size_t)n);
	int i = 0;
	while (i < n) {
		ssize_t w = writev(fd, v + i, n - i);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return gv_err_errno(err, "write to host");
		}
		size_t left = (size_t)w;
		while (i < n && left >= v[i].iov_len)
			left -= v[i++].iov_len;
		if (i < n) {
			v[i].iov_base = (char *)v[i].iov_base + left;
			v[i].iov_len -= left;
		}
	}
	return 0;
}

static int send_frame(const char *kind, const char *data, size_t len, struct gv_err *err)
{
	char hdr[EXEC_FRAME_HEADER_MAX + 1];
	int h = exec_frame_header(hdr, sizeof(hdr), kind, len, err);
	if (h < 0)
		return -1;
	struct iovec iov[2] = { { hdr, (size_t)h }, { (void *)data, len } };
	return write_all(1, iov, len ? 2 : 1, err);
}

static int send_result(const struct exec_record *rec, struct gv_err *err)
{
	char buf[2048];
	int n = exec_record_format(rec, buf, sizeof(buf), err);
	if (n < 0)
		return -1;
	return send_frame("result", buf, (size_t)n, err);
}

/* The three frames of a phase in one writev: one system call and one
 * wake-up of the host instead of three. */
static int send_phase(struct init_state *s, const struct exec_record *rec, struct gv_err *err)
{
	char hout[EXEC_FRAME_HEADER_MAX + 1], herr[EXEC_FRAME_HEADER_MAX + 1];
	char hres[EXEC_FRAME_HEADER_MAX + 1], res[2048];
	int n = exec_record_format(rec, res, sizeof(res), err);
	if (n < 0)
		return -1;
	int ho = exec_frame_header(hout, sizeof(hout), "stdout", s->runner.out.len, err);
	int he = ho < 0 ? -1 : exec_frame_header(herr, sizeof(herr), "stderr", s->runner.err.len, err);
	int hr = he < 0 ? -1 : exec_frame_header(hres, sizeof(hres), "result", (size_t)n, err);
	if (hr < 0)
		return -1;
	struct iovec iov[6] = {
		{ hout, (size_t)ho }, { s->runner.out.buf, s->runner.out.len },
		{ herr, (size_t)he }, { s->runner.err.buf, s->runner.err.len },
		{ hres, (size_t)hr }, { res, (size_t)n },
	};
	return write_all(1, iov, 6, err);
}

/* Internal failure: tell the host (best effort) and exit non-zero. */
static _Noreturn void die(struct init_state *s, enum exec_phase phase, const struct gv_err *e)
{
	struct exec_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.phase = phase;
	rec.index = phase == EXEC_PHASE_TEST ? (s ? s->next_index : 1) : 0;
	rec.status = EXEC_STATUS_IE;
	rec.limit = EXEC_LIMIT_NONE;
	/* Truncation is fine: the full text also goes to fd 2. */
	size_t ml = strnlen(e->msg, sizeof(rec.message) - 1);
	memcpy(rec.message, e->msg, ml);
	rec.message[ml] = '\0';
	struct gv_err ignored;
	if (send_frame("stdout", NULL, 0, &ignored) == 0 && send_frame("stderr", NULL, 0, &ignored) == 0 &&
	    send_result(&rec, &ignored) == 0) {
		/* reported */
	}
	dprintf(2, "gavel-init: %s\n", e->msg);
	if (s) {
		struct gv_err e2;
		if (init_kill_all(&s->runner, &e2) < 0) {
			/* nothing more to do: we exit */
		}
	}
	_exit(1);
}

static int read_job(struct init_job *job, struct gv_err *err)
{
	int fd = open(JOB_PATH, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return gv_err_errno(err, "open %s", JOB_PATH);
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return gv_err_errno(err, "stat %s", JOB_PATH);
	}
	if (!S_ISREG(st.st_mode) || st.st_size > INIT_JOB_MAX_BYTES) {
		close(fd);
		return gv_err_set(err, GV_EINVAL, "%s is not a regular file of at most %d bytes",
				  JOB_PATH, INIT_JOB_MAX_BYTES);
	}
	static char buf[INIT_JOB_MAX_BYTES + 1];
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return gv_err_errno(err, "read %s", JOB_PATH);
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > INIT_JOB_MAX_BYTES) {
			close(fd);
			return gv_err_set(err, GV_ELIMIT, "%s grew over %d bytes", JOB_PATH, INIT_JOB_MAX_BYTES);
		}
	}
	close(fd);
	return init_job_parse(buf, len, job, err);
}

static int wipe_scratch(struct init_state *s, struct gv_err *err)
{
	for (size_t i = 0; i < NSCRATCH; i++) {
		if (s->scratch_fd[i] < 0)
			continue;
		if (init_wipe_dir(s->scratch_fd[i], NULL, err) < 0) {
			gv_err_prefix(err, "wipe %s", scratch_dirs[i]);
			return -1;
		}
	}
	return 0;
}

static void open_scratch(struct init_state *s)
{
	for (size_t i = 0; i < NSCRATCH; i++) {
		s->scratch_fd[i] = -1;
		if (access(scratch_dirs[i], W_OK) != 0)
			continue;
		s->scratch_fd[i] = open(scratch_dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
}

static int compile_phase(struct init_state *s, struct gv_err *err)
{
	struct exec_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.phase = EXEC_PHASE_COMPILE;
	if (!s->job.compile_argv[0]) {
		s->runner.out.len = s->runner.err.len = 0;
		rec.status = EXEC_STATUS_OK;
		rec.limit = EXEC_LIMIT_NONE;
		snprintf(rec.message, sizeof(rec.message), "no compile step");
		return send_phase(s, &rec, err);
	}
	struct init_outcome o;
	struct init_run_spec spec = {
		.argv = s->job.compile_argv,
		.lim = &s->job.compile,
		.bpf = &s->bpf_compile,
		.combined_cap = 1,
		.drop_to_sandbox_uid = s->as_root,
	};
	if (init_runner_input_reset(&s->runner, err) < 0 ||
	    init_runner_run(&s->runner, &spec, &o, err) < 0) {
		gv_err_prefix(err, "compile");
		return -1;
	}
	init_decide(&o, &s->job.compile, &rec);
	s->compile_failed = rec.status != EXEC_STATUS_OK;
	return send_phase(s, &rec, err);
}

static int lock_box(const struct init_state *s, struct gv_err *err)
{
	int fd = open(BOX, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return gv_err_errno(err, "open %s", BOX);
	uid_t uid = s->as_root ? INIT_SANDBOX_UID : geteuid();
	gid_t gid = s->as_root ? INIT_SANDBOX_GID : getegid();
	int rc = init_lock_tree(fd, uid, gid, err);
	close(fd);
	if (rc < 0)
		gv_err_prefix(err, "lock %s", BOX);
	return rc;
}

static int test_phase(struct init_state *s, struct gv_err *err)
{
	struct exec_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.phase = EXEC_PHASE_TEST;
	rec.index = s->next_index;
	struct init_outcome o;
	struct init_run_spec spec = {
		.argv = s->job.run_argv,
		.lim = &s->job.test,
		.bpf = &s->bpf_program,
		.combined_cap = 0,
		.drop_to_sandbox_uid = s->as_root,
	};
	if (init_runner_run(&s->runner, &spec, &o, err) < 0 || wipe_scratch(s, err) < 0) {
		gv_err_prefix(err, "test %u", s->next_index);
		return -1;
	}
	init_decide(&o, &s->job.test, &rec);
	return send_phase(s, &rec, err);
}

static const struct exec_frame_cap command_caps[] = {
	{ "test", EXEC_FRAME_LEN_MAX },
	{ "end", 0 },
};

/* The command loop: returns 0 after `end`, -1 on a failure or a protocol
 * error (EOF before `end` included). */
static int command_loop(struct init_state *s, struct gv_err *err)
{
	static char buf[65536];
	struct exec_frame_decoder dec;
	exec_frame_decoder_init(&dec, command_caps, 2);
	uint64_t in_off = 0;
	int is_test = 0;
	for (;;) {
		ssize_t n = read(0, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return gv_err_errno(err, "read commands");
		if (n == 0)
			return gv_err_set(err, GV_EPROTO, "commands ended without `end`%s",
					  exec_frame_decoder_idle(&dec) ? "" : " (inside a frame)");
		size_t used = 0;
		for (;;) {
			/* NONE only when the input is used up; END comes even then. */
			struct exec_frame_event ev;
			if (exec_frame_decoder_step(&dec, buf + used, (size_t)n - used, &used, &ev, err) < 0)
				return -1;
			if (ev.type == EXEC_FRAME_EV_NONE)
				break;
			if (ev.type == EXEC_FRAME_EV_BEGIN) {
				is_test = strcmp(ev.kind, "test") == 0;
				if (!is_test)
					continue;
				if (s->compile_failed)
					return gv_err_set(err, GV_EPROTO, "`test` after a failed compile");
				s->next_index++;
				in_off = 0;
				if (init_runner_input_reset(&s->runner, err) < 0)
					return -1;
			} else if (ev.type == EXEC_FRAME_EV_DATA) {
				if (init_runner_input_append(&s->runner, ev.data, ev.data_len, in_off, err) < 0)
					return -1;
				in_off += ev.data_len;
			} else if (ev.type == EXEC_FRAME_EV_END) {
				if (!is_test)
					return 0; /* end */
				if (test_phase(s, err) < 0)
					return -1;
			}
		}
	}
}

int main(void)
{
	static struct init_state s;
	struct gv_err err;
	gv_err_clear(&err);
	s.next_index = 0;
	for (size_t i = 0; i < NSCRATCH; i++)
		s.scratch_fd[i] = -1;

	/* Block every signal (children reset their mask before execve): in
	 * gVisor a same-uid process could otherwise terminate PID 1. SIGKILL
	 * and SIGSTOP cannot be blocked; seccomp keeps kill() away from pid 1. */
	signal(SIGPIPE, SIG_IGN);
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		gv_err_errno(&err, "prctl(PR_SET_DUMPABLE)");
		die(NULL, EXEC_PHASE_COMPILE, &err);
	}
	/* Fail closed: the program must run under another uid than init, or
	 * it could reach init's pipes to the host (/proc/1/fd) and forge its
	 * own result. Without root of the sandbox (the bundle's choice) that
	 * separation is impossible, so nothing runs. */
	s.as_root = geteuid() == 0;
	if (!s.as_root) {
		gv_err_set(&err, GV_ESANDBOX,
			   "gavel-init must start as the sandbox's uid 0 to run programs under another uid; "
			   "refusing to run anything");
		die(NULL, EXEC_PHASE_COMPILE, &err);
	}
	if (init_empty_bounding_set(&err) < 0)
		die(NULL, EXEC_PHASE_COMPILE, &err);
	if (read_job(&s.job, &err) < 0)
		die(NULL, EXEC_PHASE_COMPILE, &err);
	if (init_runner_open(&s.runner, &err) < 0 ||
	    init_seccomp_build(INIT_POLICY_PROGRAM, &s.bpf_program, &err) < 0 ||
	    init_seccomp_build(INIT_POLICY_COMPILE, &s.bpf_compile, &err) < 0)
		die(&s, EXEC_PHASE_COMPILE, &err);
	open_scratch(&s);
	if (compile_phase(&s, &err) < 0 || wipe_scratch(&s, &err) < 0 || lock_box(&s, &err) < 0)
		die(&s, EXEC_PHASE_COMPILE, &err);
	if (command_loop(&s, &err) < 0)
		die(&s, EXEC_PHASE_TEST, &err);
	if (init_kill_all(&s.runner, &err) < 0)
		die(&s, EXEC_PHASE_TEST, &err);
	return 0;
}
