/* The package's files: every path below the package folder is opened
 * element by element with O_NOFOLLOW, folders are listed bounded and
 * sorted, and a test file's symlink is resolved lexically, never by the
 * kernel. The package is tenant input; this file is where that is enforced
 * for every other part of the loader. */
#include "executor/judge/problem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/judge/problem_internal.h"

#define DIR_ENTRIES_MAX 20000 /* entries read from one folder */

bool exec_problem_good_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > EXEC_PROBLEM_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

int exec_problem_open_rel(int dirfd, const char *rel, int final_flags, struct gv_err *err)
{
	char buf[EXEC_PROBLEM_REL_MAX + 1];
	if (strlen(rel) > EXEC_PROBLEM_REL_MAX)
		return gv_err_set(err, GV_ELIMIT, "%s: path too long", rel);
	strcpy(buf, rel);
	int cur = dirfd;
	char *save = NULL, *elem = strtok_r(buf, "/", &save);
	if (!elem)
		return gv_err_set(err, GV_EINVAL, "empty path");
	for (;;) {
		char *next = strtok_r(NULL, "/", &save);
		if (!strcmp(elem, ".") || !strcmp(elem, "..")) {
			if (cur != dirfd)
				close(cur);
			return gv_err_set(err, GV_EINVAL, "%s: '.' and '..' are not allowed", rel);
		}
		int fd = openat(cur, elem, next ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
						: final_flags | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		if (cur != dirfd)
			close(cur);
		if (fd < 0) {
			errno = saved;
			if (errno == ELOOP || errno == ENOTDIR)
				return gv_err_set(err, GV_EINVAL, "%s: a symlink or non-folder on the way", rel);
			return gv_err_errno(err, "open %s", rel);
		}
		if (!next)
			return fd;
		cur = fd;
		elem = next;
	}
}

static int read_fd_all(int fd, const char *shown, size_t max, char **out, size_t *len, struct gv_err *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return gv_err_errno(err, "fstat %s", shown);
	if (!S_ISREG(st.st_mode))
		return gv_err_set(err, GV_EINVAL, "%s: not a regular file", shown);
	if ((uint64_t)st.st_size > max)
		return gv_err_set(err, GV_ELIMIT, "%s: larger than %zu bytes", shown, max);
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return gv_err_errno(err, "malloc");
	size_t n = 0, want = (size_t)st.st_size;
	while (n < want) {
		ssize_t r = read(fd, buf + n, want - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = gv_err_errno(err, "read %s", shown);
			free(buf);
			return rc;
		}
		if (r == 0)
			break; /* shrank meanwhile: take what is there */
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int exec_problem_open(const struct exec_problem *p, const char *rel, struct gv_err *err)
{
	int fd = exec_problem_open_rel(p->dirfd, rel, O_RDONLY | O_NONBLOCK, err);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return gv_err_set(err, GV_EINVAL, "%s: not a regular file", rel);
	}
	return fd;
}

int exec_problem_read(const struct exec_problem *p, const char *rel, size_t max, char **out, size_t *len,
		      struct gv_err *err)
{
	int fd = exec_problem_open(p, rel, err);
	if (fd < 0)
		return -1;
	int rc = read_fd_all(fd, rel, max, out, len, err);
	close(fd);
	return rc;
}

int exec_problem_cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int exec_problem_list_dir(int fd, const char *shown, char ***out, size_t *n, struct gv_err *err)
{
	*out = NULL;
	*n = 0;
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return gv_err_errno(err, "open %s", shown);
	DIR *d = fdopendir(dfd);
	if (!d) {
		int rc = gv_err_errno(err, "fdopendir %s", shown);
		close(dfd);
		return rc;
	}
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int rc = -1;
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (cnt == DIR_ENTRIES_MAX) {
			gv_err_set(err, GV_ELIMIT, "%s: more than %d entries", shown, DIR_ENTRIES_MAX);
			goto out;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 32;
			char **nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				gv_err_errno(err, "realloc");
				goto out;
			}
			v = nv;
		}
		if (!(v[cnt] = strdup(e->d_name))) {
			gv_err_errno(err, "strdup");
			goto out;
		}
		cnt++;
		errno = 0;
	}
	if (errno) {
		gv_err_errno(err, "readdir %s", shown);
		goto out;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), exec_problem_cmp_cstr);
	*out = v;
	*n = cnt;
	v = NULL;
	rc = 0;
out:
	if (v) {
		for (size_t i = 0; i < cnt; i++)
			free(v[i]);
		free(v);
	}
	closedir(d);
	return rc;
}

void exec_problem_free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int exec_problem_resolve_link(struct exec_problem *p, int dirfd, const char *dir_rel, const char *name, char **out,
			      struct gv_err *err)
{
	char target[EXEC_PROBLEM_REL_MAX + 1];
	ssize_t r = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (r < 0)
		return gv_err_errno(err, "readlink %s/%s", dir_rel, name);
	target[r] = '\0';
	if (target[0] == '/' || (size_t)r >= EXEC_PROBLEM_REL_MAX)
		return gv_err_set(err, GV_EINVAL, "%s/%s: symlink must be relative and stay inside the package", dir_rel,
				  name);
	/* Components of dir_rel, then of target, with ".." popping. */
	char joined[2 * EXEC_PROBLEM_REL_MAX + 2];
	snprintf(joined, sizeof(joined), "%s/%s", dir_rel, target);
	char *stack[128];
	size_t depth = 0;
	char *save = NULL;
	for (char *e = strtok_r(joined, "/", &save); e; e = strtok_r(NULL, "/", &save)) {
		if (!strcmp(e, "."))
			continue;
		if (!strcmp(e, "..")) {
			if (depth == 0)
				return gv_err_set(err, GV_EINVAL, "%s/%s: symlink leads outside the package", dir_rel,
						  name);
			depth--;
			continue;
		}
		if (depth == 128)
			return gv_err_set(err, GV_ELIMIT, "%s/%s: symlink target too deep", dir_rel, name);
		stack[depth++] = e;
	}
	if (depth == 0)
		return gv_err_set(err, GV_EINVAL, "%s/%s: symlink to the package root", dir_rel, name);
	char res[EXEC_PROBLEM_REL_MAX + 1];
	size_t o = 0;
	for (size_t i = 0; i < depth; i++) {
		size_t l = strlen(stack[i]);
		if (o + l + 2 > sizeof(res))
			return gv_err_set(err, GV_ELIMIT, "%s/%s: symlink target too long", dir_rel, name);
		if (i)
			res[o++] = '/';
		memcpy(res + o, stack[i], l);
		o += l;
	}
	res[o] = '\0';
	int fd = exec_problem_open(p, res, err);
	if (fd < 0) {
		gv_err_prefix(err, "%s/%s: symlink target", dir_rel, name);
		return -1;
	}
	close(fd);
	*out = exec_problem_strdup(res, err);
	return *out ? 0 : -1;
}
