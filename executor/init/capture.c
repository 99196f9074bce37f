/* The program's output, out of its pipes: into a capture kept up to a cap
 * (every byte counted, kept or not, for the output limit), or, in an
 * interactive run, on to the stream as it has room. Reads only from pipes
 * init created; nothing the program sends is interpreted here. */
#include "executor/init/run_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int capture_add(struct init_capture *c, const char *data, size_t n, uint64_t cap)
{
	c->total += n;
	size_t room = c->len < cap ? (size_t)(cap - c->len) : 0;
	size_t keep = n < room ? n : room;
	if (keep == 0)
		return 0;
	if (c->len + keep > c->alloc) {
		size_t want = c->alloc ? c->alloc : 65536;
		while (want < c->len + keep)
			want *= 2;
		if (want > cap)
			want = (size_t)cap;
		char *nb = realloc(c->buf, want);
		if (!nb)
			return -1;
		c->buf = nb;
		c->alloc = want;
	}
	memcpy(c->buf + c->len, data, keep);
	c->len += keep;
	return 0;
}

int init_capture_drain(int fd, struct init_capture *c, uint64_t cap, char *scratch, struct gv_err *err)
{
	for (;;) {
		ssize_t n = read(fd, scratch, INIT_READ_CHUNK);
		if (n > 0) {
			if (capture_add(c, scratch, (size_t)n, cap) < 0)
				return gv_err_set(err, ENOMEM, "capture: out of memory");
			if (n < INIT_READ_CHUNK)
				return 0;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n == 0)
			return 0; /* cannot happen: we hold the write end */
		return gv_err_errno(err, "read capture pipe");
	}
}

int init_capture_stream_drain(int fd, struct init_capture *c, const struct init_stream *st, int final,
			      char *scratch, struct gv_err *err)
{
	for (;;) {
		size_t room = st->room(st->ctx);
		if (room == 0) {
			if (!final)
				return 0;
			if (st->flush(st->ctx, err) < 0)
				return -1;
			continue;
		}
		ssize_t n = read(fd, scratch, room < INIT_READ_CHUNK ? room : INIT_READ_CHUNK);
		if (n > 0) {
			c->total += (uint64_t)n;
			if (st->out(st->ctx, scratch, (size_t)n, err) < 0)
				return -1;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return final ? st->flush(st->ctx, err) : 0;
		if (n == 0)
			return 0; /* cannot happen: we hold the write end */
		return gv_err_errno(err, "read stdout pipe");
	}
}
