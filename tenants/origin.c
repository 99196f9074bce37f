/* Allowed-origin lists: grammar and match (tenants/origin.h). Pure. */
#include "tenants/origin.h"

#include <string.h>

static bool dns_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static bool host_valid(const char *h, size_t len)
{
	if (len == 0)
		return false;
	if (h[0] == '[') {
		if (len < 3 || h[len - 1] != ']')
			return false;
		for (size_t i = 1; i + 1 < len; i++)
			if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f') || h[i] == ':' ||
			      h[i] == '.'))
				return false;
		return true;
	}
	if (h[0] == '.' || h[len - 1] == '.' || len > 253)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!dns_char(h[i]) || (h[i] == '.' && h[i + 1] == '.'))
			return false;
	return true;
}

static bool port_valid(const char *p, size_t len)
{
	if (len == 0 || len > 5 || p[0] == '0')
		return false;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	return v <= 65535;
}

bool tenant_origin_valid(const char *s, size_t len)
{
	if (len == 1 && s[0] == '*')
		return true;
	if (len > TENANT_ORIGIN_MAX)
		return false;
	size_t skip;
	if (len > 7 && !memcmp(s, "http://", 7))
		skip = 7;
	else if (len > 8 && !memcmp(s, "https://", 8))
		skip = 8;
	else
		return false;
	const char *h = s + skip, *end = s + len;
	/* The port's colon: after an IPv6 literal's ']', else the last one. */
	const char *colon = NULL;
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));
		if (!rb)
			return false;
		if (rb + 1 < end) {
			if (rb[1] != ':')
				return false;
			colon = rb + 1;
		}
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
	}
	size_t hlen = colon ? (size_t)(colon - h) : (size_t)(end - h);
	if (!host_valid(h, hlen))
		return false;
	return !colon || port_valid(colon + 1, (size_t)(end - colon - 1));
}

int tenant_origins_parse(const char *text, char *out, size_t outsz, struct gv_err *err)
{
	size_t used = 0, n = 0;
	bool any = false;
	if (outsz == 0)
		return gv_err_set(err, GV_EINTERNAL, "origins: no room");
	out[0] = '\0';
	for (const char *p = text ? text : ""; *p;) {
		size_t len = strcspn(p, ",");
		const char *item = p, *next = p[len] ? p + len + 1 : p + len;
		while (len > 0 && (*item == ' ' || *item == '\t'))
			item++, len--;
		while (len > 0 && (item[len - 1] == ' ' || item[len - 1] == '\t'))
			len--;
		bool comma = item + len < next && next[-1] == ',';
		p = next;
		if (len == 0 && !comma && n == 0)
			break; /* "" or " ": none */
		if (comma && !*p) {
			out[0] = '\0';
			return gv_err_set(err, GV_EINVAL, "origins: an empty item after the last ','");
		}
		if (!tenant_origin_valid(item, len)) {
			out[0] = '\0';
			return gv_err_set(err, GV_EINVAL,
					  "origin '%.*s': expected * or scheme://host[:port] (http or https, "
					  "lower case, no path or trailing slash)",
					  (int)(len > 80 ? 80 : len), item);
		}
		bool star = len == 1 && item[0] == '*';
		if (star ? n > 0 : any) {
			out[0] = '\0';
			return gv_err_set(err, GV_EINVAL, "origins: * allows every origin and stands alone");
		}
		any = any || star;
		if (tenant_origins_allow(out, item, len) && !star) {
			out[0] = '\0';
			return gv_err_set(err, GV_EINVAL, "origin '%.*s' listed twice", (int)len, item);
		}
		if (++n > TENANT_ORIGINS_MAX || used + (used ? 1 : 0) + len >= outsz) {
			out[0] = '\0';
			return gv_err_set(err, GV_ELIMIT, "origins: more than %d, or longer than %zu bytes",
					  TENANT_ORIGINS_MAX, outsz - 1);
		}
		if (used)
			out[used++] = ',';
		memcpy(out + used, item, len);
		used += len;
		out[used] = '\0';
	}
	return 0;
}

bool tenant_origins_allow(const char *list, const char *origin, size_t len)
{
	if (!list || !origin || !tenant_origin_valid(origin, len) || (len == 1 && origin[0] == '*'))
		return false;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if ((n == 1 && p[0] == '*') || (n == len && !memcmp(p, origin, len)))
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}
