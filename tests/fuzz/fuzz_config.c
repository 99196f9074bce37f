/* libFuzzer target for the config loader (gv_config_load_text) over the
 * real option tables of the three daemons. The input's first byte picks
 * the table; the text runs to the first NUL; what follows is the
 * environment, NUL-separated "NAME=value" strings. Checks beyond "does not
 * crash": a loaded config dumps (gv_config_dump) to text that loads again
 * and dumps to the same text, and reloading the same input
 * (gv_config_reload) changes nothing and is allowed. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "executor/daemon/daemon.h"
#include "frontend/config.h"
#include "scheduler/sched.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENV_MAX 16

union any_config {
	struct fe_config fe;
	struct sched_config sched;
	struct exec_daemon_config exec;
};

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz: invariant broken: %s: %s\n", what, detail ? detail : "");
	abort();
}

/* The dump of cfg as a malloc'd string. */
static char *dump(const struct gv_config_option *t, size_t n, const void *cfg, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct gv_err err;
	if (!f)
		abort();
	if (gv_config_dump(t, n, cfg, f, &err) != 0)
		fail("gv_config_dump", err.msg);
	if (fclose(f) != 0)
		abort();
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const struct gv_config_option *t;
	size_t n;
	switch (data[0] % 3) {
	case 0: t = fe_config_table; n = fe_config_table_len; break;
	case 1: t = sched_config_table; n = sched_config_table_len; break;
	default: t = exec_daemon_config_table; n = exec_daemon_config_table_len; break;
	}
	const char *text = (const char *)data + 1;
	size_t rest = size - 1;
	const char *nul = memchr(text, '\0', rest);
	size_t tlen = nul ? (size_t)(nul - text) : rest;

	/* The environment: copies, each NUL-terminated. */
	char *env[ENV_MAX + 1] = { NULL };
	size_t nenv = 0;
	for (const char *p = nul ? nul + 1 : text + rest, *end = text + rest; p < end && nenv < ENV_MAX;) {
		const char *q = memchr(p, '\0', (size_t)(end - p));
		size_t l = q ? (size_t)(q - p) : (size_t)(end - p);
		if (!(env[nenv++] = strndup(p, l)))
			abort();
		p += l + 1;
	}

	union any_config a, b, c;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	struct gv_err err;
	if (gv_config_load_text(t, n, &a, "fuzz.conf", text, tlen, env, &err) == 0) {
		/* The same input again: a reload that may change nothing. */
		if (gv_config_load_text(t, n, &b, "fuzz.conf", text, tlen, env, &err) != 0)
			fail("the same input loads once only", err.msg);
		if (gv_config_reload(t, n, &a, &b, &err) != 0)
			fail("reloading the same input", err.msg);
		size_t l1, l2;
		char *d1 = dump(t, n, &a, &l1);
		if (gv_config_load_text(t, n, &c, "dump", d1, l1, NULL, &err) != 0) {
			fprintf(stderr, "%s\n", d1);
			fail("a dump does not load", err.msg);
		}
		char *d2 = dump(t, n, &c, &l2);
		if (l1 != l2 || memcmp(d1, d2, l1) != 0) {
			fprintf(stderr, "first:\n%s\nsecond:\n%s\n", d1, d2);
			fail("a dump loads to a different config", NULL);
		}
		free(d1);
		free(d2);
	}
	gv_config_free(t, n, &a);
	gv_config_free(t, n, &b);
	gv_config_free(t, n, &c);
	for (size_t i = 0; i < nenv; i++)
		free(env[i]);
	return 0;
}
