/* Config reload: a freshly loaded config compared with the running one,
 * refused when an option that needs a restart differs, else its reloadable
 * fields swapped in. */
#include "common/config.h"

#include <string.h>

#include "common/config_internal.h"

static bool values_equal(const struct gv_config_option *opt, const void *a, const void *b)
{
	const void *fa = gv_config_cfield(opt, a), *fb = gv_config_cfield(opt, b);
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
		return memcmp(fa, fb, gv_config_type_size(opt->type)) == 0;
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
		unsigned char tmp[sizeof(union gv_config_value)]; /* the union holds every type */
		size_t sz = gv_config_type_size(table[i].type);
		memcpy(tmp, gv_config_field(&table[i], cur), sz);
		memcpy(gv_config_field(&table[i], cur), gv_config_field(&table[i], next), sz);
		memcpy(gv_config_field(&table[i], next), tmp, sz);
	}
	return 0;
}
