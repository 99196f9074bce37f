/* SQL schema migrations; see migrate.h. The pure part (names, order,
 * what is recorded) is separate from the part that talks to PostgreSQL so
 * that it is tested without a database. */
#include "common/migrate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pg.h"

/* ------------------------------------------------------------------- pure */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

bool gv_migrate_is_candidate(const char *file)
{
	if (!file || !file[0] || file[0] == '.')
		return false;
	return (file[0] >= '0' && file[0] <= '9') || ends_with(file, ".sql");
}

int gv_migrate_parse_name(const char *file, struct gv_migration *out, struct gv_err *err)
{
	if (!file || !out)
		return gv_err_set(err, GV_EINTERNAL, "no migration file name");
	memset(out, 0, sizeof(*out));
	size_t len = strlen(file);
	if (len >= sizeof(out->file))
		return gv_err_set(err, GV_EINVAL, "migration file name longer than %zu bytes",
				  sizeof(out->file) - 1);
	size_t digits = 0;
	while (file[digits] >= '0' && file[digits] <= '9')
		digits++;
	if (digits < 4 || digits > 9)
		return gv_err_set(err, GV_EINVAL,
				  "bad migration file name '%s': want NNNN_name.sql (4 to 9 digits first)", file);
	if (file[digits] != '_')
		return gv_err_set(err, GV_EINVAL, "bad migration file name '%s': want '_' after the version",
				  file);
	if (!ends_with(file, ".sql"))
		return gv_err_set(err, GV_EINVAL, "bad migration file name '%s': must end in .sql", file);
	const char *name = file + digits + 1;
	size_t namelen = len - digits - 1 - 4;
	if (namelen == 0)
		return gv_err_set(err, GV_EINVAL, "bad migration file name '%s': empty name", file);
	if (namelen >= sizeof(out->name))
		return gv_err_set(err, GV_EINVAL, "bad migration file name '%s': name longer than %zu bytes",
				  file, sizeof(out->name) - 1);
	for (size_t i = 0; i < namelen; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return gv_err_set(err, GV_EINVAL,
					  "bad migration file name '%s': the name may hold only a-z, 0-9 and '_'",
					  file);
	}
	long v = 0;
	for (size_t i = 0; i < digits; i++)
		v = v * 10 + (file[i] - '0');
	if (v <= 0)
		return gv_err_set(err, GV_EINVAL, "bad migration file name '%s': version must be > 0", file);
	out->version = (int)v;
	memcpy(out->name, name, namelen);
	out->name[namelen] = '\0';
	memcpy(out->file, file, len + 1);
	return 0;
}

static int cmp_version(const void *a, const void *b)
{
	const struct gv_migration *x = a, *y = b;
	if (x->version != y->version)
		return x->version < y->version ? -1 : 1;
	return strcmp(x->file, y->file);
}

int gv_migrate_sort(struct gv_migration *m, size_t n, struct gv_err *err)
{
	if (n == 0)
		return 0;
	qsort(m, n, sizeof(*m), cmp_version);
	for (size_t i = 1; i < n; i++)
		if (m[i].version == m[i - 1].version)
			return gv_err_set(err, GV_EINVAL, "migrations %s and %s have the same version %d",
					  m[i - 1].file, m[i].file, m[i].version);
	return 0;
}

/* Index of version in the sorted m, or -1. */
static long find_version(const struct gv_migration *m, size_t n, int version)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m[mid].version == version)
			return (long)mid;
		if (m[mid].version < version)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int gv_migrate_check_recorded(const struct gv_migration *m, size_t n, int version, const char *name,
			      struct gv_err *err)
{
	long i = find_version(m, n, version);
	if (i < 0)
		return 0;
	if (!name || strcmp(m[i].name, name) != 0)
		return gv_err_set(err, GV_EINVAL,
				  "version %d is recorded as applied under the name '%s' but the file is %s",
				  version, name ? name : "(null)", m[i].file);
	return 1;
}

int gv_migrate_line_of(const char *text, size_t len, int pos)
{
	if (!text || pos <= 0)
		return 0;
	int line = 1, chars = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)text[i];
		if ((b & 0xC0) != 0x80 && ++chars == pos)
			return line;
		if (b == '\n')
			line++;
	}
	return 0;
}

/* ------------------------------------------------------------- the folder */

int gv_migrate_scan(const char *dir, struct gv_migration **out, size_t *n, struct gv_err *err)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return gv_err_errno(err, "open migrations folder %s", dir);
	struct gv_migration *m = NULL;
	size_t count = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		if (!gv_migrate_is_candidate(e->d_name))
			continue;
		if (count == GV_MIGRATE_MAX_FILES) {
			rc = gv_err_set(err, GV_ELIMIT, "more than %d migrations in %s", GV_MIGRATE_MAX_FILES, dir);
			break;
		}
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct gv_migration *nm = realloc(m, ncap * sizeof(*m));
			if (!nm) {
				rc = gv_err_errno(err, "realloc");
				break;
			}
			m = nm;
			cap = ncap;
		}
		if (gv_migrate_parse_name(e->d_name, &m[count], err) != 0) {
			gv_err_prefix(err, "%s", dir);
			rc = -1;
			break;
		}
		count++;
		errno = 0;
	}
	if (rc == 0 && errno != 0)
		rc = gv_err_errno(err, "read migrations folder %s", dir);
	closedir(d);
	if (rc == 0 && gv_migrate_sort(m, count, err) != 0) {
		gv_err_prefix(err, "%s", dir);
		rc = -1;
	}
	if (rc != 0) {
		free(m);
		return -1;
	}
	*out = m;
	*n = count;
	return 0;
}

/* Reads a whole migration file, NUL-terminated; *buf is malloc'd. */
static int read_file(int dirfd, const char *file, char **buf, size_t *len, struct gv_err *err)
{
	*buf = NULL;
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return gv_err_errno(err, "%s: open", file);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		gv_err_errno(err, "%s: fstat", file);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return gv_err_set(err, GV_EINVAL, "%s: not a regular file", file);
	}
	if (st.st_size > GV_MIGRATE_MAX_BYTES) {
		close(fd);
		return gv_err_set(err, GV_ELIMIT, "%s: larger than %d bytes", file, GV_MIGRATE_MAX_BYTES);
	}
	size_t size = (size_t)st.st_size;
	char *b = malloc(size + 1);
	if (!b) {
		close(fd);
		return gv_err_errno(err, "%s: malloc", file);
	}
	size_t got = 0;
	while (got < size) {
		ssize_t r = read(fd, b + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			gv_err_errno(err, "%s: read", file);
			free(b);
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	b[got] = '\0';
	if (memchr(b, '\0', got)) {
		free(b);
		return gv_err_set(err, GV_EINVAL, "%s: contains a NUL byte", file);
	}
	*buf = b;
	*len = got;
	return 0;
}

/* ------------------------------------------------------------ PostgreSQL */

static void rollback_quietly(PGconn *conn)
{
	struct gv_err ignored;
	if (gv_pg_conn_ok(conn) && PQtransactionStatus(conn) != PQTRANS_IDLE)
		if (gv_pg_exec(conn, "ROLLBACK", 0, NULL, &ignored) != 0)
			return; /* the connection is gone: so is the transaction */
}

static int apply_one(PGconn *conn, int dirfd, const struct gv_migration *mig, struct gv_err *err)
{
	char *sql = NULL;
	size_t len = 0;
	if (read_file(dirfd, mig->file, &sql, &len, err) != 0)
		return -1;
	int rc = -1, pos = 0;
	if (gv_pg_exec(conn, "BEGIN", 0, NULL, err) != 0) {
		gv_err_prefix(err, "%s: BEGIN", mig->file);
		goto out;
	}
	if (gv_pg_exec_script(conn, sql, &pos, err) != 0) {
		int line = gv_migrate_line_of(sql, len, pos);
		if (line > 0)
			gv_err_prefix(err, "%s:%d", mig->file, line);
		else
			gv_err_prefix(err, "%s", mig->file);
		goto out;
	}
	if (PQtransactionStatus(conn) != PQTRANS_INTRANS) {
		gv_err_set(err, GV_EINVAL,
			   "%s: the migration ended its transaction itself (no BEGIN/COMMIT/ROLLBACK in "
			   "migrations); its effects may be committed but it is NOT recorded",
			   mig->file);
		goto out;
	}
	char version[16];
	snprintf(version, sizeof(version), "%d", mig->version);
	const char *params[] = { version, mig->name };
	if (gv_pg_exec(conn, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())", 2,
		       params, err) != 0) {
		gv_err_prefix(err, "%s: record", mig->file);
		goto out;
	}
	if (gv_pg_exec(conn, "COMMIT", 0, NULL, err) != 0) {
		gv_err_prefix(err, "%s: COMMIT", mig->file);
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		rollback_quietly(conn);
	free(sql);
	return rc;
}

static int run_locked(PGconn *conn, const char *dir, const struct gv_migration *m, size_t n,
		      struct gv_migrate_report *rep, struct gv_err *err)
{
	if (gv_pg_exec(conn,
		       "CREATE TABLE IF NOT EXISTS schema_migrations ("
		       " version integer PRIMARY KEY,"
		       " name text NOT NULL,"
		       " applied_at timestamptz NOT NULL DEFAULT now())",
		       0, NULL, err) != 0) {
		gv_err_prefix(err, "create schema_migrations");
		return -1;
	}
	PGresult *res = gv_pg_query(conn, "SELECT version, name FROM schema_migrations ORDER BY version", 0, NULL,
				    err);
	if (!res) {
		gv_err_prefix(err, "read schema_migrations");
		return -1;
	}
	bool *done = calloc(n ? n : 1, sizeof(*done));
	if (!done) {
		PQclear(res);
		return gv_err_errno(err, "calloc");
	}
	int rc = 0;
	for (int row = 0; row < PQntuples(res); row++) {
		int version = atoi(PQgetvalue(res, row, 0));
		const char *name = PQgetvalue(res, row, 1);
		if (version > rep->version)
			rep->version = version;
		int known = gv_migrate_check_recorded(m, n, version, name, err);
		if (known < 0) {
			rc = -1;
			break;
		}
		if (known > 0) {
			done[find_version(m, n, version)] = true;
			rep->already++;
		}
	}
	PQclear(res);
	int dirfd = -1;
	if (rc == 0) {
		dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			rc = gv_err_errno(err, "open migrations folder %s", dir);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (done[i])
			continue;
		if (apply_one(conn, dirfd, &m[i], err) != 0) {
			rc = -1;
			break;
		}
		rep->applied++;
		if (m[i].version > rep->version)
			rep->version = m[i].version;
		snprintf(rep->last_applied, sizeof(rep->last_applied), "%s", m[i].file);
	}
	if (dirfd >= 0)
		close(dirfd);
	free(done);
	return rc;
}

int gv_migrate(PGconn *conn, const char *dir, struct gv_migrate_report *rep, struct gv_err *err)
{
	struct gv_migrate_report local;
	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof(*rep));
	if (!gv_pg_conn_ok(conn))
		return gv_err_set(err, GV_EDB, "migrate: no usable database connection");
	if (PQtransactionStatus(conn) != PQTRANS_IDLE)
		return gv_err_set(err, GV_EINTERNAL, "migrate: the connection is inside a transaction");
	/* Names are checked before the database is touched. */
	struct gv_migration *m;
	size_t n;
	if (gv_migrate_scan(dir, &m, &n, err) != 0)
		return -1;
	const char *key[] = { GV_MIGRATE_LOCK_KEY };
	if (gv_pg_exec(conn, "SELECT pg_advisory_lock($1::bigint)", 1, key, err) != 0) {
		gv_err_prefix(err, "migrate: take the migration lock");
		free(m);
		return -1;
	}
	int rc = run_locked(conn, dir, m, n, rep, err);
	free(m);
	rollback_quietly(conn);
	struct gv_err unlock_err;
	if (gv_pg_conn_ok(conn) &&
	    gv_pg_exec(conn, "SELECT pg_advisory_unlock($1::bigint)", 1, key, &unlock_err) != 0 && rc == 0) {
		*err = unlock_err;
		gv_err_prefix(err, "migrate: release the migration lock");
		rc = -1;
	}
	return rc;
}
