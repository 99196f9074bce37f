/* Stored problems on the executor (executor/problems/problem_store.h): the
 * import queue over PostgreSQL and the package folders built from the test-data
 * cache. */
#include "executor/problems/problem_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "common/json.h"
#include "common/queue.h"
#include "executor/judge/problem.h"
#include "tenants/db.h"

#define PATH_DEPTH_MAX 32
#define WALK_FILES_MAX 100000
/* One stored file; PostgreSQL's bytea stops at 1 GiB anyway. */
#define FILE_MAX (1024u * 1024u * 1024u)

bool exec_problem_path_ok(const char *rel)
{
	size_t len = strlen(rel), comp = 0, depth = 0;
	if (len == 0 || len > 4096 || rel[0] == '/' || rel[len - 1] == '/')
		return false;
	for (size_t i = 0; i <= len; i++) {
		char ch = rel[i];
		if (ch == '/' || ch == '\0') {
			const char *s = rel + i - comp;
			if (comp == 0 || (comp == 1 && s[0] == '.') || (comp == 2 && s[0] == '.' && s[1] == '.'))
				return false;
			if (++depth > PATH_DEPTH_MAX)
				return false;
			comp = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
		      ch == '_' || ch == '-' || ch == '+'))
			return false;
		comp++;
	}
	return true;
}

/* ---- removing a tree through dirfds ---- */

int exec_problem_remove_tree(const char *path, struct gv_err *err)
{
	return gv_remove_tree_at(AT_FDCWD, path, err);
}

/* ---- PostgreSQL with binary parameters and results ---- */

/* One statement; formats[i] 1 = binary parameter. result_binary asks for
 * binary columns (bytea as raw bytes). Returns the result (caller clears)
 * or NULL with err. */
static PGresult *pg_bin(PGconn *c, const char *sql, int n, const char *const *vals, const int *lens,
			const int *formats, int result_binary, struct gv_err *err)
{
	PGresult *res = PQexecParams(c, sql, n, NULL, vals, lens, formats, result_binary);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
		return res;
	const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(c);
	gv_err_set(err, GV_EDB, "%.*s", (int)strcspn(msg, "\n"), msg);
	PQclear(res);
	return NULL;
}

static void publish_done(const struct exec_problem_env *env, const char *problem_id)
{
	if (!env->r)
		return;
	struct gv_err err;
	redisReply *rep = gv_redis_command(env->r, &err, "PUBLISH %s %s", GV_QUEUE_DONE_CHANNEL, problem_id);
	if (!rep)
		gv_warn(env->log, "notifying waiters of problem %s: %s", problem_id, err.msg);
	gv_redis_reply_free(rep);
}

/* Ends an import with a final status (ready is written by store_package). */
static int finish(const struct exec_problem_env *env, const char *tid, const char *pid, const char *ver,
		  const char *status, const char *message, struct gv_err *err)
{
	if (gv_pg_ensure(env->pg, err) != 0)
		return -1;
	PGconn *c = gv_pg_conn(env->pg);
	if (tenant_tx_begin(c, tid, err) != 0)
		return -1;
	const char *p[] = { tid, pid, ver, status, message };
	if (gv_pg_exec(c,
		       "UPDATE problem_versions SET status = $4, message = left($5, 16000), archive = NULL, "
		       "imported_at = now(), claimed_until = NULL "
		       "WHERE tenant_id = $1::uuid AND problem_id = $2 AND version = $3::int AND status = 'pending'",
		       5, p, err) != 0 ||
	    tenant_tx_commit(c, err) != 0) {
		tenant_tx_rollback(c);
		return -1;
	}
	return 0;
}

/* A short lease after our own failure, so the retry comes soon. */
static void retry_soon(const struct exec_problem_env *env, const char *tid, const char *pid, const char *ver)
{
	struct gv_err err;
	if (gv_pg_ensure(env->pg, &err) != 0)
		return;
	PGconn *c = gv_pg_conn(env->pg);
	const char *p[] = { tid, pid, ver };
	if (tenant_tx_begin(c, tid, &err) != 0 ||
	    gv_pg_exec(c,
		       "UPDATE problem_versions SET claimed_until = now() + interval '20 seconds' "
		       "WHERE tenant_id = $1::uuid AND problem_id = $2 AND version = $3::int AND status = 'pending'",
		       3, p, &err) != 0 ||
	    tenant_tx_commit(c, &err) != 0)
		tenant_tx_rollback(c);
}

/* ---- walking an imported package ---- */

struct walked_file {
	char *rel;
	uint64_t size;
	unsigned char hash[EXEC_SHA256_LEN];
};

struct walk {
	struct walked_file *v;
	size_t n, cap;
	uint64_t bytes;
	char bad[256]; /* the first path we refuse to store */
};

static int read_fd_all(int fd, uint64_t size, char **out, struct gv_err *err)
{
	if (size > FILE_MAX)
		return gv_err_set(err, GV_ELIMIT, "file over %u bytes", FILE_MAX);
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return gv_err_set(err, ENOMEM, "out of memory");
	for (uint64_t off = 0; off < size;) {
		ssize_t n = pread(fd, buf + off, size - off, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? gv_err_errno(err, "read") : gv_err_set(err, GV_EPROTO, "file shrank while read");
		}
		off += (uint64_t)n;
	}
	*out = buf;
	return 0;
}

static int walk_dir(int dirfd, const char *prefix, int depth, struct walk *w, struct gv_err *err)
{
	if (depth > PATH_DEPTH_MAX)
		return gv_err_set(err, GV_ELIMIT, "package nested too deeply");
	int fd = dup(dirfd);
	if (fd < 0)
		return gv_err_errno(err, "dup");
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return gv_err_errno(err, "fdopendir");
	}
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char rel[4200];
		int n = snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", e->d_name);
		if (n < 0 || (size_t)n >= sizeof(rel) || !exec_problem_path_ok(rel)) {
			if (!w->bad[0])
				snprintf(w->bad, sizeof(w->bad), "%.200s", rel);
			continue;
		}
		int cfd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		if (cfd < 0 || fstat(cfd, &st) != 0) {
			rc = gv_err_errno(err, "open %s", rel);
			if (cfd >= 0)
				close(cfd);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = walk_dir(cfd, rel, depth + 1, w, err);
			close(cfd);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			/* The importer writes regular files and folders only. */
			close(cfd);
			if (!w->bad[0])
				snprintf(w->bad, sizeof(w->bad), "%.200s", rel);
			continue;
		}
		if (w->n >= WALK_FILES_MAX) {
			close(cfd);
			rc = gv_err_set(err, GV_ELIMIT, "more than %d files", WALK_FILES_MAX);
			break;
		}
		if (w->n == w->cap) {
			size_t ncap = w->cap ? 2 * w->cap : 64;
			struct walked_file *nv = realloc(w->v, ncap * sizeof(*nv));
			if (!nv) {
				close(cfd);
				rc = gv_err_set(err, ENOMEM, "out of memory");
				break;
			}
			w->v = nv;
			w->cap = ncap;
		}
		struct walked_file *f = &w->v[w->n];
		memset(f, 0, sizeof(*f));
		char *data = NULL;
		if (read_fd_all(cfd, (uint64_t)st.st_size, &data, err) != 0) {
			close(cfd);
			gv_err_prefix(err, "%s", rel);
			rc = -1;
			break;
		}
		close(cfd);
		crypto_hash_sha256(f->hash, (const unsigned char *)data, (unsigned long long)st.st_size);
		free(data);
		if (!(f->rel = strdup(rel))) {
			rc = gv_err_set(err, ENOMEM, "out of memory");
			break;
		}
		f->size = (uint64_t)st.st_size;
		w->bytes += f->size;
		w->n++;
	}
	closedir(d);
	return rc;
}

static void walk_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].rel);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

static int cmp_rel(const void *a, const void *b)
{
	return strcmp(((const struct walked_file *)a)->rel, ((const struct walked_file *)b)->rel);
}

/* The version's metadata from the loaded package. */
static json_t *summary_of(const struct exec_problem *p, const struct walk *w)
{
	size_t samples = 0;
	for (size_t i = 0; i < p->ncases; i++)
		samples += p->cases[i]->is_sample;
	json_t *warn = json_array();
	for (size_t i = 0; warn && i < p->nwarnings && i < 64; i++)
		json_array_append_new(warn, gv_json_string_lossy(p->warnings[i], strnlen(p->warnings[i], 512)));
	return json_pack("{s:I,s:I,s:I,s:I,s:o}", "samples", (json_int_t)samples, "secret",
			 (json_int_t)(p->ncases - samples), "files", (json_int_t)w->n, "bytes", (json_int_t)w->bytes,
			 "warnings", warn ? warn : json_array());
}

/* One file of a package: its blob, when the tenant does not hold it yet
 * (read again and checked against the hash walked), and its row in the
 * version's file list. Inside the caller's transaction. */
static int store_file(PGconn *c, int dfd, const char *tid, const char *pid, const char *ver,
		      const struct walked_file *f, struct gv_err *err)
{
	char size[24];
	snprintf(size, sizeof(size), "%llu", (unsigned long long)f->size);
	const char *ev[] = { tid, (const char *)f->hash };
	const int el[] = { 0, EXEC_SHA256_LEN }, ef[] = { 0, 1 };
	PGresult *res = pg_bin(c, "SELECT 1 FROM problem_blobs WHERE tenant_id = $1::uuid AND sha256 = $2",
			       2, ev, el, ef, 0, err);
	if (!res)
		return -1;
	bool have = PQntuples(res) > 0;
	PQclear(res);
	if (!have) {
		/* Only what the tenant does not hold yet crosses the wire. */
		int ffd = openat(dfd, f->rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		char *data = NULL;
		if (ffd < 0)
			return gv_err_errno(err, "open %s", f->rel);
		int r = read_fd_all(ffd, f->size, &data, err);
		close(ffd);
		if (r != 0)
			return -1;
		unsigned char again[EXEC_SHA256_LEN];
		crypto_hash_sha256(again, (const unsigned char *)data, f->size);
		if (memcmp(again, f->hash, EXEC_SHA256_LEN) != 0) {
			free(data);
			return gv_err_set(err, GV_EPROTO, "%s changed while it was stored", f->rel);
		}
		const char *bv[] = { tid, (const char *)f->hash, size, data };
		const int bl[] = { 0, EXEC_SHA256_LEN, 0, (int)f->size }, bf[] = { 0, 1, 0, 1 };
		res = pg_bin(c,
			     "INSERT INTO problem_blobs (tenant_id, sha256, size, content) "
			     "VALUES ($1::uuid, $2, $3::bigint, $4) ON CONFLICT DO NOTHING",
			     4, bv, bl, bf, 0, err);
		free(data);
		if (!res)
			return -1;
		PQclear(res);
	}
	const char *fv[] = { tid, pid, ver, f->rel, (const char *)f->hash, size };
	const int fl[] = { 0, 0, 0, 0, EXEC_SHA256_LEN, 0 }, ff[] = { 0, 0, 0, 0, 1, 0 };
	res = pg_bin(c,
		     "INSERT INTO problem_files (tenant_id, problem_id, version, path, sha256, size) "
		     "VALUES ($1::uuid, $2, $3::int, $4, $5, $6::bigint)",
		     6, fv, fl, ff, 0, err);
	if (!res)
		return -1;
	PQclear(res);
	return 0;
}

/* The version's row: ready, with the package's metadata and summary, if it
 * is still pending; *updated says whether it was (not: another node
 * finished it after our lease ran out). Inside the caller's transaction. */
static int mark_ready(PGconn *c, const char *tid, const char *pid, const char *ver, const struct exec_problem *p,
		      const char *stext, bool *updated, struct gv_err *err)
{
	char tl[16], mem[16], out[16];
	snprintf(tl, sizeof(tl), "%u", p->time_limit_ms);
	snprintf(mem, sizeof(mem), "%u", p->memory_mb);
	snprintf(out, sizeof(out), "%u", p->output_mb);
	const char *uv[] = { tid, pid, ver, p->name ? p->name : "",
			     p->type == EXEC_PROBLEM_SCORING ? "scoring" : "pass-fail", p->interactive ? "true" : "false",
			     p->custom_validation ? "true" : "false", tl, mem, out, stext };
	PGresult *res = gv_pg_query(
		c,
		"UPDATE problem_versions SET status = 'ready', message = NULL, archive = NULL, imported_at = now(), "
		"claimed_until = NULL, name = left($4, 1024), type = $5, interactive = $6::boolean, "
		"custom_validation = $7::boolean, time_limit_ms = $8::int, memory_mb = $9::int, output_mb = $10::int, "
		"summary = $11::jsonb "
		"WHERE tenant_id = $1::uuid AND problem_id = $2 AND version = $3::int AND status = 'pending'",
		11, uv, err);
	if (!res)
		return -1;
	*updated = strcmp(PQcmdTuples(res), "1") == 0;
	PQclear(res);
	return 0;
}

/* Stores the unpacked package at dir: blobs once per tenant, the file list,
 * the metadata; the version becomes ready and, when newest, current. */
static int store_package(const struct exec_problem_env *env, const char *tid, const char *pid, const char *ver,
			 const char *dir, char *reject, size_t rsz, struct gv_err *err)
{
	struct exec_problem p;
	struct exec_problem_opts po = { .langs = env->langs };
	if (exec_problem_load(&p, dir, &po, err) != 0) {
		/* The importer loaded it already; a second failure is ours. */
		exec_problem_free(&p);
		gv_err_prefix(err, "reloading the imported package");
		return -1;
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct walk w;
	memset(&w, 0, sizeof(w));
	int rc = -1;
	json_t *summary = NULL;
	char *stext = NULL;
	PGconn *c = NULL;
	if (dfd < 0) {
		gv_err_errno(err, "open %s", dir);
		goto out;
	}
	if (walk_dir(dfd, "", 0, &w, err) != 0)
		goto out;
	if (w.bad[0]) {
		snprintf(reject, rsz, "entry '%s': only names of [A-Za-z0-9._+-], regular files and folders are stored",
			 w.bad);
		rc = 0;
		goto out;
	}
	if (w.n > 1) /* w.v is NULL when there is none */
		qsort(w.v, w.n, sizeof(*w.v), cmp_rel);
	if (!(summary = summary_of(&p, &w)) || !(stext = json_dumps(summary, JSON_COMPACT))) {
		gv_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	if (gv_pg_ensure(env->pg, err) != 0)
		goto out;
	c = gv_pg_conn(env->pg);
	if (tenant_tx_begin(c, tid, err) != 0)
		goto out;
	for (size_t i = 0; i < w.n; i++)
		if (store_file(c, dfd, tid, pid, ver, &w.v[i], err) != 0)
			goto rollback;
	bool updated;
	if (mark_ready(c, tid, pid, ver, &p, stext, &updated, err) != 0)
		goto rollback;
	if (!updated) {
		/* Another node finished it after our lease ran out. */
		tenant_tx_rollback(c);
		rc = 0;
		goto out;
	}
	const char *cv[] = { tid, pid, ver };
	if (gv_pg_exec(c,
		       "UPDATE problems SET current_version = greatest(coalesce(current_version, 0), $3::int), "
		       "updated_at = now() WHERE tenant_id = $1::uuid AND id = $2",
		       3, cv, err) != 0 ||
	    tenant_tx_commit(c, err) != 0)
		goto rollback;
	gv_info(env->log, "problem %s version %s ready: %zu files, %llu bytes, %zu cases", pid, ver, w.n,
		(unsigned long long)w.bytes, p.ncases);
	rc = 0;
	goto out;
rollback:
	tenant_tx_rollback(c);
out:
	free(stext);
	json_decref(summary);
	walk_free(&w);
	if (dfd >= 0)
		close(dfd);
	exec_problem_free(&p);
	return rc;
}

void exec_problem_import_limits_default(struct exec_import_limits *l)
{
	exec_import_limits_default(l);
}

/* What an import came to, into the version's row: stored and ready,
 * rejected (with the reason, as valid UTF-8), or back to pending for
 * another attempt when our side failed (-1 with err). 1 when the version
 * is finished. */
static int record_import(const struct exec_problem_env *env, const struct gv_log_ctx *ctx, const char *tid,
			 const char *pid, const char *ver, const char *dest, int rc,
			 const struct exec_import_report *rep, struct gv_err *err)
{
	int out = 1;
	if (rc != 0 || rep->status == EXEC_IMPORT_INTERNAL) {
		if (rc == 0)
			gv_err_set(err, GV_EINTERNAL, "import: %s", rep->message ? rep->message : "internal error");
		retry_soon(env, tid, pid, ver);
		out = -1;
	} else if (rep->status == EXEC_IMPORT_REJECTED) {
		char msg[EXEC_PROBLEM_MESSAGE_MAX];
		/* It may quote entry names, which are attacker bytes: valid
		 * UTF-8 only, as PostgreSQL's text needs. */
		const char *m = rep->message ? rep->message : "the package was refused";
		json_t *clean = gv_json_string_lossy(m, strnlen(m, 4000)); /* <= 3x: fits msg */
		snprintf(msg, sizeof(msg), "%s", clean ? json_string_value(clean) : "the package was refused");
		json_decref(clean);
		gv_info(ctx, "version %s rejected", ver);
		if (finish(env, tid, pid, ver, "rejected", msg, err) != 0) {
			retry_soon(env, tid, pid, ver);
			out = -1;
		}
	} else {
		char reject[512] = "";
		if (store_package(env, tid, pid, ver, dest, reject, sizeof(reject), err) != 0) {
			retry_soon(env, tid, pid, ver);
			out = -1;
		} else if (reject[0] && finish(env, tid, pid, ver, "rejected", reject, err) != 0) {
			retry_soon(env, tid, pid, ver);
			out = -1;
		}
	}
	return out;
}

int exec_problem_import_step(const struct exec_problem_env *env, struct gv_err *err)
{
	if (gv_pg_ensure(env->pg, err) != 0)
		return -1;
	PGconn *c = gv_pg_conn(env->pg);
	char lease[16];
	snprintf(lease, sizeof(lease), "%u", EXEC_PROBLEM_IMPORT_LEASE_MS);
	const char *cp[] = { env->node, lease };
	PGresult *res = gv_pg_query(c,
				    "SELECT tenant_id::text, problem_id, version::text, attempts "
				    "FROM gavel_problem_import_claim($1, $2::int)",
				    2, cp, err);
	if (!res)
		return -1;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return 0;
	}
	char tid[64], pid[GV_QUEUE_SID_MAX + 1], ver[16];
	snprintf(tid, sizeof(tid), "%s", PQgetvalue(res, 0, 0));
	snprintf(pid, sizeof(pid), "%s", PQgetvalue(res, 0, 1));
	snprintf(ver, sizeof(ver), "%s", PQgetvalue(res, 0, 2));
	int attempts = atoi(PQgetvalue(res, 0, 3));
	PQclear(res);
	struct gv_log_ctx ctx = { .tenant = tid, .job = pid, .node = env->node };
	if (attempts > EXEC_PROBLEM_IMPORT_ATTEMPTS) {
		gv_error(&ctx, "import of version %s failed %d times; giving up", ver, attempts - 1);
		if (finish(env, tid, pid, ver, "failed", "the import failed on our side; upload the package again",
			   err) != 0)
			return -1;
		publish_done(env, pid);
		return 1;
	}
	/* The archive, as raw bytes. */
	if (tenant_tx_begin(c, tid, err) != 0)
		return -1;
	const char *av[] = { tid, pid, ver };
	res = pg_bin(c,
		     "SELECT archive FROM problem_versions WHERE tenant_id = $1::uuid AND problem_id = $2 "
		     "AND version = $3::int AND status = 'pending' AND archive IS NOT NULL",
		     3, av, NULL, NULL, 1, err);
	if (!res || tenant_tx_commit(c, err) != 0) {
		PQclear(res);
		tenant_tx_rollback(c);
		return -1;
	}
	if (PQntuples(res) != 1) {
		PQclear(res);
		return 1; /* finished by someone else meanwhile */
	}
	char dir[4096], dest[4200];
	unsigned char rnd[8];
	randombytes_buf(rnd, sizeof(rnd));
	snprintf(dir, sizeof(dir), "%s", env->scratch_dir);
	snprintf(dest, sizeof(dest), "%s/import-%02x%02x%02x%02x%02x%02x%02x%02x", dir, rnd[0], rnd[1], rnd[2], rnd[3],
		 rnd[4], rnd[5], rnd[6], rnd[7]);
	if (gv_mkdir_parents(dir, err) != 0) {
		PQclear(res);
		retry_soon(env, tid, pid, ver);
		return -1;
	}
	struct exec_import_report rep;
	memset(&rep, 0, sizeof(rep));
	gv_info(&ctx, "importing version %s (%d bytes, attempt %d)", ver, PQgetlength(res, 0, 0), attempts);
	/* The import's sandboxes run under the tenant's cgroup, like its
	 * submissions. */
	struct exec_import_limits lim = *env->limits;
	lim.tenant = tid;
	int rc = exec_problem_import(env->engine, env->langs, PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0),
				     dest, &lim, &rep, err);
	PQclear(res);
	int out = record_import(env, &ctx, tid, pid, ver, dest, rc, &rep, err);
	exec_import_report_free(&rep);
	struct gv_err rerr;
	if (exec_problem_remove_tree(dest, &rerr) != 0)
		gv_warn(&ctx, "removing %s: %s", dest, rerr.msg);
	if (out == 1)
		publish_done(env, pid);
	return out;
}

/* ---- materialising a package ---- */

/* Opens (creating as needed) the folder of rel's parent below root; the
 * last component's name goes to *base. */
static int open_parent(int root, const char *rel, const char **base, struct gv_err *err)
{
	int fd = dup(root);
	if (fd < 0)
		return gv_err_errno(err, "dup");
	const char *s = rel;
	for (;;) {
		const char *slash = strchr(s, '/');
		if (!slash)
			break;
		char comp[256];
		size_t n = (size_t)(slash - s);
		if (n == 0 || n >= sizeof(comp)) {
			close(fd);
			return gv_err_set(err, GV_EINVAL, "bad path %s", rel);
		}
		memcpy(comp, s, n);
		comp[n] = '\0';
		if (mkdirat(fd, comp, 0700) != 0 && errno != EEXIST) {
			close(fd);
			return gv_err_errno(err, "mkdir %s", comp);
		}
		int nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (nfd < 0)
			return gv_err_errno(err, "open %s", comp);
		fd = nfd;
		s = slash + 1;
	}
	*base = s;
	return fd;
}

static int write_new(int dirfd, const char *name, const char *data, size_t len, struct gv_err *err)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return gv_err_errno(err, "create %s", name);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			close(fd);
			return gv_err_errno(err, "write %s", name);
		}
		off += (size_t)w;
	}
	if (close(fd) != 0)
		return gv_err_errno(err, "close %s", name);
	return 0;
}

static bool is_secret(const char *rel)
{
	return !strncmp(rel, "data/secret/", 12) || !strcmp(rel, "data/secret");
}

/* A file the cache did not have: its blob from PostgreSQL (inside the
 * caller's transaction), put into the cache, which checks it against its
 * hash, and linked from there as base in pfd, or written there when the
 * cache does not keep it. *len: its size. */
static int fetch_file(const struct exec_problem_env *env, PGconn *c, const char *tenant, const char *hex, int pfd,
		      const char *base, size_t *len, struct gv_err *err)
{
	unsigned char raw[EXEC_SHA256_LEN];
	size_t rl = 0;
	if (sodium_hex2bin(raw, sizeof(raw), hex, strlen(hex), NULL, &rl, NULL) != 0 || rl != sizeof(raw))
		return gv_err_set(err, GV_EPROTO, "bad hash %s", hex);
	const char *bv[] = { tenant, (const char *)raw };
	const int bl[] = { 0, EXEC_SHA256_LEN }, bf[] = { 0, 1 };
	PGresult *blob = pg_bin(c, "SELECT content FROM problem_blobs WHERE tenant_id = $1::uuid AND sha256 = $2",
				2, bv, bl, bf, 1, err);
	if (!blob || PQntuples(blob) != 1) {
		if (blob)
			gv_err_set(err, GV_ENOTFOUND, "blob %s missing", hex);
		PQclear(blob);
		return -1;
	}
	const char *data = PQgetvalue(blob, 0, 0);
	*len = (size_t)PQgetlength(blob, 0, 0);
	int r = exec_testdata_cache_put(env->cache, tenant, hex, data, *len, err);
	if (r == 0) {
		int hit = exec_testdata_cache_link(env->cache, tenant, hex, pfd, base, err);
		/* Not kept (cache off, file over the cap, evicted at
		 * once): written straight into the package; the put
		 * above verified the hash already. */
		if (hit == 0)
			r = write_new(pfd, base, data, *len, err);
		else if (hit < 0)
			r = -1;
	}
	PQclear(blob);
	return r;
}

int exec_problem_materialize(const struct exec_problem_env *env, const char *tenant, const char *problem_id,
			     uint32_t version, bool samples_only, const char *dest,
			     struct exec_materialize_stats *st, struct gv_err *err)
{
	memset(st, 0, sizeof(*st));
	if (gv_pg_ensure(env->pg, err) != 0)
		return -1;
	PGconn *c = gv_pg_conn(env->pg);
	char ver[16];
	snprintf(ver, sizeof(ver), "%u", version);
	const char *p[] = { tenant, problem_id, ver };
	if (tenant_tx_begin(c, tenant, err) != 0)
		return -1;
	PGresult *files = gv_pg_query(c,
				      "SELECT f.path, encode(f.sha256, 'hex'), f.size FROM problem_files f "
				      "JOIN problem_versions v ON v.tenant_id = f.tenant_id AND v.problem_id = f.problem_id "
				      "AND v.version = f.version AND v.status = 'ready' "
				      "WHERE f.tenant_id = $1::uuid AND f.problem_id = $2 AND f.version = $3::int "
				      "ORDER BY f.path",
				      3, p, err);
	if (!files || tenant_tx_commit(c, err) != 0) {
		PQclear(files);
		tenant_tx_rollback(c);
		return -1;
	}
	if (PQntuples(files) == 0) {
		PQclear(files);
		return gv_err_set(err, GV_ENOTFOUND, "problem %s version %u is not ready", problem_id, version);
	}
	int root = -1, rc = -1;
	bool tx = false;
	if (gv_mkdir_parents(dest, err) != 0)
		goto out;
	root = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0) {
		gv_err_errno(err, "open %s", dest);
		goto out;
	}
	for (int i = 0; i < PQntuples(files); i++) {
		const char *rel = PQgetvalue(files, i, 0), *hex = PQgetvalue(files, i, 1);
		if (samples_only && is_secret(rel))
			continue;
		if (!exec_problem_path_ok(rel) || !exec_sha256_hex_ok(hex)) {
			gv_err_set(err, GV_EPROTO, "stored path or hash is malformed");
			goto out;
		}
		st->files++;
		const char *base = rel;
		int pfd = open_parent(root, rel, &base, err);
		if (pfd < 0)
			goto out;
		int hit = exec_testdata_cache_link(env->cache, tenant, hex, pfd, base, err);
		if (hit < 0) {
			close(pfd);
			goto out;
		}
		if (hit == 1) {
			st->cached++;
			close(pfd);
			continue;
		}
		/* A miss: the content from PostgreSQL, checked against its
		 * hash by the cache before it is used. */
		if (!tx) {
			if (tenant_tx_begin(c, tenant, err) != 0) {
				close(pfd);
				goto out;
			}
			tx = true;
		}
		size_t len = 0;
		int r = fetch_file(env, c, tenant, hex, pfd, base, &len, err);
		close(pfd);
		if (r != 0)
			goto out;
		st->fetched++;
		st->fetched_bytes += len;
	}
	rc = 0;
out:
	if (tx) {
		if (rc == 0 && tenant_tx_commit(c, err) != 0)
			rc = -1;
		if (rc != 0)
			tenant_tx_rollback(c);
	}
	PQclear(files);
	if (root >= 0)
		close(root);
	if (rc != 0) {
		struct gv_err rerr;
		if (exec_problem_remove_tree(dest, &rerr) != 0)
			gv_warn(env->log, "removing %s: %s", dest, rerr.msg);
	}
	return rc;
}
