/* Built-in output checkers: exact bytes and the Kattis default validator's
 * token comparison (see checker.h for the semantics). Every message quotes
 * tenant bytes only through gv_log_escape, truncated. */
#include "executor/judge/checker.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

#define SHOW_MAX 48 /* bytes of an escaped token in a message, with the NUL */

const char *exec_checker_verdict_name(enum exec_checker_verdict v)
{
	return v == EXEC_CHECKER_AC ? "AC" : "WA";
}

/* ---- helpers ----------------------------------------------------------- */

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

GV_PRINTF(3, 4)
static void say(char *msg, size_t msgsz, const char *fmt, ...)
{
	if (!msg || msgsz == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, msgsz, fmt, ap);
	va_end(ap);
}

static char *show(char *buf, const char *p, size_t len)
{
	return gv_log_escape(buf, SHOW_MAX, p, len);
}

static unsigned char lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* Is [p, p+len) a decimal number: [+-]? (d+ (. d*)? | . d+) ([eE][+-]?d+)?
 * On success *v is its value (possibly ±inf after overflow). Significant
 * digits past the 40th are dropped and the rest is rewritten into a short
 * buffer, so arbitrarily long tokens are parsed without allocating. */
static bool parse_number(const char *p, size_t len, double *v)
{
	size_t i = 0;
	bool neg = false;
	if (i < len && (p[i] == '+' || p[i] == '-'))
		neg = p[i++] == '-';
	char dig[41];
	size_t nd = 0;
	long point = 0;  /* digits before the decimal point, leading zeros dropped */
	bool any = false, started = false;
	for (; i < len && p[i] >= '0' && p[i] <= '9'; i++) {
		any = true;
		if (p[i] != '0' || started) {
			started = true;
			if (nd < 40)
				dig[nd++] = p[i];
			if (point < 100000000)
				point++;
		}
	}
	if (i < len && p[i] == '.') {
		i++;
		for (; i < len && p[i] >= '0' && p[i] <= '9'; i++) {
			any = true;
			if (p[i] != '0' || started) {
				started = true;
				if (nd < 40)
					dig[nd++] = p[i];
			} else if (point > -100000000) {
				point--;
			}
		}
	}
	if (!any)
		return false;
	long ex = 0;
	if (i < len && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		bool eneg = false;
		if (i < len && (p[i] == '+' || p[i] == '-'))
			eneg = p[i++] == '-';
		if (i == len || p[i] < '0' || p[i] > '9')
			return false;
		for (; i < len && p[i] >= '0' && p[i] <= '9'; i++)
			if (ex < 100000000)
				ex = ex * 10 + (p[i] - '0');
		if (eneg)
			ex = -ex;
	}
	if (i != len)
		return false;
	if (nd == 0) {
		*v = neg ? -0.0 : 0.0;
		return true;
	}
	dig[nd] = '\0';
	char buf[96];
	snprintf(buf, sizeof(buf), "%s0.%se%ld", neg ? "-" : "", dig, point + ex);
	*v = strtod(buf, NULL); /* ERANGE gives ±inf or 0, both meaningful here */
	return true;
}

/* ---- token mode -------------------------------------------------------- */

struct cursor {
	const char *p;
	size_t len, pos;
	size_t line; /* 1-based line of pos */
	size_t tokens; /* tokens read so far */
};

/* Skips whitespace, counting lines; returns the run [start, pos). */
static size_t skip_ws(struct cursor *c)
{
	size_t start = c->pos;
	while (c->pos < c->len && is_ws((unsigned char)c->p[c->pos])) {
		if (c->p[c->pos] == '\n')
			c->line++;
		c->pos++;
	}
	return start;
}

static size_t read_token(struct cursor *c)
{
	size_t start = c->pos;
	while (c->pos < c->len && !is_ws((unsigned char)c->p[c->pos]))
		c->pos++;
	c->tokens++;
	return start;
}

/* The byte at i of the whole text, escaped, or "end of output". */
static const char *byte_name(char *buf, size_t bufsz, const char *p, size_t len, size_t i)
{
	if (i >= len)
		return "end of output";
	return gv_log_escape(buf, bufsz, p + i, 1);
}

/* Describes a tolerance for a message: "unset" or the value. */
static const char *tol_name(char *buf, size_t bufsz, double tol)
{
	if (tol < 0)
		return "unset";
	snprintf(buf, bufsz, "%.6g", tol);
	return buf;
}

static enum exec_checker_verdict compare_tokens(const struct gv_checker_opts *o, const char *ans, size_t anslen,
						const char *out, size_t outlen, char *msg, size_t msgsz)
{
	struct cursor j = {ans, anslen, 0, 1, 0}, u = {out, outlen, 0, 1, 0};
	bool floats = o->float_abs_tol >= 0 || o->float_rel_tol >= 0;
	char a[SHOW_MAX], b[SHOW_MAX];
	for (;;) {
		size_t uu = u.line; /* the user's line before the whitespace run */
		size_t js = skip_ws(&j), us = skip_ws(&u);
		if (o->space_change_sensitive) {
			size_t jl = j.pos - js, ul = u.pos - us, k = 0;
			while (k < jl && k < ul && ans[js + k] == out[us + k])
				k++;
			if (k < jl || k < ul) {
				size_t line = uu;
				for (size_t x = 0; x < k; x++)
					line += out[us + x] == '\n';
				say(msg, msgsz, "line %zu: whitespace differs: expected '%s', got '%s'", line,
				    byte_name(a, sizeof(a), ans, anslen, js + k), byte_name(b, sizeof(b), out, outlen, us + k));
				return EXEC_CHECKER_WA;
			}
		}
		bool jend = j.pos == j.len, uend = u.pos == u.len;
		if (jend && uend)
			return EXEC_CHECKER_AC;
		if (jend) {
			size_t ts = read_token(&u);
			say(msg, msgsz, "line %zu, token %zu: extra output '%s' after the expected end", u.line, u.tokens,
			    show(a, out + ts, u.pos - ts));
			return EXEC_CHECKER_WA;
		}
		if (uend) {
			size_t ts = read_token(&j);
			const char *why = u.tokens ? "output ended early" :
					  outlen ? "output has only whitespace" : "output is empty";
			say(msg, msgsz, "line %zu, token %zu: %s, expected '%s' (answer line %zu)", u.line, j.tokens, why,
			    show(a, ans + ts, j.pos - ts), j.line);
			return EXEC_CHECKER_WA;
		}
		size_t jt = read_token(&j), ut = read_token(&u);
		const char *jp = ans + jt, *up = out + ut;
		size_t jl = j.pos - jt, ul = u.pos - ut;
		double jv, uv;
		if (floats && parse_number(jp, jl, &jv) && isfinite(jv)) {
			if (!parse_number(up, ul, &uv)) {
				say(msg, msgsz, "line %zu, token %zu: expected a number like '%s', got '%s'", u.line,
				    u.tokens, show(a, jp, jl), show(b, up, ul));
				return EXEC_CHECKER_WA;
			}
			double diff = fabs(jv - uv);
			/* Written so that a NaN difference (user inf) accepts nothing. */
			bool ok = (o->float_abs_tol >= 0 && diff <= o->float_abs_tol) ||
				  (o->float_rel_tol >= 0 && diff <= o->float_rel_tol * fabs(jv));
			if (!ok) {
				char rel[32], ta[32], tr[32];
				if (jv != 0)
					snprintf(rel, sizeof(rel), "%.6g", diff / fabs(jv));
				else
					snprintf(rel, sizeof(rel), "undefined");
				say(msg, msgsz,
				    "line %zu, token %zu: expected '%s', got '%s': absolute error %.6g, relative error %s "
				    "(tolerance: absolute %s, relative %s)",
				    u.line, u.tokens, show(a, jp, jl), show(b, up, ul), diff, rel,
				    tol_name(ta, sizeof(ta), o->float_abs_tol), tol_name(tr, sizeof(tr), o->float_rel_tol));
				return EXEC_CHECKER_WA;
			}
			continue;
		}
		size_t k = 0;
		if (o->case_sensitive) {
			while (k < jl && k < ul && jp[k] == up[k])
				k++;
		} else {
			while (k < jl && k < ul && lower((unsigned char)jp[k]) == lower((unsigned char)up[k]))
				k++;
		}
		if (k < jl || k < ul) {
			if (k >= 16) {
				/* A long common prefix: show the bytes around the difference. */
				size_t from = k - 8;
				say(msg, msgsz, "line %zu, token %zu: expected '...%s', got '...%s' (first difference at byte %zu)",
				    u.line, u.tokens, show(a, jp + from, jl - from), show(b, up + from, ul - from), k + 1);
			} else {
				say(msg, msgsz, "line %zu, token %zu: expected '%s', got '%s'", u.line, u.tokens,
				    show(a, jp, jl), show(b, up, ul));
			}
			return EXEC_CHECKER_WA;
		}
	}
}

/* ---- exact mode -------------------------------------------------------- */

static size_t trim_end(const char *p, size_t len)
{
	while (len > 0 && is_ws((unsigned char)p[len - 1]))
		len--;
	return len;
}

static enum exec_checker_verdict compare_exact(const struct gv_checker_opts *o, const char *ans, size_t anslen,
					       const char *out, size_t outlen, char *msg, size_t msgsz)
{
	if (o->ignore_trailing_ws) {
		anslen = trim_end(ans, anslen);
		outlen = trim_end(out, outlen);
	}
	size_t i = 0, line = 1, col = 1;
	while (i < anslen && i < outlen && ans[i] == out[i]) {
		if (ans[i] == '\n')
			line++, col = 1;
		else
			col++;
		i++;
	}
	if (i == anslen && i == outlen)
		return EXEC_CHECKER_AC;
	char a[SHOW_MAX], b[SHOW_MAX];
	/* Show from the differing byte to the end of its line, bounded. */
	size_t ae = i, be = i;
	while (ae < anslen && ans[ae] != '\n' && ae - i < SHOW_MAX)
		ae++;
	while (be < outlen && out[be] != '\n' && be - i < SHOW_MAX)
		be++;
	if (i == outlen)
		say(msg, msgsz, "line %zu, column %zu: output ended early, expected '%s'", line, col,
		    ae > i ? show(a, ans + i, ae - i) : "\\n");
	else if (i == anslen)
		say(msg, msgsz, "line %zu, column %zu: extra output '%s'", line, col,
		    be > i ? show(b, out + i, be - i) : "\\n");
	else
		say(msg, msgsz, "line %zu, column %zu: expected '%s', got '%s'", line, col,
		    ae > i ? show(a, ans + i, ae - i) : "\\n", be > i ? show(b, out + i, be - i) : "\\n");
	return EXEC_CHECKER_WA;
}

enum exec_checker_verdict exec_checker_compare(const struct gv_checker_opts *o, const char *ans, size_t anslen,
					       const char *out, size_t outlen, char *msg, size_t msgsz)
{
	if (msg && msgsz)
		msg[0] = '\0';
	if (!ans)
		anslen = 0, ans = "";
	if (!out)
		outlen = 0, out = "";
	if (o->mode == GV_CHECKER_EXACT)
		return compare_exact(o, ans, anslen, out, outlen, msg, msgsz);
	return compare_tokens(o, ans, anslen, out, outlen, msg, msgsz);
}
