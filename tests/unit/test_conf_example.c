/* deploy/gavel.conf.example is the documentation of every option: it must
 * load with each daemon's real option table, name every option of every
 * table, and show each option's default, and options shared by several
 * daemons must have one default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/config.h"
#include "executor/daemon/daemon.h"
#include "frontend/config.h"
#include "scheduler/sched.h"

struct daemon_table {
	const char *name;
	const struct gv_config_option *table;
	size_t n;
	size_t size; /* of its config struct */
};

static struct daemon_table tables[3];

static void example_path(char *out, size_t size)
{
	const char *root = getenv("GAVEL_ROOT");
	snprintf(out, size, "%s/deploy/gavel.conf.example", root ? root : ".");
}

/* Reads the example's keys as "section.key" strings (NUL-separated). */
static char *example_keys(size_t *count)
{
	char path[4096];
	example_path(path, sizeof(path));
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s (run from the repository root or set GAVEL_ROOT)", path);
	size_t cap = 1 << 16, used = 0;
	char *keys = calloc(1, cap);
	char line[4096], section[128] = "";
	*count = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t");
		if (*p == '#' || *p == '\n' || *p == '\0')
			continue;
		if (*p == '[') {
			sscanf(p, "[%127[^]]]", section);
			continue;
		}
		char key[128];
		if (sscanf(p, "%127[a-z0-9_.]", key) != 1)
			continue;
		int n = snprintf(keys + used, cap - used, "%s%s%s", section, section[0] ? "." : "", key);
		assert_true(n > 0 && used + (size_t)n + 1 < cap);
		used += (size_t)n + 1;
		(*count)++;
	}
	fclose(f);
	return keys;
}

static void example__loads_with_every_daemon_table(void **state)
{
	(void)state;
	char path[4096];
	example_path(path, sizeof(path));
	for (size_t t = 0; t < 3; t++) {
		void *cfg = calloc(1, tables[t].size);
		struct gv_err err = { 0 };
		if (gv_config_load(tables[t].table, tables[t].n, cfg, path, NULL, &err) != 0)
			fail_msg("%s: %s", tables[t].name, err.msg);
		gv_config_free(tables[t].table, tables[t].n, cfg);
		free(cfg);
	}
}

static void example__names_every_option(void **state)
{
	(void)state;
	size_t count;
	char *keys = example_keys(&count);
	for (size_t t = 0; t < 3; t++) {
		for (size_t i = 0; i < tables[t].n; i++) {
			const char *k = keys;
			bool found = false;
			for (size_t j = 0; j < count && !found; j++, k += strlen(k) + 1)
				found = strcmp(k, tables[t].table[i].name) == 0;
			if (!found)
				fail_msg("%s option '%s' is not in gavel.conf.example", tables[t].name,
					 tables[t].table[i].name);
		}
	}
	free(keys);
}

/* Loading the example gives the same values as the table's defaults: the
 * example shows defaults, not wishes. Compared through the dump, which
 * prints every type the same way. */
static void example__values_are_the_defaults(void **state)
{
	(void)state;
	char path[4096];
	example_path(path, sizeof(path));
	for (size_t t = 0; t < 3; t++) {
		void *loaded = calloc(1, tables[t].size), *dflt = calloc(1, tables[t].size);
		struct gv_err err = { 0 };
		assert_int_equal(gv_config_load(tables[t].table, tables[t].n, loaded, path, NULL, &err), 0);
		assert_int_equal(gv_config_defaults(tables[t].table, tables[t].n, dflt, &err), 0);
		char *a = NULL, *b = NULL;
		size_t al = 0, bl = 0;
		FILE *fa = open_memstream(&a, &al), *fb = open_memstream(&b, &bl);
		assert_int_equal(gv_config_dump(tables[t].table, tables[t].n, loaded, fa, &err), 0);
		assert_int_equal(gv_config_dump(tables[t].table, tables[t].n, dflt, fb, &err), 0);
		fclose(fa);
		fclose(fb);
		if (strcmp(a, b) != 0)
			fail_msg("%s: the example's values differ from the defaults:\n%s\n--- defaults:\n%s",
				 tables[t].name, a, b);
		free(a);
		free(b);
		gv_config_free(tables[t].table, tables[t].n, loaded);
		gv_config_free(tables[t].table, tables[t].n, dflt);
		free(loaded);
		free(dflt);
	}
}

static void example__shared_options__one_default(void **state)
{
	(void)state;
	for (size_t a = 0; a < 3; a++)
		for (size_t b = a + 1; b < 3; b++)
			for (size_t i = 0; i < tables[a].n; i++)
				for (size_t j = 0; j < tables[b].n; j++) {
					const struct gv_config_option *x = &tables[a].table[i];
					const struct gv_config_option *y = &tables[b].table[j];
					if (strcmp(x->name, y->name) != 0)
						continue;
					if (strcmp(x->def ? x->def : "", y->def ? y->def : "") != 0)
						fail_msg("option '%s': default '%s' in %s, '%s' in %s", x->name,
							 x->def ? x->def : "", tables[a].name, y->def ? y->def : "",
							 tables[b].name);
				}
}

int main(void)
{
	tables[0] = (struct daemon_table){ "gavel-frontend", fe_config_table, fe_config_table_len,
					   sizeof(struct fe_config) };
	tables[1] = (struct daemon_table){ "gavel-scheduler", sched_config_table, sched_config_table_len,
					   sizeof(struct sched_config) };
	tables[2] = (struct daemon_table){ "gavel-executor", exec_daemon_config_table,
					   exec_daemon_config_table_len, sizeof(struct exec_daemon_config) };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(example__loads_with_every_daemon_table),
		cmocka_unit_test(example__names_every_option),
		cmocka_unit_test(example__values_are_the_defaults),
		cmocka_unit_test(example__shared_options__one_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
