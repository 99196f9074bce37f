/* The language listings: /v1/languages, Judge0's /languages and
 * /languages/{id}, Piston's /runtimes, Jobe's languages. Each shows the catalog as live
 * executors probed it (gavel:lang:<id>, one MGET per request), so a
 * language no executor offers is listed as unavailable. */
#include "frontend/languages.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/queue.h"
#include "frontend/api_jobe.h"

/* Every language of the catalog; "available" says whether a live executor
 * offers it, "version" is what that executor probed (null when none). */
static json_t *v1_languages(const struct fe_app *app, const struct fe_probed *p)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < app->cat.n; i++) {
		const struct lang_def *l = app->cat.lang[i];
		bool offered = p->known && p->version[i][0];
		char v[LANG_STR_MAX];
		fe_catalog_display_version(&app->cat, p, i, v, sizeof(v));
		json_t *ext = json_array();
		for (char **e = l->extensions; e && *e; e++)
			json_array_append_new(ext, json_string(*e));
		json_t *opts = json_array();
		for (char **o = l->compile_options; o && *o; o++)
			json_array_append_new(opts, json_string(*o));
		json_t *lim = json_pack("{s:{s:i,s:i,s:i,s:i},s:{s:i,s:i,s:i,s:i}}", "defaults", "time_ms",
					(int)l->defaults.time_ms, "wall_ms", (int)l->defaults.wall_ms,
					"memory_mb", (int)l->defaults.memory_mb, "output_kb",
					(int)l->defaults.output_kb, "max", "time_ms", (int)l->max.time_ms,
					"wall_ms", (int)l->max.wall_ms, "memory_mb", (int)l->max.memory_mb,
					"output_kb", (int)l->max.output_kb);
		int j0 = app->cat.judge0_id[i];
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:o,s:b,s:s,s:o,s:o,s:b,s:o,s:o}", "id", l->id, "name",
						   l->name, "display_version", v, "version",
						   offered ? json_string(p->version[i]) : json_null(), "available",
						   offered, "source_file", l->source, "extensions", ext, "judge0_id",
						   j0 ? json_integer(j0) : json_null(), "compiled",
						   l->compile != NULL, "limits", lim, "compile_options", opts));
	}
	return a;
}

static void languages_reply(struct fe_req *r, const struct fe_probed *p)
{
	struct fe_app *app = r->w->app;
	switch (r->m.route->id) {
	case FE_ROUTE_V1_LANGUAGES: fe_reply_json(r, 200, v1_languages(app, p)); return;
	case FE_ROUTE_J0_LANGUAGES: fe_reply_json(r, 200, fe_j0_languages(&app->cat, p)); return;
	case FE_ROUTE_J0_LANGUAGE: {
		char *end;
		long id = strtol(r->m.params[0], &end, 10);
		json_t *j = *end || id <= 0 || id > 1000000 ? NULL : fe_j0_language(&app->cat, (int)id, p);
		if (!j)
			fe_reply_error(r, 404, "not_found", "no such language");
		else
			fe_reply_json(r, 200, j);
		return;
	}
	case FE_ROUTE_PISTON_RUNTIMES: fe_reply_json(r, 200, fe_piston_runtimes(&app->cat, p)); return;
	case FE_ROUTE_JOBE_LANGUAGES: fe_reply_json(r, 200, fe_jobe_languages(&app->cat, p)); return;
	default: fe_reply_error(r, 404, "not_found", "no such route"); return;
	}
}

/* MGET gavel:lang:<id> answered: what live executors offer, as they probed
 * it (common/queue.h). Versions are copied only when printable and short. */
static void on_lang_versions(void *arg, redisReply *reply)
{
	struct fe_req *r = arg;
	struct fe_app *app = r->w->app;
	struct fe_probed *p = calloc(1, sizeof(*p));
	if (!p) {
		fe_reply_error(r, 500, "internal", "out of memory");
	} else if (reply && reply->type == REDIS_REPLY_ARRAY && reply->elements == app->cat.n) {
		p->known = true;
		for (size_t i = 0; i < app->cat.n; i++) {
			const redisReply *e = reply->element[i];
			if (!e || e->type != REDIS_REPLY_STRING || e->len == 0 || e->len >= sizeof(p->version[i]))
				continue;
			bool printable = true;
			for (size_t k = 0; k < e->len; k++)
				printable &= (unsigned char)e->str[k] >= 0x20 && (unsigned char)e->str[k] < 0x7f;
			if (printable)
				memcpy(p->version[i], e->str, e->len + 1);
		}
		fe_catalog_probed_set(&app->cat, p);
		languages_reply(r, p);
	} else {
		fe_reply_error(r, 503, "unavailable", "the languages executors offer cannot be read (Redis)");
	}
	free(p);
	fe_req_unref(r);
}

/* Language listings show what live executors probed: one MGET of
 * gavel:lang:<id> for every catalog language. */
void fe_handle_languages(struct fe_req *r)
{
	struct fe_app *app = r->w->app;
	size_t n = app->cat.n;
	const char **argv = calloc(n + 1, sizeof(*argv));
	char(*keys)[GV_QUEUE_KEY_MAX] = calloc(n ? n : 1, sizeof(*keys));
	if (!argv || !keys) {
		free(argv);
		free(keys);
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	argv[0] = "MGET";
	for (size_t i = 0; i < n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "%s%s", GV_QUEUE_LANG_PREFIX, app->cat.lang[i]->id);
		argv[i + 1] = keys[i];
	}
	struct gv_err err;
	fe_req_ref(r);
	if (fe_redis_command(r->w->redis, on_lang_versions, r, (int)n + 1, argv, NULL, &err) < 0) {
		fe_req_unref(r);
		fe_reply_error(r, 503, "unavailable", "the languages executors offer cannot be read (Redis): %s",
			       err.msg);
	}
	free(argv);
	free(keys);
}
