/* identity — who the program runs as: a non-root uid and gid, no
 * supplementary root group, empty capability sets, noNewPrivileges, a
 * seccomp filter, its own pid namespace with gavel-init as pid 1. */
#include "probe.h"

#include <sys/prctl.h>

static void caps(void)
{
	char buf[8192];
	if (read_small("/proc/self/status", buf, sizeof buf) < 0) {
		info("/proc/self/status: %s", strerror(errno));
		return;
	}
	static const char *keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		char *p = strstr(buf, keys[i]);
		if (!p) {
			info("%s absent", keys[i]);
			continue;
		}
		unsigned long long v = strtoull(p + strlen(keys[i]), NULL, 16);
		if (v)
			escaped("%s %016llx: capabilities are not empty", keys[i], v);
		else
			blocked("%s 0", keys[i]);
	}
	char *s = strstr(buf, "Seccomp:");
	if (s)
		info("status %.*s", (int)strcspn(s, "\n"), s);
	s = strstr(buf, "NoNewPrivs:");
	if (s)
		info("status %.*s", (int)strcspn(s, "\n"), s);
}

int main(void)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;
	getresuid(&r, &e, &s);
	getresgid(&rg, &eg, &sg);
	info("uid %d/%d/%d gid %d/%d/%d", (int)r, (int)e, (int)s, (int)rg, (int)eg, (int)sg);
	if (r == 0 || e == 0 || s == 0)
		escaped("runs with uid 0");
	else
		blocked("uid is not 0");
	if (rg == 0 || eg == 0 || sg == 0)
		escaped("runs with gid 0");
	else
		blocked("gid is not 0");
	gid_t groups[64];
	int n = getgroups(64, groups);
	for (int i = 0; i < n; i++)
		if (groups[i] == 0)
			escaped("supplementary group 0");
	info("%d supplementary groups", n);

	caps();

	int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (nnp == 1)
		blocked("no_new_privs is set");
	else
		escaped("no_new_privs is not set (%d)", nnp);

	int sec = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	if (sec == 2)
		blocked("a seccomp filter is installed");
	else
		escaped("no seccomp filter: PR_GET_SECCOMP = %d (%s)", sec, sec < 0 ? strerror(errno) : "mode");

	/* A pid namespace of our own: pid 1 is gavel-init, few processes. */
	char cmd[256];
	ssize_t c = read_small("/proc/1/cmdline", cmd, sizeof cmd);
	if (c > 0) {
		for (ssize_t i = 0; i < c; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		info("pid 1: %s", cmd);
		if (strstr(cmd, "systemd") || strstr(cmd, "/sbin/init"))
			escaped("pid 1 is the host's init: %s", cmd);
	} else {
		info("/proc/1/cmdline: %s", c < 0 ? strerror(errno) : "empty");
	}
	int procs = 0;
	DIR *d = opendir("/proc");
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
				procs++;
		closedir(d);
	}
	info("pid %d, %d processes visible", (int)getpid(), procs);
	if (procs > 32)
		escaped("%d processes visible: not a private pid namespace", procs);
	char cg[1024];
	if (read_small("/proc/self/cgroup", cg, sizeof cg) > 0)
		excerpt("cgroup", cg, strlen(cg));
	return finish();
}
