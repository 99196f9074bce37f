/* Browser origins: the grammar of an allowed-origins list (a tenant's
 * cors_origins quota, the frontend's frontend.cors_origins default) and the
 * match of a request's Origin header against one. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

/* Origins in one list at most, and the list's joined size with its NUL. */
#define TENANT_ORIGINS_MAX 16
#define TENANT_ORIGINS_BUF 1024
/* One origin's length at most ("https://" + a DNS name + ":65535"). */
#define TENANT_ORIGIN_MAX 270

/* "*" (any origin), or scheme://host[:port] as a browser sends it in
 * Origin: scheme http or https, host a lower-case DNS name ([a-z0-9.-],
 * labels not empty) or a bracketed IPv6 literal, port 1..65535 without
 * leading zeros; no path, query, user or trailing slash. */
bool tenant_origin_valid(const char *s, size_t len);

/* Parses "https://a.example, http://localhost:8080" (items trimmed, ""
 * for none) into out (outsz bytes) as the items joined by ',': each
 * tenant_origin_valid, at most TENANT_ORIGINS_MAX, none twice, "*" alone
 * or not at all. -1 with err naming the item otherwise; out is then "". */
int tenant_origins_parse(const char *text, char *out, size_t outsz, struct gv_err *err) GV_MUST_CHECK;

/* Whether list (as tenant_origins_parse writes it) allows origin (the
 * Origin header's value, len bytes): "*" allows every valid origin;
 * otherwise an item equal to it byte for byte. An invalid origin
 * ("null", a path) is never allowed. */
bool tenant_origins_allow(const char *list, const char *origin, size_t len);
