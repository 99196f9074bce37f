/* The trusted-proxy rule (client_addr.h): the list's parser, the pick
 * from X-Forwarded-For or Forwarded, and the request's client. */
#include "frontend/client_addr.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frontend/conn.h"
#include "frontend/playground.h"
#include "frontend/server_internal.h"

/* An address's family and bytes, an IPv4-mapped IPv6 address as IPv4. */
static int addr_bytes(const struct sockaddr *sa, unsigned char out[16])
{
	if (!sa)
		return AF_UNSPEC;
	if (sa->sa_family == AF_INET) {
		memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(out, a->s6_addr + 12, 4);
			return AF_INET;
		}
		memcpy(out, a->s6_addr, 16);
		return AF_INET6;
	}
	return AF_UNSPEC;
}

static void mask_bits(unsigned char *b, size_t len, unsigned bits)
{
	for (size_t i = 0; i < len; i++) {
		unsigned keep = bits >= 8 * (i + 1) ? 8 : bits > 8 * i ? bits - 8 * (unsigned)i : 0;
		b[i] &= (unsigned char)(0xff00u >> keep);
	}
}

/* "a.b.c.d", "a.b.c.d/n", "v6", "v6/n" (s: len bytes) into *net. */
static bool net_parse(const char *s, size_t len, struct fe_proxy_net *net)
{
	char text[INET6_ADDRSTRLEN + 8];
	if (len == 0 || len >= sizeof(text))
		return false;
	memcpy(text, s, len);
	text[len] = '\0';
	char *slash = strchr(text, '/');
	long bits = -1;
	if (slash) {
		*slash = '\0';
		char *end = NULL;
		if (!isdigit((unsigned char)slash[1]) || strlen(slash + 1) > 3)
			return false;
		bits = strtol(slash + 1, &end, 10);
		if (*end)
			return false;
	}
	memset(net, 0, sizeof(*net));
	if (inet_pton(AF_INET, text, net->addr) == 1) {
		net->family = AF_INET;
		net->bits = bits < 0 ? 32 : (unsigned)bits;
		if (bits > 32)
			return false;
		mask_bits(net->addr, 4, net->bits);
		return true;
	}
	if (inet_pton(AF_INET6, text, net->addr) == 1) {
		net->family = AF_INET6;
		net->bits = bits < 0 ? 128 : (unsigned)bits;
		if (bits > 128)
			return false;
		mask_bits(net->addr, 16, net->bits);
		return true;
	}
	return false;
}

int fe_proxies_parse(const char *list, const char *header, struct fe_proxies *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!header || !strcasecmp(header, "X-Forwarded-For"))
		out->forwarded = false;
	else if (!strcasecmp(header, "Forwarded"))
		out->forwarded = true;
	else
		return gv_err_set(err, GV_ECONFIG, "client_address_header: '%.40s' is neither X-Forwarded-For nor Forwarded",
				  header);
	for (const char *p = list ? list : ""; *p;) {
		size_t len = strcspn(p, ",");
		const char *item = p;
		size_t ilen = len;
		while (ilen && isspace((unsigned char)*item))
			item++, ilen--;
		while (ilen && isspace((unsigned char)item[ilen - 1]))
			ilen--;
		if (ilen) {
			if (out->n >= FE_PROXIES_MAX)
				return gv_err_set(err, GV_ECONFIG, "trusted_proxies: more than %d items", FE_PROXIES_MAX);
			if (!net_parse(item, ilen, &out->nets[out->n]))
				return gv_err_set(err, GV_ECONFIG,
						  "trusted_proxies: '%.*s' is not an address or ADDRESS/BITS",
						  (int)(ilen > 60 ? 60 : ilen), item);
			out->n++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

static bool trusted_bytes(const struct fe_proxies *p, int family, const unsigned char *b)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct fe_proxy_net *n = &p->nets[i];
		if (n->family != family)
			continue;
		unsigned char m[16];
		size_t len = family == AF_INET ? 4 : 16;
		memcpy(m, b, len);
		mask_bits(m, len, n->bits);
		if (!memcmp(m, n->addr, len))
			return true;
	}
	return false;
}

bool fe_proxies_trust(const struct fe_proxies *p, const struct sockaddr *sa)
{
	unsigned char b[16];
	int family = addr_bytes(sa, b);
	return family != AF_UNSPEC && p && p->n && trusted_bytes(p, family, b);
}

/* One hop's node (s: len bytes, trimmed): "a.b.c.d", "a.b.c.d:port",
 * "v6", "[v6]", "[v6]:port", as X-Forwarded-For and Forwarded's for=
 * write them. false for anything else ("unknown", "_hidden", garbage). */
static bool node_parse(const char *s, size_t len, int *family, unsigned char b[16])
{
	char text[INET6_ADDRSTRLEN + 16];
	if (len == 0 || len >= sizeof(text))
		return false;
	memcpy(text, s, len);
	text[len] = '\0';
	char *host = text;
	if (host[0] == '[') {
		char *close = strchr(host, ']');
		if (!close || (close[1] && (close[1] != ':' || !close[2] || strspn(close + 2, "0123456789") != strlen(close + 2))))
			return false;
		*close = '\0';
		host++;
		if (inet_pton(AF_INET6, host, b) != 1)
			return false;
		*family = AF_INET6;
	} else if (inet_pton(AF_INET6, host, b) == 1) {
		*family = AF_INET6;
	} else {
		char *colon = strchr(host, ':');
		if (colon) {
			if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
				return false;
			*colon = '\0';
		}
		if (inet_pton(AF_INET, host, b) != 1)
			return false;
		*family = AF_INET;
	}
	if (*family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)b)) {
		memmove(b, b + 12, 4);
		*family = AF_INET;
	}
	return true;
}

/* Forwarded: the for= of one element (s: len bytes), unquoted. */
static bool forwarded_for(const char *s, size_t len, const char **v, size_t *vlen)
{
	const char *end = s + len;
	while (s < end) {
		const char *pe = memchr(s, ';', (size_t)(end - s));
		size_t plen = (size_t)((pe ? pe : end) - s);
		const char *p = s;
		while (plen && isspace((unsigned char)*p))
			p++, plen--;
		while (plen && isspace((unsigned char)p[plen - 1]))
			plen--;
		if (plen > 4 && !strncasecmp(p, "for=", 4)) {
			p += 4;
			plen -= 4;
			if (plen >= 2 && p[0] == '"' && p[plen - 1] == '"') {
				p++;
				plen -= 2;
			}
			*v = p;
			*vlen = plen;
			return true;
		}
		s = pe ? pe + 1 : end;
	}
	return false;
}

static void set_out(struct sockaddr_storage *out, int family, const unsigned char *b)
{
	memset(out, 0, sizeof(*out));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)out;
		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, b, 4);
	} else if (family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;
		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, b, 16);
	} else {
		out->ss_family = AF_UNSPEC;
	}
}

void fe_client_pick(const struct fe_proxies *p, const struct sockaddr *peer, const char *hdr,
		    struct sockaddr_storage *out)
{
	unsigned char cur[16];
	int family = addr_bytes(peer, cur);
	if (family == AF_UNSPEC || !p || !trusted_bytes(p, family, cur) || !hdr) {
		set_out(out, family, cur);
		return;
	}
	/* From the right: each hop was appended by the proxy after it. */
	size_t end = strlen(hdr);
	while (end > 0) {
		size_t start = end;
		while (start > 0 && hdr[start - 1] != ',')
			start--;
		const char *s = hdr + start;
		size_t len = end - start;
		end = start > 0 ? start - 1 : 0;
		while (len && isspace((unsigned char)*s))
			s++, len--;
		while (len && isspace((unsigned char)s[len - 1]))
			len--;
		if (len == 0) {
			if (start == 0)
				break;
			continue; /* "a, , b": an empty list item, as RFC 7230 lists allow */
		}
		if (p->forwarded && !forwarded_for(s, len, &s, &len))
			break;
		unsigned char b[16];
		int f;
		if (!node_parse(s, len, &f, b))
			break;
		family = f;
		memcpy(cur, b, 16);
		if (!trusted_bytes(p, family, cur))
			break;
		if (start == 0)
			break;
	}
	set_out(out, family, cur);
}

int fe_proxy_line_parse(const char *line, size_t len, struct sockaddr_storage *client)
{
	char buf[FE_PROXY_LINE_MAX + 1];
	memset(client, 0, sizeof(*client));
	if (len < 8 || len > FE_PROXY_LINE_MAX || line[len - 2] != '\r' || line[len - 1] != '\n')
		return -1;
	memcpy(buf, line, len - 2);
	buf[len - 2] = '\0';
	if (strlen(buf) != len - 2 || strncmp(buf, "PROXY ", 6) != 0)
		return -1;
	const char *rest = buf + 6;
	if (!strncmp(rest, "UNKNOWN", 7) && (rest[7] == '\0' || rest[7] == ' '))
		return 0;
	int family = !strncmp(rest, "TCP4 ", 5) ? AF_INET : !strncmp(rest, "TCP6 ", 5) ? AF_INET6 : AF_UNSPEC;
	if (family == AF_UNSPEC)
		return -1;
	/* Exactly four fields after the protocol, single spaces. */
	char *f[4];
	char *s = buf + 11;
	for (int i = 0; i < 4; i++) {
		f[i] = s;
		char *sp = strchr(s, ' ');
		if (i < 3) {
			if (!sp || sp == s)
				return -1;
			*sp = '\0';
			s = sp + 1;
		} else if (sp || !*s) {
			return -1;
		}
	}
	unsigned char src[16], dst[16];
	if (inet_pton(family, f[0], src) != 1 || inet_pton(family, f[1], dst) != 1)
		return -1;
	for (int i = 2; i < 4; i++) {
		size_t n = strlen(f[i]);
		if (n == 0 || n > 5 || strspn(f[i], "0123456789") != n || (n > 1 && f[i][0] == '0') || atol(f[i]) > 65535)
			return -1;
	}
	if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)src)) {
		memmove(src, src + 12, 4);
		family = AF_INET;
	}
	set_out(client, family, src);
	return 1;
}

void fe_client_of_evreq(const struct fe_proxies *p, struct evhttp_request *req, const struct sockaddr *proxied,
			struct sockaddr_storage *out)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	const struct sockaddr *peer = proxied ? proxied : evcon ? evhttp_connection_get_addr(evcon) : NULL;
	if (!p || !p->n || !fe_proxies_trust(p, peer)) {
		fe_client_pick(NULL, peer, NULL, out);
		return;
	}
	/* Every line of the header, joined in order: a proxy may add its
	 * own line instead of appending to the last. */
	const char *name = p->forwarded ? "Forwarded" : "X-Forwarded-For";
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	size_t total = 0;
	for (struct evkeyval *kv = h->tqh_first; kv; kv = kv->next.tqe_next)
		if (!strcasecmp(kv->key, name))
			total += strlen(kv->value) + 1;
	char *joined = total ? malloc(total + 1) : NULL;
	if (joined) {
		size_t off = 0;
		for (struct evkeyval *kv = h->tqh_first; kv; kv = kv->next.tqe_next) {
			if (strcasecmp(kv->key, name))
				continue;
			size_t n = strlen(kv->value);
			if (off)
				joined[off++] = ',';
			memcpy(joined + off, kv->value, n);
			off += n;
		}
		joined[off] = '\0';
	}
	/* Without the header (or out of memory): the proxy's own address. */
	fe_client_pick(p, peer, joined, out);
	free(joined);
}

int fe_client_of_request(struct fe_req *r)
{
	struct sockaddr_storage ss, proxied;
	bool has_proxied = fe_conn_proxied_addr(r, &proxied);
	fe_client_of_evreq(&r->w->app->cfg->proxies, r->req, has_proxied ? (const struct sockaddr *)&proxied : NULL, &ss);
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) {
		r->pg_bucket[0] = r->client[0] = '\0';
		return -1;
	}
	char bucket[TENANT_PLAYGROUND_CLIENT_MAX + 1];
	if (fe_playground_client((const struct sockaddr *)&ss, bucket, r->client) < 0)
		return -1;
	snprintf(r->pg_bucket, sizeof(r->pg_bucket), "%s", bucket);
	return 0;
}
