/* Argv templates of language definitions: "{memory_mb}" (and
 * "{min(memory_mb,N)}"), "{source}" and
 * the other placeholders of struct lang_vars expanded into a fresh argv,
 * and the helpers every NULL-terminated argv of a definition uses. */
#include "languages/lang.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lang_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **p = argv; *p; p++)
		free(*p);
	free(argv);
}

size_t lang_argv_len(const char *const *argv)
{
	size_t n = 0;
	while (argv && argv[n])
		n++;
	return n;
}

/* "min(memory_mb,N)": the limit, or N when it is smaller (the JVM's
 * initial heap: above the maximum, the JVM does not start). */
static bool min_memory_cap(const char *name, size_t nlen, uint32_t *cap)
{
	static const char pre[] = "min(memory_mb,";
	size_t plen = sizeof(pre) - 1;
	if (nlen < plen + 2 || strncmp(name, pre, plen) || name[nlen - 1] != ')')
		return false;
	uint64_t n = 0;
	for (size_t i = plen; i < nlen - 1; i++) {
		if (name[i] < '0' || name[i] > '9' || n > UINT32_MAX / 10)
			return false;
		n = n * 10 + (uint64_t)(name[i] - '0');
	}
	if (n > UINT32_MAX)
		return false;
	*cap = (uint32_t)n;
	return true;
}

static int expand_one(const char *t, const struct lang_vars *vars, char **out, struct gv_err *err)
{
	char buf[LANG_STR_MAX + 64];
	size_t o = 0;
	for (const char *s = t; *s;) {
		const char *piece;
		size_t plen;
		char num[16];
		if (s[0] == '{' && s[1] == '{') {
			piece = "{", plen = 1, s += 2;
		} else if (s[0] == '}' && s[1] == '}') {
			piece = "}", plen = 1, s += 2;
		} else if (s[0] == '{') {
			const char *e = strchr(s, '}');
			if (!e)
				return gv_err_set(err, GV_ECONFIG, "unbalanced '{' in '%.80s'", t);
			size_t nlen = (size_t)(e - s - 1);
			const char *name = s + 1;
			uint32_t v = 0;
			const char *str = NULL;
			bool is_str = false;
			uint32_t cap;
			if (nlen == 9 && !strncmp(name, "memory_mb", 9)) {
				v = vars->memory_mb;
			} else if (min_memory_cap(name, nlen, &cap)) {
				v = vars->memory_mb < cap ? vars->memory_mb : cap;
			} else if (nlen == 17 && !strncmp(name, "compile_memory_mb", 17)) {
				v = vars->compile_memory_mb;
			} else if (nlen == 6 && !strncmp(name, "source", 6)) {
				str = vars->source, is_str = true;
			} else if (nlen == 10 && !strncmp(name, "main_class", 10)) {
				str = vars->main_class, is_str = true;
			} else if (nlen == 7 && !strncmp(name, "sources", 7)) {
				return gv_err_set(err, GV_ECONFIG, "'{sources}' must be a whole argument, not part of '%.80s'", t);
			} else {
				return gv_err_set(err, GV_ECONFIG, "unknown placeholder '%.*s' in '%.80s'",
						  (int)(nlen > 40 ? 40 : nlen + 2), s, t);
			}
			if (is_str && !str)
				return gv_err_set(err, GV_EINVAL, "placeholder '%.*s' has no value", (int)nlen + 2, s);
			if (is_str) {
				piece = str, plen = strlen(str), s = e + 1;
			} else {
				snprintf(num, sizeof(num), "%" PRIu32, v);
				piece = num, plen = strlen(num), s = e + 1;
			}
		} else if (s[0] == '}') {
			return gv_err_set(err, GV_ECONFIG, "unbalanced '}' in '%.80s'", t);
		} else {
			piece = s, plen = 1, s++;
		}
		if (o + plen >= sizeof(buf))
			return gv_err_set(err, GV_ELIMIT, "argument too long: '%.80s'", t);
		memcpy(buf + o, piece, plen);
		o += plen;
	}
	buf[o] = '\0';
	*out = strdup(buf);
	if (!*out)
		return gv_err_errno(err, "strdup");
	return 0;
}

/* The words "{sources}" stands for (lang_vars). */
static size_t sources_words(const struct lang_vars *vars, const char **words, size_t max)
{
	size_t n = 0;
	if (vars->source && n < max)
		words[n++] = vars->source;
	if (vars->sources_in_sandbox) {
		if (n < max)
			words[n++] = LANG_SOURCES_ARG;
		return n;
	}
	for (size_t i = 0; vars->more_sources && vars->more_sources[i] && n < max; i++)
		words[n++] = vars->more_sources[i];
	return n;
}

int lang_expand_argv(const char *const *tmpl, const struct lang_vars *vars, char ***out, struct gv_err *err)
{
	*out = NULL;
	size_t n = lang_argv_len(tmpl);
	if (n == 0)
		return gv_err_set(err, GV_EINVAL, "empty argv template");
	if (n > LANG_ARGV_MAX)
		return gv_err_set(err, GV_ELIMIT, "argv template longer than %d", LANG_ARGV_MAX);
	const char *words[LANG_ARGV_MAX + 1];
	size_t n_words = sources_words(vars, words, LANG_ARGV_MAX + 1);
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += strcmp(tmpl[i], LANG_SOURCES_ARG) ? 1 : n_words;
	if (total > LANG_ARGV_MAX)
		return gv_err_set(err, GV_ELIMIT, "command longer than %d words (too many source files)", LANG_ARGV_MAX);
	if (!vars->source && total < n)
		return gv_err_set(err, GV_EINVAL, "placeholder '{sources}' has no value");
	char **v = calloc(total + 1, sizeof(*v));
	if (!v)
		return gv_err_errno(err, "calloc");
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(tmpl[i], LANG_SOURCES_ARG)) {
			for (size_t k = 0; k < n_words; k++)
				if (!(v[o++] = strdup(words[k]))) {
					lang_argv_free(v);
					return gv_err_errno(err, "strdup");
				}
			continue;
		}
		if (expand_one(tmpl[i], vars, &v[o++], err) < 0) {
			lang_argv_free(v);
			return -1;
		}
	}
	*out = v;
	return 0;
}
