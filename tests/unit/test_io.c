/* Unit tests of common/io.c: full writes and bounded reads through a pipe,
 * making a folder with its missing parents (0700) while refusing what
 * cannot be, and removing a tree without ever following a symlink planted
 * in it. */
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

static void read_upto__short_input__stops_at_eof(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(gv_write_all(p[1], "abc", 3), 0);
	close(p[1]);
	char in[10];
	errno = EINVAL;
	assert_int_equal(gv_read_upto(p[0], in, sizeof(in)), 3);
	assert_int_equal(errno, 0);
	assert_memory_equal(in, "abc", 3);
	close(p[0]);
}

static void read_upto__more_than_len__stops_at_len_without_waiting(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	/* The writer stays open: a read past len would block forever. */
	assert_int_equal(gv_write_all(p[1], "0123456789", 10), 0);
	char in[4];
	assert_int_equal(gv_read_upto(p[0], in, sizeof(in)), 4);
	assert_memory_equal(in, "0123", 4);
	assert_int_equal(gv_read_upto(p[0], in, 0), 0);
	close(p[0]);
	close(p[1]);
}

static void read_upto__bad_fd__nothing_with_errno(void **state)
{
	(void)state;
	char in[4];
	assert_int_equal(gv_read_upto(-1, in, sizeof(in)), 0);
	assert_int_equal(errno, EBADF);
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

/* root/name: a file, a fifo and a/b/c/d with a file at each level. */
static void make_nested(const char *root, const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/a/b/c/d", root, name);
	struct gv_err err = { 0 };
	assert_int_equal(gv_mkdir_parents(path, &err), 0);
	static const char *const files[] = { "f", "a/f", "a/b/f", "a/b/c/f", "a/b/c/d/f" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", root, name, files[i]);
		int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(gv_write_all(fd, "data\n", 5), 0);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/%s/a/fifo", root, name);
	assert_int_equal(mkfifo(path, 0600), 0);
}

static void remove_tree__nested_dirs_through_a_dirfd__all_gone(void **state)
{
	(void)state;
	char root[] = "/tmp/gavel-test-io.XXXXXX";
	assert_non_null(mkdtemp(root));
	make_nested(root, "work");
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct gv_err err = { 0 };
	assert_int_equal(gv_remove_tree_at(fd, "work", &err), 0);
	struct stat st;
	assert_int_equal(fstatat(fd, "work", &st, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(errno, ENOENT);
	close(fd);
	assert_int_equal(test_count_entries(root), 0);
	test_rm_rf(root);
}

static void remove_tree__symlinks_to_outside__removed_not_followed(void **state)
{
	(void)state;
	char root[] = "/tmp/gavel-test-io.XXXXXX";
	assert_non_null(mkdtemp(root));
	make_nested(root, "outside");
	make_nested(root, "work");
	char target[512], link[512];
	/* What a sandbox could plant: a link to a folder, to a file and to
	 * the tree's own parent, each where a folder or file was. */
	static const char *const links[][2] = {
		{ "outside", "work/a/b/c/d/f" },
		{ "outside", "work/a/b/escape" },
		{ "outside/f", "work/a/f" },
		{ "..", "work/a/b/c/up" },
	};
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(target, sizeof(target), "%s/%s", root, links[i][0]);
		if (strcmp(links[i][0], "..") == 0)
			snprintf(target, sizeof(target), "..");
		snprintf(link, sizeof(link), "%s/%s", root, links[i][1]);
		unlink(link);
		assert_int_equal(symlink(target, link), 0);
	}
	snprintf(link, sizeof(link), "%s/outside", root);
	int outside_entries = test_count_entries(link);
	assert_int_equal(outside_entries, 10);
	snprintf(link, sizeof(link), "%s/work", root);
	struct gv_err err = { 0 };
	assert_int_equal(gv_remove_tree_at(AT_FDCWD, link, &err), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), -1);
	/* Everything outside the tree is still there. */
	snprintf(link, sizeof(link), "%s/outside", root);
	assert_int_equal(test_count_entries(link), outside_entries);
	snprintf(link, sizeof(link), "%s/outside/a/b/c/d/f", root);
	assert_int_equal(stat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	test_rm_rf(root);
}

static void remove_tree__top_is_a_symlink__only_the_link_goes(void **state)
{
	(void)state;
	char root[] = "/tmp/gavel-test-io.XXXXXX";
	assert_non_null(mkdtemp(root));
	make_nested(root, "outside");
	char target[512], link[512];
	snprintf(target, sizeof(target), "%s/outside", root);
	snprintf(link, sizeof(link), "%s/work", root);
	assert_int_equal(symlink(target, link), 0);
	int outside_entries = test_count_entries(target);
	struct gv_err err = { 0 };
	assert_int_equal(gv_remove_tree_at(AT_FDCWD, link, &err), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), -1);
	assert_int_equal(test_count_entries(target), outside_entries);
	test_rm_rf(root);
}

static void remove_tree__missing__success(void **state)
{
	(void)state;
	char root[] = "/tmp/gavel-test-io.XXXXXX";
	assert_non_null(mkdtemp(root));
	char path[512];
	snprintf(path, sizeof(path), "%s/never-made", root);
	struct gv_err err = { 0 };
	assert_int_equal(gv_remove_tree_at(AT_FDCWD, path, &err), 0);
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(gv_remove_tree_at(fd, "never-made", NULL), 0);
	close(fd);
	test_rm_rf(root);
}

static void remove_tree__deeper_than_the_bound__limit_error(void **state)
{
	(void)state;
	char root[] = "/tmp/gavel-test-io.XXXXXX";
	assert_non_null(mkdtemp(root));
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (int i = 0; i < GV_REMOVE_TREE_DEPTH_MAX + 4; i++) {
		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	close(fd);
	char path[512];
	snprintf(path, sizeof(path), "%s/d", root);
	struct gv_err err = { 0 };
	assert_int_equal(gv_remove_tree_at(AT_FDCWD, path, &err), -1);
	assert_int_equal(err.code, GV_ELIMIT);
	assert_int_equal(test_rm_rf(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_all__pipe__every_byte_arrives),
		cmocka_unit_test(write_all__closed_reader__fails_with_errno),
		cmocka_unit_test(read_upto__short_input__stops_at_eof),
		cmocka_unit_test(read_upto__more_than_len__stops_at_len_without_waiting),
		cmocka_unit_test(read_upto__bad_fd__nothing_with_errno),
		cmocka_unit_test(mkdir_parents__missing_chain__made_private_and_idempotent),
		cmocka_unit_test(mkdir_parents__file_in_the_way_or_too_long__error),
		cmocka_unit_test(remove_tree__nested_dirs_through_a_dirfd__all_gone),
		cmocka_unit_test(remove_tree__symlinks_to_outside__removed_not_followed),
		cmocka_unit_test(remove_tree__top_is_a_symlink__only_the_link_goes),
		cmocka_unit_test(remove_tree__missing__success),
		cmocka_unit_test(remove_tree__deeper_than_the_bound__limit_error),
	};
	return cmocka_run_group_tests_name("io", tests, NULL, NULL);
}
