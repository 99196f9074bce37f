/* The host side of the gavel-init protocol (executor/PROTOCOL.md), apart
 * from the loops that drive it: the frames a phase may send and their
 * caps, a phase's frames turned into its result (stdout, stderr, feedback
 * files, the result record), init's own diagnostics, and the command that
 * starts a test. Every byte read from the sandbox is bounded by a cap
 * before it is kept. */
#include "executor/sandbox/session_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

#define TEST_INPUT_MAX (64u << 20)
#define DEFAULT_STDERR (64u << 10)

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
int exec_result_add_feedback(struct exec_phase_result *r, const struct exec_frame *f, struct gv_err *err)
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

int exec_write_some(int fd, const char *buf, size_t len, size_t *off)
{
	while (*off < len) {
		ssize_t w = write(fd, buf + *off, len - *off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno == EAGAIN ? 0 : -1;
		*off += (size_t)w;
	}
	return 1;
}

void exec_result_init(struct exec_phase_result *r)
{
	memset(r, 0, sizeof(*r));
}

void exec_result_set(struct exec_phase_result *r, const char *status, const char *limit,
		       const char *msg)
{
	snprintf(r->status, sizeof(r->status), "%s", status);
	snprintf(r->limit, sizeof(r->limit), "%s", limit);
	snprintf(r->message, sizeof(r->message), "%s", msg);
}

void exec_session_read_diag(struct exec_session *s)
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
		if (k > EXEC_DIAG_CAP - s->diag_len)
			k = EXEC_DIAG_CAP - s->diag_len;
		memcpy(s->diag + s->diag_len, buf, k);
		s->diag_len += k;
	}
}

/* The last line of init's diagnostics, escaped, for error messages. */
const char *exec_session_diag_tail(const struct exec_session *s, char *out, size_t outsz)
{
	size_t end = s->diag_len;
	while (end > 0 && s->diag[end - 1] == '\n')
		end--;
	size_t start = end;
	while (start > 0 && s->diag[start - 1] != '\n' && end - start < 200)
		start--;
	return gv_log_escape(out, outsz, s->diag + start, end - start);
}

int exec_result_copy_payload(char **dst, size_t *dst_len, const struct exec_frame *f)
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

void exec_result_fill(struct exec_phase_result *r, const struct exec_record *rec)
{
	snprintf(r->status, sizeof(r->status), "%s", exec_status_name(rec->status));
	snprintf(r->limit, sizeof(r->limit), "%s",
		 rec->limit == EXEC_LIMIT_UNSET ? "none" : exec_limit_name(rec->limit));
	snprintf(r->message, sizeof(r->message), "%s", rec->message);
	snprintf(r->order, sizeof(r->order), "%s", rec->order);
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

static uint64_t out_cap(const struct exec_limits *l)
{
	return l->output_bytes ? l->output_bytes : 65536;
}

/* The frame caps of one phase, in the decoder's order: stdout, stderr,
 * result, then `feedback` (feedback_dir jobs) and `data` (interactive
 * jobs; stdout comes as `data` there and its `stdout` frame is empty). */
void exec_phase_caps(struct exec_session *s, const struct exec_limits *l, bool compile)
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

/* The command that starts one test: `file` frames, then `test` with the
 * input. Owned by the caller (free). NULL with err (and out's status IE)
 * for a bad argument or no memory. */
char *exec_test_command(const struct exec_file *files, size_t nfiles, const void *input, size_t len,
			  size_t *cmd_len, struct exec_phase_result *out, struct gv_err *err)
{
	return exec_test_command_seeded(files, nfiles, NULL, 0, input, len, cmd_len, out, err);
}

/* One named frame ("<name>\n<bytes>") of kind at cmd + *cl. */
static int put_named(char *cmd, size_t total, size_t *cl, const char *kind, const struct exec_file *f,
		     struct gv_err *err)
{
	size_t nl = strlen(f->name);
	int h = exec_frame_header(cmd + *cl, total - *cl, kind, nl + 1 + f->len, err);
	if (h < 0)
		return -1;
	*cl += (size_t)h;
	memcpy(cmd + *cl, f->name, nl);
	cmd[*cl + nl] = '\n';
	*cl += nl + 1;
	if (f->len)
		memcpy(cmd + *cl, f->data, f->len);
	*cl += f->len;
	return 0;
}

char *exec_test_command_seeded(const struct exec_file *files, size_t nfiles, const struct exec_file *seeds,
			       size_t nseeds, const void *input, size_t len, size_t *cmd_len,
			       struct exec_phase_result *out, struct gv_err *err)
{
	if (len > TEST_INPUT_MAX) {
		exec_result_set(out, "IE", "none", "input too large");
		return gv_err_set(err, GV_ELIMIT, "test input of %zu bytes over %u", len, TEST_INPUT_MAX), NULL;
	}
	if (nfiles > EXEC_TEST_FILES_MAX) {
		exec_result_set(out, "IE", "none", "too many test files");
		return gv_err_set(err, GV_ELIMIT, "more than %d test files", EXEC_TEST_FILES_MAX), NULL;
	}
	/* Every length was checked above and below, so the sum cannot
	 * overflow. */
	size_t total = EXEC_FRAME_HEADER_MAX + 1 + len;
	for (size_t i = 0; i < nfiles; i++) {
		if (!files[i].name || !exec_file_name_ok(files[i].name, strlen(files[i].name)) ||
		    files[i].len > TEST_INPUT_MAX) {
			exec_result_set(out, "IE", "none", "bad test file");
			return gv_err_set(err, GV_EINVAL, "test file %zu: bad name or over %u bytes", i,
					  TEST_INPUT_MAX), NULL;
		}
		total += EXEC_FRAME_HEADER_MAX + 1 + strlen(files[i].name) + 1 + files[i].len;
	}
	if (nseeds > EXEC_FEEDBACK_MAX) {
		exec_result_set(out, "IE", "none", "too many feedback files");
		return gv_err_set(err, GV_ELIMIT, "more than %d feedback files", EXEC_FEEDBACK_MAX), NULL;
	}
	for (size_t i = 0; i < nseeds; i++) {
		if (!seeds[i].name || !exec_file_name_ok(seeds[i].name, strlen(seeds[i].name)) ||
		    seeds[i].len > EXEC_FEEDBACK_SEED_MAX) {
			exec_result_set(out, "IE", "none", "bad feedback file");
			return gv_err_set(err, GV_EINVAL, "feedback file %zu: bad name or over %u bytes", i,
					  EXEC_FEEDBACK_SEED_MAX), NULL;
		}
		total += EXEC_FRAME_HEADER_MAX + 1 + strlen(seeds[i].name) + 1 + seeds[i].len;
	}
	char *cmd = malloc(total);
	if (!cmd) {
		exec_result_set(out, "IE", "none", "out of memory");
		return gv_err_set(err, ENOMEM, "test input: out of memory"), NULL;
	}
	size_t cl = 0;
	for (size_t i = 0; i < nfiles + nseeds; i++) {
		bool seed = i >= nfiles;
		if (put_named(cmd, total, &cl, seed ? "feedback" : "file", seed ? &seeds[i - nfiles] : &files[i],
			      err) < 0) {
			free(cmd);
			exec_result_set(out, "IE", "none", "bad test file");
			return NULL;
		}
	}
	int hl = exec_frame_header(cmd + cl, total - cl, "test", len, err);
	if (hl < 0) {
		free(cmd);
		exec_result_set(out, "IE", "none", "bad test input");
		return NULL;
	}
	cl += (size_t)hl;
	if (len)
		memcpy(cmd + cl, input, len);
	cl += len;
	*cmd_len = cl;
	return cmd;
}
