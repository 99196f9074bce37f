/* The error convention: fixed-buffer messages, context prepended on the way
 * up, no allocation on any path. */
#include "common/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gv_err_clear(struct gv_err *err)
{
	if (!err)
		return;
	err->code = GV_EOK;
	err->msg[0] = '\0';
}

int (gv_err_set)(struct gv_err *err, int code, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = code;
	return -1;
}

int (gv_err_errno)(struct gv_err *err, const char *fmt, ...)
{
	int saved = errno;
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s", strerror(saved));
	err->code = saved;
	return -1;
}

void gv_err_prefix(struct gv_err *err, const char *fmt, ...)
{
	if (!err)
		return;
	char prefix[GV_ERR_MSG_MAX];
	char old[GV_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	size_t plen = strnlen(prefix, sizeof(prefix) - 1);
	size_t olen = strnlen(old, sizeof(old) - 1);
	size_t cap = sizeof(err->msg) - 1;
	size_t used = plen < cap ? plen : cap;
	memcpy(err->msg, prefix, used);
	if (used + 2 <= cap) {
		memcpy(err->msg + used, ": ", 2);
		used += 2;
	}
	size_t rest = olen < cap - used ? olen : cap - used;
	memcpy(err->msg + used, old, rest);
	err->msg[used + rest] = '\0';
}

const char *gv_err_code_name(int code)
{
	switch (code) {
	case GV_EOK: return "ok";
	case GV_EINVAL: return "invalid";
	case GV_ECONFIG: return "config";
	case GV_ELIMIT: return "limit";
	case GV_ENOTFOUND: return "not_found";
	case GV_EDB: return "database";
	case GV_EREDIS: return "redis";
	case GV_ESANDBOX: return "sandbox";
	case GV_EPROTO: return "protocol";
	case GV_EINTERNAL: return "internal";
	default: return code > 0 && code < GV_EBASE ? "system" : "unknown";
	}
}
