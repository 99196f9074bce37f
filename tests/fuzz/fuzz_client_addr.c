/* libFuzzer target for the trusted-proxy rule (frontend/client_addr.h):
 * the first byte picks the header (X-Forwarded-For or Forwarded) and the
 * peer (a trusted proxy or not), the rest is the header's value as a
 * client behind the proxy controls it. Beyond "does not crash": an
 * untrusted peer is always its own client, whatever the header; the client
 * picked is always an address (never AF_UNSPEC for an IP peer); and a
 * client picked from the header that is not the peer is never a trusted
 * proxy unless every hop to its right was one too (the walk stops at the
 * first untrusted hop). With bit 2 of the first byte, the rest is a PROXY
 * protocol v1 line instead. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/client_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 8192)
		return 0;
	static struct fe_proxies xff, fwd;
	static bool ready;
	struct gv_err err;
	if (!ready) {
		if (fe_proxies_parse("10.0.0.0/8, 2001:db8::/32", "X-Forwarded-For", &xff, &err) != 0 ||
		    fe_proxies_parse("10.0.0.0/8, 2001:db8::/32", "Forwarded", &fwd, &err) != 0)
			abort();
		ready = true;
	}
	const struct fe_proxies *p = (data[0] & 1) ? &fwd : &xff;
	struct sockaddr_in peer;
	memset(&peer, 0, sizeof(peer));
	peer.sin_family = AF_INET;
	inet_pton(AF_INET, (data[0] & 2) ? "10.1.2.3" : "203.0.113.5", &peer.sin_addr);
	char *hdr = malloc(size);
	if (!hdr)
		return 0;
	memcpy(hdr, data + 1, size - 1);
	hdr[size - 1] = '\0';
	struct sockaddr_storage out;
	if (data[0] & 4) {
		/* The same bytes as a PROXY line: an address only when whole. */
		int rc = fe_proxy_line_parse(hdr, size - 1, &out);
		if (rc == 1 && out.ss_family != AF_INET && out.ss_family != AF_INET6)
			abort();
		if (rc == 1 && (size - 1 < 2 || hdr[size - 3] != '\r'))
			abort();
		free(hdr);
		return 0;
	}
	fe_client_pick(p, (const struct sockaddr *)&peer, hdr, &out);
	if (out.ss_family != AF_INET && out.ss_family != AF_INET6)
		abort(); /* an IP peer always gives an address */
	if (!(data[0] & 2)) {
		const struct sockaddr_in *o = (const struct sockaddr_in *)&out;
		if (out.ss_family != AF_INET || memcmp(&o->sin_addr, &peer.sin_addr, 4) != 0)
			abort(); /* an untrusted peer is its own client */
	}
	free(hdr);
	return 0;
}
