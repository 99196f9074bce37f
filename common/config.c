/* The table-driven config loader: the option table checked, defaults, then
 * a `key = value` file (read bounded, parsed by config_parse.c), then GAVEL_*
 * environment overrides, then required options checked. A hostile or broken
 * file costs at most GV_CONFIG_FILE_MAX bytes and is refused with FILE:LINE. */
#include "common/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config_internal.h"

#define ENV_PREFIX "GAVEL_"

void gv_config_env_name(const char *name, char *out, size_t outsz)
{
	size_t o = 0;
	for (const char *p = ENV_PREFIX; *p && o + 1 < outsz; p++)
		out[o++] = *p;
	for (const char *p = name; *p && o + 1 < outsz; p++)
		out[o++] = *p == '.' ? '_' : (char)toupper((unsigned char)*p);
	out[o < outsz ? o : outsz - 1] = '\0';
}

int gv_config_check_table(const struct gv_config_option *table, size_t n, struct gv_err *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct gv_config_option *o = &table[i];
		const char *name = o->name ? o->name : "(null)";
		size_t len = o->name ? strlen(o->name) : 0;
		if (len == 0 || len > GV_CONFIG_NAME_MAX || o->name[0] == '.' || o->name[len - 1] == '.' ||
		    strstr(o->name, ".."))
			return gv_err_set(err, GV_EINTERNAL, "config table: bad option name '%.64s'", name);
		for (size_t k = 0; k < len; k++)
			if (!gv_config_is_name_char(o->name[k]))
				return gv_err_set(err, GV_EINTERNAL, "config table: bad option name '%.64s'",
						  name);
		size_t tsz = gv_config_type_size(o->type);
		if (tsz == 0)
			return gv_err_set(err, GV_EINTERNAL, "config table: option '%s': bad type", name);
		if (o->size && o->size != tsz)
			return gv_err_set(err, GV_EINTERNAL,
					  "config table: option '%s': field has %zu bytes, type needs %zu",
					  name, o->size, tsz);
		if (o->type == GV_CONFIG_ENUM && (!o->choices || !o->choices[0]))
			return gv_err_set(err, GV_EINTERNAL, "config table: option '%s': no choices", name);
		if (o->min > o->max || (o->type != GV_CONFIG_INT && o->min < 0) ||
		    (o->type == GV_CONFIG_INT && (o->min < INT_MIN || o->max > INT_MAX)))
			return gv_err_set(err, GV_EINTERNAL, "config table: option '%s': bad range", name);
		if ((o->flags & GV_CONFIG_REQUIRED) && o->def)
			return gv_err_set(err, GV_EINTERNAL,
					  "config table: option '%s': required with a default", name);
		char ei[GV_CONFIG_NAME_MAX + 8];
		gv_config_env_name(o->name, ei, sizeof(ei));
		for (size_t j = 0; j < i; j++) {
			char ej[GV_CONFIG_NAME_MAX + 8];
			gv_config_env_name(table[j].name, ej, sizeof(ej));
			if (strcmp(ei, ej) == 0)
				return gv_err_set(err, GV_EINTERNAL,
						  "config table: options '%s' and '%s' collide (%s)",
						  table[j].name, name, ei);
		}
	}
	return 0;
}

int gv_config_defaults(const struct gv_config_option *table, size_t n, void *target,
		       struct gv_err *err)
{
	if (gv_config_check_table(table, n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct gv_config_option *opt = &table[i];
		memset(gv_config_field(opt, target), 0, gv_config_type_size(opt->type));
	}
	for (size_t i = 0; i < n; i++) {
		const struct gv_config_option *opt = &table[i];
		if (!opt->def)
			continue;
		union gv_config_value v;
		char why[GV_CONFIG_WHY_MAX];
		if (gv_config_parse_value(opt, opt->def, &v, why, sizeof(why)) < 0)
			return gv_err_set(err, GV_EINTERNAL, "config table: bad default: %s", why);
		gv_config_value_store(opt, target, &v);
	}
	return 0;
}

void gv_config_free(const struct gv_config_option *table, size_t n, void *target)
{
	if (!table || !target)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct gv_config_option *opt = &table[i];
		if (opt->type == GV_CONFIG_STRING) {
			char **s = gv_config_field(opt, target);
			free(*s);
			*s = NULL;
		} else if (opt->type == GV_CONFIG_LIST) {
			gv_config_list_clear(gv_config_field(opt, target));
		}
	}
}

static int apply_env(struct gv_config_parse_state *st, char *const *envp, struct gv_err *err)
{
	if (!envp)
		return 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct gv_config_option *opt = &st->table[i];
		char name[GV_CONFIG_NAME_MAX + 8];
		gv_config_env_name(opt->name, name, sizeof(name));
		size_t nlen = strlen(name);
		for (char *const *e = envp; *e; e++) {
			if (strncmp(*e, name, nlen) != 0 || (*e)[nlen] != '=')
				continue;
			const char *val = *e + nlen + 1;
			if (strlen(val) > GV_CONFIG_LINE_MAX)
				return gv_err_set(err, GV_ELIMIT, "environment %s: value longer than %d bytes",
						  name, GV_CONFIG_LINE_MAX);
			union gv_config_value v;
			char why[GV_CONFIG_WHY_MAX];
			if (gv_config_parse_value(opt, val, &v, why, sizeof(why)) < 0)
				return gv_err_set(err, GV_ECONFIG, "environment %s: %s", name, why);
			gv_config_value_store(opt, st->target, &v);
			st->from_env[i] = true;
			break; /* the first one wins, as with getenv */
		}
	}
	return 0;
}

int gv_config_load_text(const struct gv_config_option *table, size_t n, void *target,
			const char *name, const char *text, size_t len, char *const *envp,
			struct gv_err *err)
{
	int rc = -1;
	struct gv_config_parse_state st = { .table = table, .n = n, .target = target,
					    .name = name ? name : "(config)" };
	if (gv_config_defaults(table, n, target, err) < 0)
		goto out;
	st.line_of = calloc(n ? n : 1, sizeof(*st.line_of));
	st.from_env = calloc(n ? n : 1, sizeof(*st.from_env));
	if (!st.line_of || !st.from_env) {
		gv_err_set(err, ENOMEM, "config: out of memory");
		goto out;
	}
	if (text && gv_config_parse_text(&st, text, len, err) < 0)
		goto out;
	if (apply_env(&st, envp, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if ((table[i].flags & GV_CONFIG_REQUIRED) && !st.line_of[i] && !st.from_env[i]) {
			char env[GV_CONFIG_NAME_MAX + 8];
			gv_config_env_name(table[i].name, env, sizeof(env));
			if (text)
				gv_err_set(err, GV_ECONFIG, "%s: missing required option '%s'", st.name,
					   table[i].name);
			else
				gv_err_set(err, GV_ECONFIG,
					   "missing required option '%s' (no config file; set %s)",
					   table[i].name, env);
			goto out;
		}
	}
	rc = 0;
out:
	free(st.line_of);
	free(st.from_env);
	if (rc < 0)
		gv_config_free(table, n, target);
	return rc;
}

/* Reads at most GV_CONFIG_FILE_MAX + 1 bytes so that an oversized file is
 * noticed without reading (or allocating) all of it. */
static int read_file(const char *path, char **out, size_t *len, struct gv_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gv_err_errno(err, "%s: open", path);
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		gv_err_errno(err, "%s: fstat", path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return gv_err_set(err, GV_ECONFIG, "%s: not a regular file", path);
	}
	size_t cap = GV_CONFIG_FILE_MAX + 1;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return gv_err_set(err, ENOMEM, "%s: out of memory", path);
	}
	size_t used = 0;
	while (used < cap) {
		ssize_t r = read(fd, buf + used, cap - used);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			gv_err_errno(err, "%s: read", path);
			free(buf);
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		used += (size_t)r;
	}
	close(fd);
	if (used > GV_CONFIG_FILE_MAX) {
		free(buf);
		return gv_err_set(err, GV_ELIMIT, "%s: larger than %d bytes", path, GV_CONFIG_FILE_MAX);
	}
	*out = buf;
	*len = used;
	return 0;
}

int gv_config_load(const struct gv_config_option *table, size_t n, void *target,
		   const char *path, char *const *envp, struct gv_err *err)
{
	char *text = NULL;
	size_t len = 0;
	if (path && read_file(path, &text, &len, err) < 0) {
		/* Leave target as gv_config_load_text would on failure. */
		if (gv_config_check_table(table, n, NULL) == 0)
			gv_config_free(table, n, target);
		return -1;
	}
	int rc = gv_config_load_text(table, n, target, path, path ? text : NULL, len, envp, err);
	free(text);
	return rc;
}
