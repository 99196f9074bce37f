/* Authentication and rate limiting of a request (auth.c). Private to
 * frontend/. */
#pragma once

#include "frontend/server_internal.h"

/* Authenticates r by its API key, applies its tenant's rate limit, then
 * hands it to fe_dispatch; or replies 401/403/429/503 itself. */
void fe_authenticate(struct fe_req *r);
/* Does r carry an API key in a header (X-Auth-Token, Authorization:
 * Bearer)? For routes that serve anyone but answer a tenant for itself. */
bool fe_auth_presented(struct fe_req *r);
