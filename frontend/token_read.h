/* A submission read by its id alone, at the root paths (Judge0's model:
 * the token is the capability), for a tenant whose browser_clients
 * setting is on: Judge0 IDE and Judge0's dummy client poll
 * GET /submissions/{token} without the key they created it with.
 *
 * The policy:
 *   - Only GET (and HEAD) of one submission: Judge0's
 *     /submissions/{token}, the native /v1/submissions/{id} and its
 *     /events, and only when the request presents no key at all (a key
 *     presented is authenticated as always, and a wrong one is a 401).
 *   - The id names its tenant (gavel_token_lookup, migration 0021); an id
 *     that is no submission, a kernel's, one of a tenant with the setting
 *     off or disabled all get the same 401 as any request without a key,
 *     so nothing tells them apart.
 *   - Ids are 128 bits of libsodium's randombytes_buf (fe_new_id), never
 *     chosen by a client: not guessable, and guessing is rate limited.
 *   - Admitted as the tenant's anonymous principal with token access
 *     (frontend/playground.h): the allowlist of FE_PG_TOKEN, the tenant's
 *     origin check, the anonymous read budgets (per client address,
 *     playground_read_rps, and the tenant's), audited as
 *     "anonymous:<client address>".
 * Private to frontend/. */
#pragma once

#include <stdbool.h>

#include "frontend/server_internal.h"

/* Whether r (its route matched at the root, not under /playground/) is a
 * keyless read of one submission that a token may admit. */
bool fe_token_read_candidate(struct fe_req *r);

/* Looks r's id up and admits r as its tenant's anonymous principal
 * (fe_playground_admit), or answers as fe_authenticate does without a key
 * (401). */
void fe_token_read_resolve(struct fe_req *r);
