/* Unit tests of the frontend's pure layers: routing, Judge0 status ids and
 * field selection, number-or-string values, base64 input, native request
 * validation, Piston version ranges. Tables of cases, named by behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobspec.h"
#include "frontend/api.h"
#include "frontend/api_internal.h"
#include "frontend/router.h"

static struct lang_registry reg;
static struct fe_catalog cat;
static const struct fe_bounds bounds = { .max_source = 1000, .max_tests = 3, .max_test_size = 100,
					 .max_batch = 20, .max_additional_files = 8 };

static int setup(void **state)
{
	(void)state;
	struct gv_err err;
	if (lang_registry_load(&reg, "languages", &err) < 0 ||
	    fe_catalog_init(&cat, &reg, NULL, 0, &err) < 0) {
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

static void router__table__matches_routes_methods_and_params(void **state)
{
	(void)state;
	static const struct {
		enum fe_method m;
		const char *path;
		enum fe_match_result want;
		enum fe_route_id id;
		const char *param;
	} cases[] = {
		{ FE_M_POST, "/v1/submissions", FE_MATCH_OK, FE_ROUTE_V1_SUBMIT, NULL },
		{ FE_M_GET, "/v1/submissions/abc_DEF-123", FE_MATCH_OK, FE_ROUTE_V1_SUBMISSION, "abc_DEF-123" },
		{ FE_M_GET, "/v1/submissions/abc/events", FE_MATCH_OK, FE_ROUTE_V1_EVENTS, "abc" },
		{ FE_M_GET, "/v1/languages/", FE_MATCH_OK, FE_ROUTE_V1_LANGUAGES, NULL },
		{ FE_M_HEAD, "/v1/health", FE_MATCH_OK, FE_ROUTE_V1_HEALTH, NULL },
		{ FE_M_GET, "/submissions/batch", FE_MATCH_OK, FE_ROUTE_J0_BATCH_GET, NULL },
		{ FE_M_POST, "/submissions/batch", FE_MATCH_OK, FE_ROUTE_J0_BATCH_CREATE, NULL },
		{ FE_M_GET, "/submissions/tok", FE_MATCH_OK, FE_ROUTE_J0_GET, "tok" },
		{ FE_M_DELETE, "/submissions/tok", FE_MATCH_OK, FE_ROUTE_J0_DELETE, "tok" },
		{ FE_M_GET, "/languages/71", FE_MATCH_OK, FE_ROUTE_J0_LANGUAGE, "71" },
		{ FE_M_POST, "/api/v2/execute", FE_MATCH_OK, FE_ROUTE_PISTON_EXECUTE, NULL },
		{ FE_M_PUT, "/v1/submissions", FE_MATCH_BAD_METHOD, FE_ROUTE_NONE, NULL },
		{ FE_M_GET, "/v1/submissions/a%2Fb", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL },
		{ FE_M_GET, "/v1/submissions//events", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL },
		{ FE_M_GET, "/v1", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL },
		{ FE_M_GET, "relative", FE_MATCH_NOT_FOUND, FE_ROUTE_NONE, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fe_match m;
		enum fe_match_result r = fe_route_match(cases[i].m, cases[i].path, &m);
		assert_int_equal(r, cases[i].want);
		if (r == FE_MATCH_OK) {
			assert_int_equal(m.route->id, cases[i].id);
			if (cases[i].param)
				assert_string_equal(m.params[0], cases[i].param);
		}
	}
}

static void router__bad_method__lists_allowed(void **state)
{
	(void)state;
	struct fe_match m;
	assert_int_equal(fe_route_match(FE_M_POST, "/submissions/x", &m), FE_MATCH_BAD_METHOD);
	char buf[64];
	fe_methods_list(m.allowed, buf, sizeof(buf));
	assert_string_equal(buf, "GET, HEAD, DELETE");
}

static void judge0__status_ids__follow_verdicts_and_signals(void **state)
{
	(void)state;
	static const struct {
		const char *status, *verdict;
		int signal;
		int want;
	} cases[] = {
		{ "queued", NULL, 0, 1 },   { "running", NULL, 0, 2 }, { "done", "AC", 0, 3 },
		{ "done", "WA", 0, 4 },     { "done", "PE", 0, 4 },    { "done", "TLE", 0, 5 },
		{ "done", "CE", 0, 6 },     { "done", "RE", 11, 7 },   { "done", "OLE", 0, 8 },
		{ "done", "RE", 8, 9 },     { "done", "RE", 6, 10 },   { "done", "RE", 0, 11 },
		{ "done", "RE", 9, 12 },    { "done", "MLE", 0, 12 },  { "done", "IE", 0, 13 },
		{ "failed", NULL, 0, 13 },  { "done", NULL, 0, 13 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *res = json_pack("{s:i}", "signal", cases[i].signal);
		assert_int_equal(fe_j0_status_id(cases[i].status, cases[i].verdict, res), cases[i].want);
		json_decref(res);
	}
	assert_string_equal(fe_j0_status_description(3), "Accepted");
	assert_string_equal(fe_j0_status_description(14), "Exec Format Error");
	assert_null(fe_j0_status_description(15));
}

static void judge0__fields__default_star_and_unknown(void **state)
{
	(void)state;
	uint64_t m;
	struct fe_apierr e;
	assert_int_equal(fe_j0_parse_fields(NULL, &m, &e), 0);
	assert_true(m == fe_j0_default_fields());
	assert_int_equal(fe_j0_parse_fields("token, stdout", &m, &e), 0);
	assert_true(m == (1ull << FE_J0_TOKEN | 1ull << FE_J0_STDOUT));
	assert_int_equal(fe_j0_parse_fields("*", &m, &e), 0);
	assert_true(m & (1ull << FE_J0_SOURCE_CODE));
	assert_int_equal(fe_j0_parse_fields("token,bogus", &m, &e), -1);
	assert_int_equal(e.status, 400);
	assert_non_null(strstr(e.msg, "bogus"));
}

static void judge0__numbers__accept_strings_and_nulls(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		int want;
		double value;
	} cases[] = {
		{ "{\"x\": 2}", 0, 2 },        { "{\"x\": \"2.5\"}", 0, 2.5 }, { "{\"x\": null}", 1, -1 },
		{ "{}", 1, -1 },               { "{\"x\": \"\"}", 1, -1 },     { "{\"x\": \"2s\"}", -1, -1 },
		{ "{\"x\": true}", -1, -1 },   { "{\"x\": 99}", -1, -1 },      { "{\"x\": \"nan\"}", -1, -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *j = json_loads(cases[i].json, 0, NULL);
		double v = -1;
		struct fe_apierr e;
		assert_int_equal(fe_j0_number(j, "x", 0, 10, &v, &e), cases[i].want);
		assert_true(v == cases[i].value);
		json_decref(j);
	}
}

static void judge0__parse__maps_fields_base64_and_expected_output(void **state)
{
	(void)state;
	json_t *b = json_loads("{\"language_id\":\"71\",\"source_code\":\"cHJpbnQoMSk=\",\"stdin\":null,"
			       "\"expected_output\":\"MQ==\",\"cpu_time_limit\":\"2\",\"memory_limit\":65536}",
			       0, NULL);
	struct fe_job job;
	struct fe_apierr e;
	assert_int_equal(fe_j0_parse(b, true, &cat, &bounds, &job, &e), 0);
	assert_string_equal(job.lang->id, "python3");
	assert_true(job.judged);
	assert_int_equal(job.time_ms, 2000);
	assert_int_equal(job.memory_mb, 64);
	json_t *f0 = json_array_get(json_object_get(job.spec, "files"), 0);
	assert_string_equal(json_string_value(json_object_get(f0, "content")), "print(1)");
	json_t *t0 = json_array_get(json_object_get(job.spec, "tests"), 0);
	assert_string_equal(json_string_value(json_object_get(t0, "expected")), "1");
	fe_job_clear(&job);
	json_decref(b);
	static const struct {
		const char *json;
		bool base64;
		int status;
	} bad[] = {
		{ "{\"source_code\":\"x\"}", false, 422 },
		{ "{\"language_id\":9999,\"source_code\":\"x\"}", false, 422 },
		{ "{\"language_id\":71,\"source_code\":\"!!!\"}", true, 400 },
		{ "{\"language_id\":71,\"source_code\":\"x\",\"compiler_options\":\"-O2\"}", false, 422 },
		{ "{\"language_id\":71,\"source_code\":\"x\",\"command_line_arguments\":\"'a b\"}", false, 400 },
		{ "{\"language_id\":71,\"source_code\":\"x\",\"stack_limit\":2000000}", false, 422 },
		{ "{\"language_id\":71,\"source_code\":\"x\",\"additional_files\":\"UE*=\"}", false, 422 },
		{ "{\"language_id\":71,\"source_code\":\"x\",\"additional_files\":7}", false, 422 },
		/* 9 bytes decoded, over the bound of 8: 422, not 413 (Judge0) */
		{ "{\"language_id\":71,\"source_code\":\"x\",\"additional_files\":\"UEsDBAoAAAAA\"}", false, 422 },
		{ "{\"language_id\":71,\"source_code\":\"x\",\"cpu_time_limit\":\"fast\"}", false, 422 },
		{ "{\"language_id\":71,\"source_code\":\"\"}", false, 422 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = json_loads(bad[i].json, 0, NULL);
		assert_int_equal(fe_j0_parse(j, bad[i].base64, &cat, &bounds, &job, &e), -1);
		assert_int_equal(e.status, bad[i].status);
		json_decref(j);
	}
}

/* additional_files: base64 whatever base64_encoded says, checked and
 * stored re-encoded as the spec's additional_files_b64 (never opened
 * here); "" is none; rendered back as base64. */
static void judge0__additional_files__to_spec_and_back(void **state)
{
	(void)state;
	struct fe_job job;
	struct fe_apierr e;
	json_t *b = json_loads("{\"language_id\":71,\"source_code\":\"x\",\"additional_files\":\"UEsF\\nBgAA\"}", 0,
			       NULL);
	assert_non_null(b);
	assert_int_equal(fe_j0_parse(b, false, &cat, &bounds, &job, &e), 0);
	assert_string_equal(json_string_value(json_object_get(job.spec, "additional_files_b64")), "UEsFBgAA");
	/* The spec the executor gets takes it. */
	struct gv_jobspec spec;
	struct gv_err err;
	assert_int_equal(gv_jobspec_from_json(job.spec, &spec, &err), 0);
	assert_int_equal(spec.additional_files_len, 6);
	gv_jobspec_free(&spec);
	struct fe_subrow row = { .id = "tok", .language = "python3", .status = "queued", .request = job.spec };
	json_t *r = fe_j0_render(&row, 1ull << FE_J0_ADDITIONAL_FILES, false, &cat);
	assert_string_equal(json_string_value(json_object_get(r, "additional_files")), "UEsFBgAA");
	json_decref(r);
	fe_job_clear(&job);
	json_decref(b);
	b = json_loads("{\"language_id\":71,\"source_code\":\"eA==\",\"additional_files\":\"\"}", 0, NULL);
	assert_int_equal(fe_j0_parse(b, true, &cat, &bounds, &job, &e), 0);
	assert_null(json_object_get(job.spec, "additional_files_b64"));
	fe_job_clear(&job);
	json_decref(b);
}

/* Any bytes through base64: NUL and 0xff in stdin and expected_output go
 * into the spec's exact _b64 forms; text stays a string. */
static void judge0__parse__base64_bytes_kept_exactly(void **state)
{
	(void)state;
	struct fe_job job;
	struct fe_apierr e;
	json_t *b = json_loads("{\"language_id\":71,\"source_code\":\"eA==\",\"stdin\":\"AP8K\"}", 0, NULL);
	assert_int_equal(fe_j0_parse(b, true, &cat, &bounds, &job, &e), 0);
	assert_null(json_object_get(job.spec, "stdin"));
	assert_string_equal(json_string_value(json_object_get(job.spec, "stdin_b64")), "AP8K");
	fe_job_clear(&job);
	json_decref(b);
	b = json_loads("{\"language_id\":71,\"source_code\":\"eA==\",\"stdin\":\"aGk=\",\"expected_output\":\"AAE=\"}",
		       0, NULL);
	assert_int_equal(fe_j0_parse(b, true, &cat, &bounds, &job, &e), 0);
	json_t *t0 = json_array_get(json_object_get(job.spec, "tests"), 0);
	assert_string_equal(json_string_value(json_object_get(t0, "input")), "hi");
	assert_string_equal(json_string_value(json_object_get(t0, "expected_b64")), "AAE=");
	assert_null(json_object_get(t0, "expected"));
	fe_job_clear(&job);
	json_decref(b);
}

/* Rendering: base64 gives the exact bytes of the _b64 forms; plain gives
 * the text, decoding a stdin stored only as stdin_b64. */
static void judge0__render__exact_bytes_with_base64(void **state)
{
	(void)state;
	json_t *req = json_loads("{\"language\":\"python3\",\"files\":[{\"name\":\"main.py\",\"content\":\"x\"}],"
				 "\"stdin_b64\":\"YQBi\"}", 0, NULL);
	json_t *res = json_loads("{\"kind\":\"run\",\"verdict\":\"AC\",\"stdout\":\"a\\ufffd\",\"stdout_b64\":\"YQA=\","
				 "\"stderr\":\"e\",\"compile_output\":\"\"}", 0, NULL);
	assert_non_null(req);
	assert_non_null(res);
	struct fe_subrow row = { .id = "tok", .language = "python3", .status = "done", .verdict = "AC",
				 .request = req, .result = res };
	uint64_t f = 1ull << FE_J0_STDIN | 1ull << FE_J0_STDOUT | 1ull << FE_J0_STDERR | 1ull << FE_J0_COMPILE_OUTPUT;
	json_t *b = fe_j0_render(&row, f, true, &cat);
	assert_string_equal(json_string_value(json_object_get(b, "stdin")), "YQBi");
	assert_string_equal(json_string_value(json_object_get(b, "stdout")), "YQA=");
	assert_string_equal(json_string_value(json_object_get(b, "stderr")), "ZQ==");
	assert_string_equal(json_string_value(json_object_get(b, "compile_output")), "");
	json_decref(b);
	json_t *t = fe_j0_render(&row, f, false, &cat);
	assert_int_equal(json_string_length(json_object_get(t, "stdin")), 3);
	assert_memory_equal(json_string_value(json_object_get(t, "stdin")), "a\0b", 3);
	assert_string_equal(json_string_value(json_object_get(t, "stdout")), "a\xef\xbf\xbd");
	assert_true(json_is_null(json_object_get(t, "compile_output")));
	json_decref(t);
	json_decref(req);
	json_decref(res);
}

/* A limit above what runs is refused with Rails' message, never lowered;
 * the maximum itself is taken. python3: 30 s CPU, 2048 MB, 1 process. */
static void judge0__limits__max_taken_above_refused(void **state)
{
	(void)state;
	static const struct {
		const char *field, *value;
		int status; /* 0: accepted */
		const char *msg;
	} cases[] = {
		{ "cpu_time_limit", "30", 0, NULL },
		{ "cpu_time_limit", "30.001", 422, "cpu_time_limit: must be less than or equal to 30" },
		{ "cpu_time_limit", "-1", 422, "cpu_time_limit: must be greater than or equal to 0" },
		{ "memory_limit", "2097152", 0, NULL },
		{ "memory_limit", "2097153", 422, "memory_limit: must be less than or equal to 2097152" },
		{ "wall_time_limit", "90.5", 422, "wall_time_limit: must be less than or equal to 90" },
		{ "max_processes_and_or_threads", "1", 0, NULL },
		{ "max_processes_and_or_threads", "60", 422, "max_processes_and_or_threads: must be less than or equal to 1" },
		{ "cpu_extra_time", "0.5", 422, "cpu_extra_time: must be less than or equal to 0" },
		{ "number_of_runs", "2", 422, "number_of_runs: must be less than or equal to 1" },
		{ "max_file_size", "262145", 422, "max_file_size: must be less than or equal to 262144" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char body[256];
		snprintf(body, sizeof(body), "{\"language_id\":71,\"source_code\":\"x\",\"%s\":\"%s\"}", cases[i].field,
			 cases[i].value);
		json_t *j = json_loads(body, 0, NULL);
		struct fe_job job;
		struct fe_apierr e;
		int rc = fe_j0_parse(j, false, &cat, &bounds, &job, &e);
		json_decref(j);
		if (cases[i].status == 0) {
			if (rc != 0)
				fail_msg("case %zu refused: %s", i, e.msg);
			fe_job_clear(&job);
			continue;
		}
		assert_int_equal(rc, -1);
		assert_int_equal(e.status, cases[i].status);
		assert_string_equal(e.msg, cases[i].msg);
	}
}

/* Judge0's error shapes: 422 per field, anything else {"error": ...}. */
static void judge0__errors__per_field_shape(void **state)
{
	(void)state;
	json_t *j = fe_j0_error_body(422, "language_id: language with id 999 doesn't exist");
	char *t = json_dumps(j, JSON_COMPACT);
	assert_string_equal(t, "{\"language_id\":[\"language with id 999 doesn't exist\"]}");
	free(t);
	json_decref(j);
	j = fe_j0_error_body(422, "something about it all");
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "base"), 0)), "something about it all");
	json_decref(j);
	j = fe_j0_error_body(404, "no such submission");
	t = json_dumps(j, JSON_COMPACT);
	assert_string_equal(t, "{\"error\":\"no such submission\"}");
	free(t);
	json_decref(j);
	struct tenant_quota_violation v = { .limit = "max_cpu_ms", .requested = 3000, .allowed = 2500 };
	struct fe_apierr e;
	fe_j0_quota_error(&v, &e);
	assert_int_equal(e.status, 422);
	assert_string_equal(e.msg, "cpu_time_limit: must be less than or equal to 2.5");
	v = (struct tenant_quota_violation){ .limit = "max_memory_mb", .requested = 300, .allowed = 256 };
	fe_j0_quota_error(&v, &e);
	assert_string_equal(e.msg, "memory_limit: must be less than or equal to 262144");
}

/* config_info advertises what submit takes: the least language maximum,
 * lowered by the tenant's ceilings, over the languages it may use. */
static void judge0__config_info__follows_quota(void **state)
{
	(void)state;
	json_t *c = fe_j0_config_info(&cat, &bounds, true, NULL);
	assert_true(json_real_value(json_object_get(c, "max_cpu_time_limit")) == 20.0);
	assert_true(json_real_value(json_object_get(c, "max_cpu_extra_time")) == 0.0);
	assert_int_equal(json_integer_value(json_object_get(c, "max_memory_limit")), 2048 * 1024);
	assert_true(json_is_true(json_object_get(c, "enable_additional_files")));
	assert_int_equal(json_integer_value(json_object_get(c, "max_extract_size")), 10240);
	json_decref(c);
	struct tenant_quota q;
	tenant_quota_defaults(&q);
	q.max_cpu_ms = 2500;
	q.max_memory_mb = 100;
	c = fe_j0_config_info(&cat, &bounds, true, &q);
	assert_true(json_real_value(json_object_get(c, "max_cpu_time_limit")) == 2.5);
	assert_int_equal(json_integer_value(json_object_get(c, "max_memory_limit")), 100 * 1024);
	assert_true(json_real_value(json_object_get(c, "cpu_time_limit")) <= 2.5);
	assert_true(json_integer_value(json_object_get(c, "memory_limit")) <= 100 * 1024);
	json_decref(c);
	/* Only python3 (30 s maximum): its own ceiling shows. */
	tenant_quota_defaults(&q);
	q.max_cpu_ms = 60000;
	q.n_allowed_languages = 1;
	strcpy(q.allowed_languages[0], "python3");
	c = fe_j0_config_info(&cat, &bounds, true, &q);
	assert_true(json_real_value(json_object_get(c, "max_cpu_time_limit")) == 30.0);
	json_decref(c);
}

/* /workers adds up: available = idle + working + paused. */
static void judge0__workers__add_up(void **state)
{
	(void)state;
	static const struct {
		long long queued, assigned, live, working, stale, retried;
		struct fe_j0_workers want;
	} cases[] = {
		{ 0, 0, 0, 0, 0, 0, { 0, 0, 0, 0, 0, 0 } },
		{ 3, 1, 8, 2, 4, 1, { 4, 12, 6, 2, 4, 1 } },
		{ 0, 0, 4, 9, 0, 0, { 0, 4, 0, 4, 0, 0 } },
		{ -1, -1, -2, -3, -4, -5, { 0, 0, 0, 0, 0, 0 } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fe_j0_workers w;
		fe_j0_workers_count(cases[i].queued, cases[i].assigned, cases[i].live, cases[i].working, cases[i].stale,
				    cases[i].retried, &w);
		assert_true(w.available == w.idle + w.working + w.paused);
		assert_memory_equal(&w, &cases[i].want, sizeof(w));
	}
}

/* Words as a shell splits a simple command, nothing expanded. */
static void words__split__as_a_shell_would(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		const char *out; /* words joined by '|'; NULL: refused */
	} cases[] = {
		{ "", "" },
		{ "  a  b\tc ", "a|b|c" },
		{ "'a b' \"c d\" e\\ f", "a b|c d|e f" },
		{ "'$HOME' \"$HOME\" *", "$HOME|$HOME|*" },
		{ "\"a\\\"b\" 'a\\b' \"a\\b\"", "a\"b|a\\b|a\\b" },
		{ "''", "" /* one empty word */ },
		{ "'unterminated", NULL },
		{ "\"unterminated", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *w = NULL;
		struct fe_apierr e;
		int r = fe_words_split(cases[i].in, strlen(cases[i].in), "command_line_arguments", &w, &e);
		if (!cases[i].out) {
			assert_int_equal(r, -1);
			assert_int_equal(e.status, 400);
			continue;
		}
		assert_int_equal(r, 0);
		char joined[256] = "";
		size_t k;
		json_t *v;
		json_array_foreach(w, k, v) {
			if (k)
				strcat(joined, "|");
			strcat(joined, json_string_value(v));
		}
		assert_string_equal(joined, cases[i].out);
		if (!strcmp(cases[i].in, "''"))
			assert_int_equal(json_array_size(w), 1);
		json_decref(w);
	}
	/* 33 words are one too many; a word over 1024 bytes too. */
	char many[200] = "";
	for (int i = 0; i < 33; i++)
		strcat(many, "x ");
	json_t *w = NULL;
	struct fe_apierr e;
	assert_int_equal(fe_words_split(many, strlen(many), "args", &w, &e), -1);
	assert_int_equal(e.status, 422);
	char long_word[1100];
	memset(long_word, 'x', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = 0;
	assert_int_equal(fe_words_split(long_word, strlen(long_word), "args", &w, &e), -1);
	assert_int_equal(e.status, 422);
}

/* args, compiler options, redirection and stack through each API. */
static void commands__each_api__into_the_spec(void **state)
{
	(void)state;
	struct fe_job job;
	struct fe_apierr e;
	json_t *b = json_loads("{\"language_id\":54,\"source_code\":\"int main(){}\","
			       "\"command_line_arguments\":\"1 'two words'\",\"compiler_options\":\"-O0 -DONLINE_JUDGE\","
			       "\"redirect_stderr_to_stdout\":true,\"stack_limit\":128000}", 0, NULL);
	assert_int_equal(fe_j0_parse(b, false, &cat, &bounds, &job, &e), 0);
	json_t *args = json_object_get(job.spec, "args");
	assert_int_equal(json_array_size(args), 2);
	assert_string_equal(json_string_value(json_array_get(args, 1)), "two words");
	assert_int_equal(json_array_size(json_object_get(job.spec, "compile_options")), 2);
	assert_true(json_is_true(json_object_get(job.spec, "stderr_to_stdout")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(job.spec, "limits"), "stack_kb")), 128000);
	struct gv_jobspec spec;
	struct gv_err err;
	assert_int_equal(gv_jobspec_from_json(job.spec, &spec, &err), 0);
	assert_int_equal(spec.n_args, 2);
	assert_int_equal(spec.n_compile_options, 2);
	assert_true(spec.stderr_to_stdout);
	assert_int_equal(spec.stack_kb, 128000);
	gv_jobspec_free(&spec);
	fe_job_clear(&job);
	json_decref(b);
	/* An option outside the language's allowlist is 422. */
	b = json_loads("{\"language_id\":54,\"source_code\":\"x\",\"compiler_options\":\"-fplugin=/tmp/x.so\"}", 0, NULL);
	assert_int_equal(fe_j0_parse(b, false, &cat, &bounds, &job, &e), -1);
	assert_int_equal(e.status, 422);
	assert_string_equal(e.code, "compile_option_not_allowed");
	json_decref(b);
	/* Piston args as piston-client sends them. */
	b = json_loads("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"x\"}],"
		       "\"args\":[\"1\",\"2\",\"3\"],\"run_cpu_time\":1500}", 0, NULL);
	assert_int_equal(fe_piston_parse(b, &cat, &bounds, &job, &e), 0);
	assert_int_equal(json_array_size(json_object_get(job.spec, "args")), 3);
	assert_int_equal(job.time_ms, 1500);
	fe_job_clear(&job);
	json_decref(b);
	/* A name the engine keeps for its own files is refused at the API,
	 * not accepted and then refused by the executor (found by fuzz_piston). */
	b = json_loads("{\"language\":\"c++\",\"files\":[{\"content\":\"int main(){}\"},"
		       "{\"name\":\".gaveli0av\",\"content\":\"\"}]}", 0, NULL);
	assert_int_equal(fe_piston_parse(b, &cat, &bounds, &job, &e), -1);
	assert_int_equal(e.status, 400);
	json_decref(b);
	b = json_loads("{\"language\":\"python\",\"files\":[{\"content\":\"x\"}],\"args\":[1]}", 0, NULL);
	assert_int_equal(fe_piston_parse(b, &cat, &bounds, &job, &e), -1);
	assert_int_equal(e.status, 400);
	json_decref(b);
	/* Native: args and compile_options, refused with a problem. */
	b = json_loads("{\"language\":\"c\",\"source\":\"x\",\"args\":[\"a\"],\"compile_options\":[\"-O0\"],"
		       "\"stderr_to_stdout\":true,\"limits\":{\"stack_kb\":1024}}", 0, NULL);
	assert_int_equal(fe_native_parse(b, &cat, &bounds, &job, &e), 0);
	assert_int_equal(json_array_size(json_object_get(job.spec, "args")), 1);
	fe_job_clear(&job);
	json_decref(b);
	b = json_loads("{\"language\":\"c\",\"source\":\"x\",\"args\":[\"a\"],"
		       "\"problem_id\":\"abcdefghijklmnopqrstuvwx\"}", 0, NULL);
	assert_int_equal(fe_native_parse(b, &cat, &bounds, &job, &e), -1);
	assert_int_equal(e.status, 400);
	json_decref(b);
}

static void native__validation__table(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		int status; /* 0: accepted */
		const char *code;
	} cases[] = {
		{ "{\"language\":\"python3\",\"source\":\"print(1)\"}", 0, NULL },
		{ "{\"language\":\"cpp\",\"files\":[{\"content\":\"int main(){}\"},{\"name\":\"a.h\",\"content\":\"\"}]}", 0, NULL },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"tests\":[{\"input\":\"1\",\"expected\":\"1\"}],\"checker\":{\"mode\":\"tokens\",\"flags\":\"float_tolerance 1e-6\"}}", 0, NULL },
		{ "{\"language\":\"cobol\",\"source\":\"x\"}", 422, "unknown_language" },
		{ "{\"source\":\"x\"}", 400, "invalid_request" },
		{ "{\"language\":\"python3\"}", 400, "invalid_request" },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"files\":[]}", 400, "invalid_request" },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"extra\":1}", 400, "invalid_request" },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"stdin\":\"1\",\"tests\":[{\"expected\":\"1\"}]}", 400, "invalid_request" },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"tests\":[{\"expected\":\"1\"},{\"expected\":\"1\"},{\"expected\":\"1\"},{\"expected\":\"1\"}]}", 413, "too_large" },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"checker\":{\"flags\":\"bogus_flag\"}}", 400, "invalid_request" },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"limits\":{\"time_ms\":999999}}", 422, "limit_exceeded" },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"limits\":{\"time_ms\":-1}}", 400, "invalid_request" },
		{ "{\"language\":\"cpp\",\"files\":[{\"content\":\"x\"},{\"name\":\"../a\",\"content\":\"\"}]}", 400, "invalid_request" },
		{ "{\"language\":\"cpp\",\"files\":[{\"content\":\"x\"},{\"name\":\"a.h\",\"content\":\"\"},{\"name\":\"a.h\",\"content\":\"\"}]}", 400, "invalid_request" },
		{ "[1]", 400, "invalid_request" },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"additional_files_b64\":\"UEsFBgAA\"}", 0, NULL },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"additional_files_b64\":\"UE*=\"}", 400, "invalid_request" },
		{ "{\"language\":\"python3\",\"source\":\"x\",\"additional_files_b64\":\"UEsDBAoAAAAA\"}", 413, "too_large" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *j = json_loads(cases[i].json, 0, NULL);
		assert_non_null(j);
		struct fe_job job;
		struct fe_apierr e = { 0 };
		int rc = fe_native_parse(j, &cat, &bounds, &job, &e);
		if (cases[i].status == 0) {
			if (rc != 0)
				print_error("case %zu: %s\n", i, e.msg);
			assert_int_equal(rc, 0);
			fe_job_clear(&job);
		} else {
			assert_int_equal(rc, -1);
			assert_int_equal(e.status, cases[i].status);
			assert_string_equal(e.code, cases[i].code);
		}
		json_decref(j);
	}
}

static void native__source_over_limit__is_413(void **state)
{
	(void)state;
	char src[1100];
	memset(src, 'x', sizeof(src) - 1);
	src[sizeof(src) - 1] = '\0';
	json_t *j = json_pack("{s:s,s:s}", "language", "python3", "source", src);
	struct fe_job job;
	struct fe_apierr e;
	assert_int_equal(fe_native_parse(j, &cat, &bounds, &job, &e), -1);
	assert_int_equal(e.status, 413);
	json_decref(j);
}

static void piston__semver__ranges(void **state)
{
	(void)state;
	static const struct {
		const char *v, *range;
		bool want;
	} cases[] = {
		{ "3.11.0", "*", true },        { "3.11.0", "3", true },         { "3.11.0", "3.x", true },
		{ "3.11.0", "3.11", true },     { "3.11.0", "3.11.0", true },    { "3.11.0", "3.10", false },
		{ "3.11.0", ">=3.8 <4", true }, { "3.11.0", ">=3.12", false },   { "3.11.0", "^3.10", true },
		{ "3.11.0", "^4", false },      { "3.11.0", "~3.11", true },     { "3.11.0", "~3.10", false },
		{ "3.11.0", "2 || 3", true },   { "3.11.0", "1.0.0 - 3.11", true }, { "3.11.0", "<3.11.0", false },
		{ "0.2.5", "^0.2.1", true },    { "0.3.0", "^0.2.1", false },    { "3.11.0", "garbage", false },
		{ "3.11.0", ">3", false },      { "4.0.0", ">3", true },         { "3.11.0", "<=3", true },
		/* Components too large to bump are refused, not overflowed. */
		{ "3.11.0", ">=99999999999999999999", false }, { "3.11.0", "<=9223372036854775807", false },
		{ "3.11.0", "^9223372036854775807", false },   { "3.11.0", "~3.9223372036854775807", false },
		{ "3.11.0", "<1000000000", false },            { "3.11.0", "<999999999", true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (fe_semver_satisfies(cases[i].v, cases[i].range) != cases[i].want)
			fail_msg("%s vs %s: expected %d", cases[i].v, cases[i].range, cases[i].want);
	}
}

static void piston__find__by_alias_and_version(void **state)
{
	(void)state;
	struct fe_probed *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->known = true;
	for (size_t i = 0; i < cat.n; i++)
		snprintf(p->version[i], sizeof(p->version[i]), "%s",
			 strcmp(cat.lang[i]->id, "python3") == 0 ? "3.11.2" : "12.2.0");
	fe_catalog_probed_set(&cat, p);
	free(p);
	const struct lang_def *l = fe_piston_find(&cat, "py", "3.x");
	assert_non_null(l);
	assert_string_equal(l->id, "python3");
	assert_non_null(fe_piston_find(&cat, "c++", "*"));
	assert_null(fe_piston_find(&cat, "py", "2"));
	assert_null(fe_piston_find(&cat, "brainfuck", "*"));
	char v[32];
	fe_piston_version("3.11", v, sizeof(v));
	assert_string_equal(v, "3.11.0");
	fe_piston_version("17.0.15", v, sizeof(v));
	assert_string_equal(v, "17.0.15");
	fe_piston_version(NULL, v, sizeof(v));
	assert_string_equal(v, "0.0.0");
}

/* Listings and Piston's version match follow what executors published. */
static void catalog__probed__listings_follow_executors(void **state)
{
	(void)state;
	struct fe_probed *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->known = true;
	size_t js = SIZE_MAX, py = SIZE_MAX;
	for (size_t i = 0; i < cat.n; i++) {
		if (!strcmp(cat.lang[i]->id, "javascript"))
			js = i;
		if (!strcmp(cat.lang[i]->id, "python3"))
			py = i;
	}
	assert_true(js != SIZE_MAX && py != SIZE_MAX);
	snprintf(p->version[js], sizeof(p->version[js]), "18.19.0");
	json_t *a = fe_j0_languages(&cat, p);
	assert_int_equal(json_array_size(a), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "name")),
			    "JavaScript (Node.js 18.19.0)");
	json_decref(a);
	assert_null(fe_j0_language(&cat, 71, p)); /* python3: no executor offers it */
	a = fe_piston_runtimes(&cat, p);
	assert_int_equal(json_array_size(a), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "version")), "18.19.0");
	json_decref(a);
	fe_catalog_probed_set(&cat, p);
	assert_non_null(fe_piston_find(&cat, "node", "18.x"));
	assert_null(fe_piston_find(&cat, "node", "20.x"));
	assert_null(fe_piston_find(&cat, "py", "*"));
	/* Nothing known: every language by name, no numbers invented. */
	memset(p, 0, sizeof(*p));
	fe_catalog_probed_set(&cat, p);
	assert_non_null(fe_piston_find(&cat, "py", "*"));
	a = fe_j0_languages(&cat, NULL);
	assert_true(json_array_size(a) > 1);
	json_decref(a);
	free(p);
}

static void catalog__overrides__change_judge0_ids(void **state)
{
	(void)state;
	struct fe_catalog c;
	struct gv_err err;
	char *ok[] = { "python3=100" };
	assert_int_equal(fe_catalog_init(&c, &reg, ok, 1, &err), 0);
	assert_string_equal(fe_catalog_by_judge0(&c, 100)->id, "python3");
	assert_null(fe_catalog_by_judge0(&c, 71));
	char *dup[] = { "python3=50" };
	assert_int_equal(fe_catalog_init(&c, &reg, dup, 1, &err), -1);
	char *unknown[] = { "cobol=1" };
	assert_int_equal(fe_catalog_init(&c, &reg, unknown, 1, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(router__table__matches_routes_methods_and_params),
		cmocka_unit_test(router__bad_method__lists_allowed),
		cmocka_unit_test(judge0__status_ids__follow_verdicts_and_signals),
		cmocka_unit_test(judge0__fields__default_star_and_unknown),
		cmocka_unit_test(judge0__numbers__accept_strings_and_nulls),
		cmocka_unit_test(judge0__parse__maps_fields_base64_and_expected_output),
		cmocka_unit_test(judge0__parse__base64_bytes_kept_exactly),
		cmocka_unit_test(judge0__render__exact_bytes_with_base64),
		cmocka_unit_test(judge0__limits__max_taken_above_refused),
		cmocka_unit_test(judge0__errors__per_field_shape),
		cmocka_unit_test(judge0__config_info__follows_quota),
		cmocka_unit_test(judge0__additional_files__to_spec_and_back),
		cmocka_unit_test(judge0__workers__add_up),
		cmocka_unit_test(native__validation__table),
		cmocka_unit_test(native__source_over_limit__is_413),
		cmocka_unit_test(words__split__as_a_shell_would),
		cmocka_unit_test(commands__each_api__into_the_spec),
		cmocka_unit_test(piston__semver__ranges),
		cmocka_unit_test(piston__find__by_alias_and_version),
		cmocka_unit_test(catalog__probed__listings_follow_executors),
		cmocka_unit_test(catalog__overrides__change_judge0_ids),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
