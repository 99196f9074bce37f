/* env — the program's environment is built from scratch: PATH, LANG and HOME
 * only. Prints every variable (the driver checks the names) and flags
 * anything that looks like a host secret; also looks at pid 1's environment
 * and command line, which must not carry secrets either. */
#include "probe.h"

extern char **environ;

static const char *bad_words[] = {
	"GAVEL", "DATABASE", "REDIS", "PGPASS", "PGHOST", "PGUSER", "POSTGRES",
	"SECRET", "TOKEN", "PASSWORD", "API_KEY", "AWS_", "SSH_", "SUDO_",
	"postgres://", "postgresql://", "redis://", "KUBERNETES",
};

static void check_text(const char *where, const char *s)
{
	for (size_t i = 0; i < sizeof bad_words / sizeof bad_words[0]; i++)
		if (strstr(s, bad_words[i])) {
			escaped("%s carries '%s': %.80s", where, bad_words[i], s);
			return;
		}
}

int main(void)
{
	int n = 0;
	for (char **e = environ; e && *e; e++, n++) {
		printf("ENV %.300s\n", *e);
		check_text("environment", *e);
	}
	fflush(stdout);
	info("%d environment variables", n);

	char buf[16384];
	ssize_t len = read_small("/proc/1/environ", buf, sizeof buf);
	if (len < 0) {
		blocked("/proc/1/environ errno=%d (%s)", errno, strerror(errno));
	} else {
		info("/proc/1/environ readable, %zd bytes", len);
		for (ssize_t off = 0; off < len; off += (ssize_t)strlen(buf + off) + 1)
			check_text("pid 1 environment", buf + off);
	}
	len = read_small("/proc/1/cmdline", buf, sizeof buf);
	if (len > 0)
		for (ssize_t off = 0; off < len; off += (ssize_t)strlen(buf + off) + 1)
			check_text("pid 1 command line", buf + off);
	len = read_small("/proc/self/cmdline", buf, sizeof buf);
	if (len > 0)
		for (ssize_t off = 0; off < len; off += (ssize_t)strlen(buf + off) + 1)
			check_text("own command line", buf + off);
	return finish();
}
