/* CPU slots (cpuslot.h): flock()ed files, one per CPU, under a folder that
 * only this user may write.
 *
 * Security argument: the slots decide only when a test starts, never what
 * it may do, so a wrong count cannot weaken a sandbox. What could hurt is
 * somebody else holding the slots (judging stalls) or planting links: the
 * folder must be a real directory owned by us and writable by nobody else,
 * and slot files are opened relative to it without following links. */
#include "executor/sandbox/cpuslot.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "executor/sandbox/lockdir.h"

#define POLL_FIRST_US 1000
#define POLL_MAX_US 10000

unsigned exec_cpuslot_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One attempt over every slot, starting at a different one per process so
 * that waiters do not all fight over slot 0. 1: taken, 0: all busy. */
static int try_all(int dfd, unsigned n, struct exec_cpuslot *slot, struct gv_err *err)
{
	unsigned first = (unsigned)getpid() % n;
	for (unsigned k = 0; k < n; k++) {
		unsigned i = (first + k) % n;
		char name[32];
		snprintf(name, sizeof(name), "slot-%u", i);
		int got = exec_lockdir_try(dfd, name, "CPU slots", &slot->fd, err);
		if (got != 0) {
			if (got > 0)
				slot->index = (int)i;
			return got;
		}
	}
	return 0;
}

int exec_cpuslot_acquire(const char *dir, unsigned n, int64_t deadline_ms, struct exec_cpuslot *slot,
			 struct gv_err *err)
{
	slot->fd = -1;
	slot->index = -1;
	if (n == 0)
		n = 1;
	int dfd = exec_lockdir_open(dir, "CPU slots", err);
	if (dfd < 0)
		return -1;
	long pause_us = POLL_FIRST_US;
	int rc;
	for (;;) {
		rc = try_all(dfd, n, slot, err);
		if (rc != 0)
			break;
		if (mono_ms() >= deadline_ms) {
			rc = gv_err_set(err, GV_ELIMIT, "CPU slots: none of %u free before the deadline", n);
			break;
		}
		struct timespec ts = { 0, pause_us * 1000 };
		nanosleep(&ts, NULL);
		if (pause_us < POLL_MAX_US)
			pause_us *= 2;
	}
	close(dfd);
	return rc < 0 ? -1 : 0;
}

void exec_cpuslot_release(struct exec_cpuslot *slot)
{
	if (slot->fd >= 0)
		close(slot->fd); /* drops the lock */
	slot->fd = -1;
	slot->index = -1;
}

int exec_cpuslot_parse(const char *setting, uint32_t *n, struct gv_err *err)
{
	*n = 0;
	if (!setting || !*setting || !strcmp(setting, "off") || !strcmp(setting, "0"))
		return 0;
	if (!strcmp(setting, "auto")) {
		*n = exec_cpuslot_count();
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(setting, &end, 10);
	if (errno || *end || setting[0] == '-' || v < 1 || v > 1024)
		return gv_err_set(err, GV_ECONFIG, "cpu slots '%.40s': expected off, auto or 1..1024", setting);
	*n = (uint32_t)v;
	return 0;
}
