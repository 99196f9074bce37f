/* `gavel key`: create, list and revoke a tenant's API keys, as the owner
 * role. `key create` prints the new key alone on stdout (scripts capture
 * it); it is shown this once and stored only as a hash. */
#include "cli/commands.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db.h"
#include "cli/local_stack.h"
#include "common/pg.h"
#include "tenants/admin.h"
#include "tenants/key.h"

static void key_usage(FILE *out)
{
	fprintf(out,
		"usage: gavel key SUBCOMMAND [OPTIONS]\n"
		"\n"
		"  create --tenant NAME [--label L] [--expires DATE]   prints the key alone\n"
		"  list --tenant NAME                                   id, label, dates, state\n"
		"  revoke ID                                            stops working within 1 s\n"
		"\n"
		"  --database-url URL  owner role's URL [env GAVEL_DATABASE_URL, else make run's]\n"
		"Keys are hashed with the pepper in env " TENANT_KEY_PEPPER_ENV " when set\n"
		"(it must match the frontends' auth.key_pepper).\n");
}

static int key_create(PGconn *conn, const struct tenant_info *t, const char *label, const char *expires,
		      const struct tenant_pepper *pepper, const char *actor)
{
	struct gv_err err;
	char key[TENANT_KEY_BUF];
	struct tenant_key_info info;
	if (tenant_key_create(conn, t->id, label, expires, pepper, actor, key, &info, &err) != 0) {
		fprintf(stderr, "gavel key: %s\n", err.msg);
		return 1;
	}
	printf("%s\n", key);
	fflush(stdout);
	memset(key, 0, sizeof(key));
	fprintf(stderr, "key %s created for tenant %s%s%s; it is shown only this once\n", info.id, t->name,
		info.expires_at[0] ? ", expires " : "", info.expires_at);
	return 0;
}

static int key_list(PGconn *conn, const struct tenant_info *t)
{
	struct gv_err err;
	struct tenant_key_info *v;
	size_t n;
	if (tenant_key_list(conn, t->id, &v, &n, &err) != 0) {
		fprintf(stderr, "gavel key: %s\n", err.msg);
		return 1;
	}
	printf("%-36s  %-8s  %-20s  %-20s  %s\n", "ID", "STATE", "CREATED", "EXPIRES", "LABEL");
	for (size_t i = 0; i < n; i++)
		printf("%-36s  %-8s  %-20s  %-20s  %s\n", v[i].id, v[i].revoked_at[0] ? "revoked" : "active",
		       v[i].created_at, v[i].expires_at[0] ? v[i].expires_at : "never", v[i].label);
	free(v);
	return 0;
}

static int key_revoke(PGconn *conn, const char *id, const char *actor)
{
	struct gv_err err;
	struct tenant_key_info info;
	if (tenant_key_revoke(conn, id, actor, &info, &err) != 0) {
		fprintf(stderr, "gavel key: %s\n", err.msg);
		return 1;
	}
	printf("key %s revoked at %s\n", info.id, info.revoked_at);
	return 0;
}

int cli_cmd_key(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		key_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *sub = argv[1];
	static const struct option longopts[] = {
		{ "database-url", required_argument, NULL, 'u' }, { "tenant", required_argument, NULL, 't' },
		{ "label", required_argument, NULL, 'l' },	  { "expires", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },		  { NULL, 0, NULL, 0 },
	};
	const char *url = cli_setting(CLI_DATABASE_URL), *tenant = NULL, *label = NULL, *expires = NULL;
	int c;
	optind = 0;
	while ((c = getopt_long(argc - 1, argv + 1, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 't':
			tenant = optarg;
			break;
		case 'l':
			label = optarg;
			break;
		case 'e':
			expires = optarg;
			break;
		case 'h':
			key_usage(stdout);
			return 0;
		default:
			key_usage(stderr);
			return 2;
		}
	}
	char **pos = argv + 1 + optind;
	int npos = argc - 1 - optind;
	int is_create = strcmp(sub, "create") == 0, is_list = strcmp(sub, "list") == 0,
	    is_revoke = strcmp(sub, "revoke") == 0;
	if (!is_create && !is_list && !is_revoke) {
		fprintf(stderr, "gavel key: unknown subcommand '%.64s'\n", sub);
		key_usage(stderr);
		return 2;
	}
	if ((is_revoke && npos != 1) || (!is_revoke && npos != 0) || (!is_revoke && !tenant)) {
		fprintf(stderr, "gavel key %s: %s\n", sub, is_revoke ? "expects one key ID" : "--tenant NAME is required");
		key_usage(stderr);
		return 2;
	}
	if (cli_db_url_check("gavel key", url) < 0)
		return 2;
	struct gv_err err;
	struct tenant_pepper pepper;
	if (is_create && tenant_pepper_from_env(&pepper, &err) != 0) {
		fprintf(stderr, "gavel key: %s\n", err.msg);
		return 2;
	}
	PGconn *conn = cli_db_connect("gavel key", url, false);
	if (!conn)
		return 1;
	int rc = 1;
	char actor[128];
	tenant_operator_actor(actor, sizeof(actor));
	struct tenant_info t;
	if (!is_revoke && tenant_find(conn, tenant, &t, &err) != 0)
		fprintf(stderr, "gavel key: %s\n", err.msg);
	else if (is_create)
		rc = key_create(conn, &t, label, expires, &pepper, actor);
	else if (is_list)
		rc = key_list(conn, &t);
	else
		rc = key_revoke(conn, pos[0], actor);
	PQfinish(conn);
	return rc;
}
