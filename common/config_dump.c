/* The config writer behind --check-config: the effective config printed in
 * the file format, so that what it prints loads again to the same values;
 * secrets print as "***". */
#include "common/config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/config_internal.h"

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

static void dump_scaled(FILE *out, uint64_t v, const struct gv_config_suffix *suf, size_t nsuf)
{
	/* The largest unit that divides v exactly. */
	const struct gv_config_suffix *best = NULL;
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
	const void *f = gv_config_cfield(opt, target);
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
		static const struct gv_config_suffix units[] = {
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
			dump_scaled(out, ms, gv_config_duration_suffixes,
				    GV_CONFIG_NDURATION_SUFFIXES);
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
