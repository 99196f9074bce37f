/* Unit tests of common/io.c: full writes through a pipe, and making a
 * folder with its missing parents (0700) while refusing what cannot be. */
#include "common/io.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/testutil.h"

static void write_all__pipe__every_byte_arrives(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	char out[4000];
	memset(out, 'x', sizeof(out));
	assert_int_equal(gv_write_all(p[1], out, sizeof(out)), 0);
	close(p[1]);
	char in[5000];
	size_t got = 0;
	ssize_t n;
	while ((n = read(p[0], in + got, sizeof(in) - got)) > 0)
		got += (size_t)n;
	close(p[0]);
	assert_int_equal(got, sizeof(out));
	assert_memory_equal(in, out, sizeof(out));
}

static void write_all__closed_reader__fails_with_errno(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(gv_write_all(p[1], "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	close(p[1]);
}

static void mkdir_parents__missing_chain__made_private_and_idempotent(void **state)
{
	(void)state;
	char root[] = "/tmp/gavel-test-io.XXXXXX";
	assert_non_null(mkdtemp(root));
	char path[256];
	snprintf(path, sizeof(path), "%s/a/b/c", root);
	struct gv_err err = { 0 };
	assert_int_equal(gv_mkdir_parents(path, &err), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/a", root);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/a/b/c", root);
	assert_int_equal(gv_mkdir_parents(path, &err), 0); /* already there */
	test_rm_rf(root);
}

static void mkdir_parents__file_in_the_way_or_too_long__error(void **state)
{
	(void)state;
	char root[] = "/tmp/gavel-test-io.XXXXXX";
	assert_non_null(mkdtemp(root));
	char path[256];
	snprintf(path, sizeof(path), "%s/f", root);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/f/sub", root);
	struct gv_err err = { 0 };
	assert_int_equal(gv_mkdir_parents(path, &err), -1);
	assert_non_null(strstr(err.msg, "mkdir"));
	char *long_path = malloc(5000);
	assert_non_null(long_path);
	memset(long_path, 'a', 4999);
	long_path[0] = '/';
	long_path[4999] = '\0';
	assert_int_equal(gv_mkdir_parents(long_path, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	free(long_path);
	test_rm_rf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_all__pipe__every_byte_arrives),
		cmocka_unit_test(write_all__closed_reader__fails_with_errno),
		cmocka_unit_test(mkdir_parents__missing_chain__made_private_and_idempotent),
		cmocka_unit_test(mkdir_parents__file_in_the_way_or_too_long__error),
	};
	return cmocka_run_group_tests_name("io", tests, NULL, NULL);
}
