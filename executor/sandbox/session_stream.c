/* A long-lived interactive program driven by the caller's loop
 * (executor/sandbox/session_stream.h): the one-sided sibling of the
 * interactive relay (session_relay.c), with the same frames and
 * backstops. */
#include "executor/sandbox/session_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "executor/sandbox/cputime.h"
#include "executor/sandbox/engine.h"
#include "executor/sandbox/session_internal.h"

#define STREAM_FWD_MAX (EXEC_FRAME_HEADER_MAX + 1 + EXEC_DATA_FRAME_MAX)
#define STREAM_READ_MAX 65536

struct exec_stream {
	struct exec_session *s;
	char *cmd; /* the opening `test` command; owned */
	size_t cmd_len, cmd_sent;
	char *q;   /* stdin bytes not framed yet: q[q_off..q_len) */
	size_t q_len, q_off, q_cap;
	char fwd[STREAM_FWD_MAX]; /* one `data` frame being written */
	size_t fwd_len, fwd_sent;
	char rbuf[STREAM_READ_MAX];
	size_t rlen, roff;
	int64_t deadline;
	uint64_t kill_ns;
	int wait_ms;
	/* What came before the result (stdout, stderr frames, the record). */
	struct exec_phase_result partial;
};

static int stream_begin(struct exec_session *s, bool resumed, struct exec_stream **out, struct gv_err *err)
{
	*out = NULL;
	if (!s || s->dead)
		return gv_err_set(err, EXEC_EDEAD, "sandbox is gone");
	if (!s->interactive)
		return gv_err_set(err, GV_EINVAL, "a stream needs an interactive session");
	struct exec_stream *st = calloc(1, sizeof(*st));
	if (!st)
		return gv_err_set(err, ENOMEM, "stream: out of memory");
	st->s = s;
	exec_result_init(&st->partial);
	st->cmd = exec_test_command(NULL, 0, NULL, 0, &st->cmd_len, &st->partial, err);
	if (!st->cmd) {
		exec_stream_free(st);
		return -1;
	}
	/* Restored from an image: init had the command before it was saved. */
	if (resumed)
		st->cmd_sent = st->cmd_len;
	exec_phase_caps(s, &s->run_limits, false);
	int64_t t0 = exec_now_ms();
	st->deadline = t0 + (int64_t)s->run_limits.wall_ms + EXEC_BACKSTOP_GRACE_MS;
	/* The engine's whole-sandbox deadline is for jobs of tests; a
	 * stream's own wall limit is its bound (checked by exec_job_check). */
	if (s->deadline < st->deadline)
		s->deadline = st->deadline;
	if (exec_phase_cpu_start(s, &st->partial, err) != 0) {
		exec_stream_free(st);
		return -1;
	}
	st->kill_ns = s->e->cfg.guest_cpu_time ? 0 : exec_cpu_host_kill_ns(s->run_limits.cpu_ms);
	st->wait_ms = 0;
	s->tests_run++;
	*out = st;
	return 0;
}

int exec_stream_start(struct exec_session *s, struct exec_stream **out, struct gv_err *err)
{
	return stream_begin(s, false, out, err);
}

int exec_stream_resume(struct exec_session *s, struct exec_stream **out, struct gv_err *err)
{
	return stream_begin(s, true, out, err);
}

size_t exec_stream_queued(const struct exec_stream *st)
{
	return st->q_len - st->q_off + (st->fwd_len - st->fwd_sent);
}

int exec_stream_write(struct exec_stream *st, const void *data, size_t len, struct gv_err *err)
{
	if (len == 0)
		return 0; /* an empty `data` frame would close the program's stdin */
	if (len > EXEC_STREAM_QUEUE_MAX || exec_stream_queued(st) > EXEC_STREAM_QUEUE_MAX - len)
		return gv_err_set(err, GV_ELIMIT, "stdin queue full");
	if (st->q_off > 0 && st->q_off == st->q_len)
		st->q_off = st->q_len = 0;
	if (st->q_len + len > st->q_cap) {
		if (st->q_off > 0) {
			memmove(st->q, st->q + st->q_off, st->q_len - st->q_off);
			st->q_len -= st->q_off;
			st->q_off = 0;
		}
		size_t cap = st->q_cap ? st->q_cap : 65536;
		while (cap < st->q_len + len)
			cap *= 2;
		if (cap != st->q_cap) {
			char *q = realloc(st->q, cap);
			if (!q)
				return gv_err_set(err, ENOMEM, "stdin queue: out of memory");
			st->q = q;
			st->q_cap = cap;
		}
	}
	memcpy(st->q + st->q_len, data, len);
	st->q_len += len;
	return 0;
}

size_t exec_stream_pollfds(const struct exec_stream *st, bool reading, struct pollfd *p, int *timeout_ms)
{
	const struct exec_session *s = st->s;
	size_t n = 0;
	if (s->dead)
		return 0;
	p[n++] = (struct pollfd){s->pidfd, POLLIN, 0};
	if (reading && st->roff == st->rlen)
		p[n++] = (struct pollfd){s->out_fd, POLLIN, 0};
	if (st->cmd_sent < st->cmd_len || exec_stream_queued(st) > 0)
		p[n++] = (struct pollfd){s->in_fd, POLLOUT, 0};
	if (!s->err_eof)
		p[n++] = (struct pollfd){s->err_fd, POLLIN, 0};
	int64_t left = st->deadline - exec_now_ms();
	int cap = s->e->n_pending ? 10 : 1000;
	if (st->kill_ns && st->wait_ms < cap)
		cap = st->wait_ms;
	if (left < cap)
		cap = left < 0 ? 0 : (int)left;
	if (cap < *timeout_ms)
		*timeout_ms = cap;
	return n;
}

/* Writes what the command pipe takes: the opening command, then the
 * queue one `data` frame at a time. false when init is gone (EPIPE). */
static bool stream_write(struct exec_stream *st)
{
	for (;;) {
		if (st->fwd_sent == st->fwd_len && st->cmd_sent == st->cmd_len) {
			size_t n = st->q_len - st->q_off;
			if (n == 0)
				return true;
			if (n > EXEC_DATA_FRAME_MAX)
				n = EXEC_DATA_FRAME_MAX;
			struct gv_err ignored;
			int h = exec_frame_header(st->fwd, sizeof(st->fwd), "data", n, &ignored);
			if (h < 0)
				return false; /* n <= EXEC_DATA_FRAME_MAX: cannot happen */
			memcpy(st->fwd + h, st->q + st->q_off, n);
			st->q_off += n;
			st->fwd_len = (size_t)h + n;
			st->fwd_sent = 0;
		}
		int w = st->cmd_sent < st->cmd_len ? exec_write_some(st->s->in_fd, st->cmd, st->cmd_len, &st->cmd_sent)
						   : exec_write_some(st->s->in_fd, st->fwd, st->fwd_len, &st->fwd_sent);
		if (w <= 0)
			return w == 0;
	}
}

/* Decodes the buffered output: `data` to on_out, the phase's closing
 * frames into partial. EXEC_PH_RESULT at the result, EXEC_PH_PROTO on a
 * protocol error, EXEC_PH_TIMEOUT ("nothing final") otherwise. */
static enum exec_phase_end stream_decode(struct exec_stream *st, exec_stream_out_cb on_out, void *arg,
					 struct gv_err *err)
{
	while (st->roff < st->rlen) {
		struct exec_frame f;
		size_t used = 0;
		int fr = exec_frame_decoder_feed(&st->s->dec, st->rbuf + st->roff, st->rlen - st->roff, &used, &f, err);
		st->roff += used;
		if (fr < 0)
			return EXEC_PH_PROTO;
		if (fr == 0)
			continue;
		if (strcmp(f.kind, "data") == 0) {
			if (f.len)
				on_out(arg, f.payload, f.len);
		} else if (strcmp(f.kind, "stdout") == 0 || strcmp(f.kind, "stderr") == 0) {
			bool o = f.kind[3] == 'o';
			if (exec_result_copy_payload(o ? &st->partial.out : &st->partial.err_out,
						     o ? &st->partial.out_len : &st->partial.err_len, &f) != 0)
				return gv_err_set(err, ENOMEM, "%s frame", f.kind), EXEC_PH_PROTO;
		} else {
			struct exec_record rec;
			if (exec_record_parse(f.payload, f.len, &rec, err) != 0) {
				gv_err_prefix(err, "result record");
				return EXEC_PH_PROTO;
			}
			exec_result_fill(&st->partial, &rec);
			if (st->roff != st->rlen) {
				gv_err_set(err, GV_EPROTO, "bytes after the result");
				return EXEC_PH_PROTO;
			}
			return EXEC_PH_RESULT;
		}
	}
	return EXEC_PH_TIMEOUT;
}

/* One read of the result pipe when the buffer is used up: EXEC_PH_DIED
 * at EOF, EXEC_PH_TIMEOUT otherwise. */
static enum exec_phase_end stream_read(struct exec_stream *st)
{
	for (;;) {
		ssize_t k = read(st->s->out_fd, st->rbuf, sizeof(st->rbuf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0) {
			st->s->out_eof = true;
			return EXEC_PH_DIED;
		}
		if (k > 0) {
			st->rlen = (size_t)k;
			st->roff = 0;
		}
		return EXEC_PH_TIMEOUT;
	}
}

/* The host's backstops, as relay_backstop (session_relay.c). */
static enum exec_phase_end stream_backstop(struct exec_stream *st, struct gv_err *err)
{
	st->wait_ms = 1000;
	if (exec_now_ms() >= st->deadline)
		return EXEC_PH_TIMEOUT;
	enum exec_phase_end end = exec_phase_cpu_check(st->s, st->kill_ns, &st->wait_ms, err);
	if (end != EXEC_PH_RESULT)
		return end;
	struct pollfd pf[2] = {{st->s->pidfd, POLLIN, 0}, {st->s->out_fd, POLLIN, 0}};
	if (poll(pf, 2, 0) > 0 && (pf[0].revents & POLLIN) && !(pf[1].revents & POLLIN) && st->roff == st->rlen)
		return EXEC_PH_DIED;
	return EXEC_PH_TIMEOUT;
}

int exec_stream_step(struct exec_stream *st, bool reading, exec_stream_out_cb on_out, void *arg,
		     struct exec_phase_result *r, struct gv_err *err)
{
	struct exec_session *s = st->s;
	if (s->dead) {
		exec_result_init(r);
		exec_result_set(r, "IE", "none", "sandbox is gone");
		return gv_err_set(err, EXEC_EDEAD, "sandbox %s is dead", s->id);
	}
	exec_engine_poll(s->e);
	exec_session_read_diag(s);
	enum exec_phase_end end = EXEC_PH_TIMEOUT;
	if (!stream_write(st))
		end = EXEC_PH_DIED;
	for (int k = 0; reading && end == EXEC_PH_TIMEOUT && k < 2; k++) {
		end = stream_decode(st, on_out, arg, err);
		if (end == EXEC_PH_TIMEOUT && k == 0 && st->roff == st->rlen)
			end = stream_read(st);
	}
	if (end == EXEC_PH_TIMEOUT)
		end = stream_backstop(st, err);
	if (end == EXEC_PH_TIMEOUT && exec_now_ms() < st->deadline)
		return 0;
	*r = st->partial;
	exec_result_init(&st->partial);
	if (end == EXEC_PH_PROTO) {
		exec_session_mark_dead(s);
		exec_result_set(r, "IE", "none", "protocol error");
		return -1;
	}
	if (exec_phase_finish(s, end, &s->run_limits, r, err) != 0)
		return -1;
	if (s->starved && exec_phase_starved_error(s, r, err) != 0)
		return -1;
	return 1;
}

void exec_stream_free(struct exec_stream *st)
{
	if (!st)
		return;
	exec_phase_result_free(&st->partial);
	free(st->cmd);
	free(st->q);
	free(st);
}
