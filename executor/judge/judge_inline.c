/* One service job on the engine (executor/judge/judge_inline.h): the request's
 * files become the sandbox job (the main source under the language's own
 * file name), then one run on stdin or every inline test in one sandbox, a
 * fresh one only when the previous died (whole-sandbox OOM, backstop).
 * Expected answers stay on the host: exec_checker_compare runs here, on
 * output the engine already capped. */
#include "executor/judge/judge_inline.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/judge/checker.h"
#include "executor/judge/judge.h"
#include "executor/sandbox/unpacker.h"

#define INLINE_COMPILE_OUTPUT_MAX (64u * 1024u)

static void progress(const struct exec_inline_opts *o, const char *ev, size_t k, size_t n)
{
	if (o && o->progress)
		o->progress(ev, k, n, o->progress_arg);
}

/* A compile phase that did not exit 0 is CE; only our own failure is IE. */
static const char *compile_verdict(const struct exec_phase_result *c)
{
	if (strcmp(c->status, "OK") == 0)
		return "OK";
	return strcmp(c->status, "IE") == 0 ? "IE" : "CE";
}

struct job_state {
	struct exec_lang_job lj;
	struct exec_file *files;
	char *unpacker; /* gavel-unpack's bytes, for additional files */
	char *compile_output;
	size_t compile_output_len;
	struct gv_result_compile compile; /* the first sandbox's compile */
	unsigned sandboxes;
	char message[GV_ERR_MSG_MAX];
	const struct exec_inline_opts *opts;
};

static void keep_compile_output(struct job_state *st, const struct exec_phase_result *c)
{
	size_t n = c->out_len + c->err_len;
	if (n > INLINE_COMPILE_OUTPUT_MAX)
		n = INLINE_COMPILE_OUTPUT_MAX;
	char *buf = malloc(n + 1);
	if (!buf)
		return;
	size_t a = c->out_len < n ? c->out_len : n;
	if (a)
		memcpy(buf, c->out, a);
	if (n > a)
		memcpy(buf + a, c->err_out, n - a);
	buf[n] = '\0';
	free(st->compile_output);
	st->compile_output = buf;
	st->compile_output_len = n;
}

/* Opens a sandbox; returns "OK", "CE" or "IE" (st->message says why). */
static const char *open_sandbox(struct exec_engine *e, struct job_state *st, struct exec_session **s)
{
	struct exec_phase_result compile;
	struct gv_err err;
	gv_err_clear(&err);
	st->sandboxes++;
	if (exec_session_open(e, &st->lj.job, s, &compile, &err) != 0) {
		exec_msgf(st->message, sizeof(st->message), "sandbox: %s", err.msg);
		exec_phase_result_free(&compile);
		*s = NULL;
		return "IE";
	}
	if (st->opts && st->opts->sandbox_started)
		st->opts->sandbox_started(exec_session_id(*s), &st->lj.job.run_limits, st->opts->sandbox_arg);
	const char *v = compile_verdict(&compile);
	if (strcmp(v, "CE") == 0)
		exec_compile_note_limit(&compile, &st->lj.job.compile_limits);
	if (st->sandboxes == 1 || strcmp(v, "OK") != 0)
		keep_compile_output(st, &compile);
	if (st->sandboxes == 1 && st->lj.job.compile_argv)
		st->compile = (struct gv_result_compile){
			.ran = true,
			.time_ms = compile.time_ms,
			.wall_ms = compile.wall_ms,
			.memory_kb = compile.memory_kb,
			.exit_code = compile.exit_code,
			.signal = compile.signal,
		};
	if (strcmp(v, "IE") == 0)
		exec_msgf(st->message, sizeof(st->message), "compile phase: %s", compile.message);
	exec_phase_result_free(&compile);
	return v;
}

/* The job's files: the main source under the language's file name, the
 * others under their own names, which must not clash with it; with
 * additional files, their archive and gavel-unpack, which extracts them
 * inside the sandbox before the compiler runs (exec_lang_job_extract_first).
 * The archive is never opened here. */
static int build_job(struct exec_engine *e, struct job_state *st, const struct lang_def *lang,
		     const struct gv_jobspec *spec, const char *tenant, struct gv_err *err)
{
	struct exec_run_limits lim = {
		.time_ms = spec->time_ms,
		.wall_ms = spec->wall_ms,
		.memory_mb = spec->memory_mb,
		.output_kb = spec->output_kb,
		.stack_kb = spec->stack_kb,
		.procs = spec->procs,
	};
	if (spec->n_files == 0)
		return gv_err_set(err, GV_EINVAL, "no source file");
	bool extra = spec->additional_files && spec->additional_files_len > 0;
	/* The other files the compiler takes with the main source. */
	const char *others[GV_JOBSPEC_FILES_MAX + 1];
	size_t n_others = 0;
	for (size_t i = 1; i < spec->n_files && n_others < GV_JOBSPEC_FILES_MAX; i++)
		if (lang_is_source(lang, spec->files[i].name))
			others[n_others++] = spec->files[i].name;
	others[n_others] = NULL;
	if (exec_lang_job_build_multi(&st->lj, lang, tenant, spec->files[0].content, spec->files[0].len, others, extra,
				      &lim, err) != 0)
		return -1;
	if (exec_lang_job_add_words(&st->lj, spec->compile_options, spec->n_compile_options, spec->args,
				    spec->n_args, err) != 0 ||
	    exec_lang_job_add_interpreter_options(&st->lj, spec->interpreter_options, spec->n_interpreter_options,
						  err) != 0)
		return -1;
	st->lj.job.stderr_to_stdout = spec->stderr_to_stdout;
	st->lj.job.writable_box = spec->writable_box;
	if (spec->n_files == 1 && !extra)
		return 0;
	size_t n = spec->n_files + (extra ? 2 : 0);
	st->files = calloc(n, sizeof(*st->files));
	if (!st->files)
		return gv_err_set(err, ENOMEM, "out of memory");
	st->files[0] = st->lj.source;
	for (size_t i = 1; i < spec->n_files; i++) {
		if (strcmp(spec->files[i].name, st->lj.source_name) == 0)
			return gv_err_set(err, GV_EINVAL, "file '%s' clashes with the main source's name",
					  spec->files[i].name);
		st->files[i] = (struct exec_file){
			.name = spec->files[i].name,
			.data = spec->files[i].content,
			.len = spec->files[i].len,
		};
	}
	if (extra) {
		static const struct exec_extract_limits xl = {
			.max_bytes = GV_JOBSPEC_EXTRACT_BYTES_MAX,
			.max_files = GV_JOBSPEC_EXTRACT_FILES_MAX,
			.max_dirs = GV_JOBSPEC_EXTRACT_DIRS_MAX,
			.max_path = GV_JOBSPEC_EXTRACT_PATH_MAX,
			.max_depth = GV_JOBSPEC_EXTRACT_DEPTH_MAX,
		};
		size_t ulen = 0;
		if (!(st->unpacker = exec_unpacker_read(e, NULL, &ulen, err)))
			return -1;
		if (exec_lang_job_extract_first(&st->lj, &xl, err) != 0)
			return -1;
		st->files[spec->n_files] = (struct exec_file){
			.name = EXEC_EXTRACT_UNPACKER, .data = st->unpacker, .len = ulen, .executable = true,
		};
		st->files[spec->n_files + 1] = (struct exec_file){
			.name = EXEC_EXTRACT_ARCHIVE, .data = spec->additional_files, .len = spec->additional_files_len,
		};
	}
	st->lj.job.files = st->files;
	st->lj.job.n_files = n;
	return 0;
}

static const char *verdict_of_run(const struct exec_phase_result *r, const struct lang_def *lang)
{
	return exec_run_status_name(exec_run_status_lang(r, lang));
}

static void set_limit_name(struct exec_inline_summary *sum, const struct exec_phase_result *r)
{
	if (strcmp(r->limit, "none") != 0)
		snprintf(sum->limit, sizeof(sum->limit), "%s", r->limit);
}

/* stdout and stderr interleaved as init saw them arrive (the record's
 * `order`); NULL when there is no order or it does not fit the captures
 * (it comes from inside the sandbox). */
static char *merged_output(const struct exec_phase_result *r, size_t *len)
{
	if (!r->order[0] || !r->out || !r->err_out)
		return NULL;
	char *m = malloc(r->out_len + r->err_len + 1);
	if (!m)
		return NULL;
	size_t at = 0, o = 0, e = 0;
	for (const char *p = r->order; *p;) {
		char stream = *p++;
		char *end;
		unsigned long long n = strtoull(p, &end, 10);
		size_t *pos = stream == 'o' ? &o : &e;
		size_t have = stream == 'o' ? r->out_len : r->err_len;
		if (end == p || n > have - *pos) {
			free(m);
			return NULL;
		}
		memcpy(m + at, (stream == 'o' ? r->out : r->err_out) + *pos, (size_t)n);
		at += (size_t)n, *pos += (size_t)n;
		p = *end == ',' ? end + 1 : end;
	}
	memcpy(m + at, r->out + o, r->out_len - o);
	at += r->out_len - o;
	memcpy(m + at, r->err_out + e, r->err_len - e);
	at += r->err_len - e;
	m[at] = '\0';
	*len = at;
	return m;
}

/* Plain run: compile, one run on stdin. */
static json_t *plain_run(struct exec_engine *e, struct job_state *st, const struct gv_jobspec *spec,
			 const struct exec_inline_opts *o, struct exec_inline_summary *sum)
{
	struct gv_result res = { .kind = "run", .node = o ? o->node : NULL };
	struct exec_phase_result run;
	memset(&run, 0, sizeof(run));
	struct exec_session *s = NULL;
	const char *status;
	progress(o, "compiling", 0, 0);
	/* One run: a fork server would only start the interpreter once more. */
	st->lj.job.fork_server = NULL;
	const char *cv = open_sandbox(e, st, &s);
	if (strcmp(cv, "OK") != 0) {
		status = cv;
	} else {
		progress(o, "running", 1, 1);
		struct gv_err err;
		gv_err_clear(&err);
		if (exec_session_run_test(s, spec->stdin_data, spec->stdin_len, &run, &err) != 0) {
			status = "IE";
			exec_msgf(st->message, sizeof(st->message), "%s", err.msg);
		} else {
			exec_phase_apply_lang(&run, st->lj.lang);
			status = verdict_of_run(&run, st->lj.lang);
			if (strcmp(status, "IE") == 0)
				exec_msgf(st->message, sizeof(st->message), "%s", run.message);
			else if (strcmp(status, "OK") != 0)
				exec_msgf(st->message, sizeof(st->message), "%s", run.message);
			set_limit_name(sum, &run);
		}
	}
	res.status = status;
	res.verdict = strcmp(status, "OK") == 0 ? "AC" : status;
	res.message = st->message;
	res.compile_output = st->compile_output;
	res.compile_output_len = st->compile_output_len;
	res.compile = st->compile;
	res.time_ms = run.time_ms;
	res.wall_ms = run.wall_ms;
	res.memory_kb = run.memory_kb;
	res.exit_code = run.exit_code;
	res.signal = run.signal;
	res.has_output = spec->return_output;
	res.out = run.out;
	res.out_len = run.out_len;
	res.err_out = run.err_out;
	res.err_len = run.err_len;
	char *merged = spec->return_output ? merged_output(&run, &res.merged_len) : NULL;
	res.merged = merged;
	res.time_limit_ms = (uint32_t)st->lj.job.run_limits.cpu_ms;
	res.memory_limit_mb = (uint32_t)(st->lj.job.run_limits.memory_kb / 1024);
	res.sandboxes = st->sandboxes;
	snprintf(sum->verdict, sizeof(sum->verdict), "%s", res.verdict);
	sum->cpu_ms = run.time_ms;
	sum->max_time_ms = run.time_ms;
	sum->max_memory_kb = run.memory_kb;
	sum->sandboxes = st->sandboxes;
	json_t *j = gv_result_to_json(&res);
	free(merged);
	exec_phase_result_free(&run);
	exec_session_close(s);
	return j;
}

struct test_out {
	struct gv_result_test t;
	char verdict[8];
	char message[EXEC_CHECKER_MSG_MAX];
	char *out, *err_out;
};

/* Reopens a sandbox that died after a test (its init was killed). It
 * compiled before: any failure now is ours, and test to is IE. */
static int judged_reopen(struct exec_engine *e, struct job_state *st, struct exec_session **s, struct test_out *to)
{
	if (exec_session_alive(*s))
		return 0;
	exec_session_close(*s);
	const char *cv = open_sandbox(e, st, s);
	if (strcmp(cv, "OK") == 0)
		return 0;
	snprintf(to->verdict, sizeof(to->verdict), "IE");
	exec_msgf(to->message, sizeof(to->message), "%s", st->message);
	return -1;
}

/* Runs test i in s and checks its output into to, adding to sum; *deciding
 * becomes i at the first test not accepted. -1 when the job is an
 * internal error (st->message says why). */
static int judged_test(struct exec_session *s, struct job_state *st, const struct gv_jobspec *spec,
		       const struct gv_checker_opts *copts, size_t i, struct test_out *to, size_t *deciding,
		       struct exec_inline_summary *sum)
{
	struct exec_phase_result run;
	struct gv_err err;
	gv_err_clear(&err);
	if (exec_session_run_test(s, spec->tests[i].input, spec->tests[i].input_len, &run, &err) != 0) {
		snprintf(to->verdict, sizeof(to->verdict), "IE");
		exec_msgf(to->message, sizeof(to->message), "%s", err.msg);
		exec_msgf(st->message, sizeof(st->message), "test %zu: %s", i + 1, err.msg);
		exec_phase_result_free(&run);
		*deciding = i;
		return -1;
	}
	exec_phase_apply_lang(&run, st->lj.lang);
	to->t.time_ms = run.time_ms;
	to->t.wall_ms = run.wall_ms;
	to->t.memory_kb = run.memory_kb;
	to->t.exit_code = run.exit_code;
	to->t.signal = run.signal;
	sum->cpu_ms += run.time_ms;
	if (run.time_ms > sum->max_time_ms)
		sum->max_time_ms = run.time_ms;
	if (run.memory_kb > sum->max_memory_kb)
		sum->max_memory_kb = run.memory_kb;
	const char *rs = verdict_of_run(&run, st->lj.lang);
	if (strcmp(rs, "OK") == 0) {
		enum exec_checker_verdict cvd =
			exec_checker_compare(copts, spec->tests[i].expected, spec->tests[i].expected_len,
					     run.out ? run.out : "", run.out_len, to->message, sizeof(to->message));
		snprintf(to->verdict, sizeof(to->verdict), "%s", cvd == EXEC_CHECKER_AC ? "AC" : "WA");
	} else {
		snprintf(to->verdict, sizeof(to->verdict), "%s", rs);
		exec_msgf(to->message, sizeof(to->message), "%s", run.message);
	}
	if (spec->return_output && run.out) {
		to->out = run.out; /* steal */
		to->t.out_len = run.out_len;
		run.out = NULL;
	}
	if (spec->return_output && run.err_out) {
		to->err_out = run.err_out; /* steal */
		to->t.err_len = run.err_len;
		run.err_out = NULL;
	}
	if (strcmp(to->verdict, "AC") != 0 && *deciding == SIZE_MAX) {
		*deciding = i;
		set_limit_name(sum, &run);
	}
	exec_phase_result_free(&run);
	if (strcmp(to->verdict, "IE") == 0) {
		exec_msgf(st->message, sizeof(st->message), "test %zu: %s", i + 1, to->message);
		return -1;
	}
	return 0;
}

/* Every test in turn in *s (compiled), reopened when it died, until one is
 * an internal error. Returns the job's status: "OK" or "IE". */
static const char *judged_tests(struct exec_engine *e, struct job_state *st, const struct gv_jobspec *spec,
				const struct exec_inline_opts *o, const struct gv_checker_opts *copts,
				struct test_out *tests, struct exec_session **s, size_t *deciding,
				struct exec_inline_summary *sum)
{
	size_t n = spec->n_tests;
	for (size_t i = 0; i < n; i++) {
		if (judged_reopen(e, st, s, &tests[i]) != 0) {
			*deciding = i;
			return "IE";
		}
		progress(o, "running", i + 1, n);
		if (judged_test(*s, st, spec, copts, i, &tests[i], deciding, sum) != 0)
			return "IE";
	}
	return "OK";
}

/* The job's result: its status and verdict, and each test (views: what
 * gv_result shows of tests). */
static json_t *judged_result(struct job_state *st, const struct exec_inline_opts *o, struct test_out *tests,
			     struct gv_result_test *views, size_t n, const char *status, const char *verdict,
			     size_t deciding, struct exec_inline_summary *sum)
{
	struct gv_result res = { .kind = "judge", .node = o ? o->node : NULL };
	for (size_t i = 0; i < n; i++) {
		tests[i].t.verdict = tests[i].verdict;
		tests[i].t.message = tests[i].message;
		tests[i].t.out = tests[i].out;
		tests[i].t.err_out = tests[i].err_out;
		views[i] = tests[i].t;
	}
	size_t last = deciding != SIZE_MAX ? deciding : (n ? n - 1 : 0);
	res.status = status;
	res.verdict = verdict;
	res.message = st->message;
	res.compile_output = st->compile_output;
	res.compile_output_len = st->compile_output_len;
	res.compile = st->compile;
	res.time_ms = sum->max_time_ms;
	res.memory_kb = sum->max_memory_kb;
	for (size_t i = 0; i < n; i++)
		if (views[i].wall_ms > res.wall_ms)
			res.wall_ms = views[i].wall_ms;
	if (n) {
		res.exit_code = views[last].exit_code;
		res.signal = views[last].signal;
	}
	res.tests = views;
	res.n_tests = n;
	res.time_limit_ms = (uint32_t)st->lj.job.run_limits.cpu_ms;
	res.memory_limit_mb = (uint32_t)(st->lj.job.run_limits.memory_kb / 1024);
	res.sandboxes = st->sandboxes;
	snprintf(sum->verdict, sizeof(sum->verdict), "%s", verdict);
	sum->sandboxes = st->sandboxes;
	return gv_result_to_json(&res);
}

static json_t *judged_run(struct exec_engine *e, struct job_state *st, const struct gv_jobspec *spec,
			  const struct exec_inline_opts *o, struct exec_inline_summary *sum)
{
	size_t n = spec->n_tests;
	if (n < 2)
		st->lj.job.fork_server = NULL; /* one test: a template would only cost a start */
	struct test_out *tests = calloc(n, sizeof(*tests));
	struct gv_result_test *views = calloc(n, sizeof(*views));
	if (!tests || !views) {
		free(tests);
		free(views);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(tests[i].verdict, sizeof(tests[i].verdict), "SKIPPED");
	struct gv_checker_opts copts;
	gv_checker_opts_default(&copts);
	if (spec->checker_mode == GV_CHECKER_EXACT)
		copts.mode = GV_CHECKER_EXACT;
	struct gv_err err;
	gv_err_clear(&err);
	const char *status = "OK", *verdict = "AC";
	size_t deciding = SIZE_MAX;
	struct exec_session *s = NULL;
	if (gv_checker_parse_flags(spec->checker_flags, &copts, &err) != 0) {
		status = verdict = "IE";
		exec_msgf(st->message, sizeof(st->message), "checker flags: %s", err.msg);
	} else {
		progress(o, "compiling", 0, 0);
		const char *cv = open_sandbox(e, st, &s);
		if (strcmp(cv, "OK") != 0) {
			status = verdict = cv;
		} else {
			status = judged_tests(e, st, spec, o, &copts, tests, &s, &deciding, sum);
			if (deciding != SIZE_MAX && strcmp(status, "OK") == 0)
				verdict = tests[deciding].verdict;
			else if (strcmp(status, "IE") == 0)
				verdict = "IE";
		}
	}
	exec_session_close(s);
	json_t *j = judged_result(st, o, tests, views, n, status, verdict, deciding, sum);
	for (size_t i = 0; i < n; i++)
		free(tests[i].out), free(tests[i].err_out);
	free(tests);
	free(views);
	return j;
}

static void set_gpus(struct exec_job *job, const struct exec_inline_opts *opts)
{
	if (!opts)
		return;
	job->gpu_visible = opts->gpu_visible;
	job->gpu_nodes = opts->gpu_nodes;
	job->n_gpu_nodes = opts->n_gpu_nodes;
	job->egress = opts->egress;
}

json_t *exec_inline_run(struct exec_engine *e, const struct lang_def *lang, const struct gv_jobspec *spec,
			const struct exec_inline_opts *opts, struct exec_inline_summary *sum, struct gv_err *err)
{
	memset(sum, 0, sizeof(*sum));
	struct job_state st;
	memset(&st, 0, sizeof(st));
	st.opts = opts;
	json_t *j;
	struct gv_err berr;
	gv_err_clear(&berr);
	if (build_job(e, &st, lang, spec, opts && opts->tenant ? opts->tenant : "local", &berr) != 0) {
		char msg[GV_ERR_MSG_MAX + 16];
		snprintf(msg, sizeof(msg), "job: %s", berr.msg);
		j = gv_result_internal_error(spec->has_tests ? "judge" : "run", msg);
		snprintf(sum->verdict, sizeof(sum->verdict), "IE");
	} else if (spec->has_tests) {
		set_gpus(&st.lj.job, opts);
		j = judged_run(e, &st, spec, opts, sum);
	} else {
		set_gpus(&st.lj.job, opts);
		j = plain_run(e, &st, spec, opts, sum);
	}
	free(st.files);
	free(st.unpacker);
	free(st.compile_output);
	exec_lang_job_free(&st.lj);
	if (!j)
		gv_err_set(err, ENOMEM, "out of memory building the result");
	return j;
}
