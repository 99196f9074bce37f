/* Custom output validators and testlib checkers: a pure mapping from a
 * validator's run to a case outcome, and the thin shell that compiles the
 * validator in its own sandbox and runs it per case. See validator.h. */
#include "executor/judge/validator.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/judge/judge.h"
#include "executor/sandbox/record.h"

#define MAX_SOURCES 16
/* Limits of one validator run (each capped by its language's maximum):
 * validators read whole outputs and answers, so they get more than a
 * typical submission. */
#define VALIDATOR_TIME_MS 10000
#define VALIDATOR_WALL_MS 30000
#define VALIDATOR_MEMORY_MB 1024
#define VALIDATOR_OUTPUT_KB 1024

/* ---- pure part ---------------------------------------------------------- */

void exec_validator_message(char *out, size_t outsz, const char *s, size_t len)
{
	if (!outsz)
		return;
	size_t n = 0;
	for (size_t i = 0; s && i < len && s[i] != '\n' && n + 1 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];
		out[n++] = c == '\t' ? ' ' : (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

int exec_validator_first_number(const char *s, size_t len, double *out)
{
	size_t i = 0;
	while (s && i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' ||
				   s[i] == '\f'))
			i++;
		size_t st = i;
		while (i < len && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' ||
				    s[i] == '\f'))
			i++;
		size_t tl = i - st;
		if (tl == 0 || tl > 63)
			continue;
		char tok[64];
		memcpy(tok, s + st, tl);
		tok[tl] = '\0';
		/* Decimal only: strtod would also take "inf", "nan" and hex. */
		if (strspn(tok, "0123456789+-.eE") != tl || !strpbrk(tok, "0123456789"))
			continue;
		char *end = NULL;
		errno = 0;
		double v = strtod(tok, &end);
		if (end != tok + tl || errno || !isfinite(v))
			continue;
		*out = v;
		return 0;
	}
	return -1;
}

GV_PRINTF(2, 3) static void outcome_ie(struct exec_validator_outcome *o, const char *fmt, ...)
{
	o->verdict = EXEC_VERDICT_IE;
	o->has_score = false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->message, sizeof(o->message), fmt, ap);
	va_end(ap);
}

/* The validator ended on its own with an exit code (status OK or RE);
 * anything else (signal, a limit, init's failure) is IE. */
static bool exited(const struct exec_phase_result *r, int *code)
{
	if (strcmp(r->status, "OK") == 0) {
		*code = 0;
		return true;
	}
	if (strcmp(r->status, "RE") == 0) {
		*code = r->exit_code;
		return true;
	}
	return false;
}

static void kattis_outcome(bool scoring, const struct exec_phase_result *r, struct exec_validator_outcome *o)
{
	int code;
	if (!exited(r, &code)) {
		outcome_ie(o, "output validator failed: %s (%d)", r->status, r->signal ? r->signal : r->exit_code);
		return;
	}
	const struct exec_feedback_file *jm = exec_phase_feedback(r, "judgemessage.txt");
	if (code == EXEC_VALIDATOR_KATTIS_AC) {
		o->verdict = EXEC_VERDICT_AC;
	} else if (code == EXEC_VALIDATOR_KATTIS_WA) {
		o->verdict = EXEC_VERDICT_WA;
	} else {
		outcome_ie(o, "output validator exited with %d (42 or 43 expected)", code);
		return;
	}
	if (jm)
		exec_validator_message(o->message, sizeof(o->message), jm->data, jm->len);
	const struct exec_feedback_file *sc = exec_phase_feedback(r, "score.txt");
	if (scoring && o->verdict == EXEC_VERDICT_AC && sc) {
		double v;
		/* The whole file must be one number (whitespace around it). */
		size_t b = strspn(sc->data, " \t\r\n");
		size_t tl = strcspn(sc->data + b, " \t\r\n");
		size_t rest = strspn(sc->data + b + tl, " \t\r\n");
		if (b + tl + rest != sc->len || exec_validator_first_number(sc->data, sc->len, &v) != 0 || v < 0) {
			outcome_ie(o, "output validator wrote a bad score.txt");
			return;
		}
		o->has_score = true;
		o->score = v;
	}
}

static void testlib_outcome(bool scoring, const struct exec_phase_result *r, struct exec_validator_outcome *o)
{
	int code;
	if (!exited(r, &code)) {
		outcome_ie(o, "checker failed: %s (%d)", r->status, r->signal ? r->signal : r->exit_code);
		return;
	}
	exec_validator_message(o->message, sizeof(o->message), r->err_out, r->err_len);
	switch (code) {
	case EXEC_VALIDATOR_TESTLIB_OK: o->verdict = EXEC_VERDICT_AC; return;
	case EXEC_VALIDATOR_TESTLIB_WA: o->verdict = EXEC_VERDICT_WA; return;
	case EXEC_VALIDATOR_TESTLIB_PE: o->verdict = EXEC_VERDICT_PE; return;
	case EXEC_VALIDATOR_TESTLIB_POINTS: {
		double pts;
		if ((exec_validator_first_number(r->out, r->out_len, &pts) != 0 &&
		     exec_validator_first_number(r->err_out, r->err_len, &pts) != 0) ||
		    pts < 0) {
			outcome_ie(o, "checker gave partial points (exit 7) without a number");
			return;
		}
		if (scoring) {
			o->verdict = EXEC_VERDICT_AC;
			o->has_score = true;
			o->score = pts;
		} else {
			/* A pass-fail problem has no partial credit. */
			o->verdict = EXEC_VERDICT_WA;
			if (!o->message[0])
				snprintf(o->message, sizeof(o->message), "partial points %g", pts);
		}
		return;
	}
	default:
		outcome_ie(o, "checker exited with %d (testlib: 0, 1, 2 or 7 expected)", code);
		return;
	}
}

void exec_interactive_outcome(const struct exec_phase_result *sub, const struct exec_phase_result *itr,
			      bool interactor_first, struct exec_validator_outcome *o)
{
	memset(o, 0, sizeof(*o));
	int code;
	enum exec_run_status st = exec_run_status_of(sub);
	/* The submission ended first on its own CPU, memory or output limit, or
	 * crashed: the interactor lost its peer then, and what it did after
	 * (killed still waiting, a signal, an exit other than 42 or 43) is not
	 * the verdict. One that ended first on its wall clock waited: for an
	 * interactor that waited too (it used under half that time of CPU),
	 * so the submission's own silence; for one that spun, the
	 * interactor's fault. */
	bool itr_clean = exited(itr, &code) && (code == EXEC_VALIDATOR_KATTIS_AC || code == EXEC_VALIDATOR_KATTIS_WA);
	bool sub_wall = strcmp(sub->status, "WLE") == 0;
	if (!interactor_first && !itr_clean &&
	    (st == EXEC_RUN_TLE || st == EXEC_RUN_MLE || st == EXEC_RUN_OLE || st == EXEC_RUN_RE) &&
	    (!sub_wall || (uint64_t)itr->time_ms * 2 < (uint64_t)sub->wall_ms)) {
		o->verdict = st == EXEC_RUN_TLE ? EXEC_VERDICT_TLE
			   : st == EXEC_RUN_MLE ? EXEC_VERDICT_MLE
			   : st == EXEC_RUN_OLE ? EXEC_VERDICT_OLE
						: EXEC_VERDICT_RE;
		snprintf(o->message, sizeof(o->message), "%s", sub->message);
		return;
	}
	if (!exited(itr, &code)) {
		outcome_ie(o, "interactor failed: %s (%d)", itr->status, itr->signal ? itr->signal : itr->exit_code);
		return;
	}
	if (code != EXEC_VALIDATOR_KATTIS_AC && code != EXEC_VALIDATOR_KATTIS_WA) {
		outcome_ie(o, "interactor exited with %d (42 or 43 expected)", code);
		return;
	}
	if (st == EXEC_RUN_IE || st == EXEC_RUN_CE) {
		outcome_ie(o, "submission run failed: %s", sub->message);
		return;
	}
	const struct exec_feedback_file *jm = exec_phase_feedback(itr, "judgemessage.txt");
	if (jm)
		exec_validator_message(o->message, sizeof(o->message), jm->data, jm->len);
	if (code == EXEC_VALIDATOR_KATTIS_WA && (interactor_first || st == EXEC_RUN_OK)) {
		o->verdict = EXEC_VERDICT_WA;
		return;
	}
	switch (st) {
	case EXEC_RUN_OK:
		o->verdict = EXEC_VERDICT_AC; /* code is 42 here */
		return;
	case EXEC_RUN_TLE: o->verdict = EXEC_VERDICT_TLE; break;
	case EXEC_RUN_MLE: o->verdict = EXEC_VERDICT_MLE; break;
	case EXEC_RUN_OLE: o->verdict = EXEC_VERDICT_OLE; break;
	default: o->verdict = EXEC_VERDICT_RE; break;
	}
	/* The submission's own failure: its limit's wording, not the
	 * interactor's message about the input it then lost. */
	snprintf(o->message, sizeof(o->message), "%s", sub->message);
}

void exec_validator_outcome_of(enum exec_problem_validator_protocol proto, bool scoring,
			       const struct exec_phase_result *r, struct exec_validator_outcome *o)
{
	memset(o, 0, sizeof(*o));
	if (proto == EXEC_PROBLEM_VALIDATOR_TESTLIB)
		testlib_outcome(scoring, r, o);
	else
		kattis_outcome(scoring, r, o);
}

/* ---- the sandbox shell -------------------------------------------------- */

struct exec_validator {
	struct exec_engine *e;
	const struct exec_problem *p;
	const struct lang_def *lang;
	char tenant[65];
	struct exec_file files[MAX_SOURCES];
	char *data[MAX_SOURCES];
	size_t nfiles;
	struct exec_session *s;
	char *flags;        /* flags the open session was built with */
	uint32_t min_wall_ms; /* interactors: outlast the submission's wall limit */
	bool compile_failed;
	char compile_msg[GV_ERR_MSG_MAX];
	char *compile_output; /* compile_failed: the compiler's output, bounded */
	size_t compile_output_len;
};

void exec_validator_free(struct exec_validator *v)
{
	if (!v)
		return;
	exec_session_close(v->s);
	for (size_t i = 0; i < v->nfiles; i++)
		free(v->data[i]);
	free(v->flags);
	free(v->compile_output);
	free(v);
}

int exec_validator_new(struct exec_validator **out, struct exec_engine *e, const struct exec_problem *p,
		       const struct lang_registry *langs, const char *tenant, struct gv_err *err)
{
	return exec_validator_new_at(out, e, p, 0, langs, tenant, err);
}

int exec_validator_new_at(struct exec_validator **out, struct exec_engine *e, const struct exec_problem *p,
			  size_t which, const struct lang_registry *langs, const char *tenant, struct gv_err *err)
{
	*out = NULL;
	if (which >= p->nvalidators)
		return gv_err_set(err, GV_EINVAL, "problem %s: no output validator #%zu", p->name, which + 1);
	if (!langs)
		return gv_err_set(err, GV_EINVAL, "no language registry to build the output validator");
	const struct exec_problem_validator *pv = &p->validators[which];
	struct exec_validator *v = calloc(1, sizeof(*v));
	if (!v)
		return gv_err_set(err, ENOMEM, "validator: out of memory");
	v->e = e;
	v->p = p;
	snprintf(v->tenant, sizeof(v->tenant), "%s", tenant);
	size_t main_idx = SIZE_MAX;
	for (size_t i = 0; pv->files[i]; i++) {
		if (!v->lang && (v->lang = lang_find_by_filename(langs, pv->files[i])) != NULL)
			main_idx = i;
	}
	if (!v->lang) {
		exec_validator_free(v);
		return gv_err_set(err, GV_EINVAL, "output validator %s: no source file in a known language",
				  pv->name);
	}
	for (size_t i = 0; pv->files[i]; i++) {
		if (v->nfiles == MAX_SOURCES) {
			exec_validator_free(v);
			return gv_err_set(err, GV_ELIMIT, "output validator %s: more than %d files", pv->name,
					  MAX_SOURCES);
		}
		const char *name = i == main_idx ? v->lang->source : pv->files[i];
		if (i != main_idx && strcmp(name, v->lang->source) == 0) {
			exec_validator_free(v);
			return gv_err_set(err, GV_EINVAL, "output validator %s: file %s clashes with the source name",
					  pv->name, name);
		}
		char rel[4096];
		size_t len = 0;
		snprintf(rel, sizeof(rel), "%s/%s", pv->dir, pv->files[i]);
		if (exec_problem_read(p, rel, EXEC_VALIDATOR_SOURCE_MAX, &v->data[v->nfiles], &len, err) != 0) {
			exec_validator_free(v);
			return -1;
		}
		v->files[v->nfiles] = (struct exec_file){ .name = name, .data = v->data[v->nfiles], .len = len };
		v->nfiles++;
	}
	/* The main source first: exec_lang_job_build expects it there. */
	if (main_idx != 0) {
		struct exec_file f = v->files[main_idx];
		char *d = v->data[main_idx];
		memmove(&v->files[1], &v->files[0], main_idx * sizeof(v->files[0]));
		memmove(&v->data[1], &v->data[0], main_idx * sizeof(v->data[0]));
		v->files[0] = f;
		v->data[0] = d;
	}
	*out = v;
	return 0;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* The validator's run argv: its language's, then the protocol's paths,
 * then (Kattis) the flags' words. Owned by the caller (lang_argv_free). */
static char **validator_argv(const struct exec_validator *v, char *const *run, const char *flags,
			     struct gv_err *err)
{
	size_t nrun = lang_argv_len((const char *const *)run);
	char **argv = calloc(nrun + 3 + EXEC_VALIDATOR_MAX_FLAGS + 1, sizeof(char *));
	if (!argv)
		return gv_err_set(err, ENOMEM, "validator argv"), NULL;
	size_t n = 0;
	for (size_t i = 0; i < nrun; i++)
		if (!(argv[n++] = strdup(run[i])))
			goto oom;
	static const char *const kattis[] = { EXEC_VALIDATOR_FILES_DIR "input", EXEC_VALIDATOR_FILES_DIR "answer",
					      EXEC_VALIDATOR_FEEDBACK_DIR };
	static const char *const testlib[] = { EXEC_VALIDATOR_FILES_DIR "input", EXEC_VALIDATOR_FILES_DIR "output",
					       EXEC_VALIDATOR_FILES_DIR "answer" };
	bool tl = v->p->validator_protocol == EXEC_PROBLEM_VALIDATOR_TESTLIB;
	for (size_t i = 0; i < 3; i++)
		if (!(argv[n++] = strdup(tl ? testlib[i] : kattis[i])))
			goto oom;
	if (!tl && flags) {
		const char *f = flags;
		for (;;) {
			f += strspn(f, " \t\r\n");
			size_t wl = strcspn(f, " \t\r\n");
			if (!wl)
				break;
			if (n - nrun - 3 == EXEC_VALIDATOR_MAX_FLAGS) {
				lang_argv_free(argv);
				return gv_err_set(err, GV_ELIMIT, "more than %d validator flags",
						  EXEC_VALIDATOR_MAX_FLAGS), NULL;
			}
			if (!(argv[n++] = strndup(f, wl)))
				goto oom;
			f += wl;
		}
	}
	return argv;
oom:
	lang_argv_free(argv);
	gv_err_set(err, ENOMEM, "validator argv");
	return NULL;
}

/* Keeps what the failed compile printed (stderr, then stdout), cut at
 * EXEC_VALIDATOR_COMPILE_OUTPUT_MAX bytes; best effort. */
static void keep_compile_output(struct exec_validator *v, const struct exec_phase_result *c)
{
	size_t el = c->err_out ? c->err_len : 0, ol = c->out ? c->out_len : 0;
	if (el > EXEC_VALIDATOR_COMPILE_OUTPUT_MAX)
		el = EXEC_VALIDATOR_COMPILE_OUTPUT_MAX;
	if (ol > EXEC_VALIDATOR_COMPILE_OUTPUT_MAX - el)
		ol = EXEC_VALIDATOR_COMPILE_OUTPUT_MAX - el;
	free(v->compile_output);
	v->compile_output = malloc(el + ol + 1);
	v->compile_output_len = 0;
	if (!v->compile_output)
		return;
	if (el)
		memcpy(v->compile_output, c->err_out, el);
	if (ol)
		memcpy(v->compile_output + el, c->out, ol);
	v->compile_output[el + ol] = '\0';
	v->compile_output_len = el + ol;
}

/* Opens the validator's sandbox and compiles it. */
static int open_validator(struct exec_validator *v, const char *flags, struct gv_err *err)
{
	const struct lang_def *lang = v->lang;
	struct exec_run_limits lim = {
		.time_ms = min_u32(VALIDATOR_TIME_MS, lang->max.time_ms),
		.wall_ms = min_u32(VALIDATOR_WALL_MS, lang->max.wall_ms),
		.memory_mb = min_u32(VALIDATOR_MEMORY_MB, lang->max.memory_mb),
		.output_kb = min_u32(VALIDATOR_OUTPUT_KB, lang->max.output_kb),
	};
	if (v->p->interactive) {
		/* The interactor's stdout is everything the submission reads. */
		lim.output_kb = min_u32(64 * 1024, lang->max.output_kb);
		if (lim.wall_ms < v->min_wall_ms)
			lim.wall_ms = min_u32(v->min_wall_ms, lang->max.wall_ms);
	}
	if (lim.wall_ms < lim.time_ms)
		lim.wall_ms = lim.time_ms;
	struct exec_lang_job lj;
	if (exec_lang_job_build(&lj, lang, v->tenant, v->files[0].data, v->files[0].len, &lim, err) != 0) {
		gv_err_prefix(err, "output validator");
		return -1;
	}
	char **argv = validator_argv(v, lj.run_argv, flags, err);
	if (!argv) {
		exec_lang_job_free(&lj);
		return -1;
	}
	lj.job.run_argv = (const char *const *)argv;
	/* The main source under the name its language chose for it (a Java
	 * validator's public class); lj outlives the open that writes it. */
	v->files[0].name = lj.source_name;
	lj.job.files = v->files;
	lj.job.n_files = v->nfiles;
	lj.job.feedback_dir = v->p->validator_protocol == EXEC_PROBLEM_VALIDATOR_KATTIS;
	lj.job.interactive = v->p->interactive;
	struct exec_phase_result compile;
	int rc = exec_session_open(v->e, &lj.job, &v->s, &compile, err);
	if (rc != 0) {
		gv_err_prefix(err, "output validator");
	} else if (strcmp(compile.status, "OK") != 0) {
		char head[200];
		exec_validator_message(head, sizeof(head), compile.err_len ? compile.err_out : compile.out,
				       compile.err_len ? compile.err_len : compile.out_len);
		snprintf(v->compile_msg, sizeof(v->compile_msg), "output validator does not compile (%s): %s",
			 compile.status, head);
		v->compile_failed = true;
		keep_compile_output(v, &compile);
		gv_err_set(err, GV_EINVAL, "%s", v->compile_msg);
		exec_session_close(v->s);
		v->s = NULL;
		rc = -1;
	}
	exec_phase_result_free(&compile);
	lang_argv_free(argv);
	v->files[0].name = v->lang->source;
	exec_lang_job_free(&lj);
	if (rc == 0) {
		free(v->flags);
		v->flags = strdup(flags ? flags : "");
		if (!v->flags) {
			exec_session_close(v->s);
			v->s = NULL;
			return gv_err_set(err, ENOMEM, "validator flags");
		}
	}
	return rc;
}

static int ensure_open(struct exec_validator *v, const char *flags, struct gv_err *err);

int exec_validator_compile(struct exec_validator *v, bool *compiled, char **output, size_t *len,
			   struct gv_err *err)
{
	*compiled = false;
	*output = NULL;
	*len = 0;
	if (!v->compile_failed && ensure_open(v, v->p->validator_flags ? v->p->validator_flags : "", err) == 0) {
		*compiled = true;
		exec_session_close(v->s);
		v->s = NULL;
		return 0;
	}
	if (!v->compile_failed)
		return -1;
	/* A compile that printed nothing (killed at a limit) is named by its status. */
	bool printed = v->compile_output && v->compile_output_len;
	const char *src = printed ? v->compile_output : v->compile_msg;
	size_t n = printed ? v->compile_output_len : strlen(v->compile_msg);
	if (!(*output = malloc(n + 1)))
		return gv_err_set(err, ENOMEM, "validator compile output");
	memcpy(*output, src, n);
	(*output)[n] = '\0';
	*len = n;
	return 0;
}

int exec_validator_check(struct exec_validator *v, const char *flags, const char *input, size_t input_len,
			 const char *answer, size_t answer_len, const char *output, size_t output_len,
			 struct exec_validator_outcome *o, struct gv_err *err)
{
	return exec_validator_check_pass(v, flags, input, input_len, answer, answer_len, output, output_len, NULL, 0, o,
					 NULL, err);
}

int exec_validator_check_pass(struct exec_validator *v, const char *flags, const char *input, size_t input_len,
			      const char *answer, size_t answer_len, const char *output, size_t output_len,
			      const struct exec_file *seeds, size_t nseeds, struct exec_validator_outcome *o,
			      struct exec_phase_result *run, struct gv_err *err)
{
	memset(o, 0, sizeof(*o));
	if (run)
		memset(run, 0, sizeof(*run));
	o->verdict = EXEC_VERDICT_IE;
	if (v->compile_failed)
		return gv_err_set(err, GV_EINVAL, "%s", v->compile_msg);
	if (!flags || v->p->validator_protocol == EXEC_PROBLEM_VALIDATOR_TESTLIB)
		flags = "";
	if (v->p->interactive)
		return gv_err_set(err, GV_EINVAL, "problem %s is interactive: use exec_validator_interact", v->p->name);
	if (ensure_open(v, flags, err) != 0)
		return -1;
	struct exec_phase_result r;
	int rc;
	if (nseeds && v->p->validator_protocol != EXEC_PROBLEM_VALIDATOR_KATTIS)
		return gv_err_set(err, GV_EINVAL, "only a Kattis validator has a feedback dir to seed");
	if (v->p->validator_protocol == EXEC_PROBLEM_VALIDATOR_TESTLIB) {
		struct exec_file files[3] = {
			{ .name = "input", .data = input, .len = input_len },
			{ .name = "output", .data = output, .len = output_len },
			{ .name = "answer", .data = answer, .len = answer_len },
		};
		rc = exec_session_run_test_files(v->s, files, 3, "", 0, &r, err);
	} else {
		struct exec_file files[2] = {
			{ .name = "input", .data = input, .len = input_len },
			{ .name = "answer", .data = answer, .len = answer_len },
		};
		rc = exec_session_run_test_seeded(v->s, files, 2, seeds, nseeds, output, output_len, &r, err);
	}
	if (rc != 0) {
		gv_err_prefix(err, "output validator");
		exec_phase_result_free(&r);
		return -1;
	}
	exec_validator_outcome_of(v->p->validator_protocol, v->p->type == EXEC_PROBLEM_SCORING &&
				  (v->p->validator_scores || v->p->validator_protocol == EXEC_PROBLEM_VALIDATOR_TESTLIB),
				  &r, o);
	if (run)
		*run = r; /* the caller's now: its feedback files */
	else
		exec_phase_result_free(&r);
	return 0;
}

/* Closes the open sandbox when it cannot serve the next case: dead, or
 * built with other flags (they are argv, fixed when it opens). */
static int ensure_open(struct exec_validator *v, const char *flags, struct gv_err *err)
{
	if (v->s && (!exec_session_alive(v->s) || strcmp(v->flags, flags) != 0)) {
		exec_session_close(v->s);
		v->s = NULL;
	}
	if (!v->s && open_validator(v, flags, err) != 0)
		return -1;
	return 0;
}

int exec_validator_interact(struct exec_validator *v, const char *flags, const char *input, size_t input_len,
			    const char *answer, size_t answer_len, struct exec_session *sub, uint32_t sub_wall_ms,
			    const struct lang_def *sub_lang, struct exec_phase_result *run, struct exec_interaction *ia,
			    struct exec_validator_outcome *o, struct gv_err *err)
{
	memset(o, 0, sizeof(*o));
	memset(run, 0, sizeof(*run));
	memset(ia, 0, sizeof(*ia));
	o->verdict = EXEC_VERDICT_IE;
	if (!v->p->interactive)
		return gv_err_set(err, GV_EINVAL, "problem %s is not interactive", v->p->name);
	if (v->compile_failed)
		return gv_err_set(err, GV_EINVAL, "%s", v->compile_msg);
	if (!flags)
		flags = "";
	/* Margin: the submission's stall ends first, on its own limit. */
	uint32_t want = sub_wall_ms > UINT32_MAX - 5000 ? UINT32_MAX : sub_wall_ms + 5000;
	if (want > v->min_wall_ms) {
		v->min_wall_ms = want;
		exec_session_close(v->s);
		v->s = NULL;
	}
	if (ensure_open(v, flags, err) != 0)
		return -1;
	struct exec_file files[2] = {
		{ .name = "input", .data = input, .len = input_len },
		{ .name = "answer", .data = answer, .len = answer_len },
	};
	struct exec_phase_result itr;
	if (exec_session_interact(sub, v->s, files, 2, run, &itr, ia, err) != 0) {
		gv_err_prefix(err, "interactive relay");
		exec_phase_result_free(&itr);
		return -1;
	}
	exec_phase_apply_lang(run, sub_lang);
	exec_interactive_outcome(run, &itr, ia->interactor_first, o);
	exec_phase_result_free(&itr);
	return 0;
}
