/* The local test-data cache (executor/problems/testdata_cache.h):
 * content-addressed files per tenant, atomic writes, LRU eviction by mtime. */
#include "executor/problems/testdata_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"
#include "common/queue.h"

#define COPY_CHUNK (256u * 1024u)
/* A temporary file older than this was left by a process that died. */
#define STALE_TMP_S 3600

void exec_sha256_hex(const unsigned char hash[EXEC_SHA256_LEN], char out[EXEC_SHA256_HEX])
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < EXEC_SHA256_LEN; i++) {
		out[2 * i] = digits[hash[i] >> 4];
		out[2 * i + 1] = digits[hash[i] & 15];
	}
	out[2 * EXEC_SHA256_LEN] = '\0';
}

bool exec_sha256_hex_ok(const char *s)
{
	size_t i = 0;
	for (; s[i]; i++)
		if (i >= 2 * EXEC_SHA256_LEN || !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 2 * EXEC_SHA256_LEN;
}

int exec_testdata_cache_init(struct exec_testdata_cache *c, const char *dir, uint64_t cap_bytes, struct gv_err *err)
{
	memset(c, 0, sizeof(*c));
	if (!dir || !*dir)
		return gv_err_set(err, GV_ECONFIG, "test-data cache: no folder configured");
	if (!(c->dir = strdup(dir)))
		return gv_err_set(err, ENOMEM, "out of memory");
	c->cap_bytes = cap_bytes;
	/* Parents as needed; the cache itself private to the daemon. */
	char path[4096];
	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			gv_err_errno(err, "mkdir %s", path);
			goto fail;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		gv_err_errno(err, "mkdir %s", path);
		goto fail;
	}
	return 0;
fail:
	exec_testdata_cache_fini(c);
	return -1;
}

void exec_testdata_cache_fini(struct exec_testdata_cache *c)
{
	free(c->dir);
	memset(c, 0, sizeof(*c));
}

static int entry_path(const struct exec_testdata_cache *c, const char *tenant, const char *hex, char *out,
		      size_t size, struct gv_err *err)
{
	/* Both are checked to be single, dot-free path components. */
	if (!gv_queue_tid_ok(tenant) || !exec_sha256_hex_ok(hex))
		return gv_err_set(err, GV_EINVAL, "test-data cache: bad tenant or hash");
	int n = snprintf(out, size, "%s/%s/%s", c->dir, tenant, hex);
	if (n < 0 || (size_t)n >= size)
		return gv_err_set(err, GV_ELIMIT, "test-data cache: path too long");
	return 0;
}

static int copy_fd(int in, int out, struct gv_err *err)
{
	char *buf = malloc(COPY_CHUNK);
	if (!buf)
		return gv_err_set(err, ENOMEM, "out of memory");
	for (;;) {
		ssize_t n = read(in, buf, COPY_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return gv_err_errno(err, "read");
		}
		if (n == 0)
			break;
		if (gv_write_all(out, buf, (size_t)n) != 0) {
			free(buf);
			return gv_err_errno(err, "write");
		}
	}
	free(buf);
	return 0;
}

int exec_testdata_cache_link(struct exec_testdata_cache *c, const char *tenant, const char *hex, int dest_dirfd,
			     const char *dest_name, struct gv_err *err)
{
	if (c->cap_bytes == 0) {
		c->misses++;
		return 0;
	}
	char path[4096];
	if (entry_path(c, tenant, hex, path, sizeof(path), err) != 0)
		return -1;
	if (linkat(AT_FDCWD, path, dest_dirfd, dest_name, 0) == 0) {
		utimensat(AT_FDCWD, path, NULL, 0); /* LRU: used now */
		c->hits++;
		return 1;
	}
	if (errno == ENOENT) {
		c->misses++;
		return 0;
	}
	if (errno != EXDEV && errno != EPERM && errno != EMLINK)
		return gv_err_errno(err, "link %s", path);
	/* Another file system (or links refused): a copy. */
	int in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0) {
		if (errno == ENOENT) {
			c->misses++;
			return 0;
		}
		return gv_err_errno(err, "open %s", path);
	}
	int out = openat(dest_dirfd, dest_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
	if (out < 0) {
		close(in);
		return gv_err_errno(err, "create %s", dest_name);
	}
	int rc = copy_fd(in, out, err);
	close(in);
	if (close(out) != 0 && rc == 0)
		rc = gv_err_errno(err, "close %s", dest_name);
	if (rc != 0)
		return -1;
	utimensat(AT_FDCWD, path, NULL, 0);
	c->hits++;
	return 1;
}

int exec_testdata_cache_put(struct exec_testdata_cache *c, const char *tenant, const char *hex, const void *data,
			    size_t len, struct gv_err *err)
{
	char path[4096];
	if (entry_path(c, tenant, hex, path, sizeof(path), err) != 0)
		return -1;
	unsigned char h[EXEC_SHA256_LEN];
	char got[EXEC_SHA256_HEX];
	crypto_hash_sha256(h, data, len);
	exec_sha256_hex(h, got);
	if (strcmp(got, hex) != 0)
		return gv_err_set(err, GV_EPROTO, "test-data cache: content of %s hashes to %s", hex, got);
	if (c->cap_bytes == 0 || len > c->cap_bytes)
		return 0;
	char tdir[4096], tmp[4200];
	snprintf(tdir, sizeof(tdir), "%s/%s", c->dir, tenant);
	if (mkdir(tdir, 0700) != 0 && errno != EEXIST)
		return gv_err_errno(err, "mkdir %s", tdir);
	unsigned char rnd[8];
	randombytes_buf(rnd, sizeof(rnd));
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%02x%02x%02x%02x%02x%02x%02x%02x", tdir, rnd[0], rnd[1], rnd[2], rnd[3],
		 rnd[4], rnd[5], rnd[6], rnd[7]);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
	if (fd < 0)
		return gv_err_errno(err, "create %s", tmp);
	const char *p = data;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, p + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			gv_err_errno(err, "write %s", tmp);
			close(fd);
			unlink(tmp);
			return -1;
		}
		off += (size_t)w;
	}
	/* Durable before it has its name: a crash never leaves a short file
	 * under a hash it does not have. */
	if (fsync(fd) != 0 || close(fd) != 0) {
		gv_err_errno(err, "fsync %s", tmp);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		gv_err_errno(err, "rename %s", tmp);
		unlink(tmp);
		return -1;
	}
	int64_t held = exec_testdata_cache_trim(c, err);
	return held < 0 ? -1 : 0;
}

struct cache_entry {
	char *path;
	uint64_t size;
	struct timespec mtime;
};

static int cmp_mtime(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return 0;
}

int64_t exec_testdata_cache_trim(struct exec_testdata_cache *c, struct gv_err *err)
{
	DIR *top = opendir(c->dir);
	if (!top)
		return gv_err_errno(err, "opendir %s", c->dir);
	struct cache_entry *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	struct dirent *td;
	int rc = 0;
	while (rc == 0 && (td = readdir(top))) {
		if (!gv_queue_tid_ok(td->d_name))
			continue;
		char tdir[4096];
		snprintf(tdir, sizeof(tdir), "%s/%s", c->dir, td->d_name);
		DIR *d = opendir(tdir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			char path[4400];
			struct stat st;
			snprintf(path, sizeof(path), "%s/%s", tdir, e->d_name);
			if (e->d_name[0] == '.') {
				if (!strncmp(e->d_name, ".tmp-", 5) && lstat(path, &st) == 0 &&
				    now - st.st_mtime > STALE_TMP_S)
					unlink(path);
				continue;
			}
			if (!exec_sha256_hex_ok(e->d_name) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				struct cache_entry *nv = realloc(v, ncap * sizeof(*v));
				if (!nv) {
					rc = gv_err_set(err, ENOMEM, "out of memory");
					break;
				}
				v = nv;
				cap = ncap;
			}
			if (!(v[n].path = strdup(path))) {
				rc = gv_err_set(err, ENOMEM, "out of memory");
				break;
			}
			v[n].size = (uint64_t)st.st_size;
			v[n].mtime = st.st_mtim;
			total += v[n].size;
			n++;
		}
		closedir(d);
	}
	closedir(top);
	if (rc == 0 && total > c->cap_bytes) {
		qsort(v, n, sizeof(*v), cmp_mtime);
		for (size_t i = 0; i < n && total > c->cap_bytes; i++) {
			if (unlink(v[i].path) == 0 || errno == ENOENT) {
				total -= v[i].size;
				c->evicted++;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
	return rc == 0 ? (int64_t)total : -1;
}
