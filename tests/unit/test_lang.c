/* Unit tests of the language registry (languages/lang*.c): the shipped
 * definitions in $GAVEL_ROOT/languages, look-ups, argv templates, and a table
 * of broken definitions that must fail with file:line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "languages/lang.h"
#include "languages/lang_entry.h"
#include "languages/lang_cds.h"
#include "languages/lang_pch.h"

static struct lang_registry reg;

static int load_shipped(void **state)
{
	(void)state;
	const char *root = getenv("GAVEL_ROOT");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/languages", root && *root ? root : ".");
	struct gv_err err;
	if (lang_registry_load(&reg, dir, &err) < 0) {
		fprintf(stderr, "lang_registry_load: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int free_shipped(void **state)
{
	(void)state;
	lang_registry_free(&reg);
	lang_registry_free(&reg);
	return 0;
}

static void lang__shipped__required_ids_present(void **state)
{
	(void)state;
	static const char *const ids[] = {"c", "cpp", "cpp14", "cpp20", "python3", "java", "javascript", "rust", "go", "pascal"};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (!lang_find(&reg, ids[i]))
			fail_msg("language %s missing", ids[i]);
	assert_null(lang_find(&reg, "cobol"));
	assert_null(lang_find(&reg, NULL));
}

struct ext_case {
	const char *ext;
	const char *id;
};

static const struct ext_case exts[] = {
	{".c", "c"},	     {".cpp", "cpp"},	{".cc", "cpp"},	     {"CPP", "cpp"},	 {".c++", "cpp"},	{".cxx", "cpp"},	 {".py", "python3"},
	{".java", "java"}, {".js", "javascript"}, {".rs", "rust"}, {".go", "go"},	 {".pas", "pascal"},
	{".txt", NULL},    {".", NULL},		{"", NULL},
};

static void lang__extensions__map_to_ids(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		const struct lang_def *d = lang_find_by_extension(&reg, exts[i].ext);
		if (exts[i].id == NULL)
			assert_null(d);
		else if (!d || strcmp(d->id, exts[i].id))
			fail_msg("%s -> %s, want %s", exts[i].ext, d ? d->id : "none", exts[i].id);
	}
	assert_string_equal(lang_find_by_filename(&reg, "sub/dir/Main.java")->id, "java");
	assert_string_equal(lang_find_by_filename(&reg, "a.b.cc")->id, "cpp");
	assert_string_equal(lang_find_by_filename(&reg, "sol.c++")->id, "cpp");
	assert_null(lang_find_by_filename(&reg, ".c"));
	assert_null(lang_find_by_filename(&reg, "Makefile"));
}

static void lang__judge0_ids__map_to_ids(void **state)
{
	(void)state;
	static const struct {
		int j0;
		const char *id;
	} m[] = {{50, "c"}, {54, "cpp"}, {71, "python3"}, {62, "java"}, {63, "javascript"}, {73, "rust"}, {60, "go"},
		 {67, "pascal"}};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		const struct lang_def *d = lang_by_judge0_id(&reg, m[i].j0);
		assert_non_null(d);
		assert_string_equal(d->id, m[i].id);
	}
	assert_null(lang_by_judge0_id(&reg, 0));
	assert_null(lang_by_judge0_id(&reg, 9999));
}

/* What real clients send as compiler options (Judge0 IDE's C++ default:
 * "-O3 --std=c++17 -Wall -Wextra -Wold-style-cast -Wuseless-cast
 * -Wnull-dereference -Werror -Wfatal-errors -pedantic -pedantic-errors"),
 * and what must stay out: words passed on to the linker, assembler or
 * preprocessor, sanitizers, paths, plugins. */
static void lang__compile_options__real_clients_and_refusals(void **state)
{
	(void)state;
	static const char *const ok[] = { "-O3", "--std=c++17", "-std=c++17", "--std=gnu++20", "-Wall", "-Wextra",
					  "-Wold-style-cast", "-Wuseless-cast", "-Wnull-dereference", "-Werror",
					  "-Wfatal-errors", "-pedantic", "-pedantic-errors", "-Wno-unused-result",
					  "-Wframe-larger-than=4096", "-Werror=return-type", "-Wformat=2" };
	static const char *const refused[] = { "-Wl,-rpath,/tmp", "-Wa,-adhln=/box/x", "-Wp,-MD,/box/dep", "-W",
					       "-fsanitize=address", "--std=c++2b", "--std", "-std=c++17x",
					       "-fplugin=/tmp/p.so", "-specs=/tmp/s", "--W", "-W*", "-Wshadow;id",
					       "-W\\x", "--sysroot=/tmp", "-B/tmp" };
	static const char *const cpp_ids[] = { "cpp", "cpp14", "cpp20" };
	for (size_t l = 0; l < sizeof(cpp_ids) / sizeof(cpp_ids[0]); l++) {
		const struct lang_def *d = lang_find(&reg, cpp_ids[l]);
		assert_non_null(d);
		for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			if (!lang_compile_option_allowed(d, ok[i]))
				fail_msg("%s: '%s' refused", d->id, ok[i]);
		for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
			if (lang_compile_option_allowed(d, refused[i]))
				fail_msg("%s: '%s' allowed", d->id, refused[i]);
	}
	const struct lang_def *c = lang_find(&reg, "c");
	assert_true(lang_compile_option_allowed(c, "--std=c11"));
	assert_true(lang_compile_option_allowed(c, "-Wshadow"));
	assert_true(lang_compile_option_allowed(c, "-pedantic-errors"));
	assert_false(lang_compile_option_allowed(c, "--std=c++17"));
	/* A language that lists no warnings admits none. */
	const struct lang_def *py = lang_find(&reg, "python3");
	assert_false(lang_compile_option_allowed(py, "-Wall"));
	assert_false(lang_compile_option_allowed(py, "--std=c11"));
}

/* Jobe's interpreterargs for python3: listed flags, clusters of listed
 * one-letter flags, warning filters; never a flag that takes code, a
 * module or an option value, nor anything for a language without a list. */
static void lang__interpreter_options__clusters_and_refusals(void **state)
{
	(void)state;
	const struct lang_def *py = lang_find(&reg, "python3"), *c = lang_find(&reg, "c");
	assert_non_null(py);
	static const char *const ok[] = { "-B", "-E", "-O", "-OO", "-BE", "-BEsSuIq", "-bb", "-Wignore", "-Werror",
					  "-Wdefault" };
	static const char *const refused[] = { "-c", "-m", "-X", "-Xdev", "-Bc", "-Bm", "-i", "-W", "-Wl,x", "--",
					       "-", "B", "-O2", "-B-E", "-Wignore::x", "--help", "-BBBBBBBBBBBBBBBB" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!lang_interpreter_option_allowed(py, ok[i]))
			fail_msg("python3: '%s' refused", ok[i]);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (lang_interpreter_option_allowed(py, refused[i]))
			fail_msg("python3: '%s' allowed", refused[i]);
	assert_false(lang_interpreter_option_allowed(c, "-O"));
	assert_false(lang_interpreter_option_allowed(c, "-Wall"));
}

static void lang__shipped__sane_fields(void **state)
{
	(void)state;
	for (size_t i = 0; i < reg.n; i++) {
		const struct lang_def *d = &reg.defs[i];
		assert_true(d->defaults.time_ms <= d->max.time_ms);
		assert_non_null(d->run);
		assert_non_null(d->packages[0]);
		assert_true(d->run[0][0] == '/' || !strncmp(d->run[0], "./", 2));
		if (i > 0)
			assert_true(strcmp(reg.defs[i - 1].id, d->id) < 0);
	}
	const struct lang_def *java = lang_find(&reg, "java");
	assert_string_equal(java->source, "Main.java");
	assert_false(java->rlimit_as);
	assert_true(java->defaults.procs > 1);
	assert_false(lang_find(&reg, "go")->rlimit_as);
	assert_false(lang_find(&reg, "javascript")->rlimit_as);
	assert_true(lang_find(&reg, "c")->rlimit_as);
	assert_null(lang_find(&reg, "cpp20")->judge0_id ? "has" : NULL);
	assert_null(lang_find(&reg, "cpp14")->judge0_id ? "has" : NULL);
}

static void lang__expand__substitutes_memory(void **state)
{
	(void)state;
	const struct lang_def *java = lang_find(&reg, "java");
	struct lang_vars vars = { .memory_mb = 512, .compile_memory_mb = 1024, .source = "Main.java",
				  .main_class = "Main" };
	char **argv;
	struct gv_err err;
	assert_int_equal(lang_expand_argv((const char *const *)java->run, &vars, &argv, &err), 0);
	bool found = false;
	for (char **a = argv; *a; a++)
		found |= !strcmp(*a, "-Xmx512m");
	assert_true(found);
	lang_argv_free(argv);
	assert_int_equal(lang_expand_argv((const char *const *)java->compile, &vars, &argv, &err), 0);
	found = false;
	for (char **a = argv; *a; a++)
		found |= !strcmp(*a, "-J-Xmx1024m");
	assert_true(found);
	lang_argv_free(argv);
}

struct tmpl_case {
	const char *in;
	const char *out; /* NULL: error */
};

static const struct tmpl_case tmpls[] = {
	{"plain", "plain"},	      {"-Xmx{memory_mb}m", "-Xmx7m"}, {"{compile_memory_mb}", "9"},
	{"{{literal}}", "{literal}"}, {"{memory_mb", NULL},	       {"{unknown}", NULL},
	{"a}b", NULL},		      {"{}", NULL},		       {"{source}", "hello.java"},
	{"-cp={main_class}", "-cp=a.b.hello"},
	/* The smaller of the limit and N: a JVM's -Xms must not pass its -Xmx. */
	{"-Xms{min(memory_mb,8)}m", "-Xms7m"}, {"-Xms{min(memory_mb,4)}m", "-Xms4m"},
	{"{min(memory_mb,)}", NULL}, {"{min(memory_mb,x)}", NULL}, {"{min(memory_mb,99999999999)}", NULL},
	{"{min(compile_memory_mb,8)}", NULL},
};

static void lang__expand__table(void **state)
{
	(void)state;
	struct lang_vars vars = { .memory_mb = 7, .compile_memory_mb = 9, .source = "hello.java",
				  .main_class = "a.b.hello" };
	for (size_t i = 0; i < sizeof(tmpls) / sizeof(tmpls[0]); i++) {
		const char *t[] = {tmpls[i].in, NULL};
		char **argv = NULL;
		struct gv_err err;
		int rc = lang_expand_argv(t, &vars, &argv, &err);
		if (!tmpls[i].out) {
			if (rc == 0)
				fail_msg("'%s' expanded", tmpls[i].in);
			continue;
		}
		if (rc < 0)
			fail_msg("'%s': %s", tmpls[i].in, err.msg);
		assert_string_equal(argv[0], tmpls[i].out);
		assert_null(argv[1]);
		lang_argv_free(argv);
	}
	const char *empty[] = {NULL};
	char **argv;
	struct gv_err err;
	assert_int_equal(lang_expand_argv(empty, &(struct lang_vars){0}, &argv, &err), -1);
	/* A string placeholder without a value is an error, not "(null)". */
	const char *src[] = {"{source}", NULL};
	assert_int_equal(lang_expand_argv(src, &(struct lang_vars){0}, &argv, &err), -1);
}

/* "{sources}": the main source then the others, as separate words; left
 * for gavel-unpack when the files are known only in the sandbox. */
static void lang__expand__sources(void **state)
{
	(void)state;
	const char *t[] = {"/usr/bin/gcc", "-o", "main", "{sources}", "-lm", NULL};
	const char *others[] = {"util.c", "lib/x.c", NULL};
	struct lang_vars vars = {.source = "main.c", .more_sources = others};
	char **argv;
	struct gv_err err;
	assert_int_equal(lang_expand_argv(t, &vars, &argv, &err), 0);
	const char *want[] = {"/usr/bin/gcc", "-o", "main", "main.c", "util.c", "lib/x.c", "-lm"};
	for (size_t i = 0; i < 7; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[7]);
	lang_argv_free(argv);
	vars = (struct lang_vars){.source = "main.c"};
	assert_int_equal(lang_expand_argv(t, &vars, &argv, &err), 0);
	assert_string_equal(argv[3], "main.c");
	assert_string_equal(argv[4], "-lm");
	lang_argv_free(argv);
	vars = (struct lang_vars){.source = "main.c", .more_sources = others, .sources_in_sandbox = true};
	assert_int_equal(lang_expand_argv(t, &vars, &argv, &err), 0);
	assert_string_equal(argv[3], "main.c");
	assert_string_equal(argv[4], "{sources}");
	assert_string_equal(argv[5], "-lm");
	lang_argv_free(argv);
	/* Part of a word, or without a source: refused. */
	const char *part[] = {"-x{sources}", NULL};
	assert_int_equal(lang_expand_argv(part, &vars, &argv, &err), -1);
	assert_int_equal(lang_expand_argv(t, &(struct lang_vars){0}, &argv, &err), -1);
	/* More words than an argv holds. */
	const char *many[LANG_ARGV_MAX + 1];
	for (size_t i = 0; i < LANG_ARGV_MAX; i++)
		many[i] = "x.c";
	many[LANG_ARGV_MAX] = NULL;
	vars = (struct lang_vars){.source = "main.c", .more_sources = many};
	assert_int_equal(lang_expand_argv(t, &vars, &argv, &err), -1);
}

static void lang__sources__endings(void **state)
{
	(void)state;
	const struct lang_def *c = lang_find(&reg, "c"), *cpp20 = lang_find(&reg, "cpp20");
	const struct lang_def *cpp = lang_find(&reg, "cpp"), *cpp14 = lang_find(&reg, "cpp14");
	assert_true(lang_is_source(c, "util.c"));
	assert_true(lang_is_source(c, "lib/util.c"));
	assert_false(lang_is_source(c, "util.h"));
	assert_false(lang_is_source(c, ".c"));
	assert_false(lang_is_source(c, "lib/.c"));
	/* cpp20 has no extensions of its own but compiles C++ files. */
	assert_true(lang_is_source(cpp20, "x.cc"));
	assert_false(lang_is_source(cpp20, "x.c"));
	/* Every C++ ending DOMjudge accepts, in each dialect. */
	static const char *const cxx[] = {"x.cpp", "x.cc", "x.cxx", "x.c++"};
	for (size_t i = 0; i < sizeof(cxx) / sizeof(cxx[0]); i++) {
		assert_true(lang_is_source(cpp, cxx[i]));
		assert_true(lang_is_source(cpp14, cxx[i]));
		assert_true(lang_is_source(cpp20, cxx[i]));
	}
	assert_false(lang_is_source(cpp14, "x.c"));
}

/* ---- Java entry points ------------------------------------------------- */

struct java_case {
	const char *name;
	const char *src;
	const char *package, *cls; /* expected */
};

static const struct java_case java_cases[] = {
	{"plain Main", "class Main { public static void main(String[] a) {} }", "", "Main"},
	{"public lower-case", "public class hello { public static void main(String[] a) {} }", "", "hello"},
	{"package", "package se.kth.x;\nimport java.util.*;\npublic class Sol { }", "se.kth.x", "Sol"},
	{"package with spaces and comments", "package /* c */ a . b ; public class C {}", "a.b", "C"},
	{"public after helpers", "class A {} interface I {} public final class B {} class D {}", "", "B"},
	{"no public: the class with main",
	 "class Helper { int x; } class Solver { static void main(String[] args) {} }", "", "Solver"},
	{"no public, no main: the first", "class Helper {} class Other {}", "", "Helper"},
	{"comment hides a class", "// public class Fake {\n/* public class Fake2 */ public class Real {}", "", "Real"},
	{"string hides a class", "public class Q { String s = \"}} public class Z {\"; char c = '}'; }", "", "Q"},
	{"text block hides a class", "public class T { String s = \"\"\"\n } public class U { \"\"\"; }", "", "T"},
	{"escaped quote in string", "public class E { String s = \"\\\" } class F {\"; }", "", "E"},
	{"nested public class ignored", "class Outer { public static class Inner {} static void main(String[] a) {} }", "",
	 "Outer"},
	{"annotation then public", "@SuppressWarnings(\"unchecked\") public class An {}", "", "An"},
	{"annotation type", "public @interface Ann {}", "", "Ann"},
	{"record and enum", "enum Color { RED } public record P(int x) {}", "", "P"},
	{"main in a string is no main", "class A { String s = \"void main(\"; } class B { void main() {} }", "", "B"},
	{"Foo.class in a body", "public class K { Object o = K.class; } class L {}", "", "K"},
	{"dollar name dropped", "public class A$B {}", "", ""},
	{"non-ASCII name dropped", "public class \xc3\xa9t\xc3\xa9 {}", "", ""},
	{"bad package dropped", "package a..b; public class C {}", "", "C"},
	{"unterminated comment", "public class X { /* never ends", "", "X"},
	{"empty", "", "", ""},
};

static void lang__java_scan__table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(java_cases) / sizeof(java_cases[0]); i++) {
		const struct java_case *c = &java_cases[i];
		struct lang_java_scan js;
		lang_java_scan(c->src, strlen(c->src), &js);
		if (strcmp(js.package, c->package) != 0 || strcmp(js.cls, c->cls) != 0)
			fail_msg("%s: got package '%s' class '%s', want '%s' '%s'", c->name, js.package, js.cls,
				 c->package, c->cls);
	}
}

static void lang__java_scan__bounded_on_huge_input(void **state)
{
	(void)state;
	/* A long unterminated comment and deep nesting end the scan at the
	 * bound without reading past the length. */
	size_t n = LANG_ENTRY_SCAN_MAX + 4096;
	char *buf = malloc(n);
	assert_non_null(buf);
	memset(buf, '{', n);
	memcpy(buf, "public class Big ", 17);
	struct lang_java_scan js;
	lang_java_scan(buf, n, &js);
	assert_string_equal(js.cls, "Big");
	memset(buf, '/', n);
	lang_java_scan(buf, n, &js);
	assert_string_equal(js.cls, "");
	free(buf);
}

static void lang__entry__java_file_and_main_class(void **state)
{
	(void)state;
	const struct lang_def *java = lang_find(&reg, "java");
	struct lang_entry e;
	const char *src = "package a.b;\npublic class hello {}";
	lang_entry_resolve(java, src, strlen(src), &e);
	assert_string_equal(e.file, "hello.java");
	assert_string_equal(e.main_class, "a.b.hello");
	lang_entry_resolve(java, "int x;", 6, &e);
	assert_string_equal(e.file, "Main.java");
	assert_string_equal(e.main_class, "Main");
	/* Languages without a scan keep their source name. */
	lang_entry_resolve(lang_find(&reg, "cpp"), src, strlen(src), &e);
	assert_string_equal(e.file, "main.cpp");
	assert_string_equal(e.main_class, "main");
}

/* ---- versions ---------------------------------------------------------- */

struct version_case {
	const char *lang, *output, *want;
};

static const struct version_case version_cases[] = {
	{"c", "gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022\n", "12.2.0"},
	{"cpp", "g++ (Debian 12.2.0-14) 12.2.0\n", "12.2.0"},
	{"go", "go version go1.19.8 linux/amd64\n", "1.19.8"},
	{"java", "openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment\n", "17.0.15"},
	{"javascript", "v18.19.0\n", "18.19.0"},
	{"javascript", "v20.20.2\n", "20.20.2"},
	{"pascal", "3.2.2+dfsg-20\n", "3.2.2"},
	{"python3", "Python 3.11.2\n", "3.11.2"},
	{"rust", "rustc 1.63.0\n", "1.63.0"},
	{"javascript", "node: not what we expected\n", NULL},
};

static void lang__version__extracted_from_output(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(version_cases) / sizeof(version_cases[0]); i++) {
		const struct version_case *c = &version_cases[i];
		const struct lang_def *d = lang_find(&reg, c->lang);
		assert_non_null(d);
		char v[LANG_VERSION_MAX];
		struct gv_err err;
		int rc = lang_version_extract(d, c->output, v, sizeof(v), &err);
		if (!c->want) {
			assert_int_equal(rc, -1);
			continue;
		}
		if (rc < 0)
			fail_msg("%s: %s", c->lang, err.msg);
		assert_string_equal(v, c->want);
	}
}

static void lang__version__display(void **state)
{
	(void)state;
	const struct lang_def *js = lang_find(&reg, "javascript");
	char out[128];
	lang_display_version(js, "18.19.0", out, sizeof(out));
	assert_string_equal(out, "Node.js 18.19.0");
	lang_display_version(js, NULL, out, sizeof(out));
	assert_string_equal(out, "Node.js");
	lang_display_version(lang_find(&reg, "cpp20"), "12.2.0", out, sizeof(out));
	assert_string_equal(out, "GCC 12.2.0 (C++20)");
	lang_display_version(lang_find(&reg, "cpp14"), "12.2.0", out, sizeof(out));
	assert_string_equal(out, "GCC 12.2.0 (C++14)");
	/* No fixed version number is left in any display template. */
	for (size_t i = 0; i < reg.n; i++)
		if (!strstr(reg.defs[i].version, "{version}"))
			fail_msg("%s: version '%s' has no {version}", reg.defs[i].id, reg.defs[i].version);
}

/* ---- broken definitions ------------------------------------------------ */

#define GOOD_LIMITS                                                                                           \
	"limits:\n"                                                                                           \
	"  defaults: {time_ms: 1000, wall_ms: 2000, memory_mb: 256, output_kb: 1024, procs: 1,\n"             \
	"             compile_time_ms: 1000, compile_wall_ms: 2000, compile_memory_mb: 256, compile_procs: 1}\n" \
	"  max: {time_ms: 1000, wall_ms: 2000, memory_mb: 256, output_kb: 1024, procs: 1,\n"                  \
	"        compile_time_ms: 1000, compile_wall_ms: 2000, compile_memory_mb: 256, compile_procs: 1}\n"
#define GOOD_HEAD                                                                                             \
	"id: x\nname: X\nversion: \"1\"\nversion_command: [/usr/bin/x, --version]\npackages: [x]\n"           \
	"extensions: [.x]\nsource: main.x\n"

struct bad_def {
	const char *name;
	const char *text;
	const char *msg_has;
};

static const struct bad_def bad_defs[] = {
	{"lang__def__good__loads", GOOD_HEAD "run: [/usr/bin/x, main.x]\nrlimit_as: true\n" GOOD_LIMITS, NULL},
	{"lang__def__unknown_key__fails_with_line",
	 GOOD_HEAD "run: [/usr/bin/x, main.x]\nrlimit_as: true\ncolour: blue\n" GOOD_LIMITS, "x.yaml:10: language: unknown key 'colour'"},
	{"lang__def__missing_run__fails", GOOD_HEAD "rlimit_as: true\n" GOOD_LIMITS, "missing required key 'run'"},
	{"lang__def__repeated_key__fails", GOOD_HEAD "run: [/usr/bin/x]\nrun: [/usr/bin/y]\nrlimit_as: true\n" GOOD_LIMITS,
	 "given twice"},
	{"lang__def__relative_program__fails", GOOD_HEAD "run: [x, main.x]\nrlimit_as: true\n" GOOD_LIMITS,
	 "run: 'x'"},
	{"lang__def__local_program_without_compile__fails", GOOD_HEAD "run: [./main]\nrlimit_as: true\n" GOOD_LIMITS,
	 "run: './main'"},
	{"lang__def__program_outside_usr__fails", GOOD_HEAD "run: [/etc/alternatives/x]\nrlimit_as: true\n" GOOD_LIMITS,
	 "under /usr/"},
	{"lang__def__dotdot_program__fails", GOOD_HEAD "run: [/usr/../bin/sh]\nrlimit_as: true\n" GOOD_LIMITS,
	 "under /usr/"},
	{"lang__def__bad_bool__fails", GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: yes\n" GOOD_LIMITS, "true or false"},
	{"lang__def__bad_placeholder__fails", GOOD_HEAD "run: [/usr/bin/x, \"{heap}\"]\nrlimit_as: true\n" GOOD_LIMITS,
	 "unknown placeholder"},
	{"lang__def__default_above_max__fails",
	 GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\nlimits:\n"
		   "  defaults: {time_ms: 5000, wall_ms: 6000, memory_mb: 256, output_kb: 1024, procs: 1,\n"
		   "             compile_time_ms: 1000, compile_wall_ms: 2000, compile_memory_mb: 256, compile_procs: 1}\n"
		   "  max: {time_ms: 1000, wall_ms: 2000, memory_mb: 256, output_kb: 1024, procs: 1,\n"
		   "        compile_time_ms: 1000, compile_wall_ms: 2000, compile_memory_mb: 256, compile_procs: 1}\n",
	 "above limits.max.time_ms"},
	{"lang__def__missing_limit__fails",
	 GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\nlimits:\n"
		   "  defaults: {time_ms: 1000, wall_ms: 2000, memory_mb: 256, output_kb: 1024, procs: 1}\n"
		   "  max: {time_ms: 1000, wall_ms: 2000, memory_mb: 256, output_kb: 1024, procs: 1}\n",
	 "limits.defaults: missing required key 'compile_time_ms'"},
	{"lang__def__negative_limit__fails",
	 GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\nlimits:\n"
		   "  defaults: {time_ms: -1, wall_ms: 2000, memory_mb: 256, output_kb: 1024, procs: 1,\n"
		   "             compile_time_ms: 1000, compile_wall_ms: 2000, compile_memory_mb: 256, compile_procs: 1}\n"
		   "  max: {time_ms: 1000, wall_ms: 2000, memory_mb: 256, output_kb: 1024, procs: 1,\n"
		   "        compile_time_ms: 1000, compile_wall_ms: 2000, compile_memory_mb: 256, compile_procs: 1}\n",
	 "time_ms: expected a non-negative integer"},
	{"lang__def__source_with_slash__fails",
	 "id: x\nname: X\nversion: \"1\"\nversion_command: [/usr/bin/x]\npackages: [x]\nextensions: [.x]\n"
	 "source: ../main.x\nrun: [/usr/bin/x]\nrlimit_as: true\n" GOOD_LIMITS,
	 "plain file name"},
	{"lang__def__id_mismatch__fails",
	 "id: y\nname: X\nversion: \"1\"\nversion_command: [/usr/bin/x]\npackages: [x]\nextensions: [.x]\n"
	 "source: main.x\nrun: [/usr/bin/x]\nrlimit_as: true\n" GOOD_LIMITS,
	 "does not match the file name"},
	{"lang__def__bad_extension__fails",
	 "id: x\nname: X\nversion: \"1\"\nversion_command: [/usr/bin/x]\npackages: [x]\nextensions: [x]\n"
	 "source: main.x\nrun: [/usr/bin/x]\nrlimit_as: true\n" GOOD_LIMITS,
	 "must look like '.cpp'"},
	{"lang__def__host_etc_outside_etc__fails", GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\nhost_etc: [/root]\n" GOOD_LIMITS,
	 "host_etc"},
	{"lang__def__precompiled_header_outside__fails",
	 GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\nprecompiled_headers: [../../etc/shadow]\n" GOOD_LIMITS,
	 "precompiled header"},
	{"lang__def__class_archive_path__fails",
	 GOOD_HEAD "compile: [/usr/bin/x]\nrun: [/usr/bin/x]\nrlimit_as: true\ncompile_class_archive: ../x.jsa\n" GOOD_LIMITS,
	 "compile_class_archive"},
	{"lang__def__class_archive_not_jsa__fails",
	 GOOD_HEAD "compile: [/usr/bin/x]\nrun: [/usr/bin/x]\nrlimit_as: true\ncompile_class_archive: javac\n" GOOD_LIMITS,
	 "compile_class_archive"},
	{"lang__def__class_archive_without_compile__fails",
	 GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\ncompile_class_archive: x.jsa\n" GOOD_LIMITS,
	 "without a compile step"},
	{"lang__def__interpreter_option_path__fails",
	 GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\ninterpreter_options: [-B, /tmp/x]\n" GOOD_LIMITS,
	 "interpreter option '/tmp/x'"},
	{"lang__def__yaml_syntax__fails_with_line", GOOD_HEAD "run: [/usr/bin/x\nrlimit_as: true\n", "x.yaml:"},
	{"lang__def__not_a_mapping__fails", "- a\n- b\n", "expected a mapping"},
	{"lang__def__empty__fails", "", "empty file"},
	{"lang__def__bad_entry_scan__fails", GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\nentry_scan: cobol\n" GOOD_LIMITS,
	 "expected none or java"},
	{"lang__def__bad_version_regex__fails",
	 GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\nversion_regex: \"([0-9]\"\n" GOOD_LIMITS, "version_regex:"},
	{"lang__def__version_regex_interval_bounds__fails",
	 GOOD_HEAD "run: [/usr/bin/x]\nrlimit_as: true\nversion_regex: \"((([0-9]{1,200}){1,200}){1,200})\"\n" GOOD_LIMITS,
	 "interval bounds"},
	{"lang__def__unknown_version_placeholder__fails",
	 "id: x\nname: X\nversion: \"X {ver}\"\nversion_command: [/usr/bin/x]\npackages: [x]\nextensions: [.x]\n"
	 "source: main.x\nrun: [/usr/bin/x]\nrlimit_as: true\n" GOOD_LIMITS,
	 "only {version}"},
};

/* The shipped C++ languages precompile bits/stdc++.h with exactly the
 * flags their compile uses, minus what does not shape a header. */
static void lang__pch__flags_of_the_compile(void **state)
{
	(void)state;
	const struct lang_def *cpp = lang_find(&reg, "cpp"), *c = lang_find(&reg, "c");
	assert_non_null(cpp);
	assert_true(lang_pch_wanted(cpp));
	assert_string_equal(cpp->precompiled_headers[0], "bits/stdc++.h");
	char flags[256];
	assert_int_equal(lang_pch_flags(cpp, flags, sizeof(flags)), 0);
	assert_string_equal(flags, "-std=gnu++17 -O2 -pipe");
	assert_int_equal(lang_pch_flags(lang_find(&reg, "cpp20"), flags, sizeof(flags)), 0);
	assert_string_equal(flags, "-std=gnu++20 -O2 -pipe");
	assert_int_equal(lang_pch_flags(lang_find(&reg, "cpp14"), flags, sizeof(flags)), 0);
	assert_string_equal(flags, "-std=gnu++14 -O2 -pipe");
	assert_false(lang_pch_wanted(c));
	assert_int_equal(lang_pch_flags(c, flags, sizeof(flags)), 0);
	assert_string_equal(flags, "-std=gnu17 -O2 -pipe");
	assert_int_equal(lang_pch_flags(cpp, flags, 8), -1);
	assert_false(lang_pch_wanted(lang_find(&reg, "python3")));
}

/* Java's javac loads its own classes from an archive the node dumps, named
 * the same in the yaml and the compile argv; nothing else asks for one. */
static void lang__cds__java_only(void **state)
{
	(void)state;
	const struct lang_def *java = lang_find(&reg, "java");
	assert_non_null(java);
	assert_string_equal(java->compile_class_archive, "javac.jsa");
	assert_true(lang_cds_wanted(java));
	assert_false(lang_cds_wanted(lang_find(&reg, "cpp")));
	assert_false(lang_cds_wanted(lang_find(&reg, "python3")));
}

static void run_bad_def(void **state)
{
	const struct bad_def *c = *state;
	struct lang_def d;
	struct gv_err err;
	int rc = lang_def_parse(&d, "languages/x.yaml", c->text, strlen(c->text), &err);
	if (!c->msg_has) {
		if (rc < 0)
			fail_msg("%s", err.msg);
		assert_string_equal(d.id, "x");
		assert_null(d.compile);
		assert_true(d.time_factor == 1.0);
		assert_non_null(d.host_etc);
		lang_def_clear(&d);
		return;
	}
	if (rc == 0) {
		lang_def_clear(&d);
		fail_msg("loaded");
	}
	if (!strstr(err.msg, c->msg_has))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, c->msg_has);
}

int main(void)
{
	const struct CMUnitTest fixed[] = {
		cmocka_unit_test(lang__shipped__required_ids_present),
		cmocka_unit_test(lang__pch__flags_of_the_compile),
		cmocka_unit_test(lang__cds__java_only),
		cmocka_unit_test(lang__extensions__map_to_ids),
		cmocka_unit_test(lang__judge0_ids__map_to_ids),
		cmocka_unit_test(lang__shipped__sane_fields),
		cmocka_unit_test(lang__compile_options__real_clients_and_refusals),
		cmocka_unit_test(lang__interpreter_options__clusters_and_refusals),
		cmocka_unit_test(lang__expand__substitutes_memory),
		cmocka_unit_test(lang__expand__table),
		cmocka_unit_test(lang__expand__sources),
		cmocka_unit_test(lang__sources__endings),
		cmocka_unit_test(lang__java_scan__table),
		cmocka_unit_test(lang__java_scan__bounded_on_huge_input),
		cmocka_unit_test(lang__entry__java_file_and_main_class),
		cmocka_unit_test(lang__version__extracted_from_output),
		cmocka_unit_test(lang__version__display),
	};
	size_t nf = sizeof(fixed) / sizeof(fixed[0]), nb = sizeof(bad_defs) / sizeof(bad_defs[0]);
	struct CMUnitTest *tests = calloc(nf + nb, sizeof(*tests));
	if (!tests)
		return 1;
	memcpy(tests, fixed, sizeof(fixed));
	for (size_t i = 0; i < nb; i++)
		tests[nf + i] = (struct CMUnitTest){bad_defs[i].name, run_bad_def, NULL, NULL, (void *)&bad_defs[i]};
	int rc = _cmocka_run_group_tests("lang", tests, nf + nb, load_shipped, free_shipped);
	free(tests);
	return rc;
}
