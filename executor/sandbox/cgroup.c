/* Host cgroups of the sandboxes: v1 and v2 backends behind one ops struct.
 * Everything here reads or removes cgroups runsc created from
 * linux.cgroupsPath; the files read are kernel cgroupfs files, and every
 * read is bounded. */
#include "executor/sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool exec_cgroup_name_ok(const char *s)
{
	size_t n = 0;
	if (!s)
		return false;
	for (; s[n]; n++) {
		char c = s[n];
		if (n >= 64)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return false;
	}
	return n > 0;
}

/* A relative path of name_ok components separated by single slashes. */
static bool rel_ok(const char *rel)
{
	char buf[256];
	if (!rel || snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf) || !buf[0])
		return false;
	if (buf[0] == '/' || buf[strlen(buf) - 1] == '/' || strstr(buf, "//"))
		return false;
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save))
		if (!exec_cgroup_name_ok(c))
			return false;
	return true;
}

int exec_cgroup_path(char *out, size_t outsz, const char *parent, const char *tenant,
		     const char *sandbox, struct gv_err *err)
{
	if (!rel_ok(parent))
		return gv_err_set(err, GV_EINVAL, "cgroup parent is not a safe relative path");
	if (!exec_cgroup_name_ok(tenant))
		return gv_err_set(err, GV_EINVAL, "tenant name not usable in a cgroup path");
	if (!exec_cgroup_name_ok(sandbox))
		return gv_err_set(err, GV_EINVAL, "sandbox id not usable in a cgroup path");
	int n = snprintf(out, outsz, "%s/%s/%s", parent, tenant, sandbox);
	if (n < 0 || (size_t)n >= outsz)
		return gv_err_set(err, GV_ELIMIT, "cgroup path too long");
	return 0;
}

/* Reads a small cgroupfs file into buf (NUL-terminated). */
static int read_small(const char *path, char *buf, size_t bufsz, struct gv_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return gv_err_errno(err, "open %s", path);
	size_t len = 0;
	while (len + 1 < bufsz) {
		ssize_t n = read(fd, buf + len, bufsz - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gv_err_errno(err, "read %s", path);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || (*end && *end != '\n' && *end != ' '))
		return -1;
	*out = v;
	return 0;
}

static int read_u64_file(const char *path, uint64_t *out, struct gv_err *err)
{
	char buf[64];
	if (read_small(path, buf, sizeof(buf), err) != 0)
		return -1;
	if (parse_u64(buf, out) != 0)
		return gv_err_set(err, GV_EPROTO, "%s: not a number", path);
	return 0;
}

/* Finds "key N" among the lines of a flat-keyed cgroup file. */
static int read_keyed(const char *path, const char *key, uint64_t *out, struct gv_err *err)
{
	char buf[4096];
	if (read_small(path, buf, sizeof(buf), err) != 0)
		return -1;
	size_t klen = strlen(key);
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return parse_u64(line + klen + 1, out) == 0
				       ? 0
				       : gv_err_set(err, GV_EPROTO, "%s: bad %s", path, key);
		line = nl ? nl + 1 : NULL;
	}
	return gv_err_set(err, GV_ENOTFOUND, "%s has no %s", path, key);
}

static int join(char *out, size_t outsz, const char *a, const char *b, const char *c,
		const char *d, struct gv_err *err)
{
	int n = snprintf(out, outsz, "%s/%s%s%s%s%s", a, b, c ? "/" : "", c ? c : "",
			 d ? "/" : "", d ? d : "");
	if (n < 0 || (size_t)n >= outsz)
		return gv_err_set(err, GV_ELIMIT, "cgroup path too long");
	return 0;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Kills every task listed in dirfd's cgroup.procs. Only used on cgroups
 * under Gavel's own parent, whose every task is a sandbox process. */
static void kill_procs_at(int dirfd)
{
	int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	long pid;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 1)
			kill((pid_t)pid, SIGKILL);
	fclose(f);
}

/* rmdir of the cgroup directory name under parent_fd, sub-cgroups first.
 * cgroupfs holds only control files and sub-cgroup directories, so the
 * recursion descends directories only, never following links. */
static int rmdir_tree_at(int parent_fd, const char *name, bool kill_tasks, unsigned *removed,
			 int depth)
{
	if (depth > 16)
		return -1;
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		close(fd);
		return -1;
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (rmdir_tree_at(fd, de->d_name, kill_tasks, removed, depth + 1) != 0)
			rc = -1;
	}
	closedir(d);
	if (kill_tasks)
		kill_procs_at(fd);
	close(fd);
	/* EBUSY while the last tasks of a just-killed sandbox are leaving. */
	for (int i = 0; i < 100; i++) {
		if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0) {
			if (removed)
				(*removed)++;
			return rc;
		}
		if (errno == ENOENT)
			return rc;
		if (errno != EBUSY)
			return -1;
		sleep_ms(10);
	}
	return -1;
}

/* Calls fn for each hierarchy dir under cg->root (v1: one per mounted
 * controller; v2: root itself). */
static int each_hierarchy(const struct exec_cgroup *cg, bool v2,
			  int (*fn)(int hier_fd, void *arg), void *arg)
{
	if (v2) {
		int fd = open(cg->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		int rc = fn(fd, arg);
		close(fd);
		return rc;
	}
	DIR *d = opendir(cg->root);
	if (!d)
		return -1;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "unified") == 0)
			continue;
		/* Follows the cpu -> cpu,cpuacct style links: the root is
		 * the host's cgroup mount, not sandbox-controlled. */
		int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fn(fd, arg) != 0)
			rc = -1;
		close(fd);
	}
	closedir(d);
	return rc;
}

struct remove_arg {
	const char *rel;
	bool kill_tasks;
	bool whole; /* remove the children of rel but keep rel itself */
	unsigned removed;
};

static int remove_in_hier(int hier_fd, void *varg)
{
	struct remove_arg *a = varg;
	char parent[256];
	snprintf(parent, sizeof(parent), "%s", a->rel);
	char *slash = strrchr(parent, '/');
	const char *leaf = a->rel;
	int pfd;
	if (a->whole) {
		/* Sweep: every child of rel, rel itself kept. */
		pfd = openat(hier_fd, a->rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0)
			return errno == ENOENT ? 0 : -1;
		int dfd = dup(pfd);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (!d) {
			if (dfd >= 0)
				close(dfd);
			close(pfd);
			return -1;
		}
		int rc = 0;
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			if (rmdir_tree_at(pfd, de->d_name, a->kill_tasks, &a->removed, 0) != 0)
				rc = -1;
		}
		closedir(d);
		close(pfd);
		return rc;
	}
	if (slash) {
		*slash = '\0';
		leaf = slash + 1;
		pfd = openat(hier_fd, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0)
			return errno == ENOENT ? 0 : -1;
	} else {
		pfd = dup(hier_fd);
		if (pfd < 0)
			return -1;
	}
	int rc = rmdir_tree_at(pfd, leaf, a->kill_tasks, &a->removed, 0);
	close(pfd);
	return rc;
}

static int remove_common(const struct exec_cgroup *cg, const char *rel, bool v2,
			 struct gv_err *err)
{
	if (!rel_ok(rel))
		return gv_err_set(err, GV_EINVAL, "cgroup path %s is not safe", rel ? rel : "(null)");
	struct remove_arg a = {.rel = rel};
	if (each_hierarchy(cg, v2, remove_in_hier, &a) != 0)
		return gv_err_set(err, GV_ESANDBOX, "could not remove cgroup %s", rel);
	return 0;
}

/* ---- v1 ---- */

static int v1_check(const struct exec_cgroup *cg, struct gv_err *err)
{
	static const char *const need[][2] = {
		{"memory", "memory.oom_control"}, {"memory", "memory.max_usage_in_bytes"},
		/* pids.max exists only below the root: the hierarchy is what we check. */
		{"pids", "cgroup.procs"}, {"cpu", "cpu.cfs_quota_us"}, {"cpuacct", "cpuacct.usage"},
	};
	char path[PATH_MAX];
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (join(path, sizeof(path), cg->root, need[i][0], need[i][1], NULL, err) != 0)
			return -1;
		if (!exists(path))
			return gv_err_set(err, GV_ESANDBOX, "cgroup v1: controller %s missing (%s)",
					  need[i][0], path);
	}
	return 0;
}

static int v1_oom_kills(const struct exec_cgroup *cg, const char *rel, uint64_t *out,
			struct gv_err *err)
{
	char path[PATH_MAX];
	if (join(path, sizeof(path), cg->root, "memory", rel, "memory.oom_control", err) != 0)
		return -1;
	return read_keyed(path, "oom_kill", out, err);
}

static int v1_peak_memory(const struct exec_cgroup *cg, const char *rel, uint64_t *out,
			  struct gv_err *err)
{
	char path[PATH_MAX];
	if (join(path, sizeof(path), cg->root, "memory", rel, "memory.max_usage_in_bytes", err) != 0)
		return -1;
	return read_u64_file(path, out, err);
}

static int v1_cpu_usage(const struct exec_cgroup *cg, const char *rel, uint64_t *out,
			struct gv_err *err)
{
	char path[PATH_MAX];
	if (join(path, sizeof(path), cg->root, "cpuacct", rel, "cpuacct.usage", err) != 0)
		return -1;
	return read_u64_file(path, out, err);
}

static int v1_remove(const struct exec_cgroup *cg, const char *rel, struct gv_err *err)
{
	return remove_common(cg, rel, false, err);
}

const struct exec_cgroup_ops exec_cgroup_v1_ops = {
	.name = "v1",
	.check = v1_check,
	.oom_kills = v1_oom_kills,
	.peak_memory = v1_peak_memory,
	.cpu_usage = v1_cpu_usage,
	.remove = v1_remove,
};

/* ---- v2 ---- */

static int v2_check(const struct exec_cgroup *cg, struct gv_err *err)
{
	char path[PATH_MAX], buf[1024];
	if (join(path, sizeof(path), cg->root, "cgroup.controllers", NULL, NULL, err) != 0 ||
	    read_small(path, buf, sizeof(buf), err) != 0)
		return -1;
	static const char *const need[] = {"memory", "pids", "cpu"};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		bool found = false;
		char copy[1024];
		memcpy(copy, buf, sizeof(copy));
		char *save = NULL;
		for (char *w = strtok_r(copy, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
			if (strcmp(w, need[i]) == 0)
				found = true;
		if (!found)
			return gv_err_set(err, GV_ESANDBOX, "cgroup v2: controller %s not available", need[i]);
	}
	return 0;
}

static int v2_oom_kills(const struct exec_cgroup *cg, const char *rel, uint64_t *out,
			struct gv_err *err)
{
	char path[PATH_MAX];
	if (join(path, sizeof(path), cg->root, rel, "memory.events", NULL, err) != 0)
		return -1;
	return read_keyed(path, "oom_kill", out, err);
}

static int v2_peak_memory(const struct exec_cgroup *cg, const char *rel, uint64_t *out,
			  struct gv_err *err)
{
	char path[PATH_MAX];
	if (join(path, sizeof(path), cg->root, rel, "memory.peak", NULL, err) != 0)
		return -1;
	return read_u64_file(path, out, err);
}

static int v2_cpu_usage(const struct exec_cgroup *cg, const char *rel, uint64_t *out,
			struct gv_err *err)
{
	char path[PATH_MAX];
	uint64_t us;
	if (join(path, sizeof(path), cg->root, rel, "cpu.stat", NULL, err) != 0 ||
	    read_keyed(path, "usage_usec", &us, err) != 0)
		return -1;
	*out = us * 1000;
	return 0;
}

static int v2_remove(const struct exec_cgroup *cg, const char *rel, struct gv_err *err)
{
	return remove_common(cg, rel, true, err);
}

const struct exec_cgroup_ops exec_cgroup_v2_ops = {
	.name = "v2",
	.check = v2_check,
	.oom_kills = v2_oom_kills,
	.peak_memory = v2_peak_memory,
	.cpu_usage = v2_cpu_usage,
	.remove = v2_remove,
};

int exec_cgroup_detect(struct exec_cgroup *cg, const char *root, struct gv_err *err)
{
	if (!root)
		root = "/sys/fs/cgroup";
	int n = snprintf(cg->root, sizeof(cg->root), "%s", root);
	if (n < 0 || (size_t)n >= sizeof(cg->root))
		return gv_err_set(err, GV_EINVAL, "cgroup root too long");
	char path[PATH_MAX];
	if (join(path, sizeof(path), root, "cgroup.controllers", NULL, NULL, err) != 0)
		return -1;
	cg->ops = exists(path) ? &exec_cgroup_v2_ops : &exec_cgroup_v1_ops;
	if (cg->ops->check(cg, err) != 0) {
		gv_err_prefix(err, "cgroups under %s", root);
		return -1;
	}
	return 0;
}

int exec_cgroup_sweep(const struct exec_cgroup *cg, const char *parent, unsigned *removed,
		      struct gv_err *err)
{
	if (!rel_ok(parent))
		return gv_err_set(err, GV_EINVAL, "cgroup parent is not a safe relative path");
	struct remove_arg a = {.rel = parent, .kill_tasks = true, .whole = true};
	int rc = each_hierarchy(cg, cg->ops == &exec_cgroup_v2_ops, remove_in_hier, &a);
	if (removed)
		*removed = a.removed;
	if (rc != 0)
		return gv_err_set(err, GV_ESANDBOX, "could not sweep cgroups under %s", parent);
	return 0;
}

void exec_cgroup_remove_parent_if_empty(const struct exec_cgroup *cg, const char *rel)
{
	char parent[256];
	if (!rel_ok(rel) || snprintf(parent, sizeof(parent), "%s", rel) >= (int)sizeof(parent))
		return;
	char *slash = strrchr(parent, '/');
	if (!slash)
		return;
	*slash = '\0';
	struct gv_err ignored;
	/* A tenant cgroup with a live sandbox is EBUSY/ENOTEMPTY: leave it. */
	if (cg->ops == &exec_cgroup_v2_ops) {
		char path[PATH_MAX];
		if (join(path, sizeof(path), cg->root, parent, NULL, NULL, &ignored) == 0)
			rmdir(path);
		return;
	}
	DIR *d = opendir(cg->root);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "unified") == 0)
			continue;
		char path[PATH_MAX];
		if (join(path, sizeof(path), cg->root, de->d_name, parent, NULL, &ignored) == 0)
			rmdir(path);
	}
	closedir(d);
}
