/* Where the CLI finds the local stack that `make run` left: reads
 * var/local.env (written by deploy/local/gavel-local start) once, and
 * answers settings the flags and the environment did not give. */
#include "cli/local_stack.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

#define LOCAL_FILE_MAX 8192

static const char *const local_keys[CLI_LOCAL_KEYS] = { CLI_DATABASE_URL, CLI_REDIS_URL, CLI_API_URL, CLI_API_KEY };

struct local_stack {
	bool loaded;
	bool found;                    /* a file was found and read */
	char path[PATH_MAX];           /* where it was looked for; "" if nowhere */
	char problem[GV_ERR_MSG_MAX];  /* why a file that exists was not used */
	struct cli_local_values values;
};

static struct local_stack local;

static int key_index(const char *name, size_t len)
{
	for (size_t i = 0; i < CLI_LOCAL_KEYS; i++)
		if (strlen(local_keys[i]) == len && memcmp(local_keys[i], name, len) == 0)
			return (int)i;
	return -1;
}

int cli_local_parse(const char *text, size_t len, struct cli_local_values *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	size_t pos = 0;
	for (int line = 1; pos < len; line++) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + (nl != NULL);
		if (n > 0 && s[n - 1] == '\r')
			n--;
		if (n == 0 || s[0] == '#')
			continue;
		if (memchr(s, '\0', n))
			return gv_err_set(err, GV_EINVAL, "line %d: NUL byte", line);
		const char *eq = memchr(s, '=', n);
		if (!eq || eq == s)
			return gv_err_set(err, GV_EINVAL, "line %d is not KEY=VALUE", line);
		int k = key_index(s, (size_t)(eq - s));
		if (k < 0)
			continue;
		size_t vlen = n - (size_t)(eq + 1 - s);
		if (vlen >= CLI_LOCAL_VALUE_MAX)
			return gv_err_set(err, GV_ELIMIT, "line %d: value too long", line);
		memcpy(out->v[k], eq + 1, vlen);
		out->v[k][vlen] = '\0';
	}
	return 0;
}

/* Sets path to the file's expected location; returns -1 when there is no
 * place to look (gavel runs outside a checkout and GAVEL_VAR is unset). */
static int local_path(char *path, size_t size)
{
	const char *var = getenv("GAVEL_VAR");
	int n;
	if (var && var[0]) {
		n = snprintf(path, size, "%s/local.env", var);
		return n < 0 || (size_t)n >= size ? -1 : 0;
	}
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return -1;
	exe[len] = '\0';
	/* <checkout>/<build folder>/gavel: cut two path elements. */
	for (int i = 0; i < 2; i++) {
		char *slash = strrchr(exe, '/');
		if (!slash || slash == exe)
			return -1;
		*slash = '\0';
	}
	char marker[PATH_MAX];
	n = snprintf(marker, sizeof(marker), "%s/deploy/local/gavel-local", exe);
	if (n < 0 || (size_t)n >= sizeof(marker) || access(marker, F_OK) != 0)
		return -1;
	n = snprintf(path, size, "%s/var/local.env", exe);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Reads the file at local.path into local.values.
 * Security: the file holds the owner role's password and tells the CLI
 * where to connect and which key to send. It is opened without following a
 * symlink and used only when it is a regular file owned by us or root and
 * writable by nobody else, so another user cannot redirect the operator's
 * commands to a server of theirs. */
static int read_local(struct gv_err *err)
{
	int fd = open(local.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return gv_err_errno(err, "open %s", local.path);
	}
	int rc = -1;
	char buf[LOCAL_FILE_MAX];
	struct stat st;
	if (fstat(fd, &st) != 0) {
		gv_err_errno(err, "fstat %s", local.path);
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 077)) {
		/* It holds the owner's database password: nobody else may
		 * read it, let alone write it. */
		gv_err_set(err, GV_EINVAL, "%s is not a regular file owned by this user or root and private to it (mode 0600)",
			   local.path);
		goto out;
	}
	if (st.st_size >= (off_t)sizeof(buf)) {
		gv_err_set(err, GV_ELIMIT, "%s is larger than %d bytes", local.path, LOCAL_FILE_MAX);
		goto out;
	}
	size_t got = 0;
	while (got < sizeof(buf)) {
		ssize_t r = read(fd, buf + got, sizeof(buf) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			gv_err_errno(err, "read %s", local.path);
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got == sizeof(buf)) {
		gv_err_set(err, GV_ELIMIT, "%s is larger than %d bytes", local.path, LOCAL_FILE_MAX);
		goto out;
	}
	if (cli_local_parse(buf, got, &local.values, err) != 0) {
		gv_err_prefix(err, "%s", local.path);
		memset(&local.values, 0, sizeof(local.values));
		goto out;
	}
	local.found = true;
	rc = 0;
out:
	close(fd);
	return rc;
}

static void load_once(void)
{
	if (local.loaded)
		return;
	local.loaded = true;
	if (local_path(local.path, sizeof(local.path)) != 0) {
		local.path[0] = '\0';
		return;
	}
	struct gv_err err;
	gv_err_clear(&err);
	if (read_local(&err) != 0)
		snprintf(local.problem, sizeof(local.problem), "%s", err.msg);
}

const char *cli_setting(const char *name)
{
	const char *env = getenv(name);
	if (env && env[0])
		return env;
	int k = key_index(name, strlen(name));
	if (k < 0)
		return NULL;
	load_once();
	return local.values.v[k][0] ? local.values.v[k] : NULL;
}

bool cli_setting_is_local(const char *name)
{
	const char *env = getenv(name);
	if (env && env[0])
		return false;
	int k = key_index(name, strlen(name));
	if (k < 0)
		return false;
	load_once();
	return local.values.v[k][0] != '\0';
}

void cli_setting_missing(const char *cmd, const char *what, const char *flag, const char *name)
{
	load_once();
	fprintf(stderr, "%s: %s: pass %s or set %s", cmd, what, flag, name);
	if (local.problem[0]) {
		fprintf(stderr, ".\n%s: the local stack's settings were not used: %s\n", cmd, local.problem);
	} else if (local.found) {
		fprintf(stderr, " (%s has no %s)\n", local.path, name);
	} else if (local.path[0]) {
		fprintf(stderr, ", or start the local stack with `make run` (it is not running: no %s)\n",
			local.path);
	} else {
		fprintf(stderr, ", or run the gavel of a checkout where `make run` started the local stack "
				"(or set GAVEL_VAR to its var folder)\n");
	}
}

void cli_setting_hint(const char *cmd, const char *name)
{
	if (!cli_setting_is_local(name))
		return;
	fprintf(stderr, "%s: %s was read from %s, which `make run` left: is the local stack still running? "
			"Start it with `make run`, or set %s\n", cmd, name, local.path, name);
}
