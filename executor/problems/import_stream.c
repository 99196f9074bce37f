/* The package stream and the entry path rule shared by gavel-unpack and the
 * host. See import_stream.h. */
#include "executor/problems/import_stream.h"

#include <stdio.h>
#include <string.h>

static bool name_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr(EXEC_IMPORT_NAME_PUNCT, c) != NULL);
}

static int why_set(char *why, size_t whysz, const char *msg)
{
	if (whysz)
		snprintf(why, whysz, "%s", msg);
	return -1;
}

int exec_import_path_check(const char *path, size_t len, uint32_t max_path, uint32_t max_depth, char *why,
			   size_t whysz)
{
	if (max_path > EXEC_IMPORT_PATH_MAX)
		max_path = EXEC_IMPORT_PATH_MAX;
	if (max_depth > EXEC_IMPORT_DEPTH_MAX)
		max_depth = EXEC_IMPORT_DEPTH_MAX;
	if (len == 0)
		return why_set(why, whysz, "empty path");
	if (path[0] == '/')
		return why_set(why, whysz, "absolute path");
	/* ".." anywhere is reported as what it is before any other rule. */
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && path[j] != '/')
			j++;
		if (j - i == 2 && path[i] == '.' && path[i + 1] == '.')
			return why_set(why, whysz, "path leaves the package ('..')");
		i = j + 1;
	}
	if (len > max_path) {
		if (whysz)
			snprintf(why, whysz, "path longer than %u bytes", max_path);
		return -1;
	}
	uint32_t depth = 0;
	for (size_t i = 0; i <= len;) {
		size_t j = i;
		while (j < len && path[j] != '/') {
			if (!name_char_ok((unsigned char)path[j]))
				return why_set(why, whysz,
					       "character not allowed in a name (letters, digits and " EXEC_IMPORT_NAME_PUNCT
					       " only)");
			j++;
		}
		if (j == i)
			return why_set(why, whysz, "empty path component ('//' or a trailing '/')");
		if (j - i == 1 && path[i] == '.')
			return why_set(why, whysz, "'.' path component");
		if (path[i] == ' ' || path[j - 1] == ' ')
			return why_set(why, whysz, "a name starts or ends with a space");
		if (++depth > max_depth) {
			if (whysz)
				snprintf(why, whysz, "nested deeper than %u levels", max_depth);
			return -1;
		}
		if (j == len)
			break;
		i = j + 1;
	}
	return 0;
}

void exec_import_shown(char *out, size_t outsz, const char *s, size_t len)
{
	if (!outsz)
		return;
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];
		out[n++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	out[n] = '\0';
	if (n < len && outsz >= 4)
		memcpy(out + outsz - 4, "...", 4);
}

void exec_import_stream_init(struct exec_import_stream *s, const struct exec_import_stream_limits *lim)
{
	memset(s, 0, sizeof(*s));
	s->lim = *lim;
	if (s->lim.max_path > EXEC_IMPORT_PATH_MAX)
		s->lim.max_path = EXEC_IMPORT_PATH_MAX;
	if (s->lim.max_depth > EXEC_IMPORT_DEPTH_MAX)
		s->lim.max_depth = EXEC_IMPORT_DEPTH_MAX;
}

bool exec_import_stream_done(const struct exec_import_stream *s)
{
	return s->ended;
}

/* A decimal number without sign or leading zeros, ended by sep (or the end
 * of the line when sep is '\0'). Advances *p past the separator. */
static int take_u64(const char **p, const char *end, char sep, uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;
	size_t digits = 0;
	while (q < end && *q >= '0' && *q <= '9') {
		unsigned d = (unsigned)(*q - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		q++;
		digits++;
	}
	if (digits == 0 || (digits > 1 && **p == '0'))
		return -1;
	if (sep) {
		if (q == end || *q != sep)
			return -1;
		q++;
	} else if (q != end) {
		return -1;
	}
	*p = q;
	*out = v;
	return 0;
}

static int take_path(struct exec_import_stream *s, const char *p, const char *end, struct gv_err *err)
{
	size_t len = (size_t)(end - p);
	char why[128], shown[96];
	if (exec_import_path_check(p, len, s->lim.max_path, s->lim.max_depth, why, sizeof(why)) != 0) {
		exec_import_shown(shown, sizeof(shown), p, len);
		return gv_err_set(err, GV_EPROTO, "package stream: entry '%s': %s", shown, why);
	}
	memcpy(s->path, p, len);
	s->path[len] = '\0';
	return 0;
}

static int parse_header(struct exec_import_stream *s, struct exec_import_event *ev, struct gv_err *err)
{
	const char *p = s->line, *end = s->line + s->line_len;
	if (s->line_len < 2 || s->line[1] != ' ')
		return gv_err_set(err, GV_EPROTO, "package stream: bad record header");
	char kind = s->line[0];
	p += 2;
	memset(ev, 0, sizeof(*ev));
	if (kind == 'd') {
		if (s->dirs >= s->lim.max_dirs)
			return gv_err_set(err, GV_ELIMIT, "package stream: more than %u folders", s->lim.max_dirs);
		if (take_path(s, p, end, err) != 0)
			return -1;
		s->dirs++;
		ev->kind = EXEC_IMPORT_EV_DIR;
		ev->path = s->path;
		return 1;
	}
	if (kind == 'f') {
		uint64_t size;
		if (take_u64(&p, end, ' ', &size) != 0)
			return gv_err_set(err, GV_EPROTO, "package stream: bad file size");
		if (s->files >= s->lim.max_files)
			return gv_err_set(err, GV_ELIMIT, "package stream: more than %u files", s->lim.max_files);
		if (size > s->lim.max_bytes - s->bytes)
			return gv_err_set(err, GV_ELIMIT, "package stream: more than %llu bytes",
					  (unsigned long long)s->lim.max_bytes);
		if (take_path(s, p, end, err) != 0)
			return -1;
		s->files++;
		s->bytes += size;
		s->in_file = true;
		s->remaining = size;
		s->file_end_due = size == 0;
		ev->kind = EXEC_IMPORT_EV_FILE;
		ev->path = s->path;
		ev->size = size;
		return 1;
	}
	if (kind == 'e') {
		uint64_t files, bytes;
		if (take_u64(&p, end, ' ', &files) != 0 || take_u64(&p, end, '\0', &bytes) != 0)
			return gv_err_set(err, GV_EPROTO, "package stream: bad end record");
		if (files != s->files || bytes != s->bytes)
			return gv_err_set(err, GV_EPROTO, "package stream: end record counts do not match");
		s->ended = true;
		ev->kind = EXEC_IMPORT_EV_END;
		return 1;
	}
	return gv_err_set(err, GV_EPROTO, "package stream: unknown record kind");
}

int exec_import_stream_next(struct exec_import_stream *s, const char *buf, size_t len, size_t *used,
			    struct exec_import_event *ev, struct gv_err *err)
{
	*used = 0;
	if (s->file_end_due) {
		s->file_end_due = false;
		s->in_file = false;
		memset(ev, 0, sizeof(*ev));
		ev->kind = EXEC_IMPORT_EV_FILE_END;
		return 1;
	}
	if (s->in_file) {
		if (len == 0)
			return 0;
		size_t n = s->remaining < len ? (size_t)s->remaining : len;
		s->remaining -= n;
		*used = n;
		memset(ev, 0, sizeof(*ev));
		ev->kind = EXEC_IMPORT_EV_DATA;
		ev->data = buf;
		ev->len = n;
		s->file_end_due = s->remaining == 0;
		return 1;
	}
	if (s->ended)
		return len ? gv_err_set(err, GV_EPROTO, "package stream: bytes after the end record") : 0;
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			*used = i + 1;
			int rc = parse_header(s, ev, err);
			s->line_len = 0;
			return rc;
		}
		if (buf[i] == '\0' || s->line_len == EXEC_IMPORT_HEADER_MAX)
			return gv_err_set(err, GV_EPROTO, "package stream: bad or overlong record header");
		s->line[s->line_len++] = buf[i];
	}
	*used = len;
	return 0;
}
