/* "{sources}" inside the sandbox (executor/unpack/sources.h). */
#include "executor/unpack/sources.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_BUF 4096

struct walk {
	const char *endings;
	const char *main_name;
	uint32_t max_depth, max_files;
	char **list;
	size_t n;
};

static bool has_ending(const char *name, const char *endings)
{
	size_t nl = strlen(name);
	for (const char *e = endings; *e;) {
		size_t el = strcspn(e, ",");
		if (el > 0 && nl > el && !strncmp(name + nl - el, e, el))
			return true;
		e += el;
		if (*e == ',')
			e++;
	}
	return false;
}

static int add(struct walk *w, const char *path)
{
	if (w->n >= w->max_files) {
		fprintf(stderr, "gavel-unpack: more than %u source files\n", w->max_files);
		return -1;
	}
	char **l = realloc(w->list, (w->n + 2) * sizeof(*l));
	if (!l || !(l[w->n] = strdup(path))) {
		if (l)
			w->list = l;
		fprintf(stderr, "gavel-unpack: out of memory\n");
		return -1;
	}
	w->list = l;
	l[++w->n] = NULL;
	return 0;
}

/* fd (a folder) is owned (closed here); prefix is its path relative to
 * the root ("" at the top). */
static int walk_dir(struct walk *w, int fd, const char *prefix, uint32_t depth)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		fprintf(stderr, "gavel-unpack: reading %s: %s\n", *prefix ? prefix : ".", strerror(errno));
		return -1;
	}
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char path[PATH_BUF];
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "/" : "", de->d_name) >=
		    sizeof(path))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			if (has_ending(de->d_name, w->endings) && !(depth == 0 && !strcmp(de->d_name, w->main_name)))
				rc = add(w, path);
		} else if (S_ISDIR(st.st_mode) && depth < w->max_depth) {
			int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				rc = walk_dir(w, sub, path, depth + 1);
		}
	}
	closedir(d);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void unpack_sources_free(char **list)
{
	for (char **p = list; p && *p; p++)
		free(*p);
	free(list);
}

int unpack_sources_list(int root, const char *endings, const char *main_name, uint32_t max_depth,
			uint32_t max_files, char ***out, size_t *n)
{
	struct walk w = {.endings = endings, .main_name = main_name, .max_depth = max_depth, .max_files = max_files};
	*out = NULL;
	*n = 0;
	int fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || walk_dir(&w, fd, "", 0) != 0) {
		unpack_sources_free(w.list);
		return -1;
	}
	if (w.list)
		qsort(w.list, w.n, sizeof(*w.list), by_name);
	*out = w.list;
	*n = w.n;
	return 0;
}
