/* Unit tests of the job tokens (common/queue.c): "<tid>:<sid>:<gpus>" and
 * a kernel's "<tid>:<sid>:<gpus>:k<mb>", which the scheduler sums per node
 * (a token it misreads is memory it gives out twice). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/queue.h"

#define TID "0b7e9d1c-5a3f-4e2b-9c8d-1f2e3d4c5b6a"
#define SID "sub_0123456789abcdef"

static int parse(const char *s, struct gv_queue_token *t)
{
	struct gv_err err;
	return gv_queue_token_parse(s, strlen(s), t, &err);
}

static void token__round_trip__judge_and_kernel(void **state)
{
	(void)state;
	struct gv_err err;
	struct gv_queue_token in = { .tid = TID, .sid = SID, .gpus = 2 }, out;
	char buf[GV_QUEUE_TOKEN_MAX + 1];
	assert_int_equal(gv_queue_token_format(buf, sizeof(buf), &in, &err), 0);
	assert_string_equal(buf, TID ":" SID ":2");
	assert_int_equal(parse(buf, &out), 0);
	assert_int_equal(out.gpus, 2);
	assert_int_equal(out.kernel_mb, 0);

	in.gpus = 0;
	in.kernel_mb = 512;
	assert_int_equal(gv_queue_token_format(buf, sizeof(buf), &in, &err), 0);
	assert_string_equal(buf, TID ":" SID ":0:k512");
	assert_int_equal(parse(buf, &out), 0);
	assert_string_equal(out.tid, TID);
	assert_string_equal(out.sid, SID);
	assert_int_equal(out.kernel_mb, 512);
}

static void token__malformed__refused_and_zeroed(void **state)
{
	(void)state;
	const char *bad[] = {
		TID ":" SID,		     TID ":" SID ":",	       TID ":" SID ":x",
		TID ":" SID ":-1",	     TID ":" SID ":1025",      TID ":" SID ":0:",
		TID ":" SID ":0:k",	     TID ":" SID ":0:512",     TID ":" SID ":0:k0",
		TID ":" SID ":0:k-5",	     TID ":" SID ":0:k1048577", TID ":" SID ":0:k99999999999999999999",
		TID ":" SID ":0:k12:extra", TID ":" SID ":0:k12 ",     "bad tid:" SID ":0",
		TID ":short:0",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gv_queue_token t;
		memset(&t, 0x5a, sizeof(t));
		if (parse(bad[i], &t) == 0)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(t.kernel_mb, 0);
		assert_int_equal(t.gpus, 0);
	}
}

static void token__format__refuses_out_of_range(void **state)
{
	(void)state;
	struct gv_err err;
	char buf[GV_QUEUE_TOKEN_MAX + 1];
	struct gv_queue_token t = { .tid = TID, .sid = SID, .kernel_mb = GV_QUEUE_KERNEL_MB_MAX + 1 };
	assert_int_not_equal(gv_queue_token_format(buf, sizeof(buf), &t, &err), 0);
	t.kernel_mb = GV_QUEUE_KERNEL_MB_MAX;
	assert_int_equal(gv_queue_token_format(buf, sizeof(buf), &t, &err), 0);
	assert_true(strlen(buf) <= GV_QUEUE_TOKEN_MAX);
	char small[16];
	assert_int_not_equal(gv_queue_token_format(small, sizeof(small), &t, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(token__round_trip__judge_and_kernel),
		cmocka_unit_test(token__malformed__refused_and_zeroed),
		cmocka_unit_test(token__format__refuses_out_of_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
