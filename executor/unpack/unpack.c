/* The checks of gavel-unpack: libarchive reads the uploaded archive from
 * memory, every entry is held against the rules (regular files and folders
 * only, the path rule of import_stream.h, no duplicates, no file where a
 * folder must be, the limits) and its data is read to the end, counting the
 * bytes that actually come out, never what a header claims. Only when the
 * whole archive passed is it read a second time and written as the package
 * stream (unpack_archive) or as files under a folder (unpack_extract, a
 * submission's additional files), so a rejected archive (a bomb included)
 * writes nothing.
 *
 * This runs inside the unpack sandbox as uid 65534 with the compile seccomp
 * policy and rlimits; libarchive parsing attacker bytes is the reason the
 * step is sandboxed at all. The host trusts none of what comes out of here. */
#include "executor/unpack/unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "executor/problems/import_stream.h"

#define DATA_BUF (256u << 10)
#define WRITE_BUF (1u << 20)

enum path_kind { PATH_FILE = 1, PATH_DIR = 2, PATH_DIR_IMPLIED = 3 };

/* Every path seen, files and folders (named or implied by a deeper
 * entry): open addressing, sized once from the limits. */
struct path_set {
	char **paths;
	unsigned char *kinds;
	size_t cap; /* power of two */
};

struct unpacker {
	const struct unpack_limits *lim;
	struct path_set set;
	uint64_t *sizes; /* pass 1: each file's size, in archive order */
	uint32_t files, dirs;
	uint64_t bytes;
	/* A package zipped with its folder on top ("zip -r p.zip p"): every
	 * entry below one folder that holds problem.yaml, none at the root.
	 * Pass 2 then drops that folder from every path. */
	char top[EXEC_IMPORT_PATH_MAX + 1];
	bool one_top, root_yaml, top_yaml, seen_any;
	size_t strip; /* bytes to drop from each path in pass 2 ("top/") */
	char *buf;
	char *reason;
	size_t reasonsz;
	const char *what; /* for messages: "the package", "the archive" */
};

GV_PRINTF(3, 4) static enum unpack_outcome outcome(struct unpacker *u, enum unpack_outcome o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(u->reason, u->reasonsz, fmt, ap);
	va_end(ap);
	return o;
}

static uint64_t hash_path(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* The slot of path[0..len): the one holding it, or the empty one where it
 * would go. */
static size_t set_slot(const struct path_set *s, const char *path, size_t len)
{
	size_t i = (size_t)hash_path(path, len) & (s->cap - 1);
	while (s->paths[i] && (strncmp(s->paths[i], path, len) != 0 || s->paths[i][len] != '\0'))
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int set_init(struct path_set *s, size_t entries)
{
	s->cap = 64;
	while (s->cap < entries * 2)
		s->cap *= 2;
	s->paths = calloc(s->cap, sizeof(*s->paths));
	s->kinds = calloc(s->cap, 1);
	return s->paths && s->kinds ? 0 : -1;
}

static void set_free(struct path_set *s)
{
	for (size_t i = 0; s->paths && i < s->cap; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->kinds);
}

/* Drops "./" prefixes (tar -C dir .) and, for folders, one trailing '/'.
 * Returns the length of the normalised name starting at *p. */
static size_t normalise(const char **p, bool dir)
{
	const char *s = *p;
	while (s[0] == '.' && s[1] == '/') {
		s += 2;
		while (*s == '/' && s[1] != '\0')
			s++;
	}
	size_t len = strlen(s);
	if (dir && len > 0 && s[len - 1] == '/')
		len--;
	if (len == 1 && s[0] == '.')
		len = 0;
	*p = s;
	return len;
}

static const char *type_name(mode_t t)
{
	switch (t) {
	case AE_IFLNK: return "symbolic link";
	case AE_IFCHR: return "character device node";
	case AE_IFBLK: return "block device node";
	case AE_IFIFO: return "FIFO";
	case AE_IFSOCK: return "socket";
	default: return "entry of an unknown type";
	}
}

/* Records path (and its folders) as kind; rejects duplicates, a file where
 * a folder is needed and the other way round, and too many folders. */
static enum unpack_outcome record_path(struct unpacker *u, const char *path, size_t len, enum path_kind kind,
				       const char *shown)
{
	for (size_t i = 0; i < len; i++) {
		if (path[i] != '/')
			continue;
		size_t slot = set_slot(&u->set, path, i);
		if (u->set.paths[slot]) {
			if (u->set.kinds[slot] == PATH_FILE)
				return outcome(u, UNPACK_REJECTED, "entry '%s': '%.*s' is a file, not a folder", shown,
					       (int)i, path);
			continue;
		}
		if (u->dirs >= u->lim->max_dirs)
			return outcome(u, UNPACK_REJECTED, "entry '%s': more than %u folders", shown, u->lim->max_dirs);
		if (!(u->set.paths[slot] = strndup(path, i)))
			return outcome(u, UNPACK_FAILED, "out of memory");
		u->set.kinds[slot] = PATH_DIR_IMPLIED;
		u->dirs++;
	}
	size_t slot = set_slot(&u->set, path, len);
	if (u->set.paths[slot]) {
		if (kind == PATH_DIR && u->set.kinds[slot] == PATH_DIR_IMPLIED) {
			u->set.kinds[slot] = PATH_DIR;
			return UNPACK_OK;
		}
		if (kind == PATH_FILE && u->set.kinds[slot] != PATH_FILE)
			return outcome(u, UNPACK_REJECTED, "entry '%s': a file where a folder of that name is", shown);
		return outcome(u, UNPACK_REJECTED, "entry '%s': duplicate entry", shown);
	}
	if (kind == PATH_DIR) {
		if (u->dirs >= u->lim->max_dirs)
			return outcome(u, UNPACK_REJECTED, "entry '%s': more than %u folders", shown, u->lim->max_dirs);
		u->dirs++;
	}
	if (!(u->set.paths[slot] = strndup(path, len)))
		return outcome(u, UNPACK_FAILED, "out of memory");
	u->set.kinds[slot] = (unsigned char)kind;
	return UNPACK_OK;
}

static struct archive *open_reader(const void *archive, size_t len)
{
	struct archive *a = archive_read_new();
	if (!a)
		return NULL;
	if (archive_read_support_format_zip(a) != ARCHIVE_OK || archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    archive_read_support_filter_gzip(a) != ARCHIVE_OK ||
	    archive_read_open_memory(a, archive, len) != ARCHIVE_OK) {
		/* An unknown format shows up at the first header. */
		if (archive_errno(a) == ENOMEM) {
			archive_read_free(a);
			return NULL;
		}
	}
	return a;
}

/* zip, or tar with gzip or no compression: what the upload API accepts. */
static bool format_allowed(struct archive *a)
{
	int fmt = archive_format(a) & ARCHIVE_FORMAT_BASE_MASK;
	int filter = archive_filter_count(a) > 1 ? archive_filter_code(a, 0) : ARCHIVE_FILTER_NONE;
	if (fmt == ARCHIVE_FORMAT_ZIP)
		return filter == ARCHIVE_FILTER_NONE;
	if (fmt == ARCHIVE_FORMAT_TAR)
		return filter == ARCHIVE_FILTER_NONE || filter == ARCHIVE_FILTER_GZIP;
	return false;
}

/* One entry's name for messages: normalised, escaped, bounded. */
static void entry_shown(struct archive_entry *e, char *out, size_t outsz)
{
	const char *raw = archive_entry_pathname(e);
	if (!raw)
		raw = archive_entry_pathname_utf8(e);
	if (!raw) {
		snprintf(out, outsz, "(unnamed)");
		return;
	}
	exec_import_shown(out, outsz, raw, strnlen(raw, 4 * EXEC_IMPORT_PATH_MAX));
}

/* Classifies one header: *path and *len the normalised name (len 0: the
 * root folder itself, skipped), *kind file or folder. Checks the type and
 * the path rule. */
static enum unpack_outcome classify(struct unpacker *u, struct archive_entry *e, const char *shown,
				    const char **path, size_t *len, enum path_kind *kind)
{
	const char *hl = archive_entry_hardlink(e);
	if (hl) {
		char target[128];
		exec_import_shown(target, sizeof(target), hl, strnlen(hl, 4 * EXEC_IMPORT_PATH_MAX));
		return outcome(u, UNPACK_REJECTED, "entry '%s': hard link (to '%s') not allowed", shown, target);
	}
	mode_t t = archive_entry_filetype(e);
	if (t == AE_IFLNK) {
		const char *to = archive_entry_symlink(e);
		char target[128];
		exec_import_shown(target, sizeof(target), to ? to : "", to ? strnlen(to, 4 * EXEC_IMPORT_PATH_MAX) : 0);
		return outcome(u, UNPACK_REJECTED, "entry '%s': symbolic link (to '%s') not allowed", shown, target);
	}
	if (t != AE_IFREG && t != AE_IFDIR)
		return outcome(u, UNPACK_REJECTED, "entry '%s': %s not allowed (regular files and folders only)",
			       shown, type_name(t));
	const char *raw = archive_entry_pathname(e);
	if (!raw)
		return outcome(u, UNPACK_REJECTED, "entry '%s': name not readable", shown);
	if (strnlen(raw, 4 * EXEC_IMPORT_PATH_MAX + 1) > 4 * EXEC_IMPORT_PATH_MAX)
		return outcome(u, UNPACK_REJECTED, "entry '%s': path longer than %u bytes", shown, u->lim->max_path);
	*kind = t == AE_IFDIR ? PATH_DIR : PATH_FILE;
	*path = raw;
	*len = normalise(path, t == AE_IFDIR);
	if (*len == 0 && t == AE_IFDIR)
		return UNPACK_OK;
	char why[160];
	if (exec_import_path_check(*path, *len, u->lim->max_path, u->lim->max_depth, why, sizeof(why)) != 0)
		return outcome(u, UNPACK_REJECTED, "entry '%s': %s", shown, why);
	return UNPACK_OK;
}

static enum unpack_outcome next_header(struct unpacker *u, struct archive *a, struct archive_entry **e,
				       bool first, const char *prev)
{
	int r = archive_read_next_header(a, e);
	if (r == ARCHIVE_EOF) {
		*e = NULL; /* libarchive leaves a blank entry there */
		if (first)
			return outcome(u, UNPACK_REJECTED, "empty archive");
		return UNPACK_OK;
	}
	if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
		if (first)
			return outcome(u, UNPACK_REJECTED, "not a zip or tar.gz archive (%s)", archive_error_string(a));
		return outcome(u, UNPACK_REJECTED, "damaged archive after entry '%s': %s", prev,
			       archive_error_string(a));
	}
	if (first && !format_allowed(a))
		return outcome(u, UNPACK_REJECTED, "not a zip or tar.gz archive (%s)", archive_format_name(a));
	return UNPACK_OK;
}

/* Watches for a single folder on top of everything (see struct unpacker). */
static void note_top(struct unpacker *u, const char *path, size_t len, enum path_kind kind)
{
	size_t first = 0;
	while (first < len && path[first] != '/')
		first++;
	if (!u->seen_any) {
		u->seen_any = true;
		u->one_top = true;
		memcpy(u->top, path, first);
		u->top[first] = '\0';
	}
	if (first != strlen(u->top) || memcmp(path, u->top, first) != 0 || (first == len && kind != PATH_DIR))
		u->one_top = false;
	if (len == 12 && memcmp(path, "problem.yaml", 12) == 0)
		u->root_yaml = true;
	if (first < len && len - first - 1 == 12 && memcmp(path + first + 1, "problem.yaml", 12) == 0)
		u->top_yaml = true;
}

/* Pass 1: checks everything, writes nothing. */
/* The next entry of a pass, named (shown) and classified; *e NULL at the
 * end. Every pass walks the archive through this one place. */
static enum unpack_outcome next_entry(struct unpacker *u, struct archive *a, bool first, char shown[160],
				      struct archive_entry **e, const char **path, size_t *plen, enum path_kind *kind)
{
	*e = NULL;
	*path = NULL;
	*plen = 0;
	*kind = PATH_FILE;
	enum unpack_outcome o = next_header(u, a, e, first, shown);
	if (o != UNPACK_OK || !*e)
		return o;
	entry_shown(*e, shown, 160);
	return classify(u, *e, shown, path, plen, kind);
}

static enum unpack_outcome check_pass(struct unpacker *u, const void *archive, size_t len)
{
	struct archive *a = open_reader(archive, len);
	if (!a)
		return outcome(u, UNPACK_FAILED, "out of memory");
	enum unpack_outcome o = UNPACK_OK;
	char shown[160] = "";
	for (bool first = true;; first = false) {
		struct archive_entry *e;
		const char *path;
		size_t plen;
		enum path_kind kind;
		if ((o = next_entry(u, a, first, shown, &e, &path, &plen, &kind)) != UNPACK_OK || !e)
			break;
		if (plen == 0)
			continue;
		if (kind == PATH_FILE) {
			if (u->files >= u->lim->max_files) {
				o = outcome(u, UNPACK_REJECTED, "entry '%s': more than %u files", shown,
					    u->lim->max_files);
				break;
			}
			/* A header that already claims too much is refused at
			 * once; the count below holds whatever it claims. */
			if (archive_entry_size_is_set(e) && archive_entry_size(e) >= 0 &&
			    (uint64_t)archive_entry_size(e) > u->lim->max_bytes - u->bytes) {
				o = outcome(u, UNPACK_REJECTED,
					    "entry '%s': declares %lld bytes; %s may unpack to at most %llu",
					    shown, (long long)archive_entry_size(e), u->what,
					    (unsigned long long)u->lim->max_bytes);
				break;
			}
		}
		if ((o = record_path(u, path, plen, kind, shown)) != UNPACK_OK)
			break;
		note_top(u, path, plen, kind);
		uint64_t size = 0;
		for (;;) {
			la_ssize_t n = archive_read_data(a, u->buf, DATA_BUF);
			if (n == 0)
				break;
			if (n < 0) {
				o = outcome(u, UNPACK_REJECTED, "entry '%s': damaged data: %s", shown,
					    archive_error_string(a));
				break;
			}
			size += (uint64_t)n;
			if (kind == PATH_DIR && size > 0) {
				o = outcome(u, UNPACK_REJECTED, "entry '%s': a folder with data", shown);
				break;
			}
			if (size > u->lim->max_bytes - u->bytes) {
				o = outcome(u, UNPACK_REJECTED,
					    "entry '%s': %s unpacks to more than %llu bytes", shown, u->what,
					    (unsigned long long)u->lim->max_bytes);
				break;
			}
		}
		if (o != UNPACK_OK)
			break;
		if (kind == PATH_FILE) {
			u->sizes[u->files++] = size;
			u->bytes += size;
		}
	}
	archive_read_free(a);
	return o;
}

/* A write buffer over the stream file. */
struct out {
	int fd;
	char *buf;
	size_t len;
	uint64_t total;
	bool failed;
};

static void out_put(struct out *o, const void *p, size_t len)
{
	if (o->failed)
		return;
	o->total += len;
	if (o->len + len > WRITE_BUF) {
		if (gv_write_all(o->fd, o->buf, o->len) != 0 || (len >= WRITE_BUF && gv_write_all(o->fd, p, len) != 0)) {
			o->failed = true;
			return;
		}
		o->len = 0;
		if (len >= WRITE_BUF)
			return;
	}
	memcpy(o->buf + o->len, p, len);
	o->len += len;
}

/* Pass 2: the same archive, already checked, written as the stream. */
static enum unpack_outcome write_pass(struct unpacker *u, const void *archive, size_t len, struct out *out)
{
	struct archive *a = open_reader(archive, len);
	if (!a)
		return outcome(u, UNPACK_FAILED, "out of memory");
	enum unpack_outcome o = UNPACK_OK;
	char shown[160] = "", head[EXEC_IMPORT_HEADER_MAX + 1];
	uint32_t files = 0;
	for (bool first = true;; first = false) {
		struct archive_entry *e;
		const char *path;
		size_t plen;
		enum path_kind kind;
		if ((o = next_entry(u, a, first, shown, &e, &path, &plen, &kind)) != UNPACK_OK || !e)
			break;
		if (plen <= u->strip)
			continue; /* the root, or the folder on top being dropped */
		path += u->strip;
		plen -= u->strip;
		int hl;
		if (kind == PATH_DIR) {
			hl = snprintf(head, sizeof(head), "d %.*s\n", (int)plen, path);
			out_put(out, head, (size_t)hl);
			continue;
		}
		if (files >= u->files) {
			o = outcome(u, UNPACK_FAILED, "second pass saw more files than the first");
			break;
		}
		uint64_t want = u->sizes[files++], got = 0;
		hl = snprintf(head, sizeof(head), "f %llu %.*s\n", (unsigned long long)want, (int)plen, path);
		out_put(out, head, (size_t)hl);
		for (;;) {
			la_ssize_t n = archive_read_data(a, u->buf, DATA_BUF);
			if (n == 0)
				break;
			if (n < 0 || (uint64_t)n > want - got) {
				o = outcome(u, UNPACK_FAILED, "entry '%s': second pass differs from the first", shown);
				break;
			}
			out_put(out, u->buf, (size_t)n);
			got += (uint64_t)n;
		}
		if (o == UNPACK_OK && got != want)
			o = outcome(u, UNPACK_FAILED, "entry '%s': second pass differs from the first", shown);
		if (o != UNPACK_OK)
			break;
	}
	archive_read_free(a);
	if (o == UNPACK_OK && files != u->files)
		o = outcome(u, UNPACK_FAILED, "second pass saw fewer files than the first");
	if (o == UNPACK_OK) {
		int hl = snprintf(head, sizeof(head), "e %u %llu\n", u->files, (unsigned long long)u->bytes);
		out_put(out, head, (size_t)hl);
		if (!out->failed && out->len && gv_write_all(out->fd, out->buf, out->len) != 0)
			out->failed = true;
		if (out->failed)
			o = outcome(u, UNPACK_FAILED, "write stream: %s", strerror(errno));
	}
	return o;
}

enum unpack_outcome unpack_archive(const void *archive, size_t archive_len, const char *stream_path,
				   const struct unpack_limits *lim, struct unpack_summary *sum, char *reason,
				   size_t reasonsz)
{
	struct unpacker u = { .lim = lim, .reason = reason, .reasonsz = reasonsz, .what = "the package" };
	memset(sum, 0, sizeof(*sum));
	enum unpack_outcome o;
	u.buf = malloc(DATA_BUF);
	u.sizes = calloc((size_t)lim->max_files + 1, sizeof(*u.sizes));
	if (!u.buf || !u.sizes || set_init(&u.set, (size_t)lim->max_files + lim->max_dirs + 16) != 0) {
		o = outcome(&u, UNPACK_FAILED, "out of memory");
		goto done;
	}
	if ((o = check_pass(&u, archive, archive_len)) != UNPACK_OK)
		goto done;
	if (u.one_top && u.top_yaml && !u.root_yaml)
		u.strip = strlen(u.top) + 1;
	struct out out = { .fd = -1 };
	out.buf = malloc(WRITE_BUF);
	out.fd = open(stream_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (!out.buf || out.fd < 0) {
		o = outcome(&u, UNPACK_FAILED, "create %s: %s", stream_path, strerror(errno));
	} else {
		o = write_pass(&u, archive, archive_len, &out);
		if (close(out.fd) != 0 && o == UNPACK_OK)
			o = outcome(&u, UNPACK_FAILED, "close %s: %s", stream_path, strerror(errno));
		out.fd = -1;
	}
	if (out.fd >= 0)
		close(out.fd);
	free(out.buf);
	if (o == UNPACK_OK) {
		sum->files = u.files;
		sum->dirs = u.dirs;
		sum->unpacked_bytes = u.bytes;
		sum->stream_bytes = out.total;
	}
done:
	set_free(&u.set);
	free(u.sizes);
	free(u.buf);
	return o;
}

/* ---- extraction into a folder (a submission's additional files) ---- */

/* The top-level names of the archive must not exist in the folder yet: the
 * job's own files (the main source, the other files, the archive itself,
 * gavel-unpack, the job record) are never replaced, and a clash is refused
 * before anything is written. */
static enum unpack_outcome check_clashes(struct unpacker *u, int dirfd)
{
	for (size_t i = 0; i < u->set.cap; i++) {
		const char *p = u->set.paths[i];
		if (!p || strchr(p, '/'))
			continue;
		struct stat st;
		char shown[160];
		exec_import_shown(shown, sizeof(shown), p, strlen(p));
		if (fstatat(dirfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return outcome(u, UNPACK_REJECTED,
				       "entry '%s': clashes with a file of the submission (the source or another job file)",
				       shown);
		if (errno != ENOENT)
			return outcome(u, UNPACK_FAILED, "stat '%s': %s", shown, strerror(errno));
	}
	return UNPACK_OK;
}

/* Opens the folder path[0..len) names below dirfd (all of it when dir,
 * else all but the last component, whose offset goes to *leaf), creating
 * what is missing with mkdirat 0755. Every step is an openat relative to
 * the step before with O_DIRECTORY | O_NOFOLLOW: a link is never followed,
 * whatever the folder holds. Returns an fd, or -1 with errno. */
static int open_folder(int dirfd, const char *path, size_t len, bool dir, size_t *leaf)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char name[EXEC_IMPORT_PATH_MAX + 1];
	size_t i = 0;
	while (fd >= 0) {
		size_t j = i;
		while (j < len && path[j] != '/')
			j++;
		if (j == len && !dir) {
			*leaf = i;
			return fd;
		}
		memcpy(name, path + i, j - i);
		name[j - i] = '\0';
		int nfd = -1;
		if (mkdirat(fd, name, 0755) == 0 || errno == EEXIST)
			nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(fd);
		errno = saved;
		fd = nfd;
		if (j >= len)
			return fd;
		i = j + 1;
	}
	return -1;
}

/* Writes one checked file: created (O_EXCL: never replacing anything,
 * O_NOFOLLOW: never through a link), 0644 or 0755 and nothing more. */
static enum unpack_outcome extract_file(struct unpacker *u, struct archive *a, int dirfd, const char *path,
					size_t plen, mode_t mode, uint64_t want, const char *shown)
{
	size_t leaf = 0;
	int pfd = open_folder(dirfd, path, plen, false, &leaf);
	if (pfd < 0)
		return outcome(u, UNPACK_FAILED, "entry '%s': open its folder: %s", shown, strerror(errno));
	char name[EXEC_IMPORT_PATH_MAX + 1];
	memcpy(name, path + leaf, plen - leaf);
	name[plen - leaf] = '\0';
	int fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	int saved = errno;
	close(pfd);
	if (fd < 0)
		return outcome(u, saved == EEXIST ? UNPACK_REJECTED : UNPACK_FAILED, "entry '%s': create: %s", shown,
			       strerror(saved));
	enum unpack_outcome o = UNPACK_OK;
	uint64_t got = 0;
	for (;;) {
		la_ssize_t n = archive_read_data(a, u->buf, DATA_BUF);
		if (n == 0)
			break;
		if (n < 0 || (uint64_t)n > want - got) {
			o = outcome(u, UNPACK_FAILED, "entry '%s': second pass differs from the first", shown);
			break;
		}
		if (gv_write_all(fd, u->buf, (size_t)n) != 0) {
			o = outcome(u, UNPACK_FAILED, "entry '%s': write: %s", shown, strerror(errno));
			break;
		}
		got += (uint64_t)n;
	}
	if (o == UNPACK_OK && got != want)
		o = outcome(u, UNPACK_FAILED, "entry '%s': second pass differs from the first", shown);
	/* The mode, exactly: no umask of ours widens or narrows it. */
	if (o == UNPACK_OK && fchmod(fd, mode) != 0)
		o = outcome(u, UNPACK_FAILED, "entry '%s': chmod: %s", shown, strerror(errno));
	if (close(fd) != 0 && o == UNPACK_OK)
		o = outcome(u, UNPACK_FAILED, "entry '%s': close: %s", shown, strerror(errno));
	return o;
}

/* Pass 2 of an extraction: the same archive, already checked, written
 * under dirfd. */
static enum unpack_outcome extract_pass(struct unpacker *u, const void *archive, size_t len, int dirfd)
{
	struct archive *a = open_reader(archive, len);
	if (!a)
		return outcome(u, UNPACK_FAILED, "out of memory");
	enum unpack_outcome o = UNPACK_OK;
	char shown[160] = "";
	uint32_t files = 0;
	for (bool first = true;; first = false) {
		struct archive_entry *e;
		const char *path;
		size_t plen;
		enum path_kind kind;
		if ((o = next_entry(u, a, first, shown, &e, &path, &plen, &kind)) != UNPACK_OK || !e)
			break;
		if (plen == 0)
			continue;
		if (kind == PATH_DIR) {
			size_t unused = 0;
			int fd = open_folder(dirfd, path, plen, true, &unused);
			if (fd < 0) {
				o = outcome(u, UNPACK_FAILED, "entry '%s': create: %s", shown, strerror(errno));
				break;
			}
			close(fd);
			continue;
		}
		if (files >= u->files) {
			o = outcome(u, UNPACK_FAILED, "second pass saw more files than the first");
			break;
		}
		mode_t mode = (archive_entry_perm(e) & 0111) ? 0755 : 0644;
		if ((o = extract_file(u, a, dirfd, path, plen, mode, u->sizes[files++], shown)) != UNPACK_OK)
			break;
	}
	archive_read_free(a);
	if (o == UNPACK_OK && files != u->files)
		o = outcome(u, UNPACK_FAILED, "second pass saw fewer files than the first");
	return o;
}

enum unpack_outcome unpack_extract(const void *archive, size_t archive_len, int dirfd,
				   const struct unpack_limits *lim, struct unpack_summary *sum, char *reason,
				   size_t reasonsz)
{
	struct unpacker u = { .lim = lim, .reason = reason, .reasonsz = reasonsz, .what = "the archive" };
	memset(sum, 0, sizeof(*sum));
	enum unpack_outcome o;
	u.buf = malloc(DATA_BUF);
	u.sizes = calloc((size_t)lim->max_files + 1, sizeof(*u.sizes));
	if (!u.buf || !u.sizes || set_init(&u.set, (size_t)lim->max_files + lim->max_dirs + 16) != 0) {
		o = outcome(&u, UNPACK_FAILED, "out of memory");
		goto done;
	}
	if ((o = check_pass(&u, archive, archive_len)) != UNPACK_OK || (o = check_clashes(&u, dirfd)) != UNPACK_OK)
		goto done;
	if ((o = extract_pass(&u, archive, archive_len, dirfd)) == UNPACK_OK) {
		sum->files = u.files;
		sum->dirs = u.dirs;
		sum->unpacked_bytes = u.bytes;
	}
done:
	set_free(&u.set);
	free(u.sizes);
	free(u.buf);
	return o;
}
