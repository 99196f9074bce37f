/* libFuzzer target for a problem package's YAML: the input is written as
 * problem.yaml of a small package (one sample case) in a temporary folder
 * and loaded with exec_problem_load (problem.yaml is read only through the
 * package's dirfd), then parsed again as a testdata.yaml
 * (exec_problem_parse_testdata, pure) over the root's default settings.
 * Checks beyond "does not crash": a loaded problem has positive limits, its
 * one case, and a finite time rule; warnings stay within their cap. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/judge/problem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[256];

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz: invariant broken: %s: %s\n", what, detail ? detail : "");
	abort();
}

static void put(const char *rel, const void *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (len && write(fd, buf, len) != (ssize_t)len) || close(fd) != 0) {
		perror(path);
		exit(2);
	}
}

static void mkdir_in(const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		perror(path);
		exit(2);
	}
}

static void remove_package(void)
{
	static const char *const files[] = { "problem.yaml", "data/sample/1.in", "data/sample/1.ans", "data/sample",
					     "data", NULL };
	char path[512];
	for (const char *const *f = files; *f; f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *f);
		if (unlink(path) != 0)
			rmdir(path);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/gavel-fuzz-problem.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	atexit(remove_package);
	mkdir_in("data");
	mkdir_in("data/sample");
	put("data/sample/1.in", "1 2\n", 4);
	put("data/sample/1.ans", "3\n", 2);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	put("problem.yaml", data, size);
	struct exec_problem p;
	struct gv_err err;
	if (exec_problem_load(&p, dir, NULL, &err) == 0) {
		if (!p.name || p.time_limit_ms == 0 || p.memory_mb == 0 || p.output_mb == 0)
			fail("a loaded problem", "missing name or a zero limit");
		if (p.ncases != 1 || !p.cases[0]->in_path)
			fail("a loaded problem", "not its one case");
		if (p.nwarnings > EXEC_PROBLEM_MAX_WARNINGS + 1)
			fail("warnings", "over the cap");
		struct exec_problem_time_rule r;
		exec_problem_time_rule(&p, 0.25, &r);
		if (!isfinite(r.limit_s) || !isfinite(r.margin_s) || r.limit_s <= 0)
			fail("time rule", "not a finite positive limit");
	}
	/* The same bytes as a group's testdata.yaml, under what the package
	 * set (its format and type), or under the defaults when it did not
	 * load. */
	struct exec_problem_grading g;
	if (exec_problem_grading_default(&g, &err) != 0)
		fail("exec_problem_grading_default", err.msg);
	if (exec_problem_parse_testdata(&p, "data/testdata.yaml", text, size, &g, &err) == 0) {
		if (!g.grader_flags || !g.output_validator_flags || !g.input_validator_flags)
			fail("testdata.yaml", "a flags string left NULL");
		if (g.range_min > g.range_max)
			fail("testdata.yaml", "range min over max");
	}
	exec_problem_grading_free(&g);
	exec_problem_free(&p);
	return 0;
}
