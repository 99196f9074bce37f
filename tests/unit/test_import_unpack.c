/* Unit tests of gavel-unpack's checks (executor/unpack/unpack.c), run
 * natively on archives built here with libarchive's writer: what the stream
 * holds for a good archive (names normalised, a folder on top dropped), and
 * every refusal the sandbox relies on, with the entry named; then the
 * extract mode (a submission's additional files): what lands in the folder,
 * and that every refusal writes nothing, inside the folder or outside. The
 * same code runs inside the import sandbox
 * (tests/integration/test_problem_import.c) and the compile phase
 * (tests/integration/test_stack_e2e.sh, "additional_files"). */
#include <archive.h>
#include <archive_entry.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "executor/problems/import_stream.h"
#include "executor/unpack/sources.h"
#include "executor/unpack/unpack.h"
#include "tests/support/testutil.h"

struct membuf {
	char *p;
	size_t len, cap;
};

static la_ssize_t mb_write(struct archive *a, void *ctx, const void *buf, size_t n)
{
	(void)a;
	struct membuf *m = ctx;
	if (m->len + n > m->cap) {
		m->cap = (m->len + n) * 2 + 4096;
		m->p = realloc(m->p, m->cap);
		assert_non_null(m->p);
	}
	memcpy(m->p + m->len, buf, n);
	m->len += n;
	return (la_ssize_t)n;
}

enum fmt { ZIP, TGZ, CPIO, TXZ };

/* One entry: 'f' file (data), 'x' file with mode 04755, 'd' folder, 'l'
 * symlink (data = target). */
struct ent {
	char kind;
	const char *path;
	const char *data;
};

static void build(enum fmt f, const struct ent *es, size_t n, struct membuf *mb)
{
	memset(mb, 0, sizeof(*mb));
	struct archive *a = archive_write_new();
	assert_non_null(a);
	if (f == ZIP) {
		assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
	} else if (f == CPIO) {
		assert_int_equal(archive_write_set_format_cpio(a), ARCHIVE_OK);
	} else {
		assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
		assert_int_equal(f == TGZ ? archive_write_add_filter_gzip(a) : archive_write_add_filter_xz(a), ARCHIVE_OK);
	}
	assert_int_equal(archive_write_open(a, mb, NULL, mb_write, NULL), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, es[i].path);
		bool file = es[i].kind == 'f' || es[i].kind == 'x';
		size_t len = file && es[i].data ? strlen(es[i].data) : 0;
		archive_entry_set_filetype(e, es[i].kind == 'd' ? AE_IFDIR : es[i].kind == 'l' ? AE_IFLNK : AE_IFREG);
		archive_entry_set_perm(e, es[i].kind == 'x' ? 04755 : 0644);
		if (es[i].kind == 'l')
			archive_entry_set_symlink(e, es[i].data);
		archive_entry_set_size(e, (la_int64_t)len);
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		if (len)
			assert_int_equal(archive_write_data(a, es[i].data, len), (la_ssize_t)len);
		archive_entry_free(e);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
}

static const struct unpack_limits lim = {
	.max_bytes = 1000, .max_files = 4, .max_dirs = 4, .max_path = 40, .max_depth = 4,
};

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gavel-unpack-unit-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return test_rm_rf(dir);
}

/* Unpacks; on success returns the stream's text in out (caller frees). */
static enum unpack_outcome unpack(const struct membuf *mb, const struct unpack_limits *l, char **out,
				  char *reason, size_t rsz)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/stream", dir);
	unlink(path);
	struct unpack_summary sum;
	enum unpack_outcome o = unpack_archive(mb->p, mb->len, path, l, &sum, reason, rsz);
	*out = NULL;
	if (o == UNPACK_OK) {
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		*out = calloc(1, sum.stream_bytes + 1);
		assert_non_null(*out);
		assert_int_equal(fread(*out, 1, sum.stream_bytes + 1, f), sum.stream_bytes);
		fclose(f);
	} else {
		assert_int_not_equal(access(path, F_OK), 0); /* a refusal writes nothing */
	}
	return o;
}

static void expect_stream(enum fmt f, const struct ent *es, size_t n, const char *want)
{
	struct membuf mb;
	build(f, es, n, &mb);
	char *out, reason[512];
	enum unpack_outcome o = unpack(&mb, &lim, &out, reason, sizeof(reason));
	if (o != UNPACK_OK)
		fail_msg("refused: %s", reason);
	assert_string_equal(out, want);
	/* And the host's parser takes it whole. */
	struct exec_import_stream ps;
	struct exec_import_stream_limits sl = { 1000, 4, 4, 40, 4 };
	exec_import_stream_init(&ps, &sl);
	size_t pos = 0, len = strlen(out);
	struct gv_err err;
	while (pos < len) {
		size_t used;
		struct exec_import_event ev;
		int r = exec_import_stream_next(&ps, out + pos, len - pos, &used, &ev, &err);
		if (r < 0)
			fail_msg("parse: %s", err.msg);
		pos += used;
	}
	assert_true(exec_import_stream_done(&ps));
	free(out);
	free(mb.p);
}

static void expect_refused(enum fmt f, const struct ent *es, size_t n, const struct unpack_limits *l,
			   const char *w1, const char *w2)
{
	struct membuf mb;
	build(f, es, n, &mb);
	char *out, reason[512];
	enum unpack_outcome o = unpack(&mb, l ? l : &lim, &out, reason, sizeof(reason));
	if (o != UNPACK_REJECTED)
		fail_msg("not refused (%d): %s", o, o == UNPACK_OK ? out : reason);
	if (!strstr(reason, w1) || (w2 && !strstr(reason, w2)))
		fail_msg("reason '%s' lacks '%s' / '%s'", reason, w1, w2 ? w2 : "");
	free(mb.p);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void unpack__good_archive__stream_in_archive_order(void **state)
{
	(void)state;
	static const struct ent es[] = {
		{ 'd', "./", NULL },
		{ 'f', "./problem.yaml", "name: x\n" },
		{ 'd', "./data/", NULL },
		{ 'f', "./data/1.in", "12" },
		{ 'f', "data/empty", NULL },
	};
	const char *want = "f 8 problem.yaml\nname: x\nd data\nf 2 data/1.in\n12f 0 data/empty\ne 3 10\n";
	expect_stream(TGZ, es, N(es), want);
	expect_stream(ZIP, es + 1, N(es) - 1, want);
}

static void unpack__folder_on_top__dropped(void **state)
{
	(void)state;
	static const struct ent top[] = {
		{ 'd', "p/", NULL },
		{ 'f', "p/problem.yaml", "y" },
		{ 'f', "p/data/1.in", "1" },
	};
	expect_stream(ZIP, top, N(top), "f 1 problem.yaml\nyf 1 data/1.in\n1e 2 2\n");
	/* Not when something sits beside it, or it holds no problem.yaml. */
	static const struct ent beside[] = {
		{ 'f', "p/problem.yaml", "y" },
		{ 'f', "README", "r" },
	};
	expect_stream(ZIP, beside, N(beside), "f 1 p/problem.yaml\nyf 1 README\nre 2 2\n");
	static const struct ent noyaml[] = {
		{ 'f', "data/1.in", "1" },
		{ 'f', "data/1.ans", "2" },
	};
	expect_stream(TGZ, noyaml, N(noyaml), "f 1 data/1.in\n1f 1 data/1.ans\n2e 2 2\n");
}

static void unpack__entry_types__refused_by_name(void **state)
{
	(void)state;
	static const struct ent sym[] = { { 'f', "a", "1" }, { 'l', "data/x", "/etc/passwd" } };
	expect_refused(TGZ, sym, N(sym), NULL, "entry 'data/x'", "symbolic link (to '/etc/passwd')");
	expect_refused(ZIP, sym, N(sym), NULL, "entry 'data/x'", "symbolic link");
}

static void unpack__paths__refused_by_name(void **state)
{
	(void)state;
	static const struct ent dots[] = { { 'f', "a/../../x", "1" } };
	expect_refused(TGZ, dots, 1, NULL, "entry 'a/../../x'", "leaves the package");
	static const struct ent abs[] = { { 'f', "/etc/cron.d/x", "1" } };
	expect_refused(TGZ, abs, 1, NULL, "entry '/etc/cron.d/x'", "absolute");
	static const struct ent deep[] = { { 'f', "a/b/c/d/e", "1" } };
	expect_refused(ZIP, deep, 1, NULL, "entry 'a/b/c/d/e'", "deeper than 4");
	static const struct ent longp[] = { { 'f', "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddde", "1" } };
	expect_refused(ZIP, longp, 1, NULL, "longer than 40", NULL);
	static const struct ent odd[] = { { 'f', "a\\b", "1" } };
	expect_refused(TGZ, odd, 1, NULL, "entry 'a\\b'", "character");
}

static void unpack__duplicates_and_conflicts__refused(void **state)
{
	(void)state;
	static const struct ent dup[] = { { 'f', "a", "1" }, { 'f', "./a", "2" } };
	expect_refused(TGZ, dup, N(dup), NULL, "entry './a'", "duplicate");
	static const struct ent dupdir[] = { { 'd', "d/", NULL }, { 'd', "d", NULL } };
	expect_refused(TGZ, dupdir, N(dupdir), NULL, "entry 'd", "duplicate"); /* the writer makes it 'd/' */
	static const struct ent file_then_dir[] = { { 'f', "a", "1" }, { 'f', "a/b", "2" } };
	expect_refused(ZIP, file_then_dir, N(file_then_dir), NULL, "entry 'a/b'", "is a file, not a folder");
	static const struct ent dir_then_file[] = { { 'f', "a/b", "1" }, { 'f', "a", "2" } };
	expect_refused(ZIP, dir_then_file, N(dir_then_file), NULL, "entry 'a'", "a file where a folder");
}

static void unpack__limits__refused(void **state)
{
	(void)state;
	static const struct ent many[] = {
		{ 'f', "1", "1" }, { 'f', "2", "2" }, { 'f', "3", "3" }, { 'f', "4", "4" }, { 'f', "5", "5" },
	};
	expect_refused(ZIP, many, N(many), NULL, "entry '5'", "more than 4 files");
	static const struct ent dirs[] = {
		{ 'd', "a", NULL }, { 'd', "b", NULL }, { 'd', "c", NULL }, { 'f', "d/e/f", "1" },
	};
	expect_refused(TGZ, dirs, N(dirs), NULL, "entry 'd/e/f'", "more than 4 folders");
	char big[700];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	const struct ent bytes[] = { { 'f', "a", big }, { 'f', "b", big } };
	expect_refused(TGZ, bytes, N(bytes), NULL, "entry 'b'", "1000");
}

static void unpack__other_formats__refused(void **state)
{
	(void)state;
	static const struct ent one[] = { { 'f', "a", "1" } };
	expect_refused(CPIO, one, 1, NULL, "not a zip or tar.gz", NULL);
	expect_refused(TXZ, one, 1, NULL, "not a zip or tar.gz", NULL);
	struct membuf empty = {0};
	build(TGZ, NULL, 0, &empty);
	char *out, reason[512];
	assert_int_equal(unpack(&empty, &lim, &out, reason, sizeof(reason)), UNPACK_REJECTED);
	assert_non_null(strstr(reason, "empty archive"));
	free(empty.p);
	/* A damaged gzip stream: cut in the middle. */
	char data[2000];
	memset(data, 'q', sizeof(data));
	data[sizeof(data) - 1] = '\0';
	const struct ent e2[] = { { 'f', "a", data } };
	struct membuf mb;
	build(TGZ, e2, 1, &mb);
	mb.len = 40;
	assert_int_equal(unpack(&mb, &lim, &out, reason, sizeof(reason)), UNPACK_REJECTED);
	free(mb.p);
}

/* ---- extract mode ---- */

static int box_seq;
static char outside[128], box[192];

/* A fresh folder <dir>/xN/box, holding main.py (the submission's source)
 * when pre; outside is <dir>/xN, where an escape would land. */
static int fresh_box(bool pre)
{
	snprintf(outside, sizeof(outside), "%.64s/x%d", dir, ++box_seq);
	snprintf(box, sizeof(box), "%s/box", outside);
	assert_int_equal(mkdir(outside, 0755), 0);
	assert_int_equal(mkdir(box, 0755), 0);
	if (pre) {
		char p[200];
		snprintf(p, sizeof(p), "%s/main.py", box);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs("print(1)\n", f);
		fclose(f);
	}
	int fd = open(box, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	return fd;
}

/* Entries under path (recursively), files and folders. */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		if (e->d_type == DT_DIR) {
			char sub[512];
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			n += count_entries(sub);
		}
	}
	closedir(d);
	return n;
}

static void read_file(const char *rel, char *out, size_t outsz, mode_t *mode)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", box, rel);
	struct stat st;
	if (lstat(p, &st) != 0)
		fail_msg("%s: not there", rel);
	assert_true(S_ISREG(st.st_mode));
	*mode = st.st_mode & 07777;
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, outsz - 1, f);
	out[n] = '\0';
	fclose(f);
}

static void expect_extract_refused(const struct membuf *mb, const struct unpack_limits *l, bool pre,
				   const char *w1, const char *w2)
{
	int fd = fresh_box(pre);
	struct unpack_summary sum;
	char reason[512];
	enum unpack_outcome o = unpack_extract(mb->p, mb->len, fd, l ? l : &lim, &sum, reason, sizeof(reason));
	close(fd);
	if (o != UNPACK_REJECTED)
		fail_msg("not refused (%d): %s", o, o == UNPACK_OK ? "" : reason);
	if (!strstr(reason, w1) || (w2 && !strstr(reason, w2)))
		fail_msg("reason '%s' lacks '%s' / '%s'", reason, w1, w2 ? w2 : "");
	/* Nothing written: the box holds what it held, and nothing beside it. */
	assert_int_equal(count_entries(box), pre ? 1 : 0);
	assert_int_equal(count_entries(outside), pre ? 2 : 1);
}

static void expect_extract_refused_ents(enum fmt f, const struct ent *es, size_t n, const struct unpack_limits *l,
					bool pre, const char *w1, const char *w2)
{
	struct membuf mb;
	build(f, es, n, &mb);
	expect_extract_refused(&mb, l, pre, w1, w2);
	free(mb.p);
}

static void extract__good_archive__files_and_folders_written(void **state)
{
	(void)state;
	static const struct ent es[] = {
		{ 'd', "data/", NULL },
		{ 'f', "data/input.txt", "3 4\n" },
		{ 'f', "lib/helper.py", "X = 7\n" },
		{ 'x', "run.sh", "#!/bin/sh\n" },
		{ 'f', "empty", NULL },
	};
	struct membuf mb;
	build(ZIP, es, N(es), &mb);
	int fd = fresh_box(true);
	struct unpack_summary sum;
	char reason[512], buf[64];
	mode_t mode;
	if (unpack_extract(mb.p, mb.len, fd, &lim, &sum, reason, sizeof(reason)) != UNPACK_OK)
		fail_msg("refused: %s", reason);
	close(fd);
	assert_int_equal(sum.files, 4);
	assert_int_equal(sum.dirs, 2);
	assert_int_equal(sum.unpacked_bytes, 20);
	read_file("data/input.txt", buf, sizeof(buf), &mode);
	assert_string_equal(buf, "3 4\n");
	assert_int_equal(mode, 0644);
	read_file("lib/helper.py", buf, sizeof(buf), &mode);
	assert_string_equal(buf, "X = 7\n");
	/* An execute bit gives 0755; setuid never survives. */
	read_file("run.sh", buf, sizeof(buf), &mode);
	assert_int_equal(mode, 0755);
	read_file("empty", buf, sizeof(buf), &mode);
	assert_string_equal(buf, "");
	read_file("main.py", buf, sizeof(buf), &mode);
	assert_string_equal(buf, "print(1)\n");
	char p[512];
	struct stat st;
	snprintf(p, sizeof(p), "%s/lib", box);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755);
	free(mb.p);
}

static void extract__escapes_and_links__refused_writing_nothing(void **state)
{
	(void)state;
	static const struct ent slip[] = { { 'f', "ok.txt", "1" }, { 'f', "../evil", "x" } };
	expect_extract_refused_ents(ZIP, slip, N(slip), NULL, true, "entry '../evil'", "leaves the package");
	static const struct ent slip2[] = { { 'f', "a/../../evil", "x" } };
	expect_extract_refused_ents(TGZ, slip2, N(slip2), NULL, false, "entry 'a/../../evil'", "leaves");
	static const struct ent abs[] = { { 'f', "/tmp/evil", "x" } };
	expect_extract_refused_ents(ZIP, abs, N(abs), NULL, false, "entry '/tmp/evil'", "absolute");
	static const struct ent sym[] = { { 'f', "a", "1" }, { 'l', "data", ".." }, { 'f', "data/evil", "x" } };
	expect_extract_refused_ents(ZIP, sym, N(sym), NULL, false, "entry 'data'", "symbolic link");
	static const struct ent sym2[] = { { 'l', "main.py", "/etc/passwd" } };
	expect_extract_refused_ents(TGZ, sym2, N(sym2), NULL, true, "entry 'main.py'", "symbolic link");
}

static void extract__name_of_a_job_file__refused(void **state)
{
	(void)state;
	/* The main source: refused before anything is written, even what
	 * comes first in the archive. */
	static const struct ent src[] = { { 'f', "a.txt", "1" }, { 'f', "main.py", "import os\n" } };
	expect_extract_refused_ents(ZIP, src, N(src), NULL, true, "entry 'main.py'", "clashes");
	/* A folder of the same name as a file there. */
	static const struct ent dirsrc[] = { { 'f', "main.py/x", "1" } };
	expect_extract_refused_ents(ZIP, dirsrc, N(dirsrc), NULL, true, "entry 'main.py'", "clashes");
	/* The source is untouched. */
	char buf[64];
	mode_t mode;
	read_file("main.py", buf, sizeof(buf), &mode);
	assert_string_equal(buf, "print(1)\n");
}

static void extract__limits__refused_writing_nothing(void **state)
{
	(void)state;
	static const struct ent many[] = {
		{ 'f', "1", "1" }, { 'f', "2", "2" }, { 'f', "3", "3" }, { 'f', "4", "4" }, { 'f', "5", "5" },
	};
	expect_extract_refused_ents(ZIP, many, N(many), NULL, false, "entry '5'", "more than 4 files");
	static const struct ent deep[] = { { 'f', "a/b/c/d/e", "1" } };
	expect_extract_refused_ents(ZIP, deep, N(deep), NULL, false, "entry 'a/b/c/d/e'", "deeper than 4");
	char big[700];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	const struct ent bytes[] = { { 'f', "a", big }, { 'f', "b", big } };
	expect_extract_refused_ents(ZIP, bytes, N(bytes), NULL, false, "entry 'b'", "the archive");
}

/* A zip whose only entry compresses 200 KB of zeros; its headers claim
 * 10 bytes (local header and central directory both patched). */
static int lying_zip(struct membuf *mb, bool declared)
{
	int patched = 0;
	memset(mb, 0, sizeof(*mb));
	struct archive *a = archive_write_new();
	assert_non_null(a);
	assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
	assert_int_equal(archive_write_set_options(a, "zip:compression=deflate"), ARCHIVE_OK);
	assert_int_equal(archive_write_set_bytes_in_last_block(a, 1), ARCHIVE_OK);
	assert_int_equal(archive_write_open(a, mb, NULL, mb_write, NULL), ARCHIVE_OK);
	static char zeros[200000];
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, "bomb.bin");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	if (declared)
		archive_entry_set_size(e, (la_int64_t)sizeof(zeros));
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	assert_int_equal(archive_write_data(a, zeros, sizeof(zeros)), (la_ssize_t)sizeof(zeros));
	archive_entry_free(e);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	/* Every uncompressed-size field that says 200000 now says 10. */
	for (size_t i = 0; i + 4 <= mb->len; i++) {
		unsigned char *b = (unsigned char *)mb->p + i;
		if (b[0] == 0x40 && b[1] == 0x0d && b[2] == 0x03 && b[3] == 0x00) {
			b[0] = 10;
			b[1] = b[2] = b[3] = 0;
			patched++;
		}
	}
	return patched;
}

static void extract__zip_bomb__counted_bytes_refused(void **state)
{
	(void)state;
	struct unpack_limits l = lim;
	l.max_bytes = 100000;
	struct membuf mb;
	/* Sizes declared, then patched to lie. */
	int lies = lying_zip(&mb, true);
	if (lies < 2)
		fail_msg("the sizes were not patched (%d)", lies);
	if (mb.len >= 5000)
		fail_msg("not compressed: %zu bytes", mb.len);
	expect_extract_refused(&mb, &l, false, "entry 'bomb.bin'", NULL);
	free(mb.p);
	/* No size in the local header at all (a data descriptor). */
	(void)lying_zip(&mb, false);
	expect_extract_refused(&mb, &l, false, "entry 'bomb.bin'", NULL);
	free(mb.p);
}

static void touch(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

/* "{sources}" after unpacking: the other source files, sorted, at any
 * depth up to the limit; not the main source, hidden names, links or
 * folders; too many is refused. */
static void sources__list__sorted_main_and_hidden_left_out(void **state)
{
	(void)state;
	char p[256];
	snprintf(p, sizeof(p), "%s/src", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/src/deep", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/dir.c", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	touch("main.c");
	touch("util.c");
	touch("util.h");
	touch(".gavel-files.c");
	touch("src/b.c");
	touch("src/a.c");
	touch("src/deep/z.c");
	snprintf(p, sizeof(p), "%s/link.c", dir);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	int root = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(root >= 0);
	char **list = NULL;
	size_t n = 0;
	assert_int_equal(unpack_sources_list(root, ".c,.cc", "main.c", 1, 100, &list, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(list[0], "src/a.c");
	assert_string_equal(list[1], "src/b.c");
	assert_string_equal(list[2], "util.c");
	assert_null(list[3]);
	unpack_sources_free(list);
	assert_int_equal(unpack_sources_list(root, ".c", "main.c", 2, 100, &list, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(list[2], "src/deep/z.c");
	unpack_sources_free(list);
	assert_int_equal(unpack_sources_list(root, ".c", "main.c", 2, 3, &list, &n), -1);
	assert_null(list);
	close(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unpack__good_archive__stream_in_archive_order),
		cmocka_unit_test(unpack__folder_on_top__dropped),
		cmocka_unit_test(unpack__entry_types__refused_by_name),
		cmocka_unit_test(unpack__paths__refused_by_name),
		cmocka_unit_test(unpack__duplicates_and_conflicts__refused),
		cmocka_unit_test(unpack__limits__refused),
		cmocka_unit_test(unpack__other_formats__refused),
		cmocka_unit_test(extract__good_archive__files_and_folders_written),
		cmocka_unit_test(extract__escapes_and_links__refused_writing_nothing),
		cmocka_unit_test(extract__name_of_a_job_file__refused),
		cmocka_unit_test(extract__limits__refused_writing_nothing),
		cmocka_unit_test(extract__zip_bomb__counted_bytes_refused),
		cmocka_unit_test(sources__list__sorted_main_and_hidden_left_out),
	};
	return cmocka_run_group_tests_name("import_unpack", tests, setup, teardown);
}
