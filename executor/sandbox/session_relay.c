/* Interactive tests: the host relay between a submission's sandbox and
 * an interactor's (executor/sandbox/session_relay.h), one bounded `data`
 * frame at a time each way, with each side's backstops as for a test. */
#include "executor/sandbox/session_relay.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "executor/sandbox/cputime.h"
#include "executor/sandbox/engine.h"
#include "executor/sandbox/session_internal.h"

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
		int w = x->cmd_sent < x->cmd_len ? exec_write_some(x->s->in_fd, x->cmd, x->cmd_len, &x->cmd_sent)
						 : exec_write_some(x->s->in_fd, x->fwd, x->fwd_len, &x->fwd_sent);
		if (w <= 0)
			return w == 0;
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
 * EXEC_PH_RESULT when x's result came, EXEC_PH_PROTO on a protocol error, EXEC_PH_TIMEOUT
 * (meaning "nothing final yet") otherwise. */
static enum exec_phase_end relay_decode(struct relay_side *x, struct relay_side *y, struct gv_err *err)
{
	while (!x->done && x->roff < x->rlen && relay_can_take(y)) {
		struct exec_frame f;
		size_t used = 0;
		int fr = exec_frame_decoder_feed(&x->s->dec, x->rbuf + x->roff, x->rlen - x->roff, &used, &f, err);
		x->roff += used;
		if (fr < 0)
			return EXEC_PH_PROTO;
		if (fr == 0)
			continue;
		if (strcmp(f.kind, "data") == 0) {
			if (f.len && !y->done && !y->eof_queued) {
				relay_queue(y, f.payload, f.len);
				x->relayed += f.len;
				x->frames++;
			}
		} else if (strcmp(f.kind, "stdout") == 0) {
			if (exec_result_copy_payload(&x->r->out, &x->r->out_len, &f) != 0)
				return gv_err_set(err, ENOMEM, "stdout frame"), EXEC_PH_PROTO;
		} else if (strcmp(f.kind, "stderr") == 0) {
			if (exec_result_copy_payload(&x->r->err_out, &x->r->err_len, &f) != 0)
				return gv_err_set(err, ENOMEM, "stderr frame"), EXEC_PH_PROTO;
		} else if (strcmp(f.kind, "feedback") == 0) {
			if (exec_result_add_feedback(x->r, &f, err) != 0)
				return EXEC_PH_PROTO;
		} else {
			struct exec_record rec;
			if (exec_record_parse(f.payload, f.len, &rec, err) != 0) {
				gv_err_prefix(err, "result record");
				return EXEC_PH_PROTO;
			}
			exec_result_fill(x->r, &rec);
			if (x->roff != x->rlen) {
				gv_err_set(err, GV_EPROTO, "bytes after the result");
				return EXEC_PH_PROTO;
			}
			return EXEC_PH_RESULT;
		}
	}
	return EXEC_PH_TIMEOUT;
}

/* Reads what x's result pipe holds (when there is room). EXEC_PH_DIED at EOF;
 * EXEC_PH_TIMEOUT ("nothing final") otherwise. */
static enum exec_phase_end relay_read(struct relay_side *x, const struct relay_side *y)
{
	if (x->done || x->roff < x->rlen || !relay_can_take(y))
		return EXEC_PH_TIMEOUT;
	for (;;) {
		ssize_t k = read(x->s->out_fd, x->rbuf, sizeof(x->rbuf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0) {
			x->s->out_eof = true;
			return EXEC_PH_DIED;
		}
		if (k > 0) {
			x->rlen = (size_t)k;
			x->roff = 0;
		}
		return EXEC_PH_TIMEOUT;
	}
}

/* Refuses what cannot be a relay: a missing or dead sandbox, or two
 * sessions that are not an interactive pair of one engine. */
static int relay_refuse(struct exec_session *sub, struct exec_session *itr, struct exec_phase_result *sub_out,
			struct exec_phase_result *itr_out, struct gv_err *err)
{
	if (!sub || !itr || sub->dead || itr->dead) {
		exec_result_set(sub_out, "IE", "none", "sandbox is gone");
		exec_result_set(itr_out, "IE", "none", "sandbox is gone");
		return gv_err_set(err, EXEC_EDEAD, "sandbox %s is dead: open a new session",
				  !sub || sub->dead ? (sub ? sub->id : "(null)") : itr->id);
	}
	if (!sub->interactive || !itr->interactive || sub == itr || sub->e != itr->e) {
		exec_result_set(sub_out, "IE", "none", "not an interactive pair");
		exec_result_set(itr_out, "IE", "none", "not an interactive pair");
		return gv_err_set(err, GV_EINVAL, "exec_session_interact needs two interactive sessions");
	}
	return 0;
}

/* The opening commands: a `test` for the submission; the interactor's
 * files, then its `test`. */
static int relay_open(struct relay_side *side, const struct exec_file *itr_files, size_t n_itr_files,
		      struct gv_err *err)
{
	side[0].cmd = exec_test_command(NULL, 0, NULL, 0, &side[0].cmd_len, side[0].r, err);
	side[1].cmd = side[0].cmd ? exec_test_command(itr_files, n_itr_files, NULL, 0, &side[1].cmd_len, side[1].r, err)
				  : NULL;
	if (side[0].cmd && side[1].cmd)
		return 0;
	for (int i = 0; i < 2; i++)
		if (!side[i].r->status[0])
			exec_result_set(side[i].r, "IE", "none", "relay set-up failed");
	return -1;
}

/* Each side's run limits and backstops from t0 (now), and its CPU count. */
static int relay_start(struct relay_side *side, int64_t t0, struct gv_err *err)
{
	for (int i = 0; i < 2; i++) {
		struct exec_session *x = side[i].s;
		exec_phase_caps(x, &x->run_limits, false);
		/* Host backstop, as for run_test: init enforces wall_ms. */
		side[i].deadline = t0 + (int64_t)x->run_limits.wall_ms + EXEC_BACKSTOP_GRACE_MS;
		if (side[i].deadline > x->deadline)
			side[i].deadline = x->deadline;
		if (exec_phase_cpu_start(x, side[i].r, err) != 0)
			return -1;
		side[i].kill_ns = x->e->cfg.guest_cpu_time ? 0 : exec_cpu_host_kill_ns(x->run_limits.cpu_ms);
	}
	return 0;
}

/* Nothing final came from x: its host backstops. true, with *end, when one
 * of them ends x: the deadline (EXEC_PH_TIMEOUT), the host's CPU kill
 * (EXEC_PH_CPU), an unreadable count (EXEC_PH_PROTO), or its program gone
 * with nothing left in the pipe (EXEC_PH_DIED). */
static bool relay_backstop(struct relay_side *x, enum exec_phase_end *end, struct gv_err *err)
{
	x->wait_ms = 1000;
	if (exec_now_ms() >= x->deadline) {
		*end = EXEC_PH_TIMEOUT;
		return true;
	}
	*end = exec_phase_cpu_check(x->s, x->kill_ns, &x->wait_ms, err);
	if (*end != EXEC_PH_RESULT)
		return true; /* EXEC_PH_CPU, or EXEC_PH_PROTO: the count is unreadable. */
	*end = EXEC_PH_TIMEOUT;
	/* Exited: what is still in the pipe is taken first. */
	struct pollfd pf[2] = {{x->s->pidfd, POLLIN, 0}, {x->s->out_fd, POLLIN, 0}};
	if (poll(pf, 2, 0) > 0 && (pf[0].revents & POLLIN) && !(pf[1].revents & POLLIN)) {
		*end = EXEC_PH_DIED;
		return true;
	}
	return false;
}

/* x's turn (y the other side): the end of its stdin once y ended, what its
 * command pipe takes, what its result pipe holds, then its backstops.
 * true, with *end, when x ended in this turn. */
static bool relay_turn(struct relay_side *x, struct relay_side *y, enum exec_phase_end *end, struct gv_err *err)
{
	*end = EXEC_PH_TIMEOUT;
	/* The other side ended: end of this side's stdin. */
	if (y->done && !x->done && !x->eof_queued && relay_fwd_idle(x)) {
		relay_queue(x, NULL, 0);
		x->eof_queued = true;
	}
	if (!relay_write(x) && !x->done)
		*end = EXEC_PH_DIED;
	for (int k = 0; *end == EXEC_PH_TIMEOUT && k < 2 && !x->done; k++) {
		*end = relay_decode(x, y, err);
		if (*end == EXEC_PH_TIMEOUT && k == 0)
			*end = relay_read(x, y);
	}
	if (x->done)
		return false;
	if (*end != EXEC_PH_TIMEOUT)
		return true;
	return relay_backstop(x, end, err);
}

/* Side i ended as end: its result, and which side ended first. */
static int relay_finish(struct relay_side *side, int i, enum exec_phase_end end, struct exec_interaction *ia,
			struct gv_err *err)
{
	struct relay_side *x = &side[i], *y = &side[1 - i];
	x->done = true;
	if (!y->done)
		ia->interactor_first = i == 1;
	if (exec_phase_finish(x->s, end, &x->s->run_limits, x->r, err) != 0 ||
	    (x->s->starved && exec_phase_starved_error(x->s, x->r, err) != 0)) {
		gv_err_prefix(err, "%s", i == 0 ? "submission" : "interactor");
		return -1;
	}
	return 0;
}

/* Whether the relay goes on: a side runs, or a `data` frame begun towards
 * a live sandbox is not written out yet. */
static bool relay_busy(const struct relay_side *side)
{
	for (int i = 0; i < 2; i++)
		if (!side[i].done || (!side[i].s->dead && side[i].fwd_sent > 0 && !relay_fwd_idle(&side[i])))
			return true;
	return false;
}

/* Sleeps until either side's pipes or pidfd can move, its next backstop,
 * or the engine's next chore (10 ms while it has pending work, else at
 * most a second); then the engine's own work and both sides' stderr. */
static int relay_wait(struct relay_side *side, struct gv_err *err)
{
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
			if (x->kill_ns && exec_now_ms() + x->wait_ms < until)
				until = exec_now_ms() + x->wait_ms;
		}
		if (x->cmd_sent < x->cmd_len || !relay_fwd_idle(x))
			p[np++] = (struct pollfd){x->s->in_fd, POLLOUT, 0};
		if (!x->s->err_eof)
			p[np++] = (struct pollfd){x->s->err_fd, POLLIN, 0};
	}
	struct exec_engine *e = side[0].s->e;
	int cap = e->n_pending ? 10 : 1000;
	int64_t left = until == INT64_MAX ? cap : until - exec_now_ms();
	if (left < 0)
		left = 0;
	if (poll(p, np, left > cap ? cap : (int)left) < 0 && errno != EINTR)
		return gv_err_errno(err, "poll");
	exec_engine_poll(e);
	exec_session_read_diag(side[0].s);
	exec_session_read_diag(side[1].s);
	return 0;
}

/* Relays until both sides ended: each side's turn, the submission's
 * first, then a wait. */
static int relay_run(struct relay_side *side, struct exec_interaction *ia, struct gv_err *err)
{
	for (;;) {
		for (int i = 0; i < 2; i++) {
			enum exec_phase_end end;
			if (relay_turn(&side[i], &side[1 - i], &end, err) && relay_finish(side, i, end, ia, err) != 0)
				return -1;
		}
		if (!relay_busy(side))
			return 0;
		if (relay_wait(side, err) != 0)
			return -1;
	}
}

int exec_session_interact(struct exec_session *sub, struct exec_session *itr,
			  const struct exec_file *itr_files, size_t n_itr_files,
			  struct exec_phase_result *sub_out, struct exec_phase_result *itr_out,
			  struct exec_interaction *ia, struct gv_err *err)
{
	exec_result_init(sub_out);
	exec_result_init(itr_out);
	memset(ia, 0, sizeof(*ia));
	if (relay_refuse(sub, itr, sub_out, itr_out, err) != 0)
		return -1;
	struct relay_side *side = calloc(2, sizeof(*side));
	if (!side) {
		exec_result_set(sub_out, "IE", "none", "out of memory");
		exec_result_set(itr_out, "IE", "none", "out of memory");
		return gv_err_set(err, ENOMEM, "relay: out of memory");
	}
	side[0].s = sub, side[0].r = sub_out;
	side[1].s = itr, side[1].r = itr_out;
	int rc = -1;
	if (relay_open(side, itr_files, n_itr_files, err) != 0)
		goto out;
	int64_t t0 = exec_now_ms();
	if (relay_start(side, t0, err) != 0 || relay_run(side, ia, err) != 0)
		goto out;
	ia->wall_ms = (uint64_t)(exec_now_ms() - t0);
	ia->to_interactor_bytes = side[0].relayed;
	ia->to_interactor_frames = side[0].frames;
	ia->to_submission_bytes = side[1].relayed;
	ia->to_submission_frames = side[1].frames;
	rc = 0;
out:
	if (rc != 0) {
		/* Mid-test, neither init is in a known state any more. */
		for (int i = 0; i < 2; i++) {
			if (!side[i].s->dead)
				exec_session_mark_dead(side[i].s);
			if (strcmp(side[i].r->status, "IE") != 0 || !side[i].r->message[0])
				exec_result_set(side[i].r, "IE", "none", "interactive relay failed");
		}
	}
	sub->tests_run++;
	itr->tests_run++;
	free(side[0].cmd);
	free(side[1].cmd);
	free(side);
	return rc;
}
