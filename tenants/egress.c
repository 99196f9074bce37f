/* The egress policy grammar and the always-refused address ranges; see
 * egress.h. Every byte of the policy is operator input stored in
 * PostgreSQL: parsed with bounds, nothing resolved or applied here. */
#include "tenants/egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/json.h"
#include "common/log.h"
#include "tenants/quota.h"

#define R(a, b, c, d, p) {((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d), p, #a "." #b "." #c "." #d "/" #p}
const struct tenant_egress_range tenant_egress_refused[] = {
	R(0, 0, 0, 0, 8),        /* "this network" */
	R(10, 0, 0, 0, 8),       /* RFC 1918 */
	R(100, 64, 0, 0, 10),    /* CGNAT, RFC 6598 */
	R(127, 0, 0, 0, 8),      /* loopback */
	R(169, 254, 0, 0, 16),   /* link-local, metadata 169.254.169.254 */
	R(172, 16, 0, 0, 12),    /* RFC 1918 */
	R(192, 0, 0, 0, 24),     /* IETF protocol assignments */
	R(192, 88, 99, 0, 24),   /* 6to4 relay anycast */
	R(192, 168, 0, 0, 16),   /* RFC 1918 */
	R(198, 18, 0, 0, 15),    /* benchmarking, RFC 2544 */
	R(224, 0, 0, 0, 4),      /* multicast */
	R(240, 0, 0, 0, 4),      /* reserved, broadcast */
};
#undef R
const size_t tenant_egress_refused_len = sizeof(tenant_egress_refused) / sizeof(tenant_egress_refused[0]);

static uint32_t mask_of(uint8_t prefix)
{
	return prefix == 0 ? 0 : 0xffffffffu << (32 - prefix);
}

bool tenant_egress_addr_refused(uint32_t addr)
{
	for (size_t i = 0; i < tenant_egress_refused_len; i++) {
		uint32_t m = mask_of(tenant_egress_refused[i].prefix);
		if ((addr & m) == tenant_egress_refused[i].addr)
			return true;
	}
	return false;
}

/* True when every address of net/prefix is refused: the network lies inside
 * one refused range (the ranges do not overlap, so no union can cover a
 * network that no single range covers except by being inside one). */
static bool net_refused(uint32_t net, uint8_t prefix)
{
	for (size_t i = 0; i < tenant_egress_refused_len; i++) {
		const struct tenant_egress_range *r = &tenant_egress_refused[i];
		if (prefix >= r->prefix && (net & mask_of(r->prefix)) == r->addr)
			return true;
	}
	return false;
}

static int parse_port(const char *s, size_t len, uint16_t *out)
{
	if (len == 0 || len > 5)
		return -1;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static bool host_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > TENANT_EGRESS_HOST_MAX || s[0] == '.' || s[0] == '-' || s[len - 1] == '.')
		return false;
	bool alpha = false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			alpha = true;
		else if (!((c >= '0' && c <= '9') || c == '-' || c == '.'))
			return false;
		if (c == '.' && s[i + 1] == '.')
			return false;
	}
	/* All digits and dots is a malformed address, not a name. */
	return alpha;
}

/* One "[tcp:|udp:]TARGET:PORT[-PORT]" entry. */
static int parse_entry(const char *s, size_t len, struct tenant_egress_rule *r, struct gv_err *err)
{
	char shown[80];
	gv_log_escape(shown, sizeof(shown), s, len);
	memset(r, 0, sizeof(*r));
	r->proto = TENANT_EGRESS_TCP;
	if (len > 4 && memcmp(s, "tcp:", 4) == 0) {
		s += 4;
		len -= 4;
	} else if (len > 4 && memcmp(s, "udp:", 4) == 0) {
		r->proto = TENANT_EGRESS_UDP;
		s += 4;
		len -= 4;
	}
	const char *colon = NULL;
	for (size_t i = len; i-- > 0;)
		if (s[i] == ':') {
			colon = s + i;
			break;
		}
	if (!colon)
		return gv_err_set(err, GV_EINVAL, "egress_policy: '%s': expected TARGET:PORT[-PORT]", shown);
	size_t tlen = (size_t)(colon - s);
	const char *ports = colon + 1;
	size_t plen = len - tlen - 1;
	const char *dash = memchr(ports, '-', plen);
	if (dash) {
		if (parse_port(ports, (size_t)(dash - ports), &r->port_lo) != 0 ||
		    parse_port(dash + 1, plen - (size_t)(dash - ports) - 1, &r->port_hi) != 0 ||
		    r->port_lo > r->port_hi)
			return gv_err_set(err, GV_EINVAL, "egress_policy: '%s': bad port range", shown);
	} else {
		if (parse_port(ports, plen, &r->port_lo) != 0)
			return gv_err_set(err, GV_EINVAL, "egress_policy: '%s': bad port", shown);
		r->port_hi = r->port_lo;
	}
	if (tlen == 0 || tlen > TENANT_EGRESS_HOST_MAX)
		return gv_err_set(err, GV_EINVAL, "egress_policy: '%s': bad destination", shown);
	char target[TENANT_EGRESS_HOST_MAX + 1];
	memcpy(target, s, tlen);
	target[tlen] = '\0';
	if (strchr(target, '[') || strchr(target, ':'))
		return gv_err_set(err, GV_EINVAL, "egress_policy: '%s': IPv6 destinations are not supported", shown);
	char *slash = strchr(target, '/');
	uint8_t prefix = 32;
	if (slash) {
		*slash = '\0';
		const char *p = slash + 1;
		size_t pl = strlen(p);
		if (pl == 0 || pl > 2 || strspn(p, "0123456789") != pl || atoi(p) > 32)
			return gv_err_set(err, GV_EINVAL, "egress_policy: '%s': bad prefix length", shown);
		prefix = (uint8_t)atoi(p);
	}
	struct in_addr a;
	if (inet_pton(AF_INET, target, &a) == 1) {
		uint32_t addr = ntohl(a.s_addr);
		if (addr & ~mask_of(prefix))
			return gv_err_set(err, GV_EINVAL, "egress_policy: '%s': host bits set after the prefix", shown);
		if (net_refused(addr, prefix))
			return gv_err_set(err, GV_EINVAL,
					  "egress_policy: '%s': inside a range that is always refused "
					  "(private, loopback, link-local, metadata, reserved)", shown);
		r->addr = addr;
		r->prefix = prefix;
		return 0;
	}
	if (slash || !host_name_ok(target, tlen))
		return gv_err_set(err, GV_EINVAL, "egress_policy: '%s': not an IPv4 address, CIDR or host name",
				  shown);
	r->is_host = true;
	for (size_t i = 0; i <= tlen; i++)
		r->host[i] = (char)((target[i] >= 'A' && target[i] <= 'Z') ? target[i] + 32 : target[i]);
	if (strcmp(r->host, "localhost") == 0 || (tlen > 10 && strcmp(r->host + tlen - 10, ".localhost") == 0))
		return gv_err_set(err, GV_EINVAL, "egress_policy: '%s': loopback is always refused", shown);
	return 0;
}

int tenant_egress_parse(const char *text, struct tenant_egress_policy *out, struct gv_err *err)
{
	memset(out, 0, sizeof(*out));
	size_t len = strnlen(text, TENANT_EGRESS_POLICY_MAX);
	if (len >= TENANT_EGRESS_POLICY_MAX)
		return gv_err_set(err, GV_ELIMIT, "egress_policy: longer than %d bytes", TENANT_EGRESS_POLICY_MAX - 1);
	json_t *j = gv_json_parse(text, len, TENANT_EGRESS_POLICY_MAX, 8, err);
	if (!j) {
		gv_err_prefix(err, "egress_policy");
		return -1;
	}
	int rc = -1;
	static const char *const keys[] = {"mode", "allow", "rate_kbit", "egress_kbit", "ingress_kbit", NULL};
	const char *mode = NULL;
	json_t *allow = NULL;
	int64_t rate = 0, up = 0, down = 0;
	if (!json_is_object(j)) {
		gv_err_set(err, GV_EINVAL, "egress_policy: expected a JSON object");
		goto out;
	}
	if (gv_json_check_keys(j, keys, err) != 0 ||
	    gv_json_get_string(j, "mode", GV_JSON_REQUIRED, 32, &mode, err) < 0 ||
	    gv_json_get_array(j, "allow", 0, TENANT_EGRESS_RULES_MAX, &allow, err) < 0 ||
	    gv_json_get_int(j, "rate_kbit", 0, 1, TENANT_EGRESS_KBIT_MAX, &rate, err) < 0 ||
	    gv_json_get_int(j, "egress_kbit", 0, 1, TENANT_EGRESS_KBIT_MAX, &up, err) < 0 ||
	    gv_json_get_int(j, "ingress_kbit", 0, 1, TENANT_EGRESS_KBIT_MAX, &down, err) < 0) {
		gv_err_prefix(err, "egress_policy");
		goto out;
	}
	if (strcmp(mode, "none") == 0) {
		if ((allow && json_array_size(allow) > 0) || rate || up || down) {
			gv_err_set(err, GV_EINVAL, "egress_policy: mode 'none' takes no 'allow' list and no rate");
			goto out;
		}
	} else if (strcmp(mode, "allowlist") == 0) {
		if (!allow || json_array_size(allow) == 0) {
			gv_err_set(err, GV_EINVAL, "egress_policy: mode 'allowlist' needs a non-empty 'allow' list");
			goto out;
		}
		out->egress_kbit = (uint32_t)(up ? up : rate);
		out->ingress_kbit = (uint32_t)(down ? down : rate);
		if (!out->egress_kbit || !out->ingress_kbit) {
			gv_err_set(err, GV_EINVAL,
				   "egress_policy: an allowlist needs a rate in each direction "
				   "('rate_kbit', or 'egress_kbit' and 'ingress_kbit')");
			goto out;
		}
		size_t i;
		json_t *v;
		json_array_foreach(allow, i, v) {
			if (!json_is_string(v)) {
				gv_err_set(err, GV_EINVAL, "egress_policy: 'allow' items must be strings");
				goto out;
			}
			if (parse_entry(json_string_value(v), json_string_length(v), &out->rules[out->n_rules], err) != 0)
				goto out;
			out->n_rules++;
		}
		out->grants = true;
	} else {
		gv_err_set(err, GV_EINVAL, "egress_policy: mode must be 'none' or 'allowlist'");
		goto out;
	}
	rc = 0;
out:
	json_decref(j);
	if (rc != 0)
		memset(out, 0, sizeof(*out));
	return rc;
}
