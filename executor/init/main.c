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
#include <dirent.h>
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

/* Per-test files from the host (`file` frames) and the validator's
 * feedback dir, both under /tmp so that the wipe after every test removes
 * them with everything else (PROTOCOL.md). */
#define FILES_DIR "gv-files"
#define FEEDBACK_DIR "gv-feedback"
#define FILES_MAX 8               /* `file` frames before one test */
#define FEEDBACK_FILES_MAX 16     /* feedback files sent back per test */
#define FEEDBACK_FILE_MAX 65536   /* bytes of one feedback file sent back */

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
	unsigned files_pending;   /* `file` frames received for the next test */
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

/* A `feedback` frame: "<name>\n<bytes>". */
static int send_named_frame(const char *kind, const char *name, const char *data, size_t len,
			    struct gv_err *err)
{
	size_t nl = strlen(name);
	char hdr[EXEC_FRAME_HEADER_MAX + 1];
	int h = exec_frame_header(hdr, sizeof(hdr), kind, nl + 1 + len, err);
	if (h < 0)
		return -1;
	struct iovec iov[4] = { { hdr, (size_t)h }, { (void *)name, nl }, { "\n", 1 }, { (void *)data, len } };
	return write_all(1, iov, len ? 4 : 3, err);
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

static int tmp_fd(const struct init_state *s, struct gv_err *err)
{
	if (s->scratch_fd[0] < 0)
		return gv_err_set(err, GV_ESANDBOX, "/tmp is not writable: no room for test files");
	return s->scratch_fd[0];
}

/* Creates the empty feedback dir for the coming run. Security argument: it
 * runs while no other process exists (everything was killed and /tmp wiped
 * after the previous run), and mkdirat + openat(O_NOFOLLOW) act relative
 * to init's fd of /tmp. The dir is root's, mode 0777 (init holds no
 * CAP_CHOWN to hand it to 65534): the program may create files in it,
 * nothing more. */
static int make_feedback_dir(const struct init_state *s, struct gv_err *err)
{
	int t = tmp_fd(s, err);
	if (t < 0)
		return -1;
	if (mkdirat(t, FEEDBACK_DIR, 0700) < 0)
		return gv_err_errno(err, "mkdir /tmp/" FEEDBACK_DIR);
	int fd = openat(t, FEEDBACK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return gv_err_errno(err, "open /tmp/" FEEDBACK_DIR);
	int rc = fchmod(fd, 0777) < 0 ? gv_err_errno(err, "chmod /tmp/" FEEDBACK_DIR) : 0;
	close(fd);
	return rc;
}

/* Reads at most max bytes of the regular file name under dirfd. */
static ssize_t read_feedback_file(int dirfd, const char *name, char *buf, size_t max)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	size_t got = 0;
	while (got < max) {
		ssize_t n = read(fd, buf + got, max - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return (ssize_t)got;
}

/* Sends the regular files of the feedback dir as `feedback` frames: at
 * most FEEDBACK_FILES_MAX, each cut at FEEDBACK_FILE_MAX bytes; names
 * outside [A-Za-z0-9._-]{1,64}, links, fifos and directories are skipped.
 * Security argument: every process of the run is dead, so nothing changes
 * under us; the dir and each entry are opened relative to fds with
 * O_NOFOLLOW and checked to be a directory / regular file by fstat, so a
 * link the program planted (a swapped dir, a symlink to /box/job) is never
 * followed; hard links are impossible (no link() in the program's seccomp
 * policy, and /tmp is another file system than /box). */
static int send_feedback(const struct init_state *s, struct gv_err *err)
{
	static char buf[FEEDBACK_FILE_MAX];
	int t = tmp_fd(s, err);
	if (t < 0)
		return -1;
	int fd = openat(t, FEEDBACK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0; /* removed or replaced by the program: no feedback */
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return gv_err_errno(err, "fdopendir /tmp/" FEEDBACK_DIR);
	}
	unsigned sent = 0;
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && sent < FEEDBACK_FILES_MAX && (de = readdir(d)) != NULL) {
		size_t nl = strlen(de->d_name);
		if (!exec_file_name_ok(de->d_name, nl))
			continue;
		ssize_t n = read_feedback_file(dirfd(d), de->d_name, buf, sizeof(buf));
		if (n < 0)
			continue;
		rc = send_named_frame("feedback", de->d_name, buf, (size_t)n, err);
		sent++;
	}
	closedir(d);
	return rc;
}

/* Opens /tmp/gv-files/<name> for a `file` frame. Security argument: as for
 * the feedback dir, no other process exists between runs; the dir and the
 * file are created by init (root) through fds with O_EXCL|O_NOFOLLOW, the
 * file is made 0444 when complete: the program reads it and cannot change
 * it (another owner, and the sticky /tmp keeps it from renaming the dir). */
static int open_test_file(struct init_state *s, const char *name, struct gv_err *err)
{
	int t = tmp_fd(s, err);
	if (t < 0)
		return -1;
	if (mkdirat(t, FILES_DIR, 0755) < 0 && errno != EEXIST)
		return gv_err_errno(err, "mkdir /tmp/" FILES_DIR);
	int dfd = openat(t, FILES_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return gv_err_errno(err, "open /tmp/" FILES_DIR);
	if (fchmod(dfd, 0755) < 0) {
		close(dfd);
		return gv_err_errno(err, "chmod /tmp/" FILES_DIR);
	}
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0)
		return gv_err_errno(err, "create /tmp/" FILES_DIR "/%s", name);
	return fd;
}

static int write_test_file(int fd, const char *data, size_t len, struct gv_err *err)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return gv_err_errno(err, "write test file");
		data += n, len -= (size_t)n;
	}
	return 0;
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
	if ((s->job.feedback_dir && make_feedback_dir(s, err) < 0) ||
	    init_runner_run(&s->runner, &spec, &o, err) < 0 ||
	    (s->job.feedback_dir && send_feedback(s, err) < 0) || wipe_scratch(s, err) < 0) {
		gv_err_prefix(err, "test %u", s->next_index);
		return -1;
	}
	s->files_pending = 0;
	init_decide(&o, &s->job.test, &rec);
	return send_phase(s, &rec, err);
}

static const struct exec_frame_cap command_caps[] = {
	{ "test", EXEC_FRAME_LEN_MAX },
	{ "file", EXEC_FRAME_LEN_MAX },
	{ "end", 0 },
};
#define NCOMMAND_CAPS (sizeof(command_caps) / sizeof(command_caps[0]))

/* A `file` frame being received: its name line first, then its bytes. */
struct file_rx {
	char name[EXEC_FILE_NAME_MAX + 2];
	size_t name_len;
	int name_done;
	int fd;
};

/* Takes a DATA slice of a `file` frame. */
static int file_rx_data(struct init_state *s, struct file_rx *f, const char *data, size_t len,
			struct gv_err *err)
{
	if (!f->name_done) {
		const char *nl = memchr(data, '\n', len);
		size_t take = nl ? (size_t)(nl - data) : len;
		if (f->name_len + take > EXEC_FILE_NAME_MAX)
			return gv_err_set(err, GV_EPROTO, "`file`: name too long");
		memcpy(f->name + f->name_len, data, take);
		f->name_len += take;
		if (!nl)
			return 0;
		f->name[f->name_len] = '\0';
		if (!exec_file_name_ok(f->name, f->name_len))
			return gv_err_set(err, GV_EPROTO, "`file`: name not allowed");
		f->name_done = 1;
		f->fd = open_test_file(s, f->name, err);
		if (f->fd < 0)
			return -1;
		data += take + 1;
		len -= take + 1;
	}
	return write_test_file(f->fd, data, len, err);
}

static int file_rx_end(struct file_rx *f, struct gv_err *err)
{
	if (!f->name_done)
		return gv_err_set(err, GV_EPROTO, "`file` without a name line");
	int rc = fchmod(f->fd, 0444) < 0 ? gv_err_errno(err, "chmod test file") : 0;
	if (close(f->fd) < 0 && rc == 0)
		rc = gv_err_errno(err, "close test file");
	f->fd = -1;
	return rc;
}

/* The command loop: returns 0 after `end`, -1 on a failure or a protocol
 * error (EOF before `end` included). */
static int command_loop(struct init_state *s, struct gv_err *err)
{
	static char buf[65536];
	struct exec_frame_decoder dec;
	exec_frame_decoder_init(&dec, command_caps, NCOMMAND_CAPS);
	uint64_t in_off = 0;
	int is_test = 0, is_file = 0;
	struct file_rx frx = { .fd = -1 };
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
				is_file = strcmp(ev.kind, "file") == 0;
				if (is_file) {
					if (s->compile_failed)
						return gv_err_set(err, GV_EPROTO, "`file` after a failed compile");
					if (++s->files_pending > FILES_MAX)
						return gv_err_set(err, GV_EPROTO, "more than %d `file` frames", FILES_MAX);
					frx = (struct file_rx){ .fd = -1 };
					continue;
				}
				if (!is_test)
					continue;
				if (s->compile_failed)
					return gv_err_set(err, GV_EPROTO, "`test` after a failed compile");
				s->next_index++;
				in_off = 0;
				if (init_runner_input_reset(&s->runner, err) < 0)
					return -1;
			} else if (ev.type == EXEC_FRAME_EV_DATA && is_file) {
				if (file_rx_data(s, &frx, ev.data, ev.data_len, err) < 0)
					return -1;
			} else if (ev.type == EXEC_FRAME_EV_DATA) {
				if (init_runner_input_append(&s->runner, ev.data, ev.data_len, in_off, err) < 0)
					return -1;
				in_off += ev.data_len;
			} else if (ev.type == EXEC_FRAME_EV_END && is_file) {
				if (file_rx_end(&frx, err) < 0)
					return -1;
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
