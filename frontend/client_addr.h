/* Who the client is behind a reverse proxy or load balancer: the trusted
 * proxies (frontend.trusted_proxies: addresses and CIDR ranges) and the
 * header they set (frontend.client_address_header: X-Forwarded-For or
 * Forwarded, RFC 7239). The rule:
 *   - a request from a peer that is not a trusted proxy is that peer's,
 *     whatever headers it sends (spoofed ones are ignored);
 *   - from a trusted proxy, the header's hops are read from the right (the
 *     one the nearest proxy appended) to the left, skipping trusted
 *     proxies: the first address that is not one is the client; all
 *     trusted, the leftmost; a hop that is no address ("unknown", an
 *     obfuscated name, garbage) stops the walk at the proxy that handed it
 *     on, so a client's own bytes never pick an address;
 *   - only the one header the operator names is read: a proxy that
 *     appends X-Forwarded-For passes a client's Forwarded on untouched.
 * With frontend.proxy_protocol, a trusted proxy's connection starts with a
 * PROXY v1 line (fe_proxy_line_parse), whose source address is then the
 * peer for the rule above (conn.c reads it before evhttp sees a byte).
 * The client address then counts for the connection guard's per-address
 * cap (after the request's head is parsed: conn.c), the playground's and
 * token reads' per-address buckets, and the audit's "anonymous:<address>".
 * The parser and the pick are pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "common/err.h"

#define FE_PROXIES_MAX 32

struct fe_proxy_net {
	int family;             /* AF_INET or AF_INET6 */
	unsigned char addr[16]; /* network byte order, masked */
	unsigned bits;          /* prefix length */
};

struct fe_proxies {
	size_t n;
	struct fe_proxy_net nets[FE_PROXIES_MAX];
	bool forwarded; /* read Forwarded (RFC 7239), else X-Forwarded-For */
	bool proxy_protocol; /* each connection of a trusted proxy starts with a PROXY v1 line */
};

/* Parses list ("10.0.0.0/8, 192.0.2.7, 2001:db8::/32"; "" none) and header
 * ("X-Forwarded-For" or "Forwarded", any case) into out. -1 with err
 * naming the item otherwise. */
int fe_proxies_parse(const char *list, const char *header, struct fe_proxies *out, struct gv_err *err) GV_MUST_CHECK;

/* Whether sa (an IPv4-mapped IPv6 address counts as IPv4) is in one of p's
 * ranges. Pure. */
bool fe_proxies_trust(const struct fe_proxies *p, const struct sockaddr *sa);

/* The client of a request from peer carrying header value hdr (the named
 * header's lines joined by ','; NULL: none), by the rule above, into out
 * (port 0). peer NULL or not IP: out's family is AF_UNSPEC. Pure. */
void fe_client_pick(const struct fe_proxies *p, const struct sockaddr *peer, const char *hdr,
		    struct sockaddr_storage *out);

/* The PROXY protocol v1 (HAProxy's, what TCP load balancers send first on
 * each connection): "PROXY TCP4 <src> <dst> <sport> <dport>\r\n", TCP6
 * alike, or "PROXY UNKNOWN[ ...]\r\n"; at most FE_PROXY_LINE_MAX bytes
 * with the CRLF. */
#define FE_PROXY_LINE_MAX 107

/* Parses line (len bytes, the CRLF included) into *client (port 0).
 * 1: an address; 0: UNKNOWN (the balancer's own connection, e.g. a health
 * check: the peer stays the client); -1: not a valid line. Pure. */
int fe_proxy_line_parse(const char *line, size_t len, struct sockaddr_storage *client);

struct fe_req;
struct evhttp_request;

/* The client of req (evhttp's, its connection's peer and headers) under
 * the app's proxies, into out. peer: the connection's client as a PROXY
 * line named it (NULL: none; the socket's peer). */
void fe_client_of_evreq(const struct fe_proxies *p, struct evhttp_request *req, const struct sockaddr *peer,
			struct sockaddr_storage *out);

/* r's client into r->pg_bucket (its per-address bucket's name) and
 * r->client (as the audit shows it), by fe_playground_client. -1 when
 * there is no IP address. */
int fe_client_of_request(struct fe_req *r);
