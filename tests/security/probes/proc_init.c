/* proc_init — gavel-init (pid 1) is out of reach: its memory and its
 * descriptors (the pipes to the host) cannot be opened, and the kernel's
 * host-wide knobs under /proc cannot be opened for writing. Opens for
 * writing are never followed by a write.
 *
 * gVisor's procfs (20221219) serves pid 1's environ, maps and auxv
 * world-readable (mode 0444, no ptrace access check) whatever init's
 * dumpable flag says, and ignores hidepid. environ is read from init's
 * memory, and init overwrites its environment at start: the promise is
 * that it reads as nothing (NUL bytes at most), which this checks. maps
 * and auxv give away init's address layout and cannot be hidden from
 * inside with this gVisor (executor/SECURITY.md); they are listed. */
#include "probe.h"

static void try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC | O_NONBLOCK);
	const char *how = (flags & O_ACCMODE) == O_RDONLY ? "reading" : "writing";
	if (fd >= 0) {
		close(fd);
		escaped("opened %s for %s", path, how);
	} else {
		blocked("open %s for %s errno=%d (%s)", path, how, errno, strerror(errno));
	}
}

static void try_opendir(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		blocked("opendir %s errno=%d (%s)", path, errno, strerror(errno));
		return;
	}
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	escaped("listed %s (%d entries)", path, n);
}

/* Names only (descriptor numbers): allowed; opening them is what matters. */
static void check_listing(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		blocked("opendir %s errno=%d (%s)", path, errno, strerror(errno));
		return;
	}
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	info("listed %s (%d entries: numbers only)", path, n);
}

static void check_readable_layout(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		blocked("open %s errno=%d (%s)", path, errno, strerror(errno));
		return;
	}
	close(fd);
	info("%s readable: init's address layout (gVisor serves it 0444)", path);
}

/* init's environment must read as nothing: init wiped it at start. */
static void check_init_environ(void)
{
	char buf[4096];
	ssize_t n = read_small("/proc/1/environ", buf, sizeof buf);
	if (n < 0) {
		blocked("read /proc/1/environ errno=%d (%s)", errno, strerror(errno));
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != 0) {
			size_t len = strnlen(buf + i, (size_t)(n - i));
			escaped("init's environment holds %.*s", (int)(len < 60 ? len : 60), buf + i);
			return;
		}
	}
	info("init's environment reads as %zd NUL bytes", n);
}

static void try_readlink(const char *path)
{
	char buf[512];
	ssize_t n = readlink(path, buf, sizeof buf - 1);
	if (n >= 0) {
		buf[n] = 0;
		escaped("readlink %s -> %s", path, buf);
	} else {
		blocked("readlink %s errno=%d (%s)", path, errno, strerror(errno));
	}
}

int main(void)
{
	try_open("/proc/1/mem", O_RDONLY);
	try_open("/proc/1/mem", O_RDWR);
	check_listing("/proc/1/fd");
	try_open("/proc/1/fd/0", O_WRONLY);
	try_open("/proc/1/fd/1", O_WRONLY);
	try_open("/proc/1/fd/2", O_WRONLY);
	check_listing("/proc/1/fdinfo");
	try_readlink("/proc/1/exe");
	try_readlink("/proc/1/cwd");
	try_readlink("/proc/1/root");
	try_opendir("/proc/1/root/");
	check_init_environ();
	check_readable_layout("/proc/1/maps");
	check_readable_layout("/proc/1/auxv");
	try_open("/proc/1/stack", O_RDONLY);
	try_open("/proc/1/syscall", O_RDONLY);
	try_open("/proc/1/exe", O_RDONLY);
	try_open("/proc/sysrq-trigger", O_WRONLY);
	try_open("/proc/sys/kernel/core_pattern", O_WRONLY);
	try_open("/proc/sys/kernel/modprobe", O_WRONLY);
	try_open("/proc/sys/vm/drop_caches", O_WRONLY);
	try_open("/proc/sys/kernel/hostname", O_WRONLY);
	try_open("/proc/kcore", O_RDONLY);
	try_open("/proc/kmsg", O_RDONLY);
	try_open("/sys/kernel/uevent_helper", O_WRONLY);
	try_open("/sys/fs/cgroup/release_agent", O_WRONLY);
	try_open("/sys/fs/cgroup/memory/release_agent", O_WRONLY);
	try_open("/sys/fs/cgroup/memory/memory.limit_in_bytes", O_WRONLY);
	try_open("/sys/fs/cgroup/pids/pids.max", O_WRONLY);
	try_open("/sys/fs/cgroup/cgroup.procs", O_WRONLY);
	char ka[256];
	if (read_small("/proc/kallsyms", ka, sizeof ka) > 0)
		excerpt("/proc/kallsyms starts", ka, strcspn(ka, "\n"));
	return finish();
}
