/* The error convention of Gavel: fallible functions return 0 on success or
 * -1 with a caller-owned struct gv_err filled. The message lives in a fixed
 * buffer so that the error path never allocates. Context is prepended on the
 * way up with gv_err_prefix(). */
#pragma once

#include <stddef.h>

#define GV_MUST_CHECK __attribute__((warn_unused_result))
#define GV_PRINTF(fmt_idx, args_idx) __attribute__((format(printf, fmt_idx, args_idx)))

/* Codes above the errno range: our own failure classes. */
enum gv_err_code {
	GV_EOK = 0,
	GV_EBASE = 10000,
	GV_EINVAL,      /* bad input from a user, a file or a peer */
	GV_ECONFIG,     /* a configuration file or value is wrong */
	GV_ELIMIT,      /* a size or count limit was exceeded */
	GV_ENOTFOUND,   /* a named thing does not exist */
	GV_EDB,         /* PostgreSQL failed */
	GV_EREDIS,      /* Redis failed */
	GV_ESANDBOX,    /* a sandbox layer could not be applied */
	GV_EPROTO,      /* a peer broke a documented protocol or record format */
	GV_EINTERNAL,   /* a bug or an impossible state */
};

#define GV_ERR_MSG_MAX 512

struct gv_err {
	int code;                 /* errno value or enum gv_err_code */
	char msg[GV_ERR_MSG_MAX]; /* NUL-terminated, possibly truncated */
};

/* Resets err to "no error". */
void gv_err_clear(struct gv_err *err);

/* Fills err with code and a formatted message; returns -1 so that callers
 * can write `return gv_err_set(err, ...)`. err may be NULL. */
int gv_err_set(struct gv_err *err, int code, const char *fmt, ...) GV_PRINTF(3, 4);

/* Like gv_err_set with code = errno and ": strerror(errno)" appended. errno
 * is read before anything else runs. */
int gv_err_errno(struct gv_err *err, const char *fmt, ...) GV_PRINTF(2, 3);

/* call, an expression whose value is always -1 (an error setter's call), as
 * an expression the compiler sees to be -1. clang's static analyzer (`make
 * analyze`) reads one file at a time: without this it takes `if (f(&x, err)
 * != 0)` to be false after f's `return gv_err_set(...)` and reports x, which
 * f left unwritten, as read uninitialised. */
#define GV_MINUS_ONE(call) __extension__({ (void)(call); -1; })
/* The parenthesised name calls the function, not the macro. */
#define gv_err_set(...) GV_MINUS_ONE((gv_err_set)(__VA_ARGS__))
#define gv_err_errno(...) GV_MINUS_ONE((gv_err_errno)(__VA_ARGS__))

/* Prepends "context: " to the message, keeping the code. */
void gv_err_prefix(struct gv_err *err, const char *fmt, ...) GV_PRINTF(2, 3);

/* Short stable name of a code ("EINVAL", "config", ...) for logs and APIs. */
const char *gv_err_code_name(int code);
