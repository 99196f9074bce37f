/* GPU inventory, runsc GPU-proxy detection and device assignment
 * (executor/sandbox/gpu.h). */
#include "executor/sandbox/gpu.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLAGS_OUTPUT_MAX (256u * 1024u)
#define FLAGS_TIMEOUT_MS 10000

int exec_gpu_parse_ids(const char *text, struct exec_gpu_inventory *inv, struct gv_err *err)
{
	memset(inv, 0, sizeof(*inv));
	const char *p = text ? text : "";
	while (*p == ' ')
		p++;
	if (!*p)
		return 0;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			return gv_err_set(err, GV_ECONFIG, "executor.gpus: expected a device id at '%.16s'", p);
		unsigned v = 0;
		size_t digits = 0;
		while (*p >= '0' && *p <= '9') {
			v = v * 10 + (unsigned)(*p - '0');
			if (++digits > 3 || v > 255)
				return gv_err_set(err, GV_ECONFIG, "executor.gpus: device ids are 0..255");
			p++;
		}
		for (unsigned i = 0; i < inv->n; i++)
			if (inv->ids[i] == v)
				return gv_err_set(err, GV_ECONFIG, "executor.gpus: device %u listed twice", v);
		if (inv->n >= EXEC_GPU_MAX)
			return gv_err_set(err, GV_ECONFIG, "executor.gpus: at most %d devices", EXEC_GPU_MAX);
		inv->ids[inv->n++] = v;
		while (*p == ' ')
			p++;
		if (!*p)
			return 0;
		if (*p != ',')
			return gv_err_set(err, GV_ECONFIG, "executor.gpus: expected ',' at '%.16s'", p);
		p++;
	}
}

bool exec_gpu_flags_have_nvproxy(const char *out)
{
	/* Go's flag package prints "  -name" (newer runsc "  --name") at the
	 * start of a line, then the type or a newline: a whole word only, so
	 * -nvproxy-docker alone does not count. */
	for (const char *line = out; line && *line;) {
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '-') {
			p++;
			if (*p == '-')
				p++;
			if (strncmp(p, "nvproxy", 7) == 0 && (p[7] == '\0' || p[7] == ' ' || p[7] == '\t' ||
							     p[7] == '\n' || p[7] == '='))
				return true;
		}
		const char *nl = strchr(line, '\n');
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* `runsc flags` into a NUL-terminated buffer (caller frees): argv, a
 * constant environment, stdout and stderr on one pipe, bounded in size
 * and time. */
static char *runsc_flags(const char *runsc_path, struct gv_err *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return gv_err_errno(err, "pipe"), NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	char *const argv[] = { (char *)runsc_path, "flags", NULL };
	char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	pid_t pid;
	int rc = posix_spawn(&pid, runsc_path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		errno = rc;
		return gv_err_errno(err, "spawn %s flags", runsc_path), NULL;
	}
	char *buf = malloc(FLAGS_OUTPUT_MAX + 1);
	size_t len = 0;
	int64_t end = now_ms() + FLAGS_TIMEOUT_MS;
	bool timed_out = false;
	while (buf) {
		int64_t left = end - now_ms();
		if (left <= 0) {
			timed_out = true;
			break;
		}
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		int n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			timed_out = n == 0;
			break;
		}
		char tmp[4096];
		ssize_t r = read(p[0], tmp, sizeof(tmp));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t k = (size_t)r < FLAGS_OUTPUT_MAX - len ? (size_t)r : FLAGS_OUTPUT_MAX - len;
		memcpy(buf + len, tmp, k);
		len += k;
	}
	close(p[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!buf)
		return gv_err_set(err, ENOMEM, "out of memory"), NULL;
	buf[len] = '\0';
	if (timed_out || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(buf);
		return gv_err_set(err, GV_ESANDBOX, "`%s flags` %s", runsc_path,
				  timed_out ? "did not finish in time" : "failed"),
		       NULL;
	}
	return buf;
}

static int char_device(const char *path, struct stat *st, struct gv_err *err)
{
	if (stat(path, st) != 0)
		return gv_err_errno(err, "GPU device node %s", path);
	if (!S_ISCHR(st->st_mode))
		return gv_err_set(err, GV_ECONFIG, "GPU device node %s is not a character device", path);
	return 0;
}

int exec_gpu_inventory_init(struct exec_gpu_inventory *inv, const char *ids, bool simulated,
			    const char *runsc_path, const char *dev_dir, struct gv_err *err)
{
	if (exec_gpu_parse_ids(ids, inv, err) != 0)
		return -1;
	if (inv->n == 0) {
		if (simulated)
			return gv_err_set(err, GV_ECONFIG, "executor.gpu_simulated is set but executor.gpus lists no device");
		return 0;
	}
	if (simulated) {
		inv->simulated = true;
		return 0;
	}
	char *flags = runsc_flags(runsc_path, err);
	if (!flags) {
		gv_err_prefix(err, "executor.gpus declares GPUs; checking runsc for its GPU proxy (--nvproxy)");
		return -1;
	}
	bool have = exec_gpu_flags_have_nvproxy(flags);
	free(flags);
	if (!have)
		return gv_err_set(err, GV_ECONFIG,
				  "executor.gpus declares %u GPU(s) but the installed runsc (%s) has no GPU proxy: "
				  "`runsc flags` does not list --nvproxy. Refusing to start: a GPU job must never run "
				  "without it. Install a gVisor release with nvproxy, or remove executor.gpus",
				  inv->n, runsc_path);
	struct exec_gpu_node nodes[EXEC_GPU_NODES_MAX];
	size_t n;
	if (exec_gpu_device_nodes(dev_dir, inv->ids, inv->n, nodes, EXEC_GPU_NODES_MAX, &n, err) != 0) {
		gv_err_prefix(err, "executor.gpus");
		return -1;
	}
	return 0;
}

void exec_gpu_table_init(struct exec_gpu_table *t, const struct exec_gpu_inventory *inv)
{
	memset(t, 0, sizeof(*t));
	t->n = inv->n;
	memcpy(t->ids, inv->ids, sizeof(t->ids));
}

int exec_gpu_claim(struct exec_gpu_table *t, int worker, unsigned count, unsigned *out, struct gv_err *err)
{
	unsigned got = 0;
	for (unsigned i = 0; i < t->n && got < count; i++) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&t->owner[i], &expect, worker + 1, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			out[got++] = t->ids[i];
	}
	if (got == count)
		return 0;
	for (unsigned i = 0; i < t->n; i++)
		for (unsigned k = 0; k < got; k++)
			if (t->ids[i] == out[k])
				__atomic_store_n(&t->owner[i], 0, __ATOMIC_RELEASE);
	return gv_err_set(err, GV_ELIMIT, "%u GPU(s) asked, %u free on this node", count, got);
}

void exec_gpu_release(struct exec_gpu_table *t, int worker)
{
	for (unsigned i = 0; i < t->n; i++) {
		int expect = worker + 1;
		__atomic_compare_exchange_n(&t->owner[i], &expect, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
}

int exec_gpu_ids_text(const unsigned *ids, unsigned n, char *out, size_t size)
{
	size_t len = 0;
	if (size == 0)
		return -1;
	out[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		int k = snprintf(out + len, size - len, "%s%u", i ? "," : "", ids[i]);
		if (k < 0 || (size_t)k >= size - len)
			return -1;
		len += (size_t)k;
	}
	return 0;
}

static int add_node(const char *dev_dir, const char *name, bool optional, struct exec_gpu_node *out, size_t cap,
		    size_t *n, struct gv_err *err)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dev_dir, name);
	struct stat st;
	if (optional && stat(path, &st) != 0 && errno == ENOENT)
		return 0;
	if (char_device(path, &st, err) != 0)
		return -1;
	if (*n >= cap)
		return gv_err_set(err, GV_ELIMIT, "too many GPU device nodes");
	struct exec_gpu_node *d = &out[(*n)++];
	/* The path inside the sandbox is always /dev/<name>, whatever
	 * dev_dir the host (or a test) uses. */
	snprintf(d->path, sizeof(d->path), "/dev/%s", name);
	d->major = major(st.st_rdev);
	d->minor = minor(st.st_rdev);
	d->mode = 0666;
	return 0;
}

int exec_gpu_device_nodes(const char *dev_dir, const unsigned *ids, unsigned n, struct exec_gpu_node *out,
			  size_t cap, size_t *nout, struct gv_err *err)
{
	*nout = 0;
	for (unsigned i = 0; i < n; i++) {
		char name[24];
		snprintf(name, sizeof(name), "nvidia%u", ids[i]);
		if (add_node(dev_dir, name, false, out, cap, nout, err) != 0)
			return -1;
	}
	if (add_node(dev_dir, "nvidiactl", false, out, cap, nout, err) != 0 ||
	    add_node(dev_dir, "nvidia-uvm", false, out, cap, nout, err) != 0 ||
	    add_node(dev_dir, "nvidia-uvm-tools", true, out, cap, nout, err) != 0)
		return -1;
	return 0;
}
