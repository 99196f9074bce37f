/* The schema checks a parsed language definition must pass beyond its YAML
 * types: an id that is its file name, plain file names, programs at clean
 * paths under /usr/, argv templates that expand, header and archive names,
 * and limits that are positive with defaults within max. */
#include "languages/lang.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "languages/lang_internal.h"

static bool valid_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > LANG_ID_MAX || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
		return false;
	for (; *s; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_' || *s == '-' || *s == '+'))
			return false;
	return true;
}

/* A plain file name in the work dir: no separator, no dot-only names. */
static bool valid_filename(const char *s)
{
	if (!*s || !strcmp(s, ".") || !strcmp(s, "..") || strlen(s) > 255 || !strcmp(s, "job"))
		return false;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* An include name a header file may be built from: relative, no "..",
 * letters, digits and "_+-./" only, ending in ".h" or ".hpp" or with no
 * dot at all (<vector>). */
/* An option a submission may pass to a compiler: one word, an option
 * (never a file name the compiler would read or write), of a small
 * alphabet: no path, quote or shell character. */
static bool compile_option_ok(const char *p)
{
	size_t n = strlen(p);
	if (n < 2 || n > 64 || p[0] != '-')
		return false;
	if (strcmp(p, LANG_WARNING_OPTIONS) == 0)
		return true;
	for (const char *s = p; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("=+,._-", *s)))
			return false;
	return true;
}

static bool header_name_ok(const char *p)
{
	size_t n = strlen(p);
	if (n == 0 || n > 128 || p[0] == '/' || p[0] == '.' || strstr(p, "..") || strstr(p, "//") || p[n - 1] == '/')
		return false;
	for (const char *s = p; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("_+-./", *s)))
			return false;
	return true;
}

/* One file name of [A-Za-z0-9._-], not hidden, ending in .jsa. */
static bool class_archive_name_ok(const char *p)
{
	size_t n = strlen(p);
	if (n < 5 || n > 64 || p[0] == '.' || strcmp(p + n - 4, ".jsa") != 0)
		return false;
	for (const char *s = p; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("_.-", *s)))
			return false;
	return true;
}

/* p starts with prefix and has no "." or ".." component, no empty component. */
static bool clean_abs_path(const char *p, const char *prefix)
{
	size_t plen = strlen(prefix);
	if (strncmp(p, prefix, plen) != 0)
		return false;
	const char *s = p + 1;
	while (*s) {
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += len;
		if (*s == '/')
			s++;
	}
	return true;
}

/* argv[0] is a program under /usr or "./name" made by the compile step. */
static bool valid_program(const char *p, bool allow_local)
{
	if (allow_local && !strncmp(p, "./", 2))
		return valid_filename(p + 2);
	return clean_abs_path(p, "/usr/") && p[strlen(p) - 1] != '/';
}

static int check_template(struct lang_pctx *c, char **tmpl, const char *key)
{
	struct lang_vars vars = { .memory_mb = 1, .compile_memory_mb = 1, .source = "x", .main_class = "x" };
	char **out = NULL;
	if (lang_expand_argv((const char *const *)tmpl, &vars, &out, c->err) < 0) {
		gv_err_prefix(c->err, "%s: %s", c->file, key);
		return -1;
	}
	lang_argv_free(out);
	return 0;
}

/* "{version}" is the only placeholder of the display version, and
 * version_regex must compile. */
static int check_version_template(struct lang_pctx *c, const struct lang_def *def, yaml_node_t *root)
{
	for (const char *s = def->version; (s = strchr(s, '{')) != NULL; s++)
		if (strncmp(s, "{version}", 9) != 0)
			return lang_perr(c, root, "version: only {version} may appear in braces");
	if (strchr(def->version, '}') && !strstr(def->version, "{version}"))
		return lang_perr(c, root, "version: unbalanced '}'");
	if (def->version_regex) {
		/* glibc's regcomp unrolls interval bounds, so nested ones
		 * ("((a{1,200}){1,200}){1,200}") take gigabytes before failing. */
		if (strlen(def->version_regex) > LANG_VERSION_REGEX_MAX)
			return lang_perr(c, root, "version_regex: longer than %d bytes", LANG_VERSION_REGEX_MAX);
		if (strchr(def->version_regex, '{'))
			return lang_perr(c, root, "version_regex: interval bounds {m,n} are not allowed (use + or *)");
		regex_t re;
		int rc = regcomp(&re, def->version_regex, REG_EXTENDED);
		if (rc != 0) {
			char msg[128];
			regerror(rc, &re, msg, sizeof(msg));
			return lang_perr(c, root, "version_regex: %s", msg);
		}
		size_t groups = re.re_nsub;
		regfree(&re);
		if (groups > 9)
			return lang_perr(c, root, "version_regex: more than 9 groups");
	}
	return 0;
}

static int check_limits(struct lang_pctx *c, const struct lang_limits *l, const char *what, yaml_node_t *root)
{
	const uint32_t *v = (const uint32_t *)l;
	for (size_t i = 0; i < LANG_NLIMIT_KEYS; i++)
		if (v[i] == 0)
			return lang_perr(c, root, "%s.%s must be positive", what, lang_limit_keys[i].name);
	return 0;
}

int lang_validate(struct lang_pctx *c, struct lang_def *def, yaml_node_t *root)
{
	if (!valid_id(def->id))
		return lang_perr(c, root, "id '%.40s': use 1-%d of [a-z0-9_+-], starting with a letter or digit",
			    def->id, LANG_ID_MAX);
	/* The file name is the id, so that finding a definition is trivial. */
	const char *base = strrchr(c->file, '/');
	base = base ? base + 1 : c->file;
	size_t idlen = strlen(def->id);
	if (strncmp(base, def->id, idlen) != 0 || strcmp(base + idlen, ".yaml") != 0)
		return lang_perr(c, root, "id '%s' does not match the file name (want %s.yaml)", def->id, def->id);
	if (!valid_filename(def->source))
		return lang_perr(c, root, "source '%.60s' must be a plain file name", def->source);
	if (!valid_program(def->version_command[0], false))
		return lang_perr(c, root, "version_command: '%.80s' is not a clean absolute path under /usr/",
			    def->version_command[0]);
	if (def->compile && !valid_program(def->compile[0], false))
		return lang_perr(c, root, "compile: '%.80s' is not a clean absolute path under /usr/", def->compile[0]);
	if (!valid_program(def->run[0], def->compile != NULL))
		return lang_perr(c, root, "run: '%.80s' must be an absolute path under /usr/ (or ./name after a compile step)",
			    def->run[0]);
	if (def->compile && check_template(c, def->compile, "compile") < 0)
		return -1;
	if (check_version_template(c, def, root) < 0)
		return -1;
	if (check_template(c, def->run, "run") < 0)
		return -1;
	for (char **e = def->extensions; *e; e++) {
		const char *s = *e;
		if (s[0] != '.' || !s[1] || strlen(s) > 16)
			return lang_perr(c, root, "extension '%.20s' must look like '.cpp'", s);
		for (s++; *s; s++)
			if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '+' || *s == '_'))
				return lang_perr(c, root, "extension '%.20s': lower-case letters and digits only", *e);
	}
	if (lang_argv_len((const char *const *)def->extensions) > LANG_LIST_MAX)
		return lang_perr(c, root, "too many extensions");
	for (char **e = def->sources ? def->sources : (char *[]){NULL}; *e; e++)
		if ((*e)[0] != '.' || !(*e)[1] || strlen(*e) > 16 || !valid_filename(*e + 1))
			return lang_perr(c, root, "sources: '%.20s' must look like '.cpp'", *e);
	if (def->sources && lang_argv_len((const char *const *)def->sources) > LANG_LIST_MAX)
		return lang_perr(c, root, "too many sources endings");
	for (char **p = def->packages; *p; p++)
		for (const char *s = *p; *s; s++)
			if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || strchr("+-.:", *s)))
				return lang_perr(c, root, "package '%.40s' is not a Debian package name", *p);
	for (char **p = def->host_etc ? def->host_etc : (char *[]){NULL}; *p; p++)
		if (!clean_abs_path(*p, "/etc/") || !(*p)[5])
			return lang_perr(c, root, "host_etc '%.80s' must be a clean path under /etc/", *p);
	for (char **p = def->precompiled_headers ? def->precompiled_headers : (char *[]){NULL}; *p; p++)
		if (!header_name_ok(*p))
			return lang_perr(c, root, "precompiled header '%.80s' must be a relative include name like bits/stdc++.h",
				    *p);
	for (char **p = def->compile_options ? def->compile_options : (char *[]){NULL}; *p; p++)
		if (!compile_option_ok(*p))
			return lang_perr(c, root, "compile option '%.80s' must be one word starting with '-', "
				    "of letters, digits and =+,._-", *p);
	if (def->compile_options && !def->compile && def->compile_options[0])
		return lang_perr(c, root, "compile_options without a compile step");
	if (lang_argv_len((const char *const *)def->compile_options) > LANG_LIST_MAX)
		return lang_perr(c, root, "too many compile_options");
	for (char **p = def->interpreter_options ? def->interpreter_options : (char *[]){NULL}; *p; p++)
		if (!compile_option_ok(*p))
			return lang_perr(c, root, "interpreter option '%.80s' must be one word starting with '-', "
				    "of letters, digits and =+,._-", *p);
	if (lang_argv_len((const char *const *)def->interpreter_options) > LANG_LIST_MAX)
		return lang_perr(c, root, "too many interpreter_options");
	if (def->compile_class_archive && !class_archive_name_ok(def->compile_class_archive))
		return lang_perr(c, root, "compile_class_archive '%.80s' must be a file name ending in .jsa",
			    def->compile_class_archive);
	if (def->compile_class_archive && !def->compile)
		return lang_perr(c, root, "compile_class_archive without a compile step");
	/* gavel-init knows one fork server; it checks the run command's shape
	 * itself and keeps execve for any other. */
	if (def->fork_server && strcmp(def->fork_server, "python") != 0)
		return lang_perr(c, root, "fork_server '%.80s': the only one is python", def->fork_server);
	if (!(def->time_factor > 0 && def->time_factor <= 10))
		return lang_perr(c, root, "time_factor must be in (0, 10]");
	if (def->memory_extra_mb > 4096)
		return lang_perr(c, root, "memory_extra_mb above 4096");
	if (check_limits(c, &def->defaults, "limits.defaults", root) < 0 ||
	    check_limits(c, &def->max, "limits.max", root) < 0)
		return -1;
	const uint32_t *d = (const uint32_t *)&def->defaults, *m = (const uint32_t *)&def->max;
	for (size_t i = 0; i < LANG_NLIMIT_KEYS; i++)
		if (d[i] > m[i])
			return lang_perr(c, root, "limits.defaults.%s is above limits.max.%s", lang_limit_keys[i].name,
				    lang_limit_keys[i].name);
	if (def->defaults.wall_ms < def->defaults.time_ms || def->max.wall_ms < def->max.time_ms)
		return lang_perr(c, root, "wall_ms must not be below time_ms");
	return 0;
}
