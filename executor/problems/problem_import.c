/* Importing an uploaded problem package: the one-shot unpack sandbox, the
 * host side that writes what it returns, then loading the package and
 * building its validators. See problem_import.h; the stream between the
 * two sides is in import_stream.h, the sandbox step in PROTOCOL.md
 * ("Problem import") and its security argument in SECURITY.md.
 *
 * Security argument of the host side: the archive is only ever parsed by
 * gavel-unpack inside a sandbox with every usual layer (gVisor, uid 65534,
 * seccomp, rlimits, cgroup). What comes back is a byte stream read from
 * the sandbox's stdout, in windows of bounded size, parsed by one pure,
 * fuzzed function with its own limits; every path in it is checked again
 * against the same rule as in the sandbox (no "..", no absolute path, no
 * empty or "." component, a short character set). The host creates
 * dest_dir itself and writes every folder and file in it itself, through
 * dirfds walked one component at a time with O_NOFOLLOW and files created
 * O_EXCL: nothing the sandbox made on disk is ever opened by the host, so
 * there is no link to follow and no tree to escape from. */
#include "executor/problems/problem_import.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "executor/judge/problem.h"
#include "executor/judge/validator.h"
#include "executor/problems/import_stream.h"
#include "executor/sandbox/record.h"
#include "executor/sandbox/session.h"
#include "executor/sandbox/unpacker.h"

#define KB 1024ull
#define MB (1024ull * 1024)
/* What one emit phase returns, at most (a phase's stdout cap is 64 MiB). */
#define WINDOW_DEFAULT (32u << 20)
#define ARCHIVE_HARD_MAX (64ull << 20)
#define SUMMARY_MAX 4096

void exec_import_limits_default(struct exec_import_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->max_compressed_bytes = 64 * MB;
	l->max_unpacked_bytes = 1024 * MB;
	l->max_files = 20000;
	l->max_path_bytes = 255;
	l->max_depth = 16;
	l->wall_ms = 120000;
}

void exec_import_report_free(struct exec_import_report *r)
{
	if (!r)
		return;
	free(r->message);
	for (size_t i = 0; r->warnings && r->warnings[i]; i++)
		free(r->warnings[i]);
	free(r->warnings);
	memset(r, 0, sizeof(*r));
}

GV_PRINTF(2, 3) static int reject(struct exec_import_report *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	free(r->message);
	r->message = n < 0 ? NULL : msg;
	r->status = EXEC_IMPORT_REJECTED;
	return 0;
}

/* ---- removing a tree we made ---------------------------------------- */

/* Removes the entry name of dirfd and, for a folder, everything below it,
 * never following a link. Only ever used on trees this file created. */
static void remove_tree_at(int parent, const char *name, unsigned depth)
{
	if (unlinkat(parent, name, 0) == 0 || (errno != EISDIR && errno != EPERM))
		return;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *de;
	while (depth < EXEC_IMPORT_DEPTH_MAX + 2 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		remove_tree_at(dirfd(d), de->d_name, depth + 1);
	}
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

/* ---- the host-side writer ------------------------------------------- */

struct writer {
	int root;     /* dest_dir */
	int file;     /* the file being written; -1 between files */
	bool rejected;
	struct exec_import_report *report;
	char shown[160];
};

/* A copy of path split into components; path passed the path rule. */
static size_t split_path(const char *path, char *buf, size_t bufsz, char **parts, size_t maxparts)
{
	snprintf(buf, bufsz, "%s", path);
	size_t n = 0;
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c && n < maxparts; c = strtok_r(NULL, "/", &save))
		parts[n++] = c;
	return n;
}

/* Opens (making it when missing) the folder parts[0..n) below w->root.
 * Returns a dirfd or -1 (w->rejected set when the package is to blame: a
 * file stands where a folder must be). */
static int open_dirs(struct writer *w, char **parts, size_t n, struct gv_err *err)
{
	int fd = dup(w->root);
	if (fd < 0)
		return gv_err_errno(err, "dup");
	for (size_t i = 0; i < n; i++) {
		int next = openat(fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT) {
			if (mkdirat(fd, parts[i], 0755) != 0 && errno != EEXIST) {
				gv_err_errno(err, "mkdir %s", w->shown);
				close(fd);
				return -1;
			}
			next = openat(fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			int e = errno;
			close(fd);
			if (e == ENOTDIR || e == ELOOP) {
				w->rejected = true;
				reject(w->report, "entry '%s': a file stands where a folder is needed", w->shown);
				return -1;
			}
			errno = e;
			return gv_err_errno(err, "open folder of %s", w->shown);
		}
		close(fd);
		fd = next;
	}
	return fd;
}

static int writer_event(struct writer *w, const struct exec_import_event *ev, struct gv_err *err)
{
	char buf[EXEC_IMPORT_PATH_MAX + 1];
	char *parts[EXEC_IMPORT_DEPTH_MAX];
	switch (ev->kind) {
	case EXEC_IMPORT_EV_DIR: {
		exec_import_shown(w->shown, sizeof(w->shown), ev->path, strlen(ev->path));
		size_t n = split_path(ev->path, buf, sizeof(buf), parts, EXEC_IMPORT_DEPTH_MAX);
		int fd = open_dirs(w, parts, n, err);
		if (fd < 0)
			return -1;
		close(fd);
		return 0;
	}
	case EXEC_IMPORT_EV_FILE: {
		exec_import_shown(w->shown, sizeof(w->shown), ev->path, strlen(ev->path));
		size_t n = split_path(ev->path, buf, sizeof(buf), parts, EXEC_IMPORT_DEPTH_MAX);
		if (n == 0)
			return gv_err_set(err, GV_EINTERNAL, "empty path after the check");
		int dfd = open_dirs(w, parts, n - 1, err);
		if (dfd < 0)
			return -1;
		w->file = openat(dfd, parts[n - 1], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		int e = errno;
		close(dfd);
		if (w->file < 0) {
			if (e == EEXIST) {
				w->rejected = true;
				reject(w->report, "entry '%s': duplicate entry", w->shown);
				return -1;
			}
			errno = e;
			return gv_err_errno(err, "create %s", w->shown);
		}
		return 0;
	}
	case EXEC_IMPORT_EV_DATA:
		if (w->file < 0 || gv_write_all(w->file, ev->data, ev->len) != 0)
			return gv_err_errno(err, "write %s", w->shown);
		return 0;
	case EXEC_IMPORT_EV_FILE_END: {
		int fd = w->file;
		w->file = -1;
		if (fd < 0 || close(fd) != 0)
			return gv_err_errno(err, "close %s", w->shown);
		return 0;
	}
	case EXEC_IMPORT_EV_END:
		return 0;
	}
	return gv_err_set(err, GV_EINTERNAL, "unknown stream event");
}

/* Feeds one window of the stream to the parser and the writer. */
static int writer_feed(struct writer *w, struct exec_import_stream *ps, const char *buf, size_t len,
		       struct gv_err *err)
{
	size_t pos = 0;
	for (;;) {
		size_t used = 0;
		struct exec_import_event ev;
		int r = exec_import_stream_next(ps, buf + pos, len - pos, &used, &ev, err);
		pos += used;
		if (r < 0) {
			/* gavel-unpack checked all of this: a stream that breaks
			 * the rules comes from a broken or subverted unpacker,
			 * i.e. from this archive. */
			w->rejected = true;
			reject(w->report, "%s", err->msg);
			return -1;
		}
		if (r == 0)
			return 0;
		if (writer_event(w, &ev, err) != 0)
			return -1;
	}
}

/* ---- the unpack sandbox --------------------------------------------- */

struct unpack_summary_rec {
	uint64_t files, dirs, unpacked_bytes, stream_bytes;
};

static int parse_summary(const char *buf, size_t len, uint64_t stream_max, struct unpack_summary_rec *s,
			 struct gv_err *err)
{
	memset(s, 0, sizeof(*s));
	if (!buf || len > SUMMARY_MAX)
		return gv_err_set(err, GV_EPROTO, "unpack summary missing or too long");
	struct { const char *key; uint64_t *v; uint64_t max; bool seen; } keys[] = {
		{ "files", &s->files, UINT32_MAX, false },
		{ "dirs", &s->dirs, UINT32_MAX, false },
		{ "unpacked_bytes", &s->unpacked_bytes, UINT64_MAX, false },
		{ "stream_bytes", &s->stream_bytes, stream_max, false },
	};
	size_t pos = 0;
	struct exec_record_field f;
	int r;
	while ((r = exec_record_next(buf, len, &pos, &f, err)) > 0) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			if (!exec_record_key_is(&f, keys[i].key))
				continue;
			if (exec_record_parse_u64(f.value, f.value_len, keys[i].max, keys[i].v, err) != 0)
				return -1;
			keys[i].seen = true;
		}
	}
	if (r < 0)
		return -1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!keys[i].seen)
			return gv_err_set(err, GV_EPROTO, "unpack summary: no %s", keys[i].key);
	return 0;
}

/* The first line of a phase's stderr, made printable, for a message. */
static void first_line(char *out, size_t outsz, const struct exec_phase_result *r)
{
	const char *s = r->err_out ? r->err_out : "";
	size_t len = r->err_out ? strcspn(s, "\n") : 0;
	if (len > r->err_len)
		len = r->err_len;
	exec_import_shown(out, outsz, s, len);
}

/* The verdict of the compile phase (gavel-unpack unpack): 0 to go on with
 * *sum, 1 when the report now says REJECTED, -1 for our failure. */
static int judge_unpack(const struct exec_phase_result *c, const struct exec_import_limits *l,
			uint64_t stream_max, struct unpack_summary_rec *sum, struct exec_import_report *r,
			struct gv_err *err)
{
	char line[400];
	first_line(line, sizeof(line), c);
	if (strcmp(c->status, "OK") == 0) {
		if (parse_summary(c->out, c->out_len, stream_max, sum, err) != 0) {
			gv_err_prefix(err, "unpack sandbox");
			return -1;
		}
		if (sum->files > l->max_files || sum->unpacked_bytes > l->max_unpacked_bytes)
			return gv_err_set(err, GV_EPROTO, "unpack sandbox: summary over the limits");
		return 0;
	}
	if (strcmp(c->status, "RE") == 0 && c->exit_code == 2) {
		reject(r, "%s", line);
		return 1;
	}
	if (strcmp(c->status, "TLE") == 0 || strcmp(c->status, "WLE") == 0) {
		reject(r, "the archive took longer than %u ms to unpack", l->wall_ms);
		return 1;
	}
	if (strcmp(c->status, "MLE") == 0) {
		reject(r, "unpacking the archive needed too much memory");
		return 1;
	}
	if (strcmp(c->status, "SG") == 0 || strcmp(c->status, "OLE") == 0) {
		reject(r, "the unpacker failed on this archive (%s %d)", c->status, c->signal);
		return 1;
	}
	return gv_err_set(err, GV_ESANDBOX, "unpack sandbox: %s %s: %s", c->status, c->message, line);
}

static void u64s(char *buf, size_t sz, uint64_t v)
{
	snprintf(buf, sz, "%" PRIu64, v);
}

/* Runs the unpack sandbox and writes what it returns into w->root. 0 with
 * the report still undecided (go on), 0 with REJECTED, -1 for our
 * failure. */
static int unpack_into(struct exec_engine *e, const void *archive, size_t len, const struct exec_import_limits *l,
		       struct writer *w, struct exec_import_report *r, struct gv_err *err)
{
	size_t ulen = 0;
	char *unpacker = exec_unpacker_read(e, l->unpacker_path, &ulen, err);
	if (!unpacker)
		return -1;
	uint64_t max_dirs = l->max_files;
	/* Stream = the bytes + one header per record. */
	uint64_t stream_max = l->max_unpacked_bytes + ((uint64_t)l->max_files * 2 + max_dirs + 1) *
							      (EXEC_IMPORT_HEADER_MAX - EXEC_IMPORT_PATH_MAX + l->max_path_bytes);
	char a_bytes[24], a_files[24], a_dirs[24], a_path[24], a_depth[24], a_window[24];
	u64s(a_bytes, sizeof(a_bytes), l->max_unpacked_bytes);
	u64s(a_files, sizeof(a_files), l->max_files);
	u64s(a_dirs, sizeof(a_dirs), max_dirs);
	u64s(a_path, sizeof(a_path), l->max_path_bytes);
	u64s(a_depth, sizeof(a_depth), l->max_depth);
	uint64_t window = l->stream_window_bytes ? l->stream_window_bytes : WINDOW_DEFAULT;
	u64s(a_window, sizeof(a_window), window);
	const char *const compile_argv[] = { "/box/gavel-unpack", "unpack", "/box/archive", "/box/stream", a_bytes,
					     a_files, a_dirs, a_path, a_depth, NULL };
	const char *const run_argv[] = { "/box/gavel-unpack", "emit", "/box/stream", a_window, NULL };
	struct exec_file files[2] = {
		{ .name = "gavel-unpack", .data = unpacker, .len = ulen, .executable = true },
		{ .name = "archive", .data = archive, .len = len },
	};
	struct exec_job job = {
		.tenant = l->tenant ? l->tenant : "import",
		.compile_argv = compile_argv,
		.run_argv = run_argv,
		.files = files,
		.n_files = 2,
		/* The archive is read into memory whole, plus libarchive's
		 * buffers and the table of paths. */
		.compile_limits = { .cpu_ms = l->wall_ms, .wall_ms = l->wall_ms,
				    .memory_kb = (192 * MB + 2 * (uint64_t)len) / KB, .output_bytes = SUMMARY_MAX * 4,
				    .procs = 16, .open_files = 64, .fsize_kb = stream_max / KB + 1 },
		.run_limits = { .cpu_ms = 20000, .wall_ms = 60000, .memory_kb = 64 * MB / KB,
				.output_bytes = window, .stderr_bytes = 4096, .procs = 16, .open_files = 64,
				.fsize_kb = 1024 },
	};
	struct exec_session *s = NULL;
	struct exec_phase_result c;
	int rc = exec_session_open(e, &job, &s, &c, err);
	free(unpacker);
	if (rc != 0) {
		exec_phase_result_free(&c);
		gv_err_prefix(err, "unpack sandbox");
		return -1;
	}
	struct unpack_summary_rec sum;
	rc = judge_unpack(&c, l, stream_max, &sum, r, err);
	exec_phase_result_free(&c);
	if (rc != 0) {
		exec_session_close(s);
		return rc > 0 ? 0 : -1;
	}
	struct exec_import_stream ps;
	struct exec_import_stream_limits sl = {
		.max_bytes = l->max_unpacked_bytes,
		.max_files = l->max_files,
		.max_dirs = (uint32_t)max_dirs,
		.max_path = l->max_path_bytes,
		.max_depth = l->max_depth,
	};
	exec_import_stream_init(&ps, &sl);
	for (uint64_t off = 0; rc == 0 && off < sum.stream_bytes;) {
		char in[32];
		int n = snprintf(in, sizeof(in), "%" PRIu64 "\n", off);
		struct exec_phase_result t;
		if (exec_session_run_test(s, in, (size_t)n, &t, err) != 0) {
			gv_err_prefix(err, "unpack sandbox, stream at %" PRIu64, off);
			rc = -1;
		} else {
			uint64_t want = sum.stream_bytes - off < window ? sum.stream_bytes - off : window;
			if (strcmp(t.status, "OK") != 0 || t.out_len != want) {
				rc = gv_err_set(err, GV_EPROTO, "unpack sandbox: stream at %" PRIu64 ": %s, %zu bytes",
						off, t.status, t.out_len);
			} else if (writer_feed(w, &ps, t.out, t.out_len, err) != 0) {
				rc = w->rejected ? 1 : -1;
			}
			off += want;
		}
		exec_phase_result_free(&t);
	}
	exec_session_close(s);
	if (rc == 0 && !exec_import_stream_done(&ps)) {
		w->rejected = true;
		reject(r, "package stream: ended early");
		rc = 1;
	}
	if (rc > 0)
		return 0;
	if (rc == 0) {
		r->files = (uint32_t)ps.files;
		r->unpacked_bytes = ps.bytes;
	}
	return rc;
}

/* ---- loading and building ------------------------------------------- */

static int copy_warnings(const struct exec_problem *p, struct exec_import_report *r)
{
	if (!p->nwarnings)
		return 0;
	r->warnings = calloc(p->nwarnings + 1, sizeof(char *));
	if (!r->warnings)
		return -1;
	for (size_t i = 0; i < p->nwarnings; i++)
		if (!(r->warnings[i] = strdup(p->warnings[i])))
			return -1;
	return 0;
}

/* The loader's message without our folder's name: the tenant sees it. */
static void package_message(char *msg, const char *dest_dir)
{
	static const char *const prefixes[] = { "problem package ", "problem " };
	size_t dl = strlen(dest_dir);
	for (size_t i = 0; i < 2; i++) {
		size_t pl = strlen(prefixes[i]);
		if (strncmp(msg, prefixes[i], pl) == 0 && strncmp(msg + pl, dest_dir, dl) == 0 &&
		    strncmp(msg + pl + dl, ": ", 2) == 0) {
			memmove(msg, msg + pl + dl + 2, strlen(msg + pl + dl + 2) + 1);
			break;
		}
	}
	for (char *at; dl && (at = strstr(msg, dest_dir)) != NULL;) {
		at[0] = '.';
		memmove(at + 1, at + dl, strlen(at + dl) + 1);
	}
}

static int check_package(struct exec_engine *e, const struct lang_registry *langs, const char *dest_dir,
			 const char *tenant, struct exec_import_report *r, struct gv_err *err)
{
	struct exec_problem p;
	struct exec_problem_opts opts = { .langs = langs };
	struct gv_err perr;
	if (exec_problem_load(&p, dest_dir, &opts, &perr) != 0) {
		exec_problem_free(&p);
		if (perr.code == ENOMEM)
			return gv_err_set(err, ENOMEM, "%s", perr.msg);
		package_message(perr.msg, dest_dir);
		return reject(r, "%s", perr.msg);
	}
	int rc = 0;
	if (copy_warnings(&p, r) != 0) {
		rc = gv_err_set(err, ENOMEM, "import warnings");
		goto out;
	}
	if (p.nvalidators && !langs) {
		rc = gv_err_set(err, GV_EINVAL, "no language registry to build the package's validators");
		goto out;
	}
	for (size_t i = 0; i < p.nvalidators && r->status != EXEC_IMPORT_REJECTED; i++) {
		struct exec_validator *v = NULL;
		if (exec_validator_new_at(&v, e, &p, i, langs, tenant, err) != 0) {
			if (err->code == ENOMEM || err->code == GV_EINTERNAL) {
				rc = -1;
				break;
			}
			reject(r, "%s", err->msg);
			break;
		}
		bool compiled = false;
		char *out = NULL;
		size_t out_len = 0;
		if (exec_validator_compile(v, &compiled, &out, &out_len, err) != 0) {
			rc = -1;
		} else if (!compiled) {
			reject(r, "%s/ does not compile:\n%s", p.validators[i].dir, out ? out : "");
		}
		free(out);
		exec_validator_free(v);
		if (rc != 0)
			break;
	}
out:
	exec_problem_free(&p);
	return rc;
}

int exec_problem_import(struct exec_engine *e, const struct lang_registry *langs, const void *archive,
			size_t len, const char *dest_dir, const struct exec_import_limits *limits,
			struct exec_import_report *report, struct gv_err *err)
{
	memset(report, 0, sizeof(*report));
	report->status = EXEC_IMPORT_INTERNAL;
	struct exec_import_limits l;
	if (limits)
		l = *limits;
	else
		exec_import_limits_default(&l);
	if (!l.max_files || !l.max_path_bytes || !l.max_depth || !l.wall_ms || !l.max_compressed_bytes ||
	    l.max_path_bytes > EXEC_IMPORT_PATH_MAX || l.max_depth > EXEC_IMPORT_DEPTH_MAX ||
	    l.max_compressed_bytes > ARCHIVE_HARD_MAX || l.wall_ms > 3600000 || l.stream_window_bytes > WINDOW_DEFAULT)
		return gv_err_set(err, GV_EINVAL, "import limits out of range");
	if (!dest_dir || !*dest_dir || dest_dir[strlen(dest_dir) - 1] == '/')
		return gv_err_set(err, GV_EINVAL, "destination folder missing or ending in '/'");
	if (len > l.max_compressed_bytes) {
		reject(report, "archive of %zu bytes: larger than the limit of %" PRIu64 " bytes", len,
		       l.max_compressed_bytes);
		return 0;
	}
	if (len == 0) {
		reject(report, "empty archive");
		return 0;
	}
	if (mkdir(dest_dir, 0755) != 0)
		return gv_err_errno(err, "create %s", dest_dir);
	struct writer w = { .root = -1, .file = -1, .report = report };
	w.root = open(dest_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc;
	if (w.root < 0) {
		rc = gv_err_errno(err, "open %s", dest_dir);
	} else {
		rc = unpack_into(e, archive, len, &l, &w, report, err);
		if (w.file >= 0)
			close(w.file);
		close(w.root);
	}
	if (rc == 0 && report->status == EXEC_IMPORT_INTERNAL)
		rc = check_package(e, langs, dest_dir, l.tenant ? l.tenant : "import", report, err);
	if (rc == 0 && report->status == EXEC_IMPORT_INTERNAL)
		report->status = EXEC_IMPORT_OK;
	if (rc != 0) {
		report->status = EXEC_IMPORT_INTERNAL;
		free(report->message);
		report->message = NULL;
	}
	if (report->status != EXEC_IMPORT_OK) {
		char parent[4096];
		snprintf(parent, sizeof(parent), "%s", dest_dir);
		char *slash = strrchr(parent, '/');
		const char *leaf = dest_dir;
		int pfd = AT_FDCWD;
		if (slash) {
			leaf = dest_dir + (slash - parent) + 1;
			*slash = '\0';
			pfd = open(slash == parent ? "/" : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		if (pfd >= 0 || pfd == AT_FDCWD)
			remove_tree_at(pfd, leaf, 0);
		if (pfd >= 0)
			close(pfd);
	}
	return rc;
}
