/* The config file syntax: lines of `key = value`, `[section]` headers,
 * comments, quoted values with escapes, each line bounded; every value goes
 * through the type parsers of config_value.c. Keys another binary owns are
 * skipped; anything else unknown is an error naming FILE:LINE. */
#include "common/config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/config_internal.h"

/* One gavel.conf serves every binary: a key in a section of Gavel's that
 * this binary's table has no option in at all belongs to another binary,
 * which validates it; it is skipped here. Keys in the binary's own sections
 * and in sections nobody knows stay errors, so typos are still caught. */
static const char *const gavel_sections[] = {
	"log", "database", "redis", "auth", "frontend", "scheduler", "executor", "tenants",
};

static bool belongs_to_another_binary(const struct gv_config_option *table, size_t n, const char *key)
{
	const char *dot = strchr(key, '.');
	if (!dot)
		return false;
	size_t slen = (size_t)(dot - key);
	bool known = false;
	for (size_t i = 0; i < sizeof(gavel_sections) / sizeof(gavel_sections[0]); i++)
		if (strlen(gavel_sections[i]) == slen && memcmp(gavel_sections[i], key, slen) == 0)
			known = true;
	if (!known)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strncmp(table[i].name, key, slen) == 0 && table[i].name[slen] == '.')
			return false;
	return true;
}

static const struct gv_config_option *find_option(const struct gv_config_option *table, size_t n,
						  const char *name, size_t *index)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(table[i].name, name) == 0) {
			*index = i;
			return &table[i];
		}
	}
	return NULL;
}

/* Decodes a quoted value starting after the opening quote into out (at
 * least as large as the rest of the line); *rest points past the closing
 * quote. */
static int unquote(const char *p, char *out, const char **rest, const char **problem, char *bad)
{
	size_t o = 0;
	for (;;) {
		char c = *p++;
		if (c == '\0') {
			*problem = "unterminated quoted value";
			return -1;
		}
		if (c == '"')
			break;
		if (c == '\\') {
			char e = *p++;
			switch (e) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			default:
				*bad = e;
				*problem = e ? "unknown escape in quoted value" : "unterminated quoted value";
				return -1;
			}
		}
		out[o++] = c;
	}
	out[o] = '\0';
	*rest = p;
	return 0;
}

/* "[name]" at p (past leading space): the new section, copied into section. */
static int parse_section_header(const char *fname, unsigned lineno, char *p, char *section, struct gv_err *err)
{
	char *b = ++p;
	while (gv_config_is_name_char(*p))
		p++;
	char *e = p;
	if (e == b || *p != ']' || *b == '.' || e[-1] == '.' || (size_t)(e - b) > GV_CONFIG_NAME_MAX)
		return gv_err_set(err, GV_ECONFIG, "%s:%u: bad section header", fname, lineno);
	p++;
	while (gv_config_is_space(*p))
		p++;
	if (*p != '\0' && *p != '#')
		return gv_err_set(err, GV_ECONFIG, "%s:%u: unexpected text after section header",
				  fname, lineno);
	memcpy(section, b, (size_t)(e - b));
	section[e - b] = '\0';
	return 0;
}

/* The option that the key kb..ke names in section: 1 with *opt and *idx,
 * 0 when another binary owns the key (skip the line), -1 with err when it
 * is unknown or was set before. */
static int lookup_key(struct gv_config_parse_state *st, unsigned lineno, const char *section, const char *kb,
		      const char *ke, const struct gv_config_option **opt, size_t *idx, struct gv_err *err)
{
	char key[2 * GV_CONFIG_NAME_MAX + 2];
	size_t klen = (size_t)(ke - kb);
	size_t slen = strlen(section);
	bool fits = klen <= GV_CONFIG_NAME_MAX;
	if (fits) {
		if (slen)
			snprintf(key, sizeof(key), "%s.%.*s", section, (int)klen, kb);
		else
			snprintf(key, sizeof(key), "%.*s", (int)klen, kb);
	}
	*idx = 0;
	*opt = fits ? find_option(st->table, st->n, key, idx) : NULL;
	if (!*opt && fits && belongs_to_another_binary(st->table, st->n, key))
		return 0;
	if (!*opt)
		return gv_err_set(err, GV_ECONFIG, "%s:%u: unknown option '%s%s%.*s'", st->name, lineno,
				  section, slen ? "." : "", (int)(klen > 64 ? 64 : klen), kb);
	if (st->line_of[*idx])
		return gv_err_set(err, GV_ECONFIG, "%s:%u: duplicate option '%s' (first set on line %u)",
				  st->name, lineno, (*opt)->name, st->line_of[*idx]);
	return 1;
}

/* Decodes the value text at p in place (unquoting only shrinks it): a
 * quoted value with its escapes, or a bare one up to a comment, trimmed. */
static int decode_value(const char *fname, unsigned lineno, char *p, struct gv_err *err)
{
	char *val = p;
	if (*p == '"') {
		const char *rest, *problem = NULL;
		char bad = 0;
		if (unquote(p + 1, val, &rest, &problem, &bad) < 0) {
			if (bad && isprint((unsigned char)bad))
				return gv_err_set(err, GV_ECONFIG, "%s:%u: %s: '\\%c'", fname, lineno,
						  problem, bad);
			return gv_err_set(err, GV_ECONFIG, "%s:%u: %s", fname, lineno, problem);
		}
		while (gv_config_is_space(*rest))
			rest++;
		if (*rest != '\0' && *rest != '#')
			return gv_err_set(err, GV_ECONFIG, "%s:%u: unexpected text after quoted value",
					  fname, lineno);
		return 0;
	}
	char *q = p;
	while (*q && !(*q == '#' && (q == p || gv_config_is_space(q[-1]))))
		q++;
	while (q > p && gv_config_is_space(q[-1]))
		q--;
	*q = '\0';
	if (strchr(val, '"'))
		return gv_err_set(err, GV_ECONFIG,
				  "%s:%u: stray '\"' in value (quote the whole value)", fname,
				  lineno);
	return 0;
}

static int parse_line(struct gv_config_parse_state *st, char *line, unsigned lineno, char *section,
		      struct gv_err *err)
{
	const char *fname = st->name;
	char *p = line;
	while (gv_config_is_space(*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	if (*p == '[')
		return parse_section_header(fname, lineno, p, section, err);
	char *kb = p;
	while (gv_config_is_name_char(*p))
		p++;
	char *ke = p;
	while (gv_config_is_space(*p))
		p++;
	if (ke == kb || *p != '=')
		return gv_err_set(err, GV_ECONFIG,
				  "%s:%u: expected 'key = value', '[section]' or a comment", fname, lineno);
	p++;
	while (gv_config_is_space(*p))
		p++;

	const struct gv_config_option *opt;
	size_t idx;
	int found = lookup_key(st, lineno, section, kb, ke, &opt, &idx, err);
	if (found <= 0)
		return found;
	if (decode_value(fname, lineno, p, err) < 0)
		return -1;
	union gv_config_value v;
	char why[GV_CONFIG_WHY_MAX];
	if (gv_config_parse_value(opt, p, &v, why, sizeof(why)) < 0)
		return gv_err_set(err, GV_ECONFIG, "%s:%u: %s", fname, lineno, why);
	gv_config_value_store(opt, st->target, &v);
	st->line_of[idx] = lineno;
	return 0;
}

int gv_config_parse_text(struct gv_config_parse_state *st, const char *text, size_t len, struct gv_err *err)
{
	char line[GV_CONFIG_LINE_MAX + 1];
	char section[GV_CONFIG_NAME_MAX + 1] = "";
	unsigned lineno = 0;
	size_t pos = 0;
	if (len > GV_CONFIG_FILE_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s: larger than %d bytes", st->name,
				  GV_CONFIG_FILE_MAX);
	while (pos < len) {
		lineno++;
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - start) : len - pos;
		pos += llen + (nl ? 1 : 0);
		if (llen > GV_CONFIG_LINE_MAX)
			return gv_err_set(err, GV_ELIMIT, "%s:%u: line longer than %d bytes", st->name,
					  lineno, GV_CONFIG_LINE_MAX);
		if (memchr(start, '\0', llen))
			return gv_err_set(err, GV_ECONFIG, "%s:%u: NUL byte in line", st->name, lineno);
		memcpy(line, start, llen);
		line[llen] = '\0';
		if (parse_line(st, line, lineno, section, err) < 0)
			return -1;
	}
	return 0;
}
