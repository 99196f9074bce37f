#include "tests/support/redis_test.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/redis.h"

struct gv_redis *test_redis_open(char *why, unsigned long why_size)
{
	const char *url = getenv("GAVEL_REDIS_URL");
	if (!url || !url[0]) {
		snprintf(why, why_size, "GAVEL_REDIS_URL is not set: run this through tests/run.sh");
		return NULL;
	}
	struct gv_err err;
	struct gv_redis_opts o = { .url = url, .max_attempts = 3 };
	struct gv_redis *r = gv_redis_new(&o, &err);
	if (!r)
		snprintf(why, why_size, "redis: %s", err.msg);
	return r;
}

void test_random_uuid(char out[37])
{
	unsigned char b[16];
	randombytes_buf(b, sizeof(b));
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-4%01x%02x-a%01x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
		 b[3], b[4], b[5], b[6] & 15, b[7], b[8] & 15, b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}
