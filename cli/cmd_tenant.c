/* `gavel tenant`: operator commands on tenants and their quotas, as the
 * owner role. Thin: tenants/admin.c does the work and writes the audit
 * records; this file parses flags, prints, and publishes the scheduling
 * config to Redis after a change commits. */
#include "cli/commands.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db.h"
#include "cli/local_stack.h"
#include "cli/tenant_kernels.h"
#include "common/json.h"
#include "common/pg.h"
#include "common/redis.h"
#include "tenants/admin.h"
#include "tenants/egress.h"
#include "tenants/kernel_live.h"
#include "tenants/kernel_warm.h"
#include "tenants/quota.h"
#include "tenants/retention.h"

#define MAX_SETTINGS 64

static void tenant_usage(FILE *out)
{
	fprintf(out,
		"usage: gavel tenant SUBCOMMAND [OPTIONS]\n"
		"\n"
		"  create NAME [--weight N]             new tenant with default quotas\n"
		"  list                                 every tenant\n"
		"  show NAME|ID                         tenant, quota and keys as JSON\n"
		"  update NAME|ID --quota KEY=VALUE...  change quotas (repeat --quota)\n"
		"  disable NAME|ID / enable NAME|ID     its keys answer 403 within 1 s; disable also stops its kernels\n"
		"  sync                                 republish every tenant's scheduling\n"
		"                                       config to Redis (after a flush)\n"
		"  retention [NAME|ID]                  delete finished submissions older than\n"
		"                                       the retention period (audit kept)\n"
		"  webhook-secret NAME|ID [--rotate]    print the hex key of the webhooks'\n"
		"                                       X-Gavel-Signature (HMAC-SHA256); --rotate\n"
		"                                       replaces it\n"
		"  kernels NAME|ID                      its notebook kernels queued or running now,\n"
		"                                       with budgets and nodes, as JSON\n"
		"  kernels-warm NAME|ID                 its requests for notebook kernels started\n"
		"                                       ahead, not yet ended, as JSON\n"
		"  kernels-warm NAME|ID --kernels N [--from TIME] --until TIME\n"
		"                                       keep N kernels of its shape started ahead on\n"
		"                                       the kernel nodes from TIME (default now) until\n"
		"                                       TIME (a class at 9:00: --from '2026-12-07\n"
		"                                       08:55+01' --until '2026-12-07 09:20+01');\n"
		"                                       at most max_kernels, 12 h, 16 pending\n"
		"  kernels-warm NAME|ID --cancel ID     end that request now\n"
		"\n"
		"Quota keys: requests_per_second burst max_queued max_running max_cpu_ms\n"
		"max_wall_ms max_memory_mb max_output_kb allowed_languages (comma list, '*'\n"
		"= all) max_gpus egress_policy (JSON) retention_days weight allow_query_key\n"
		"cors_origins (comma list, '*' = any).\n"
		"Public playground (docs/USING.md, \"Public playgrounds\"; off by default):\n"
		"playground (true|false: anonymous access under /playground/NAME/),\n"
		"token_capability (true|false: a submission's id reads it there without a key),\n"
		"playground_rps playground_burst (per client address) playground_max_queued,\n"
		"playground_read_rps (reads of a submission per client address and second).\n"
		"browser_clients (true|false, off by default: keys in the query string on every\n"
		"route, and a submission's id reads it at the root paths without a key; for\n"
		"clients that cannot send a key header: docs/USING.md).\n"
		"Notebook kernels: max_kernels kernels_per_minute kernel_idle_s\n"
		"kernel_lifetime_s (seconds, at most 43200) kernel_memory_mb kernel_cpu_pct.\n"
		"\n"
		"Egress (update): network for the tenant's sandboxes, none by default.\n"
		"  --egress-allow DEST[,DEST...]  allow [tcp:|udp:]ADDR[/N]:PORT[-PORT] or\n"
		"                                 HOST:PORT (resolved by the executor at\n"
		"                                 sandbox start); repeatable\n"
		"  --egress-rate KBIT             shaping in both directions (required with\n"
		"  --egress-up KBIT               an allow list, or both of up = sandbox to\n"
		"  --egress-down KBIT             world and down = world to sandbox)\n"
		"  --egress-none                  no network at all\n"
		"Private, loopback, link-local and metadata addresses are always refused.\n"
		"\n"
		"  --database-url URL  owner role's URL [env GAVEL_DATABASE_URL, else make run's]\n"
		"  --redis-url URL     Redis for the scheduler config [env GAVEL_REDIS_URL, else make run's]\n");
}

struct opts {
	const char *db_url;
	const char *redis_url;
	int weight;
	bool rotate;
	const char *settings[MAX_SETTINGS];
	size_t n_settings;
	/* Egress options, turned into one egress_policy setting. */
	const char *egress_allow[MAX_SETTINGS];
	size_t n_egress_allow;
	long egress_rate, egress_up, egress_down;
	bool egress_none;
	/* kernels-warm */
	long warm_kernels;
	const char *warm_from, *warm_until;
	long long warm_cancel;
};

static bool has_egress_opts(const struct opts *o)
{
	return o->n_egress_allow || o->egress_rate || o->egress_up || o->egress_down || o->egress_none;
}

/* The egress_policy JSON of the --egress-* options (a new string, or NULL
 * with a message printed). jansson builds it, so no option text can break
 * out of its string; tenant_quota_set validates the grammar. */
static char *egress_policy_json(const struct opts *o)
{
	if (o->egress_none) {
		if (o->n_egress_allow || o->egress_rate || o->egress_up || o->egress_down) {
			fprintf(stderr, "gavel tenant: --egress-none takes no other --egress option\n");
			return NULL;
		}
		return strdup("{\"mode\":\"none\"}");
	}
	json_t *allow = json_array();
	json_t *p = json_pack("{s:s}", "mode", "allowlist");
	char *out = NULL;
	if (!allow || !p)
		goto out;
	for (size_t i = 0; i < o->n_egress_allow; i++) {
		const char *s = o->egress_allow[i];
		while (*s) {
			size_t len = strcspn(s, ",");
			if (len > 0 && json_array_append_new(allow, json_stringn(s, len)) != 0)
				goto out;
			s += len + (s[len] == ',');
		}
	}
	if (json_object_set(p, "allow", allow) != 0 ||
	    (o->egress_rate && json_object_set_new(p, "rate_kbit", json_integer(o->egress_rate)) != 0) ||
	    (o->egress_up && json_object_set_new(p, "egress_kbit", json_integer(o->egress_up)) != 0) ||
	    (o->egress_down && json_object_set_new(p, "ingress_kbit", json_integer(o->egress_down)) != 0))
		goto out;
	out = json_dumps(p, JSON_COMPACT);
out:
	json_decref(allow);
	json_decref(p);
	if (!out)
		fprintf(stderr, "gavel tenant: out of memory\n");
	return out;
}

static int parse_kbit(const char *name, const char *arg, long *out)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (*end || v < 1 || v > TENANT_EGRESS_KBIT_MAX) {
		fprintf(stderr, "gavel tenant: %s takes 1..%d (kbit/s)\n", name, TENANT_EGRESS_KBIT_MAX);
		return -1;
	}
	*out = v;
	return 0;
}

static PGconn *connect_db(const struct opts *o)
{
	if (cli_db_url_check("gavel tenant", o->db_url) < 0)
		return NULL;
	return cli_db_connect("gavel tenant", o->db_url, false);
}

/* Publishes after a committed change; returns the exit status. */
static int publish(const struct opts *o, const char *tenant_id, const struct tenant_quota *q, bool disabled)
{
	if (!o->redis_url || !o->redis_url[0]) {
		fprintf(stderr, "gavel tenant: warning: GAVEL_REDIS_URL not set; the scheduler's copy of the "
				"config was not updated (run `gavel tenant sync` with it)\n");
		return 0;
	}
	struct gv_err err;
	struct gv_redis_opts ro = { .url = o->redis_url, .max_attempts = 2 };
	struct gv_redis *r = gv_redis_new(&ro, &err);
	int rc = r ? tenant_sched_cfg_publish(r, tenant_id, q, disabled, &err) : -1;
	gv_redis_free(r);
	if (rc != 0) {
		fprintf(stderr, "gavel tenant: the change is committed, but publishing it to Redis failed: %s; "
				"run `gavel tenant sync`\n", err.msg);
		return 1;
	}
	return 0;
}

static int do_create(PGconn *c, const struct opts *o, const char *name)
{
	struct gv_err err;
	struct tenant_info t;
	struct tenant_quota q;
	char actor[128];
	tenant_operator_actor(actor, sizeof(actor));
	if (tenant_create(c, name, o->weight, actor, &t, &q, &err) != 0) {
		fprintf(stderr, "gavel tenant: %s\n", err.msg);
		return 1;
	}
	printf("%s\t%s\n", t.id, t.name);
	return publish(o, t.id, &q, false);
}

static int do_list(PGconn *c)
{
	struct gv_err err;
	struct tenant_info *v;
	size_t n;
	if (tenant_list(c, &v, &n, &err) != 0) {
		fprintf(stderr, "gavel tenant: %s\n", err.msg);
		return 1;
	}
	printf("%-36s  %-24s  %-8s  %s\n", "ID", "NAME", "STATE", "CREATED");
	for (size_t i = 0; i < n; i++)
		printf("%-36s  %-24s  %-8s  %s\n", v[i].id, v[i].name, v[i].disabled ? "disabled" : "active",
		       v[i].created_at);
	free(v);
	return 0;
}

static int do_show(PGconn *c, const struct tenant_info *t)
{
	struct gv_err err;
	struct tenant_quota q;
	struct tenant_key_info *keys = NULL;
	size_t nkeys = 0;
	if (tenant_quota_load(c, t->id, &q, &err) != 0 || tenant_key_list(c, t->id, &keys, &nkeys, &err) != 0) {
		fprintf(stderr, "gavel tenant: %s\n", err.msg);
		return 1;
	}
	json_t *jk = json_array();
	for (size_t i = 0; jk && i < nkeys; i++)
		json_array_append_new(jk, json_pack("{s:s, s:s, s:s, s:s*, s:s*}", "id", keys[i].id, "label",
						    keys[i].label, "created_at", keys[i].created_at, "expires_at",
						    keys[i].expires_at[0] ? keys[i].expires_at : NULL, "revoked_at",
						    keys[i].revoked_at[0] ? keys[i].revoked_at : NULL));
	free(keys);
	json_t *j = json_pack("{s:s, s:s, s:b, s:s, s:o*, s:o*}", "id", t->id, "name", t->name, "disabled",
			      t->disabled, "created_at", t->created_at, "quota", tenant_quota_to_json(&q), "keys", jk);
	char *s = j ? gv_json_dump(j, JSON_INDENT(2), 1 << 20, NULL, &err) : NULL;
	json_decref(j);
	if (!s) {
		fprintf(stderr, "gavel tenant: could not format the tenant\n");
		return 1;
	}
	printf("%s\n", s);
	free(s);
	return 0;
}

static int do_update(PGconn *c, const struct opts *o, const struct tenant_info *t)
{
	/* The --quota settings and those of --weight and --egress-*, here:
	 * wbuf and egress live only as long as this call. */
	const char *settings[MAX_SETTINGS];
	size_t n = o->n_settings;
	memcpy(settings, o->settings, n * sizeof(*settings));
	char wbuf[32];
	if (o->weight > 0 && n < MAX_SETTINGS) {
		snprintf(wbuf, sizeof(wbuf), "weight=%d", o->weight);
		settings[n++] = wbuf;
	}
	char *egress = NULL;
	if (has_egress_opts(o)) {
		char *json = egress_policy_json(o);
		if (!json || n >= MAX_SETTINGS || asprintf(&egress, "egress_policy=%s", json) < 0) {
			free(json);
			return 2;
		}
		free(json);
		settings[n++] = egress;
	}
	if (n == 0) {
		fprintf(stderr, "gavel tenant update: nothing to change: pass --quota KEY=VALUE\n");
		return 2;
	}
	struct gv_err err;
	struct tenant_quota q;
	char actor[128];
	tenant_operator_actor(actor, sizeof(actor));
	int rc = tenant_update_quota(c, t->id, settings, n, actor, &q, &err);
	free(egress);
	if (rc != 0) {
		fprintf(stderr, "gavel tenant: %s\n", err.msg);
		return 1;
	}
	return publish(o, t->id, &q, t->disabled);
}

static int do_set_disabled(PGconn *c, const struct opts *o, const struct tenant_info *t, bool disabled)
{
	struct gv_err err;
	struct tenant_quota q;
	char actor[128];
	tenant_operator_actor(actor, sizeof(actor));
	if (tenant_set_disabled(c, t->id, disabled, actor, &err) != 0 || tenant_quota_load(c, t->id, &q, &err) != 0) {
		fprintf(stderr, "gavel tenant: %s\n", err.msg);
		return 1;
	}
	printf("%s %s\n", t->name, disabled ? "disabled" : "enabled");
	int rc = publish(o, t->id, &q, disabled);
	if (disabled && cli_tenant_kernels_stop(c, o->redis_url, t->id, actor) != 0)
		rc = 1;
	return rc;
}

static int do_sync(PGconn *c, const struct opts *o)
{
	if (!o->redis_url || !o->redis_url[0]) {
		cli_setting_missing("gavel tenant sync", "no Redis URL", "--redis-url", CLI_REDIS_URL);
		return 2;
	}
	struct gv_err err;
	struct gv_redis_opts ro = { .url = o->redis_url, .max_attempts = 2 };
	struct gv_redis *r = gv_redis_new(&ro, &err);
	int count = 0;
	int rc = r ? tenant_sched_cfg_publish_all(c, r, &count, &err) : -1;
	gv_redis_free(r);
	if (rc != 0) {
		fprintf(stderr, "gavel tenant sync: %s\n", err.msg);
		return 1;
	}
	printf("published the scheduling config of %d tenant(s)\n", count);
	return 0;
}

static int do_retention(PGconn *c, const struct tenant_info *t)
{
	struct gv_err err;
	struct tenant_retention_report rep;
	char actor[128];
	tenant_operator_actor(actor, sizeof(actor));
	if (tenant_retention_run(c, t ? t->id : NULL, actor, &rep, &err) != 0) {
		fprintf(stderr, "gavel tenant retention: %s\n", err.msg);
		return 1;
	}
	printf("retention: %d tenant(s) examined, %lld submission(s) deleted\n", rep.tenants, (long long)rep.deleted);
	return 0;
}

static int do_webhook_secret(PGconn *c, const struct opts *o, const struct tenant_info *t)
{
	struct gv_err err;
	char hex[2 * TENANT_WEBHOOK_SECRET_MAX + 1];
	int rc = tenant_webhook_secret(c, t->id, o->rotate, hex, sizeof(hex), &err) == 0 ? 0 : 1;
	if (rc == 0)
		printf("%s\n", hex);
	else
		fprintf(stderr, "gavel tenant: %s\n", err.msg);
	return rc;
}

/* Parses the flags after the subcommand (argv[0]) into o: -1 to go on,
 * else the exit status. */
static int tenant_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "database-url", required_argument, NULL, 'u' }, { "redis-url", required_argument, NULL, 'r' },
		{ "weight", required_argument, NULL, 'w' },	  { "quota", required_argument, NULL, 'q' },
		{ "rotate", no_argument, NULL, 'R' },		  { "help", no_argument, NULL, 'h' },
		{ "egress-allow", required_argument, NULL, 'A' }, { "egress-rate", required_argument, NULL, 'B' },
		{ "egress-up", required_argument, NULL, 'U' },	  { "egress-down", required_argument, NULL, 'D' },
		{ "egress-none", no_argument, NULL, 'N' },
		{ "kernels", required_argument, NULL, 'K' },	  { "from", required_argument, NULL, 'F' },
		{ "until", required_argument, NULL, 'T' },	  { "cancel", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			o->db_url = optarg;
			break;
		case 'r':
			o->redis_url = optarg;
			break;
		case 'w': {
			char *end;
			long w = strtol(optarg, &end, 10);
			if (*end || w < 1 || w > 10000) {
				fprintf(stderr, "gavel tenant: --weight takes 1..10000\n");
				return 2;
			}
			o->weight = (int)w;
			break;
		}
		case 'q':
			if (o->n_settings >= MAX_SETTINGS) {
				fprintf(stderr, "gavel tenant: too many --quota settings\n");
				return 2;
			}
			o->settings[o->n_settings++] = optarg;
			break;
		case 'R':
			o->rotate = true;
			break;
		case 'A':
			if (o->n_egress_allow >= MAX_SETTINGS) {
				fprintf(stderr, "gavel tenant: too many --egress-allow options\n");
				return 2;
			}
			o->egress_allow[o->n_egress_allow++] = optarg;
			break;
		case 'B':
		case 'U':
		case 'D':
			if (parse_kbit(c == 'B' ? "--egress-rate" : c == 'U' ? "--egress-up" : "--egress-down", optarg,
				       c == 'B' ? &o->egress_rate : c == 'U' ? &o->egress_up : &o->egress_down) != 0)
				return 2;
			break;
		case 'N':
			o->egress_none = true;
			break;
		case 'K':
		case 'C': {
			char *end;
			long long v = strtoll(optarg, &end, 10);
			if (*end || v < 1 || (c == 'K' && v > TENANT_KERNEL_WARM_MAX_KERNELS)) {
				fprintf(stderr, "gavel tenant: %s takes %s\n", c == 'K' ? "--kernels" : "--cancel",
					c == 'K' ? "1..256" : "a request id");
				return 2;
			}
			if (c == 'K')
				o->warm_kernels = (long)v;
			else
				o->warm_cancel = v;
			break;
		}
		case 'F':
			o->warm_from = optarg;
			break;
		case 'T':
			o->warm_until = optarg;
			break;
		case 'h':
			tenant_usage(stdout);
			return 0;
		default:
			tenant_usage(stderr);
			return 2;
		}
	}
	return -1;
}

/* Prints v (taken; NULL: err says why) indented: the exit status. */
static int print_json(json_t *v, const struct gv_err *err)
{
	if (!v) {
		fprintf(stderr, "gavel tenant: %s\n", err->msg);
		return 1;
	}
	char *text = json_dumps(v, JSON_INDENT(2));
	json_decref(v);
	if (!text) {
		fprintf(stderr, "gavel tenant: out of memory\n");
		return 1;
	}
	puts(text);
	free(text);
	return 0;
}

/* kernels-warm: a request added (--kernels), one ended (--cancel), or the
 * list. */
static int do_kernels_warm(PGconn *c, const struct opts *o, const struct tenant_info *t)
{
	struct gv_err err;
	char actor[128];
	tenant_operator_actor(actor, sizeof(actor));
	if (o->warm_kernels && o->warm_cancel) {
		fprintf(stderr, "gavel tenant kernels-warm: --kernels or --cancel, not both\n");
		return 2;
	}
	if (o->warm_kernels) {
		if (!o->warm_until) {
			fprintf(stderr, "gavel tenant kernels-warm: --kernels needs --until\n");
			return 2;
		}
		long long id;
		if (tenant_kernel_warm_add(c, t->id, o->warm_kernels, o->warm_from ? o->warm_from : "now",
					   o->warm_until, actor, &id, &err) != 0) {
			fprintf(stderr, "gavel tenant: %s\n", err.msg);
			return 1;
		}
		printf("%lld\n", id);
		return 0;
	}
	if (o->warm_from || o->warm_until) {
		fprintf(stderr, "gavel tenant kernels-warm: --from and --until go with --kernels\n");
		return 2;
	}
	if (o->warm_cancel) {
		if (tenant_kernel_warm_cancel(c, t->id, o->warm_cancel, actor, &err) != 0) {
			fprintf(stderr, "gavel tenant: %s\n", err.msg);
			return 1;
		}
		printf("request %lld of %s ended\n", o->warm_cancel, t->name);
		return 0;
	}
	return print_json(tenant_kernel_warm_list(c, t->id, &err), &err);
}

/* kernels: the tenant's kernels of the moment. */
static int do_kernels(PGconn *c, const struct tenant_info *t)
{
	struct gv_err err;
	return print_json(tenant_kernels_live(c, t->id, &err), &err);
}

/* Whether sub is a subcommand and npos the number of names it takes: -1 to
 * go on, else the exit status. */
static int tenant_check_args(const char *sub, int npos)
{
	int want_name = strcmp(sub, "create") == 0 || strcmp(sub, "show") == 0 || strcmp(sub, "update") == 0 ||
			strcmp(sub, "disable") == 0 || strcmp(sub, "enable") == 0 || strcmp(sub, "webhook-secret") == 0 ||
			strcmp(sub, "kernels-warm") == 0 || strcmp(sub, "kernels") == 0;
	int opt_name = strcmp(sub, "retention") == 0;
	int no_name = strcmp(sub, "list") == 0 || strcmp(sub, "sync") == 0;
	if (!want_name && !opt_name && !no_name) {
		fprintf(stderr, "gavel tenant: unknown subcommand '%.64s'\n", sub);
		tenant_usage(stderr);
		return 2;
	}
	if ((want_name && npos != 1) || (opt_name && npos > 1) || (no_name && npos != 0)) {
		fprintf(stderr, "gavel tenant %s: wrong number of arguments\n", sub);
		tenant_usage(stderr);
		return 2;
	}
	return -1;
}

/* Runs the subcommand; a named tenant is looked up first. */
static int tenant_dispatch(PGconn *conn, const char *sub, struct opts *o, char **pos, int npos)
{
	struct tenant_info t;
	struct gv_err err;
	if (strcmp(sub, "create") == 0)
		return do_create(conn, o, pos[0]);
	if (strcmp(sub, "list") == 0)
		return do_list(conn);
	if (strcmp(sub, "sync") == 0)
		return do_sync(conn, o);
	/* tenant_check_args let only retention go without a name. */
	if (npos == 0)
		return do_retention(conn, NULL);
	if (tenant_find(conn, pos[0], &t, &err) != 0) {
		fprintf(stderr, "gavel tenant: %s\n", err.msg);
		return 1;
	}
	if (strcmp(sub, "show") == 0)
		return do_show(conn, &t);
	if (strcmp(sub, "update") == 0)
		return do_update(conn, o, &t);
	if (strcmp(sub, "disable") == 0 || strcmp(sub, "enable") == 0)
		return do_set_disabled(conn, o, &t, strcmp(sub, "disable") == 0);
	if (strcmp(sub, "webhook-secret") == 0)
		return do_webhook_secret(conn, o, &t);
	if (strcmp(sub, "kernels-warm") == 0)
		return do_kernels_warm(conn, o, &t);
	if (strcmp(sub, "kernels") == 0)
		return do_kernels(conn, &t);
	return do_retention(conn, &t);
}

int cli_cmd_tenant(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		tenant_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *sub = argv[1];
	struct opts o = { .db_url = cli_setting(CLI_DATABASE_URL), .redis_url = cli_setting(CLI_REDIS_URL) };
	int rc = tenant_args(argc - 1, argv + 1, &o);
	if (rc >= 0)
		return rc;
	char **pos = argv + 1 + optind;
	int npos = argc - 1 - optind;
	rc = tenant_check_args(sub, npos);
	if (rc >= 0)
		return rc;
	PGconn *conn = connect_db(&o);
	if (!conn)
		return 1;
	rc = tenant_dispatch(conn, sub, &o, pos, npos);
	PQfinish(conn);
	return rc;
}
