/* Unit tests of gv_redis_url_parse: a table of URLs, what they mean, and
 * the ones refused. Error messages must never echo a password. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/redis.h"

struct url_case {
	const char *url;
	int ok;
	int is_unix;
	const char *host_or_path;
	int port;
	int db;
	const char *user;
	const char *password;
};

static const struct url_case cases[] = {
	{ "redis://127.0.0.1:6380", 1, 0, "127.0.0.1", 6380, 0, "", "" },
	{ "redis://localhost", 1, 0, "localhost", 6379, 0, "", "" },
	{ "redis://localhost/", 1, 0, "localhost", 6379, 0, "", "" },
	{ "redis://localhost:7000/3", 1, 0, "localhost", 7000, 3, "", "" },
	{ "redis://redis.internal-1.example:1", 1, 0, "redis.internal-1.example", 1, 0, "", "" },
	{ "redis://:s3cret@10.0.0.1:6379/2", 1, 0, "10.0.0.1", 6379, 2, "", "s3cret" },
	{ "redis://s3cret@h", 1, 0, "h", 6379, 0, "", "s3cret" },
	{ "redis://alice:pw@h:6379", 1, 0, "h", 6379, 0, "alice", "pw" },
	{ "redis://:p%40ss%2Fw@h", 1, 0, "h", 6379, 0, "", "p@ss/w" },
	{ "redis://:a@b@h", 1, 0, "h", 6379, 0, "", "a@b" },
	{ "redis://[::1]:6380/1", 1, 0, "::1", 6380, 1, "", "" },
	{ "redis://[::1]", 1, 0, "::1", 6379, 0, "", "" },
	{ "unix:///var/run/redis.sock", 1, 1, "/var/run/redis.sock", 0, 0, "", "" },
	{ "unix:///tmp/r.sock?db=5", 1, 1, "/tmp/r.sock", 0, 5, "", "" },
	{ "unix://:pw@/tmp/r.sock", 1, 1, "/tmp/r.sock", 0, 0, "", "pw" },
	{ "unix://bob:pw@/tmp/r.sock?db=1", 1, 1, "/tmp/r.sock", 0, 1, "bob", "pw" },
	/* refused */
	{ "", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "127.0.0.1:6379", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "http://h:6379", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "rediss://h:6379", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://:6379", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h:0", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h:65536", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h:123456", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h:63a", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h:", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h/abc", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h/1/2", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h/-1", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h/99999", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h?db=1", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://h o/", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://[::1", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://[::1]x", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://:bad%zzpw@h", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://:nul%00pw@h", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "redis://:trunc%4@h", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "unix://", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "unix:///", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "unix://relative/path", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "unix:///tmp/r.sock?x=1", 0, 0, NULL, 0, 0, NULL, NULL },
	{ "unix:///tmp/r.sock?db=x", 0, 0, NULL, 0, 0, NULL, NULL },
};

static void redis_url__table__parsed_or_rejected(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct url_case *c = &cases[i];
		struct gv_redis_url u;
		struct gv_err err;
		gv_err_clear(&err);
		int rc = gv_redis_url_parse(c->url, &u, &err);
		if (!c->ok) {
			if (rc == 0)
				fail_msg("'%s' accepted", c->url);
			assert_int_equal(err.code, GV_EINVAL);
			continue;
		}
		if (rc != 0)
			fail_msg("'%s' rejected: %s", c->url, err.msg);
		assert_int_equal(u.is_unix, c->is_unix);
		assert_string_equal(c->is_unix ? u.path : u.host, c->host_or_path);
		assert_int_equal(u.port, c->port);
		assert_int_equal(u.db, c->db);
		assert_string_equal(u.user, c->user);
		assert_string_equal(u.password, c->password);
	}
}

static void redis_url__bad_url__error_never_shows_password(void **state)
{
	(void)state;
	const char *bad[] = {
		"redis://:topsecret@h:99999",
		"redis://:topsecret@h/zz",
		"redis://user:topsecret@",
		"unix://:topsecret@/tmp/s?db=x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gv_redis_url u;
		struct gv_err err;
		assert_int_equal(gv_redis_url_parse(bad[i], &u, &err), -1);
		if (strstr(err.msg, "topsecret"))
			fail_msg("error for '%s' shows the password: %s", bad[i], err.msg);
		assert_string_equal(u.password, "");
	}
}

struct sentinel_case {
	const char *url;
	const char *master;
	size_t n;
	const char *hosts[3];
	int ports[3];
	int db;
	const char *user;
	const char *password;
};

static const struct sentinel_case sentinel_cases[] = {
	{ "redis-sentinel://s1,s2,s3/gavel", "gavel", 3, { "s1", "s2", "s3" }, { 26379, 26379, 26379 }, 0, "", "" },
	{ "redis-sentinel://gavel-executor:pw@198.51.100.1:26380,[::1]/mymaster/2", "mymaster", 2,
	  { "198.51.100.1", "::1" }, { 26380, 26379 }, 2, "gavel-executor", "pw" },
	{ "redis-sentinel://:p%2Cw@h:1/m.a-s_t/", "m.a-s_t", 1, { "h" }, { 1 }, 0, "", "p,w" },
};

static void redis_url__sentinel__sentinels_master_and_db(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sentinel_cases) / sizeof(sentinel_cases[0]); i++) {
		const struct sentinel_case *c = &sentinel_cases[i];
		struct gv_redis_url u;
		struct gv_err err;
		if (gv_redis_url_parse(c->url, &u, &err) != 0)
			fail_msg("'%s' refused: %s", c->url, err.msg);
		assert_true(u.is_sentinel);
		assert_false(u.is_unix);
		assert_string_equal(u.master_name, c->master);
		assert_int_equal(u.n_sentinels, c->n);
		for (size_t k = 0; k < c->n; k++) {
			assert_string_equal(u.sentinels[k].host, c->hosts[k]);
			assert_int_equal(u.sentinels[k].port, c->ports[k]);
		}
		assert_int_equal(u.db, c->db);
		assert_string_equal(u.user, c->user);
		assert_string_equal(u.password, c->password);
		assert_string_equal(u.host, ""); /* resolved per connection */
	}
	const char *bad[] = {
		"redis-sentinel://s1,s2",          /* no master name */
		"redis-sentinel://s1/",            /* empty master name */
		"redis-sentinel:///m",             /* no Sentinel */
		"redis-sentinel://s1,,s2/m",       /* empty Sentinel */
		"redis-sentinel://s1,/m",          /* trailing comma */
		"redis-sentinel://s1:0/m",         /* port */
		"redis-sentinel://s1/m x",         /* master name character */
		"redis-sentinel://s1/m/db",        /* db */
		"redis-sentinel://s1/m/1/2",       /* extra path */
		"redis-sentinel://a,b,c,d,e,f,g,h,i/m", /* more than 8 */
		"redis-sentinel://s1/mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", /* 65 bytes */
		"redis-sentinel://:topsecret@s1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gv_redis_url u;
		struct gv_err err;
		if (gv_redis_url_parse(bad[i], &u, &err) == 0)
			fail_msg("'%s' accepted", bad[i]);
		assert_null(strstr(err.msg, "topsecret"));
	}
}

static void redis_url__sentinel_credentials__parsed_never_shown(void **state)
{
	(void)state;
	struct gv_redis_url u;
	struct gv_err err;
	assert_int_equal(gv_redis_url_parse("redis-sentinel://gavel-executor:pw@s1,s2/gavel/3?sentinel_password=s%26p", &u,
					    &err),
			 0);
	assert_string_equal(u.master_name, "gavel");
	assert_int_equal(u.db, 3);
	assert_string_equal(u.password, "pw");
	assert_string_equal(u.sentinel_user, "");
	assert_string_equal(u.sentinel_password, "s&p");
	assert_int_equal(gv_redis_url_parse("redis-sentinel://s1/m?sentinel_user=watch&sentinel_password=x", &u, &err), 0);
	assert_string_equal(u.master_name, "m");
	assert_int_equal(u.db, 0);
	assert_string_equal(u.sentinel_user, "watch");
	assert_string_equal(u.sentinel_password, "x");
	assert_int_equal(gv_redis_url_parse("redis-sentinel://s1/m", &u, &err), 0);
	assert_string_equal(u.sentinel_password, "");
	const char *bad[] = {
		"redis-sentinel://s1/m?sentinel_user=watch",              /* a user without a password */
		"redis-sentinel://s1/m?password=topsecret",              /* unknown parameter */
		"redis-sentinel://s1/m?sentinel_password",               /* no '=' */
		"redis-sentinel://s1/m?sentinel_password=top%zzsecret", /* bad encoding */
		"redis-sentinel://s1/m#x",
		"redis-sentinel://s1/?sentinel_password=topsecret",     /* no master name */
		"redis-sentinel://s1/m/x?sentinel_password=topsecret",  /* db */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (gv_redis_url_parse(bad[i], &u, &err) == 0)
			fail_msg("'%s' accepted", bad[i]);
		assert_null(strstr(err.msg, "topsecret"));
		assert_string_equal(u.sentinel_password, "");
	}
}

static void redis_url__readonly_reply__recognised(void **state)
{
	(void)state;
	redisReply ro = { .type = REDIS_REPLY_ERROR, .str = (char *)"READONLY You can't write against a read only replica.",
			  .len = 53 };
	redisReply other = { .type = REDIS_REPLY_ERROR, .str = (char *)"ERR wrong type", .len = 14 };
	redisReply status = { .type = REDIS_REPLY_STATUS, .str = (char *)"READONLY", .len = 8 };
	assert_true(gv_redis_reply_is_readonly(&ro));
	assert_false(gv_redis_reply_is_readonly(&other));
	assert_false(gv_redis_reply_is_readonly(&status));
	assert_false(gv_redis_reply_is_readonly(NULL));
}

static void redis_url__long_socket_path__rejected(void **state)
{
	(void)state;
	char url[300] = "unix://";
	size_t o = strlen(url);
	for (int i = 0; i < 20; i++)
		o += (size_t)snprintf(url + o, sizeof(url) - o, "/abcdefgh");
	struct gv_redis_url u;
	struct gv_err err;
	assert_int_equal(gv_redis_url_parse(url, &u, &err), -1);
	assert_int_equal(gv_redis_url_parse(NULL, &u, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(redis_url__table__parsed_or_rejected),
		cmocka_unit_test(redis_url__bad_url__error_never_shows_password),
		cmocka_unit_test(redis_url__long_socket_path__rejected),
		cmocka_unit_test(redis_url__sentinel__sentinels_master_and_db),
		cmocka_unit_test(redis_url__sentinel_credentials__parsed_never_shown),
		cmocka_unit_test(redis_url__readonly_reply__recognised),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
