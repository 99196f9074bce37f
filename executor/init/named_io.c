/* Named input and output files of file I/O tests (named_io.h). */
#include "executor/init/named_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"

#define BOX "/box"

static int box_fd(struct init_named_io *io, struct gv_err *err)
{
	if (io->box_fd < 0) {
		io->box_fd = open(BOX, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (io->box_fd < 0)
			return gv_err_errno(err, "open " BOX);
	}
	return io->box_fd;
}

/* Removes the file init made for the previous test; *made tells whether
 * there is one. */
static int remove_made(int dfd, const char *name, bool *made, struct gv_err *err)
{
	if (!*made)
		return 0;
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
		return gv_err_errno(err, "remove " BOX "/%s", name);
	*made = false;
	return 0;
}

/* Creates name fresh (O_EXCL: a job file of that name is an error, never
 * overwritten) with mode, set explicitly (init's umask is not assumed). */
static int create_fresh(int dfd, const char *name, mode_t mode, struct gv_err *err)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return gv_err_errno(err, "create " BOX "/%s", name);
	if (fchmod(fd, mode) < 0) {
		gv_err_errno(err, "chmod " BOX "/%s", name);
		close(fd);
		return -1;
	}
	return fd;
}

int init_named_input_begin(struct init_named_io *io, const char *name, struct gv_err *err)
{
	int dfd = box_fd(io, err);
	if (dfd < 0 || remove_made(dfd, name, &io->input_made, err) < 0)
		return -1;
	int fd = create_fresh(dfd, name, 0600, err);
	if (fd < 0)
		return -1;
	io->input_fd = fd;
	io->input_made = true;
	return 0;
}

int init_named_input_write(struct init_named_io *io, const char *data, size_t len, struct gv_err *err)
{
	if (io->input_fd < 0)
		return gv_err_set(err, GV_EINTERNAL, "input file not open");
	if (len && gv_write_all(io->input_fd, data, len) != 0)
		return gv_err_errno(err, "write the input file");
	return 0;
}

int init_named_input_end(struct init_named_io *io, struct gv_err *err)
{
	if (io->input_fd < 0)
		return gv_err_set(err, GV_EINTERNAL, "input file not open");
	int rc = fchmod(io->input_fd, 0444) < 0 ? gv_err_errno(err, "chmod the input file") : 0;
	if (close(io->input_fd) < 0 && rc == 0)
		rc = gv_err_errno(err, "close the input file");
	io->input_fd = -1;
	return rc;
}

int init_named_output_prepare(struct init_named_io *io, const char *name, struct gv_err *err)
{
	int dfd = box_fd(io, err);
	if (dfd < 0 || remove_made(dfd, name, &io->output_made, err) < 0)
		return -1;
	int fd = create_fresh(dfd, name, 0666, err);
	if (fd < 0)
		return -1;
	io->output_made = true;
	close(fd);
	return 0;
}

int init_named_output_collect(struct init_named_io *io, const char *name, uint64_t cap, struct init_capture *out,
			      uint64_t *size, struct gv_err *err)
{
	out->len = 0;
	out->total = 0;
	*size = 0;
	int dfd = box_fd(io, err);
	if (dfd < 0)
		return -1;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0; /* not there: an empty output */
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	*size = (uint64_t)st.st_size;
	size_t want = (uint64_t)st.st_size < cap ? (size_t)st.st_size : (size_t)cap;
	if (want > out->alloc) {
		char *nb = realloc(out->buf, want);
		if (!nb) {
			close(fd);
			return gv_err_set(err, ENOMEM, "output file: out of memory");
		}
		out->buf = nb;
		out->alloc = want;
	}
	size_t got = 0;
	while (got < want) {
		ssize_t n = read(fd, out->buf + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gv_err_errno(err, "read " BOX "/%s", name);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	out->len = got;
	out->total = *size;
	return 0;
}
