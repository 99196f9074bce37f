/* Lines end at '\n' with an optional '\r' before it, as evhttp reads them
 * (EVBUFFER_EOL_CRLF); the first empty line ends the head. Header names
 * are matched case-insensitively; the first X-Auth-Token, else the first
 * "Authorization: Bearer", else the first X-API-KEY (Jobe's), is the key, as presented_key() in server.c
 * picks it from evhttp's headers. */
#include "frontend/reqscan.h"

#include <string.h>
#include <strings.h>

void fe_reqscan_reset(struct fe_reqscan *s)
{
	s->state = FE_REQSCAN_IN_LINE;
	s->in_reqline = true;
	s->reqline_len = 0;
	s->reqline_long = false;
	s->hdr_len = 0;
	s->hdr_long = false;
	s->key[0] = '\0';
	s->key_from_token = false;
	s->key_from_api_key = false;
	s->head_bytes = 0;
	s->bad_byte = false;
}

static void set_key(struct fe_reqscan *s, const char *v, size_t n)
{
	while (n > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n == 0 || n > TENANT_KEY_PRESENTED_MAX || memchr(v, '\0', n))
		return;
	memcpy(s->key, v, n);
	s->key[n] = '\0';
}

/* A complete header line (without its end) is in s->hdr. */
static void header_line(struct fe_reqscan *s)
{
	static const char tok[] = "x-auth-token:", auth[] = "authorization:", jobe[] = "x-api-key:";
	const char *h = s->hdr;
	size_t n = s->hdr_len;
	if (s->hdr_long)
		return;
	if (n >= sizeof(tok) - 1 && !strncasecmp(h, tok, sizeof(tok) - 1)) {
		if (!s->key_from_token) {
			s->key[0] = '\0';
			set_key(s, h + sizeof(tok) - 1, n - (sizeof(tok) - 1));
			s->key_from_token = s->key[0] != '\0';
			if (s->key_from_token)
				s->key_from_api_key = false;
		}
	} else if (n >= sizeof(jobe) - 1 && !strncasecmp(h, jobe, sizeof(jobe) - 1) && !s->key[0]) {
		set_key(s, h + sizeof(jobe) - 1, n - (sizeof(jobe) - 1));
		s->key_from_api_key = s->key[0] != '\0';
	} else if (n >= sizeof(auth) - 1 && !strncasecmp(h, auth, sizeof(auth) - 1) &&
		   (!s->key[0] || s->key_from_api_key)) {
		const char *v = h + sizeof(auth) - 1;
		size_t vn = n - (sizeof(auth) - 1);
		while (vn > 0 && (*v == ' ' || *v == '\t')) {
			v++;
			vn--;
		}
		if (vn > 7 && !strncasecmp(v, "Bearer ", 7)) {
			char was[sizeof(s->key)];
			memcpy(was, s->key, sizeof(was));
			s->key[0] = '\0';
			set_key(s, v + 7, vn - 7);
			if (s->key[0])
				s->key_from_api_key = false;
			else
				memcpy(s->key, was, sizeof(was));
		}
	}
}

static void end_of_line(struct fe_reqscan *s)
{
	if (s->in_reqline) {
		if (s->reqline_len > 0 && s->reqline[s->reqline_len - 1] == '\r')
			s->reqline_len--;
		s->in_reqline = false;
	} else {
		if (s->hdr_len > 0 && s->hdr[s->hdr_len - 1] == '\r')
			s->hdr_len--;
		header_line(s);
	}
	s->hdr_len = 0;
	s->hdr_long = false;
}

static void keep(struct fe_reqscan *s, char c)
{
	if (s->in_reqline) {
		if (s->reqline_len < sizeof(s->reqline))
			s->reqline[s->reqline_len++] = c;
		else
			s->reqline_long = true;
	} else {
		if (s->hdr_len < sizeof(s->hdr))
			s->hdr[s->hdr_len++] = c;
		else
			s->hdr_long = true;
	}
}

size_t fe_reqscan_feed(struct fe_reqscan *s, const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && s->state != FE_REQSCAN_DONE) {
		char c = p[i++];
		/* RFC 9110 §5.5: no field value, name or request line holds a NUL
		 * or another control byte but HT. evhttp would cut a value at a
		 * NUL ("key\0junk" reads as "key"), so such a head is refused. */
		unsigned char u = (unsigned char)c;
		if ((u < 0x20 && c != '\t' && c != '\r' && c != '\n') || u == 0x7f)
			s->bad_byte = true;
		switch (s->state) {
		case FE_REQSCAN_LINE_START:
			if (c == '\n') {
				s->state = FE_REQSCAN_DONE;
				break;
			}
			if (c == '\r') {
				s->state = FE_REQSCAN_LINE_START_CR;
				break;
			}
			s->state = FE_REQSCAN_IN_LINE;
			keep(s, c);
			break;
		case FE_REQSCAN_LINE_START_CR:
			if (c == '\n') {
				s->state = FE_REQSCAN_DONE;
				break;
			}
			/* "\r" then more: a line that starts with '\r'. */
			s->state = FE_REQSCAN_IN_LINE;
			keep(s, '\r');
			keep(s, c);
			break;
		case FE_REQSCAN_IN_LINE:
			if (c == '\n') {
				end_of_line(s);
				s->state = FE_REQSCAN_LINE_START;
			} else {
				keep(s, c);
			}
			break;
		case FE_REQSCAN_DONE:
			break;
		}
	}
	s->head_bytes += i;
	return i;
}

static enum fe_method method_named(const char *m, size_t n)
{
	static const struct {
		const char *name;
		enum fe_method m;
	} t[] = { { "GET", FE_M_GET },	   { "POST", FE_M_POST },	{ "DELETE", FE_M_DELETE },
		  { "HEAD", FE_M_HEAD },   { "OPTIONS", FE_M_OPTIONS }, { "PUT", FE_M_PUT },
		  { "PATCH", FE_M_PATCH } };
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strlen(t[i].name) == n && !memcmp(t[i].name, m, n))
			return t[i].m;
	return FE_M_OTHER;
}

bool fe_reqscan_target(const struct fe_reqscan *s, enum fe_method *method, char *path, size_t path_size,
		       char *query, size_t query_size)
{
	if (s->state != FE_REQSCAN_DONE || s->in_reqline || s->reqline_long || path_size == 0)
		return false;
	const char *l = s->reqline, *end = s->reqline + s->reqline_len;
	const char *sp1 = memchr(l, ' ', s->reqline_len);
	if (!sp1)
		return false;
	const char *t = sp1 + 1;
	const char *sp2 = memchr(t, ' ', (size_t)(end - t));
	if (!sp2 || sp2 == t)
		return false;
	*method = method_named(l, (size_t)(sp1 - l));
	/* An absolute form ("http://host/path") is routed as evhttp routes
	 * it: by its path. */
	const char *pstart = t;
	if ((size_t)(sp2 - t) > 7 && !strncasecmp(t, "http://", 7)) {
		const char *slash = memchr(t + 7, '/', (size_t)(sp2 - t - 7));
		pstart = slash ? slash : sp2;
	}
	const char *q = memchr(pstart, '?', (size_t)(sp2 - pstart));
	const char *pend = q ? q : sp2;
	size_t pn = (size_t)(pend - pstart);
	if (pn >= path_size || memchr(pstart, '\0', pn))
		return false;
	memcpy(path, pstart, pn);
	path[pn] = '\0';
	if (query && query_size > 0) {
		query[0] = '\0';
		if (q) {
			size_t qn = (size_t)(sp2 - q - 1);
			if (qn < query_size && !memchr(q + 1, '\0', qn)) {
				memcpy(query, q + 1, qn);
				query[qn] = '\0';
			}
		}
	}
	return true;
}
