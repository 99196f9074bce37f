/* What gavel-init's runner reads from /proc while a program runs: its CPU
 * time and state, its memory, and, when it may start processes, the sum
 * over the whole process tree. The limits enforced by sampling (CPU, memory,
 * idle) are checked on these figures (run.c). Reads only; a figure that
 * cannot be read is reported as such, never guessed. */
#include "executor/init/run_internal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void take_max(const char *buf, const char *key, size_t klen, uint64_t *max)
{
	const char *p = strstr(buf, key);
	if (!p)
		return;
	uint64_t v = strtoull(p + klen, NULL, 10);
	if (v > *max)
		*max = v;
}

static uint64_t clock_ticks(void)
{
	static uint64_t ticks;
	if (!ticks) {
		long t = sysconf(_SC_CLK_TCK);
		ticks = t > 0 ? (uint64_t)t : 100;
	}
	return ticks;
}

/* One /proc/<pid>/stat, the fields after the last ')' (the comm field may
 * hold spaces and parentheses). CPU times in clock ticks, rss in pages. */
struct proc_stat {
	char state;  /* R running or runnable, S sleeping, D, Z, T... */
	unsigned long long utime, stime, cutime, cstime, rss;
};

static int parse_stat(char *buf, struct proc_stat *ps)
{
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime(14) stime cutime cstime priority nice num_threads
	 * itrealvalue starttime vsize rss(24). */
	if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu %*d %*d %*d %*d %*u %*u %llu",
		   &ps->state, &ps->utime, &ps->stime, &ps->cutime, &ps->cstime, &ps->rss) != 6)
		return -1;
	return 0;
}

/* CPU time (ms) used so far by the process (all its threads); -1 when
 * unreadable. *runnable: its state is R. */
int64_t init_sample_cpu_ms(int fd, int *runnable)
{
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	struct proc_stat ps;
	if (parse_stat(buf, &ps) < 0)
		return -1;
	*runnable = ps.state == 'R';
	return (int64_t)((ps.utime + ps.stime) * 1000u / clock_ticks());
}

/* Calls fn for every process of the sandbox but init (pid 1) and spare
 * (0: none), from one walk of /proc (procfd, rewound here). 0, or -1 when
 * the walk fails. */
static int each_process(int procfd, pid_t spare, void (*fn)(int procfd, long pid, const char *name, void *arg),
			void *arg)
{
	static char dents[16384];
	if (lseek(procfd, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		long n = syscall(SYS_getdents64, procfd, dents, sizeof(dents));
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		for (long off = 0; off < n;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; } *d =
				(void *)(dents + off);
			off += d->reclen;
			const char *name = d->name;
			if (name[0] < '1' || name[0] > '9' || strspn(name, "0123456789") != strlen(name) ||
			    strlen(name) > 10)
				continue;
			long pid = strtol(name, NULL, 10);
			if (pid != 1 && pid != (long)spare)
				fn(procfd, pid, name, arg);
		}
	}
}

struct tree_sum {
	struct init_tree_sample *t;
	uint64_t ticks, pages;
};

static void add_process(int procfd, long pid, const char *name, void *arg)
{
	(void)pid;
	struct tree_sum *sum = arg;
	char path[32], buf[1024];
	snprintf(path, sizeof(path), "%s/stat", name);
	int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* gone meanwhile: its time is with its reaper */
	ssize_t got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	struct proc_stat ps;
	if (got <= 0)
		return;
	buf[got] = '\0';
	if (parse_stat(buf, &ps) < 0)
		return;
	sum->ticks += ps.utime + ps.stime + ps.cutime + ps.cstime;
	sum->pages += ps.rss;
	sum->t->procs++;
	if (ps.state == 'R')
		sum->t->runnable = 1;
}

/* The whole process tree of a run that may start processes (procs > 1).
 * Every process inside but init (pid 1) belongs to the run: only init
 * spawns, and init_kill_all leaves none between runs. gVisor 20221219
 * accounts like Linux (measured: a node parent's wait4 rusage included
 * the python grandchild its sh child reaped), so at any instant a
 * process's CPU time sits in exactly one place: its own utime + stime
 * while it exists (zombies too), its reaper's cutime + cstime once reaped
 * by a process of the run, or runner->reaped_us once reaped by init. The
 * sum of those is the tree's CPU time, reaped or not, orphans included.
 * Memory is the sum of the resident sizes: pages shared between processes
 * (copy-on-write after fork) count once per process, the stricter reading.
 * Cost per sample: lseek + getdents64 on /proc, then open, read, close per
 * process (~25 us each under ptrace). */
int init_sample_tree(int procfd, pid_t spare, struct init_tree_sample *t)
{
	memset(t, 0, sizeof(*t));
	struct tree_sum sum = { .t = t };
	if (each_process(procfd, spare, add_process, &sum) < 0)
		return -1;
	static uint64_t page_kb;
	if (!page_kb)
		page_kb = sysconf(_SC_PAGESIZE) > 0 ? (uint64_t)sysconf(_SC_PAGESIZE) / 1024 : 4;
	t->cpu_ms = sum.ticks * 1000u / clock_ticks();
	t->rss_kb = sum.pages * page_kb;
	return 0;
}

/* Peak address space and resident size (kB) from /proc/<pid>/status. Linux
 * has VmPeak/VmHWM; gVisor 20221219 only VmSize/VmRSS, whose maxima over
 * the samples stand in for them. */
void init_sample_memory(int fd, uint64_t *vmpeak, uint64_t *hwm)
{
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	take_max(buf, "\nVmPeak:", 8, vmpeak);
	take_max(buf, "\nVmSize:", 8, vmpeak);
	take_max(buf, "\nVmHWM:", 7, hwm);
	take_max(buf, "\nVmRSS:", 7, hwm);
}

/* Security argument: with a fork server's template alive, kill(-1) would
 * end it too, so the processes of a run are killed one by one. Every
 * process of the sandbox shows in /proc (zombies included), the walk
 * skips only init and the template, and the caller walks again until it
 * finds none: a process forked between two walks is found by the next
 * one, and none can appear once none is left (the template forks only
 * when init asks). */
static void kill_process(int procfd, long pid, const char *name, void *arg)
{
	(void)procfd;
	(void)name;
	(*(int *)arg)++;
	kill((pid_t)pid, SIGKILL);
}

int init_kill_others(int procfd, pid_t spare)
{
	int found = 0;
	return each_process(procfd, spare, kill_process, &found) < 0 ? -1 : found;
}
