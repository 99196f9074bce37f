/* The CPU ceiling of a group of sandboxes (executor/sandbox/cpu_ceiling.h).
 * It writes only the cgroup files of the CPU controller for a folder the
 * executor owns; everything it writes is a number it formats itself. */
#include "executor/sandbox/cpu_ceiling.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_file(const char *dir, const char *name, const char *value, struct gv_err *err)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return gv_err_set(err, GV_ELIMIT, "cgroup path too long");
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC); /* as a shell's > does */
	if (fd < 0)
		return gv_err_errno(err, "open %s", path);
	size_t len = strlen(value);
	ssize_t n = write(fd, value, len);
	int saved = errno;
	close(fd);
	if (n != (ssize_t)len) {
		errno = n < 0 ? saved : EIO;
		return gv_err_errno(err, "write %s to %s", value, path);
	}
	return 0;
}

/* The first line of dir/name, without its newline. */
static int read_line(const char *dir, const char *name, char *out, size_t size, struct gv_err *err)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return gv_err_set(err, GV_ELIMIT, "cgroup path too long");
	FILE *f = fopen(path, "re");
	if (!f)
		return gv_err_errno(err, "open %s", path);
	bool got = fgets(out, (int)size, f) != NULL;
	fclose(f);
	if (!got)
		return gv_err_set(err, GV_ESANDBOX, "%s is empty", path);
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

static int expect(const char *dir, const char *name, const char *want, struct gv_err *err)
{
	char got[128];
	if (read_line(dir, name, got, sizeof(got), err) != 0)
		return -1;
	if (strcmp(got, want) != 0)
		return gv_err_set(err, GV_ESANDBOX, "%s/%s reads '%s' after '%s' was written", dir, name, got, want);
	return 0;
}

/* mkdir -p of rel below base; with enable_cpu (cgroup v2), "+cpu" in the
 * cgroup.subtree_control of base and of every folder above the last one,
 * so that the CPU files exist where they are written. */
static int make_path(const char *base, const char *rel, bool enable_cpu, char *out, size_t size, struct gv_err *err)
{
	if (snprintf(out, size, "%s", base) >= (int)size)
		return gv_err_set(err, GV_ELIMIT, "cgroup path too long");
	const char *p = rel;
	while (*p) {
		size_t len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return gv_err_set(err, GV_EINVAL, "cgroup path '%s' is not a relative path of names", rel);
		if (enable_cpu && write_file(out, "cgroup.subtree_control", "+cpu", err) != 0)
			return -1;
		size_t used = strlen(out);
		if (used + 1 + len >= size)
			return gv_err_set(err, GV_ELIMIT, "cgroup path too long");
		out[used] = '/';
		memcpy(out + used + 1, p, len);
		out[used + 1 + len] = '\0';
		if (mkdir(out, 0755) != 0 && errno != EEXIST)
			return gv_err_errno(err, "mkdir %s", out);
		p += len;
		if (*p == '/')
			p++;
	}
	return 0;
}

int exec_cpu_ceiling_apply(const struct exec_cgroup *cg, const char *rel, unsigned pct, unsigned weight_pct,
			   struct gv_err *err)
{
	if (pct == 0 || pct > 100000 || weight_pct == 0 || weight_pct > 1000)
		return gv_err_set(err, GV_EINVAL, "CPU ceiling %u%% or weight %u%% out of range", pct, weight_pct);
	bool v1 = cg->ops == &exec_cgroup_v1_ops;
	char base[PATH_MAX], dir[PATH_MAX], quota[32], weight[32];
	if (snprintf(base, sizeof(base), "%s%s", cg->root, v1 ? "/cpu" : "") >= (int)sizeof(base))
		return gv_err_set(err, GV_ELIMIT, "cgroup path too long");
	if (make_path(base, rel, !v1, dir, sizeof(dir), err) != 0)
		return -1;
	unsigned long long q = (unsigned long long)pct * EXEC_CPU_CEILING_PERIOD_US / 100u;
	if (v1) {
		char period[32];
		snprintf(period, sizeof(period), "%u", EXEC_CPU_CEILING_PERIOD_US);
		snprintf(quota, sizeof(quota), "%llu", q);
		snprintf(weight, sizeof(weight), "%u", 1024u * weight_pct / 100u);
		if (write_file(dir, "cpu.cfs_period_us", period, err) != 0 ||
		    write_file(dir, "cpu.cfs_quota_us", quota, err) != 0 ||
		    write_file(dir, "cpu.shares", weight, err) != 0 || expect(dir, "cpu.cfs_period_us", period, err) != 0 ||
		    expect(dir, "cpu.cfs_quota_us", quota, err) != 0 || expect(dir, "cpu.shares", weight, err) != 0)
			return -1;
		return 0;
	}
	snprintf(quota, sizeof(quota), "%llu %u", q, EXEC_CPU_CEILING_PERIOD_US);
	snprintf(weight, sizeof(weight), "%u", weight_pct);
	if (write_file(dir, "cpu.max", quota, err) != 0 || write_file(dir, "cpu.weight", weight, err) != 0 ||
	    expect(dir, "cpu.max", quota, err) != 0 || expect(dir, "cpu.weight", weight, err) != 0)
		return -1;
	return 0;
}

unsigned exec_cpu_ceiling_clamp(unsigned quota_pct, unsigned ceiling_pct)
{
	if (quota_pct == 0 || quota_pct > ceiling_pct)
		return ceiling_pct;
	return quota_pct;
}
