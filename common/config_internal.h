/* Private to the config loader (common/config*.c): the value type every
 * option parses into, the value parsers and field access (config_value.c),
 * the table checks (config.c) and the file syntax parser (config_parse.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"

#define GV_CONFIG_WHY_MAX 256 /* bytes of a parse failure's reason */

/* One parsed value of any option type; the string and list are owned. */
union gv_config_value {
	char *s;
	int i;
	bool b;
	uint64_t u;
	struct gv_config_list l;
};

/* A unit suffix of a size or duration and what it multiplies by. */
struct gv_config_suffix {
	const char *name;
	uint64_t mult;
};

#define GV_CONFIG_NDURATION_SUFFIXES 4
/* ms, s, m, h: parsing and dumping use the same units. */
extern const struct gv_config_suffix gv_config_duration_suffixes[GV_CONFIG_NDURATION_SUFFIXES];

static inline void *gv_config_field(const struct gv_config_option *opt, void *target)
{
	return (char *)target + opt->offset;
}

static inline const void *gv_config_cfield(const struct gv_config_option *opt, const void *target)
{
	return (const char *)target + opt->offset;
}

static inline bool gv_config_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline bool gv_config_is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* Bytes of a field of the type; 0 for an unknown type. */
size_t gv_config_type_size(enum gv_config_type type);

/* Frees a list's items and leaves it empty. */
void gv_config_list_clear(struct gv_config_list *l);

/* Moves v into the target field, freeing what the field owned; v is left
 * zeroed. */
void gv_config_value_store(const struct gv_config_option *opt, void *target, union gv_config_value *v);

/* Parses text for opt into v (zeroed first; owns what it allocates). On
 * failure writes a reason (naming the option, quoting the value unless it
 * is secret) into why. */
int gv_config_parse_value(const struct gv_config_option *opt, const char *text, union gv_config_value *v,
			  char *why, size_t whysz) GV_MUST_CHECK;

/* "GAVEL_" + upper-cased name with dots as underscores, truncated to outsz. */
void gv_config_env_name(const char *name, char *out, size_t outsz);

/* Checks a binary's option table (names, types, sizes, ranges, choices,
 * environment names that collide); GV_EINTERNAL on a bad table. err may be
 * NULL. */
int gv_config_check_table(const struct gv_config_option *table, size_t n, struct gv_err *err) GV_MUST_CHECK;

/* One load in progress: the table, the target, the file name for messages,
 * and where each option was set. */
struct gv_config_parse_state {
	const struct gv_config_option *table;
	size_t n;
	void *target;
	const char *name;
	unsigned *line_of; /* per option: line that set it, 0 = not in file */
	bool *from_env;
};

/* Parses the file text (at most GV_CONFIG_FILE_MAX bytes) into st->target,
 * recording st->line_of; errors read "FILE:LINE: reason". */
int gv_config_parse_text(struct gv_config_parse_state *st, const char *text, size_t len,
			 struct gv_err *err) GV_MUST_CHECK;
