/* The config value parsers: the text of one option (from the file, the
 * environment or the table's default) checked against the option's type and
 * bounds into a union gv_config_value, and stored into its field. Pure
 * functions over strings; a reason for every refusal. */
#include "common/config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/config_internal.h"
#include "common/log.h"

size_t gv_config_type_size(enum gv_config_type type)
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

void gv_config_list_clear(struct gv_config_list *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->count = 0;
}

void gv_config_value_store(const struct gv_config_option *opt, void *target, union gv_config_value *v)
{
	void *f = gv_config_field(opt, target);
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
		gv_config_list_clear((struct gv_config_list *)f);
		*(struct gv_config_list *)f = v->l;
		break;
	}
	memset(v, 0, sizeof(*v));
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

static const struct gv_config_suffix size_suffixes[] = {
	{ "", 1 }, { "b", 1 },
	{ "k", 1ull << 10 }, { "kb", 1ull << 10 }, { "kib", 1ull << 10 },
	{ "m", 1ull << 20 }, { "mb", 1ull << 20 }, { "mib", 1ull << 20 },
	{ "g", 1ull << 30 }, { "gb", 1ull << 30 }, { "gib", 1ull << 30 },
	{ "t", 1ull << 40 }, { "tb", 1ull << 40 }, { "tib", 1ull << 40 },
};

const struct gv_config_suffix gv_config_duration_suffixes[GV_CONFIG_NDURATION_SUFFIXES] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60 * 1000 }, { "h", 60 * 60 * 1000 },
};

static int parse_scaled(const char *s, const struct gv_config_suffix *suf, size_t nsuf, bool bare_zero_only,
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
	while (gv_config_is_space(*p))
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
		while (b < e && gv_config_is_space(*b))
			b++;
		while (e > b && gv_config_is_space(e[-1]))
			e--;
		if (b == e) {
			*problem = "empty item in list";
			gv_config_list_clear(l);
			return -1;
		}
		char *item = strndup(b, (size_t)(e - b));
		if (!item) {
			*problem = "out of memory";
			gv_config_list_clear(l);
			return -1;
		}
		l->items[l->count++] = item;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* Each parser below fills v from text or writes why; shown is ", got
 * '<text>'" (escaped), or "" for a secret option. */

static int parse_string(const struct gv_config_option *opt, const char *text, union gv_config_value *v,
			char *why, size_t whysz)
{
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

static int parse_int(const struct gv_config_option *opt, const char *text, const char *shown,
		     union gv_config_value *v, char *why, size_t whysz)
{
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

static int parse_bool(const struct gv_config_option *opt, const char *text, const char *shown,
		      union gv_config_value *v, char *why, size_t whysz)
{
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

/* SIZE and DURATION: a number with a unit, within the option's bounds. */
static int parse_amount(const struct gv_config_option *opt, const char *text, const char *shown,
			union gv_config_value *v, char *why, size_t whysz)
{
	bool size = opt->type == GV_CONFIG_SIZE;
	const char *problem = NULL;
	int rc = size ? parse_scaled(text, size_suffixes,
				     sizeof(size_suffixes) / sizeof(size_suffixes[0]), false,
				     &v->u, &problem)
		      : parse_scaled(text, gv_config_duration_suffixes,
				     GV_CONFIG_NDURATION_SUFFIXES, true,
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

static int parse_enum(const struct gv_config_option *opt, const char *text, const char *shown,
		      union gv_config_value *v, char *why, size_t whysz)
{
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

static int parse_list(const struct gv_config_option *opt, const char *text, const char *shown,
		      union gv_config_value *v, char *why, size_t whysz)
{
	const char *problem = NULL;
	if (split_list(text, &v->l, &problem) < 0) {
		snprintf(why, whysz, "option '%s': %s%s", opt->name, problem, shown);
		return -1;
	}
	return 0;
}

int gv_config_parse_value(const struct gv_config_option *opt, const char *text, union gv_config_value *v,
			  char *why, size_t whysz)
{
	char shown[80] = "";
	if (!(opt->flags & GV_CONFIG_SECRET)) {
		char esc[64];
		gv_log_escape(esc, sizeof(esc), text, strlen(text));
		snprintf(shown, sizeof(shown), ", got '%s'", esc);
	}
	memset(v, 0, sizeof(*v));
	switch (opt->type) {
	case GV_CONFIG_STRING:
		return parse_string(opt, text, v, why, whysz);
	case GV_CONFIG_INT:
		return parse_int(opt, text, shown, v, why, whysz);
	case GV_CONFIG_BOOL:
		return parse_bool(opt, text, shown, v, why, whysz);
	case GV_CONFIG_SIZE:
	case GV_CONFIG_DURATION:
		return parse_amount(opt, text, shown, v, why, whysz);
	case GV_CONFIG_ENUM:
		return parse_enum(opt, text, shown, v, why, whysz);
	case GV_CONFIG_LIST:
		return parse_list(opt, text, shown, v, why, whysz);
	}
	snprintf(why, whysz, "option '%s': unknown type", opt->name);
	return -1;
}
