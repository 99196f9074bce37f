/* The table-driven config loader: defaults, then a `key = value` file, then
 * GAVEL_* environment overrides, each value checked against its option's
 * type and bounds. The parser works on text in memory with fixed limits
 * (file size, line length, name length), so a hostile or broken file costs
 * at most GV_CONFIG_FILE_MAX bytes and is refused with FILE:LINE. */
#include "common/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

#define ENV_PREFIX "GAVEL_"
#define WHY_MAX 256

union cfg_value {
	char *s;
	int i;
	bool b;
	uint64_t u;
	struct gv_config_list l;
};

static void *field(const struct gv_config_option *opt, void *target)
{
	return (char *)target + opt->offset;
}

static const void *cfield(const struct gv_config_option *opt, const void *target)
{
	return (const char *)target + opt->offset;
}

static size_t type_size(enum gv_config_type type)
{
	switch (type) {
	case GV_CONFIG_STRING: return sizeof(char *);
	case GV_CONFIG_INT: return sizeof(int);
	case GV_CONFIG_BOOL: return sizeof(bool);
	case GV_CONFIG_SIZE: return sizeof(uint64_t);
	case GV_CONFIG_DURATION: return sizeof(uint64_t);
	case GV_CONFIG_ENUM: return sizeof(int);
	case GV_CONFIG_LIST: return sizeof(struct gv_config_list);
	}
	return 0;
}

static void list_clear(struct gv_config_list *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->count = 0;
}

/* Moves v into the target field, freeing what the field owned. */
static void value_store(const struct gv_config_option *opt, void *target, union cfg_value *v)
{
	void *f = field(opt, target);
	switch (opt->type) {
	case GV_CONFIG_STRING:
		free(*(char **)f);
		*(char **)f = v->s;
		break;
	case GV_CONFIG_INT:
	case GV_CONFIG_ENUM:
		*(int *)f = v->i;
		break;
	case GV_CONFIG_BOOL:
		*(bool *)f = v->b;
		break;
	case GV_CONFIG_SIZE:
	case GV_CONFIG_DURATION:
		*(uint64_t *)f = v->u;
		break;
	case GV_CONFIG_LIST:
		list_clear((struct gv_config_list *)f);
		*(struct gv_config_list *)f = v->l;
		break;
	}
	memset(v, 0, sizeof(*v));
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* Parses an unsigned decimal prefix; *end is set past the digits. */
static int parse_digits(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10) {
			*end = p;
			return -2;
		}
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return 0;
}

struct suffix {
	const char *name;
	uint64_t mult;
};

static const struct suffix size_suffixes[] = {
	{ "", 1 }, { "b", 1 },
	{ "k", 1ull << 10 }, { "kb", 1ull << 10 }, { "kib", 1ull << 10 },
	{ "m", 1ull << 20 }, { "mb", 1ull << 20 }, { "mib", 1ull << 20 },
	{ "g", 1ull << 30 }, { "gb", 1ull << 30 }, { "gib", 1ull << 30 },
	{ "t", 1ull << 40 }, { "tb", 1ull << 40 }, { "tib", 1ull << 40 },
};

static const struct suffix duration_suffixes[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60 * 1000 }, { "h", 60 * 60 * 1000 },
};

static int parse_scaled(const char *s, const struct suffix *suf, size_t nsuf, bool bare_zero_only,
			uint64_t *out, const char **problem)
{
	uint64_t v;
	const char *end;
	int rc = parse_digits(s, &v, &end);
	if (rc == -2) {
		*problem = "too large";
		return -1;
	}
	if (rc < 0) {
		*problem = NULL;
		return -1;
	}
	if (*end == '\0' && bare_zero_only && v == 0) {
		*out = 0;
		return 0;
	}
	for (size_t i = 0; i < nsuf; i++) {
		if (strcasecmp(end, suf[i].name) != 0)
			continue;
		if (suf[i].mult != 0 && v > UINT64_MAX / suf[i].mult) {
			*problem = "too large";
			return -1;
		}
		*out = v * suf[i].mult;
		return 0;
	}
	*problem = NULL;
	return -1;
}

static int64_t opt_min(const struct gv_config_option *opt)
{
	if (opt->min == 0 && opt->max == 0)
		return opt->type == GV_CONFIG_INT ? INT_MIN : 0;
	return opt->min;
}

static int64_t opt_max(const struct gv_config_option *opt)
{
	if (opt->min == 0 && opt->max == 0)
		return opt->type == GV_CONFIG_INT ? INT_MAX : INT64_MAX;
	return opt->max;
}

static int split_list(const char *text, struct gv_config_list *l, const char **problem)
{
	memset(l, 0, sizeof(*l));
	const char *p = text;
	while (is_space(*p))
		p++;
	if (*p == '\0')
		return 0;
	size_t cap = 1;
	for (const char *q = p; *q; q++)
		cap += *q == ',';
	l->items = calloc(cap, sizeof(*l->items));
	if (!l->items) {
		*problem = "out of memory";
		return -1;
	}
	for (;;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		const char *b = p, *e = end;
		while (b < e && is_space(*b))
			b++;
		while (e > b && is_space(e[-1]))
			e--;
		if (b == e) {
			*problem = "empty item in list";
			list_clear(l);
			return -1;
		}
		char *item = strndup(b, (size_t)(e - b));
		if (!item) {
			*problem = "out of memory";
			list_clear(l);
			return -1;
		}
		l->items[l->count++] = item;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* Parses text for opt into v. On failure writes a reason (naming the
 * option, quoting the value unless it is secret) into why. */
static int parse_value(const struct gv_config_option *opt, const char *text, union cfg_value *v,
		       char *why, size_t whysz)
{
	char shown[80] = "";
	if (!(opt->flags & GV_CONFIG_SECRET)) {
		char esc[64];
		gv_log_escape(esc, sizeof(esc), text, strlen(text));
		snprintf(shown, sizeof(shown), ", got '%s'", esc);
	}
	const char *problem = NULL;
	memset(v, 0, sizeof(*v));
	switch (opt->type) {
	case GV_CONFIG_STRING: {
		size_t len = strlen(text);
		if ((opt->min || opt->max) &&
		    ((int64_t)len < opt->min || (uint64_t)len > (uint64_t)opt->max)) {
			snprintf(why, whysz, "option '%s': length %zu out of range %" PRId64 "..%" PRId64,
				 opt->name, len, opt->min, opt->max);
			return -1;
		}
		v->s = strdup(text);
		if (!v->s) {
			snprintf(why, whysz, "option '%s': out of memory", opt->name);
			return -1;
		}
		return 0;
	}
	case GV_CONFIG_INT: {
		const char *p = text;
		bool neg = false;
		uint64_t mag;
		const char *end = p;
		if (*p == '+' || *p == '-')
			neg = *p++ == '-';
		int rc = parse_digits(p, &mag, &end);
		if (rc == -1 || (rc == 0 && *end != '\0')) {
			snprintf(why, whysz, "option '%s': expected an integer%s", opt->name, shown);
			return -1;
		}
		if (rc == -2 || mag > (uint64_t)INT64_MAX) {
			snprintf(why, whysz, "option '%s': integer out of range %" PRId64 "..%" PRId64 "%s",
				 opt->name, opt_min(opt), opt_max(opt), shown);
			return -1;
		}
		int64_t val = neg ? -(int64_t)mag : (int64_t)mag;
		if (val < opt_min(opt) || val > opt_max(opt)) {
			snprintf(why, whysz, "option '%s': integer out of range %" PRId64 "..%" PRId64 "%s",
				 opt->name, opt_min(opt), opt_max(opt), shown);
			return -1;
		}
		v->i = (int)val;
		return 0;
	}
	case GV_CONFIG_BOOL: {
		static const char *const yes[] = { "true", "yes", "on", "1" };
		static const char *const no[] = { "false", "no", "off", "0" };
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (strcasecmp(text, yes[i]) == 0) {
				v->b = true;
				return 0;
			}
			if (strcasecmp(text, no[i]) == 0) {
				v->b = false;
				return 0;
			}
		}
		snprintf(why, whysz, "option '%s': expected true or false%s", opt->name, shown);
		return -1;
	}
	case GV_CONFIG_SIZE:
	case GV_CONFIG_DURATION: {
		bool size = opt->type == GV_CONFIG_SIZE;
		int rc = size ? parse_scaled(text, size_suffixes,
					     sizeof(size_suffixes) / sizeof(size_suffixes[0]), false,
					     &v->u, &problem)
			      : parse_scaled(text, duration_suffixes,
					     sizeof(duration_suffixes) / sizeof(duration_suffixes[0]), true,
					     &v->u, &problem);
		if (rc < 0 && !problem) {
			snprintf(why, whysz, "option '%s': expected %s%s", opt->name,
				 size ? "a size such as 512, 64k, 16m or 2g"
				      : "a duration with a unit such as 500ms, 30s, 5m or 1h",
				 shown);
			return -1;
		}
		if (rc < 0 || v->u < (uint64_t)opt_min(opt) || v->u > (uint64_t)opt_max(opt)) {
			snprintf(why, whysz, "option '%s': %s out of range %" PRId64 "..%" PRId64 "%s%s",
				 opt->name, size ? "size" : "duration", opt_min(opt), opt_max(opt),
				 size ? " bytes" : " ms", shown);
			return -1;
		}
		return 0;
	}
	case GV_CONFIG_ENUM: {
		for (int i = 0; opt->choices && opt->choices[i]; i++) {
			if (strcmp(text, opt->choices[i]) == 0) {
				v->i = i;
				return 0;
			}
		}
		int used = snprintf(why, whysz, "option '%s': expected one of", opt->name);
		for (int i = 0; opt->choices && opt->choices[i] && used >= 0 && (size_t)used < whysz; i++)
			used += snprintf(why + used, whysz - (size_t)used, "%s %s", i ? "," : "",
					 opt->choices[i]);
		if (used >= 0 && (size_t)used < whysz)
			snprintf(why + used, whysz - (size_t)used, "%s", shown);
		return -1;
	}
	case GV_CONFIG_LIST:
		if (split_list(text, &v->l, &problem) < 0) {
			snprintf(why, whysz, "option '%s': %s%s", opt->name, problem, shown);
			return -1;
		}
		return 0;
	}
	snprintf(why, whysz, "option '%s': unknown type", opt->name);
	return -1;
}

/* "GAVEL_" + upper-cased name with dots as underscores. */
static void env_name(const char *name, char *out, size_t outsz)
{
	size_t o = 0;
	for (const char *p = ENV_PREFIX; *p && o + 1 < outsz; p++)
		out[o++] = *p;
	for (const char *p = name; *p && o + 1 < outsz; p++)
		out[o++] = *p == '.' ? '_' : (char)toupper((unsigned char)*p);
	out[o < outsz ? o : outsz - 1] = '\0';
}

static int check_table(const struct gv_config_option *table, size_t n, struct gv_err *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct gv_config_option *o = &table[i];
		const char *name = o->name ? o->name : "(null)";
		size_t len = o->name ? strlen(o->name) : 0;
		if (len == 0 || len > GV_CONFIG_NAME_MAX || o->name[0] == '.' || o->name[len - 1] == '.' ||
		    strstr(o->name, ".."))
			return gv_err_set(err, GV_EINTERNAL, "config table: bad option name '%.64s'", name);
		for (size_t k = 0; k < len; k++)
			if (!is_name_char(o->name[k]))
				return gv_err_set(err, GV_EINTERNAL, "config table: bad option name '%.64s'",
						  name);
		size_t tsz = type_size(o->type);
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
		env_name(o->name, ei, sizeof(ei));
		for (size_t j = 0; j < i; j++) {
			char ej[GV_CONFIG_NAME_MAX + 8];
			env_name(table[j].name, ej, sizeof(ej));
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
	if (check_table(table, n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct gv_config_option *opt = &table[i];
		memset(field(opt, target), 0, type_size(opt->type));
	}
	for (size_t i = 0; i < n; i++) {
		const struct gv_config_option *opt = &table[i];
		if (!opt->def)
			continue;
		union cfg_value v;
		char why[WHY_MAX];
		if (parse_value(opt, opt->def, &v, why, sizeof(why)) < 0)
			return gv_err_set(err, GV_EINTERNAL, "config table: bad default: %s", why);
		value_store(opt, target, &v);
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
			char **s = field(opt, target);
			free(*s);
			*s = NULL;
		} else if (opt->type == GV_CONFIG_LIST) {
			list_clear(field(opt, target));
		}
	}
}

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

struct parse_state {
	const struct gv_config_option *table;
	size_t n;
	void *target;
	const char *name;
	unsigned *line_of; /* per option: line that set it, 0 = not in file */
	bool *from_env;
};

static int parse_line(struct parse_state *st, char *line, unsigned lineno, char *section,
		      struct gv_err *err)
{
	const char *fname = st->name;
	char *p = line;
	while (is_space(*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	if (*p == '[') {
		char *b = ++p;
		while (is_name_char(*p))
			p++;
		char *e = p;
		if (e == b || *p != ']' || *b == '.' || e[-1] == '.' || (size_t)(e - b) > GV_CONFIG_NAME_MAX)
			return gv_err_set(err, GV_ECONFIG, "%s:%u: bad section header", fname, lineno);
		p++;
		while (is_space(*p))
			p++;
		if (*p != '\0' && *p != '#')
			return gv_err_set(err, GV_ECONFIG, "%s:%u: unexpected text after section header",
					  fname, lineno);
		memcpy(section, b, (size_t)(e - b));
		section[e - b] = '\0';
		return 0;
	}
	char *kb = p;
	while (is_name_char(*p))
		p++;
	char *ke = p;
	while (is_space(*p))
		p++;
	if (ke == kb || *p != '=')
		return gv_err_set(err, GV_ECONFIG,
				  "%s:%u: expected 'key = value', '[section]' or a comment", fname, lineno);
	p++;
	while (is_space(*p))
		p++;

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
	size_t idx = 0;
	const struct gv_config_option *opt = fits ? find_option(st->table, st->n, key, &idx) : NULL;
	if (!opt && fits && belongs_to_another_binary(st->table, st->n, key))
		return 0;
	if (!opt)
		return gv_err_set(err, GV_ECONFIG, "%s:%u: unknown option '%s%s%.*s'", fname, lineno,
				  section, slen ? "." : "", (int)(klen > 64 ? 64 : klen), kb);
	if (st->line_of[idx])
		return gv_err_set(err, GV_ECONFIG, "%s:%u: duplicate option '%s' (first set on line %u)",
				  fname, lineno, opt->name, st->line_of[idx]);

	/* The value is decoded in place: unquoting only shrinks it. */
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
		while (is_space(*rest))
			rest++;
		if (*rest != '\0' && *rest != '#')
			return gv_err_set(err, GV_ECONFIG, "%s:%u: unexpected text after quoted value",
					  fname, lineno);
	} else {
		char *q = p;
		while (*q && !(*q == '#' && (q == p || is_space(q[-1]))))
			q++;
		while (q > p && is_space(q[-1]))
			q--;
		*q = '\0';
		if (strchr(val, '"'))
			return gv_err_set(err, GV_ECONFIG,
					  "%s:%u: stray '\"' in value (quote the whole value)", fname,
					  lineno);
	}
	union cfg_value v;
	char why[WHY_MAX];
	if (parse_value(opt, val, &v, why, sizeof(why)) < 0)
		return gv_err_set(err, GV_ECONFIG, "%s:%u: %s", fname, lineno, why);
	value_store(opt, st->target, &v);
	st->line_of[idx] = lineno;
	return 0;
}

static int parse_text(struct parse_state *st, const char *text, size_t len, struct gv_err *err)
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

static int apply_env(struct parse_state *st, char *const *envp, struct gv_err *err)
{
	if (!envp)
		return 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct gv_config_option *opt = &st->table[i];
		char name[GV_CONFIG_NAME_MAX + 8];
		env_name(opt->name, name, sizeof(name));
		size_t nlen = strlen(name);
		for (char *const *e = envp; *e; e++) {
			if (strncmp(*e, name, nlen) != 0 || (*e)[nlen] != '=')
				continue;
			const char *val = *e + nlen + 1;
			if (strlen(val) > GV_CONFIG_LINE_MAX)
				return gv_err_set(err, GV_ELIMIT, "environment %s: value longer than %d bytes",
						  name, GV_CONFIG_LINE_MAX);
			union cfg_value v;
			char why[WHY_MAX];
			if (parse_value(opt, val, &v, why, sizeof(why)) < 0)
				return gv_err_set(err, GV_ECONFIG, "environment %s: %s", name, why);
			value_store(opt, st->target, &v);
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
	struct parse_state st = { .table = table, .n = n, .target = target,
				  .name = name ? name : "(config)" };
	if (gv_config_defaults(table, n, target, err) < 0)
		goto out;
	st.line_of = calloc(n ? n : 1, sizeof(*st.line_of));
	st.from_env = calloc(n ? n : 1, sizeof(*st.from_env));
	if (!st.line_of || !st.from_env) {
		gv_err_set(err, ENOMEM, "config: out of memory");
		goto out;
	}
	if (text && parse_text(&st, text, len, err) < 0)
		goto out;
	if (apply_env(&st, envp, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if ((table[i].flags & GV_CONFIG_REQUIRED) && !st.line_of[i] && !st.from_env[i]) {
			char env[GV_CONFIG_NAME_MAX + 8];
			env_name(table[i].name, env, sizeof(env));
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
		if (check_table(table, n, NULL) == 0)
			gv_config_free(table, n, target);
		return -1;
	}
	int rc = gv_config_load_text(table, n, target, path, path ? text : NULL, len, envp, err);
	free(text);
	return rc;
}

static bool values_equal(const struct gv_config_option *opt, const void *a, const void *b)
{
	const void *fa = cfield(opt, a), *fb = cfield(opt, b);
	switch (opt->type) {
	case GV_CONFIG_STRING: {
		const char *sa = *(char *const *)fa, *sb = *(char *const *)fb;
		return sa == sb || (sa && sb && strcmp(sa, sb) == 0);
	}
	case GV_CONFIG_LIST: {
		const struct gv_config_list *la = fa, *lb = fb;
		if (la->count != lb->count)
			return false;
		for (size_t i = 0; i < la->count; i++)
			if (strcmp(la->items[i], lb->items[i]) != 0)
				return false;
		return true;
	}
	case GV_CONFIG_BOOL:
		return *(const bool *)fa == *(const bool *)fb;
	default:
		return memcmp(fa, fb, type_size(opt->type)) == 0;
	}
}

int gv_config_reload(const struct gv_config_option *table, size_t n, void *cur, void *next,
		     struct gv_err *err)
{
	for (size_t i = 0; i < n; i++)
		if (!(table[i].flags & GV_CONFIG_RELOADABLE) && !values_equal(&table[i], cur, next))
			return gv_err_set(err, GV_ECONFIG, "option '%s' cannot change without a restart",
					  table[i].name);
	for (size_t i = 0; i < n; i++) {
		if (!(table[i].flags & GV_CONFIG_RELOADABLE))
			continue;
		unsigned char tmp[sizeof(union cfg_value)]; /* the union holds every type */
		size_t sz = type_size(table[i].type);
		memcpy(tmp, field(&table[i], cur), sz);
		memcpy(field(&table[i], cur), field(&table[i], next), sz);
		memcpy(field(&table[i], next), tmp, sz);
	}
	return 0;
}

static void dump_escaped(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default: fputc(*s, out);
		}
	}
}

static void dump_string(FILE *out, const char *s)
{
	fputc('"', out);
	dump_escaped(out, s);
	fputc('"', out);
}

static void dump_scaled(FILE *out, uint64_t v, const struct suffix *suf, size_t nsuf)
{
	/* The largest unit that divides v exactly. */
	const struct suffix *best = NULL;
	for (size_t i = 0; i < nsuf; i++)
		if (suf[i].name[0] && suf[i].mult && v % suf[i].mult == 0 &&
		    (!best || suf[i].mult > best->mult))
			best = &suf[i];
	if (v == 0 || !best)
		fprintf(out, "%" PRIu64, v);
	else
		fprintf(out, "%" PRIu64 "%s", v / best->mult, best->name);
}

static void dump_value(FILE *out, const struct gv_config_option *opt, const void *target)
{
	const void *f = cfield(opt, target);
	if (opt->flags & GV_CONFIG_SECRET) {
		fputs("\"***\"", out);
		return;
	}
	switch (opt->type) {
	case GV_CONFIG_STRING:
		dump_string(out, *(char *const *)f);
		break;
	case GV_CONFIG_INT:
		fprintf(out, "%d", *(const int *)f);
		break;
	case GV_CONFIG_BOOL:
		fputs(*(const bool *)f ? "true" : "false", out);
		break;
	case GV_CONFIG_SIZE: {
		/* Only the single-letter units, so the dump stays short. */
		static const struct suffix units[] = {
			{ "k", 1ull << 10 }, { "m", 1ull << 20 }, { "g", 1ull << 30 }, { "t", 1ull << 40 },
		};
		dump_scaled(out, *(const uint64_t *)f, units, sizeof(units) / sizeof(units[0]));
		break;
	}
	case GV_CONFIG_DURATION: {
		uint64_t ms = *(const uint64_t *)f;
		if (ms == 0)
			fputs("0", out);
		else
			dump_scaled(out, ms, duration_suffixes,
				    sizeof(duration_suffixes) / sizeof(duration_suffixes[0]));
		break;
	}
	case GV_CONFIG_ENUM: {
		int i = *(const int *)f;
		int count = 0;
		while (opt->choices[count])
			count++;
		dump_string(out, i >= 0 && i < count ? opt->choices[i] : "?");
		break;
	}
	case GV_CONFIG_LIST: {
		const struct gv_config_list *l = f;
		fputc('"', out);
		for (size_t i = 0; i < l->count; i++) {
			if (i)
				fputs(", ", out);
			dump_escaped(out, l->items[i]); /* items never hold a comma */
		}
		fputc('"', out);
		break;
	}
	}
}

int gv_config_dump(const struct gv_config_option *table, size_t n, const void *target,
		   FILE *out, struct gv_err *err)
{
	for (size_t i = 0; i < n; i++) {
		if (strrchr(table[i].name, '.'))
			continue;
		fprintf(out, "%s = ", table[i].name);
		dump_value(out, &table[i], target);
		fputc('\n', out);
	}
	const char *sec = NULL;
	size_t seclen = 0;
	for (size_t i = 0; i < n; i++) {
		const char *dot = strrchr(table[i].name, '.');
		if (!dot)
			continue;
		size_t len = (size_t)(dot - table[i].name);
		if (!sec || len != seclen || strncmp(sec, table[i].name, len) != 0) {
			fprintf(out, "%s[%.*s]\n", sec ? "\n" : "", (int)len, table[i].name);
			sec = table[i].name;
			seclen = len;
		}
		fprintf(out, "%s = ", dot + 1);
		dump_value(out, &table[i], target);
		fputc('\n', out);
	}
	if (fflush(out) != 0 || ferror(out))
		return gv_err_errno(err, "config dump: write");
	return 0;
}
