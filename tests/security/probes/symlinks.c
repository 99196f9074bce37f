/* symlinks — links, FIFOs and huge sparse files planted in the work dir and
 * /tmp under names a host might read or write (stdout, output, result,
 * the job record...) are never followed or opened by the host. Targets are
 * host paths: /etc/shadow and canary files and a canary directory the driver
 * made on the host (stdin: "CANARY_FILE <path>", "CANARY_DIR <path>"); the
 * driver checks afterwards that all are unchanged and that the run reported
 * normally and in time. Also tries hard links to files outside the work dir
 * (a host chown/chmod of the work dir must not reach /usr through them). */
#include "probe.h"

static void plant_link(const char *target, const char *name)
{
	if (symlink(target, name) == 0)
		info("planted %s -> %s", name, target);
	else
		info("symlink %s: %s", name, strerror(errno));
}

int main(void)
{
	char params[4096], cfile[1024], cdir[1024];
	signal(SIGXFSZ, SIG_IGN); /* the 1 TiB sparse files may pass the file size limit */
	probe_params(params, sizeof params);
	if (param(params, "CANARY_FILE", cfile, sizeof cfile) < 0)
		snprintf(cfile, sizeof cfile, "/etc/shadow");
	if (param(params, "CANARY_DIR", cdir, sizeof cdir) < 0)
		snprintf(cdir, sizeof cdir, "/nonexistent-canary");

	char self[4096] = "";
	ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
	self[sn > 0 ? sn : 0] = 0;
	const char *self_base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;

	static const char *dirs[] = { ".", "/box", "/tmp" };
	static const char *file_names[] = {
		"stdout", "stderr", "output", "out", "result", "results", "result.txt", "compile.log",
		"compile_output", "input", "in", "stdin", "answer", "ans", "meta", "report", "log",
		"job.new", "checker", "verdict", "core", "a.out", "main", "Main.class", "program", "solution",
	};
	static const char *fifo_names[] = { "stdout.fifo", "output.txt", "result.fifo", "judge" };
	static const char *sparse_names[] = { "out.txt", "stdout.txt", "big" };
	int planted = 0;
	for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
		if (chdir(dirs[d]) < 0) {
			info("chdir %s: %s", dirs[d], strerror(errno));
			continue;
		}
		for (size_t i = 0; i < sizeof file_names / sizeof file_names[0]; i++) {
			if (!strcmp(file_names[i], self_base))
				continue;
			const char *t = i % 3 == 0 ? "/etc/shadow" : i % 3 == 1 ? cfile : cdir;
			char name[256];
			snprintf(name, sizeof name, "%s", file_names[i]);
			if (symlink(t, name) == 0)
				planted++;
		}
		plant_link(cdir, "work");
		plant_link(cdir, "tmp");
		plant_link("../../../../../../../../etc/shadow", "dotdot");
		plant_link("/proc/1/root/etc/shadow", "proc_root");
		plant_link("/proc/self/cwd", "selfloop");
		for (size_t i = 0; i < sizeof fifo_names / sizeof fifo_names[0]; i++)
			if (mkfifo(fifo_names[i], 0666) == 0)
				planted++;
		for (size_t i = 0; i < sizeof sparse_names / sizeof sparse_names[0]; i++) {
			int fd = open(sparse_names[i], O_WRONLY | O_CREAT | O_TRUNC, 0666);
			if (fd >= 0) {
				if (ftruncate(fd, (off_t)1 << 40) == 0)
					planted++;
				else
					info("ftruncate %s to 1 TiB: %s", sparse_names[i], strerror(errno));
				close(fd);
			}
		}
		/* A tree deeper than PATH_MAX, for a host that walks it by path. */
		char seg[201];
		memset(seg, 'd', 200);
		seg[200] = 0;
		int depth = 0;
		for (; depth < 40; depth++) {
			if (mkdir(seg, 0777) < 0 || chdir(seg) < 0)
				break;
		}
		info("%s: nested %d directories of 200 characters", dirs[d], depth);
		if (chdir(dirs[d]) < 0)
			info("chdir back: %s", strerror(errno));
	}
	info("planted %d files", planted);

	/* Replace the job record by a link (it must be impossible or harmless). */
	if (symlink("/etc/shadow", "/box/job.gavel-probe") == 0) {
		if (rename("/box/job.gavel-probe", "/box/job") == 0)
			escaped("replaced /box/job by a symlink to /etc/shadow");
		else
			blocked("replace /box/job errno=%d (%s)", errno, strerror(errno));
		unlink("/box/job.gavel-probe");
	}

	/* Hard links to files of other mounts. */
	static const char *hl[] = { "/usr/bin/gcc", "/etc/passwd", "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	for (size_t i = 0; i < sizeof hl / sizeof hl[0]; i++) {
		char name[64];
		snprintf(name, sizeof name, "/box/hardlink%zu", i);
		if (link(hl[i], name) == 0)
			escaped("hard-linked %s into the work dir", hl[i]);
		else
			blocked("link %s errno=%d (%s)", hl[i], errno, strerror(errno));
	}

	/* Inside, the links resolve in the sandbox: nothing of the host. */
	char buf[256];
	if (read_small("/box/dotdot", buf, sizeof buf) >= 0)
		escaped("read /etc/shadow through a ../ link");
	else
		blocked("read through ../ link errno=%d (%s)", errno, strerror(errno));
	if (read_small(cfile, buf, sizeof buf) >= 0)
		escaped("read the host canary %s", cfile);
	else
		blocked("read host canary errno=%d (%s)", errno, strerror(errno));
	return finish();
}
