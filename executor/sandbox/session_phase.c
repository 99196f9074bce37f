/* The phase runner: one compile or test phase of a session, from the
 * command sent to gavel-init to the phase's result. The host enforces
 * here what must hold even if everything inside is compromised: a
 * wall-clock backstop per phase and per sandbox, its own count of the
 * sandbox's CPU (executor/sandbox/cputime.h) with the kill and the
 * settling of the CPU verdict, the cgroup's OOM counter read before the
 * sandbox is deleted, and a CPU slot per test (cpuslot.h). */
#include "executor/sandbox/session_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/log.h"
#include "executor/sandbox/cpuslot.h"
#include "executor/sandbox/cputime.h"
#include "executor/sandbox/engine.h"

#define BOOT_GRACE_MS 20000      /* sandbox boot before the compile phase */

/* SIGKILLs the sandbox process. Safe by pid: it is our child and not yet
 * reaped, so the pid cannot have been reused. Killing the Sentry ends
 * every process inside at once. */
void exec_session_kill(struct exec_session *s)
{
	if (s->pid > 0 && !s->reaped)
		kill(s->pid, SIGKILL);
}

void exec_session_wait(struct exec_session *s, long timeout_ms)
{
	if (s->pid > 0 && !s->reaped &&
	    exec_reaper_wait(&s->e->reaper, s->pid, &s->wait_status, timeout_ms)) {
		s->reaped = true;
		exec_reaper_forget(&s->e->reaper, s->pid);
	}
}

/* The host's CPU check of a running phase: EXEC_PH_CPU once the sandbox used
 * kill_ns since the phase began, EXEC_PH_PROTO if the count cannot be read
 * (fail closed), else EXEC_PH_RESULT with *wait_ms the earliest the limit can
 * be reached: the sandbox cannot use more than its CPU quota, so nothing
 * is missed by sleeping that long. kill_ns 0: no check. */
enum exec_phase_end exec_phase_cpu_check(struct exec_session *s, uint64_t kill_ns, int *wait_ms, struct gv_err *err)
{
	if (!kill_ns)
		return EXEC_PH_RESULT;
	/* Read only when the limit can have been reached: a phase that
	 * wakes the host often (interactive relays, streamed output) does
	 * not pay a cgroup read per wake-up. */
	int64_t t = exec_now_ms();
	if (t < s->cpu_next_ms) {
		if (s->cpu_next_ms - t < *wait_ms)
			*wait_ms = (int)(s->cpu_next_ms - t);
		return EXEC_PH_RESULT;
	}
	uint64_t now = 0;
	if (exec_session_cpu_ns(s, &now, err) != 0)
		return EXEC_PH_PROTO;
	uint64_t used = now > s->cpu0_ns ? now - s->cpu0_ns : 0;
	if (used >= kill_ns)
		return EXEC_PH_CPU;
	/* The quota is in % of one CPU: at most quota/100 CPU-ms per ms. */
	uint64_t pct = s->shape.cpu_quota_pct ? s->shape.cpu_quota_pct : 100;
	uint64_t ms = (kill_ns - used) / 1000000 * 100 / pct + 1;
	if (ms > 1000)
		ms = 1000;
	s->cpu_next_ms = t + (int64_t)ms;
	if (ms < (uint64_t)*wait_ms)
		*wait_ms = (int)ms;
	return EXEC_PH_RESULT;
}

/* Sends the pending command bytes and reads one phase's frames (stdout,
 * stderr, result) until the result, the sandbox's death, the deadline or a
 * protocol error. Every frame is bounded by s->caps before allocation. */
static enum exec_phase_end pump_phase(struct exec_session *s, const char *cmd, size_t cmd_len,
				 int64_t deadline, uint64_t kill_ns, struct exec_phase_result *r,
				 struct gv_err *err)
{
	size_t sent = 0;
	char buf[65536];
	bool have_result = false;
	while (!have_result) {
		int64_t left = deadline - exec_now_ms();
		if (left <= 0)
			return EXEC_PH_TIMEOUT;
		int cap = s->e->n_pending ? 10 : 1000;
		enum exec_phase_end ce = exec_phase_cpu_check(s, kill_ns, &cap, err);
		if (ce != EXEC_PH_RESULT)
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
			return EXEC_PH_PROTO;
		}
		exec_engine_poll(s->e);
		exec_session_read_diag(s);
		if (sent < cmd_len) {
			ssize_t w = write(s->in_fd, cmd + sent, cmd_len - sent);
			if (w > 0)
				sent += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				return EXEC_PH_DIED; /* EPIPE: init is gone */
		}
		for (;;) {
			ssize_t k = read(s->out_fd, buf, sizeof(buf));
			if (k < 0 && errno == EINTR)
				continue;
			if (k == 0) {
				s->out_eof = true;
				return EXEC_PH_DIED;
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
					return EXEC_PH_PROTO;
				if (fr == 0)
					continue;
				if (have_result) {
					gv_err_set(err, GV_EPROTO, "frame %s after the result", f.kind);
					return EXEC_PH_PROTO;
				}
				if (strcmp(f.kind, "stdout") == 0) {
					if (exec_result_copy_payload(&r->out, &r->out_len, &f) != 0)
						return gv_err_set(err, ENOMEM, "stdout frame"), EXEC_PH_PROTO;
				} else if (strcmp(f.kind, "stderr") == 0) {
					if (exec_result_copy_payload(&r->err_out, &r->err_len, &f) != 0)
						return gv_err_set(err, ENOMEM, "stderr frame"), EXEC_PH_PROTO;
				} else if (strcmp(f.kind, "feedback") == 0) {
					/* Only a job with feedback_dir has this cap. */
					if (exec_result_add_feedback(r, &f, err) != 0)
						return EXEC_PH_PROTO;
				} else if (strcmp(f.kind, "data") == 0) {
					gv_err_set(err, GV_EPROTO, "`data` outside an interactive test");
					return EXEC_PH_PROTO;
				} else {
					struct exec_record rec;
					if (exec_record_parse(f.payload, f.len, &rec, err) != 0) {
						gv_err_prefix(err, "result record");
						return EXEC_PH_PROTO;
					}
					exec_result_fill(r, &rec);
					have_result = true;
				}
			}
		}
		if (!have_result) {
			/* Exited: what is still in the pipe is taken first. */
			struct pollfd pf[2] = {{s->pidfd, POLLIN, 0}, {s->out_fd, POLLIN, 0}};
			if (poll(pf, 2, 0) > 0 && (pf[0].revents & POLLIN) && !(pf[1].revents & POLLIN))
				return EXEC_PH_DIED;
		}
	}
	return EXEC_PH_RESULT;
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

void exec_session_mark_dead(struct exec_session *s)
{
	s->dead = true;
	exec_session_kill(s);
	exec_session_wait(s, 5000);
}

/* The sandbox cgroup's CPU time so far, in ns, read from the host kernel:
 * every thread of the sandbox (Sentry, gofer, the program's) counts, and
 * only for the time it really ran. Nothing inside can change it. */
int exec_session_cpu_ns(struct exec_session *s, uint64_t *ns, struct gv_err *err)
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
int exec_phase_cpu_start(struct exec_session *s, struct exec_phase_result *r, struct gv_err *err)
{
	s->starved = false;
	s->cpu_next_ms = 0;
	if (s->e->cfg.guest_cpu_time)
		return 0;
	if (exec_session_cpu_ns(s, &s->cpu0_ns, err) != 0) {
		exec_session_mark_dead(s);
		exec_result_set(r, "IE", "none", "cannot read the sandbox's CPU time");
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
	if (exec_session_cpu_ns(s, &cpu1, err) != 0 || cpu1 < s->cpu0_ns) {
		if (cpu1 < s->cpu0_ns)
			gv_err_set(err, GV_ESANDBOX, "sandbox %s: cgroup CPU time went backwards", s->id);
		exec_session_mark_dead(s);
		exec_result_set(r, "IE", "none", "cannot read the sandbox's CPU time");
		return -1;
	}
	r->host_cpu_us = (cpu1 - s->cpu0_ns) / 1000;
	switch (exec_cpu_settle(r->status, r->limit, r->guest_time_ms, r->host_cpu_us, l->cpu_ms, &r->time_ms)) {
	case EXEC_CPU_TLE:
		if (strcmp(r->status, "TLE") != 0)
			exec_result_set(r, "TLE", "cpu", "time limit exceeded");
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
int exec_phase_run(struct exec_session *s, const char *cmd, size_t cmd_len,
		     const struct exec_limits *l, bool compile, struct exec_phase_result *r,
		     struct gv_err *err)
{
	exec_phase_caps(s, l, compile);

	/* A test runs with a CPU of its own (executor/sandbox/cpuslot.h). The
	 * compile phase starts with the sandbox, before this is reached, and
	 * takes none. Waiting for a slot counts in no limit of the test. */
	struct exec_cpuslot slot = { -1, -1 };
	const struct exec_engine_config *cfg = &s->e->cfg;
	if (!compile && cfg->cpu_slots > 0) {
		const char *dir = cfg->cpu_slot_dir ? cfg->cpu_slot_dir : EXEC_CPU_SLOT_DIR;
		unsigned n = cfg->cpu_slots;
		int64_t asked = exec_now_ms();
		if (exec_cpuslot_acquire(dir, n, s->deadline, &slot, err) != 0) {
			exec_result_set(r, "IE", "none", "no CPU slot for the test");
			return -1;
		}
		/* The sandbox did nothing while it waited: the wait does not
		 * shorten what is left of its lifetime deadline. */
		s->deadline += exec_now_ms() - asked;
	}

	/* Host backstop: init enforces wall_ms itself; if it does not answer
	 * within wall_ms + grace (+ the boot for the first phase), the whole
	 * sandbox is killed. Never later than the sandbox's own deadline. */
	int64_t deadline = exec_now_ms() + (int64_t)l->wall_ms + EXEC_BACKSTOP_GRACE_MS +
			   (compile ? BOOT_GRACE_MS : 0);
	if (deadline > s->deadline)
		deadline = s->deadline;

	if (exec_phase_cpu_start(s, r, err) != 0) {
		exec_cpuslot_release(&slot);
		return -1;
	}
	/* gavel-init starts the compile as soon as the sandbox boots, before
	 * this is reached: the compile is counted from the start (the boot's
	 * CPU with it, which only errs on the high side of min(guest, host)). */
	if (compile)
		s->cpu0_ns = s->boot_cpu_ns;
	uint64_t kill_ns = cfg->guest_cpu_time ? 0 : exec_cpu_host_kill_ns(l->cpu_ms);
	enum exec_phase_end end = pump_phase(s, cmd, cmd_len, deadline, kill_ns, r, err);
	exec_cpuslot_release(&slot);
	return exec_phase_finish(s, end, l, r, err);
}

/* Turns how a phase ended into its result: the OOM counter decides a
 * whole-sandbox kill; the backstop is WLE; a dead sandbox or a broken
 * protocol is our failure (-1, IE). */
int exec_phase_finish(struct exec_session *s, enum exec_phase_end end, const struct exec_limits *l,
			struct exec_phase_result *r, struct gv_err *err)
{
	uint64_t ooms = 0;
	char tail[256];
	switch (end) {
	case EXEC_PH_RESULT:
		/* A sandbox-wide OOM kill can hit a helper thread and leave init
		 * answering: the counter decides, not the answer. */
		if (oom_kills(s, &ooms, err) != 0) {
			exec_session_mark_dead(s);
			exec_result_set(r, "IE", "none", "cannot read the sandbox's OOM counter");
			return -1;
		}
		if (ooms > 0) {
			exec_session_mark_dead(s);
			exec_result_set(r, "MLE", "memory", "sandbox out of memory (host cgroup OOM kill)");
			return 0;
		}
		return phase_cpu_settle(s, l, r, err);
	case EXEC_PH_CPU:
		/* The host's kill (executor/sandbox/cputime.h): the sandbox is
		 * killed mid-test, so the session ends; the counters are read
		 * after the kill, before runsc delete. */
		exec_session_mark_dead(s);
		if (oom_kills(s, &ooms, err) != 0) {
			exec_result_set(r, "IE", "none", "sandbox killed for CPU; OOM counter unreadable");
			return -1;
		}
		if (ooms > 0) {
			exec_result_set(r, "MLE", "memory", "sandbox out of memory (host cgroup OOM kill)");
			r->memory_kb = l->memory_kb;
			return 0;
		}
		exec_result_set(r, "TLE", "cpu", "time limit exceeded (the host's count of the sandbox's CPU)");
		{
			uint64_t now = 0;
			struct gv_err ignored;
			/* Only a figure for the report: the verdict is made. */
			if (exec_session_cpu_ns(s, &now, &ignored) == 0 && now > s->cpu0_ns)
				r->host_cpu_us = (now - s->cpu0_ns) / 1000;
			r->time_ms = r->host_cpu_us / 1000;
		}
		return 0;
	case EXEC_PH_TIMEOUT:
		exec_session_mark_dead(s);
		exec_result_set(r, "WLE", "wall", "host wall-clock backstop: sandbox killed");
		r->wall_ms = l->wall_ms;
		return 0;
	case EXEC_PH_DIED:
		/* The Sentry is gone (or init closed its pipes): kill whatever
		 * is left, reap, then read the counter before runsc delete. */
		exec_session_mark_dead(s);
		exec_session_read_diag(s);
		if (oom_kills(s, &ooms, err) != 0) {
			exec_result_set(r, "IE", "none", "sandbox died; OOM counter unreadable");
			return -1;
		}
		if (ooms > 0) {
			exec_result_set(r, "MLE", "memory", "sandbox out of memory (host cgroup OOM kill)");
			r->memory_kb = l->memory_kb;
			return 0;
		}
		exec_session_diag_tail(s, tail, sizeof(tail));
		gv_err_set(err, GV_ESANDBOX, "sandbox %s exited unexpectedly (%s %d): %s", s->id,
			   s->reaped && WIFSIGNALED(s->wait_status) ? "signal" : "exit",
			   !s->reaped ? -1
			   : WIFSIGNALED(s->wait_status) ? WTERMSIG(s->wait_status)
							 : WEXITSTATUS(s->wait_status),
			   tail);
		exec_result_set(r, "IE", "none", "sandbox exited unexpectedly");
		return -1;
	case EXEC_PH_PROTO:
	default:
		exec_session_mark_dead(s);
		gv_err_prefix(err, "sandbox %s", s->id);
		exec_result_set(r, "IE", "none", "protocol failure talking to gavel-init");
		return -1;
	}
}

/* A phase the load cut short twice (or once, where it cannot be run
 * again): no verdict can be drawn from it, so it is our failure (IE). */
int exec_phase_starved_error(struct exec_session *s, struct exec_phase_result *r, struct gv_err *err)
{
	uint64_t g = r->guest_time_ms, h = r->host_cpu_us;
	exec_result_set(r, "IE", "none", "node too busy: the sandbox's CPU clock ran far ahead of the host's");
	return gv_err_set(err, GV_ESANDBOX,
			  "sandbox %s starved of CPU: guest %" PRIu64 " ms, host %" PRIu64 " us of CPU", s->id, g, h);
}

int exec_session_run_test(struct exec_session *s, const void *input, size_t len,
			  struct exec_phase_result *out, struct gv_err *err)
{
	return exec_session_run_test_files(s, NULL, 0, input, len, out, err);
}

int exec_session_run_test_files(struct exec_session *s, const struct exec_file *files, size_t nfiles,
				const void *input, size_t len, struct exec_phase_result *out,
				struct gv_err *err)
{
	return exec_session_run_test_seeded(s, files, nfiles, NULL, 0, input, len, out, err);
}

int exec_session_run_test_seeded(struct exec_session *s, const struct exec_file *files, size_t nfiles,
				 const struct exec_file *seeds, size_t nseeds, const void *input, size_t len,
				 struct exec_phase_result *out, struct gv_err *err)
{
	exec_result_init(out);
	if (!s || s->dead) {
		exec_result_set(out, "IE", "none", "sandbox is gone");
		return gv_err_set(err, EXEC_EDEAD, "sandbox %s is dead: open a new session",
				  s ? s->id : "(null)");
	}
	if (s->interactive) {
		exec_result_set(out, "IE", "none", "interactive sandbox");
		return gv_err_set(err, GV_EINVAL, "sandbox %s is interactive: use exec_session_interact", s->id);
	}
	size_t cl = 0;
	if (nseeds && !s->feedback_dir) {
		exec_result_set(out, "IE", "none", "no feedback dir");
		return gv_err_set(err, GV_EINVAL, "sandbox %s has no feedback dir to seed", s->id);
	}
	char *cmd = exec_test_command_seeded(files, nfiles, seeds, nseeds, input, len, &cl, out, err);
	if (!cmd)
		return -1;
	int rc = exec_phase_run(s, cmd, cl, &s->run_limits, false, out, err);
	/* Cut short by the node's load (executor/sandbox/cputime.h): once more.
	 * A test leaves nothing behind in the sandbox (init kills every process
	 * and empties /tmp), so the second run is a run of the same test. */
	if (rc == 0 && s->starved && !s->dead) {
		struct gv_log_ctx ctx = {.sandbox = s->id};
		gv_warn(&ctx, "test starved of CPU (guest %" PRIu64 " ms, host %" PRIu64 " us): running it again",
			out->guest_time_ms, out->host_cpu_us);
		exec_phase_result_free(out);
		rc = exec_phase_run(s, cmd, cl, &s->run_limits, false, out, err);
	}
	free(cmd);
	s->tests_run++;
	if (rc == 0 && s->starved)
		return exec_phase_starved_error(s, out, err);
	return rc;
}
