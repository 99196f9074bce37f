/* What the three APIs share: client errors, the language catalog with
 * Judge0 ids, and the common pieces of a job spec (limits against the
 * language's maximum, text fields bounded and checked for UTF-8 and NUL). */
#include "frontend/api.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/jobspec.h"
#include "frontend/api_internal.h"

int (fe_apierr_set)(struct fe_apierr *e, int status, const char *code, const char *fmt, ...)
{
	if (!e)
		return -1;
	e->status = status;
	e->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int fe_catalog_init(struct fe_catalog *cat, const struct lang_registry *reg,
		    char *const *overrides, size_t n_overrides, struct gv_err *err)
{
	memset(cat, 0, sizeof(*cat));
	pthread_mutex_init(&cat->probed_mu, NULL);
	cat->reg = reg;
	for (size_t i = 0; i < reg->n && i < FE_CATALOG_MAX; i++) {
		cat->lang[i] = &reg->defs[i];
		cat->judge0_id[i] = reg->defs[i].judge0_id;
		cat->n++;
	}
	for (size_t k = 0; k < n_overrides; k++) {
		const char *item = overrides[k];
		const char *eq = strchr(item, '=');
		if (!eq || eq == item)
			return gv_err_set(err, GV_ECONFIG, "judge0_ids: '%s': expected lang=id", item);
		char *end;
		errno = 0;
		long id = strtol(eq + 1, &end, 10);
		if (errno || *end || end == eq + 1 || id < 1 || id > 100000)
			return gv_err_set(err, GV_ECONFIG, "judge0_ids: '%s': bad id", item);
		size_t found = SIZE_MAX;
		for (size_t i = 0; i < cat->n; i++)
			if (strlen(cat->lang[i]->id) == (size_t)(eq - item) &&
			    !memcmp(cat->lang[i]->id, item, (size_t)(eq - item)))
				found = i;
		if (found == SIZE_MAX)
			return gv_err_set(err, GV_ECONFIG, "judge0_ids: '%s': unknown language", item);
		cat->judge0_id[found] = (int)id;
	}
	for (size_t i = 0; i < cat->n; i++)
		for (size_t j = i + 1; j < cat->n; j++)
			if (cat->judge0_id[i] && cat->judge0_id[i] == cat->judge0_id[j])
				return gv_err_set(err, GV_ECONFIG, "judge0 id %d given to both %s and %s",
						  cat->judge0_id[i], cat->lang[i]->id, cat->lang[j]->id);
	return 0;
}

const struct lang_def *fe_catalog_by_judge0(const struct fe_catalog *cat, int id)
{
	if (id <= 0)
		return NULL;
	for (size_t i = 0; i < cat->n; i++)
		if (cat->judge0_id[i] == id)
			return cat->lang[i];
	return NULL;
}

int fe_catalog_judge0_id(const struct fe_catalog *cat, const struct lang_def *lang)
{
	for (size_t i = 0; i < cat->n; i++)
		if (cat->lang[i] == lang)
			return cat->judge0_id[i];
	return 0;
}

void fe_job_clear(struct fe_job *job)
{
	if (job->spec)
		json_decref(job->spec);
	memset(job, 0, sizeof(*job));
}

static int check_limit(const char *name, uint32_t v, uint32_t max, struct fe_apierr *e)
{
	if (v > max)
		return fe_apierr_set(e, 422, "limit_exceeded", "%s %u is above the language's maximum %u",
				     name, v, max);
	return 0;
}

int fe_job_limits(struct fe_job *job, uint32_t time_ms, uint32_t wall_ms, uint32_t memory_mb,
		  uint32_t output_kb, struct fe_apierr *e)
{
	const struct lang_limits *d = &job->lang->defaults, *m = &job->lang->max;
	if (check_limit("time_ms", time_ms, m->time_ms, e) < 0 ||
	    check_limit("wall_ms", wall_ms, m->wall_ms, e) < 0 ||
	    check_limit("memory_mb", memory_mb, m->memory_mb, e) < 0 ||
	    check_limit("output_kb", output_kb, m->output_kb, e) < 0)
		return -1;
	job->time_ms = time_ms ? time_ms : d->time_ms;
	job->wall_ms = wall_ms ? wall_ms : d->wall_ms;
	job->memory_mb = memory_mb ? memory_mb : d->memory_mb;
	job->output_kb = output_kb ? output_kb : d->output_kb;
	if (wall_ms && wall_ms < job->time_ms)
		return fe_apierr_set(e, 422, "limit_exceeded", "wall_ms %u is below time_ms %u", wall_ms,
				     job->time_ms);
	json_t *lim = json_pack("{s:I,s:I,s:I,s:I}", "time_ms", (json_int_t)time_ms, "wall_ms",
				(json_int_t)wall_ms, "memory_mb", (json_int_t)memory_mb, "output_kb",
				(json_int_t)output_kb);
	if (!lim || json_object_set_new(job->spec, "limits", lim) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

json_t *fe_text(const char *s, size_t len, const char *field, size_t max, struct fe_apierr *e)
{
	if (len > max) {
		fe_apierr_set(e, 413, "too_large", "field '%s': %zu bytes, at most %zu allowed", field, len,
			      max);
		return NULL;
	}
	if (memchr(s, '\0', len)) {
		fe_apierr_set(e, 400, "invalid_request", "field '%s': contains a NUL byte", field);
		return NULL;
	}
	json_t *j = json_stringn(s, len);
	if (!j)
		fe_apierr_set(e, 400, "invalid_request", "field '%s': not valid UTF-8", field);
	return j;
}

int fe_put_bytes(json_t *obj, const char *key, const char *key_b64, const char *s, size_t len, const char *field,
		 size_t max, struct fe_apierr *e)
{
	if (len > max)
		return fe_apierr_set(e, 413, "too_large", "field '%s': %zu bytes, at most %zu allowed", field, len,
				     max);
	json_t *v;
	if (gv_json_text_ok(s, len)) {
		v = json_stringn(len ? s : "", len);
		key_b64 = key;
	} else {
		struct gv_err err;
		char *b = gv_b64_encode(s, len, NULL, &err);
		v = b ? json_string(b) : NULL;
		free(b);
	}
	if (!v || json_object_set_new(obj, key_b64, v) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

enum fe_extra_result fe_spec_additional_files(const json_t *v, size_t max, struct fe_job *job)
{
	if (!v || json_is_null(v))
		return FE_EXTRA_OK;
	if (!json_is_string(v))
		return FE_EXTRA_INVALID;
	if (json_string_length(v) == 0)
		return FE_EXTRA_OK;
	if (max > GV_JOBSPEC_ADDITIONAL_FILES_MAX)
		max = GV_JOBSPEC_ADDITIONAL_FILES_MAX;
	size_t len = 0;
	struct gv_err err;
	unsigned char *d = gv_b64_decode(json_string_value(v), json_string_length(v), max, &len, &err);
	if (!d)
		return err.code == GV_ELIMIT ? FE_EXTRA_TOO_LARGE : FE_EXTRA_INVALID;
	if (len == 0) {
		free(d);
		return FE_EXTRA_OK;
	}
	char *canon = gv_b64_encode(d, len, NULL, &err);
	free(d);
	json_t *s = canon ? json_string(canon) : NULL;
	free(canon);
	if (!s || json_object_set_new(job->spec, "additional_files_b64", s) != 0)
		return FE_EXTRA_NOMEM;
	return FE_EXTRA_OK;
}

int fe_get_bytes(const json_t *obj, const char *key, const char *key_b64, const char *field, size_t max,
		 char **out, size_t *len, struct fe_apierr *e)
{
	*out = NULL;
	*len = 0;
	json_t *b = json_object_get(obj, key_b64);
	if (!b || json_is_null(b)) {
		const char *s;
		int r = fe_get_text(obj, key, field, max, false, &s, len, e);
		if (r != 0)
			return r;
		*out = malloc(*len + 1);
		if (!*out)
			return fe_apierr_set(e, 500, "internal", "out of memory");
		memcpy(*out, s, *len + 1);
		return 0;
	}
	json_t *t = json_object_get(obj, key);
	if (t && !json_is_null(t))
		return fe_apierr_set(e, 400, "invalid_request", "field '%s': give '%s' or '%s', not both", field, key,
				     key_b64);
	if (!json_is_string(b))
		return fe_apierr_set(e, 400, "invalid_request", "field '%s_b64': expected string, got %s", field,
				     gv_json_type_name(b));
	struct gv_err err;
	/* Bounded: the decoder refuses more than max bytes out. */
	unsigned char *d = gv_b64_decode(json_string_value(b), json_string_length(b), max, len, &err);
	if (!d) {
		if (err.code == GV_ELIMIT)
			return fe_apierr_set(e, 413, "too_large", "field '%s': more than %zu bytes", field, max);
		return fe_apierr_set(e, 400, "invalid_request", "field '%s_b64': invalid base64", field);
	}
	*out = (char *)d;
	return 0;
}

int fe_get_text(const json_t *obj, const char *key, const char *field, size_t max, bool required,
		const char **out, size_t *len, struct fe_apierr *e)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v)) {
		if (required)
			return fe_apierr_set(e, 400, "invalid_request", "field '%s': required", field);
		return 1;
	}
	if (!json_is_string(v))
		return fe_apierr_set(e, 400, "invalid_request", "field '%s': expected string, got %s",
				     field, gv_json_type_name(v));
	size_t n = json_string_length(v);
	if (n > max)
		return fe_apierr_set(e, 413, "too_large", "field '%s': %zu bytes, at most %zu allowed",
				     field, n, max);
	if (memchr(json_string_value(v), '\0', n))
		return fe_apierr_set(e, 400, "invalid_request", "field '%s': contains a NUL byte", field);
	*out = json_string_value(v);
	*len = n;
	return 0;
}

int fe_get_callback_url(const json_t *body, struct fe_job *job, struct fe_apierr *e)
{
	const char *cb;
	size_t len;
	int r = fe_get_text(body, "callback_url", "callback_url", 2048, false, &cb, &len, e);
	if (r != 0 || len == 0)
		return r < 0 ? -1 : 0;
	size_t scheme = !strncasecmp(cb, "https://", 8) ? 8 : !strncasecmp(cb, "http://", 7) ? 7 : 0;
	if (!scheme)
		return fe_apierr_set(e, 400, "invalid_request",
				     "field 'callback_url': only http:// and https:// URLs are delivered");
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)cb[i] <= ' ' || cb[i] == 0x7f)
			return fe_apierr_set(e, 400, "invalid_request",
					     "field 'callback_url': spaces and control characters are not allowed");
	size_t host = strcspn(cb + scheme, "/?#");
	if (host == 0 || cb[scheme] == ':' || cb[scheme] == '@')
		return fe_apierr_set(e, 400, "invalid_request", "field 'callback_url': no host");
	json_object_set_new(job->spec, "callback_url", json_stringn(cb, len));
	return 0;
}

int fe_get_uint(const json_t *obj, const char *key, const char *field, uint32_t max, uint32_t *out,
		struct fe_apierr *e)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return 1;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > (json_int_t)max)
		return fe_apierr_set(e, 400, "invalid_request",
				     "field '%s': expected an integer between 0 and %u", field, max);
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

int fe_spec_base(struct fe_job *job, const struct lang_def *lang, struct fe_apierr *e)
{
	job->lang = lang;
	job->spec = json_pack("{s:s,s:[],s:b,s:i}", "language", lang->id, "files", "return_output", 0,
			      "gpus", 0);
	if (!job->spec)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

int fe_spec_add_file(struct fe_job *job, const char *name, const char *content, size_t len,
		     size_t *total, size_t max, const char *field, struct fe_apierr *e)
{
	*total += len;
	if (*total > max)
		return fe_apierr_set(e, 413, "too_large", "source: more than %zu bytes", max);
	/* The executor refuses a spec naming one file twice (an IE after the
	 * submission was accepted), so the client hears it here. */
	json_t *files = json_object_get(job->spec, "files");
	size_t i;
	json_t *old;
	json_array_foreach(files, i, old)
		if (!strcmp(json_string_value(json_object_get(old, "name")), name))
			return fe_apierr_set(e, 400, "invalid_request", "field '%s.name': '%.64s' appears twice",
					     field, name);
	json_t *c = fe_text(content, len, field, max, e);
	if (!c)
		return -1;
	json_t *f = json_pack("{s:s,s:o}", "name", name, "content", c);
	if (!f || json_array_append_new(files, f) != 0)
		return fe_apierr_set(e, 500, "internal", "out of memory");
	return 0;
}

/* File names the job spec accepts besides the main one (common/jobspec.c
 * file_name_ok: "job" and ".gavel..." are the engine's own). */
bool fe_file_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64 || !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "job") ||
	    !strncmp(name, ".gavel", 6))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

void fe_catalog_probed_set(const struct fe_catalog *cat, const struct fe_probed *p)
{
	/* The cache is the one mutable part of the catalog, behind its mutex. */
	struct fe_catalog *c = (struct fe_catalog *)cat;
	pthread_mutex_lock(&c->probed_mu);
	c->probed = *p;
	pthread_mutex_unlock(&c->probed_mu);
}

void fe_catalog_probed_get(const struct fe_catalog *cat, struct fe_probed *out)
{
	struct fe_catalog *c = (struct fe_catalog *)cat;
	pthread_mutex_lock(&c->probed_mu);
	*out = c->probed;
	pthread_mutex_unlock(&c->probed_mu);
}

void fe_catalog_display_version(const struct fe_catalog *cat, const struct fe_probed *p, size_t i, char *out,
				size_t outsz)
{
	lang_display_version(cat->lang[i], p && p->known ? p->version[i] : NULL, out, outsz);
}

bool fe_catalog_offered(const struct fe_probed *p, size_t i)
{
	return !p || !p->known || p->version[i][0] != '\0';
}
