/* gavel-init: PID 1 of every sandbox. Reads /box/job, runs the compile
 * phase, locks the work dir, then runs the program once per `test` frame
 * from the host until `end` (executor/PROTOCOL.md). Thin: the runner,
 * policy, verdict and wipe logic live beside it.
 *
 * Security argument: init runs as uid 0 of gVisor's own user namespace
 * (never of the host) with only the six supervision capabilities of the
 * OCI bundle (executor/sandbox/bundle.c, exec_bundle_init_caps), none
 * inheritable or ambient, and no_new_privs; every compiler and program it
 * starts is dropped to 65534:65534 with an empty bounding set before execve, so
 * a program holds no capability and runs under another uid than init. init
 * also makes itself non-dumpable, so the program cannot read its memory or
 * fds through /proc or ptrace (also denied by seccomp); it blocks (never
 * handles) every signal and the program's filter denies kill() of pid 1;
 * and between runs it kills every other process and empties the writable
 * places, so no state survives from one test to the next. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/err.h"
#include "common/io.h"
#include "executor/init/forkserver.h"
#include "executor/init/job.h"
#include "executor/init/named_io.h"
#include "executor/init/run.h"
#include "executor/init/seccomp_policy.h"
#include "executor/init/verdict.h"
#include "executor/init/wipe.h"
#include "executor/init/workcopy.h"
#include "executor/sandbox/record.h"

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

/* Frame kinds of the command stream. */
enum { K_NONE, K_TEST, K_FILE, K_DATA, K_END, K_FEEDBACK };

/* The command stream from the host, shared by the command loop and an
 * interactive test (which consumes `data` frames while the program runs):
 * one decoder, one read buffer, so that a frame cut by the end of a run is
 * finished by the command loop. */
struct cmd_in {
	char buf[65536];
	size_t len, used;
	struct exec_frame_decoder dec;
	int kind;      /* kind of the frame being decoded */
	size_t flen;   /* its payload length */
	int starved;   /* the decoder said NONE: read before stepping again
			* (an END, even of an empty frame, comes without input) */
};

struct init_state {
	struct init_job job;
	struct init_runner runner;
	struct init_bpf bpf_program;
	struct init_bpf bpf_compile;
	int scratch_fd[NSCRATCH];
	uint32_t next_index;
	int compile_failed;
	unsigned files_pending;   /* `file` frames received for the next test */
	unsigned seeds_pending;   /* `feedback` frames received for the next test */
	struct init_named_io io;  /* file I/O tests: the named input and output */
	struct cmd_in cmd;        /* fd 0: the host's commands (and `data` during interactive tests) */
	int as_root;   /* init is uid 0 (recommended): children drop to 65534 */
	struct init_forkserver fork; /* the job's fork server (forkserver.h); pid 0: tests exec */
};

/* The host's pipes: commands in (fd 0), frames out, diagnostics. The
 * last two start at 1 and 2 and move away (move_host_fds) before the
 * runner puts the program's stdout and stderr there. */
static const int host_in = 0;
static int host_out = 1, host_err = 2;

static int move_host_fds(struct gv_err *err)
{
	int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	int diag = out < 0 ? -1 : fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (diag < 0)
		return gv_err_errno(err, "move the host's pipes");
	host_out = out, host_err = diag;
	return 0;
}

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
			if (errno == EAGAIN) {
				/* fd 1 is non-blocking in interactive jobs. */
				struct pollfd pf = { .fd = fd, .events = POLLOUT };
				if (poll(&pf, 1, -1) < 0 && errno != EINTR)
					return gv_err_errno(err, "poll host pipe");
				continue;
			}
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
	return write_all(host_out, iov, len ? 2 : 1, err);
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
	return write_all(host_out, iov, len ? 4 : 3, err);
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
	return write_all(host_out, iov, 6, err);
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
	dprintf(host_err, "gavel-init: %s\n", e->msg);
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
		.compile_phase = 1,
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

/* Creates the feedback dir for the coming run, empty but for the files
 * the host seeded into it (`feedback` frames: the state a multi-pass
 * validator kept). Security argument: it runs while no other process
 * exists (everything was killed and /tmp wiped after the previous run, so
 * a dir already there is the one init made for this test's seeds), and
 * mkdirat + openat(O_NOFOLLOW) act relative to init's fd of /tmp. The dir
 * is root's, mode 0777 (init holds no CAP_CHOWN to hand it to 65534): the
 * program may create files in it, nothing more. */
static int make_feedback_dir(const struct init_state *s, struct gv_err *err)
{
	int t = tmp_fd(s, err);
	if (t < 0)
		return -1;
	if (mkdirat(t, FEEDBACK_DIR, 0700) < 0 && !(errno == EEXIST && s->seeds_pending))
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
static int open_test_file(struct init_state *s, const char *name, bool seed, struct gv_err *err)
{
	int t = tmp_fd(s, err);
	if (t < 0)
		return -1;
	if (seed) {
		/* A `feedback` frame: into the feedback dir (made at the
		 * first seed of the test, kept for its run). */
		if (s->seeds_pending == 1 && make_feedback_dir(s, err) < 0)
			return -1;
		int dfd = openat(t, FEEDBACK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			return gv_err_errno(err, "open /tmp/" FEEDBACK_DIR);
		int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		close(dfd);
		if (fd < 0)
			return gv_err_errno(err, "create /tmp/" FEEDBACK_DIR "/%s", name);
		return fd;
	}
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
	/* gv_write_all: a write that returns 0 is an error, not a retry. */
	if (gv_write_all(fd, data, len) != 0)
		return gv_err_errno(err, "write test file");
	return 0;
}

/* ---- interactive tests (job record `interactive:1`) ---------------------
 *
 * The program's stdin is a pipe fed from the host's `data` frames, its
 * stdout goes back as `data` frames while it runs (PROTOCOL.md). Every
 * buffer is bounded: one `data` payload towards the program (DATA_MAX),
 * one frame towards the host; while either is full the other side is not
 * read, so a program that does not read its stdin stops the host, and one
 * the host does not read from stops at its full stdout pipe. */
#define DATA_MAX 65536

struct itest {
	struct init_state *s;
	int pipe_w;                /* the program's stdin; -1 once closed */
	char topipe[DATA_MAX];     /* bytes of a `data` frame not yet in the pipe */
	size_t tp_len, tp_off;
	char tohost[EXEC_FRAME_HEADER_MAX + 1 + DATA_MAX];
	size_t th_len, th_off;
	int in_idx;                /* index of fd 0 in the last prepare, or -1 */
};

static void itest_close_stdin(struct itest *t)
{
	if (t->pipe_w >= 0)
		close(t->pipe_w);
	t->pipe_w = -1;
	t->tp_len = t->tp_off = 0;
}

static size_t itest_room(void *ctx)
{
	const struct itest *t = ctx;
	return t->th_len == t->th_off ? DATA_MAX : 0;
}

/* Writes what fd 1 takes now of the pending frame to the host. */
static int itest_write_host(struct itest *t, struct gv_err *err)
{
	while (t->th_off < t->th_len) {
		ssize_t w = write(host_out, t->tohost + t->th_off, t->th_len - t->th_off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return 0;
		if (w < 0)
			return gv_err_errno(err, "write to host");
		t->th_off += (size_t)w;
	}
	t->th_len = t->th_off = 0;
	return 0;
}

static int itest_out(void *ctx, const char *data, size_t n, struct gv_err *err)
{
	struct itest *t = ctx;
	if (n == 0)
		return 0;
	if (t->th_len != t->th_off || n > DATA_MAX)
		return gv_err_set(err, GV_EINTERNAL, "interactive: stdout taken without room");
	int h = exec_frame_header(t->tohost, sizeof(t->tohost), "data", n, err);
	if (h < 0)
		return -1;
	memcpy(t->tohost + h, data, n);
	t->th_len = (size_t)h + n;
	t->th_off = 0;
	return itest_write_host(t, err);
}

static int itest_flush(void *ctx, struct gv_err *err)
{
	struct itest *t = ctx;
	struct iovec iov = { t->tohost + t->th_off, t->th_len - t->th_off };
	int rc = t->th_len > t->th_off ? write_all(host_out, &iov, 1, err) : 0;
	t->th_len = t->th_off = 0;
	return rc;
}

static int itest_prepare(void *ctx, struct pollfd *pf)
{
	struct itest *t = ctx;
	int n = 0;
	t->in_idx = -1;
	if (t->th_off < t->th_len)
		pf[n++] = (struct pollfd){ .fd = host_out, .events = POLLOUT };
	if (t->tp_off < t->tp_len) {
		pf[n++] = (struct pollfd){ .fd = t->pipe_w, .events = POLLOUT };
	} else if (t->s->cmd.starved) {
		t->in_idx = n;
		pf[n++] = (struct pollfd){ .fd = host_in, .events = POLLIN };
	}
	return n;
}

/* Writes what the pipe takes now; a program that closed its stdin (EPIPE)
 * gets nothing more. */
static int itest_write_pipe(struct itest *t, struct gv_err *err)
{
	while (t->pipe_w >= 0 && t->tp_off < t->tp_len) {
		ssize_t w = write(t->pipe_w, t->topipe + t->tp_off, t->tp_len - t->tp_off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return 0;
		if (w < 0 && errno == EPIPE) {
			itest_close_stdin(t);
			return 0;
		}
		if (w < 0)
			return gv_err_errno(err, "write program stdin");
		t->tp_off += (size_t)w;
	}
	t->tp_len = t->tp_off = 0;
	return 0;
}

static int cmd_step(struct cmd_in *c, struct exec_frame_event *ev, struct gv_err *err);

/* Moves bytes until something would block: host frames to fd 1, `data`
 * to the pipe, then the next command bytes (fd 0 is read once, only when
 * poll said it is readable). */
static int itest_pump(void *ctx, const struct pollfd *pf, int n, struct gv_err *err)
{
	struct itest *t = ctx;
	struct cmd_in *c = &t->s->cmd;
	int in_ready = t->in_idx >= 0 && t->in_idx < n && (pf[t->in_idx].revents & (POLLIN | POLLHUP | POLLERR));
	t->in_idx = -1;
	if (itest_write_host(t, err) < 0)
		return -1;
	for (;;) {
		if (itest_write_pipe(t, err) < 0)
			return -1;
		if (t->tp_off < t->tp_len)
			return 0;
		if (c->starved) {
			if (!in_ready)
				return 0;
			in_ready = 0;
			ssize_t r = read(host_in, c->buf, sizeof(c->buf));
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				return 0;
			if (r < 0)
				return gv_err_errno(err, "read commands");
			if (r == 0)
				return gv_err_set(err, GV_EPROTO, "commands ended during an interactive test");
			c->len = (size_t)r;
			c->used = 0;
			c->starved = 0;
		}
		struct exec_frame_event ev;
		if (cmd_step(c, &ev, err) < 0)
			return -1;
		if (ev.type == EXEC_FRAME_EV_BEGIN && c->kind != K_DATA)
			return gv_err_set(err, GV_EPROTO, "`%s` during an interactive test", ev.kind);
		if (ev.type == EXEC_FRAME_EV_DATA && t->pipe_w >= 0) {
			/* A slice of c->buf: at most DATA_MAX bytes. */
			memcpy(t->topipe, ev.data, ev.data_len);
			t->tp_len = ev.data_len;
			t->tp_off = 0;
		} else if (ev.type == EXEC_FRAME_EV_END && c->flen == 0) {
			itest_close_stdin(t); /* an empty `data`: end of the program's input */
		}
	}
}

/* File I/O tests: what the program left in its output file is its output
 * (its stdout is dropped), under the same cap: a larger file is OLE. Every
 * process of the run is dead here (init_runner_run), so the file cannot
 * change while it is read. */
static int collect_output_file(struct init_state *s, struct init_outcome *o, struct gv_err *err)
{
	uint64_t size = 0;
	if (init_named_output_collect(&s->io, s->job.output_file, s->job.test.output_bytes, &s->runner.out, &size,
				      err) < 0)
		return -1;
	o->stdout_bytes = size;
	o->order[0] = '\0';
	if (size > s->job.test.output_bytes)
		o->killed_output = 1;
	return 0;
}

/* A test's run spec before its per-test parts (stream, cwd, fork): the
 * fork server's template is started with it, so that every forked test
 * gets what an exec'd one would. */
static struct init_run_spec test_run_spec(const struct init_state *s)
{
	return (struct init_run_spec){
		.argv = s->job.run_argv,
		.lim = &s->job.test,
		.bpf = &s->bpf_program,
		.combined_cap = 0,
		.drop_to_sandbox_uid = s->as_root,
		/* An interactive program waits on the interactor by design:
		 * its wall limit alone applies. */
		.idle_is_tle = !s->job.interactive,
		.no_rlimit_as = 1,
		.single_process = s->job.test.procs == 1, /* as bpf_program was built */
		/* An interactor reads stdout: stderr stays apart there. */
		.stderr_to_stdout = s->job.stderr_to_stdout && !s->job.interactive,
	};
}

/* Starts the job's fork server, when its language has one and its tests
 * are plain ones (an interactive test's stdin is a pipe of its own; a
 * writable_box job runs once), and waits until its template is ready: it
 * has started before any process of the submission runs beside it (the
 * compiler), so nothing such a process writes (/tmp, HOME) reaches its
 * start. A template that does not start leaves every test to execve, as
 * without one; the host's diagnostics say why. */
static void start_fork_server(struct init_state *s)
{
	s->fork = (struct init_forkserver){ .ctl_w = -1, .rep_r = -1 };
	if (s->job.fork_server == INIT_FORK_NONE || s->job.interactive || s->job.writable_box)
		return;
	struct init_run_spec spec = test_run_spec(s);
	struct gv_err e;
	if (init_forkserver_start(&s->fork, (enum init_fork_kind)s->job.fork_server, &s->runner, &spec, &e) < 0)
		dprintf(host_err, "gavel-init: %s; tests run through execve\n", e.msg);
}

static int test_phase(struct init_state *s, struct gv_err *err)
{
	struct exec_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.phase = EXEC_PHASE_TEST;
	rec.index = s->next_index;
	struct init_outcome o;
	struct init_run_spec spec = test_run_spec(s);
	/* A template that ended between tests (reaped by the last run's
	 * kills) leaves the rest of the job to execve. */
	if (init_forkserver_alive(&s->fork) && s->runner.spare_pid != s->fork.pid)
		init_forkserver_stop(&s->fork, &s->runner);
	if (init_forkserver_alive(&s->fork))
		spec.fork = &s->fork;
	/* Interactive: a fresh stdin pipe per test (its end is the EOF the
	 * host asks for). The read end goes to the program; the runner closes
	 * ours after the spawn. */
	static struct itest it;
	struct init_stream stream;
	if (s->job.interactive) {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0) {
			gv_err_errno(err, "test %u: stdin pipe", s->next_index);
			return -1;
		}
		if (fcntl(p[1], F_SETFL, O_NONBLOCK) < 0) {
			close(p[0]);
			close(p[1]);
			gv_err_errno(err, "test %u: stdin pipe", s->next_index);
			return -1;
		}
		memset(&it, 0, sizeof(it));
		it.s = s;
		it.pipe_w = p[1];
		it.in_idx = -1;
		stream = (struct init_stream){
			.ctx = &it, .stdin_fd = p[0], .room = itest_room, .out = itest_out,
			.prepare = itest_prepare, .pump = itest_pump, .flush = itest_flush,
		};
		spec.stream = &stream;
	}
	/* writable_box (Jobe): the run works in a writable copy of the
	 * locked box, in /tmp (workcopy.h has the security argument); the
	 * wipe after the run removes it. */
	if (s->job.writable_box) {
		int t = tmp_fd(s, err);
		if (t < 0)
			return -1;
		int box = open(BOX, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (box < 0)
			return gv_err_errno(err, "open %s", BOX);
		int crc = init_workcopy_make(box, t, err);
		close(box);
		if (crc < 0)
			return -1;
		spec.cwd = INIT_WORKCOPY_DIR;
	}
	int rc = (s->job.feedback_dir && make_feedback_dir(s, err) < 0) ||
		 (s->job.output_file && init_named_output_prepare(&s->io, s->job.output_file, err) < 0) ||
		 init_runner_run(&s->runner, &spec, &o, err) < 0 ? -1 : 0;
	if (s->job.interactive)
		itest_close_stdin(&it);
	if (rc == 0 && s->job.output_file && collect_output_file(s, &o, err) < 0)
		rc = -1;
	if (rc < 0 || (s->job.feedback_dir && send_feedback(s, err) < 0) || wipe_scratch(s, err) < 0) {
		gv_err_prefix(err, "test %u", s->next_index);
		return -1;
	}
	s->files_pending = 0;
	s->seeds_pending = 0;
	init_decide(&o, &s->job.test, &rec);
	return send_phase(s, &rec, err);
}

/* `data` only in interactive jobs, `feedback` (files seeded into the
 * next test's feedback dir) only in others; interactive `test` frames
 * carry no input. */
static const struct exec_frame_cap command_caps[] = {
	{ "test", EXEC_FRAME_LEN_MAX },
	{ "file", EXEC_FRAME_LEN_MAX },
	{ "end", 0 },
	{ "feedback", EXEC_FEEDBACK_SEED_MAX + EXEC_FILE_NAME_MAX + 1 },
};
static const struct exec_frame_cap icommand_caps[] = {
	{ "test", 0 },
	{ "file", EXEC_FRAME_LEN_MAX },
	{ "end", 0 },
	{ "data", DATA_MAX },
};

/* A `file` or `feedback` frame being received: its name line first, then
 * its bytes. */
struct file_rx {
	char name[EXEC_FILE_NAME_MAX + 2];
	size_t name_len;
	int name_done;
	int fd;
	bool seed; /* `feedback`: a file of the next test's feedback dir */
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
		f->fd = open_test_file(s, f->name, f->seed, err);
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
	/* A test file is read-only; a seeded feedback file is the validator's
	 * own state, which it may rewrite. */
	int rc = fchmod(f->fd, f->seed ? 0666 : 0444) < 0 ? gv_err_errno(err, "chmod test file") : 0;
	if (close(f->fd) < 0 && rc == 0)
		rc = gv_err_errno(err, "close test file");
	f->fd = -1;
	return rc;
}

/* One step of the command decoder over the buffered bytes; tracks the
 * kind of the current frame. */
static int cmd_step(struct cmd_in *c, struct exec_frame_event *ev, struct gv_err *err)
{
	if (exec_frame_decoder_step(&c->dec, c->buf + c->used, c->len - c->used, &c->used, ev, err) < 0)
		return -1;
	c->starved = ev->type == EXEC_FRAME_EV_NONE;
	if (ev->type == EXEC_FRAME_EV_BEGIN) {
		c->flen = ev->len;
		c->kind = !strcmp(ev->kind, "test")   ? K_TEST
			  : !strcmp(ev->kind, "file") ? K_FILE
			  : !strcmp(ev->kind, "data") ? K_DATA
			  : !strcmp(ev->kind, "feedback") ? K_FEEDBACK
						      : K_END;
	}
	return 0;
}

/* The command loop: returns 0 after `end`, -1 on a failure or a protocol
 * error (EOF before `end` included). */
static int command_loop(struct init_state *s, struct gv_err *err)
{
	struct cmd_in *c = &s->cmd;
	uint64_t in_off = 0;
	struct file_rx frx = { .fd = -1 };
	for (;;) {
		if (c->starved) {
			ssize_t n = read(host_in, c->buf, sizeof(c->buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return gv_err_errno(err, "read commands");
			if (n == 0)
				return gv_err_set(err, GV_EPROTO, "commands ended without `end`%s",
						  exec_frame_decoder_idle(&c->dec) ? "" : " (inside a frame)");
			c->len = (size_t)n;
			c->used = 0;
			c->starved = 0;
		}
		/* NONE only when the input is used up; END comes even then. */
		struct exec_frame_event ev;
		if (cmd_step(c, &ev, err) < 0)
			return -1;
		if (ev.type == EXEC_FRAME_EV_NONE)
			continue;
		if (ev.type == EXEC_FRAME_EV_BEGIN) {
			if (c->kind == K_FILE) {
				if (s->compile_failed)
					return gv_err_set(err, GV_EPROTO, "`file` after a failed compile");
				if (++s->files_pending > FILES_MAX)
					return gv_err_set(err, GV_EPROTO, "more than %d `file` frames", FILES_MAX);
				frx = (struct file_rx){ .fd = -1 };
				continue;
			}
			if (c->kind == K_FEEDBACK) {
				if (s->compile_failed || !s->job.feedback_dir)
					return gv_err_set(err, GV_EPROTO, "`feedback` %s",
							  s->compile_failed ? "after a failed compile"
									    : "in a job without feedback_dir");
				if (++s->seeds_pending > FEEDBACK_FILES_MAX)
					return gv_err_set(err, GV_EPROTO, "more than %d `feedback` frames",
							  FEEDBACK_FILES_MAX);
				frx = (struct file_rx){ .fd = -1, .seed = true };
				continue;
			}
			if (c->kind != K_TEST)
				continue;
			if (s->compile_failed)
				return gv_err_set(err, GV_EPROTO, "`test` after a failed compile");
			/* writable_box serves one plain run (its copy of the
			 * box is made for it). */
			if (s->job.writable_box && s->next_index > 0)
				return gv_err_set(err, GV_EPROTO, "a second `test` in a writable_box job");
			s->next_index++;
			in_off = 0;
			if (init_runner_input_reset(&s->runner, err) < 0)
				return -1;
			if (s->job.input_file && init_named_input_begin(&s->io, s->job.input_file, err) < 0)
				return -1;
		} else if (ev.type == EXEC_FRAME_EV_DATA && (c->kind == K_FILE || c->kind == K_FEEDBACK)) {
			if (file_rx_data(s, &frx, ev.data, ev.data_len, err) < 0)
				return -1;
		} else if (ev.type == EXEC_FRAME_EV_DATA && c->kind == K_TEST) {
			if (init_runner_input_append(&s->runner, ev.data, ev.data_len, in_off, err) < 0)
				return -1;
			if (s->job.input_file && init_named_input_write(&s->io, ev.data, ev.data_len, err) < 0)
				return -1;
			in_off += ev.data_len;
		} else if (ev.type == EXEC_FRAME_EV_END && (c->kind == K_FILE || c->kind == K_FEEDBACK)) {
			if (file_rx_end(&frx, err) < 0)
				return -1;
		} else if (ev.type == EXEC_FRAME_EV_END && c->kind == K_TEST) {
			if (s->job.input_file && init_named_input_end(&s->io, err) < 0)
				return -1;
			if (test_phase(s, err) < 0)
				return -1;
		} else if (ev.type == EXEC_FRAME_EV_END && c->kind == K_END) {
			return 0;
		}
		/* `data` between interactive tests: the rest of what the host
		 * relayed to a program that has ended; dropped. */
	}
}

int main(void)
{
	static struct init_state s;
	struct gv_err err;
	gv_err_clear(&err);
	s.next_index = 0;
	s.io = (struct init_named_io){ .box_fd = -1, .input_fd = -1 };
	for (size_t i = 0; i < NSCRATCH; i++)
		s.scratch_fd[i] = -1;

	/* Block every signal (children reset their mask before execve): in
	 * gVisor a same-uid process could otherwise terminate PID 1. SIGKILL
	 * and SIGSTOP cannot be blocked; seccomp keeps kill() away from pid 1.
	 * SIGPIPE is blocked like the rest rather than ignored: a write to a
	 * closed pipe still fails with EPIPE, and the children, whose
	 * dispositions all stay the default, need no sigaction before execve. */
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		gv_err_errno(&err, "prctl(PR_SET_DUMPABLE)");
		die(NULL, EXEC_PHASE_COMPILE, &err);
	}
	/* Once here rather than in every child: both are inherited and can
	 * never be undone by an unprivileged child (hard limit 0; no way to
	 * clear no_new_privs), and neither matters to init, which never execs
	 * and is not dumpable. */
	struct rlimit no_core = { 0, 0 };
	if (setrlimit(RLIMIT_CORE, &no_core) < 0) {
		gv_err_errno(&err, "setrlimit(RLIMIT_CORE)");
		die(NULL, EXEC_PHASE_COMPILE, &err);
	}
	if (init_no_new_privs(&err) < 0)
		die(NULL, EXEC_PHASE_COMPILE, &err);
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
	if (init_drop_groups(&err) < 0)
		die(NULL, EXEC_PHASE_COMPILE, &err);
	if (move_host_fds(&err) < 0 || read_job(&s.job, &err) < 0)
		die(NULL, EXEC_PHASE_COMPILE, &err);
	/* procs:1 means no second process at all: the program policy refuses
	 * fork (RLIMIT_NPROC does not, on gVisor; seccomp_policy.c); a
	 * writable_box run (Jobe) runs toolchains, outside /box. */
	struct init_seccomp_opts popt = { .inet = s.job.network, .single_process = s.job.test.procs == 1,
					  .toolchain = s.job.writable_box };
	if (init_runner_open(&s.runner, &err) < 0 ||
	    init_seccomp_build_opts(INIT_POLICY_PROGRAM, &popt, &s.bpf_program, &err) < 0 ||
	    init_seccomp_build_net(INIT_POLICY_COMPILE, s.job.network, &s.bpf_compile, &err) < 0)
		die(&s, EXEC_PHASE_COMPILE, &err);
	/* The fork server's template starts before init empties its bounding
	 * set (it needs SETUID/SETGID to drop each test's process; it empties
	 * its own set itself), and before the compile: nothing of the
	 * submission has run yet. Every child of init from here on inherits
	 * the empty set. */
	start_fork_server(&s);
	if (init_empty_bounding_set(&err) < 0)
		die(&s, EXEC_PHASE_COMPILE, &err);
	open_scratch(&s);
	s.cmd.starved = 1;
	if (s.job.interactive)
		exec_frame_decoder_init(&s.cmd.dec, icommand_caps, sizeof(icommand_caps) / sizeof(icommand_caps[0]));
	else
		exec_frame_decoder_init(&s.cmd.dec, command_caps, sizeof(command_caps) / sizeof(command_caps[0]));
	/* Interactive jobs stream stdout to the host while the program runs:
	 * init must never block on fd 1 there (its limits would stop), so fd 1
	 * is non-blocking and only the end-of-phase frames wait for room. */
	if (s.job.interactive && fcntl(host_out, F_SETFL, fcntl(host_out, F_GETFL) | O_NONBLOCK) < 0) {
		gv_err_errno(&err, "fcntl(host pipe, O_NONBLOCK)");
		die(&s, EXEC_PHASE_COMPILE, &err);
	}
	if (compile_phase(&s, &err) < 0 || wipe_scratch(&s, &err) < 0 || lock_box(&s, &err) < 0)
		die(&s, EXEC_PHASE_COMPILE, &err);
	if (s.compile_failed)
		init_forkserver_stop(&s.fork, &s.runner);
	if (command_loop(&s, &err) < 0)
		die(&s, EXEC_PHASE_TEST, &err);
	init_forkserver_stop(&s.fork, &s.runner);
	if (init_kill_all(&s.runner, &err) < 0)
		die(&s, EXEC_PHASE_TEST, &err);
	return 0;
}
