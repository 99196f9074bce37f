/* host_files — nothing of the host's file system is visible beyond the
 * read-only toolchain folders of /usr and a generated /etc: no shadow file, no home directories,
 * no database or Redis data or sockets, no source checkout, no host
 * identity. stdin: "REPO <host path of the checkout>" and "TMPDIR <host path
 * of the driver's temporary folder>" lines, paths that must not exist here.
 * Prints HOSTNAME / ETC_HOSTNAME / MACHINE_ID lines that the driver compares
 * with the host's own values. */
#include "probe.h"

#include <sys/utsname.h>

/* Files that must not be readable. */
static const char *secret_files[] = {
	"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/sudoers",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ed25519_key",
	"/etc/ssl/private/ssl-cert-snakeoil.key",
	"/root/.bash_history", "/root/.ssh/id_rsa", "/root/.ssh/authorized_keys",
	"/var/lib/postgresql/.pgpass", "/var/lib/redis/dump.rdb",
	"/var/log/auth.log", "/var/log/syslog",
};

/* Directories that must not exist (or at least be empty). */
static const char *host_dirs[] = {
	"/root", "/home", "/work", "/work/main", "/work/shared", "/var/lib/postgresql",
	"/var/lib/redis", "/var/lib/docker", "/var/run/postgresql", "/run/postgresql",
	"/run/redis", "/etc/postgresql", "/etc/redis", "/etc/ssh", "/etc/gavel",
	"/etc/sudoers.d", "/boot", "/srv", "/mnt", "/media", "/opt", "/var/log",
	"/var/lib/gavel", "/var/lib/runsc", "/run/runsc", "/var/run/runsc",
	/* Only the toolchain folders of /usr are mounted: not the site's own
	 * software and configuration, nor administration tools. */
	"/usr/local", "/usr/local/etc", "/usr/local/bin", "/usr/src", "/usr/sbin", "/usr/games",
};

static void secret_file(const char *path)
{
	char buf[256];
	ssize_t n = read_small(path, buf, sizeof buf);
	if (n < 0)
		blocked("read %s errno=%d (%s)", path, errno, strerror(errno));
	else
		escaped("read %s: %zd bytes", path, n);
}

static void host_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		blocked("opendir %s errno=%d (%s)", path, errno, strerror(errno));
		return;
	}
	int n = 0;
	char first[128] = "";
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!n)
			snprintf(first, sizeof first, "%.100s", de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		escaped("host directory %s is visible with %d entries (first: %s)", path, n, first);
	else
		info("%s exists but is empty", path);
}

static void list_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		info("ls %s: %s", path, strerror(errno));
		return;
	}
	char line[2048];
	size_t o = 0;
	struct dirent *de;
	while ((de = readdir(d)) && o + 300 < sizeof line)
		o += (size_t)snprintf(line + o, sizeof line - o, " %s", de->d_name);
	closedir(d);
	info("ls %s:%s", path, line);
}

static void print_value(const char *tag, const char *path)
{
	char buf[256];
	ssize_t n = read_small(path, buf, sizeof buf);
	if (n < 0) {
		printf("%s <%s>\n", tag, strerror(errno));
	} else {
		buf[strcspn(buf, "\n")] = 0;
		printf("%s %s\n", tag, buf);
	}
	fflush(stdout);
}

int main(void)
{
	char params[4096], repo[1024], tmpdir[1024];
	read_stdin(params, sizeof params);
	param(params, "REPO", repo, sizeof repo);
	param(params, "TMPDIR", tmpdir, sizeof tmpdir);

	for (size_t i = 0; i < sizeof secret_files / sizeof secret_files[0]; i++)
		secret_file(secret_files[i]);
	for (size_t i = 0; i < sizeof host_dirs / sizeof host_dirs[0]; i++)
		host_dir(host_dirs[i]);
	if (repo[0]) {
		host_dir(repo);
		char p[1200];
		snprintf(p, sizeof p, "%s/Makefile", repo);
		secret_file(p);
	}
	if (tmpdir[0])
		host_dir(tmpdir);

	/* The generated /etc holds only what toolchains need. */
	list_dir("/");
	list_dir("/etc");
	char pw[65536];
	if (read_small("/etc/passwd", pw, sizeof pw) >= 0) {
		if (strstr(pw, "\npostgres:") || strstr(pw, "\nredis:") || strstr(pw, "\nsshd:"))
			escaped("/etc/passwd is the host's (it names service accounts)");
		else
			blocked("/etc/passwd names no host service accounts");
	}

	/* Identity of the host. */
	struct utsname u;
	if (uname(&u) == 0) {
		printf("HOSTNAME %s\n", u.nodename);
		info("kernel %s %s", u.release, u.version);
	}
	print_value("ETC_HOSTNAME", "/etc/hostname");
	print_value("MACHINE_ID", "/etc/machine-id");
	print_value("DBUS_MACHINE_ID", "/var/lib/dbus/machine-id");
	print_value("BOOT_ID", "/proc/sys/kernel/random/boot_id");

	/* Mount table: must not reveal host paths (the driver checks). */
	char mi[16384];
	ssize_t n = read_small("/proc/self/mountinfo", mi, sizeof mi);
	if (n > 0) {
		char *save = NULL;
		for (char *l = strtok_r(mi, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			printf("MOUNT %s\n", l);
	} else {
		info("/proc/self/mountinfo: %s", n < 0 ? strerror(errno) : "empty");
	}
	fflush(stdout);
	return finish();
}
