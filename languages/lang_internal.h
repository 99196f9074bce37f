/* Private to languages/: what the YAML reader (lang_parse.c) and the schema
 * checks it runs on each definition (lang_validate.c) share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "common/err.h"
#include "languages/lang.h"

/* One definition being parsed: file name for messages, the document, err. */
struct lang_pctx {
	const char *file;
	yaml_document_t *doc;
	struct gv_err *err;
};

/* Fills c->err with "file:line: msg" (the line of n, 1 when n is NULL);
 * returns -1 (GV_MINUS_ONE says so to the analyzer). */
GV_PRINTF(3, 4)
int lang_perr(struct lang_pctx *c, const yaml_node_t *n, const char *fmt, ...);
#define lang_perr(...) GV_MINUS_ONE((lang_perr)(__VA_ARGS__))

enum lang_ktype { K_STR, K_ARGV, K_LIST, K_U32, K_INT, K_BOOL, K_DOUBLE, K_LIMITS, K_ENTRY };

/* One key of the declarative schema: its type and where it is stored. */
struct lang_key {
	const char *name;
	enum lang_ktype type;
	size_t off;
	bool required;
};

/* The keys of a limits section, in the order of struct lang_limits' fields
 * (all uint32_t), so that a limits struct can be walked as an array. */
extern const struct lang_key lang_limit_keys[];
#define LANG_NLIMIT_KEYS (sizeof(struct lang_limits) / sizeof(uint32_t))

/* The checks a parsed definition must pass beyond its YAML types: names,
 * paths, templates and limits. root gives the line of messages. */
int lang_validate(struct lang_pctx *c, struct lang_def *def, yaml_node_t *root) GV_MUST_CHECK;
