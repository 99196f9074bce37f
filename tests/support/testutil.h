/* Helpers the tests share: removing a tree, counting its entries and
 * running a program, all without a shell (the project's rule holds for the
 * tests too: argv vectors, no system()), and a monotonic clock. Linked into
 * every test binary. */
#pragma once

/* Removes path and everything below it, never following a symlink; makes
 * read-only directories writable first. 0 on success, -1 otherwise. A
 * missing path is success. */
int test_rm_rf(const char *path);

/* Entries below dir (not counting dir), without following symlinks; -1 on
 * error. */
int test_count_entries(const char *dir);

/* Runs argv (argv[0] an absolute path) with an environment of only
 * PATH=/usr/bin:/bin, waits, and returns its exit status, or -1 when it
 * could not run or died of a signal. */
int test_run(const char *const argv[]);

/* Milliseconds on the monotonic clock, for timing what a test does. */
double test_now_ms(void);
