/* The local engine of the CLI: same sandbox and judging code as the
 * service, with paths derived from where the binary lives, so that
 * build/gavel works from a checkout without configuration. */
#include "cli/local_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/sandbox/cpuslot.h"
#include "languages/lang_pch.h"

#define CLI_STATE_DIR "/run/gavel/cli"

/* The folder holding this binary, from /proc/self/exe. */
static int exe_dir(char *out, size_t size, struct gv_err *err)
{
	ssize_t n = readlink("/proc/self/exe", out, size - 1);
	if (n < 0)
		return gv_err_errno(err, "readlink /proc/self/exe");
	out[n] = '\0';
	char *slash = strrchr(out, '/');
	if (!slash)
		return gv_err_set(err, GV_EINTERNAL, "odd executable path %s", out);
	*slash = '\0';
	return 0;
}

static int path_join(char *out, size_t size, const char *a, const char *b, struct gv_err *err)
{
	int n = snprintf(out, size, "%s/%s", a, b);
	if (n < 0 || (size_t)n >= size)
		return gv_err_set(err, GV_ELIMIT, "path too long: %s/%s", a, b);
	return 0;
}

int cli_local_load_languages(struct cli_local *l, struct gv_err *err)
{
	char dir[PATH_MAX];
	const char *env = getenv("GAVEL_LANGUAGES_DIR");
	if (env && *env) {
		if (strlen(env) >= sizeof(l->langs_dir))
			return gv_err_set(err, GV_ELIMIT, "GAVEL_LANGUAGES_DIR too long");
		strcpy(l->langs_dir, env);
	} else {
		if (exe_dir(dir, sizeof(dir), err) != 0 ||
		    path_join(l->langs_dir, sizeof(l->langs_dir), dir, "../languages", err) != 0)
			return -1;
	}
	if (lang_registry_load(&l->langs, l->langs_dir, err) != 0) {
		gv_err_prefix(err, "loading languages from %s", l->langs_dir);
		return -1;
	}
	return 0;
}

int cli_local_open(struct cli_local *l, struct gv_err *err)
{
	memset(l, 0, sizeof(*l));
	l->lock_fd = -1;
	if (geteuid() != 0)
		return gv_err_set(err, EPERM,
				  "gavel needs root to create gVisor sandboxes and cgroups; nothing was run");
	if (cli_local_load_languages(l, err) != 0)
		return -1;
	char dir[PATH_MAX];
	const char *init = getenv("GAVEL_INIT");
	if (init && *init) {
		if (strlen(init) >= sizeof(l->init_path))
			return gv_err_set(err, GV_ELIMIT, "GAVEL_INIT too long");
		strcpy(l->init_path, init);
	} else if (exe_dir(dir, sizeof(dir), err) != 0 ||
		   path_join(l->init_path, sizeof(l->init_path), dir, "gavel-init", err) != 0) {
		return -1;
	}
	/* The engine makes its own runsc and work roots; the lock's folder
	 * is ours. */
	if (mkdir("/run/gavel", 0700) != 0 && errno != EEXIST)
		return gv_err_errno(err, "mkdir /run/gavel");
	if (mkdir(CLI_STATE_DIR, 0700) != 0 && errno != EEXIST)
		return gv_err_errno(err, "mkdir %s", CLI_STATE_DIR);
	l->lock_fd = open(CLI_STATE_DIR "/lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (l->lock_fd < 0)
		return gv_err_errno(err, "open %s/lock", CLI_STATE_DIR);
	if (flock(l->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK)
			return gv_err_errno(err, "flock %s/lock", CLI_STATE_DIR);
		fprintf(stderr, "gavel: waiting for another gavel run/judge to finish\n");
		if (flock(l->lock_fd, LOCK_EX) != 0)
			return gv_err_errno(err, "flock %s/lock", CLI_STATE_DIR);
	}
	const char *pch = getenv("GAVEL_PCH_DIR");
	pch = pch ? pch : LANG_PCH_DEFAULT_DIR;
	if (*pch) {
		/* Built once per compiler version (seconds), then only checked;
		 * a failure costs speed only. */
		unsigned built = 0;
		char report[1024];
		struct gv_err perr;
		if (lang_pch_prepare(&l->langs, pch, &built, report, sizeof(report), &perr) != 0)
			fprintf(stderr, "gavel: no precompiled headers in %s: %s\n", pch, perr.msg);
		else if (report[0])
			fprintf(stderr, "gavel: precompiled headers not built: %s\n", report);
	}
	uint32_t cpu_slots;
	const char *slots = getenv("GAVEL_CPU_SLOTS");
	if (exec_cpuslot_parse(slots ? slots : "auto", &cpu_slots, err) != 0) {
		gv_err_prefix(err, "GAVEL_CPU_SLOTS");
		return -1;
	}
	const char *runsc = getenv("GAVEL_RUNSC");
	struct exec_engine_config cfg = {
		.runsc_path = runsc && *runsc ? runsc : "/usr/bin/runsc",
		.runsc_root = CLI_STATE_DIR "/runsc",
		.work_root = CLI_STATE_DIR "/work",
		.init_path = l->init_path,
		.cgroup_parent = "gavel-cli",
		.pch_dir = *pch ? pch : NULL,
		.cpu_slots = cpu_slots,
		/* Every run waits for it; a broken runsc fails the run itself. */
		.skip_runsc_check = true,
	};
	if (exec_engine_init(&l->engine, &cfg, err) != 0) {
		gv_err_prefix(err, "the sandbox cannot be set up, so nothing was run");
		return -1;
	}
	l->engine_up = true;
	return 0;
}

void cli_local_close(struct cli_local *l)
{
	if (!l)
		return;
	if (l->engine_up)
		exec_engine_fini(&l->engine);
	l->engine_up = false;
	lang_registry_free(&l->langs);
	if (l->lock_fd >= 0)
		close(l->lock_fd);
	l->lock_fd = -1;
}

const struct lang_def *cli_pick_language(const struct cli_local *l, const char *lang_id, const char *path,
					 struct gv_err *err)
{
	const struct lang_def *d;
	if (lang_id) {
		d = lang_find(&l->langs, lang_id);
		if (!d)
			gv_err_set(err, GV_ENOTFOUND, "unknown language '%s'", lang_id);
		return d;
	}
	d = lang_find_by_filename(&l->langs, path);
	if (!d)
		gv_err_set(err, GV_ENOTFOUND, "cannot tell the language of %s from its extension; use --lang",
			   path);
	return d;
}

int cli_read_file(const char *path, size_t max, char **out, size_t *len, struct gv_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gv_err_errno(err, "open %s", path);
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return gv_err_set(err, ENOMEM, "out of memory");
	}
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(buf);
				close(fd);
				return gv_err_set(err, GV_ELIMIT, "%s is larger than %zu bytes", path, max);
			}
			cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				close(fd);
				return gv_err_set(err, ENOMEM, "out of memory");
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			close(fd);
			return gv_err_errno(err, "read %s", path);
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > max) {
		free(buf);
		return gv_err_set(err, GV_ELIMIT, "%s is larger than %zu bytes", path, max);
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int cli_parse_seconds(const char *s, uint32_t *ms, struct gv_err *err)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0.001 || v > 86400)
		return gv_err_set(err, GV_EINVAL, "'%s' is not a number of seconds between 0.001 and 86400", s);
	*ms = (uint32_t)llround(v * 1000);
	return 0;
}

int cli_parse_uint(const char *s, uint32_t max, uint32_t *out, struct gv_err *err)
{
	char *end = NULL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v == 0 || v > max)
		return gv_err_set(err, GV_EINVAL, "'%s' is not a whole number between 1 and %u", s, max);
	*out = (uint32_t)v;
	return 0;
}
