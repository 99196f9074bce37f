/* gavel judge: judge one program against a problem package (Kattis / ICPC
 * format) in a fresh sandbox, with no PostgreSQL or Redis. */
#include "cli/commands.h"

#include <getopt.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/local_engine.h"
#include "cli/program_files.h"
#include "common/json.h"
#include "executor/judge/judge.h"


enum { JUDGE_EXIT_AC = 0, JUDGE_EXIT_REJECTED = 1, JUDGE_EXIT_USAGE = 2, JUDGE_EXIT_INTERNAL = 3 };

static void judge_usage(FILE *out)
{
	fprintf(out,
		"usage: gavel judge [--lang ID] [--time S] [--json] PROBLEM_DIR SOURCE [FILE...] | FOLDER\n"
		"Judges SOURCE (with the other FILEs beside it, or a FOLDER whose main file is named as a\n"
		"language's source: main.c, Main.java, ...) against the problem package in PROBLEM_DIR (problem.yaml, data/sample,\n"
		"data/secret, groups and scoring, custom output validators: Kattis or testlib). The time limit\n"
		"comes from --time, else problem.yaml's limits.time_limit, else a .timelimit file, else %d ms,\n"
		"times the language's time factor, at most the language's maximum; a line before the verdict\n"
		"says which. Prints a line per test and the verdict; --json prints one object instead\n"
		"(progress and the time-limit line go to stderr). An output-only problem (output_only: true)\n"
		"takes the outputs themselves: files (or a FOLDER of them) named <test>.out, one per test.\n"
		"Exit status: 0 accepted, 1 rejected, 2 usage or bad package, 3 internal error.\n",
		EXEC_PROBLEM_DEFAULT_TIME_MS);
}

struct progress {
	FILE *out;
	size_t total;
};

/* A case's name: the data case's, or a suite test's "FILE::NAME". */
static const char *case_name(const struct exec_problem *p, size_t i, char *buf, size_t sz)
{
	if (!p->suite)
		return p->cases[i]->name;
	const struct exec_suite_group *g;
	const struct exec_suite_test *t = exec_suite_test_at(p->suite, i, &g);
	snprintf(buf, sz, "%s::%s", g ? g->file : "?", t ? t->name : "?");
	return buf;
}

static void print_progress(const struct exec_problem *p, size_t index, const struct exec_judged_case *c,
			   void *arg)
{
	struct progress *pr = arg;
	char name[300];
	fprintf(pr->out, "test %zu/%zu %-28s %-4s %6llu ms %8llu KiB%s%s\n", index + 1, pr->total,
		case_name(p, index, name, sizeof(name)), exec_verdict_name(c->verdict), (unsigned long long)c->time_ms,
		(unsigned long long)c->memory_kb, c->message[0] ? "  " : "", c->message);
	fflush(pr->out);
}

/* Says which time limit the judge uses and why: where the package's limit
 * came from, the language's factor, the language's cap. */
static void describe_time_limit(char *buf, size_t sz, const struct exec_problem *p, const struct lang_def *lang,
				uint32_t used_ms)
{
	double factor = lang->time_factor > 0 ? lang->time_factor : 1.0;
	int n = snprintf(buf, sz, "time limit %u ms: %u ms from %s", used_ms, p->time_limit_ms,
			 exec_problem_time_source_name(p->time_source));
	if (n >= 0 && (size_t)n < sz && factor != 1.0)
		n += snprintf(buf + n, sz - (size_t)n, ", x%g for %s", factor, lang->id);
	if (n >= 0 && (size_t)n < sz && (double)used_ms + 0.5 < (double)p->time_limit_ms * factor)
		n += snprintf(buf + n, sz - (size_t)n, ", capped at %s's maximum", lang->id);
	if (n >= 0 && (size_t)n < sz && p->time_source == EXEC_PROBLEM_TIME_DEFAULT)
		snprintf(buf + n, sz - (size_t)n,
			 " (set limits.time_limit in problem.yaml, or let `gavel problem push` compute one from "
			 "submissions/accepted/ with limits.%s %g)",
			 p->format == EXEC_PROBLEM_FORMAT_2023_07 ? "time_multipliers.ac_to_time_limit" : "time_multiplier",
			 p->time_multiplier);
}

static int print_json(const struct exec_problem *p, const struct exec_judgement *j)
{
	json_t *o = json_object();
	json_t *tests = json_array();
	json_object_set_new(o, "verdict", json_string(exec_verdict_name(j->verdict)));
	json_object_set_new(o, "score", json_real(j->score));
	if (p->suite)
		json_object_set_new(o, "max_score", json_real(j->max_score));
	json_object_set_new(o, "time_limit_ms", json_integer(j->time_limit_ms));
	json_object_set_new(o, "time_limit_source", json_string(exec_problem_time_source_name(p->time_source)));
	json_object_set_new(o, "memory_limit_mb", json_integer(j->memory_limit_mb));
	json_object_set_new(o, "compile_output", gv_json_string_lossy(j->compile_output, j->compile_output_len));
	if (j->verdict == EXEC_VERDICT_IE)
		json_object_set_new(o, "message", json_string(j->message));
	for (size_t i = 0; i < j->ncases; i++) {
		const struct exec_judged_case *c = &j->cases[i];
		json_t *t = json_object();
		char buf[300];
		const char *name = case_name(p, i, buf, sizeof(buf));
		json_object_set_new(t, "name", gv_json_string_lossy(name, strlen(name)));
		if (p->suite) {
			const struct exec_suite_group *g;
			exec_suite_test_at(p->suite, i, &g);
			json_object_set_new(t, "hidden", json_boolean(g && g->hidden));
			json_object_set_new(t, "score", json_real(c->score));
			json_object_set_new(t, "points", json_real(c->max_points));
			if (c->output)
				json_object_set_new(t, "output", gv_json_string_lossy(c->output, c->output_len));
		}
		json_object_set_new(t, "verdict", json_string(exec_verdict_name(c->verdict)));
		json_object_set_new(t, "time_ms", json_integer((json_int_t)c->time_ms));
		json_object_set_new(t, "memory_kb", json_integer((json_int_t)c->memory_kb));
		if (c->message[0])
			json_object_set_new(t, "message", gv_json_string_lossy(c->message, strlen(c->message)));
		json_array_append_new(tests, t);
	}
	json_object_set_new(o, "tests", tests);
	int rc = json_dumpf(o, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF ? 0 : -1;
	json_decref(o);
	return rc;
}

int cli_cmd_judge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lang", required_argument, NULL, 'l' }, { "time", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },       { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *lang_id = NULL;
	bool json = false;
	uint32_t time_ms = 0;
	struct gv_err err;
	gv_err_clear(&err);
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+l:t:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'l': lang_id = optarg; break;
		case 't':
			if (cli_parse_seconds(optarg, &time_ms, &err) != 0) {
				fprintf(stderr, "gavel judge: --time: %s\n", err.msg);
				return JUDGE_EXIT_USAGE;
			}
			break;
		case 'j': json = true; break;
		case 'h': judge_usage(stdout); return JUDGE_EXIT_AC;
		default: judge_usage(stderr); return JUDGE_EXIT_USAGE;
		}
	}
	if (optind > argc - 2) {
		judge_usage(stderr);
		return JUDGE_EXIT_USAGE;
	}
	const char *problem_dir = argv[optind];
	struct cli_program prog;
	memset(&prog, 0, sizeof(prog));
	int rc = JUDGE_EXIT_INTERNAL;
	struct cli_local local;
	struct exec_problem problem;
	struct exec_judgement j;
	memset(&problem, 0, sizeof(problem));
	problem.dirfd = -1;
	memset(&j, 0, sizeof(j));
	if (cli_local_open(&local, &err) != 0) {
		fprintf(stderr, "gavel judge: %s\n", err.msg);
		goto out;
	}
	struct exec_problem_opts popts = { .time_override_ms = time_ms, .langs = &local.langs };
	if (exec_problem_load(&problem, problem_dir, &popts, &err) != 0) {
		fprintf(stderr, "gavel judge: %s\n", err.msg);
		rc = JUDGE_EXIT_USAGE;
		goto out;
	}
	/* A suite's tests name the student's files: every file keeps its
	 * name, and the language is the suite's unless --lang says. */
	bool suite = problem.suite != NULL;
	if (suite && !lang_id)
		lang_id = problem.suite->language;
	const struct lang_def *lang = NULL;
	/* Output-only: the files are outputs, every one under its own name,
	 * and there is no language. */
	bool outputs = problem.output_only;
	int loaded = cli_program_load(&prog, &local, argv + optind + 1, (size_t)(argc - optind - 1),
				      outputs ? NULL : lang_id, suite || outputs, &err);
	if (loaded == 0 && !outputs)
		lang = cli_pick_language(&local, lang_id, prog.main_path, &err);
	if (loaded != 0 || (!lang && !outputs)) {
		fprintf(stderr, "gavel judge: %s\n", err.msg);
		rc = JUDGE_EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < problem.nwarnings; i++)
		fprintf(stderr, "gavel judge: warning: %s\n", problem.warnings[i]);
	struct progress pr = { .out = json ? stderr : stdout, .total = suite ? problem.suite->ntests : problem.ncases };
	const char *main_name = strrchr(prog.main_path, '/') ? strrchr(prog.main_path, '/') + 1 : prog.main_path;
	struct exec_judge_opts jopts = {
		.tenant = "local", .progress = print_progress, .progress_arg = &pr, .langs = &local.langs,
		.others = prog.others, .n_others = prog.n_others, .source_name = suite || outputs ? main_name : NULL,
	};
	if (exec_judge_problem(&local.engine, &problem, lang, prog.main, prog.main_len, &jopts, &j, &err) != 0) {
		fprintf(stderr, "gavel judge: %s\n", err.msg);
		rc = JUDGE_EXIT_USAGE;
		goto out;
	}
	char why[512];
	if (suite)
		snprintf(why, sizeof(why), "time limit %u ms and memory %u MiB per test, from suite/suite.yaml (%s, %zu tests)",
			 j.time_limit_ms, j.memory_limit_mb, problem.suite->framework, problem.suite->ntests);
	else if (outputs)
		snprintf(why, sizeof(why), "output-only: %zu tests, each the file <test>.out of the submission",
			 problem.ncases);
	else
		describe_time_limit(why, sizeof(why), &problem, lang, j.time_limit_ms);
	fprintf(json ? stderr : stdout, "%s\n", why);
	if (json) {
		if (print_json(&problem, &j) != 0)
			fprintf(stderr, "gavel judge: could not write the result\n");
	} else {
		if (j.verdict == EXEC_VERDICT_CE && j.compile_output_len)
			fwrite(j.compile_output, 1, j.compile_output_len, stdout);
		if (j.verdict == EXEC_VERDICT_IE)
			printf("internal error: %s\n", j.message);
		printf("verdict %s", exec_verdict_name(j.verdict));
		if (problem.type == EXEC_PROBLEM_SCORING)
			printf(", score %g", j.score);
		if (suite)
			printf(" of %g", j.max_score);
		if (outputs)
			printf(" (output-only)\n");
		else
			printf(" (%s, time limit %u ms, memory %u MiB)\n", lang->id, j.time_limit_ms, j.memory_limit_mb);
	}
	rc = j.verdict == EXEC_VERDICT_AC ? JUDGE_EXIT_AC
	     : j.verdict == EXEC_VERDICT_IE ? JUDGE_EXIT_INTERNAL
					     : JUDGE_EXIT_REJECTED;
out:
	exec_judgement_free(&j);
	exec_problem_free(&problem);
	cli_local_close(&local);
	cli_program_free(&prog);
	return rc;
}
