/* The logger: one line per event on stderr, written with a single write(2)
 * so lines from threads never interleave. */
#include "common/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_component = "gavel";
/* Atomic: a reload (SIGHUP) changes it while other threads log. */
static _Atomic int log_min_level = GV_LOG_INFO;

void gv_log_init(const char *component, enum gv_log_level min_level)
{
	log_component = component ? component : "gavel";
	gv_log_set_level(min_level);
}

void gv_log_set_level(enum gv_log_level min_level)
{
	atomic_store_explicit(&log_min_level, (int)min_level, memory_order_relaxed);
}

const char *const gv_log_level_names[] = { "debug", "info", "warn", "error", NULL };

int gv_log_level_parse(const char *name)
{
	for (size_t i = 0; gv_log_level_names[i]; i++)
		if (name && strcmp(name, gv_log_level_names[i]) == 0)
			return (int)i;
	return -1;
}

static size_t append(char *buf, size_t size, size_t used, const char *fmt, ...) GV_PRINTF(4, 5);
static size_t append(char *buf, size_t size, size_t used, const char *fmt, ...)
{
	if (used >= size)
		return used;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
	if (n < 0)
		return used;
	return used + (size_t)n >= size ? size - 1 : used + (size_t)n;
}

void gv_log(enum gv_log_level level, const struct gv_log_ctx *ctx, const char *fmt, ...)
{
	static const char *const level_names[] = { "debug", "info", "warn", "error" };
	if ((int)level < atomic_load_explicit(&log_min_level, memory_order_relaxed))
		return;
	if ((unsigned)level > GV_LOG_ERROR) /* a bad value must not index past level_names */
		level = GV_LOG_ERROR;
	char line[2048];
	size_t used = 0;
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	used = append(line, sizeof(line), used, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s:",
		      tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		      ts.tv_nsec / 1000000, level_names[level], log_component);
	if (ctx) {
		if (ctx->tenant)
			used = append(line, sizeof(line), used, " tenant=%s", ctx->tenant);
		if (ctx->job)
			used = append(line, sizeof(line), used, " job=%s", ctx->job);
		if (ctx->node)
			used = append(line, sizeof(line), used, " node=%s", ctx->node);
		if (ctx->sandbox)
			used = append(line, sizeof(line), used, " sandbox=%s", ctx->sandbox);
	}
	used = append(line, sizeof(line), used, " ");
	if (used < sizeof(line)) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(line + used, sizeof(line) - used, fmt, ap);
		va_end(ap);
		if (n > 0)
			used = used + (size_t)n >= sizeof(line) ? sizeof(line) - 1 : used + (size_t)n;
	}
	if (used >= sizeof(line) - 1)
		used = sizeof(line) - 2;
	line[used++] = '\n';
	ssize_t ignored = write(STDERR_FILENO, line, used);
	(void)ignored;
}

char *gv_log_escape(char *out, size_t outsz, const char *in, size_t inlen)
{
	static const char hex[] = "0123456789abcdef";
	if (!out || outsz == 0)
		return out;
	if (!in)
		inlen = 0;
	/* "..." only when the escaped text does not fit whole; then it takes
	 * the last three bytes before the NUL, and no escape is split. */
	size_t total = 0;
	for (size_t i = 0; i < inlen && total < outsz; i++) {
		unsigned char c = (unsigned char)in[i];
		total += c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? 1 : 4;
	}
	int cut = total >= outsz;
	size_t room = cut ? (outsz >= 4 ? outsz - 4 : 0) : outsz - 1;
	size_t o = 0;
	for (size_t i = 0; i < inlen; i++) {
		unsigned char c = (unsigned char)in[i];
		int plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
		size_t need = plain ? 1 : 4;
		if (o + need > room)
			break;
		if (plain) {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (cut && outsz >= 4) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}
