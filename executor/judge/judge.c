/* Judging on top of the sandbox engine: language + source + limits → a
 * sandbox job; one run, or every test of a problem with the built-in
 * checkers applied outside the sandbox, on output the engine already
 * capped. Expected answers are read here, on the host, and never enter the
 * submission's sandbox. */
#include "executor/judge/judge.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobspec.h"
#include "executor/judge/multipass.h"
#include "executor/judge/suite.h"
#include "executor/judge/validator.h"
#include "languages/lang_entry.h"

/* Bytes of compiler output and of a test's stderr that we keep. */
#define JUDGE_COMPILE_OUTPUT_MAX (64u * 1024u)
#define JUDGE_STDERR_MAX (64u * 1024u)
/* Inputs and answers of one test case read from a package. */
#define JUDGE_TEST_FILE_MAX (64u * 1024u * 1024u)

/* Bounded message formatting: truncation is the intent. */
void exec_msgf(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, n, fmt, ap);
	va_end(ap);
}

const char *exec_run_status_name(enum exec_run_status s)
{
	static const char *const names[] = { "OK", "TLE", "MLE", "OLE", "RE", "CE", "IE" };
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "IE";
}

enum exec_run_status exec_run_status_of(const struct exec_phase_result *r)
{
	static const struct {
		const char *engine;
		enum exec_run_status status;
	} map[] = {
		{ "OK", EXEC_RUN_OK },   { "RE", EXEC_RUN_RE },   { "SG", EXEC_RUN_RE },
		{ "TLE", EXEC_RUN_TLE }, { "WLE", EXEC_RUN_TLE }, { "MLE", EXEC_RUN_MLE },
		{ "OLE", EXEC_RUN_OLE }, { "IE", EXEC_RUN_IE },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(r->status, map[i].engine) == 0)
			return map[i].status;
	return EXEC_RUN_IE;
}

/* The first of lang's memory_errors in the failed run's stderr or stdout
 * (the JVM says "Too small maximum heap" on stdout), or NULL. A program
 * that prints one itself only turns its own RE into MLE. */
static const char *memory_error_in(const struct exec_phase_result *r, const struct lang_def *lang)
{
	if (exec_run_status_of(r) != EXEC_RUN_RE || !lang || !lang->memory_errors)
		return NULL;
	for (char *const *m = lang->memory_errors; *m; m++)
		if (**m && ((r->err_out && memmem(r->err_out, r->err_len, *m, strlen(*m))) ||
			    (r->out && memmem(r->out, r->out_len, *m, strlen(*m)))))
			return *m;
	return NULL;
}

enum exec_run_status exec_run_status_lang(const struct exec_phase_result *r, const struct lang_def *lang)
{
	return memory_error_in(r, lang) ? EXEC_RUN_MLE : exec_run_status_of(r);
}

void exec_phase_apply_lang(struct exec_phase_result *r, const struct lang_def *lang)
{
	const char *marker = memory_error_in(r, lang);
	if (!marker)
		return;
	snprintf(r->status, sizeof(r->status), "MLE");
	snprintf(r->limit, sizeof(r->limit), "memory");
	exec_msgf(r->message, sizeof(r->message), "memory limit exceeded (%s)", marker);
}

static enum exec_verdict verdict_of_status(enum exec_run_status s)
{
	switch (s) {
	case EXEC_RUN_OK: return EXEC_VERDICT_AC;
	case EXEC_RUN_TLE: return EXEC_VERDICT_TLE;
	case EXEC_RUN_MLE: return EXEC_VERDICT_MLE;
	case EXEC_RUN_OLE: return EXEC_VERDICT_OLE;
	case EXEC_RUN_RE: return EXEC_VERDICT_RE;
	case EXEC_RUN_CE: return EXEC_VERDICT_CE;
	case EXEC_RUN_IE: break;
	}
	return EXEC_VERDICT_IE;
}

static int pick_limit(const char *what, uint32_t asked, uint32_t dflt, uint32_t max, const char *lang,
		      uint32_t *out, struct gv_err *err)
{
	uint32_t v = asked ? asked : dflt;
	if (v > max)
		return gv_err_set(err, GV_ELIMIT, "%s %u exceeds the maximum %u of language %s", what, v, max,
				  lang);
	*out = v;
	return 0;
}

void exec_lang_job_free(struct exec_lang_job *lj)
{
	if (!lj)
		return;
	lang_argv_free(lj->compile_argv);
	lang_argv_free(lj->run_argv);
	free(lj->source_name);
	free(lj->files);
	memset(lj, 0, sizeof(*lj));
}

int exec_lang_job_build(struct exec_lang_job *lj, const struct lang_def *lang, const char *tenant,
			const void *source, size_t len, const struct exec_run_limits *lim,
			struct gv_err *err)
{
	return exec_lang_job_build_multi(lj, lang, tenant, source, len, NULL, false, lim, err);
}

int exec_lang_job_build_multi(struct exec_lang_job *lj, const struct lang_def *lang, const char *tenant,
			      const void *source, size_t len, const char *const *others, bool sources_in_sandbox,
			      const struct exec_run_limits *lim, struct gv_err *err)
{
	memset(lj, 0, sizeof(*lj));
	lj->lang = lang;
	const struct lang_limits *d = &lang->defaults, *m = &lang->max;
	struct exec_run_limits none = { 0 };
	if (!lim)
		lim = &none;
	uint32_t time_ms = 0, wall_ms = 0, memory_mb = 0, output_kb = 0;
	if (pick_limit("time limit (ms)", lim->time_ms, d->time_ms, m->time_ms, lang->id, &time_ms, err) ||
	    pick_limit("memory limit (MiB)", lim->memory_mb, d->memory_mb, m->memory_mb, lang->id, &memory_mb,
		       err) ||
	    pick_limit("output limit (KiB)", lim->output_kb, d->output_kb, m->output_kb, lang->id, &output_kb,
		       err))
		return -1;
	/* The wall clock follows the CPU limit unless asked for: a program
	 * waiting on nothing still ends, a slow start (JVM) still fits. */
	uint64_t wall_dflt = (uint64_t)time_ms * 2 + 1000;
	if (wall_dflt < d->wall_ms)
		wall_dflt = d->wall_ms;
	if (wall_dflt > m->wall_ms)
		wall_dflt = m->wall_ms;
	if (pick_limit("wall time limit (ms)", lim->wall_ms, (uint32_t)wall_dflt, m->wall_ms, lang->id, &wall_ms,
		       err))
		return -1;
	/* Processes (and threads) of the run: more than the language's
	 * default when asked (Jobe's numprocs), never fewer, since a runtime
	 * (the JVM) needs its own; past the maximum is refused like the
	 * other limits. Above 1 the seccomp filter allows fork (gavel-init). */
	uint32_t procs = lim->procs > d->procs ? lim->procs : d->procs;
	if (procs > m->procs)
		return gv_err_set(err, GV_ELIMIT, "%s: processes %u above the language's maximum %u", lang->id,
				  procs, m->procs);

	/* The saved name and main class come from the source for languages
	 * that ask (Java's public class); both are checked plain names. */
	struct lang_entry ent;
	lang_entry_resolve(lang, source, len, &ent);
	lj->source_name = strdup(ent.file);
	if (!lj->source_name)
		return gv_err_set(err, ENOMEM, "out of memory");
	struct lang_vars vars = {
		.memory_mb = memory_mb,
		.compile_memory_mb = d->compile_memory_mb,
		.source = ent.file,
		.main_class = ent.main_class,
		.more_sources = others,
		.sources_in_sandbox = sources_in_sandbox,
	};
	if (lang->compile &&
	    lang_expand_argv((const char *const *)lang->compile, &vars, &lj->compile_argv, err) != 0) {
		gv_err_prefix(err, "language %s: compile command", lang->id);
		exec_lang_job_free(lj);
		return -1;
	}
	if (lang_expand_argv((const char *const *)lang->run, &vars, &lj->run_argv, err) != 0) {
		gv_err_prefix(err, "language %s: run command", lang->id);
		exec_lang_job_free(lj);
		return -1;
	}
	lj->source = (struct exec_file){ .name = lj->source_name, .data = source, .len = len };
	lj->job = (struct exec_job){
		.tenant = tenant,
		.compile_argv = (const char *const *)lj->compile_argv,
		.run_argv = (const char *const *)lj->run_argv,
		.fork_server = lang->fork_server,
		.files = &lj->source,
		.n_files = 1,
		.compile_limits = {
			.cpu_ms = d->compile_time_ms,
			.wall_ms = d->compile_wall_ms,
			.memory_kb = (uint64_t)d->compile_memory_mb * 1024,
			.output_bytes = JUDGE_COMPILE_OUTPUT_MAX,
			.stderr_bytes = JUDGE_COMPILE_OUTPUT_MAX,
			.procs = d->compile_procs,
			.rlimit_as = lang->rlimit_as,
		},
		.run_limits = {
			.cpu_ms = time_ms,
			.wall_ms = wall_ms,
			/* A runtime's own overhead (JVM metaspace, code cache)
			 * is granted on top of the heap it was given. */
			.memory_kb = ((uint64_t)memory_mb + lang->memory_extra_mb) * 1024,
			.output_bytes = (uint64_t)output_kb * 1024,
			.stderr_bytes = JUDGE_STDERR_MAX,
			.stack_kb = lim->stack_kb && lim->stack_kb < (uint64_t)memory_mb * 1024
					    ? lim->stack_kb
					    : (uint64_t)memory_mb * 1024,
			.procs = procs,
			.rlimit_as = lang->rlimit_as,
		},
	};
	return 0;
}

int exec_lang_job_build_files(struct exec_lang_job *lj, const struct lang_def *lang, const char *tenant,
			      const void *source, size_t len, const struct exec_file *others, size_t n,
			      const struct exec_run_limits *lim, struct gv_err *err)
{
	if (n == 0)
		return exec_lang_job_build(lj, lang, tenant, source, len, lim, err);
	const char **names = calloc(n + 1, sizeof(*names));
	if (!names)
		return gv_err_set(err, ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (lang_is_source(lang, others[i].name))
			names[k++] = others[i].name;
	int rc = exec_lang_job_build_multi(lj, lang, tenant, source, len, names, false, lim, err);
	free(names);
	if (rc != 0)
		return -1;
	if (!(lj->files = calloc(n + 1, sizeof(*lj->files)))) {
		exec_lang_job_free(lj);
		return gv_err_set(err, ENOMEM, "out of memory");
	}
	lj->files[0] = lj->source;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(others[i].name, lj->source_name)) {
			gv_err_set(err, GV_EINVAL, "file '%s' clashes with the main source's name", others[i].name);
			exec_lang_job_free(lj);
			return -1;
		}
		lj->files[i + 1] = others[i];
	}
	lj->job.files = lj->files;
	lj->job.n_files = n + 1;
	return 0;
}

/* *argv with n words appended (a new NULL-terminated copy). */
static int append_words(char ***argv, char *const *words, size_t n, const char *what, struct gv_err *err)
{
	if (n == 0)
		return 0;
	size_t have = lang_argv_len((const char *const *)*argv);
	if (have + n > LANG_ARGV_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s: more than %d words", what, LANG_ARGV_MAX);
	char **v = calloc(have + n + 1, sizeof(*v));
	if (!v)
		return gv_err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (!(v[have + i] = strdup(words[i]))) {
			for (size_t j = 0; j < i; j++)
				free(v[have + j]);
			free(v);
			return gv_err_set(err, ENOMEM, "out of memory");
		}
	}
	memcpy(v, *argv, have * sizeof(*v));
	free(*argv); /* the words moved to v */
	*argv = v;
	return 0;
}

int exec_lang_job_add_words(struct exec_lang_job *lj, char *const *compile_options, size_t n_options,
			    char *const *args, size_t n_args, struct gv_err *err)
{
	if (n_options && !lj->compile_argv)
		return gv_err_set(err, GV_EINVAL, "language %s has no compile step for compile options", lj->lang->id);
	for (size_t i = 0; i < n_options; i++)
		if (!lang_compile_option_allowed(lj->lang, compile_options[i]))
			return gv_err_set(err, GV_EINVAL, "compile option '%.64s' is not allowed for language %s",
					  compile_options[i], lj->lang->id);
	if (append_words(&lj->compile_argv, compile_options, n_options, "compile command", err) != 0 ||
	    append_words(&lj->run_argv, args, n_args, "run command", err) != 0)
		return -1;
	lj->job.compile_argv = (const char *const *)lj->compile_argv;
	lj->job.run_argv = (const char *const *)lj->run_argv;
	return 0;
}

int exec_lang_job_add_interpreter_options(struct exec_lang_job *lj, char *const *words, size_t n,
					  struct gv_err *err)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!lang_interpreter_option_allowed(lj->lang, words[i]))
			return gv_err_set(err, GV_EINVAL, "interpreter option '%.64s' is not allowed for language %s",
					  words[i], lj->lang->id);
	size_t have = lang_argv_len((const char *const *)lj->run_argv);
	if (have == 0)
		return gv_err_set(err, GV_EINVAL, "language %s has no run command", lj->lang->id);
	if (have + n > LANG_ARGV_MAX)
		return gv_err_set(err, GV_ELIMIT, "run command: more than %d words", LANG_ARGV_MAX);
	/* The interpreter, the options, then the rest (the script). */
	char **v = calloc(have + n + 1, sizeof(*v));
	if (!v)
		return gv_err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (!(v[1 + i] = strdup(words[i]))) {
			for (size_t j = 0; j < i; j++)
				free(v[1 + j]);
			free(v);
			return gv_err_set(err, ENOMEM, "out of memory");
		}
	}
	v[0] = lj->run_argv[0];
	memcpy(v + 1 + n, lj->run_argv + 1, (have - 1) * sizeof(*v));
	free(lj->run_argv); /* the words moved to v */
	lj->run_argv = v;
	lj->job.run_argv = (const char *const *)lj->run_argv;
	return 0;
}

int exec_lang_job_extract_first(struct exec_lang_job *lj, const struct exec_extract_limits *l,
				struct gv_err *err)
{
	char nums[5][24];
	snprintf(nums[0], sizeof(nums[0]), "%" PRIu64, l->max_bytes);
	snprintf(nums[1], sizeof(nums[1]), "%" PRIu32, l->max_files);
	snprintf(nums[2], sizeof(nums[2]), "%" PRIu32, l->max_dirs);
	snprintf(nums[3], sizeof(nums[3]), "%" PRIu32, l->max_path);
	snprintf(nums[4], sizeof(nums[4]), "%" PRIu32, l->max_depth);
	/* "{sources}" left in the compile command: gavel-unpack names the
	 * files with these endings, but the main source, once unpacked. */
	char endings[LANG_LIST_MAX * 17 + 1] = "";
	bool sources = false;
	for (char **a = lj->compile_argv; a && *a; a++)
		sources = sources || !strcmp(*a, LANG_SOURCES_ARG);
	for (const char *const *e = lang_source_endings(lj->lang); sources && *e; e++)
		snprintf(endings + strlen(endings), sizeof(endings) - strlen(endings), "%s%s", endings[0] ? "," : "", *e);
	if (sources && !endings[0])
		return gv_err_set(err, GV_EINVAL, "language %s: '{sources}' but no source endings", lj->lang->id);
	const char *head[] = { "/box/" EXEC_EXTRACT_UNPACKER, "extract", "/box/" EXEC_EXTRACT_ARCHIVE, "/box",
			       nums[0], nums[1], nums[2], nums[3], nums[4], "sources", endings, lj->source_name, "--" };
	size_t nh = sizeof(head) / sizeof(head[0]);
	if (!sources) {
		head[9] = "--";
		nh = 10;
	}
	size_t have = lj->compile_argv ? lang_argv_len((const char *const *)lj->compile_argv) : 0;
	if (have && lj->compile_argv[0][0] != '/')
		return gv_err_set(err, GV_EINVAL, "language %s: compile command is not an absolute path", lj->lang->id);
	if (nh + have > LANG_ARGV_MAX)
		return gv_err_set(err, GV_ELIMIT, "compile command: more than %d words", LANG_ARGV_MAX);
	char **v = calloc(nh + have + 1, sizeof(*v));
	if (!v)
		return gv_err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < nh; i++) {
		if (!(v[i] = strdup(head[i]))) {
			for (size_t j = 0; j < i; j++)
				free(v[j]);
			free(v);
			return gv_err_set(err, ENOMEM, "out of memory");
		}
	}
	if (have)
		memcpy(v + nh, lj->compile_argv, have * sizeof(*v));
	free(lj->compile_argv); /* its words moved to v */
	lj->compile_argv = v;
	lj->job.compile_argv = (const char *const *)lj->compile_argv;
	return 0;
}

void exec_run_result_free(struct exec_run_result *r)
{
	if (!r)
		return;
	exec_phase_result_free(&r->compile);
	exec_phase_result_free(&r->run);
	memset(r, 0, sizeof(*r));
}

/* Appends one line to the compile phase's stderr. */
static void append_err(struct exec_phase_result *c, const char *line)
{
	size_t add = strlen(line);
	bool nl = c->err_len > 0 && c->err_out[c->err_len - 1] != '\n';
	char *buf = realloc(c->err_out, c->err_len + add + 3);
	if (!buf)
		return; /* the status still says CE; only the note is lost */
	c->err_out = buf;
	if (nl)
		c->err_out[c->err_len++] = '\n';
	memcpy(c->err_out + c->err_len, line, add);
	c->err_len += add;
	c->err_out[c->err_len++] = '\n';
	c->err_out[c->err_len] = '\0';
}

void exec_compile_note_limit(struct exec_phase_result *c, const struct exec_limits *lim)
{
	char line[160];
	line[0] = '\0';
	const char *st = c->status;
	if (!strcmp(st, "TLE"))
		exec_msgf(line, sizeof(line), "compilation time limit exceeded (%" PRIu64 " ms of CPU)", lim->cpu_ms);
	else if (!strcmp(st, "WLE"))
		exec_msgf(line, sizeof(line), "compilation time limit exceeded (%" PRIu64 " ms of wall-clock time)",
		     lim->wall_ms);
	else if (!strcmp(st, "MLE"))
		exec_msgf(line, sizeof(line), "compilation memory limit exceeded (%" PRIu64 " MiB)", lim->memory_kb / 1024);
	else if (!strcmp(st, "OLE"))
		exec_msgf(line, sizeof(line), "compilation output limit exceeded (compiler messages over %" PRIu64 " bytes)",
		     lim->output_bytes);
	else if (!strcmp(st, "SG") && c->signal == SIGXFSZ)
		exec_msgf(line, sizeof(line), "compilation output file size limit exceeded (%" PRIu64 " KiB)",
		     lim->fsize_kb ? lim->fsize_kb : EXEC_COMPILE_FSIZE_KB_DEFAULT);
	else if (!strcmp(st, "SG"))
		exec_msgf(line, sizeof(line), "compiler killed by signal %d", c->signal);
	if (line[0])
		append_err(c, line);
}

/* A compile phase that did not end with exit 0 is the program's fault (CE),
 * whatever limit stopped it; only our own failure inside init is IE. */
static enum exec_run_status compile_status(const struct exec_phase_result *c)
{
	if (strcmp(c->status, "OK") == 0)
		return EXEC_RUN_OK;
	if (strcmp(c->status, "IE") == 0)
		return EXEC_RUN_IE;
	return EXEC_RUN_CE;
}

int exec_run_once(struct exec_engine *e, const struct lang_def *lang, const void *source, size_t len,
		  const struct exec_file *others, size_t n, const void *input, size_t input_len,
		  const struct exec_run_limits *lim, struct exec_run_result *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	struct exec_lang_job lj;
	if (exec_lang_job_build_files(&lj, lang, "local", source, len, others, n, lim, err) != 0)
		return -1;
	/* One run: a fork server would only start the interpreter once more. */
	lj.job.fork_server = NULL;
	struct exec_session *s = NULL;
	struct gv_err serr;
	gv_err_clear(&serr);
	if (exec_session_open(e, &lj.job, &s, &out->compile, &serr) != 0) {
		out->status = EXEC_RUN_IE;
		exec_msgf(out->message, sizeof(out->message), "%s", serr.msg);
		goto out;
	}
	out->status = compile_status(&out->compile);
	if (out->status == EXEC_RUN_CE)
		exec_compile_note_limit(&out->compile, &lj.job.compile_limits);
	if (out->status != EXEC_RUN_OK) {
		if (out->status == EXEC_RUN_IE)
			exec_msgf(out->message, sizeof(out->message), "compile phase: %s", out->compile.message);
		goto out;
	}
	if (exec_session_run_test(s, input, input_len, &out->run, &serr) != 0) {
		out->status = EXEC_RUN_IE;
		exec_msgf(out->message, sizeof(out->message), "%s", serr.msg);
		goto out;
	}
	out->ran = true;
	exec_phase_apply_lang(&out->run, lang);
	out->status = exec_run_status_lang(&out->run, lang);
	if (out->status == EXEC_RUN_IE)
		exec_msgf(out->message, sizeof(out->message), "%s", out->run.message);
out:
	exec_session_close(s);
	exec_lang_job_free(&lj);
	return 0;
}

void exec_judgement_free(struct exec_judgement *j)
{
	if (!j)
		return;
	for (size_t i = 0; j->cases && i < j->ncases; i++)
		free(j->cases[i].output);
	free(j->cases);
	free(j->compile_output);
	memset(j, 0, sizeof(*j));
}

/* Limits of a problem for one language: the package's, the time scaled by
 * the language's factor, each capped by the language's maximum (a package
 * asking for more than a language allows gets the maximum). */
static void problem_limits(const struct exec_problem *p, const struct lang_def *lang,
			   struct exec_run_limits *lim)
{
	double t = (double)p->time_limit_ms * (lang->time_factor > 0 ? lang->time_factor : 1.0);
	uint64_t time_ms = t > (double)UINT32_MAX ? UINT32_MAX : (uint64_t)t;
	uint64_t memory_mb = p->memory_mb ? p->memory_mb : lang->defaults.memory_mb;
	uint64_t output_kb = (uint64_t)p->output_mb * 1024;
	/* Every field, stack_kb included: the caller's struct is uninitialised,
	 * and each field ends up as a limit in the sandbox's job record. */
	memset(lim, 0, sizeof(*lim));
	lim->time_ms = (uint32_t)(time_ms < lang->max.time_ms ? time_ms : lang->max.time_ms);
	lim->memory_mb = (uint32_t)(memory_mb < lang->max.memory_mb ? memory_mb : lang->max.memory_mb);
	lim->output_kb = (uint32_t)(output_kb && output_kb < lang->max.output_kb ? output_kb
										: lang->max.output_kb);
	uint64_t wall = (uint64_t)lim->time_ms * 3 + 2000;
	lim->wall_ms = (uint32_t)(wall < lang->max.wall_ms ? wall : lang->max.wall_ms);
}

static void keep_compile_output(struct exec_judgement *j, const struct exec_phase_result *c)
{
	size_t n = c->out_len + c->err_len;
	if (n > JUDGE_COMPILE_OUTPUT_MAX)
		n = JUDGE_COMPILE_OUTPUT_MAX;
	free(j->compile_output);
	j->compile_output = malloc(n + 1);
	if (!j->compile_output) {
		j->compile_output_len = 0;
		return;
	}
	size_t a = c->out_len < n ? c->out_len : n;
	if (a)
		memcpy(j->compile_output, c->out, a);
	if (n > a)
		memcpy(j->compile_output + a, c->err_out, n - a);
	j->compile_output[n] = '\0';
	j->compile_output_len = n;
}

/* Opens a fresh sandbox (compiling again) for the cases still to judge.
 * Returns the compile status; IE with j->message on our failure. */
enum exec_run_status exec_judge_open_session(struct exec_engine *e, const struct exec_job *job,
					     struct exec_session **s, struct exec_judgement *j)
{
	struct exec_phase_result compile;
	struct gv_err err;
	gv_err_clear(&err);
	j->sandboxes++;
	if (exec_session_open(e, job, s, &compile, &err) != 0) {
		exec_msgf(j->message, sizeof(j->message), "%s", err.msg);
		exec_phase_result_free(&compile);
		*s = NULL;
		return EXEC_RUN_IE;
	}
	enum exec_run_status st = compile_status(&compile);
	if (st == EXEC_RUN_CE)
		exec_compile_note_limit(&compile, &job->compile_limits);
	if (j->sandboxes == 1 || st != EXEC_RUN_OK)
		keep_compile_output(j, &compile);
	if (st == EXEC_RUN_IE)
		exec_msgf(j->message, sizeof(j->message), "compile phase: %s", compile.message);
	exec_phase_result_free(&compile);
	return st;
}

static enum exec_run_status open_sandbox(struct exec_engine *e, const struct exec_lang_job *lj,
					 struct exec_session **s, struct exec_judgement *j)
{
	return exec_judge_open_session(e, &lj->job, s, j);
}

/* Judges one case's run: the engine's status, then the checker on the
 * output when the program ended normally: the custom validator (in its own
 * sandbox) when val is set, else a built-in checker on the host. */
static void judge_case(const struct exec_problem *p, size_t i, const struct exec_phase_result *run,
		       const struct lang_def *lang, const char *input, size_t input_len,
		       struct exec_validator *val, struct exec_judged_case *c)
{
	c->time_ms = run->time_ms;
	c->wall_ms = run->wall_ms;
	c->memory_kb = run->memory_kb;
	c->exit_code = run->exit_code;
	c->signal = run->signal;
	c->verdict = verdict_of_status(exec_run_status_lang(run, lang));
	if (c->verdict != EXEC_VERDICT_AC) {
		exec_msgf(c->message, sizeof(c->message), "%s", run->message);
		return;
	}
	const struct exec_problem_node *node = p->cases[i];
	const struct exec_problem_node *group = exec_problem_case_group(node);
	struct gv_checker_opts opts;
	struct gv_err err;
	gv_err_clear(&err);
	gv_checker_opts_default(&opts);
	const char *flags = group ? group->grading.output_validator_flags : p->validator_flags;
	if (val) {
		char *vans = NULL;
		size_t vanslen = 0;
		struct exec_validator_outcome o;
		if (exec_problem_read(p, node->ans_path, JUDGE_TEST_FILE_MAX, &vans, &vanslen, &err) != 0 ||
		    exec_validator_check(val, flags, input, input_len, vans, vanslen, run->out ? run->out : "",
					 run->out_len, &o, &err) != 0) {
			c->verdict = EXEC_VERDICT_IE;
			exec_msgf(c->message, sizeof(c->message), "%s", err.msg);
		} else {
			c->verdict = o.verdict;
			c->has_score = o.has_score;
			c->score = o.score;
			exec_msgf(c->message, sizeof(c->message), "%s", o.message);
		}
		free(vans);
		return;
	}
	if (gv_checker_parse_flags(flags, &opts, &err) != 0) {
		c->verdict = EXEC_VERDICT_IE;
		exec_msgf(c->message, sizeof(c->message), "validator flags: %s", err.msg);
		return;
	}
	char *ans = NULL;
	size_t anslen = 0;
	if (exec_problem_read(p, node->ans_path, JUDGE_TEST_FILE_MAX, &ans, &anslen, &err) != 0) {
		c->verdict = EXEC_VERDICT_IE;
		exec_msgf(c->message, sizeof(c->message), "%s", err.msg);
		return;
	}
	enum exec_checker_verdict v =
		exec_checker_compare(&opts, ans, anslen, run->out ? run->out : "", run->out_len, c->message,
				     sizeof(c->message));
	c->verdict = v == EXEC_CHECKER_AC ? EXEC_VERDICT_AC : EXEC_VERDICT_WA;
	free(ans);
}

/* The measurements of one more pass of a case: the largest of each. */
static void keep_pass_figures(struct exec_judged_case *c, const struct exec_phase_result *run, bool first)
{
	if (first || run->time_ms > c->time_ms)
		c->time_ms = run->time_ms;
	if (first || run->wall_ms > c->wall_ms)
		c->wall_ms = run->wall_ms;
	if (first || run->memory_kb > c->memory_kb)
		c->memory_kb = run->memory_kb;
	c->exit_code = run->exit_code;
	c->signal = run->signal;
}

/* Judges one case of a multi-pass problem (multipass.h), whose first
 * pass's run is given: the validator judges each pass, and while it asks
 * for another (nextpass.in) the submission runs again in its sandbox on
 * that input, the validator's feedback dir carried over. The answer file
 * goes to the validator's sandbox only; the submission gets only inputs:
 * the test's, then what the validator wrote for it. */
static void multipass_case(const struct exec_problem *p, size_t i, struct exec_session *s,
			   const struct exec_phase_result *first, const struct lang_def *lang, const char *input,
			   size_t input_len, struct exec_validator *val, struct exec_judged_case *c)
{
	const struct exec_problem_node *node = p->cases[i];
	const struct exec_problem_node *group = exec_problem_case_group(node);
	const char *flags = group ? group->grading.output_validator_flags : p->validator_flags;
	struct gv_err err;
	gv_err_clear(&err);
	char *ans = NULL, *pass_input = NULL;
	size_t anslen = 0;
	if (exec_problem_read(p, node->ans_path, JUDGE_TEST_FILE_MAX, &ans, &anslen, &err) != 0) {
		c->verdict = EXEC_VERDICT_IE;
		exec_msgf(c->message, sizeof(c->message), "%s", err.msg);
		return;
	}
	struct exec_phase_result run, vrun, prev;
	memset(&run, 0, sizeof(run));
	memset(&prev, 0, sizeof(prev));
	const struct exec_phase_result *cur = first;
	const char *in = input;
	size_t in_len = input_len;
	struct exec_file seeds[EXEC_FEEDBACK_MAX];
	size_t nseeds = 0;
	for (uint32_t pass = 1;; pass++) {
		keep_pass_figures(c, cur, pass == 1);
		c->verdict = verdict_of_status(exec_run_status_lang(cur, lang));
		if (c->verdict != EXEC_VERDICT_AC) {
			exec_msgf(c->message, sizeof(c->message), "pass %u: %s", pass, cur->message);
			break;
		}
		struct exec_validator_outcome o;
		if (exec_validator_check_pass(val, flags, in, in_len, ans, anslen, cur->out ? cur->out : "", cur->out_len,
					      seeds, nseeds, &o, &vrun, &err) != 0) {
			c->verdict = EXEC_VERDICT_IE;
			exec_msgf(c->message, sizeof(c->message), "pass %u: %s", pass, err.msg);
			break;
		}
		/* This pass's validator run becomes prev (the previous one's
		 * is let go): the coming pass's seeds and input point into it. */
		exec_phase_result_free(&prev);
		prev = vrun;
		const char *next = NULL;
		size_t next_len = 0;
		enum exec_multipass_step step =
			exec_multipass_next(&prev, pass, p->validation_passes, &o, &next, &next_len, seeds, &nseeds);
		if (step == EXEC_MULTIPASS_DONE) {
			c->verdict = o.verdict;
			c->has_score = o.has_score;
			c->score = o.score;
			if (pass > 1 && o.verdict != EXEC_VERDICT_IE && o.message[0])
				exec_msgf(c->message, sizeof(c->message), "pass %u: %s", pass, o.message);
			else if (pass > 1 && o.verdict != EXEC_VERDICT_IE)
				exec_msgf(c->message, sizeof(c->message), "%u passes", pass);
			else
				exec_msgf(c->message, sizeof(c->message), "%s", o.message);
			break;
		}
		char *copy = malloc(next_len + 1);
		if (!copy) {
			c->verdict = EXEC_VERDICT_IE;
			exec_msgf(c->message, sizeof(c->message), "pass %u: out of memory", pass + 1);
			break;
		}
		memcpy(copy, next, next_len);
		free(pass_input);
		pass_input = copy;
		in = pass_input;
		in_len = next_len;
		exec_phase_result_free(&run);
		if (exec_session_run_test(s, in, in_len, &run, &err) != 0) {
			c->verdict = EXEC_VERDICT_IE;
			exec_msgf(c->message, sizeof(c->message), "pass %u: %s", pass + 1, err.msg);
			break;
		}
		exec_phase_apply_lang(&run, lang);
		cur = &run;
	}
	exec_phase_result_free(&run);
	exec_phase_result_free(&prev);
	free(pass_input);
	free(ans);
}

/* Judges one case of an interactive problem: the submission (session s)
 * against the interactor (val) through the host relay; the answer file is
 * read here and goes to the interactor's sandbox only. */
static void interactive_case(const struct exec_problem *p, size_t i, struct exec_session *s,
			     struct exec_validator *val, uint32_t wall_ms, const struct lang_def *lang, const char *input,
			     size_t input_len, struct exec_judged_case *c)
{
	const struct exec_problem_node *node = p->cases[i];
	const struct exec_problem_node *group = exec_problem_case_group(node);
	const char *flags = group ? group->grading.output_validator_flags : p->validator_flags;
	struct gv_err err;
	gv_err_clear(&err);
	char *ans = NULL;
	size_t anslen = 0;
	struct exec_phase_result run;
	struct exec_interaction ia;
	struct exec_validator_outcome o;
	memset(&run, 0, sizeof(run));
	if (exec_problem_read(p, node->ans_path, JUDGE_TEST_FILE_MAX, &ans, &anslen, &err) != 0 ||
	    exec_validator_interact(val, flags, input, input_len, ans, anslen, s, wall_ms, lang, &run, &ia, &o,
				    &err) != 0) {
		c->verdict = EXEC_VERDICT_IE;
		exec_msgf(c->message, sizeof(c->message), "%s", err.msg);
	} else {
		c->verdict = o.verdict;
		exec_msgf(c->message, sizeof(c->message), "%s", o.message);
		c->time_ms = run.time_ms;
		c->wall_ms = run.wall_ms;
		c->memory_kb = run.memory_kb;
		c->exit_code = run.exit_code;
		c->signal = run.signal;
	}
	exec_phase_result_free(&run);
	free(ans);
}

/* Reads case i's input and judges it in s (interactive: against the
 * interactor val, through the host relay) into c; an internal error is
 * also out->message. */
static void judge_one(const struct exec_problem *p, size_t i, struct exec_session *s, struct exec_validator *val,
		      const struct lang_def *lang, uint32_t wall_ms, const struct exec_judge_opts *opts,
		      struct exec_judged_case *c, struct exec_judgement *out)
{
	char *input = NULL;
	size_t input_len = 0;
	struct gv_err cerr;
	gv_err_clear(&cerr);
	if (exec_problem_read(p, p->cases[i]->in_path, JUDGE_TEST_FILE_MAX, &input, &input_len, &cerr) != 0) {
		c->verdict = EXEC_VERDICT_IE;
		exec_msgf(out->message, sizeof(out->message), "%s", cerr.msg);
		exec_msgf(c->message, sizeof(c->message), "%s", cerr.msg);
	} else if (p->interactive) {
		interactive_case(p, i, s, val, wall_ms, lang, input, input_len, c);
		if (c->verdict == EXEC_VERDICT_IE)
			exec_msgf(out->message, sizeof(out->message), "test %zu: %s", i + 1, c->message);
	} else {
		struct exec_phase_result run;
		if (exec_session_run_test(s, input, input_len, &run, &cerr) != 0) {
			c->verdict = EXEC_VERDICT_IE;
			exec_msgf(out->message, sizeof(out->message), "test %zu: %s", i + 1, cerr.msg);
			exec_msgf(c->message, sizeof(c->message), "%s", cerr.msg);
		} else {
			exec_phase_apply_lang(&run, lang);
			if (p->multi_pass && val)
				multipass_case(p, i, s, &run, lang, input, input_len, val, c);
			else
				judge_case(p, i, &run, lang, input, input_len, val, c);
			if (opts && opts->case_output)
				opts->case_output(i, run.out ? run.out : "", run.out_len, opts->case_output_arg);
			if (c->verdict == EXEC_VERDICT_IE)
				exec_msgf(out->message, sizeof(out->message), "test %zu: %s", i + 1, c->message);
		}
		exec_phase_result_free(&run);
	}
	free(input);
}

/* The problem's verdict and score from its cases' (results: scratch, one
 * per case). */
static void aggregate(const struct exec_problem *p, struct exec_case_result *results, struct exec_judgement *out,
		      struct gv_err *err)
{
	for (size_t i = 0; i < p->ncases; i++) {
		results[i].verdict = out->cases[i].verdict;
		results[i].has_score = out->cases[i].has_score;
		results[i].score = out->cases[i].score;
	}
	struct exec_verdict_outcome outcome;
	if (exec_verdict_aggregate(p, results, p->ncases, &outcome, err) != 0) {
		out->verdict = EXEC_VERDICT_IE;
		exec_msgf(out->message, sizeof(out->message), "%s", err->msg);
		return;
	}
	out->verdict = outcome.verdict;
	out->score = outcome.score;
	out->first_failed = outcome.first_failed;
}

/* Judges an output-only submission: no program and no sandbox of the
 * submission's; its files are the outputs, one per case, each checked
 * like a program's output would be (the built-in checker on the host,
 * a custom validator in its own sandbox). files[0..n) are borrowed. */
static int judge_outputs(struct exec_engine *e, const struct exec_problem *p, const struct exec_file *files, size_t n,
			 const struct exec_judge_opts *opts, struct exec_judgement *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	out->first_failed = SIZE_MAX;
	if (p->custom_validation && (!opts || !opts->langs))
		return gv_err_set(err, GV_EINVAL, "problem %s: custom validation needs the language registry",
				  p->name);
	uint64_t cap = (uint64_t)p->output_mb << 20;
	out->memory_limit_mb = 0;
	out->ncases = p->ncases;
	out->cases = calloc(p->ncases ? p->ncases : 1, sizeof(*out->cases));
	struct exec_case_result *results = calloc(p->ncases ? p->ncases : 1, sizeof(*results));
	if (!out->cases || !results) {
		free(results);
		return gv_err_set(err, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < p->ncases; i++)
		out->cases[i].verdict = EXEC_VERDICT_SKIPPED;
	struct exec_validator *val = NULL;
	if (p->custom_validation) {
		struct gv_err verr;
		gv_err_clear(&verr);
		if (exec_validator_new(&val, e, p, opts->langs, opts->tenant ? opts->tenant : "local", &verr) != 0) {
			out->verdict = EXEC_VERDICT_IE;
			exec_msgf(out->message, sizeof(out->message), "%s", verr.msg);
			goto done;
		}
	}
	for (size_t i = 0; i < p->ncases; i++) {
		struct exec_judged_case *c = &out->cases[i];
		char name[EXEC_PROBLEM_OUTPUT_NAME_MAX];
		exec_problem_output_name(p->cases[i], name, sizeof(name));
		const struct exec_file *f = NULL;
		for (size_t k = 0; k < n && !f; k++)
			if (files[k].name && strcmp(files[k].name, name) == 0)
				f = &files[k];
		if (!f) {
			c->verdict = EXEC_VERDICT_WA;
			exec_msgf(c->message, sizeof(c->message), "no %s in the submission", name);
		} else if (f->len > cap) {
			c->verdict = EXEC_VERDICT_OLE;
			exec_msgf(c->message, sizeof(c->message), "%s is over the output limit of %u MiB", name,
				  p->output_mb);
		} else {
			char *input = NULL;
			size_t input_len = 0;
			struct gv_err cerr;
			gv_err_clear(&cerr);
			if (exec_problem_read(p, p->cases[i]->in_path, JUDGE_TEST_FILE_MAX, &input, &input_len, &cerr) != 0) {
				c->verdict = EXEC_VERDICT_IE;
				exec_msgf(c->message, sizeof(c->message), "%s", cerr.msg);
			} else {
				/* The file stands for a run that ended well
				 * with it as its stdout. */
				struct exec_phase_result run;
				memset(&run, 0, sizeof(run));
				snprintf(run.status, sizeof(run.status), "OK");
				run.out = (char *)f->data;
				run.out_len = f->len;
				judge_case(p, i, &run, NULL, input, input_len, val, c);
				if (opts && opts->case_output)
					opts->case_output(i, f->data, f->len, opts->case_output_arg);
			}
			free(input);
		}
		if (opts && opts->progress)
			opts->progress(p, i, c, opts->progress_arg);
		if (c->verdict == EXEC_VERDICT_IE) {
			exec_msgf(out->message, sizeof(out->message), "test %zu: %s", i + 1, c->message);
			out->verdict = EXEC_VERDICT_IE;
			goto done;
		}
		if (c->verdict != EXEC_VERDICT_AC && exec_verdict_can_stop_after(p, i))
			break;
	}
	aggregate(p, results, out, err);
done:
	exec_validator_free(val);
	free(results);
	return 0;
}

int exec_judge_problem(struct exec_engine *e, const struct exec_problem *p, const struct lang_def *lang,
		       const void *source, size_t len, const struct exec_judge_opts *opts,
		       struct exec_judgement *out, struct gv_err *err)
{
	if (p->output_only) {
		/* The first file under the name it was given, the others
		 * beside it: they are all outputs. */
		size_t n_others = opts ? opts->n_others : 0;
		if (n_others > GV_JOBSPEC_FILES_MAX)
			return gv_err_set(err, GV_ELIMIT, "more than %d files", GV_JOBSPEC_FILES_MAX + 1);
		struct exec_file files[GV_JOBSPEC_FILES_MAX + 1];
		files[0] = (struct exec_file){ .name = opts ? opts->source_name : NULL, .data = source, .len = len };
		for (size_t k = 0; k < n_others; k++)
			files[k + 1] = opts->others[k];
		return judge_outputs(e, p, files, n_others + 1, opts, out, err);
	}
	if (p->suite)
		return exec_judge_suite(e, p, lang, source, len, opts, out, err);
	memset(out, 0, sizeof(*out));
	out->first_failed = SIZE_MAX;
	if (opts && opts->archive) {
		static const char msg[] = "an archive of additional files is taken by problems graded by an "
					  "instructor test suite only; send the program's files in 'files'\n";
		out->verdict = EXEC_VERDICT_CE;
		if ((out->compile_output = strdup(msg)))
			out->compile_output_len = sizeof(msg) - 1;
		return 0;
	}
	if (p->custom_validation && (!opts || !opts->langs))
		return gv_err_set(err, GV_EINVAL, "problem %s: custom validation needs the language registry",
				  p->name);
	struct exec_run_limits lim = { 0 };
	problem_limits(p, lang, &lim);
	out->time_limit_ms = lim.time_ms;
	out->memory_limit_mb = lim.memory_mb;
	struct exec_lang_job lj;
	if (exec_lang_job_build_files(&lj, lang, opts && opts->tenant ? opts->tenant : "local", source, len,
				      opts ? opts->others : NULL, opts ? opts->n_others : 0, &lim, err) != 0)
		return -1;
	/* Interactive: the submission's stdin and stdout go through the host
	 * relay to the interactor; it never gets the input file either. */
	lj.job.interactive = p->interactive;
	/* File I/O tasks: init places the input and takes the output file
	 * (PROTOCOL.md `input_file` / `output_file`); the checkers compare
	 * against the host's own copy of the input and answer, so what the
	 * program does to its files changes nothing but its output. */
	lj.job.input_file = p->input_file;
	lj.job.output_file = p->output_file;
	/* A fork server's template is one more start of the interpreter,
	 * which each later test saves most of: with one test it only costs. */
	if (p->ncases < 2)
		lj.job.fork_server = NULL;
	out->ncases = p->ncases;
	out->cases = calloc(p->ncases ? p->ncases : 1, sizeof(*out->cases));
	struct exec_case_result *results = calloc(p->ncases ? p->ncases : 1, sizeof(*results));
	if (!out->cases || !results) {
		free(results);
		exec_lang_job_free(&lj);
		return gv_err_set(err, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < p->ncases; i++)
		out->cases[i].verdict = EXEC_VERDICT_SKIPPED;

	struct exec_session *s = NULL;
	struct exec_validator *val = NULL;
	const char *tenant = opts && opts->tenant ? opts->tenant : "local";
	if (p->custom_validation) {
		struct gv_err verr;
		gv_err_clear(&verr);
		if (exec_validator_new(&val, e, p, opts->langs, tenant, &verr) != 0) {
			out->verdict = EXEC_VERDICT_IE;
			exec_msgf(out->message, sizeof(out->message), "%s", verr.msg);
			goto done;
		}
	}
	enum exec_run_status st = open_sandbox(e, &lj, &s, out);
	if (st != EXEC_RUN_OK) {
		out->verdict = st == EXEC_RUN_CE ? EXEC_VERDICT_CE : EXEC_VERDICT_IE;
		goto done;
	}
	for (size_t i = 0; i < p->ncases; i++) {
		struct exec_judged_case *c = &out->cases[i];
		if (!exec_session_alive(s)) {
			/* The whole sandbox died (host OOM, backstop): the
			 * remaining cases get a fresh one. */
			exec_session_close(s);
			st = open_sandbox(e, &lj, &s, out);
			if (st != EXEC_RUN_OK) {
				c->verdict = st == EXEC_RUN_CE ? EXEC_VERDICT_CE : EXEC_VERDICT_IE;
				exec_msgf(c->message, sizeof(c->message), "%s", out->message);
				out->verdict = EXEC_VERDICT_IE;
				goto done;
			}
		}
		judge_one(p, i, s, val, lang, lim.wall_ms, opts, c, out);
		if (opts && opts->progress)
			opts->progress(p, i, c, opts->progress_arg);
		if (c->verdict == EXEC_VERDICT_IE) {
			out->verdict = EXEC_VERDICT_IE;
			goto done;
		}
		if (c->verdict != EXEC_VERDICT_AC && exec_verdict_can_stop_after(p, i))
			break;
	}
	aggregate(p, results, out, err);
done:
	exec_session_close(s);
	exec_validator_free(val);
	free(results);
	exec_lang_job_free(&lj);
	return 0;
}
