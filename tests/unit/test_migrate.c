/* Unit tests of the pure part of common/migrate.c: which files count,
 * file-name parsing, ordering, what schema_migrations may say, and error
 * positions turned into line numbers. No database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>

#include "common/migrate.h"

struct name_case {
	const char *file;
	int ok;
	int version;
	const char *name;
};

static const struct name_case name_cases[] = {
	{ "0001_core.sql", 1, 1, "core" },
	{ "0042_add_quotas.sql", 1, 42, "add_quotas" },
	{ "123456789_x.sql", 1, 123456789, "x" },
	{ "0010_v2_fix.sql", 1, 10, "v2_fix" },
	{ "0002_a1.sql", 1, 2, "a1" },
	{ "001_short.sql", 0, 0, NULL },         /* fewer than 4 digits */
	{ "1234567890_long.sql", 0, 0, NULL },   /* more than 9 digits */
	{ "0000_zero.sql", 0, 0, NULL },         /* version 0 */
	{ "0001-core.sql", 0, 0, NULL },         /* '-' instead of '_' */
	{ "0001_.sql", 0, 0, NULL },             /* empty name */
	{ "0001_Core.sql", 0, 0, NULL },         /* upper case */
	{ "0001_co re.sql", 0, 0, NULL },        /* space */
	{ "0001_core.SQL", 0, 0, NULL },         /* suffix case */
	{ "0001_core.sql.bak", 0, 0, NULL },     /* not .sql */
	{ "0001_core", 0, 0, NULL },             /* no suffix */
	{ "core.sql", 0, 0, NULL },              /* no version */
	{ "0001_core-x.sql", 0, 0, NULL },       /* '-' in name */
	{ "0001_../x.sql", 0, 0, NULL },         /* path */
	{ "", 0, 0, NULL },
};

static void migrate__name_table__parsed_or_rejected(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(name_cases) / sizeof(name_cases[0]); i++) {
		const struct name_case *c = &name_cases[i];
		struct gv_migration m;
		struct gv_err err;
		gv_err_clear(&err);
		int rc = gv_migrate_parse_name(c->file, &m, &err);
		if (c->ok) {
			if (rc != 0)
				fail_msg("'%s' rejected: %s", c->file, err.msg);
			assert_int_equal(m.version, c->version);
			assert_string_equal(m.name, c->name);
			assert_string_equal(m.file, c->file);
		} else {
			if (rc == 0)
				fail_msg("'%s' accepted as version %d", c->file, m.version);
			assert_int_equal(err.code, GV_EINVAL);
			assert_non_null(strstr(err.msg, c->file));
		}
	}
}

static void migrate__bad_name__rejected(void **state)
{
	(void)state;
	struct gv_migration m;
	struct gv_err err;
	assert_int_equal(gv_migrate_parse_name("01_x.sql", &m, &err), -1);
	assert_non_null(strstr(err.msg, "01_x.sql"));
	char longname[300];
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "0001_", 5);
	strcpy(longname + sizeof(longname) - 5, ".sql");
	assert_int_equal(gv_migrate_parse_name(longname, &m, &err), -1);
}

static void migrate__candidates__readme_and_hidden_ignored(void **state)
{
	(void)state;
	assert_true(gv_migrate_is_candidate("0001_core.sql"));
	assert_true(gv_migrate_is_candidate("core.sql"));      /* counted, then rejected */
	assert_true(gv_migrate_is_candidate("0001_core.txt")); /* starts with a digit */
	assert_false(gv_migrate_is_candidate("README.md"));
	assert_false(gv_migrate_is_candidate(".0001_core.sql.swp"));
	assert_false(gv_migrate_is_candidate("."));
	assert_false(gv_migrate_is_candidate(".."));
	assert_false(gv_migrate_is_candidate(""));
}

static void fill(struct gv_migration *m, const char *const *files, size_t n)
{
	struct gv_err err;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(gv_migrate_parse_name(files[i], &m[i], &err), 0);
}

static void migrate__sort__numeric_not_lexical(void **state)
{
	(void)state;
	const char *files[] = { "0010_ten.sql", "0002_two.sql", "100000_big.sql", "0001_one.sql", "0009_nine.sql" };
	struct gv_migration m[5];
	struct gv_err err;
	fill(m, files, 5);
	assert_int_equal(gv_migrate_sort(m, 5, &err), 0);
	int want[] = { 1, 2, 9, 10, 100000 };
	for (int i = 0; i < 5; i++)
		assert_int_equal(m[i].version, want[i]);
	assert_int_equal(gv_migrate_sort(m, 0, &err), 0);
}

static void migrate__duplicate_version__rejected_naming_both(void **state)
{
	(void)state;
	const char *files[] = { "0002_b.sql", "0001_a.sql" };
	struct gv_migration m[2];
	struct gv_err err;
	fill(m, files, 2);
	assert_int_equal(gv_migrate_sort(m, 2, &err), 0);
	const char *dup[] = { "0003_c.sql", "00003_d.sql" };
	struct gv_migration d[2];
	fill(d, dup, 2);
	assert_int_equal(gv_migrate_sort(d, 2, &err), -1);
	assert_non_null(strstr(err.msg, "0003_c.sql"));
	assert_non_null(strstr(err.msg, "00003_d.sql"));
}

static void migrate__recorded__matched_by_version_and_name(void **state)
{
	(void)state;
	const char *files[] = { "0001_core.sql", "0002_quota.sql" };
	struct gv_migration m[2];
	struct gv_err err;
	fill(m, files, 2);
	assert_int_equal(gv_migrate_sort(m, 2, &err), 0);
	assert_int_equal(gv_migrate_check_recorded(m, 2, 1, "core", &err), 1);
	assert_int_equal(gv_migrate_check_recorded(m, 2, 2, "quota", &err), 1);
	assert_int_equal(gv_migrate_check_recorded(m, 2, 7, "gone", &err), 0);
	assert_int_equal(gv_migrate_check_recorded(m, 2, 2, "other", &err), -1);
	assert_non_null(strstr(err.msg, "0002_quota.sql"));
	assert_int_equal(gv_migrate_check_recorded(m, 0, 1, "core", &err), 0);
}

static void migrate__error_position__line_number(void **state)
{
	(void)state;
	const char *sql = "SELECT 1;\n-- h\xc3\xa9llo\nSELECT x\n  FROM y;\n";
	size_t len = strlen(sql);
	assert_int_equal(gv_migrate_line_of(sql, len, 1), 1);
	assert_int_equal(gv_migrate_line_of(sql, len, 10), 1);  /* the first '\n' */
	assert_int_equal(gv_migrate_line_of(sql, len, 11), 2);
	/* "-- héllo\n" is 9 characters but 10 bytes: 'S' of line 3 is char 20 */
	assert_int_equal(gv_migrate_line_of(sql, len, 20), 3);
	assert_int_equal(gv_migrate_line_of(sql, len, 29), 4);
	assert_int_equal(gv_migrate_line_of(sql, len, 0), 0);
	assert_int_equal(gv_migrate_line_of(sql, len, 1000), 0);
}

/* A scratch folder with the given empty files. */
static char *scratch_dir(const char *const *files, size_t n)
{
	char *dir = strdup("/tmp/gavel-test-migrate.XXXXXX");
	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < n; i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fclose(f);
	}
	return dir;
}

static void rm_scratch(char *dir, const char *const *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
	free(dir);
}

static void migrate__scan__sorted_and_readme_ignored(void **state)
{
	(void)state;
	const char *files[] = { "0003_c.sql", "README.md", "0001_a.sql", ".hidden.sql", "0002_b.sql" };
	char *dir = scratch_dir(files, 5);
	struct gv_migration *m;
	size_t n;
	struct gv_err err;
	int rc = gv_migrate_scan(dir, &m, &n, &err);
	rm_scratch(dir, files, 5);
	if (rc != 0)
		fail_msg("scan: %s", err.msg);
	assert_int_equal(n, 3);
	assert_string_equal(m[0].file, "0001_a.sql");
	assert_string_equal(m[2].file, "0003_c.sql");
	free(m);
}

static void migrate__scan_bad_name__error_names_file(void **state)
{
	(void)state;
	const char *files[] = { "0001_a.sql", "2_b.sql" };
	char *dir = scratch_dir(files, 2);
	struct gv_migration *m = (void *)1;
	size_t n = 99;
	struct gv_err err;
	int rc = gv_migrate_scan(dir, &m, &n, &err);
	rm_scratch(dir, files, 2);
	assert_int_equal(rc, -1);
	assert_null(m);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err.msg, "2_b.sql"));
}

static void migrate__scan_missing_dir__error(void **state)
{
	(void)state;
	struct gv_migration *m;
	size_t n;
	struct gv_err err;
	assert_int_equal(gv_migrate_scan("/nonexistent/gavel/sql", &m, &n, &err), -1);
	assert_non_null(strstr(err.msg, "/nonexistent/gavel/sql"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(migrate__name_table__parsed_or_rejected),
		cmocka_unit_test(migrate__bad_name__rejected),
		cmocka_unit_test(migrate__candidates__readme_and_hidden_ignored),
		cmocka_unit_test(migrate__sort__numeric_not_lexical),
		cmocka_unit_test(migrate__duplicate_version__rejected_naming_both),
		cmocka_unit_test(migrate__recorded__matched_by_version_and_name),
		cmocka_unit_test(migrate__error_position__line_number),
		cmocka_unit_test(migrate__scan__sorted_and_readme_ignored),
		cmocka_unit_test(migrate__scan_bad_name__error_names_file),
		cmocka_unit_test(migrate__scan_missing_dir__error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
