/* libFuzzer target for gavel-unpack's extract mode (unpack_extract in
 * executor/unpack/unpack.c: a submission's additional files): libarchive
 * and our entry rules on arbitrary bytes, writing into a fresh folder that
 * already holds a source file. Checks beyond "does not crash": a refused
 * archive wrote nothing and left the source alone; an accepted one wrote
 * exactly the files and bytes its summary counts, all inside the folder,
 * only regular files and folders, modes 0644 / 0755 / 0755, and the source
 * is untouched. */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/unpack/unpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct unpack_limits lim = {
	.max_bytes = 1u << 20, .max_files = 64, .max_dirs = 64, .max_path = 255, .max_depth = 16,
};

static const char source[] = "print(1)\n";

struct tally {
	uint64_t files, dirs, bytes;
	int bad;
};
static struct tally tally;
static const char *root;

static int walk(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (strcmp(path, root) == 0)
		return 0;
	if (flag == FTW_SL || flag == FTW_SLN || (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))) {
		tally.bad = 1;
		return 0;
	}
	mode_t m = st->st_mode & 07777;
	if (S_ISDIR(st->st_mode)) {
		tally.dirs++;
		if (m != 0755)
			tally.bad = 2;
		return 0;
	}
	tally.files++;
	tally.bytes += (uint64_t)st->st_size;
	if (m != 0644 && m != 0755)
		tally.bad = 3;
	return 0;
}

static int rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/gavel-fuzz-extract-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	char src[96];
	snprintf(src, sizeof(src), "%s/main.py", dir);
	FILE *f = fopen(src, "w");
	if (!f || fputs(source, f) < 0 || fclose(f) != 0)
		abort();
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		abort();
	umask(022);
	struct unpack_summary sum;
	char reason[512];
	enum unpack_outcome o = unpack_extract(data, size, fd, &lim, &sum, reason, sizeof(reason));
	close(fd);
	memset(&tally, 0, sizeof(tally));
	root = dir;
	if (nftw(dir, walk, 16, FTW_PHYS) != 0)
		abort();
	char buf[sizeof(source) + 1];
	f = fopen(src, "r");
	if (!f)
		abort();
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n != strlen(source) || memcmp(buf, source, n) != 0)
		abort(); /* the source was touched */
	if (tally.bad)
		abort();
	if (o == UNPACK_REJECTED && (tally.files != 1 || tally.dirs != 0))
		abort(); /* a refusal wrote something */
	if (o == UNPACK_OK && (tally.files != sum.files + 1 || tally.dirs != sum.dirs ||
			       tally.bytes != sum.unpacked_bytes + strlen(source)))
		abort();
	if (nftw(dir, rm, 16, FTW_PHYS | FTW_DEPTH) != 0)
		abort();
	return 0;
}
