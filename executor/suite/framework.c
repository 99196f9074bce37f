/* The frameworks' commands (executor/suite/framework.h). */
#include "executor/suite/framework.h"

#include <stdio.h>
#include <string.h>

#define PYTHON "/usr/bin/python3"
#define JDK "/usr/lib/jvm/java-17-openjdk-amd64/bin"
#define JAR_DIR "/usr/share/java"
/* The test program is started through the dynamic loader: a run may not
 * chmod (the program seccomp policy), so the linker could not make it
 * executable, and the loader needs only to read it. */
#define LOADER "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
/* What a JUnit 5 test class compiles against. */
#define JUNIT_API_CP                                                                                    \
	JAR_DIR "/junit-jupiter-api.jar:" JAR_DIR "/junit-jupiter-params.jar:" JAR_DIR                  \
		"/apiguardian-api.jar:" JAR_DIR "/opentest4j.jar:" JAR_DIR "/junit-platform-commons.jar"
#define JUNIT_CONSOLE JAR_DIR "/junit-platform-console-standalone.jar"

const char *const *suite_source_endings(enum suite_framework f)
{
	static const char *const py[] = { ".py", NULL }, *const java[] = { ".java", NULL },
				 *const cpp[] = { ".cpp", ".cc", ".cxx", NULL }, *const c[] = { ".c", NULL };
	switch (f) {
	case SUITE_PYTEST:
		return py;
	case SUITE_JUNIT5:
		return java;
	case SUITE_GTEST:
		return cpp;
	case SUITE_C:
		return c;
	}
	return c;
}

static size_t put(const char **argv, size_t n, const char *const *words)
{
	for (; *words; words++)
		argv[n++] = *words;
	return n;
}

void suite_build_argv(enum suite_framework f, char **sources, size_t n, const char **argv)
{
	static const char *const py[] = { PYTHON, "-m", "py_compile", NULL };
	static const char *const java[] = { JDK "/javac", "-J-XX:+UseSerialGC", "-J-Xmx512m", "-encoding", "UTF-8",
					    "-d", ".", "-cp", ".", NULL };
	static const char *const cpp[] = { "/usr/bin/g++", "-std=gnu++17", "-O2", "-pipe", "-iquote", ".", "-c", NULL };
	static const char *const c[] = { "/usr/bin/gcc", "-std=gnu17", "-O2", "-pipe", "-iquote", ".", "-c", NULL };
	size_t k = put(argv, 0, f == SUITE_PYTEST ? py : f == SUITE_JUNIT5 ? java : f == SUITE_GTEST ? cpp : c);
	for (size_t i = 0; i < n && k < SUITE_ARGV_MAX; i++)
		argv[k++] = sources[i];
	argv[k] = NULL;
}

bool suite_test_build_argv(enum suite_framework f, const char *test_file, char **objects, size_t n,
			   const char **argv, char *buf, size_t bufsz)
{
	size_t k = 0;
	snprintf(buf, bufsz, "%s/%s", SUITE_FILES_DIR, test_file);
	switch (f) {
	case SUITE_PYTEST:
		return false;
	case SUITE_JUNIT5: {
		static const char *const w[] = { JDK "/javac", "-J-XX:+UseSerialGC", "-J-Xmx512m", "-encoding",
						 "UTF-8", "-d", SUITE_DIR "/classes", "-cp", "/box:" JUNIT_API_CP,
						 NULL };
		k = put(argv, 0, w);
		argv[k++] = buf;
		argv[k] = NULL;
		return true;
	}
	case SUITE_GTEST:
	case SUITE_C: {
		/* The student's folder for "..." includes only, after the test
		 * file's own: a student's gtest/gtest.h or gavel_check.h never
		 * stands in for the real one. */
		static const char *const cpp[] = { "/usr/bin/g++", "-std=gnu++17", "-O1", "-pipe",
						   "-iquote", SUITE_FILES_DIR, "-iquote", "/box",
						   "-o", SUITE_PROGRAM, NULL };
		static const char *const c[] = { "/usr/bin/gcc", "-std=gnu17", "-O1", "-pipe",
						 "-iquote", SUITE_FILES_DIR, "-iquote", "/box",
						 "-o", SUITE_PROGRAM, NULL };
		k = put(argv, 0, f == SUITE_GTEST ? cpp : c);
		argv[k++] = buf;
		for (size_t i = 0; i < n && k < SUITE_ARGV_MAX - 6; i++)
			argv[k++] = objects[i];
		if (f == SUITE_GTEST) {
			argv[k++] = "-lgtest";
			argv[k++] = "-lgtest_main";
			argv[k++] = "-pthread";
		}
		argv[k++] = "-lm";
		argv[k] = NULL;
		return true;
	}
	}
	return false;
}

void suite_test_argv(enum suite_framework f, const char *test_file, const char *name, uint32_t memory_mb,
		     const char **argv, char *buf, size_t bufsz)
{
	size_t k = 0;
	switch (f) {
	case SUITE_PYTEST: {
		/* -s: what the test prints is its output, passed or not. */
		static const char *const w[] = { PYTHON, "-B", "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
						 "--noconftest", "--rootdir=" SUITE_FILES_DIR,
						 "--junitxml=" SUITE_REPORT, "-o", "junit_family=xunit1", NULL };
		k = put(argv, 0, w);
		snprintf(buf, bufsz, "%s/%s::%s", SUITE_FILES_DIR, test_file, name);
		argv[k++] = buf;
		break;
	}
	case SUITE_JUNIT5: {
		/* The class is the file's name; buf: "-Xmx<m>m\0Class#method\0". */
		char cls[256];
		snprintf(cls, sizeof(cls), "%s", test_file);
		char *dot = strrchr(cls, '.');
		if (dot)
			*dot = '\0';
		int a = snprintf(buf, bufsz, "-Xmx%um", memory_mb);
		if (a < 0 || (size_t)a + 1 >= bufsz)
			a = 0;
		char *sel = buf + a + 1;
		snprintf(sel, bufsz - (size_t)a - 1, "%s#%s", cls, name);
		const char *const w[] = { JDK "/java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", buf, "-Xss64m",
					  "-XX:-UsePerfData", "-jar", JUNIT_CONSOLE, "--disable-banner",
					  "--disable-ansi-colors", "--details=none", "-cp", SUITE_DIR "/classes:/box",
					  "--select-method", sel, "--include-engine=junit-jupiter",
					  "--reports-dir", SUITE_DIR "/rep", NULL };
		k = put(argv, 0, w);
		break;
	}
	case SUITE_GTEST: {
		snprintf(buf, bufsz, "--gtest_filter=%s", name);
		const char *const w[] = { LOADER, SUITE_PROGRAM, buf, "--gtest_output=xml:" SUITE_REPORT, NULL };
		k = put(argv, 0, w);
		break;
	}
	case SUITE_C: {
		snprintf(buf, bufsz, "%s", name);
		const char *const w[] = { LOADER, SUITE_PROGRAM, buf, SUITE_REPORT, NULL };
		k = put(argv, 0, w);
		break;
	}
	}
	argv[k] = NULL;
}

/* Appends the word a, sep, b (NUL-terminated) to buf at *o and to argv;
 * false when either is full. */
static bool word(char *buf, size_t bufsz, size_t *o, const char **argv, size_t *k, const char *a, const char *sep,
		 const char *b)
{
	size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);
	if (la + ls + lb + 1 > bufsz - *o || *k >= SUITE_ARGV_MAX)
		return false;
	char *w = buf + *o;
	memcpy(w, a, la);
	memcpy(w + la, sep, ls);
	memcpy(w + la + ls, b, lb);
	w[la + ls + lb] = '\0';
	argv[(*k)++] = w;
	*o += la + ls + lb + 1;
	return true;
}

bool suite_batch_argv(enum suite_framework f, const char *test_file, char tests[][EXEC_SUITE_NAME_MAX + 1],
		      size_t n, uint32_t memory_mb, const char **argv, char *buf, size_t bufsz)
{
	size_t k = 0, o = 0;
	switch (f) {
	case SUITE_PYTEST: {
		/* Captured output goes to each test case's system-out. */
		static const char *const w[] = { PYTHON, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider",
						 "--noconftest", "--rootdir=" SUITE_FILES_DIR, "--junitxml=" SUITE_REPORT,
						 "-o", "junit_family=xunit1", "-o", "junit_logging=system-out", NULL };
		k = put(argv, 0, w);
		char path[320];
		snprintf(path, sizeof(path), "%s/%s", SUITE_FILES_DIR, test_file);
		for (size_t i = 0; i < n; i++)
			if (!word(buf, bufsz, &o, argv, &k, path, "::", tests[i]))
				return false;
		break;
	}
	case SUITE_JUNIT5: {
		char cls[256], mem[32];
		snprintf(cls, sizeof(cls), "%s", test_file);
		char *dot = strrchr(cls, '.');
		if (dot)
			*dot = '\0';
		snprintf(mem, sizeof(mem), "%u", memory_mb);
		if (!word(buf, bufsz, &o, argv, &k, JDK "/java", "", ""))
			return false;
		static const char *const w[] = { "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss64m",
						 "-XX:-UsePerfData", "-jar", JUNIT_CONSOLE, "--disable-banner",
						 "--disable-ansi-colors", "--details=none", "-cp", SUITE_DIR "/classes:/box",
						 "--include-engine=junit-jupiter",
						 "--config=junit.platform.output.capture.stdout=true",
						 "--config=junit.platform.output.capture.stderr=true", "--reports-dir",
						 SUITE_DIR "/rep", NULL };
		if (!word(buf, bufsz, &o, argv, &k, "-Xmx", mem, "m"))
			return false;
		k = put(argv, k, w);
		for (size_t i = 0; i < n; i++)
			if (!word(buf, bufsz, &o, argv, &k, "--select-method", "", "") ||
			    !word(buf, bufsz, &o, argv, &k, cls, "#", tests[i]))
				return false;
		break;
	}
	case SUITE_GTEST: {
		static const char *const w[] = { LOADER, SUITE_PROGRAM, "--gtest_output=xml:" SUITE_REPORT, NULL };
		k = put(argv, 0, w);
		/* One word: "--gtest_filter=A.B:C.D". */
		size_t len = strlen("--gtest_filter=");
		if (len + 1 > bufsz || k >= SUITE_ARGV_MAX)
			return false;
		memcpy(buf, "--gtest_filter=", len);
		for (size_t i = 0; i < n; i++) {
			size_t l = strlen(tests[i]);
			if (len + l + 2 > bufsz)
				return false;
			if (i)
				buf[len++] = ':';
			memcpy(buf + len, tests[i], l);
			len += l;
		}
		buf[len] = '\0';
		argv[k++] = buf;
		break;
	}
	case SUITE_C:
		return false;
	}
	argv[k] = NULL;
	return true;
}

const char *suite_report_path(enum suite_framework f)
{
	return f == SUITE_JUNIT5 ? SUITE_JUNIT_REPORT : SUITE_REPORT;
}

const char *suite_test_cwd(enum suite_framework f)
{
	return f == SUITE_JUNIT5 ? SUITE_DIR : "/box";
}

bool suite_report_names(enum suite_framework f, const char *test_file, const char *plan_name, const char *name,
			const char *classname)
{
	char want[512];
	switch (f) {
	case SUITE_PYTEST: {
		/* "TestCalc::test_add" of test_calc.py is reported as test_add
		 * of classname "test_calc.TestCalc"; "test_add" of "test_calc". */
		size_t o = (size_t)snprintf(want, sizeof(want), "%s", test_file);
		if (o >= 3 && !strcmp(want + o - 3, ".py"))
			want[o -= 3] = '\0';
		const char *part = plan_name, *sep;
		while ((sep = strstr(part, "::")) != NULL && o < sizeof(want)) {
			o += (size_t)snprintf(want + o, sizeof(want) - o, ".%.*s", (int)(sep - part), part);
			part = sep + 2;
		}
		return !strcmp(part, name) && !strcmp(want, classname);
	}
	case SUITE_JUNIT5:
		snprintf(want, sizeof(want), "%s()", plan_name);
		return !strcmp(want, name) || !strcmp(plan_name, name);
	case SUITE_GTEST:
		snprintf(want, sizeof(want), "%s.%s", classname, name);
		return !strcmp(want, plan_name);
	case SUITE_C:
		return !strcmp(plan_name, name);
	}
	return false;
}
