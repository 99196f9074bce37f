/* The checkers' flags: defaults and the validator_flags grammar (see
 * checker_flags.h). Every message quotes tenant bytes only through
 * gv_log_escape, truncated. */
#include "common/checker_flags.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

void gv_checker_opts_default(struct gv_checker_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = GV_CHECKER_TOKENS;
	o->float_abs_tol = -1;
	o->float_rel_tol = -1;
}

static int parse_tol(const char *name, const char *word, size_t len, double *out, struct gv_err *err)
{
	char buf[64];
	if (len == 0)
		return gv_err_set(err, GV_EINVAL, "validator flag %s needs a value", name);
	if (len >= sizeof(buf))
		return gv_err_set(err, GV_EINVAL, "validator flag %s: value too long", name);
	memcpy(buf, word, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (errno || *end || !isfinite(v) || v < 0) {
		char esc[80];
		return gv_err_set(err, GV_EINVAL, "validator flag %s: bad value \"%s\"", name,
				  gv_log_escape(esc, sizeof(esc), buf, len));
	}
	*out = v;
	return 0;
}

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

int gv_checker_parse_flags(const char *flags, struct gv_checker_opts *o, struct gv_err *err)
{
	if (!flags)
		return 0;
	size_t n = strlen(flags);
	if (n > GV_CHECKER_FLAGS_MAX)
		return gv_err_set(err, GV_ELIMIT, "validator flags longer than %d bytes", GV_CHECKER_FLAGS_MAX);
	const char *s = flags, *end = flags + n;
	for (;;) {
		while (s < end && is_ws((unsigned char)*s))
			s++;
		if (s == end)
			return 0;
		const char *w = s;
		while (s < end && !is_ws((unsigned char)*s))
			s++;
		size_t wl = (size_t)(s - w);
#define IS(lit) (wl == sizeof(lit) - 1 && !memcmp(w, lit, wl))
		if (IS("case_sensitive")) {
			o->case_sensitive = true;
		} else if (IS("space_change_sensitive")) {
			o->space_change_sensitive = true;
		} else if (IS("exact")) {
			o->mode = GV_CHECKER_EXACT;
		} else if (IS("ignore_trailing_whitespace")) {
			o->ignore_trailing_ws = true;
		} else if (IS("float_tolerance") || IS("float_absolute_tolerance") || IS("float_relative_tolerance")) {
			char name[32];
			snprintf(name, sizeof(name), "%.*s", (int)wl, w);
			while (s < end && is_ws((unsigned char)*s))
				s++;
			const char *v = s;
			while (s < end && !is_ws((unsigned char)*s))
				s++;
			double tol = 0;
			if (parse_tol(name, v, (size_t)(s - v), &tol, err) < 0)
				return -1;
			if (IS("float_tolerance") || IS("float_absolute_tolerance"))
				o->float_abs_tol = tol;
			if (IS("float_tolerance") || IS("float_relative_tolerance"))
				o->float_rel_tol = tol;
		} else {
			char esc[80];
			return gv_err_set(err, GV_EINVAL, "unknown validator flag \"%s\"",
					  gv_log_escape(esc, sizeof(esc), w, wl));
		}
#undef IS
	}
}
