/* Unit tests of the pure and filesystem-only parts of the sandbox host side:
 * the OCI config (every property SECURITY.md relies on), the skeleton root
 * and generated /etc, cgroup path building and the v1/v2 backends over a
 * fake cgroup tree, and the runsc argv. No runsc, no root needed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor/sandbox/bundle.h"
#include "executor/sandbox/cgroup.h"
#include "executor/sandbox/cpu_ceiling.h"
#include "executor/sandbox/runsc.h"
#include "tests/support/testutil.h"

static const char *const etc_binds[] = {"/etc/java-17-openjdk", "/etc/alternatives", NULL};
static const char *const usr_dirs[] = {"/usr/bin", "/usr/lib", "/usr/share", NULL};

static struct exec_bundle_params params(void)
{
	return (struct exec_bundle_params){
		.hostname = "gavel",
		.cgroups_path = "/gavel/t1/gv-0123",
		.init_path = "/opt/gavel/gavel-init",
		.etc_path = "/var/lib/gavel/gv-0123/etc",
		.box_path = "/var/lib/gavel/gv-0123/box",
		.memory_limit_bytes = 256u << 20,
		.pids_limit = 4096,
		.cpu_quota_us = 100000,
		.cpu_period_us = 100000,
		.tmp_size_bytes = 64u << 20,
		.nofile = 4096,
		.nproc = 4096,
		.fsize_bytes = 256u << 20,
		.etc_binds = etc_binds,
		.usr_dirs = usr_dirs,
		.seccomp = true,
	};
}

static json_t *config(void)
{
	struct exec_bundle_params p = params();
	struct gv_err err;
	json_t *c = exec_bundle_config(&p, &err);
	if (!c)
		fail_msg("config: %s", err.msg);
	return c;
}

static json_t *path(json_t *j, const char *a, const char *b, const char *c)
{
	j = json_object_get(j, a);
	if (b)
		j = json_object_get(j, b);
	if (c)
		j = json_object_get(j, c);
	return j;
}

/* init holds exactly its six supervision capabilities, none inheritable
 * or ambient (so nothing it starts can hold one), and noNewPrivileges. */
static void bundle__config__init_caps_only_no_inheritable(void **state)
{
	(void)state;
	json_t *c = config();
	json_t *caps = path(c, "process", "capabilities", NULL);
	assert_non_null(caps);
	static const char *const held[] = {"bounding", "effective", "permitted"};
	static const char *const want[] = {"CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL",
					   "CAP_FOWNER", "CAP_DAC_OVERRIDE"};
	for (size_t i = 0; i < 3; i++) {
		json_t *set = json_object_get(caps, held[i]);
		assert_true(json_is_array(set));
		assert_int_equal(json_array_size(set), 6);
		for (size_t k = 0; k < 6; k++)
			assert_string_equal(json_string_value(json_array_get(set, k)), want[k]);
	}
	assert_int_equal(json_array_size(json_object_get(caps, "inheritable")), 0);
	assert_int_equal(json_array_size(json_object_get(caps, "ambient")), 0);
	assert_true(json_is_true(path(c, "process", "noNewPrivileges", NULL)));
	json_decref(c);
}

static void bundle__config__readonly_root_init_uid_0(void **state)
{
	(void)state;
	json_t *c = config();
	assert_true(json_is_true(path(c, "root", "readonly", NULL)));
	assert_string_equal(json_string_value(path(c, "root", "path", NULL)), "rootfs");
	assert_int_equal(json_integer_value(path(c, "process", "user", "uid")), 0);
	assert_int_equal(json_integer_value(path(c, "process", "user", "gid")), 0);
	assert_int_equal(json_array_size(path(c, "process", "user", "additionalGids")), 0);
	json_t *args = path(c, "process", "args", NULL);
	assert_int_equal(json_array_size(args), 1);
	assert_string_equal(json_string_value(json_array_get(args, 0)), "/gavel-init");
	assert_false(json_is_true(path(c, "process", "terminal", NULL)));
	json_decref(c);
}

static void bundle__config__env_is_exactly_three(void **state)
{
	(void)state;
	json_t *c = config();
	json_t *env = path(c, "process", "env", NULL);
	assert_int_equal(json_array_size(env), 3);
	assert_string_equal(json_string_value(json_array_get(env, 0)), "PATH=/usr/bin:/bin");
	assert_string_equal(json_string_value(json_array_get(env, 1)), "LANG=C.UTF-8");
	assert_string_equal(json_string_value(json_array_get(env, 2)), "HOME=/tmp");
	json_decref(c);
}

static json_t *find_mount(json_t *c, const char *dest)
{
	json_t *m = json_object_get(c, "mounts");
	size_t i;
	json_t *v;
	json_array_foreach(m, i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "destination")), dest) == 0)
			return v;
	}
	return NULL;
}

static bool has_opt(json_t *mount, const char *opt)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(mount, "options"), i, v)
	{
		if (strcmp(json_string_value(v), opt) == 0)
			return true;
	}
	return false;
}

static void bundle__config__expected_mounts(void **state)
{
	(void)state;
	json_t *c = config();
	static const struct {
		const char *dest, *type, *src;
		bool ro;
	} want[] = {
		{"/usr/bin", "bind", "/usr/bin", true},
		{"/usr/lib", "bind", "/usr/lib", true},
		{"/usr/share", "bind", "/usr/share", true},
		{"/etc", "bind", "/var/lib/gavel/gv-0123/etc", true},
		{"/etc/java-17-openjdk", "bind", "/etc/java-17-openjdk", true},
		{"/etc/alternatives", "bind", "/etc/alternatives", true},
		{"/box", "bind", "/var/lib/gavel/gv-0123/box", false},
		{"/gavel-init", "bind", "/opt/gavel/gavel-init", true},
	};
	assert_int_equal(json_array_size(json_object_get(c, "mounts")), 10);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		json_t *m = find_mount(c, want[i].dest);
		if (!m)
			fail_msg("no mount at %s", want[i].dest);
		assert_string_equal(json_string_value(json_object_get(m, "type")), want[i].type);
		assert_string_equal(json_string_value(json_object_get(m, "source")), want[i].src);
		assert_true(has_opt(m, want[i].ro ? "ro" : "rw"));
		assert_false(has_opt(m, want[i].ro ? "rw" : "ro"));
		assert_true(has_opt(m, "nosuid"));
		assert_true(has_opt(m, "nodev"));
	}
	json_t *tmp = find_mount(c, "/tmp");
	assert_string_equal(json_string_value(json_object_get(tmp, "type")), "tmpfs");
	assert_true(has_opt(tmp, "size=67108864"));
	assert_true(has_opt(tmp, "mode=1777"));
	assert_true(has_opt(tmp, "nosuid"));
	assert_non_null(find_mount(c, "/proc"));
	/* Nothing of the host beyond these: no /sys, /dev, /run, /var, /home. */
	assert_null(find_mount(c, "/sys"));
	assert_null(find_mount(c, "/run"));
	assert_null(find_mount(c, "/var"));
	/* Only the toolchain folders of /usr: never the whole of it, nor
	 * /usr/local (site configuration and package managers' tokens). */
	assert_null(find_mount(c, "/usr"));
	assert_null(find_mount(c, "/usr/local"));
	json_decref(c);
}

/* The host's /usr folders bound into a sandbox: /usr/bin among them, each
 * one folder deep, and never /usr/local, /usr/sbin or /usr/src. */
static void bundle__usr_dirs__allowlist_only(void **state)
{
	(void)state;
	const char *dirs[EXEC_BUNDLE_MAX_USR_DIRS + 1];
	exec_bundle_default_usr_dirs(dirs);
	bool has_bin = false;
	for (size_t i = 0; dirs[i]; i++) {
		assert_int_equal(strncmp(dirs[i], "/usr/", 5), 0);
		assert_null(strchr(dirs[i] + 5, '/'));
		if (!strcmp(dirs[i], "/usr/local") || !strcmp(dirs[i], "/usr/sbin") || !strcmp(dirs[i], "/usr/src"))
			fail_msg("%s is bound into every sandbox", dirs[i]);
		has_bin |= strcmp(dirs[i], "/usr/bin") == 0;
	}
	assert_true(has_bin);
}

static void bundle__config__namespaces_cgroup_resources(void **state)
{
	(void)state;
	json_t *c = config();
	json_t *ns = path(c, "linux", "namespaces", NULL);
	static const char *const want[] = {"pid", "ipc", "uts", "mount", "network"};
	assert_int_equal(json_array_size(ns), 5);
	for (size_t i = 0; i < 5; i++) {
		json_t *n = json_array_get(ns, i);
		assert_string_equal(json_string_value(json_object_get(n, "type")), want[i]);
		assert_null(json_object_get(n, "path")); /* new, never joined */
	}
	assert_string_equal(json_string_value(path(c, "linux", "cgroupsPath", NULL)), "/gavel/t1/gv-0123");
	json_t *res = path(c, "linux", "resources", NULL);
	assert_int_equal(json_integer_value(path(res, "memory", "limit", NULL)), 256 << 20);
	assert_int_equal(json_integer_value(path(res, "memory", "swap", NULL)), 256 << 20);
	assert_int_equal(json_integer_value(path(res, "pids", "limit", NULL)), 4096);
	assert_int_equal(json_integer_value(path(res, "cpu", "quota", NULL)), 100000);
	assert_int_equal(json_integer_value(path(res, "cpu", "period", NULL)), 100000);
	json_decref(c);
}

static void bundle__config__rlimits_backstop(void **state)
{
	(void)state;
	json_t *c = config();
	json_t *rl = path(c, "process", "rlimits", NULL);
	bool nofile = false, core = false;
	size_t i;
	json_t *v;
	json_array_foreach(rl, i, v)
	{
		const char *t = json_string_value(json_object_get(v, "type"));
		assert_int_equal(json_integer_value(json_object_get(v, "hard")),
				 json_integer_value(json_object_get(v, "soft")));
		if (strcmp(t, "RLIMIT_NOFILE") == 0)
			nofile = json_integer_value(json_object_get(v, "hard")) == 4096;
		if (strcmp(t, "RLIMIT_CORE") == 0)
			core = json_integer_value(json_object_get(v, "hard")) == 0;
	}
	assert_true(nofile);
	assert_true(core);
	json_decref(c);
}

static void bundle__config__seccomp_allowlist(void **state)
{
	(void)state;
	json_t *c = config();
	json_t *sc = path(c, "linux", "seccomp", NULL);
	assert_string_equal(json_string_value(json_object_get(sc, "defaultAction")), "SCMP_ACT_ERRNO");
	json_t *rule = json_array_get(json_object_get(sc, "syscalls"), 0);
	assert_string_equal(json_string_value(json_object_get(rule, "action")), "SCMP_ACT_ALLOW");
	json_t *names = json_object_get(rule, "names");
	static const char *const denied[] = {"mount", "umount2", "pivot_root", "unshare", "setns",
					     "ptrace", "bpf", "perf_event_open", "userfaultfd",
					     "keyctl", "kexec_load", "init_module", "reboot",
					     "io_uring_setup", "process_vm_readv", "chroot"};
	static const char *const needed[] = {"execve", "clone", "wait4", "seccomp", "prctl",
					     "setrlimit", "prlimit64", "mmap", "futex", "pipe2"};
	for (size_t d = 0; d < sizeof(denied) / sizeof(denied[0]); d++) {
		size_t i;
		json_t *v;
		json_array_foreach(names, i, v)
		{
			if (strcmp(json_string_value(v), denied[d]) == 0)
				fail_msg("%s is allowed", denied[d]);
		}
	}
	for (size_t n = 0; n < sizeof(needed) / sizeof(needed[0]); n++) {
		bool found = false;
		size_t i;
		json_t *v;
		json_array_foreach(names, i, v)
		{
			found |= strcmp(json_string_value(v), needed[n]) == 0;
		}
		if (!found)
			fail_msg("%s is not allowed", needed[n]);
	}
	json_decref(c);
}

static void bundle__config__bad_params_refused(void **state)
{
	(void)state;
	struct gv_err err;
	struct exec_bundle_params p = params();
	p.pids_limit = 64; /* panics the Sentry */
	assert_null(exec_bundle_config(&p, &err));
	p = params();
	p.memory_limit_bytes = 0;
	assert_null(exec_bundle_config(&p, &err));
	p = params();
	p.box_path = "relative/box";
	assert_null(exec_bundle_config(&p, &err));
	p = params();
	p.init_path = NULL;
	assert_null(exec_bundle_config(&p, &err));
}

static char tmpdir[] = "/tmp/gavel-unit-XXXXXX";

static void rm_rf(const char *p)
{
	if (test_rm_rf(p) != 0)
		fprintf(stderr, "# could not remove %s\n", p);
}

static void bundle__skeleton__layout(void **state)
{
	(void)state;
	char dir[sizeof(tmpdir)];
	memcpy(dir, tmpdir, sizeof(tmpdir));
	assert_non_null(mkdtemp(dir));
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	struct gv_err err;
	if (exec_bundle_write_skeleton(fd, etc_binds, usr_dirs, &err) != 0)
		fail_msg("skeleton: %s", err.msg);
	struct stat st;
	/* A mount point for each /usr folder, and nothing else under usr. */
	for (size_t i = 0; usr_dirs[i]; i++) {
		char p[64];
		snprintf(p, sizeof(p), "rootfs%s", usr_dirs[i]);
		assert_int_equal(fstatat(fd, p, &st, AT_SYMLINK_NOFOLLOW), 0);
		assert_true(S_ISDIR(st.st_mode));
	}
	assert_int_equal(fstatat(fd, "rootfs/usr/local", &st, AT_SYMLINK_NOFOLLOW), -1);
	static const char *const dirs[] = {"usr", "etc", "tmp", "box", "proc", "dev", "sys"};
	for (size_t i = 0; i < 7; i++) {
		char p[64];
		snprintf(p, sizeof(p), "rootfs/%s", dirs[i]);
		assert_int_equal(fstatat(fd, p, &st, AT_SYMLINK_NOFOLLOW), 0);
		assert_true(S_ISDIR(st.st_mode));
	}
	char link[64];
	ssize_t n = readlinkat(fd, "rootfs/bin", link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "usr/bin");
	n = readlinkat(fd, "rootfs/lib64", link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "usr/lib64");
	assert_int_equal(fstatat(fd, "rootfs/gavel-init", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));

	char buf[256] = "";
	int pf = openat(fd, "etc/passwd", O_RDONLY);
	assert_true(pf >= 0);
	assert_true(read(pf, buf, sizeof(buf) - 1) > 0);
	close(pf);
	assert_non_null(strstr(buf, "nobody:x:65534:65534:"));
	assert_int_equal(fstatat(fd, "etc/group", &st, 0), 0);
	assert_int_equal(fstatat(fd, "etc/hosts", &st, 0), 0);
	assert_int_equal(fstatat(fd, "etc/nsswitch.conf", &st, 0), 0);
	assert_int_equal(fstatat(fd, "etc/ld.so.cache", &st, 0), 0);
	assert_true(st.st_size > 0);
	assert_int_equal(fstatat(fd, "etc/java-17-openjdk", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* Nothing of the host's /etc beyond these. */
	assert_int_equal(fstatat(fd, "etc/shadow", &st, 0), -1);
	close(fd);
	rm_rf(dir);
}

static void cgroup__path__table(void **state)
{
	(void)state;
	static const struct {
		const char *parent, *tenant, *sandbox, *want; /* want NULL: refused */
	} cases[] = {
		{"gavel", "acme", "gv-01", "gavel/acme/gv-01"},
		{"gavel/node1", "t_2", "gv-01", "gavel/node1/t_2/gv-01"},
		{"gavel", "..", "gv-01", NULL},
		{"gavel", "a/b", "gv-01", NULL},
		{"gavel", "", "gv-01", NULL},
		{"gavel", "acme", "gv.01", NULL},
		{"/gavel", "acme", "gv-01", NULL},
		{"gavel/", "acme", "gv-01", NULL},
		{"gavel//x", "acme", "gv-01", NULL},
		{"gavel", "a\nb", "gv-01", NULL},
		{"gavel", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "x", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[256];
		struct gv_err err;
		int rc = exec_cgroup_path(out, sizeof(out), cases[i].parent, cases[i].tenant,
					  cases[i].sandbox, &err);
		if (cases[i].want) {
			assert_int_equal(rc, 0);
			assert_string_equal(out, cases[i].want);
		} else if (rc != -1) {
			fail_msg("case %zu accepted: %s", i, out);
		}
	}
}

static void put(const char *root, const char *rel, const char *content)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	char d[PATH_MAX];
	snprintf(d, sizeof(d), "%s", p);
	for (char *s = d + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(d, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void cgroup__v1_fake_tree__detect_read_remove(void **state)
{
	(void)state;
	char root[sizeof(tmpdir)];
	memcpy(root, tmpdir, sizeof(tmpdir));
	assert_non_null(mkdtemp(root));
	put(root, "memory/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
	put(root, "memory/memory.max_usage_in_bytes", "0\n");
	put(root, "cpu/cpu.cfs_quota_us", "-1\n");
	put(root, "cpuacct/cpuacct.usage", "0\n");

	struct exec_cgroup cg;
	struct gv_err err;
	/* pids hierarchy missing: fail closed. */
	assert_int_equal(exec_cgroup_detect(&cg, root, &err), -1);
	assert_non_null(strstr(err.msg, "pids"));
	put(root, "pids/cgroup.procs", "");
	if (exec_cgroup_detect(&cg, root, &err) != 0)
		fail_msg("detect: %s", err.msg);
	assert_string_equal(cg.ops->name, "v1");

	put(root, "memory/gavel/t/gv-1/memory.oom_control",
	    "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
	put(root, "memory/gavel/t/gv-1/memory.max_usage_in_bytes", "123456\n");
	put(root, "cpuacct/gavel/t/gv-1/cpuacct.usage", "987654321\n");
	uint64_t v;
	assert_int_equal(cg.ops->oom_kills(&cg, "gavel/t/gv-1", &v, &err), 0);
	assert_int_equal(v, 2);
	assert_int_equal(cg.ops->peak_memory(&cg, "gavel/t/gv-1", &v, &err), 0);
	assert_int_equal(v, 123456);
	assert_int_equal(cg.ops->cpu_usage(&cg, "gavel/t/gv-1", &v, &err), 0);
	assert_int_equal(v, 987654321);
	/* A missing cgroup is an error, never "0 OOM kills". */
	assert_int_equal(cg.ops->oom_kills(&cg, "gavel/t/gv-2", &v, &err), -1);
	rm_rf(root);
}

static void cgroup__v2_fake_tree__detect_and_read(void **state)
{
	(void)state;
	char root[sizeof(tmpdir)];
	memcpy(root, tmpdir, sizeof(tmpdir));
	assert_non_null(mkdtemp(root));
	put(root, "cgroup.controllers", "cpuset cpu io memory hugetlb\n");
	struct exec_cgroup cg;
	struct gv_err err;
	assert_int_equal(exec_cgroup_detect(&cg, root, &err), -1); /* no pids */
	put(root, "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma\n");
	if (exec_cgroup_detect(&cg, root, &err) != 0)
		fail_msg("detect: %s", err.msg);
	assert_string_equal(cg.ops->name, "v2");
	put(root, "gavel/t/gv-1/memory.events", "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n");
	put(root, "gavel/t/gv-1/cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n");
	uint64_t v;
	assert_int_equal(cg.ops->oom_kills(&cg, "gavel/t/gv-1", &v, &err), 0);
	assert_int_equal(v, 1);
	assert_int_equal(cg.ops->cpu_usage(&cg, "gavel/t/gv-1", &v, &err), 0);
	assert_int_equal(v, 1500000);
	rm_rf(root);
}

static void expect_file(const char *root, const char *rel, const char *want)
{
	char p[PATH_MAX], got[128] = "";
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(got, 1, sizeof(got) - 1, f);
	fclose(f);
	got[n] = '\0';
	assert_string_equal(got, want);
}

/* A fake tree holds the files a real cgroupfs makes at mkdir. */
static void ceiling__v1_fake_tree__quota_period_shares(void **state)
{
	(void)state;
	char root[sizeof(tmpdir)];
	memcpy(root, tmpdir, sizeof(tmpdir));
	assert_non_null(mkdtemp(root));
	put(root, "memory/memory.oom_control", "oom_kill 0\n");
	put(root, "memory/memory.max_usage_in_bytes", "0\n");
	put(root, "cpu/cpu.cfs_quota_us", "-1\n");
	put(root, "cpuacct/cpuacct.usage", "0\n");
	put(root, "pids/cgroup.procs", "");
	put(root, "cpu/gavel/kn1/cpu.cfs_period_us", "100000");
	put(root, "cpu/gavel/kn1/cpu.cfs_quota_us", "-1");
	put(root, "cpu/gavel/kn1/cpu.shares", "1024");
	struct exec_cgroup cg;
	struct gv_err err;
	assert_int_equal(exec_cgroup_detect(&cg, root, &err), 0);
	if (exec_cpu_ceiling_apply(&cg, "gavel/kn1", 150, 25, &err) != 0)
		fail_msg("apply: %s", err.msg);
	expect_file(root, "cpu/gavel/kn1/cpu.cfs_quota_us", "150000");
	expect_file(root, "cpu/gavel/kn1/cpu.cfs_period_us", "100000");
	expect_file(root, "cpu/gavel/kn1/cpu.shares", "256");
	/* Where the files cannot be written, nothing starts. */
	assert_int_equal(exec_cpu_ceiling_apply(&cg, "gavel/kn2", 150, 25, &err), -1);
	assert_int_equal(exec_cpu_ceiling_apply(&cg, "gavel/../kn1", 150, 25, &err), -1);
	assert_int_equal(exec_cpu_ceiling_apply(&cg, "gavel/kn1", 0, 25, &err), -1);
	rm_rf(root);
}

static void ceiling__v2_fake_tree__enables_cpu_above(void **state)
{
	(void)state;
	char root[sizeof(tmpdir)];
	memcpy(root, tmpdir, sizeof(tmpdir));
	assert_non_null(mkdtemp(root));
	put(root, "cgroup.controllers", "cpu memory pids\n");
	put(root, "cgroup.subtree_control", "");
	put(root, "gavel/cgroup.subtree_control", "");
	put(root, "gavel/kn1/cpu.max", "max 100000");
	put(root, "gavel/kn1/cpu.weight", "100");
	struct exec_cgroup cg;
	struct gv_err err;
	assert_int_equal(exec_cgroup_detect(&cg, root, &err), 0);
	if (exec_cpu_ceiling_apply(&cg, "gavel/kn1", 100, 25, &err) != 0)
		fail_msg("apply: %s", err.msg);
	expect_file(root, "gavel/kn1/cpu.max", "100000 100000");
	expect_file(root, "gavel/kn1/cpu.weight", "25");
	expect_file(root, "cgroup.subtree_control", "+cpu");
	expect_file(root, "gavel/cgroup.subtree_control", "+cpu");
	rm_rf(root);
}

static void ceiling__clamp__never_above_never_none(void **state)
{
	(void)state;
	assert_int_equal(exec_cpu_ceiling_clamp(0, 100), 100);
	assert_int_equal(exec_cpu_ceiling_clamp(50, 100), 50);
	assert_int_equal(exec_cpu_ceiling_clamp(100, 100), 100);
	assert_int_equal(exec_cpu_ceiling_clamp(400, 150), 150);
}

static void cgroup__remove__empty_dirs_bottom_up(void **state)
{
	(void)state;
	char root[sizeof(tmpdir)];
	memcpy(root, tmpdir, sizeof(tmpdir));
	assert_non_null(mkdtemp(root));
	put(root, "cgroup.controllers", "cpu memory pids\n");
	struct exec_cgroup cg;
	struct gv_err err;
	assert_int_equal(exec_cgroup_detect(&cg, root, &err), 0);
	/* Directories only (a real cgroupfs's files vanish with rmdir). */
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/gavel", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/gavel/t", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/gavel/t/gv-1", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/gavel/t/gv-1/sub", root);
	mkdir(p, 0755);
	assert_int_equal(cg.ops->remove(&cg, "gavel/t/gv-1", &err), 0);
	struct stat st;
	assert_int_equal(stat(p, &st), -1);
	snprintf(p, sizeof(p), "%s/gavel/t", root);
	assert_int_equal(stat(p, &st), 0);
	exec_cgroup_remove_parent_if_empty(&cg, "gavel/t/gv-1");
	assert_int_equal(stat(p, &st), -1);
	assert_int_equal(cg.ops->remove(&cg, "../etc", &err), -1);
	rm_rf(root);
}

static void runsc__argv__global_flags_first(void **state)
{
	(void)state;
	struct exec_reaper rp = {0};
	struct exec_runsc r = {.path = "/usr/bin/runsc", .root = "/run/gavel", .platform = "ptrace",
			       .file_access_exclusive = true, .reaper = &rp};
	const char *extra[] = {"delete", "--force", "gv-1", NULL};
	const char *argv[32];
	struct gv_err err;
	assert_int_equal(exec_runsc_argv(&r, extra, argv, 32, &err), 0);
	static const char *const want[] = {"/usr/bin/runsc", "--root", "/run/gavel", "--network=none",
					   "--oci-seccomp", "--platform", "ptrace",
					   "--file-access-mounts=exclusive", "delete", "--force",
					   "gv-1", NULL};
	for (size_t i = 0; want[i]; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[11]);
	assert_int_equal(exec_runsc_argv(&r, extra, argv, 5, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bundle__config__init_caps_only_no_inheritable),
		cmocka_unit_test(bundle__config__readonly_root_init_uid_0),
		cmocka_unit_test(bundle__config__env_is_exactly_three),
		cmocka_unit_test(bundle__config__expected_mounts),
		cmocka_unit_test(bundle__config__namespaces_cgroup_resources),
		cmocka_unit_test(bundle__config__rlimits_backstop),
		cmocka_unit_test(bundle__config__seccomp_allowlist),
		cmocka_unit_test(bundle__config__bad_params_refused),
		cmocka_unit_test(bundle__usr_dirs__allowlist_only),
		cmocka_unit_test(bundle__skeleton__layout),
		cmocka_unit_test(cgroup__path__table),
		cmocka_unit_test(cgroup__v1_fake_tree__detect_read_remove),
		cmocka_unit_test(cgroup__v2_fake_tree__detect_and_read),
		cmocka_unit_test(cgroup__remove__empty_dirs_bottom_up),
		cmocka_unit_test(ceiling__v1_fake_tree__quota_period_shares),
		cmocka_unit_test(ceiling__v2_fake_tree__enables_cpu_above),
		cmocka_unit_test(ceiling__clamp__never_above_never_none),
		cmocka_unit_test(runsc__argv__global_flags_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
