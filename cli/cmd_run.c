/* gavel run: compile if needed and run one program once in a fresh
 * sandbox, with no PostgreSQL or Redis. */
#include "cli/commands.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/local_engine.h"
#include "cli/program_files.h"
#include "common/io.h"
#include "common/json.h"
#include "executor/judge/judge.h"

#define RUN_STDIN_MAX (64u * 1024u * 1024u)

enum { RUN_EXIT_OK = 0, RUN_EXIT_VERDICT = 1, RUN_EXIT_USAGE = 2, RUN_EXIT_INTERNAL = 3 };

static void run_usage(FILE *out)
{
	fprintf(out,
		"usage: gavel run [--lang ID] [--time S] [--wall S] [--memory MB] [--output KB]\n"
		"                 [--stdin FILE] [--json] SOURCE [FILE...] | FOLDER\n"
		"Compiles SOURCE if its language needs it and runs it once in a fresh gVisor sandbox.\n"
		"A program of several files: SOURCE first, the other FILEs go beside it (C, C++, Java\n"
		"and Go compile theirs with it); or a FOLDER of files whose main one is named as a\n"
		"language's source (main.c, main.py, Main.java, ...).\n"
		"The language comes from --lang or SOURCE's extension. Without --json the program's\n"
		"stdout and stderr are passed through and a non-OK status is reported on stderr.\n"
		"Exit status: 0 OK, 1 the program failed (CE, RE, TLE, MLE, OLE), 2 usage, 3 internal error.\n");
}

static const struct exec_phase_result *shown_phase(const struct exec_run_result *r)
{
	return r->ran ? &r->run : &r->compile;
}

static int print_json(const struct exec_run_result *r)
{
	const struct exec_phase_result *p = shown_phase(r);
	size_t clen = r->compile.out_len + r->compile.err_len;
	char *compile_output = malloc(clen + 1);
	if (!compile_output)
		return -1;
	if (r->compile.out_len)
		memcpy(compile_output, r->compile.out, r->compile.out_len);
	if (r->compile.err_len)
		memcpy(compile_output + r->compile.out_len, r->compile.err_out, r->compile.err_len);
	json_t *o = json_object();
	json_object_set_new(o, "status", json_string(exec_run_status_name(r->status)));
	json_object_set_new(o, "exit_code", r->ran && p->signal == 0 ? json_integer(p->exit_code) : json_null());
	json_object_set_new(o, "signal", r->ran && p->signal ? json_integer(p->signal) : json_null());
	json_object_set_new(o, "time_ms", json_integer((json_int_t)(r->ran ? p->time_ms : 0)));
	json_object_set_new(o, "wall_ms", json_integer((json_int_t)(r->ran ? p->wall_ms : 0)));
	json_object_set_new(o, "memory_kb", json_integer((json_int_t)(r->ran ? p->memory_kb : 0)));
	json_object_set_new(o, "limit", json_string(r->ran && p->limit[0] ? p->limit : "none"));
	json_object_set_new(o, "stdout", gv_json_string_lossy(r->run.out, r->ran ? r->run.out_len : 0));
	json_object_set_new(o, "stderr", gv_json_string_lossy(r->run.err_out, r->ran ? r->run.err_len : 0));
	json_object_set_new(o, "compile_output", gv_json_string_lossy(compile_output, clen));
	json_object_set_new(o, "message", json_string(r->status == EXEC_RUN_IE ? r->message
						       : r->ran ? p->message : ""));
	free(compile_output);
	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		return -1;
	int rc = gv_write_all(STDOUT_FILENO, text, strlen(text)) || gv_write_all(STDOUT_FILENO, "\n", 1) ? -1 : 0;
	free(text);
	return rc;
}

static void print_plain(const struct exec_run_result *r)
{
	if (r->status == EXEC_RUN_CE || (!r->ran && r->compile.out_len + r->compile.err_len)) {
		if (gv_write_all(STDERR_FILENO, r->compile.out, r->compile.out_len) ||
		    gv_write_all(STDERR_FILENO, r->compile.err_out, r->compile.err_len))
			return;
	}
	if (r->ran) {
		if (gv_write_all(STDOUT_FILENO, r->run.out, r->run.out_len) ||
		    gv_write_all(STDERR_FILENO, r->run.err_out, r->run.err_len))
			return;
	}
	if (r->status == EXEC_RUN_OK)
		return;
	const struct exec_phase_result *p = shown_phase(r);
	fprintf(stderr, "gavel: %s", exec_run_status_name(r->status));
	if (r->status == EXEC_RUN_RE && p->signal)
		fprintf(stderr, " (signal %d)", p->signal);
	else if (r->status == EXEC_RUN_RE)
		fprintf(stderr, " (exit code %d)", p->exit_code);
	if (r->status == EXEC_RUN_IE)
		fprintf(stderr, ": %s", r->message);
	else if (p->limit[0] && strcmp(p->limit, "none") != 0)
		fprintf(stderr, " (%s limit)", p->limit);
	fprintf(stderr, ", %llu ms CPU, %llu ms wall, %llu KiB\n", (unsigned long long)p->time_ms,
		(unsigned long long)p->wall_ms, (unsigned long long)p->memory_kb);
}

int cli_cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lang", required_argument, NULL, 'l' },   { "time", required_argument, NULL, 't' },
		{ "wall", required_argument, NULL, 'w' },   { "memory", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' }, { "stdin", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },         { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *lang_id = NULL, *stdin_path = NULL;
	bool json = false;
	struct exec_run_limits lim = { 0 };
	struct gv_err err;
	gv_err_clear(&err);
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+l:t:w:m:o:i:jh", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'l': lang_id = optarg; break;
		case 't': bad = cli_parse_seconds(optarg, &lim.time_ms, &err); break;
		case 'w': bad = cli_parse_seconds(optarg, &lim.wall_ms, &err); break;
		case 'm': bad = cli_parse_uint(optarg, 1u << 20, &lim.memory_mb, &err); break;
		case 'o': bad = cli_parse_uint(optarg, 1u << 30, &lim.output_kb, &err); break;
		case 'i': stdin_path = optarg; break;
		case 'j': json = true; break;
		case 'h': run_usage(stdout); return RUN_EXIT_OK;
		default: run_usage(stderr); return RUN_EXIT_USAGE;
		}
		if (bad) {
			fprintf(stderr, "gavel run: %s\n", err.msg);
			return RUN_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		run_usage(stderr);
		return RUN_EXIT_USAGE;
	}
	char *input = NULL;
	size_t input_len = 0;
	if (stdin_path && cli_read_file(stdin_path, RUN_STDIN_MAX, &input, &input_len, &err) != 0) {
		fprintf(stderr, "gavel run: %s\n", err.msg);
		return RUN_EXIT_USAGE;
	}
	struct cli_local local;
	if (cli_local_open(&local, &err) != 0) {
		fprintf(stderr, "gavel run: %s\n", err.msg);
		cli_local_close(&local);
		free(input);
		return RUN_EXIT_INTERNAL;
	}
	int rc = RUN_EXIT_INTERNAL;
	struct cli_program prog;
	const struct lang_def *lang = NULL;
	if (cli_program_load(&prog, &local, argv + optind, (size_t)(argc - optind), lang_id, false, &err) == 0)
		lang = cli_pick_language(&local, lang_id, prog.main_path, &err);
	struct exec_run_result result;
	memset(&result, 0, sizeof(result));
	if (!lang) {
		fprintf(stderr, "gavel run: %s\n", err.msg);
		rc = RUN_EXIT_USAGE;
	} else if (exec_run_once(&local.engine, lang, prog.main, prog.main_len, prog.others, prog.n_others,
				 input ? input : "", input_len, &lim, &result, &err) != 0) {
		fprintf(stderr, "gavel run: %s\n", err.msg);
		rc = RUN_EXIT_USAGE;
	} else {
		if (json ? print_json(&result) != 0 : (print_plain(&result), 0))
			fprintf(stderr, "gavel run: could not write the result\n");
		rc = result.status == EXEC_RUN_OK   ? RUN_EXIT_OK
		     : result.status == EXEC_RUN_IE ? RUN_EXIT_INTERNAL
						    : RUN_EXIT_VERDICT;
	}
	exec_run_result_free(&result);
	cli_program_free(&prog);
	cli_local_close(&local);
	free(input);
	return rc;
}
