/* Unit tests of Jobe's REST API core (frontend/api_jobe.c): routes, the
 * run_spec into a job spec (limits clamped to the language and the
 * tenant, arguments, files), outcome codes, output made UTF-8, file ids
 * and the tar archive. Tables of cases, named by behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobspec.h"
#include "frontend/api_jobe.h"
#include "frontend/router.h"

static struct lang_registry reg;
static struct fe_catalog cat;
static const struct fe_bounds bounds = { .max_source = 1000, .max_tests = 3, .max_test_size = 100,
					 .max_batch = 20, .max_additional_files = 4096 };

static int setup(void **state)
{
	(void)state;
	struct gv_err err;
	if (lang_registry_load(&reg, "languages", &err) < 0 || fe_catalog_init(&cat, &reg, NULL, 0, &err) < 0) {
		print_error("languages: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lang_registry_free(&reg);
	return 0;
}

static void jobe__routes__under_jobes_prefix(void **state)
{
	(void)state;
	static const struct {
		enum fe_method m;
		const char *path;
		enum fe_match_result want;
		enum fe_route_id id;
	} cases[] = {
		{ FE_M_GET, "/jobe/index.php/restapi/languages", FE_MATCH_OK, FE_ROUTE_JOBE_LANGUAGES },
		{ FE_M_POST, "/jobe/index.php/restapi/runs", FE_MATCH_OK, FE_ROUTE_JOBE_RUNS },
		{ FE_M_POST, "/jobe/index.php/restapi/runs/", FE_MATCH_OK, FE_ROUTE_JOBE_RUNS },
		{ FE_M_GET, "/jobe/index.php/restapi/runresults/abc", FE_MATCH_OK, FE_ROUTE_JOBE_RUNRESULT },
		{ FE_M_POST, "/jobe/index.php/restapi/files", FE_MATCH_OK, FE_ROUTE_JOBE_FILES_POST },
		{ FE_M_PUT, "/jobe/index.php/restapi/files/0123abcd", FE_MATCH_OK, FE_ROUTE_JOBE_FILE_PUT },
		{ FE_M_HEAD, "/jobe/index.php/restapi/files/0123abcd", FE_MATCH_OK, FE_ROUTE_JOBE_FILE_CHECK },
		{ FE_M_GET, "/jobe/index.php/restapi/runs", FE_MATCH_BAD_METHOD, FE_ROUTE_NONE },
		{ FE_M_DELETE, "/jobe/index.php/restapi/files/0123abcd", FE_MATCH_BAD_METHOD, FE_ROUTE_NONE },
		{ FE_M_GET, "/jobe/restapi/languages", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fe_match m;
		enum fe_match_result r = fe_route_match(cases[i].m, cases[i].path, &m);
		assert_int_equal(r, cases[i].want);
		if (r == FE_MATCH_OK)
			assert_int_equal(m.route->id, cases[i].id);
	}
}

static void jobe__language_ids__map_to_ours(void **state)
{
	(void)state;
	const struct lang_def *l = fe_jobe_language(&cat, "nodejs");
	assert_non_null(l);
	assert_string_equal(l->id, "javascript");
	assert_string_equal(fe_jobe_id_of(l), "nodejs");
	assert_string_equal(fe_jobe_language(&cat, "python3")->id, "python3");
	assert_null(fe_jobe_language(&cat, "javascript")); /* not a Jobe id */
	assert_null(fe_jobe_language(&cat, "cobol"));
	assert_null(fe_jobe_id_of(lang_find(&reg, "rust")));
	/* Jobe's php and octave are languages of every API. */
	assert_string_equal(fe_jobe_language(&cat, "php")->id, "php");
	assert_string_equal(fe_jobe_language(&cat, "octave")->id, "octave");
	assert_string_equal(fe_catalog_by_judge0(&cat, 68)->id, "php");
	assert_string_equal(fe_catalog_by_judge0(&cat, 66)->id, "octave");
	assert_string_equal(fe_piston_find(&cat, "php", "*")->id, "php");
	assert_string_equal(fe_piston_find(&cat, "matlab", NULL)->id, "octave");
	json_t *a = fe_jobe_languages(&cat, NULL);
	bool c = false;
	size_t i;
	json_t *p;
	json_array_foreach(a, i, p) {
		assert_int_equal(json_array_size(p), 2);
		if (!strcmp(json_string_value(json_array_get(p, 0)), "c"))
			c = true;
	}
	assert_true(c);
	json_decref(a);
}

/* Parses body (JSON text) with quota q; the spec in *out (owned) or the
 * error in e. */
static int parse(const char *text, const struct tenant_quota *q, struct fe_jobe_run *run, struct fe_apierr *e)
{
	json_error_t je;
	json_t *body = json_loads(text, 0, &je);
	assert_non_null(body);
	int rc = fe_jobe_parse(body, &cat, &bounds, q, run, e);
	json_decref(body);
	return rc;
}

static void jobe__parse__bad_requests_are_400_with_jobes_words(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		int status;
		const char *msg;
	} cases[] = {
		{ "{}", 400, "No run_spec attribute found" },
		{ "{\"run_spec\": []}", 400, "No run_spec attribute found" },
		{ "{\"run_spec\": {\"sourcecode\": \"x\"}}", 400,
		  "run_spec is missing the required attribute 'language_id'" },
		{ "{\"run_spec\": {\"language_id\": \"c\"}}", 400,
		  "run_spec is missing the required attribute 'sourcecode'" },
		{ "{\"run_spec\": {\"language_id\": \"cobol\", \"sourcecode\": \"x\"}}", 400,
		  "Language 'cobol' is not known" },
		{ "{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"sourcefilename\": \"../a.c\"}}", 400,
		  "Illegal source filename '../a.c'" },
		{ "{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"parameters\": {\"cputime\": -1}}}",
		  400, NULL },
		{ "{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"parameters\": {\"compileargs\": "
		  "[\"-fplugin=x\"]}}}",
		  400, NULL },
		{ "{\"run_spec\": {\"language_id\": \"python3\", \"sourcecode\": \"x\", \"parameters\": {\"compileargs\": "
		  "[\"-O2\"]}}}",
		  400, NULL },
		{ "{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"file_list\": [[\"short\", \"a\"]]}}",
		  400, NULL },
		{ "{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"file_list\": [[\"abcdefgh\", "
		  "\"main.c\"]]}}",
		  400, NULL },
		{ "{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"file_list\": [[\"abcdefgh\", "
		  "\"a/b\"]]}}",
		  400, NULL },
		{ "{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"file_list\": [[\"abcdefgh\", "
		  "\"a\"], [\"abcdefgi\", \"a\"]]}}",
		  400, NULL },
		{ "{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"parameters\": 5}}", 400, NULL },
		{ "{\"run_spec\": {\"language_id\": \"python3\", \"sourcecode\": \"x\", \"parameters\": "
		  "{\"interpreterargs\": [\"-B\", \"-c\"]}}}",
		  400,
		  "parameters.interpreterargs: '-c' is not allowed for python3 (see the language's interpreter_options)" },
		{ "{\"run_spec\": {\"language_id\": \"python3\", \"sourcecode\": \"x\", \"parameters\": "
		  "{\"interpreterargs\": [\"-Bm\"]}}}",
		  400, NULL },
		{ "{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"parameters\": "
		  "{\"interpreterargs\": [\"-O\"]}}}",
		  400, "parameters.interpreterargs: '-O' is not allowed for c (see the language's interpreter_options)" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fe_jobe_run run;
		struct fe_apierr e;
		assert_int_equal(parse(cases[i].body, NULL, &run, &e), -1);
		assert_int_equal(e.status, cases[i].status);
		if (cases[i].msg)
			assert_string_equal(e.msg, cases[i].msg);
	}
}

static void jobe__parse__run_spec_into_the_job(void **state)
{
	(void)state;
	struct fe_jobe_run run;
	struct fe_apierr e;
	int rc = parse("{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"int main(){}\", \"input\": \"in\","
		       " \"file_list\": [[\"0123456789abcdef\", \"data.txt\"]], \"parameters\": {\"cputime\": 2,"
		       " \"memorylimit\": 64, \"numprocs\": 10, \"compileargs\": [\"-std=c89\"], \"linkargs\": [\"-lm\"],"
		       " \"runargs\": [\"a\", \"b c\"], \"debug\": true}}}",
		       NULL, &run, &e);
	assert_int_equal(rc, 0);
	const json_t *s = run.job.spec;
	assert_string_equal(json_string_value(json_object_get(s, "language")), "c");
	assert_string_equal(json_string_value(json_object_get(s, "stdin")), "in");
	assert_true(json_is_true(json_object_get(s, "return_output")));
	const json_t *lim = json_object_get(s, "limits");
	assert_int_equal(json_integer_value(json_object_get(lim, "time_ms")), 2000);
	assert_int_equal(json_integer_value(json_object_get(lim, "wall_ms")), 6000);
	assert_int_equal(json_integer_value(json_object_get(lim, "memory_mb")), 64);
	assert_int_equal(json_integer_value(json_object_get(lim, "procs")), 10);
	const json_t *co = json_object_get(s, "compile_options");
	assert_int_equal(json_array_size(co), 2);
	assert_string_equal(json_string_value(json_array_get(co, 0)), "-std=c89");
	assert_string_equal(json_string_value(json_array_get(co, 1)), "-lm");
	const json_t *args = json_object_get(s, "args");
	assert_int_equal(json_array_size(args), 2);
	assert_string_equal(json_string_value(json_array_get(args, 1)), "b c");
	assert_int_equal(run.n_files, 1);
	assert_string_equal(run.files[0].id, "0123456789abcdef");
	assert_string_equal(run.files[0].name, "data.txt");
	/* The spec is one the executor takes. */
	struct gv_jobspec js;
	struct gv_err err;
	assert_int_equal(gv_jobspec_from_json(s, &js, &err), 0);
	assert_int_equal(js.procs, 10);
	assert_true(js.writable_box);
	gv_jobspec_free(&js);
	/* A writable work dir is for one plain run: never with tests. */
	json_t *judged = json_deep_copy(s);
	json_object_set_new(judged, "tests", json_pack("[{s:s,s:s}]", "input", "1", "expected", "1"));
	assert_int_equal(gv_jobspec_from_json(judged, &js, &err), -1);
	assert_non_null(strstr(err.msg, "writable_box"));
	gv_jobspec_free(&js);
	json_decref(judged);
	fe_jobe_run_clear(&run);
}

/* interpreterargs reach the spec the executor takes, as its
 * interpreter_options (judge.c puts them after the interpreter). */
static void jobe__parse__interpreterargs_into_the_spec(void **state)
{
	(void)state;
	struct fe_jobe_run run;
	struct fe_apierr e;
	int rc = parse("{\"run_spec\": {\"language_id\": \"python3\", \"sourcecode\": \"print(1)\", \"parameters\":"
		       " {\"interpreterargs\": [\"-BE\", \"-O\", \"-Wignore\"]}}}",
		       NULL, &run, &e);
	if (rc != 0)
		fail_msg("%d %s", e.status, e.msg);
	const json_t *io = json_object_get(run.job.spec, "interpreter_options");
	assert_int_equal(json_array_size(io), 3);
	assert_string_equal(json_string_value(json_array_get(io, 0)), "-BE");
	assert_string_equal(json_string_value(json_array_get(io, 2)), "-Wignore");
	struct gv_jobspec js;
	struct gv_err err;
	assert_int_equal(gv_jobspec_from_json(run.job.spec, &js, &err), 0);
	assert_int_equal(js.n_interpreter_options, 3);
	assert_string_equal(js.interpreter_options[1], "-O");
	/* ... and survive the spec's own round trip. */
	json_t *back = gv_jobspec_to_json(&js);
	assert_non_null(back);
	assert_true(json_equal(json_object_get(back, "interpreter_options"), io));
	json_decref(back);
	gv_jobspec_free(&js);
	fe_jobe_run_clear(&run);
	/* None given: no key at all. */
	assert_int_equal(parse("{\"run_spec\": {\"language_id\": \"python3\", \"sourcecode\": \"x\", "
			       "\"parameters\": {\"interpreterargs\": []}}}",
			       NULL, &run, &e),
			 0);
	assert_null(json_object_get(run.job.spec, "interpreter_options"));
	fe_jobe_run_clear(&run);
}

static void jobe__parse__limits_lowered_to_language_and_tenant(void **state)
{
	(void)state;
	const struct lang_def *c = lang_find(&reg, "c");
	struct fe_jobe_run run;
	struct fe_apierr e;
	/* Past the language's maximum: lowered to it, not refused. */
	assert_int_equal(parse("{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"parameters\": "
			       "{\"cputime\": 99999, \"memorylimit\": 999999, \"numprocs\": 100000}}}",
			       NULL, &run, &e),
			 0);
	const json_t *lim = json_object_get(run.job.spec, "limits");
	assert_int_equal(json_integer_value(json_object_get(lim, "time_ms")), c->max.time_ms);
	assert_int_equal(json_integer_value(json_object_get(lim, "memory_mb")), c->max.memory_mb);
	assert_int_equal(json_integer_value(json_object_get(lim, "procs")), c->max.procs);
	assert_true(json_integer_value(json_object_get(lim, "wall_ms")) <= c->max.wall_ms);
	fe_jobe_run_clear(&run);
	/* The tenant's ceilings are lower still: those. memorylimit 0 is
	 * Jobe's "none": the most the tenant may use. */
	struct tenant_quota q = { .max_cpu_ms = 1500, .max_wall_ms = 4000, .max_memory_mb = 128 };
	assert_int_equal(parse("{\"run_spec\": {\"language_id\": \"c\", \"sourcecode\": \"x\", \"parameters\": "
			       "{\"cputime\": 10, \"memorylimit\": 0}}}",
			       &q, &run, &e),
			 0);
	lim = json_object_get(run.job.spec, "limits");
	assert_int_equal(json_integer_value(json_object_get(lim, "time_ms")), 1500);
	assert_int_equal(json_integer_value(json_object_get(lim, "wall_ms")), 4000);
	assert_int_equal(json_integer_value(json_object_get(lim, "memory_mb")), 128);
	fe_jobe_run_clear(&run);
	/* Nothing given: Jobe's 5 s of CPU, the language's memory, no procs. */
	assert_int_equal(parse("{\"run_spec\": {\"language_id\": \"python3\", \"sourcecode\": \"x\"}}", NULL, &run, &e),
			 0);
	lim = json_object_get(run.job.spec, "limits");
	assert_int_equal(json_integer_value(json_object_get(lim, "time_ms")), FE_JOBE_DEFAULT_CPU_MS);
	assert_int_equal(json_integer_value(json_object_get(lim, "memory_mb")), 0);
	assert_null(json_object_get(lim, "procs"));
	fe_jobe_run_clear(&run);
	/* numprocs below a runtime's own count (Java's threads) changes
	 * nothing. */
	assert_int_equal(parse("{\"run_spec\": {\"language_id\": \"java\", \"sourcecode\": \"x\", \"parameters\": "
			       "{\"numprocs\": 1}}}",
			       NULL, &run, &e),
			 0);
	assert_null(json_object_get(json_object_get(run.job.spec, "limits"), "procs"));
	fe_jobe_run_clear(&run);
}

static void jobe__outcome__from_status_and_signal(void **state)
{
	(void)state;
	static const struct {
		const char *row_status;
		const char *result;
		int want;
	} cases[] = {
		{ "done", "{\"status\": \"OK\", \"exit_code\": 0}", 15 },
		{ "done", "{\"status\": \"RE\", \"exit_code\": 3, \"signal\": 0}", 15 },
		{ "done", "{\"status\": \"RE\", \"exit_code\": 0, \"signal\": 11}", 12 },
		{ "done", "{\"status\": \"RE\", \"signal\": 31}", 19 },
		{ "done", "{\"status\": \"CE\"}", 11 },
		{ "done", "{\"status\": \"TLE\"}", 13 },
		{ "done", "{\"status\": \"MLE\"}", 17 },
		{ "done", "{\"status\": \"OLE\"}", 12 },
		{ "done", "{\"status\": \"IE\"}", 20 },
		{ "done", "{}", 20 },
		{ "failed", "{\"status\": \"OK\"}", 20 },
		{ "cancelled", NULL, 20 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *res = cases[i].result ? json_loads(cases[i].result, 0, NULL) : NULL;
		assert_int_equal(fe_jobe_outcome(cases[i].row_status, res), cases[i].want);
		json_decref(res);
	}
}

static void jobe__render__result_fields_and_exact_bytes(void **state)
{
	(void)state;
	/* stdout's exact bytes "caf\xe9\n" in its _b64 twin. */
	json_t *res = json_loads("{\"status\": \"OK\", \"stdout\": \"caf\\ufffd\\n\", \"stdout_b64\": \"Y2Fm6Qo=\","
				 " \"stderr\": \"w\", \"compile_output\": \"warning\"}",
				 0, NULL);
	struct fe_subrow row = { .id = "run1", .status = "done", .result = res };
	json_t *o = fe_jobe_render(&row);
	assert_string_equal(json_string_value(json_object_get(o, "run_id")), "run1");
	assert_int_equal(json_integer_value(json_object_get(o, "outcome")), 15);
	assert_string_equal(json_string_value(json_object_get(o, "stdout")), "caf\xc3\xa9\n");
	assert_string_equal(json_string_value(json_object_get(o, "stderr")), "w");
	assert_string_equal(json_string_value(json_object_get(o, "cmpinfo")), "");
	json_decref(o);
	json_decref(res);
	res = json_loads("{\"status\": \"CE\", \"compile_output\": \"main.c:1: error\", \"stdout\": \"\"}", 0, NULL);
	row.result = res;
	o = fe_jobe_render(&row);
	assert_int_equal(json_integer_value(json_object_get(o, "outcome")), 11);
	assert_string_equal(json_string_value(json_object_get(o, "cmpinfo")), "main.c:1: error");
	json_decref(o);
	json_decref(res);
	o = fe_jobe_overload("max_queued");
	assert_int_equal(json_integer_value(json_object_get(o, "outcome")), 21);
	assert_true(json_is_null(json_object_get(o, "run_id")));
	json_decref(o);
}

static void jobe__utf8__valid_kept_rest_as_latin1(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t len;
		const char *want;
	} cases[] = {
		{ "plain", 5, "plain" },
		{ "h\xc3\xa9 \xe2\x9c\x93", 7, "h\xc3\xa9 \xe2\x9c\x93" },
		{ "\xff\xfe", 2, "\xc3\xbf\xc3\xbe" },
		{ "a\xe9", 2, "a\xc3\xa9" },             /* truncated sequence */
		{ "\xc0\xaf", 2, "\xc3\x80\xc2\xaf" },   /* overlong */
		{ "\xed\xa0\x80", 3, "\xc3\xad\xc2\xa0\xc2\x80" }, /* surrogate */
		{ "\xf4\x90\x80\x80", 4, "\xc3\xb4\xc2\x90\xc2\x80\xc2\x80" }, /* past U+10FFFF */
		{ "", 0, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n;
		char *out = fe_jobe_utf8(cases[i].in, cases[i].len, &n);
		assert_non_null(out);
		assert_int_equal(n, strlen(cases[i].want));
		assert_memory_equal(out, cases[i].want, n);
		free(out);
	}
}

static void jobe__file_ids__alphanumeric_8_to_64(void **state)
{
	(void)state;
	assert_true(fe_jobe_file_id_ok("0123abcd"));
	assert_true(fe_jobe_file_id_ok("d41d8cd98f00b204e9800998ecf8427e"));
	assert_true(fe_jobe_file_id_ok("a_b-c_d-e"));
	assert_false(fe_jobe_file_id_ok("short"));
	assert_false(fe_jobe_file_id_ok("abc.defgh"));
	assert_false(fe_jobe_file_id_ok("abc/defgh"));
	assert_false(fe_jobe_file_id_ok(NULL));
	char longid[66];
	memset(longid, 'a', 65);
	longid[65] = '\0';
	assert_false(fe_jobe_file_id_ok(longid));
	longid[64] = '\0';
	assert_true(fe_jobe_file_id_ok(longid));
}

static void jobe__tar__ustar_blocks_and_checksums(void **state)
{
	(void)state;
	const char *names[] = { "a.txt", "b.bin" };
	const char *data[] = { "hello", "\x00\x01\x02" };
	size_t lens[] = { 5, 3 };
	char *tar;
	size_t len;
	assert_int_equal(fe_jobe_tar(names, data, lens, 2, &tar, &len), 0);
	assert_int_equal(len, 512 * 6); /* two headers, two data blocks, the end */
	assert_string_equal(tar, "a.txt");
	assert_memory_equal(tar + 257, "ustar\0" "00", 8);
	assert_memory_equal(tar + 124, "00000000005", 11);
	assert_memory_equal(tar + 512, "hello", 5);
	assert_string_equal(tar + 1024, "b.bin");
	assert_memory_equal(tar + 1536, "\x00\x01\x02", 3);
	/* The checksum: the header's bytes with its own field as spaces. */
	char h[512];
	memcpy(h, tar, 512);
	unsigned want = (unsigned)strtoul(h + 148, NULL, 8);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (size_t i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	assert_int_equal(sum, want);
	for (size_t i = 2048; i < len; i++)
		assert_int_equal(tar[i], 0);
	free(tar);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jobe__routes__under_jobes_prefix),
		cmocka_unit_test(jobe__language_ids__map_to_ours),
		cmocka_unit_test(jobe__parse__bad_requests_are_400_with_jobes_words),
		cmocka_unit_test(jobe__parse__run_spec_into_the_job),
		cmocka_unit_test(jobe__parse__interpreterargs_into_the_spec),
		cmocka_unit_test(jobe__parse__limits_lowered_to_language_and_tenant),
		cmocka_unit_test(jobe__outcome__from_status_and_signal),
		cmocka_unit_test(jobe__render__result_fields_and_exact_bytes),
		cmocka_unit_test(jobe__utf8__valid_kept_rest_as_latin1),
		cmocka_unit_test(jobe__file_ids__alphanumeric_8_to_64),
		cmocka_unit_test(jobe__tar__ustar_blocks_and_checksums),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
