/* The common part of the API fuzz targets: catalog, bounds, and the checks
 * on an accepted request (see harness.h). */
#include "tests/fuzz/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jobspec.h"
#include "executor/judge/judge.h"

const struct fe_bounds fz_bounds = { .max_source = 4096, .max_tests = 4, .max_test_size = 1024, .max_batch = 4,
				     .max_additional_files = 1024 };

/* frontend.max_body_size's default. */
#define FZ_MAX_BODY (1024u * 1024u)

static struct lang_registry reg;
static struct fe_catalog cat;
static int loaded;

const struct fe_catalog *fz_catalog(void)
{
	if (loaded)
		return &cat;
	const char *dir = getenv("GAVEL_FUZZ_LANGUAGES");
	if (!dir || !*dir)
		dir = "languages";
	struct gv_err err;
	if (lang_registry_load(&reg, dir, &err) < 0 || fe_catalog_init(&cat, &reg, NULL, 0, &err) < 0) {
		fprintf(stderr, "fuzz: languages from %s (run from the repository root, or set "
			"GAVEL_FUZZ_LANGUAGES): %s\n", dir, err.msg);
		exit(2);
	}
	/* Every language offered with a version, so that Piston's version
	 * ranges are matched against numbers. */
	static struct fe_probed p;
	p.known = true;
	static const char *const versions[] = { "3.11.2", "12.2.0", "17.0.15", "1.19.8", "18.19.0", "3.2.2" };
	for (size_t i = 0; i < cat.n; i++)
		snprintf(p.version[i], sizeof(p.version[i]), "%s", versions[i % (sizeof(versions) / sizeof(versions[0]))]);
	fe_catalog_probed_set(&cat, &p);
	loaded = 1;
	return &cat;
}

json_t *fz_body(const char *buf, size_t len)
{
	if (len == 0 || len > FZ_MAX_BODY)
		return NULL;
	struct gv_err err;
	return gv_json_parse(buf, len, FZ_MAX_BODY, 0, &err);
}

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz: invariant broken: %s: %s\n", what, detail ? detail : "");
	abort();
}

void fz_check_job(const struct fe_job *job)
{
	if (!job->lang || !json_is_object(job->spec))
		fail("accepted job", "no language or no spec object");
	const struct lang_limits *m = &job->lang->max;
	if (job->time_ms > m->time_ms || job->wall_ms > m->wall_ms || job->memory_mb > m->memory_mb ||
	    job->output_kb > m->output_kb)
		fail("effective limits", "over the language's maximum");

	/* What the store and the executor see: the spec's text. A problem
	 * submission's version is resolved by the frontend after parsing
	 * (fe_problem_submission_check), so give it one as that would. */
	json_t *spec = json_deep_copy(job->spec);
	if (!spec)
		abort();
	if (json_object_get(spec, "problem_id"))
		json_object_set_new(spec, "problem_version", json_integer(1));
	char *text = json_dumps(spec, JSON_COMPACT);
	json_decref(spec);
	if (!text)
		abort();
	struct gv_jobspec js;
	struct gv_err err;
	if (gv_jobspec_parse(text, strlen(text), &js, &err) != 0)
		fail("the executor refuses the spec the API accepted", err.msg);
	free(text);
	if (strcmp(js.language, job->lang->id) != 0)
		fail("spec language", js.language);
	if (js.n_files == 0)
		fail("spec", "no files");
	struct exec_run_limits lim = { .time_ms = js.time_ms, .wall_ms = js.wall_ms, .memory_mb = js.memory_mb,
				       .output_kb = js.output_kb };
	struct exec_lang_job lj;
	if (exec_lang_job_build(&lj, job->lang, "fuzz", js.files[0].content, js.files[0].len, &lim, &err) != 0)
		fail("the executor cannot build the job the API accepted", err.msg);
	exec_lang_job_free(&lj);
	gv_jobspec_free(&js);
}

void fz_render_row(const struct fe_job *job, const json_t *result)
{
	const struct fe_catalog *c = fz_catalog();
	const char *verdict = json_string_value(json_object_get(result, "verdict"));
	struct fe_subrow row = {
		.id = "fuzz",
		.language = job && job->lang ? job->lang->id : "c",
		.status = result ? "done" : "queued",
		.verdict = verdict,
		.created_at = "2024-01-01T00:00:00Z",
		.finished_at = result ? "2024-01-01T00:00:01Z" : NULL,
		.request = job ? job->spec : NULL,
		.result = result,
	};
	uint64_t all = (1ull << FE_J0_FIELD_COUNT_) - 1;
	json_t *o;
	if (!(o = fe_native_render(&row)))
		fail("fe_native_render", "NULL");
	json_decref(o);
	for (int b64 = 0; b64 < 2; b64++) {
		if (!(o = fe_j0_render(&row, all, b64, c)))
			fail("fe_j0_render", "NULL");
		json_decref(o);
	}
	if (!(o = fe_piston_render(&row, job ? job->lang : NULL, c)))
		fail("fe_piston_render", "NULL");
	json_decref(o);
}
