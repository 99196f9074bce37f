/* Integration tests of the problem-package import
 * (executor/problems/problem_import.c) against the real engine: every fixture
 * under tests/problems/, zipped and tar.gz'd here with libarchive's writer,
 * imports and loads to the same cases as the original folder; hostile archives
 * (path traversal, absolute path, symlink to /etc, hard link, device node, a
 * 10 GB zip bomb whose header lies, a tar whose header claims 10 GB, 100,000
 * tiny files, malformed problem.yaml, a validator that does not compile) are
 * each refused with a message naming the entry or field, leave nothing behind,
 * and the engine imports a good package again afterwards.
 *
 * Needs root, /usr/bin/runsc, a built gavel-init and gavel-unpack beside it
 * (GAVEL_INIT, else $BUILD/gavel-init). When these are missing the tests fail
 * saying why, unless GAVEL_ALLOW_SKIP=1. The runsc root, work root and cgroup
 * parent carry this test's pid. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor/judge/problem.h"
#include "executor/problems/problem_import.h"
#include "executor/sandbox/session.h"
#include "languages/lang.h"
#include "tests/support/engine_test.h"
#include "tests/support/testutil.h"

struct env {
	struct exec_engine e;
	struct exec_engine_config cfg;
	struct lang_registry langs;
	struct test_engine_roots roots;
	char init_path[PATH_MAX], root[PATH_MAX];
	char scratch[128]; /* each import's dest_dir goes in a fresh folder below */
	bool ready, langs_ready;
	unsigned seq;
};

static struct env g;

static int group_setup(void **state)
{
	(void)state;
	const char *r = getenv("GAVEL_ROOT");
	snprintf(g.root, sizeof(g.root), "%s", r && *r ? r : ".");
	char dir[PATH_MAX + 32];
	struct gv_err err;
	snprintf(dir, sizeof(dir), "%s/languages", g.root);
	if (lang_registry_load(&g.langs, dir, &err) != 0) {
		fprintf(stderr, "# cannot run: languages: %s\n", err.msg);
		return 0;
	}
	g.langs_ready = true;
	char why[256];
	if (!test_engine_can_run(NULL, g.init_path, why, sizeof(why))) {
		fprintf(stderr, "# cannot run: %s\n", why);
		return 0;
	}
	test_engine_roots_name(&g.roots, "gavel-unpack-test-%d", (int)getpid());
	snprintf(g.scratch, sizeof(g.scratch), "/var/tmp/gavel-unpack-test-%d-dest", (int)getpid());
	if (mkdir(g.scratch, 0700) != 0) {
		fprintf(stderr, "# cannot run: mkdir %s: %s\n", g.scratch, strerror(errno));
		return 0;
	}
	g.cfg = test_engine_config(&g.roots, g.init_path);
	if (exec_engine_init(&g.e, &g.cfg, &err) != 0) {
		fprintf(stderr, "# cannot run: engine init: %s\n", err.msg);
		return 0;
	}
	g.ready = true;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (g.langs_ready)
		lang_registry_free(&g.langs);
	if (!g.ready)
		return 0;
	test_engine_remove(&g.e, &g.roots, NULL);
	test_rm_rf(g.scratch);
	return 0;
}

static void require_ready(void)
{
	test_engine_require_ready(g.ready, "import tests");
}

/* ---- archives built in memory ----------------------------------------- */

struct membuf {
	char *p;
	size_t len, cap;
};

static void mb_put(struct membuf *m, const void *p, size_t n)
{
	if (m->len + n > m->cap) {
		size_t cap = m->cap ? m->cap : 65536;
		while (cap < m->len + n)
			cap *= 2;
		m->p = realloc(m->p, cap);
		assert_non_null(m->p);
		m->cap = cap;
	}
	memcpy(m->p + m->len, p, n);
	m->len += n;
}

static la_ssize_t mb_write(struct archive *a, void *ctx, const void *buf, size_t n)
{
	(void)a;
	mb_put(ctx, buf, n);
	return (la_ssize_t)n;
}

enum fmt { FMT_ZIP, FMT_TGZ };

static struct archive *aw_new(enum fmt f, struct membuf *mb)
{
	struct archive *a = archive_write_new();
	assert_non_null(a);
	if (f == FMT_ZIP) {
		assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
		/* Stored: fast to build with many entries. */
		assert_int_equal(archive_write_set_options(a, "zip:compression=store"), ARCHIVE_OK);
	} else {
		assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
		assert_int_equal(archive_write_add_filter_gzip(a), ARCHIVE_OK);
	}
	assert_int_equal(archive_write_open(a, mb, NULL, mb_write, NULL), ARCHIVE_OK);
	return a;
}

static void aw_add(struct archive *a, const char *path, mode_t type, const void *data, size_t len,
		   const char *link)
{
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
	archive_entry_set_mtime(e, 1700000000, 0);
	if (type == AE_IFLNK)
		archive_entry_set_symlink(e, link);
	if (type == AE_IFCHR)
		archive_entry_set_rdev(e, makedev(1, 3));
	if (type == AE_IFREG && link)
		archive_entry_set_hardlink(e, link);
	archive_entry_set_size(e, type == AE_IFREG && !link ? (la_int64_t)len : 0);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	if (type == AE_IFREG && !link && len)
		assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
	archive_entry_free(e);
}

static void aw_close(struct archive *a)
{
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct membuf m = {0};
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		mb_put(&m, buf, n);
	fclose(f);
	mb_put(&m, "", 1);
	*len = m.len - 1;
	return m.p;
}

/* Adds the folder dir (shown as rel) and everything below it, sorted. */
static void aw_add_tree(struct archive *a, const char *dir, const char *rel)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		if (strcmp(nm, ".") && strcmp(nm, "..")) {
			char p[PATH_MAX], r[PATH_MAX];
			snprintf(p, sizeof(p), "%s/%s", dir, nm);
			snprintf(r, sizeof(r), "%s%s%s", rel, *rel ? "/" : "", nm);
			struct stat st;
			assert_int_equal(lstat(p, &st), 0);
			if (S_ISDIR(st.st_mode)) {
				aw_add(a, r, AE_IFDIR, NULL, 0, NULL);
				aw_add_tree(a, p, r);
			} else if (S_ISREG(st.st_mode)) {
				size_t len = 0;
				char *data = slurp(p, &len);
				assert_non_null(data);
				aw_add(a, r, AE_IFREG, data, len, NULL);
				free(data);
			}
		}
		free(names[i]);
	}
	free(names);
}

/* ---- importing -------------------------------------------------------- */

struct imported {
	struct exec_import_report rep;
	char dest[256], parent[200];
	double ms;
};

static void import_with(const void *archive, size_t len, const struct exec_import_limits *lim,
			struct imported *im)
{
	snprintf(im->parent, sizeof(im->parent), "%s/%u", g.scratch, g.seq++);
	assert_int_equal(mkdir(im->parent, 0700), 0);
	snprintf(im->dest, sizeof(im->dest), "%s/pkg", im->parent);
	struct gv_err err;
	double t = test_now_ms();
	int rc = exec_problem_import(&g.e, &g.langs, archive, len, im->dest, lim, &im->rep, &err);
	im->ms = test_now_ms() - t;
	if (rc != 0)
		fail_msg("import could not run: %s", err.msg);
	fprintf(stderr, "# import of %zu bytes: %s in %.0f ms%s%s\n", len,
		im->rep.status == EXEC_IMPORT_OK ? "OK" : "REJECTED", im->ms, im->rep.message ? ": " : "",
		im->rep.message ? im->rep.message : "");
}

/* Refused, with a message holding every one of the words, and nothing
 * left in the import's folder. */
static void expect_rejected(const void *archive, size_t len, const struct exec_import_limits *lim, ...)
{
	struct imported im;
	import_with(archive, len, lim, &im);
	assert_int_equal(im.rep.status, EXEC_IMPORT_REJECTED);
	assert_non_null(im.rep.message);
	va_list ap;
	va_start(ap, lim);
	for (const char *w = va_arg(ap, const char *); w; w = va_arg(ap, const char *))
		if (!strstr(im.rep.message, w))
			fail_msg("message '%s' lacks '%s'", im.rep.message, w);
	va_end(ap);
	assert_int_equal(test_count_entries(im.parent), 0);
	/* Our folders are none of the tenant's business. */
	assert_null(strstr(im.rep.message, g.scratch));
	exec_import_report_free(&im.rep);
	/* Nothing escaped next to the scratch folder either. */
	char p[300];
	snprintf(p, sizeof(p), "%s/escape.txt", g.scratch);
	assert_int_not_equal(access(p, F_OK), 0);
	assert_int_not_equal(access("/tmp/gavel-unpack-test-absolute", F_OK), 0);
}

/* Every case of a and b: same names, paths and bytes; same settings. */
static void assert_same_problem(const struct exec_problem *a, const struct exec_problem *b)
{
	assert_int_equal(a->ncases, b->ncases);
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->interactive, b->interactive);
	assert_int_equal(a->custom_validation, b->custom_validation);
	assert_int_equal(a->time_limit_ms, b->time_limit_ms);
	assert_int_equal(a->memory_mb, b->memory_mb);
	assert_int_equal(a->nvalidators, b->nvalidators);
	for (size_t i = 0; i < a->nvalidators; i++)
		assert_string_equal(a->validators[i].dir, b->validators[i].dir);
	for (size_t i = 0; i < a->ncases; i++) {
		const struct exec_problem_node *x = a->cases[i], *y = b->cases[i];
		assert_string_equal(x->name, y->name);
		assert_string_equal(x->in_path, y->in_path);
		assert_string_equal(x->ans_path, y->ans_path);
		const char *rels[2] = { x->in_path, x->ans_path };
		for (int k = 0; k < 2; k++) {
			char *da, *db;
			size_t la, lb;
			struct gv_err err;
			assert_int_equal(exec_problem_read(a, rels[k], 1u << 24, &da, &la, &err), 0);
			assert_int_equal(exec_problem_read(b, rels[k], 1u << 24, &db, &lb, &err), 0);
			assert_int_equal(la, lb);
			assert_memory_equal(da, db, la);
			free(da);
			free(db);
		}
	}
	assert_int_equal(exec_problem_case_group(a->cases[0])->grading.aggregation,
			 exec_problem_case_group(b->cases[0])->grading.aggregation);
}

static void roundtrip(const char *fixture, enum fmt f, const struct exec_import_limits *lim)
{
	char dir[PATH_MAX + 64];
	snprintf(dir, sizeof(dir), "%s/tests/problems/%s", g.root, fixture);
	struct membuf mb = {0};
	struct archive *a = aw_new(f, &mb);
	aw_add_tree(a, dir, "");
	aw_close(a);
	struct imported im;
	import_with(mb.p, mb.len, lim, &im);
	if (im.rep.status != EXEC_IMPORT_OK)
		fail_msg("%s (%s): %s", fixture, f == FMT_ZIP ? "zip" : "tar.gz", im.rep.message);
	assert_true(im.rep.files > 0);
	struct exec_problem orig, got;
	struct exec_problem_opts opts = { .langs = &g.langs };
	struct gv_err err;
	if (exec_problem_load(&orig, dir, &opts, &err) != 0)
		fail_msg("load %s: %s", dir, err.msg);
	if (exec_problem_load(&got, im.dest, &opts, &err) != 0)
		fail_msg("load imported %s: %s", fixture, err.msg);
	assert_same_problem(&orig, &got);
	exec_problem_free(&orig);
	exec_problem_free(&got);
	exec_import_report_free(&im.rep);
	test_rm_rf(im.parent);
	free(mb.p);
}

/* palindrome: problemtools' output_validator/<name>/ layout (C++), built in
 * the import's sandbox; kattisgrading: legacy testdata.yaml grading. */
static const char *const fixtures[] = { "hello", "sum", "sumtl", "floats", "scoring", "anypair", "bestnumber",
					"guess", "palindrome", "kattisgrading", NULL };

static void import__fixtures_zip__load_as_the_originals(void **state)
{
	(void)state;
	require_ready();
	for (size_t i = 0; fixtures[i]; i++)
		roundtrip(fixtures[i], FMT_ZIP, NULL);
}

static void import__fixtures_tar_gz__load_as_the_originals(void **state)
{
	(void)state;
	require_ready();
	for (size_t i = 0; fixtures[i]; i++)
		roundtrip(fixtures[i], FMT_TGZ, NULL);
}

/* The stream comes back in many small windows: records and file bytes
 * cut at every odd place still make the same tree. */
static void import__stream_in_small_windows__same_tree(void **state)
{
	(void)state;
	require_ready();
	struct exec_import_limits lim;
	exec_import_limits_default(&lim);
	lim.stream_window_bytes = 333;
	roundtrip("scoring", FMT_TGZ, &lim);
}

static const char problem_yaml[] = "name: Hello\n";

/* A minimal good package plus one hostile entry added by add. */
static void hostile(enum fmt f, void (*add)(struct archive *), struct membuf *mb)
{
	struct archive *a = aw_new(f, mb);
	aw_add(a, "problem.yaml", AE_IFREG, problem_yaml, strlen(problem_yaml), NULL);
	aw_add(a, "data/sample/1.in", AE_IFREG, "x\n", 2, NULL);
	aw_add(a, "data/sample/1.ans", AE_IFREG, "y\n", 2, NULL);
	add(a);
	aw_close(a);
}

static void add_traversal(struct archive *a)
{
	aw_add(a, "data/../../escape.txt", AE_IFREG, "gotcha\n", 7, NULL);
}

static void add_absolute(struct archive *a)
{
	aw_add(a, "/tmp/gavel-unpack-test-absolute", AE_IFREG, "gotcha\n", 7, NULL);
}

static void add_symlink(struct archive *a)
{
	aw_add(a, "data/secret/1.in", AE_IFLNK, NULL, 0, "/etc/passwd");
}

static void add_hardlink(struct archive *a)
{
	aw_add(a, "data/secret/1.in", AE_IFREG, NULL, 0, "/etc/shadow");
}

static void add_device(struct archive *a)
{
	aw_add(a, "data/secret/1.in", AE_IFCHR, NULL, 0, NULL);
}

static void add_fifo(struct archive *a)
{
	aw_add(a, "data/secret/fifo", AE_IFIFO, NULL, 0, NULL);
}

static void add_duplicate(struct archive *a)
{
	aw_add(a, "data/sample/1.in", AE_IFREG, "z\n", 2, NULL);
}

static void import__path_traversal__refused_naming_the_entry(void **state)
{
	(void)state;
	require_ready();
	for (int f = FMT_ZIP; f <= FMT_TGZ; f++) {
		struct membuf mb = {0};
		hostile((enum fmt)f, add_traversal, &mb);
		expect_rejected(mb.p, mb.len, NULL, "data/../../escape.txt", "leaves the package", NULL);
		free(mb.p);
	}
}

static void import__absolute_path__refused_naming_the_entry(void **state)
{
	(void)state;
	require_ready();
	struct membuf mb = {0};
	hostile(FMT_TGZ, add_absolute, &mb);
	expect_rejected(mb.p, mb.len, NULL, "/tmp/gavel-unpack-test-absolute", "absolute", NULL);
	free(mb.p);
}

static void import__symlink_to_etc__refused_naming_the_entry(void **state)
{
	(void)state;
	require_ready();
	for (int f = FMT_ZIP; f <= FMT_TGZ; f++) {
		struct membuf mb = {0};
		hostile((enum fmt)f, add_symlink, &mb);
		expect_rejected(mb.p, mb.len, NULL, "data/secret/1.in", "symbolic link", "/etc/passwd", NULL);
		free(mb.p);
	}
}

static void import__hardlink_device_fifo_duplicate__refused_naming_the_entry(void **state)
{
	(void)state;
	require_ready();
	struct membuf mb = {0};
	hostile(FMT_TGZ, add_hardlink, &mb);
	expect_rejected(mb.p, mb.len, NULL, "data/secret/1.in", "hard link", NULL);
	free(mb.p);
	memset(&mb, 0, sizeof(mb));
	hostile(FMT_TGZ, add_device, &mb);
	expect_rejected(mb.p, mb.len, NULL, "data/secret/1.in", "device node", NULL);
	free(mb.p);
	memset(&mb, 0, sizeof(mb));
	hostile(FMT_TGZ, add_fifo, &mb);
	expect_rejected(mb.p, mb.len, NULL, "data/secret/fifo", "FIFO", NULL);
	free(mb.p);
	memset(&mb, 0, sizeof(mb));
	hostile(FMT_ZIP, add_duplicate, &mb);
	expect_rejected(mb.p, mb.len, NULL, "data/sample/1.in", "duplicate", NULL);
	free(mb.p);
}

/* ---- the bombs ---------------------------------------------------------- */

/* Deflate bits, least significant first (RFC 1951). */
struct bits {
	unsigned char *p;
	size_t pos; /* in bits */
};

static void put_bits(struct bits *b, unsigned v, unsigned n)
{
	for (unsigned i = 0; i < n; i++, b->pos++)
		if ((v >> i) & 1)
			b->p[b->pos / 8] |= (unsigned char)(1u << (b->pos % 8));
}

/* Huffman codes go most significant bit first. */
static void put_code(struct bits *b, unsigned code, unsigned len)
{
	for (unsigned i = len; i-- > 0;)
		put_bits(b, (code >> i) & 1, 1);
}

/* One final dynamic-Huffman block inflating to 1 + 258 * matches zero
 * bytes: the literal 0, then matches of length 258 at distance 1 whose
 * codes are one 0 bit each (length symbol 285 and distance 0 both get
 * 1-bit codes), so the body is plain zero bytes: 10 GB cost 10 MB of
 * calloc and no compression at all. */
static unsigned char *deflate_zeros(uint64_t matches, size_t *len)
{
	size_t n = (size_t)((200 + 2 * matches) / 8 + 8);
	unsigned char *p = calloc(1, n);
	assert_non_null(p);
	struct bits b = { p, 0 };
	put_bits(&b, 1, 1);  /* BFINAL */
	put_bits(&b, 2, 2);  /* dynamic Huffman */
	put_bits(&b, 29, 5); /* HLIT: 286 literal/length codes */
	put_bits(&b, 0, 5);  /* HDIST: 1 distance code */
	put_bits(&b, 14, 4); /* HCLEN: 18 code length codes */
	/* Code length code lengths, in RFC order 16 17 18 0 8 7 9 6 10 5 11 4
	 * 12 3 13 2 14 1: symbol 18 (zero runs) 1 bit, 1 and 2 two bits. */
	static const unsigned cl[18] = { 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2 };
	for (int i = 0; i < 18; i++)
		put_bits(&b, cl[i], 3);
	/* Canonical codes: 18 -> 0, 1 -> 10, 2 -> 11. Lengths: literal 0: 2,
	 * 1..255: 0, 256: 2, 257..284: 0, 285: 1, distance 0: 1. */
	put_code(&b, 3, 2);
	put_code(&b, 0, 1), put_bits(&b, 138 - 11, 7);
	put_code(&b, 0, 1), put_bits(&b, 117 - 11, 7);
	put_code(&b, 3, 2);
	put_code(&b, 0, 1), put_bits(&b, 28 - 11, 7);
	put_code(&b, 2, 2);
	put_code(&b, 2, 2);
	/* Data: literal/length codes 285 -> 0, 0 -> 10, 256 -> 11;
	 * distance 0 -> 0. */
	put_code(&b, 2, 2);
	b.pos += 2 * matches; /* every match: two 0 bits */
	put_code(&b, 3, 2);   /* end of block */
	*len = (b.pos + 7) / 8;
	return p;
}

static void le16(struct membuf *m, unsigned v)
{
	unsigned char b[2] = { (unsigned char)v, (unsigned char)(v >> 8) };
	mb_put(m, b, 2);
}

static void le32(struct membuf *m, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 24) };
	mb_put(m, b, 4);
}

/* A zip of one deflated entry that claims 1 MiB and inflates to 10 GiB. */
static void zip_bomb(struct membuf *m)
{
	static const char name[] = "data/secret/bomb.in";
	uint64_t want = 10ull << 30;
	size_t dlen;
	unsigned char *d = deflate_zeros((want - 1) / 258, &dlen);
	const uint32_t claimed = 1u << 20;
	le32(m, 0x04034b50), le16(m, 20), le16(m, 0), le16(m, 8), le16(m, 0), le16(m, 0x21);
	le32(m, 0), le32(m, (uint32_t)dlen), le32(m, claimed), le16(m, sizeof(name) - 1), le16(m, 0);
	mb_put(m, name, sizeof(name) - 1);
	mb_put(m, d, dlen);
	free(d);
	uint32_t cd = (uint32_t)m->len;
	le32(m, 0x02014b50), le16(m, (3 << 8) | 20), le16(m, 20), le16(m, 0), le16(m, 8), le16(m, 0),
		le16(m, 0x21);
	le32(m, 0), le32(m, (uint32_t)dlen), le32(m, claimed), le16(m, sizeof(name) - 1), le16(m, 0), le16(m, 0);
	le16(m, 0), le16(m, 0), le32(m, 0100644u << 16), le32(m, 0);
	mb_put(m, name, sizeof(name) - 1);
	uint32_t cdlen = (uint32_t)m->len - cd;
	le32(m, 0x06054b50), le16(m, 0), le16(m, 0), le16(m, 1), le16(m, 1), le32(m, cdlen), le32(m, cd),
		le16(m, 0);
}

static void import__zip_bomb_10gb__stopped_by_the_unpacked_size_limit(void **state)
{
	(void)state;
	require_ready();
	struct membuf mb = {0};
	double t = test_now_ms();
	zip_bomb(&mb);
	fprintf(stderr, "# zip bomb: %zu bytes built in %.0f ms\n", mb.len, test_now_ms() - t);
	t = test_now_ms();
	/* The default limits: 1 GiB unpacked. */
	expect_rejected(mb.p, mb.len, NULL, "data/secret/bomb.in", "unpacks to more than 1073741824 bytes", NULL);
	assert_true(test_now_ms() - t < 30000);
	free(mb.p);
}

/* A plain tar whose only header claims a 10 GB file (GNU base-256 size). */
static void import__tar_claiming_10gb__refused_before_reading_it(void **state)
{
	(void)state;
	require_ready();
	unsigned char h[1024] = {0};
	snprintf((char *)h, 100, "data/secret/huge.in");
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	uint64_t size = 10ull << 30;
	h[124] = 0x80;
	for (int i = 0; i < 8; i++)
		h[135 - i] = (unsigned char)(size >> (8 * i));
	memcpy(h + 136, "14000000000", 12);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
	expect_rejected(h, sizeof(h), NULL, "data/secret/huge.in", "declares", NULL);
}

static void import__100000_tiny_files__refused_by_the_file_count(void **state)
{
	(void)state;
	require_ready();
	struct membuf mb = {0};
	double t = test_now_ms();
	struct archive *a = aw_new(FMT_ZIP, &mb);
	char p[64];
	for (int i = 0; i < 100000; i++) {
		snprintf(p, sizeof(p), "data/secret/%06d.in", i);
		aw_add(a, p, AE_IFREG, "1", 1, NULL);
	}
	aw_close(a);
	fprintf(stderr, "# 100000 files: %zu bytes built in %.0f ms\n", mb.len, test_now_ms() - t);
	expect_rejected(mb.p, mb.len, NULL, "more than 20000 files", "data/secret/020000.in", NULL);
	free(mb.p);
}

static void import__over_the_compressed_limit__refused_without_a_sandbox(void **state)
{
	(void)state;
	require_ready();
	struct exec_import_limits lim;
	exec_import_limits_default(&lim);
	lim.max_compressed_bytes = 100;
	char junk[200] = {0};
	expect_rejected(junk, sizeof(junk), &lim, "larger than the limit", NULL);
	expect_rejected("not an archive at all\n", 22, NULL, "not a zip or tar.gz", NULL);
}

/* ---- bad packages ------------------------------------------------------- */

static void import__malformed_problem_yaml__names_the_field(void **state)
{
	(void)state;
	require_ready();
	static const char yaml[] = "name: Hello\nlimits:\n  time_limit: soon\n";
	struct membuf mb = {0};
	struct archive *a = aw_new(FMT_TGZ, &mb);
	aw_add(a, "problem.yaml", AE_IFREG, yaml, strlen(yaml), NULL);
	aw_add(a, "data/sample/1.in", AE_IFREG, "x\n", 2, NULL);
	aw_add(a, "data/sample/1.ans", AE_IFREG, "y\n", 2, NULL);
	aw_close(a);
	expect_rejected(mb.p, mb.len, NULL, "problem.yaml:3", "limits.time_limit", NULL);
	free(mb.p);

	static const char broken[] = "name: [Hello\n";
	memset(&mb, 0, sizeof(mb));
	a = aw_new(FMT_ZIP, &mb);
	aw_add(a, "problem.yaml", AE_IFREG, broken, strlen(broken), NULL);
	aw_add(a, "data/sample/1.in", AE_IFREG, "x\n", 2, NULL);
	aw_add(a, "data/sample/1.ans", AE_IFREG, "y\n", 2, NULL);
	aw_close(a);
	expect_rejected(mb.p, mb.len, NULL, "problem.yaml", NULL);
	free(mb.p);
}

static void import__validator_that_does_not_compile__rejected_with_compiler_output(void **state)
{
	(void)state;
	require_ready();
	static const char yaml[] = "name: Broken validator\nvalidation: custom\n";
	static const char src[] = "#include <stdio.h>\nint main(void) { return gavel_no_such_function(); }\n";
	struct membuf mb = {0};
	struct archive *a = aw_new(FMT_TGZ, &mb);
	aw_add(a, "problem.yaml", AE_IFREG, yaml, strlen(yaml), NULL);
	aw_add(a, "data/sample/1.in", AE_IFREG, "x\n", 2, NULL);
	aw_add(a, "data/sample/1.ans", AE_IFREG, "y\n", 2, NULL);
	aw_add(a, "output_validators/broken/validator.c", AE_IFREG, src, strlen(src), NULL);
	aw_close(a);
	expect_rejected(mb.p, mb.len, NULL, "output_validators/broken", "does not compile", "gavel_no_such_function",
			NULL);
	free(mb.p);
}

static void import__after_the_hostile_set__still_imports(void **state)
{
	(void)state;
	require_ready();
	roundtrip("hello", FMT_ZIP, NULL);
	/* A tar made with `tar -C dir .`: "./" prefixes and a "./data/"
	 * folder entry are the package's root, not a folder called ".". */
	struct membuf mb = {0};
	struct archive *a = aw_new(FMT_TGZ, &mb);
	aw_add(a, "./problem.yaml", AE_IFREG, problem_yaml, strlen(problem_yaml), NULL);
	aw_add(a, "./data/", AE_IFDIR, NULL, 0, NULL);
	aw_add(a, "./data/sample/1.in", AE_IFREG, "x\n", 2, NULL);
	aw_add(a, "./data/sample/1.ans", AE_IFREG, "y\n", 2, NULL);
	aw_close(a);
	struct imported im;
	import_with(mb.p, mb.len, NULL, &im);
	assert_int_equal(im.rep.status, EXEC_IMPORT_OK);
	assert_int_equal(im.rep.files, 3);
	assert_int_equal(im.rep.unpacked_bytes, strlen(problem_yaml) + 4);
	exec_import_report_free(&im.rep);
	test_rm_rf(im.parent);
	free(mb.p);

	/* Zipped with its folder on top ("zip -r hello.zip hello"): the
	 * folder is dropped, the package lands at dest_dir's root. */
	memset(&mb, 0, sizeof(mb));
	a = aw_new(FMT_ZIP, &mb);
	aw_add(a, "hello/", AE_IFDIR, NULL, 0, NULL);
	aw_add(a, "hello/problem.yaml", AE_IFREG, problem_yaml, strlen(problem_yaml), NULL);
	aw_add(a, "hello/data/sample/1.in", AE_IFREG, "x\n", 2, NULL);
	aw_add(a, "hello/data/sample/1.ans", AE_IFREG, "y\n", 2, NULL);
	aw_close(a);
	import_with(mb.p, mb.len, NULL, &im);
	assert_int_equal(im.rep.status, EXEC_IMPORT_OK);
	char p[300];
	snprintf(p, sizeof(p), "%s/problem.yaml", im.dest);
	assert_int_equal(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/hello", im.dest);
	assert_int_not_equal(access(p, F_OK), 0);
	exec_import_report_free(&im.rep);
	test_rm_rf(im.parent);
	free(mb.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(import__fixtures_zip__load_as_the_originals),
		cmocka_unit_test(import__fixtures_tar_gz__load_as_the_originals),
		cmocka_unit_test(import__stream_in_small_windows__same_tree),
		cmocka_unit_test(import__path_traversal__refused_naming_the_entry),
		cmocka_unit_test(import__absolute_path__refused_naming_the_entry),
		cmocka_unit_test(import__symlink_to_etc__refused_naming_the_entry),
		cmocka_unit_test(import__hardlink_device_fifo_duplicate__refused_naming_the_entry),
		cmocka_unit_test(import__zip_bomb_10gb__stopped_by_the_unpacked_size_limit),
		cmocka_unit_test(import__tar_claiming_10gb__refused_before_reading_it),
		cmocka_unit_test(import__100000_tiny_files__refused_by_the_file_count),
		cmocka_unit_test(import__over_the_compressed_limit__refused_without_a_sandbox),
		cmocka_unit_test(import__malformed_problem_yaml__names_the_field),
		cmocka_unit_test(import__validator_that_does_not_compile__rejected_with_compiler_output),
		cmocka_unit_test(import__after_the_hostile_set__still_imports),
	};
	return cmocka_run_group_tests_name("problem_import", tests, group_setup, group_teardown);
}
