/* Unit tests of what lets a node build its precompiled headers while it
 * serves (languages/lang_pch.h, lang.h; executor/daemon/warm.c): the sweep
 * of a stopped builder's temporary files, which must take exactly those
 * and nothing a sandbox may be using, and a stop flag that ends the
 * compiler lang_run_capture runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "languages/lang.h"
#include "languages/lang_pch.h"
#include "tests/support/testutil.h"

static void touch_at(int dir_fd, const char *name)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
}

static bool exists_at(int dir_fd, const char *name)
{
	struct stat st;
	return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* A language folder as a builder killed mid-way leaves it: its temporary
 * header, wrapper, archive and dump folder (pid-named) beside the files a
 * sandbox reads and names that only look alike. */
static void sweep__stopped_builder__takes_only_its_temporaries(void **state)
{
	(void)state;
	char dir[] = "/tmp/gavel-warm-unit-XXXXXX";
	assert_non_null(mkdtemp(dir));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mkdirat(fd, "bits", 0755), 0);
	int bits = openat(fd, "bits", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(bits >= 0);
	static const char *const gone_bits[] = { "stdc++.h.gch.4242", "stdc++.h.gch.1" };
	static const char *const kept_bits[] = { "stdc++.h.gch", "stdc++.h.gch.", "stdc++.h.gch.12a", "stdc++.h.gch.12.tmp",
						  "stdc++.h", "other.h.gch.77" };
	static const char *const gone_top[] = { ".wrapper-4242.h", ".javac.jsa.4242" };
	static const char *const kept_top[] = { "stamp", "javac.jsa", "javac.jsa.stamp", ".wrapper-.h", ".wrapper-12.hh",
						".javac.jsa.x1" };
	for (size_t i = 0; i < sizeof(gone_bits) / sizeof(*gone_bits); i++)
		touch_at(bits, gone_bits[i]);
	for (size_t i = 0; i < sizeof(kept_bits) / sizeof(*kept_bits); i++)
		touch_at(bits, kept_bits[i]);
	for (size_t i = 0; i < sizeof(gone_top) / sizeof(*gone_top); i++)
		touch_at(fd, gone_top[i]);
	for (size_t i = 0; i < sizeof(kept_top) / sizeof(*kept_top); i++)
		touch_at(fd, kept_top[i]);
	/* The class archive's dump folder, with the source it compiled. */
	assert_int_equal(mkdirat(fd, ".cds-build-4242", 0700), 0);
	int work = openat(fd, ".cds-build-4242", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(work >= 0);
	touch_at(work, "Main.java");
	close(work);

	lang_pch_sweep(fd, "bits", "stdc++.h.gch.", "");
	lang_pch_sweep(fd, NULL, ".wrapper-", ".h");
	lang_pch_sweep(fd, NULL, ".javac.jsa.", "");
	lang_pch_sweep(fd, NULL, ".cds-build-", "");
	/* A folder that is not there is no error. */
	lang_pch_sweep(fd, "no-such-folder", "x.", "");

	for (size_t i = 0; i < sizeof(gone_bits) / sizeof(*gone_bits); i++)
		if (exists_at(bits, gone_bits[i]))
			fail_msg("bits/%s was left", gone_bits[i]);
	for (size_t i = 0; i < sizeof(kept_bits) / sizeof(*kept_bits); i++)
		if (!exists_at(bits, kept_bits[i]))
			fail_msg("bits/%s was removed", kept_bits[i]);
	for (size_t i = 0; i < sizeof(gone_top) / sizeof(*gone_top); i++)
		if (exists_at(fd, gone_top[i]))
			fail_msg("%s was left", gone_top[i]);
	for (size_t i = 0; i < sizeof(kept_top) / sizeof(*kept_top); i++)
		if (!exists_at(fd, kept_top[i]))
			fail_msg("%s was removed", kept_top[i]);
	assert_false(exists_at(fd, ".cds-build-4242"));
	close(bits);
	close(fd);
	assert_int_equal(test_rm_rf(dir), 0);
}

static volatile sig_atomic_t stop_flag;
static void on_alarm(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* A command with minutes to run ends, with its process group, once the
 * flag is set (here by a signal, as SIGTERM sets a daemon's). */
static void run_capture__stop_flag__ends_the_command(void **state)
{
	(void)state;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	stop_flag = 0;
	lang_run_capture_stop_on(&stop_flag);
	/* The shell's child sleep is in the same process group. */
	char *argv[] = { "/bin/sh", "-c", "/usr/bin/sleep 300; echo late", NULL };
	char out[64];
	int status = 0;
	bool timed_out = false;
	struct gv_err err;
	time_t t0 = time(NULL);
	alarm(1);
	assert_int_equal(lang_run_capture(argv, 600000, out, sizeof(out), &status, &timed_out, &err), 0);
	alarm(0);
	lang_run_capture_stop_on(NULL);
	assert_true(timed_out);
	assert_true(WIFSIGNALED(status));
	assert_null(strstr(out, "late"));
	/* Generous: it must not have waited for the command. */
	assert_true(time(NULL) - t0 < 60);
	/* Without a flag, a command runs to its end as before. */
	char *quick[] = { "/bin/echo", "done", NULL };
	assert_int_equal(lang_run_capture(quick, 10000, out, sizeof(out), &status, &timed_out, &err), 0);
	assert_false(timed_out);
	assert_non_null(strstr(out, "done"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sweep__stopped_builder__takes_only_its_temporaries),
		cmocka_unit_test(run_capture__stop_flag__ends_the_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
