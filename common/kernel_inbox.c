/* Byte budgets of kernels' command lists (kernel_inbox.h). The scripts run
 * inside Redis, atomically: a count and its list change together. */
#include "common/kernel_inbox.h"

#include <stdio.h>
#include <string.h>

#include "common/queue.h"

#define KINB_PREFIX "gavel:kinb:"
#define KINB_GLOBAL "gavel:kinb"
#define KIN_TTL_MS "86400000"

/* KEYS: list, model, tenant's counts, global counts. ARGV: element, kind
 * ('c' connection, 'k' command), kid, tenant, kernel cap, tenant cap,
 * global cap, element cap, list prefix, tenant counts prefix. A close of
 * a connection is never refused for bytes: it frees the kernel's side. */
static const char PUSH_LUA[] =
	"local n = string.len(ARGV[1]) "
	"local conn = ARGV[2] == 'c' "
	"local close = string.sub(ARGV[1], 1, 6) == 'close ' "
	"if conn and redis.call('EXISTS', KEYS[2]) == 0 then "
	"  if close then return 0 end "
	"  return -2 "
	"end "
	"if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[8]) then return -1 end "
	"if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HDEL', KEYS[3], ARGV[3]) end "
	"local kb = tonumber(redis.call('HGET', KEYS[3], ARGV[3]) or '0') "
	"local t = 0 "
	"local f = redis.call('HGETALL', KEYS[3]) "
	"for i = 1, #f, 2 do "
	"  if f[i] == ARGV[3] or redis.call('EXISTS', ARGV[9] .. f[i]) == 1 then t = t + tonumber(f[i + 1]) "
	"  else redis.call('HDEL', KEYS[3], f[i]) end "
	"end "
	"local g = 0 "
	"local gf = redis.call('HGETALL', KEYS[4]) "
	"for i = 1, #gf, 2 do "
	"  if gf[i] ~= ARGV[4] then "
	"    if redis.call('EXISTS', ARGV[10] .. gf[i]) == 1 then g = g + tonumber(gf[i + 1]) "
	"    else redis.call('HDEL', KEYS[4], gf[i]) end "
	"  end "
	"end "
	"if conn and not close then "
	"  if kb + n > tonumber(ARGV[5]) then return -1 end "
	"  if t + n > tonumber(ARGV[6]) then return -3 end "
	"  if g + t + n > tonumber(ARGV[7]) then return -4 end "
	"end "
	"local len = redis.call('RPUSH', KEYS[1], ARGV[1]) "
	"redis.call('PEXPIRE', KEYS[1], " KIN_TTL_MS ") "
	"redis.call('HINCRBY', KEYS[3], ARGV[3], n) "
	"redis.call('PEXPIRE', KEYS[3], " KIN_TTL_MS ") "
	"redis.call('HSET', KEYS[4], ARGV[4], t + n) "
	"return len";

/* KEYS: tenant's counts, global counts. ARGV: kid, tenant, bytes. */
static const char TAKE_LUA[] =
	"local n = tonumber(ARGV[3]) "
	"if redis.call('HINCRBY', KEYS[1], ARGV[1], -n) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end "
	"if redis.call('HINCRBY', KEYS[2], ARGV[2], -n) <= 0 or redis.call('EXISTS', KEYS[1]) == 0 then "
	"  redis.call('HDEL', KEYS[2], ARGV[2]) "
	"end "
	"return 0";

/* KEYS: list, model, tenant's counts, global counts. ARGV: kid, tenant. */
static const char DROP_LUA[] =
	"local v = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0') "
	"redis.call('HDEL', KEYS[3], ARGV[1]) "
	"redis.call('DEL', KEYS[1], KEYS[2]) "
	"if v > 0 and redis.call('HINCRBY', KEYS[4], ARGV[2], -v) <= 0 then redis.call('HDEL', KEYS[4], ARGV[2]) end "
	"if redis.call('EXISTS', KEYS[3]) == 0 then redis.call('HDEL', KEYS[4], ARGV[2]) end "
	"return 0";

static int key(char *buf, const char *prefix, const char *id)
{
	int n = snprintf(buf, GV_KIN_KEY_MAX, "%s%s", prefix, id);
	return n < 0 || n >= GV_KIN_KEY_MAX ? -1 : 0;
}

static void num(struct gv_kin_args *a, int i, unsigned long long v)
{
	snprintf(a->nums[i], sizeof(a->nums[i]), "%llu", v);
}

static void add(struct gv_kin_args *a, const char *s, size_t n)
{
	a->argv[a->argc] = s;
	a->lens[a->argc] = n;
	a->argc++;
}

static void adds(struct gv_kin_args *a, const char *s)
{
	add(a, s, strlen(s));
}

/* EVAL <script> <nkeys>, with the key count in nums[0]. */
static void eval_head(struct gv_kin_args *a, const char *script, size_t len, int nkeys)
{
	a->argc = 0;
	num(a, 0, (unsigned long long)nkeys);
	adds(a, "EVAL");
	add(a, script, len);
	adds(a, a->nums[0]);
}

static int tenant_keys(struct gv_kin_args *a, const char *tenant, const char *kid)
{
	return key(a->keys[0], GV_QUEUE_KIN_PREFIX, kid) | key(a->keys[1], GV_QUEUE_KSTATE_PREFIX, kid) |
	       key(a->keys[2], KINB_PREFIX, tenant);
}

int gv_kin_push_args(struct gv_kin_args *a, const char *tenant, const char *kid, enum gv_kin_kind kind,
		     const void *el, size_t n)
{
	if (tenant_keys(a, tenant, kid) != 0)
		return -1;
	eval_head(a, PUSH_LUA, sizeof(PUSH_LUA) - 1, 4);
	for (int i = 0; i < 3; i++)
		adds(a, a->keys[i]);
	adds(a, KINB_GLOBAL);
	add(a, el, n);
	adds(a, kind == GV_KIN_CONNECTION ? "c" : "k");
	adds(a, kid);
	adds(a, tenant);
	num(a, 1, GV_KIN_KERNEL_BYTES);
	num(a, 2, GV_KIN_TENANT_BYTES);
	num(a, 3, GV_KIN_GLOBAL_BYTES);
	num(a, 4, GV_KIN_ELEMENTS_MAX);
	for (int i = 1; i <= 4; i++)
		adds(a, a->nums[i]);
	adds(a, GV_QUEUE_KIN_PREFIX);
	adds(a, KINB_PREFIX);
	return 0;
}

int gv_kin_take_args(struct gv_kin_args *a, const char *tenant, const char *kid, size_t n)
{
	if (key(a->keys[2], KINB_PREFIX, tenant) != 0 || strlen(kid) >= GV_KIN_KEY_MAX)
		return -1;
	eval_head(a, TAKE_LUA, sizeof(TAKE_LUA) - 1, 2);
	adds(a, a->keys[2]);
	adds(a, KINB_GLOBAL);
	adds(a, kid);
	adds(a, tenant);
	num(a, 1, (unsigned long long)n);
	adds(a, a->nums[1]);
	return 0;
}

int gv_kin_drop_args(struct gv_kin_args *a, const char *tenant, const char *kid)
{
	if (tenant_keys(a, tenant, kid) != 0)
		return -1;
	eval_head(a, DROP_LUA, sizeof(DROP_LUA) - 1, 4);
	for (int i = 0; i < 3; i++)
		adds(a, a->keys[i]);
	adds(a, KINB_GLOBAL);
	adds(a, kid);
	adds(a, tenant);
	return 0;
}
