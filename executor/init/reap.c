/* The end of every run of gavel-init: every process but init (and a fork
 * server's template, forkserver.h) killed and reaped, and the CPU time of
 * each one init reaps counted for the run.
 *
 * Security argument. Leftover processes are killed with kill(-1, SIGKILL),
 * from which init (PID 1) is exempt, repeated until wait4 says no child is
 * left: orphans re-parent to init, so ECHILD means nothing of the run
 * survives. While a fork server's template lives (it must survive every
 * run and is init's child, so ECHILD never comes), every other process is
 * killed by pid until a walk of /proc finds none (init_kill_others). */
#include "executor/init/run_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

uint64_t init_rusage_us(const struct rusage *ru)
{
	return ((uint64_t)ru->ru_utime.tv_sec + (uint64_t)ru->ru_stime.tv_sec) * 1000000ull +
	       (uint64_t)ru->ru_utime.tv_usec + (uint64_t)ru->ru_stime.tv_usec;
}

/* SIGCHLD is a standard signal, pending at most once:
 * a read that did not fill the buffer took everything, no second read. */
void init_flush_sigfd(int sigfd)
{
	struct signalfd_siginfo si[8];
	while (read(sigfd, si, sizeof(si)) == (ssize_t)sizeof(si))
		;
}

/* Reaps what has exited, counting each one's CPU time for the run but
 * the template's (which ended: the runner stops sparing it). */
static int reap_exited(struct init_runner *r, struct gv_err *err)
{
	struct rusage ru;
	for (;;) {
		pid_t p = wait4(-1, NULL, WNOHANG | __WALL, &ru);
		if (p > 0 && p == r->spare_pid) {
			r->spare_pid = 0;
			r->spare_lost = 1;
			continue;
		}
		if (p > 0)
			r->reaped_us += init_rusage_us(&ru);
		if (p > 0 || (p < 0 && errno == EINTR))
			continue;
		if (p < 0 && errno != ECHILD)
			return gv_err_errno(err, "wait4");
		return 0;
	}
}

/* init_kill_all while a fork server's template lives: every other
 * process killed by pid (init_kill_others has the security argument),
 * until a walk of /proc finds none. /proc stays open: one walk is the
 * whole cost when the program left nothing. */
static int kill_all_sparing(struct init_runner *r, struct gv_err *err)
{
	static int procfd = -1;
	if (procfd < 0 && (procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return gv_err_errno(err, "open /proc");
	for (int round = 0;; round++) {
		if (reap_exited(r, err) < 0)
			return -1;
		if (r->spare_pid == 0)
			return init_kill_all(r, err);
		int n = init_kill_others(procfd, r->spare_pid);
		if (n < 0)
			return gv_err_errno(err, "walk /proc");
		if (n == 0) {
			init_flush_sigfd(r->sigfd);
			return 0;
		}
		if (round > 2000)
			return gv_err_set(err, GV_ESANDBOX, "processes survive SIGKILL");
		struct pollfd pf = { .fd = r->sigfd, .events = POLLIN };
		if (poll(&pf, 1, round < 10 ? 1 : 10) < 0 && errno != EINTR)
			return gv_err_errno(err, "poll");
		init_flush_sigfd(r->sigfd);
	}
}

int init_kill_all(struct init_runner *r, struct gv_err *err)
{
	if (r->spare_pid > 0)
		return kill_all_sparing(r, err);
	/* The common case first: the program left nothing. Every process
	 * inside descends from init and orphans re-parent to it, so ECHILD
	 * from wait4 means none is left, alive or zombie, and none can appear
	 * (only init spawns): no kill(-1), no signalfd read. __WALL: children
	 * whatever their exit signal (a child with another than SIGCHLD is
	 * invisible to a plain wait4, which would say ECHILD). */
	struct rusage ru;
	for (;;) {
		pid_t p = wait4(-1, NULL, WNOHANG | __WALL, &ru);
		if (p > 0)
			r->reaped_us += init_rusage_us(&ru);
		if (p > 0 || (p < 0 && errno == EINTR))
			continue;
		if (p < 0 && errno == ECHILD)
			return 0;
		if (p < 0)
			return gv_err_errno(err, "wait4");
		break;
	}
	for (int round = 0;; round++) {
		if (kill(-1, SIGKILL) < 0 && errno != ESRCH)
			return gv_err_errno(err, "kill(-1)");
		for (;;) {
			pid_t p = wait4(-1, NULL, WNOHANG | __WALL, &ru);
			if (p > 0) {
				/* An orphan (or a process the program started): its
				 * CPU time, with that of what it reaped, is the run's. */
				r->reaped_us += init_rusage_us(&ru);
				continue;
			}
			if (p < 0 && errno == EINTR)
				continue;
			if (p < 0 && errno == ECHILD) {
				init_flush_sigfd(r->sigfd);
				return 0;
			}
			if (p < 0)
				return gv_err_errno(err, "wait4");
			break; /* children left, none exited yet */
		}
		if (round > 2000)
			return gv_err_set(err, GV_ESANDBOX, "processes survive kill(-1, SIGKILL)");
		struct pollfd pf = { .fd = r->sigfd, .events = POLLIN };
		if (poll(&pf, 1, round < 10 ? 1 : 10) < 0 && errno != EINTR)
			return gv_err_errno(err, "poll");
		init_flush_sigfd(r->sigfd);
	}
}
