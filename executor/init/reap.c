/* The end of every run of gavel-init: every process but init killed and
 * reaped, and the CPU time of each one init reaps counted for the run.
 *
 * Security argument. Leftover processes are killed with kill(-1, SIGKILL),
 * from which init (PID 1) is exempt, repeated until wait4 says no child is
 * left: orphans re-parent to init, so ECHILD means nothing of the run
 * survives. */
#include "executor/init/run_internal.h"

#include <errno.h>
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

int init_kill_all(struct init_runner *r, struct gv_err *err)
{
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
