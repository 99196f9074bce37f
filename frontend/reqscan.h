/* A look at a request's head as its bytes arrive, before libevent parses
 * it: where the header block ends, the request line (method and path, to
 * pick the route's body limit) and the API key if one is presented in a
 * header. Pure, byte by byte, any split of the input; it never decides
 * who a client is: evhttp's parse and the request pipeline do that. The
 * key found here only chooses how large a body the frontend will read
 * before that decision. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "frontend/router.h"
#include "tenants/key.h"

/* Bytes of the request line kept: method, target and version. A longer
 * target has no route (its path is over any route's length anyway). */
#define FE_REQSCAN_LINE_MAX 2048
/* Bytes of one header line kept while looking for the key headers. */
#define FE_REQSCAN_HDR_MAX (TENANT_KEY_PRESENTED_MAX + 64)

enum fe_reqscan_state {
	FE_REQSCAN_IN_LINE,       /* inside a line (the request line first) */
	FE_REQSCAN_LINE_START,    /* after a '\n' */
	FE_REQSCAN_LINE_START_CR, /* after "\n\r" */
	FE_REQSCAN_DONE,          /* the empty line was consumed */
};

struct fe_reqscan {
	enum fe_reqscan_state state;
	bool in_reqline;
	char reqline[FE_REQSCAN_LINE_MAX];
	size_t reqline_len;
	bool reqline_long;
	char hdr[FE_REQSCAN_HDR_MAX];
	size_t hdr_len;
	bool hdr_long;
	char key[TENANT_KEY_PRESENTED_MAX + 1];
	bool key_from_token; /* X-Auth-Token wins over Authorization */
	bool key_from_api_key; /* X-API-KEY (Jobe's) only when neither is sent */
	size_t head_bytes;   /* bytes consumed so far */
	bool bad_byte;       /* a NUL or another control byte but HT, CR, LF */
};

void fe_reqscan_reset(struct fe_reqscan *s);

/* Consumes bytes of p[0..n) up to and including the end of the header
 * block; returns how many it consumed (n unless the block ended inside). */
size_t fe_reqscan_feed(struct fe_reqscan *s, const char *p, size_t n);

static inline bool fe_reqscan_done(const struct fe_reqscan *s)
{
	return s->state == FE_REQSCAN_DONE;
}

/* The method and path (without query) of the request line, once done:
 * false when there is none or it is malformed or was cut. query (may be
 * NULL) gets the query string without '?', "" when none. */
bool fe_reqscan_target(const struct fe_reqscan *s, enum fe_method *method, char *path, size_t path_size,
		       char *query, size_t query_size);

/* The key presented in X-Auth-Token or "Authorization: Bearer", "" when
 * none. Borrowed from s. */
static inline const char *fe_reqscan_key(const struct fe_reqscan *s)
{
	return s->key;
}
