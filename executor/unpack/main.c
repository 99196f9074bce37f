/* gavel-unpack: the program of the one-shot unpack sandbox
 * (executor/problems/problem_import.c) and the first step of the compile
 * phase of a submission with additional files (executor/judge/judge_inline.c).
 * It runs only inside a sandbox, as uid 65534, started by gavel-init:
 *
 *   gavel-unpack unpack ARCHIVE STREAM MAX_BYTES MAX_FILES MAX_DIRS MAX_PATH MAX_DEPTH
 *       (the compile phase) checks ARCHIVE and writes the package stream to
 *       STREAM; stdout: a record files/dirs/unpacked_bytes/stream_bytes;
 *       exit 0, or 2 with the reason on stderr when the archive is refused,
 *       1 when something else failed
 *   gavel-unpack emit STREAM WINDOW
 *       (each test) reads a decimal offset from stdin and writes the next
 *       at most WINDOW bytes of STREAM from there to stdout
 *   gavel-unpack extract ARCHIVE DIR MAX_BYTES MAX_FILES MAX_DIRS MAX_PATH MAX_DEPTH
 *                        [sources ENDINGS MAIN] -- [PROGRAM ARGS...]
 *       (a compile phase) checks ARCHIVE as `unpack` does, writes its files
 *       under DIR (unpack_extract: never replacing a file, never through a
 *       link), then execv()s PROGRAM (an absolute path) with ARGS: the
 *       language's compiler, under the same limits; without PROGRAM it
 *       exits 0. With `sources`, an ARG that is exactly "{sources}" becomes
 *       the files under DIR ending in one of ENDINGS (comma-separated), but
 *       MAIN, sorted (executor/unpack/sources.h): a multi-file program's
 *       other sources, known only once unpacked. A refused archive: exit 2
 *       with the reason on stderr, 1 when something else failed; nothing is
 *       executed after either.
 *
 * The stream comes back in windows because one phase's stdout is capped
 * (PROTOCOL.md: output_bytes <= 64 MiB) while a package may be larger. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/io.h"
#include "executor/unpack/sources.h"
#include "executor/unpack/unpack.h"

#define ARCHIVE_MAX (256ull << 20)
#define EMIT_BUF (1u << 20)

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 20)
		return -1;
	errno = 0;
	char *end = NULL;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The archive, whole, into memory: libarchive then reads it without a
 * system call per block. */
static char *read_archive(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > ARCHIVE_MAX) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
}

/* The five limits MAX_BYTES MAX_FILES MAX_DIRS MAX_PATH MAX_DEPTH. */
static int parse_limits(char **argv, struct unpack_limits *lim)
{
	uint64_t v[5];
	static const uint64_t max[5] = { UINT64_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX };
	for (int i = 0; i < 5; i++) {
		if (parse_u64(argv[i], max[i], &v[i]) != 0) {
			fprintf(stderr, "gavel-unpack: bad limit '%s'\n", argv[i]);
			return -1;
		}
	}
	*lim = (struct unpack_limits){
		.max_bytes = v[0],
		.max_files = (uint32_t)v[1],
		.max_dirs = (uint32_t)v[2],
		.max_path = (uint32_t)v[3],
		.max_depth = (uint32_t)v[4],
	};
	return 0;
}

static int cmd_unpack(char **argv)
{
	struct unpack_limits lim;
	if (parse_limits(argv + 2, &lim) != 0)
		return UNPACK_FAILED;
	size_t len = 0;
	char *archive = read_archive(argv[0], &len);
	if (!archive) {
		fprintf(stderr, "gavel-unpack: cannot read %s: %s\n", argv[0], strerror(errno));
		return UNPACK_FAILED;
	}
	struct unpack_summary sum;
	char reason[512];
	enum unpack_outcome o = unpack_archive(archive, len, argv[1], &lim, &sum, reason, sizeof(reason));
	free(archive);
	if (o != UNPACK_OK) {
		fprintf(stderr, "%s\n", reason);
		return o;
	}
	printf("files:%" PRIu32 "\ndirs:%" PRIu32 "\nunpacked_bytes:%" PRIu64 "\nstream_bytes:%" PRIu64 "\n",
	       sum.files, sum.dirs, sum.unpacked_bytes, sum.stream_bytes);
	return fflush(stdout) == 0 ? UNPACK_OK : UNPACK_FAILED;
}

static int cmd_emit(const char *stream, const char *window_s)
{
	uint64_t window, offset;
	char in[32];
	size_t got = 0;
	for (;;) {
		ssize_t n = read(0, in + got, sizeof(in) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(in) - 1)
			break;
	}
	in[got] = '\0';
	in[strcspn(in, "\n")] = '\0';
	if (parse_u64(window_s, 64u << 20, &window) != 0 || parse_u64(in, UINT64_MAX, &offset) != 0) {
		fprintf(stderr, "gavel-unpack: bad window or offset\n");
		return 1;
	}
	int fd = open(stream, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "gavel-unpack: open %s: %s\n", stream, strerror(errno));
		return 1;
	}
	char *buf = malloc(EMIT_BUF);
	int rc = buf ? 0 : 1;
	while (rc == 0 && window > 0) {
		size_t want = window < EMIT_BUF ? (size_t)window : EMIT_BUF;
		ssize_t n = pread(fd, buf, want, (off_t)offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = 1;
		if (n <= 0)
			break;
		if (gv_write_all(1, buf, (size_t)n) != 0)
			rc = 1;
		offset += (uint64_t)n;
		window -= (uint64_t)n;
	}
	free(buf);
	close(fd);
	return rc;
}

#define SOURCES_ARG "{sources}"
#define ARGV_MAX 4096

/* prog (prog[0] the program, not NULL) with each "{sources}" among its
 * arguments replaced by the source files under dirfd (a new argv whose
 * words are borrowed from prog and list); NULL when that fails (said on
 * stderr). */
static char **expand_sources(char **prog, int dirfd, const char *endings, const char *main_name,
			     const struct unpack_limits *lim, char ***list)
{
	size_t n = 0;
	if (unpack_sources_list(dirfd, endings, main_name, lim->max_depth, lim->max_files, list, &n) != 0)
		return NULL;
	/* prog[0] is an absolute path (cmd_extract checked): never SOURCES_ARG. */
	size_t words = 1, total = 1;
	while (prog[words])
		total += strcmp(prog[words++], SOURCES_ARG) ? 1 : n;
	char **v = total < ARGV_MAX ? calloc(total + 1, sizeof(*v)) : NULL;
	if (!v) {
		fprintf(stderr, "gavel-unpack: the compile command would have %zu words\n", total);
		unpack_sources_free(*list);
		*list = NULL;
		return NULL;
	}
	size_t o = 0;
	v[o++] = prog[0];
	for (size_t i = 1; i < words; i++) {
		if (strcmp(prog[i], SOURCES_ARG) != 0)
			v[o++] = prog[i];
		else
			for (size_t k = 0; k < n; k++)
				v[o++] = (*list)[k];
	}
	return v;
}

/* argv: ARCHIVE DIR five limits ["sources" ENDINGS MAIN] "--" [PROGRAM
 * ARGS...]; had_tz: whether TZ was set before main set it. */
static int cmd_extract(char **argv, bool had_tz, const char *tz)
{
	struct unpack_limits lim;
	if (parse_limits(argv + 2, &lim) != 0)
		return UNPACK_FAILED;
	const char *endings = NULL, *main_name = NULL;
	char **prog = argv + 8;
	if (!strcmp(argv[7], "sources")) {
		endings = argv[8];
		main_name = argv[9];
		prog = argv + 11;
	}
	if (prog[0] && prog[0][0] != '/') {
		fprintf(stderr, "gavel-unpack: program '%s' is not an absolute path\n", prog[0]);
		return UNPACK_FAILED;
	}
	int dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "gavel-unpack: open %s: %s\n", argv[1], strerror(errno));
		return UNPACK_FAILED;
	}
	size_t len = 0;
	char *archive = read_archive(argv[0], &len);
	if (!archive) {
		fprintf(stderr, "gavel-unpack: cannot read %s: %s\n", argv[0], strerror(errno));
		close(dirfd);
		return UNPACK_FAILED;
	}
	/* Modes exactly 0644 / 0755 for what mkdirat and openat create. */
	mode_t old_umask = umask(022);
	struct unpack_summary sum;
	char reason[512];
	enum unpack_outcome o = unpack_extract(archive, len, dirfd, &lim, &sum, reason, sizeof(reason));
	free(archive);
	if (o != UNPACK_OK) {
		close(dirfd);
		fprintf(stderr, "additional files: %s\n", reason);
		return o;
	}
	if (!prog[0]) {
		close(dirfd);
		return UNPACK_OK;
	}
	char **list = NULL, **expanded = NULL;
	if (endings && !(prog = expanded = expand_sources(prog, dirfd, endings, main_name, &lim, &list))) {
		close(dirfd);
		return UNPACK_FAILED;
	}
	close(dirfd);
	/* The compiler gets the environment and umask gavel-init gave us, as
	 * if gavel-init had started it. */
	umask(old_umask);
	if ((had_tz ? setenv("TZ", tz, 1) : unsetenv("TZ")) == 0) {
		execv(prog[0], prog);
		fprintf(stderr, "gavel-unpack: exec %s: %s\n", prog[0], strerror(errno));
	}
	free(expanded);
	unpack_sources_free(list);
	return UNPACK_FAILED;
}

int main(int argc, char **argv)
{
	const char *tz0 = getenv("TZ");
	char tz[64] = "";
	bool had_tz = tz0 && strlen(tz0) < sizeof(tz);
	if (had_tz)
		snprintf(tz, sizeof(tz), "%s", tz0);
	/* libarchive turns zip DOS times into time_t with mktime; without TZ
	 * glibc stats /etc/localtime on every call (120,000 system calls for
	 * a 20,000-entry zip, each one slow under gVisor). Times are unused. */
	if (setenv("TZ", "UTC0", 1) != 0)
		return 1;
	if (argc == 9 && strcmp(argv[1], "unpack") == 0)
		return cmd_unpack(argv + 2);
	if (argc == 4 && strcmp(argv[1], "emit") == 0)
		return cmd_emit(argv[2], argv[3]);
	if (argc >= 10 && strcmp(argv[1], "extract") == 0 &&
	    (strcmp(argv[9], "--") == 0 || (argc >= 13 && strcmp(argv[9], "sources") == 0 && strcmp(argv[12], "--") == 0)))
		return cmd_extract(argv + 2, had_tz, tz);
	fprintf(stderr, "usage: gavel-unpack unpack ARCHIVE STREAM MAX_BYTES MAX_FILES MAX_DIRS MAX_PATH MAX_DEPTH\n"
			"       gavel-unpack emit STREAM WINDOW\n"
			"       gavel-unpack extract ARCHIVE DIR MAX_BYTES MAX_FILES MAX_DIRS MAX_PATH MAX_DEPTH "
			"[sources ENDINGS MAIN] -- [PROGRAM ARGS...]\n");
	return 1;
}
