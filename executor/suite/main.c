/* gavel-suite: runs an instructor test suite inside a submission's sandbox
 * (executor/suite/README.md). It runs only there, as uid 65534, started by
 * gavel-init:
 *
 *   gavel-suite build FRAMEWORK
 *       (the compile phase, cwd /box) compiles the student's files: the
 *       files under /box ending as the framework's sources, sorted; execv()s
 *       the compiler, so its output and status are the phase's
 *   gavel-suite run
 *       (one test phase per group) reads the plan from stdin (record lines:
 *       framework, file, time_ms, memory_mb, then one test:NAME per test),
 *       builds the group's test file from /tmp/gv-files against the
 *       student's objects, runs the group's tests in one process, and each
 *       test that run did not report in a process of its own, and,
 *       once nothing else of the run is alive, writes the summary
 *       (executor/judge/suite_summary.h) to /tmp/gv-feedback/summary,
 *       which gavel-init sends back. Exit 0 only then.
 *
 * A test's outcome comes from the report its framework wrote when it
 * finished, never from its output or exit status: a test that prints a
 * pass, exits 0 early or crashes has no report and fails. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "executor/judge/suite_summary.h"
#include "executor/sandbox/record.h"
#include "executor/suite/child.h"
#include "executor/suite/framework.h"
#include "executor/suite/junit_xml.h"

#define PLAN_MAX 65536
#define WALK_DEPTH 8
#define BUILD_CPU_MS 60000
#define BUILD_WALL_MS 120000
#define BUILD_KEEP 4096 /* bytes of compiler output kept for the message */
#define SUMMARY_RESERVE 4096 /* summary bytes kept for the tests' outcome lines */

static const char *const child_env[] = {
	"PATH=/usr/bin:/bin",       "LANG=C.UTF-8", "HOME=/tmp", "PYTHONDONTWRITEBYTECODE=1",
	"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "PYTHONHASHSEED=0", NULL,
};

struct names {
	char **v;
	size_t n;
};

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_in(const char *name, const char *const *endings)
{
	size_t l = strlen(name);
	for (; *endings; endings++) {
		size_t e = strlen(*endings);
		if (l > e && !strcmp(name + l - e, *endings))
			return true;
	}
	return false;
}

/* Files under dir (prefix: their path as printed) ending in endings,
 * no hidden names, no links followed. */
static int walk(const char *dir, const char *prefix, const char *const *endings, int depth, struct names *out)
{
	if (depth > WALK_DEPTH)
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096], shown[4000];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		snprintf(shown, sizeof(shown), "%s%s", prefix, e->d_name);
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			char sub[4096];
			snprintf(sub, sizeof(sub), "%s/", shown);
			rc = walk(path, sub, endings, depth + 1, out);
		} else if (S_ISREG(st.st_mode) && ends_in(e->d_name, endings)) {
			if (out->n >= SUITE_SOURCES_MAX) {
				rc = -1;
				break;
			}
			char **nv = realloc(out->v, (out->n + 1) * sizeof(*nv));
			if (!nv || !(nv[out->n] = strdup(shown))) {
				if (nv)
					out->v = nv;
				rc = -1;
				break;
			}
			out->v = nv;
			out->n++;
		}
	}
	closedir(d);
	return rc;
}

static int build(const char *framework)
{
	int f = suite_framework_of(framework);
	if (f < 0) {
		fprintf(stderr, "gavel-suite: unknown framework %s\n", framework);
		return 1;
	}
	struct names src = { 0 };
	if (walk(".", "", suite_source_endings((enum suite_framework)f), 0, &src) < 0) {
		fprintf(stderr, "gavel-suite: listing the submission's files failed\n");
		names_free(&src);
		return 1;
	}
	if (src.n == 0) {
		fprintf(stderr, "the submission has no %s file\n", suite_source_endings((enum suite_framework)f)[0]);
		return 2;
	}
	qsort(src.v, src.n, sizeof(*src.v), cmp_str);
	static const char *argv[SUITE_ARGV_MAX + 1];
	suite_build_argv((enum suite_framework)f, src.v, src.n, argv);
	execv(argv[0], (char *const *)argv);
	fprintf(stderr, "gavel-suite: exec %s: %s\n", argv[0], strerror(errno));
	return 1;
}

struct plan {
	enum suite_framework framework;
	char file[256];
	uint64_t time_ms, memory_mb;
	char names[EXEC_SUITE_TESTS_MAX][EXEC_SUITE_NAME_MAX + 1];
	size_t ntests;
};

static int value(const struct exec_record_field *f, char *out, size_t cap)
{
	if (f->value_len == 0 || f->value_len >= cap || memchr(f->value, '/', f->value_len))
		return -1;
	memcpy(out, f->value, f->value_len);
	out[f->value_len] = '\0';
	return 0;
}

static int read_plan(struct plan *p)
{
	static char buf[PLAN_MAX];
	size_t len = gv_read_upto(0, buf, sizeof(buf));
	struct exec_record_field f;
	struct gv_err err;
	size_t pos = 0;
	int rc;
	char fw[32] = "";
	memset(p, 0, sizeof(*p));
	while ((rc = exec_record_next(buf, len, &pos, &f, &err)) > 0) {
		if (exec_record_key_is(&f, "framework")) {
			rc = value(&f, fw, sizeof(fw));
		} else if (exec_record_key_is(&f, "file")) {
			rc = value(&f, p->file, sizeof(p->file));
		} else if (exec_record_key_is(&f, "time_ms")) {
			rc = exec_record_parse_u64(f.value, f.value_len, 600000, &p->time_ms, &err);
		} else if (exec_record_key_is(&f, "memory_mb")) {
			rc = exec_record_parse_u64(f.value, f.value_len, 65536, &p->memory_mb, &err);
		} else if (exec_record_key_is(&f, "test")) {
			if (p->ntests >= EXEC_SUITE_TESTS_MAX || f.value_len == 0 || f.value_len > EXEC_SUITE_NAME_MAX)
				return -1;
			memcpy(p->names[p->ntests], f.value, f.value_len);
			p->names[p->ntests++][f.value_len] = '\0';
			rc = 0;
		}
		if (rc < 0)
			return -1;
	}
	int fwk = suite_framework_of(fw);
	if (rc < 0 || fwk < 0 || !p->file[0] || !p->time_ms || !p->memory_mb || !p->ntests)
		return -1;
	p->framework = (enum suite_framework)fwk;
	return 0;
}

/* Removes every entry of dir but those named in keep. */
static void empty_dir(const char *dir, const char *const *keep)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct names gone = { 0 };
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		bool kept = false;
		for (const char *const *k = keep; k && *k && !kept; k++)
			kept = !strcmp(*k, e->d_name);
		if (kept)
			continue;
		char **nv = realloc(gone.v, (gone.n + 1) * sizeof(*nv));
		if (!nv)
			break;
		gone.v = nv;
		if ((nv[gone.n] = strdup(e->d_name)) != NULL)
			gone.n++;
	}
	for (size_t i = 0; i < gone.n; i++) {
		struct gv_err err;
		if (gv_remove_tree_at(dirfd(d), gone.v[i], &err) != 0)
			continue; /* the summary is still written; a leftover is the run's own */
	}
	names_free(&gone);
	closedir(d);
}

/* What one test run left behind: everything in /tmp but the test file and
 * our folder, and our report. */
static void clean_after_test(void)
{
	static const char *const keep_tmp[] = { "gv-files", "gv-suite", "gv-feedback", NULL };
	static const char *const keep_suite[] = { "t", "classes", NULL };
	empty_dir("/tmp", keep_tmp);
	empty_dir(SUITE_DIR, keep_suite);
	empty_dir(SUITE_FEEDBACK_DIR, NULL);
}

static size_t read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	size_t n = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		n = gv_read_upto(fd, buf, cap);
	close(fd);
	return n;
}

/* The student's objects, for the test program's link. */
static int objects(struct names *out)
{
	static const char *const o[] = { ".o", NULL };
	if (walk("/box", "/box/", o, 0, out) < 0)
		return -1;
	if (out->n > 1) /* out->v is NULL when there is none */
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
	return 0;
}

struct summary {
	char *buf;
	size_t len, cap;
	bool full;
};

static void put_line(struct summary *s, const char *key, const char *val)
{
	size_t need = strlen(key) + strlen(val) + 2;
	if (s->full || s->len + need >= s->cap) {
		s->full = true;
		return;
	}
	s->len += (size_t)snprintf(s->buf + s->len, s->cap - s->len, "%s:%s\n", key, val);
}

/* An escaped text line, left out when the summary would keep less than
 * reserve bytes for what follows. */
static void put_text(struct summary *s, const char *key, const char *text, size_t len, size_t max, size_t reserve)
{
	static char esc[4 * EXEC_SUITE_OUTPUT_MAX + 1];
	if (!len || s->len + reserve + 64 >= s->cap)
		return;
	size_t room = s->cap - s->len - reserve - 64;
	size_t cap = room < sizeof(esc) ? room : sizeof(esc);
	if (cap > max * 4 + 1)
		cap = max * 4 + 1;
	/* Cut at max unescaped bytes, then at what fits escaped. */
	exec_suite_escape(text, len < max ? len : max, esc, cap);
	put_line(s, key, esc);
}

static void put_number(struct summary *s, const char *key, uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	put_line(s, key, b);
}

struct test_result {
	bool have;
	enum exec_suite_outcome outcome;
	uint64_t time_ms, wall_ms;
	char message[EXEC_SUITE_MESSAGE_MAX + 1];
	char output[EXEC_SUITE_OUTPUT_MAX + 1];
	size_t output_len;
};

/* The outcome of one finished test run from its report. */
static enum exec_suite_outcome judge_test(const struct plan *p, const char *name, const struct suite_child_result *r,
					  char *message, size_t msgsz)
{
	static char xml[SUITE_XML_MAX];
	message[0] = '\0';
	if (!r->started) {
		snprintf(message, msgsz, "gavel-suite could not start the test");
		return EXEC_SUITE_ERROR;
	}
	if (r->timed_out) {
		snprintf(message, msgsz, "time limit exceeded");
		return EXEC_SUITE_TIMEOUT;
	}
	size_t n = read_file(suite_report_path(p->framework), xml, sizeof(xml));
	struct suite_xml_case c;
	int count = n ? suite_xml_scan(xml, n, &c) : 0;
	bool named = count == 1 && suite_report_names(p->framework, p->file, name, c.name, c.classname);
	if (named) {
		snprintf(message, msgsz, "%s", c.message);
		return c.outcome;
	}
	if (r->signal) {
		snprintf(message, msgsz, "the test's process was killed by signal %d", r->signal);
		return EXEC_SUITE_CRASH;
	}
	if (count >= 1)
		snprintf(message, msgsz, "the framework reported no result for this test: it could not be "
			 "collected or set up (see its output)");
	else if (n && count < 0)
		snprintf(message, msgsz, "the report is cut short");
	else
		snprintf(message, msgsz, "the test ended without a report (exit code %d): no such test, or it "
			 "exited before the framework could report", r->exit_code);
	return EXEC_SUITE_ERROR;
}

/* Runs test i of the plan in a process of its own into r. */
static void run_one(const struct plan *p, size_t i, struct test_result *r)
{
	static const char *argv[SUITE_ARGV_MAX + 1];
	static char words[8192];
	uint64_t cpu = p->time_ms + suite_startup_ms(p->framework);
	struct suite_child_limits tl = {
		.cpu_ms = cpu,
		.wall_ms = 2 * cpu + 2000,
		.as_bytes = suite_as_bytes(p->framework, p->memory_mb),
	};
	suite_test_argv(p->framework, p->file, p->names[i], (uint32_t)p->memory_mb, argv, words, sizeof(words));
	struct suite_child_result c;
	suite_child_run(argv, child_env, suite_test_cwd(p->framework), &tl, EXEC_SUITE_OUTPUT_MAX, &c);
	r->outcome = judge_test(p, p->names[i], &c, r->message, sizeof(r->message));
	r->time_ms = c.cpu_ms;
	r->wall_ms = c.wall_ms;
	r->output_len = c.output ? c.output_len : 0;
	if (r->output_len)
		memcpy(r->output, c.output, r->output_len);
	r->output[r->output_len] = '\0';
	r->have = true;
	suite_child_result_free(&c);
	clean_after_test();
}

/* Every test of the group in one process first, as the framework runs a
 * suite: the tests it reports take their outcome, time and captured
 * output from that report. Only a run that ended by itself counts (a
 * report is written at its end); what it does not report (a crash, an
 * exit, a loop took the process) runs again one test per process. Its CPU
 * budget is the start plus a quarter of the tests' time (at least one
 * test's): a group too slow for it runs one per process, as a passing one
 * would, only later. */
/* pytest puts a collection error's traceback in the report once per test
 * it was asked for, one after the other: the length of the first copy
 * (text[0..len) when it does not repeat). */
static size_t first_copy(const char *text, size_t len)
{
	const char *nl = memchr(text, '\n', len);
	size_t head = nl ? (size_t)(nl - text) : len;
	if (head < 8 || head >= len)
		return len;
	const char *again = memmem(text + head, len - head, text, head);
	return again ? (size_t)(again - text) : len;
}

/* The exception line of a pytest traceback ("E   ModuleNotFoundError:
 * ..."), the first in text[0..len) (pytest repeats the traceback once per
 * test it was asked for), into out; false when none. */
static bool exception_line(const char *text, size_t len, char *out, size_t cap)
{
	const char *line = NULL;
	for (size_t i = 0; i + 4 <= len && !line; i++)
		if ((i == 0 || text[i - 1] == '\n') && !memcmp(text + i, "E   ", 4))
			line = text + i + 4;
	if (!line)
		return false;
	size_t n = (size_t)(text + len - line);
	const char *nl = memchr(line, '\n', n);
	if (nl)
		n = (size_t)(nl - line);
	snprintf(out, cap, "%.*s", (int)n, line);
	return n > 0;
}

/* When the run reported errors but no test of the plan, the framework
 * stopped before running any: the test file could not be collected (in
 * pytest, the student's module failed to import). Running each test
 * alone would only fail the same way, a framework start each (8 pytest
 * tests: 28 s), so every test of the group fails at once with that
 * error. False when the report names a test of the plan, or holds no
 * error. */
static bool collection_failed(const struct plan *p, const struct suite_xml_case *cases, int count,
			      struct test_result *res)
{
	const struct suite_xml_case *error = NULL;
	for (int k = 0; k < count && k < EXEC_SUITE_TESTS_MAX; k++) {
		for (size_t i = 0; i < p->ntests; i++)
			if (suite_report_names(p->framework, p->file, p->names[i], cases[k].name, cases[k].classname))
				return false;
		if (cases[k].outcome == EXEC_SUITE_ERROR && !error)
			error = &cases[k];
	}
	if (!error)
		return false;
	char why[EXEC_SUITE_MESSAGE_MAX + 1];
	size_t once = first_copy(error->output, error->output_len);
	if (!exception_line(error->output, once, why, sizeof(why)))
		snprintf(why, sizeof(why), "%s", error->message[0] ? error->message : "an error");
	for (size_t i = 0; i < p->ntests; i++) {
		struct test_result *r = &res[i];
		r->have = true;
		r->outcome = EXEC_SUITE_ERROR;
		r->time_ms = r->wall_ms = 0;
		snprintf(r->message, sizeof(r->message), "the tests of %s could not be collected, none ran: %.700s",
			 p->file, why);
		r->output_len = once;
		memcpy(r->output, error->output, r->output_len);
		r->output[r->output_len] = '\0';
	}
	return true;
}

static void run_batch(const struct plan *p, struct test_result *res)
{
	static const char *argv[SUITE_ARGV_MAX + 1];
	static char words[65536];
	static struct suite_xml_case cases[EXEC_SUITE_TESTS_MAX];
	static char xml[SUITE_XML_MAX];
	if (p->ntests < 2 || !suite_batch_argv(p->framework, p->file, (char(*)[EXEC_SUITE_NAME_MAX + 1])p->names,
					       p->ntests, (uint32_t)p->memory_mb, argv, words, sizeof(words)))
		return;
	uint64_t all = p->time_ms * p->ntests / 4;
	uint64_t cpu = suite_startup_ms(p->framework) + (all > p->time_ms ? all : p->time_ms);
	struct suite_child_limits bl = {
		.cpu_ms = cpu,
		.wall_ms = 2 * cpu + 2000,
		.as_bytes = suite_as_bytes(p->framework, p->memory_mb),
	};
	struct suite_child_result c;
	suite_child_run(argv, child_env, suite_test_cwd(p->framework), &bl, 0, &c);
	bool ended = c.started && !c.timed_out && !c.signal;
	size_t n = ended ? read_file(suite_report_path(p->framework), xml, sizeof(xml)) : 0;
	int count = n ? suite_xml_scan_all(xml, n, cases, EXEC_SUITE_TESTS_MAX) : 0;
	if (collection_failed(p, cases, count, res)) {
		suite_child_result_free(&c);
		clean_after_test();
		return;
	}
	for (int k = 0; k < count && k < EXEC_SUITE_TESTS_MAX; k++) {
		for (size_t i = 0; i < p->ntests; i++) {
			if (res[i].have || !suite_report_names(p->framework, p->file, p->names[i],
							       cases[k].name, cases[k].classname))
				continue;
			struct test_result *r = &res[i];
			r->have = true;
			r->outcome = cases[k].outcome;
			r->time_ms = r->wall_ms = cases[k].time_ms;
			snprintf(r->message, sizeof(r->message), "%s", cases[k].message);
			r->output_len = cases[k].output_len;
			memcpy(r->output, cases[k].output, r->output_len);
			r->output[r->output_len] = '\0';
			break;
		}
	}
	suite_child_result_free(&c);
	clean_after_test();
}

static int write_summary(const struct summary *s)
{
	int fd = open(SUITE_FEEDBACK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int out = openat(fd, "summary", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	close(fd);
	if (out < 0)
		return -1;
	int rc = gv_write_all(out, s->buf, s->len);
	return close(out) == 0 ? rc : -1;
}

static int run(void)
{
	static struct plan p;
	if (read_plan(&p) < 0) {
		fprintf(stderr, "gavel-suite: bad plan\n");
		return 1;
	}
	if (mkdir(SUITE_DIR, 0700) != 0 && errno != EEXIST)
		return 1;
	static char sbuf[EXEC_SUITE_SUMMARY_MAX];
	struct summary s = { .buf = sbuf, .cap = sizeof(sbuf) };
	put_line(&s, "suite", "1");

	static const char *argv[SUITE_ARGV_MAX + 1];
	static char words[8192];
	struct names objs = { 0 };
	bool built = true;
	char build_msg[EXEC_SUITE_MESSAGE_MAX + 1] = "";
	if (suite_native(p.framework) && objects(&objs) < 0) {
		built = false;
		snprintf(build_msg, sizeof(build_msg), "listing the submission's objects failed");
	} else if (suite_test_build_argv(p.framework, p.file, objs.v, objs.n, argv, words, sizeof(words))) {
		struct suite_child_limits bl = { .cpu_ms = BUILD_CPU_MS, .wall_ms = BUILD_WALL_MS };
		struct suite_child_result br;
		suite_child_run(argv, child_env, SUITE_DIR, &bl, BUILD_KEEP, &br);
		if (!br.started || br.timed_out || br.signal || br.exit_code != 0) {
			built = false;
			snprintf(build_msg, sizeof(build_msg), "the tests do not build against the submission%s\n%s",
				 br.timed_out ? " (time limit)" : "", br.output ? br.output : "");
		}
		suite_child_result_free(&br);
	}
	names_free(&objs);
	clean_after_test();
	put_line(&s, "build", built ? "ok" : "fail");
	if (!built)
		put_text(&s, "build_message", build_msg, strlen(build_msg), EXEC_SUITE_MESSAGE_MAX, SUMMARY_RESERVE);

	static struct test_result res[EXEC_SUITE_TESTS_MAX];
	memset(res, 0, sizeof(res));
	if (built)
		run_batch(&p, res);
	for (size_t i = 0; i < p.ntests; i++) {
		put_line(&s, "test", p.names[i]);
		if (!built) {
			put_line(&s, "outcome", "error");
			put_line(&s, "message", "the tests do not build against the submission");
			continue;
		}
		if (!res[i].have)
			run_one(&p, i, &res[i]);
		put_line(&s, "outcome", exec_suite_outcome_name(res[i].outcome));
		put_number(&s, "time_ms", res[i].time_ms);
		put_number(&s, "wall_ms", res[i].wall_ms);
		size_t reserve = (p.ntests - i) * 128 + 64;
		put_text(&s, "message", res[i].message, strlen(res[i].message), 512, reserve);
		put_text(&s, "output", res[i].output, res[i].output_len, 1024, reserve);
	}
	put_number(&s, "end", p.ntests);
	if (s.full) {
		fprintf(stderr, "gavel-suite: the summary does not fit\n");
		return 1;
	}
	/* Nothing of the run is alive (suite_child_run killed it all), and
	 * clean_after_test emptied the feedback folder. */
	if (write_summary(&s) < 0) {
		fprintf(stderr, "gavel-suite: writing the summary: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "build"))
		return build(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "run"))
		return run();
	fprintf(stderr, "usage: gavel-suite build FRAMEWORK | gavel-suite run < PLAN\n");
	return 1;
}
