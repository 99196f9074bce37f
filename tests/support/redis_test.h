/* What the C tests that speak to the test Redis share: a connection to
 * GAVEL_REDIS_URL (tests/run.sh starts that Redis) and a random
 * lowercase UUID (a tenant or kernel id). */
#pragma once

struct gv_redis;

/* A connection to $GAVEL_REDIS_URL; NULL, with why written, when the
 * variable is unset or the server does not answer. */
struct gv_redis *test_redis_open(char *why, unsigned long why_size);

/* A random version-4 UUID, lowercase, into out. */
void test_random_uuid(char out[37]);
