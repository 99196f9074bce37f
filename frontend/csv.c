/* A CSV cell safe to open in a spreadsheet (frontend/csv.h). */
#include "frontend/csv.h"

#include <stdbool.h>
#include <string.h>

size_t fe_csv_cell(const char *s, char *out, size_t cap)
{
	/* A spreadsheet evaluates a cell that starts with one of these, even
	 * one of several cells split at a semicolon: both are quoted, and a
	 * formula start is made text. */
	bool formula = s[0] && strchr("=+-@\t\r", s[0]);
	bool quote = formula || strpbrk(s, ",;\"\r\n");
	size_t o = 0;
#define PUT(ch)                          \
	do {                             \
		if (o + 1 >= cap)        \
			return (size_t)-1; \
		out[o++] = (ch);         \
	} while (0)
	if (quote)
		PUT('"');
	if (formula)
		PUT('\'');
	for (const char *p = s; *p; p++) {
		if (*p == '"' && quote)
			PUT('"');
		PUT(*p);
	}
	if (quote)
		PUT('"');
#undef PUT
	if (cap == 0)
		return (size_t)-1;
	out[o] = '\0';
	return o;
}
