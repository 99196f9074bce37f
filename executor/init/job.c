/* Parser of the job record (/box/job): the argv lists and the limits of the
 * compile and test phases. Pure: it only reads the buffer it is given. The
 * host writes this file before the sandbox starts, but it is parsed as
 * untrusted bytes anyway (bounds on every number, caps on every list). */
#include "executor/init/job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "executor/sandbox/record.h"

#define KB_MAX (64ull << 20) /* 64 GiB in KiB */

struct limit_key {
	const char *key;
	int compile;          /* 1: belongs to job->compile */
	size_t offset;        /* of a uint64_t in struct init_limits */
	uint64_t min, max;
	uint64_t def;         /* used when absent and not required */
	int required;         /* 1: always; 2: when compile_arg is present */
};

#define LIM(f) offsetof(struct init_limits, f)
static const struct limit_key limit_keys[] = {
	{ "cpu_ms", 0, LIM(cpu_ms), 1, 43200000, 0, 1 },
	{ "wall_ms", 0, LIM(wall_ms), 1, 43200000, 0, 1 },
	{ "idle_ms", 0, LIM(idle_ms), 1, 43200000, 0, 0 },
	{ "memory_kb", 0, LIM(memory_kb), 1024, KB_MAX, 0, 1 },
	{ "output_bytes", 0, LIM(output_bytes), 0, 64u << 20, 0, 1 },
	{ "stderr_bytes", 0, LIM(stderr_bytes), 0, 64u << 20, 65536, 0 },
	{ "stack_kb", 0, LIM(stack_kb), 0, KB_MAX, 0, 0 },
	{ "procs", 0, LIM(procs), 1, 4096, 64, 0 },
	{ "open_files", 0, LIM(open_files), 4, 65536, 256, 0 },
	{ "fsize_kb", 0, LIM(fsize_kb), 0, KB_MAX, 65536, 0 },
	{ "sample_ms", 0, LIM(sample_ms), 1, 1000, 5, 0 },
	{ "compile_cpu_ms", 1, LIM(cpu_ms), 1, 3600000, 0, 2 },
	{ "compile_wall_ms", 1, LIM(wall_ms), 1, 7200000, 0, 2 },
	{ "compile_memory_kb", 1, LIM(memory_kb), 1024, KB_MAX, 0, 2 },
	{ "compile_output_bytes", 1, LIM(output_bytes), 0, 64u << 20, 65536, 0 },
	{ "compile_procs", 1, LIM(procs), 1, 4096, 64, 0 },
	{ "compile_open_files", 1, LIM(open_files), 4, 65536, 256, 0 },
	{ "compile_fsize_kb", 1, LIM(fsize_kb), 0, KB_MAX, 262144, 0 },
};
#define NKEYS (sizeof(limit_keys) / sizeof(limit_keys[0]))

void init_job_free(struct init_job *job)
{
	if (!job)
		return;
	free(job->strings);
	memset(job, 0, sizeof(*job));
}

static int add_arg(char **argv, size_t *argc, char **strp, const struct exec_record_field *f,
		   const char *what, struct gv_err *err)
{
	if (*argc >= INIT_JOB_MAX_ARGS)
		return gv_err_set(err, GV_ELIMIT, "more than %d %s", INIT_JOB_MAX_ARGS, what);
	if (f->value_len > INIT_JOB_ARG_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s longer than %d bytes", what, INIT_JOB_ARG_MAX);
	/* The lexer guarantees no NUL inside a value, so the string is exact. */
	memcpy(*strp, f->value, f->value_len);
	(*strp)[f->value_len] = '\0';
	argv[(*argc)++] = *strp;
	*strp += f->value_len + 1;
	return 0;
}

/* A file I/O name (input_file, output_file): one path component of the
 * `file` grammar, never the job record nor one of the engine's names. */
static int add_io_name(char **dst, char **strp, const struct exec_record_field *f, struct gv_err *err)
{
	if (*dst)
		return gv_err_set(err, GV_EPROTO, "job record: %.*s given twice", (int)f->key_len, f->key);
	if (!exec_file_name_ok(f->value, f->value_len) || (f->value_len == 3 && !memcmp(f->value, "job", 3)) ||
	    (f->value_len >= 6 && !memcmp(f->value, ".gavel", 6)))
		return gv_err_set(err, GV_EPROTO, "job record: %.*s is not a plain file name", (int)f->key_len,
				  f->key);
	memcpy(*strp, f->value, f->value_len);
	(*strp)[f->value_len] = '\0';
	*dst = *strp;
	*strp += f->value_len + 1;
	return 0;
}

int init_job_parse(const char *buf, size_t len, struct init_job *job, struct gv_err *err)
{
	memset(job, 0, sizeof(*job));
	if (len > INIT_JOB_MAX_BYTES)
		return gv_err_set(err, GV_ELIMIT, "job record of %zu bytes (max %d)", len,
				  INIT_JOB_MAX_BYTES);
	/* Every value fits in len bytes plus its NUL: one allocation, bounded. */
	job->strings = malloc(len + 1);
	if (!job->strings)
		return gv_err_set(err, ENOMEM, "job record: out of memory");
	char *strp = job->strings;
	size_t ncompile = 0, nrun = 0;
	int seen[NKEYS] = { 0 };
	int version = 0, seccomp_seen = 0, as_seen = 0, compile_as_seen = 0;
	uint64_t v;
	size_t pos = 0;
	struct exec_record_field f;
	int r;
	while ((r = exec_record_next(buf, len, &pos, &f, err)) > 0) {
		if (exec_record_key_is(&f, "compile_arg")) {
			if (add_arg(job->compile_argv, &ncompile, &strp, &f, "compile_arg", err) < 0)
				goto fail;
		} else if (exec_record_key_is(&f, "run_arg")) {
			if (add_arg(job->run_argv, &nrun, &strp, &f, "run_arg", err) < 0)
				goto fail;
		} else if (exec_record_key_is(&f, "version")) {
			if (exec_record_parse_u64(f.value, f.value_len, 1000, &v, err) < 0 || v != 1) {
				gv_err_set(err, GV_EPROTO, "job record: unsupported version");
				goto fail;
			}
			version = 1;
		} else if (exec_record_key_is(&f, "seccomp")) {
			if (f.value_len != 7 || memcmp(f.value, "default", 7) != 0) {
				gv_err_set(err, GV_EPROTO, "job record: unknown seccomp policy");
				goto fail;
			}
			seccomp_seen = 1;
		} else if (exec_record_key_is(&f, "feedback_dir") || exec_record_key_is(&f, "interactive") ||
			   exec_record_key_is(&f, "network") || exec_record_key_is(&f, "stderr_to_stdout") ||
			   exec_record_key_is(&f, "writable_box")) {
			if (exec_record_parse_u64(f.value, f.value_len, 1, &v, err) < 0) {
				gv_err_prefix(err, "job record: key %.*s", (int)f.key_len, f.key);
				goto fail;
			}
			if (f.key[0] == 'f')
				job->feedback_dir = (int)v;
			else if (f.key[0] == 'n')
				job->network = (int)v;
			else if (f.key[0] == 's')
				job->stderr_to_stdout = (int)v;
			else if (f.key[0] == 'w')
				job->writable_box = (int)v;
			else
				job->interactive = (int)v;
		} else if (exec_record_key_is(&f, "fork_server")) {
			if (!(f.value_len == 6 && memcmp(f.value, "python", 6) == 0)) {
				gv_err_set(err, GV_EPROTO, "job record: unknown fork_server");
				goto fail;
			}
			job->fork_server = INIT_FORK_PYTHON;
		} else if (exec_record_key_is(&f, "input_file") || exec_record_key_is(&f, "output_file")) {
			if (add_io_name(f.key[0] == 'i' ? &job->input_file : &job->output_file, &strp, &f, err) < 0)
				goto fail;
		} else if (exec_record_key_is(&f, "rlimit_as") || exec_record_key_is(&f, "compile_rlimit_as")) {
			if (exec_record_parse_u64(f.value, f.value_len, 1, &v, err) < 0) {
				gv_err_prefix(err, "job record: key %.*s", (int)f.key_len, f.key);
				goto fail;
			}
			if (f.key[0] == 'r') {
				job->test.rlimit_as = (int)v;
				as_seen = 1;
			} else {
				job->compile.rlimit_as = (int)v;
				compile_as_seen = 1;
			}
		} else {
			for (size_t i = 0; i < NKEYS; i++) {
				const struct limit_key *k = &limit_keys[i];
				if (!exec_record_key_is(&f, k->key))
					continue;
				if (exec_record_parse_u64(f.value, f.value_len, k->max, &v, err) < 0 ||
				    (v < k->min && gv_err_set(err, GV_EPROTO, "below its minimum %llu",
							      (unsigned long long)k->min))) {
					gv_err_prefix(err, "job record: key %s", k->key);
					goto fail;
				}
				struct init_limits *lim = k->compile ? &job->compile : &job->test;
				memcpy((char *)lim + k->offset, &v, sizeof(v));
				seen[i] = 1;
				break;
			}
			/* other keys: ignored, as PROTOCOL.md says */
		}
	}
	if (r < 0) {
		gv_err_prefix(err, "job record");
		goto fail;
	}
	if (!version) {
		gv_err_set(err, GV_EPROTO, "job record: no version");
		goto fail;
	}
	if (nrun == 0) {
		gv_err_set(err, GV_EPROTO, "job record: no run_arg");
		goto fail;
	}
	(void)seccomp_seen; /* absent means "default", the only policy */
	if (!as_seen)
		job->test.rlimit_as = 0;
	if (!compile_as_seen)
		job->compile.rlimit_as = job->test.rlimit_as;
	for (size_t i = 0; i < NKEYS; i++) {
		const struct limit_key *k = &limit_keys[i];
		if (seen[i])
			continue;
		if (k->required == 1 || (k->required == 2 && ncompile > 0)) {
			gv_err_set(err, GV_EPROTO, "job record: missing %s", k->key);
			goto fail;
		}
		struct init_limits *lim = k->compile ? &job->compile : &job->test;
		memcpy((char *)lim + k->offset, &k->def, sizeof(k->def));
	}
	/* The stack may use the whole memory limit unless told otherwise. */
	if (!job->test.stack_kb)
		job->test.stack_kb = job->test.memory_kb;
	job->compile.stack_kb = 0; /* compilers keep the inherited stack limit */
	job->compile.stderr_bytes = job->compile.output_bytes;
	/* The idle rule's bound is the real time limit; a host that sends init
	 * a looser cpu_ms (its own CPU accounting decides TLE) says it. */
	if (!job->test.idle_ms)
		job->test.idle_ms = job->test.cpu_ms;
	if ((job->input_file || job->output_file) && job->interactive) {
		gv_err_set(err, GV_EPROTO, "job record: input_file / output_file in an interactive job");
		goto fail;
	}
	if (job->input_file && job->output_file && !strcmp(job->input_file, job->output_file)) {
		gv_err_set(err, GV_EPROTO, "job record: input_file and output_file are the same file");
		goto fail;
	}
	if (job->test.wall_ms < job->test.cpu_ms) {
		gv_err_set(err, GV_EPROTO, "job record: wall_ms below cpu_ms");
		goto fail;
	}
	return 0;
fail:
	init_job_free(job);
	return -1;
}
