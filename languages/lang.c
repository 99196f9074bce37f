/* The language registry: every definition file of a folder loaded (read
 * bounded, not following links, parsed by lang_parse.c), checked for ids,
 * extensions and Judge0 ids defined twice, and looked up by id, extension,
 * file name or Judge0 id. */
#include "languages/lang.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void lang_def_clear(struct lang_def *def)
{
	if (!def)
		return;
	free(def->id);
	free(def->name);
	free(def->version);
	lang_argv_free(def->version_command);
	free(def->version_regex);
	lang_argv_free(def->memory_errors);
	free(def->source);
	lang_argv_free(def->compile);
	lang_argv_free(def->run);
	lang_argv_free(def->extensions);
	lang_argv_free(def->sources);
	lang_argv_free(def->packages);
	lang_argv_free(def->host_etc);
	lang_argv_free(def->precompiled_headers);
	lang_argv_free(def->compile_options);
	lang_argv_free(def->interpreter_options);
	free(def->compile_class_archive);
	free(def->fork_server);
	free(def->path);
	memset(def, 0, sizeof(*def));
}

const char *const *lang_source_endings(const struct lang_def *def)
{
	static const char *const none[] = {NULL};
	if (def->sources)
		return (const char *const *)def->sources;
	return def->extensions ? (const char *const *)def->extensions : none;
}

bool lang_is_source(const struct lang_def *def, const char *name)
{
	size_t n = strlen(name);
	for (const char *const *e = lang_source_endings(def); *e; e++) {
		size_t l = strlen(*e);
		if (n > l && !strcmp(name + n - l, *e) && name[n - l - 1] != '/')
			return true;
	}
	return false;
}

/* A warning option: "-W" and a name, of the characters a warning's name
 * and value take. No ',': the -W options that are not warnings (-Wl,
 * -Wa, -Wp pass words on to the linker, assembler and preprocessor) all
 * need one. */
static bool warning_option(const char *word)
{
	size_t n = strlen(word);
	if (n < 3 || n > 64 || strncmp(word, "-W", 2) != 0)
		return false;
	for (const char *s = word + 2; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("=+._-", *s)))
			return false;
	return true;
}

static bool option_listed(char *const *list, const char *word, const char *alias)
{
	for (char *const *p = list; p && *p; p++) {
		if (strcmp(*p, LANG_WARNING_OPTIONS) == 0) {
			if (warning_option(word))
				return true;
		} else if (strcmp(*p, word) == 0 || (alias && strcmp(*p, alias) == 0)) {
			return true;
		}
	}
	return false;
}

bool lang_compile_option_allowed(const struct lang_def *def, const char *word)
{
	/* GCC takes --std=X as -std=X: one listed spelling admits both. */
	const char *alias = strncmp(word, "--std=", 6) == 0 ? word + 1 : NULL;
	return option_listed(def->compile_options, word, alias);
}

bool lang_interpreter_option_allowed(const struct lang_def *def, const char *word)
{
	if (option_listed(def->interpreter_options, word, NULL))
		return true;
	size_t n = strlen(word);
	if (n < 3 || n > 16 || word[0] != '-')
		return false;
	for (size_t i = 1; i < n; i++) {
		char flag[3] = { '-', word[i], '\0' };
		if (!((word[i] >= 'a' && word[i] <= 'z') || (word[i] >= 'A' && word[i] <= 'Z')) ||
		    !option_listed(def->interpreter_options, flag, NULL))
			return false;
	}
	return true;
}

void lang_registry_free(struct lang_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->n; i++)
		lang_def_clear(&reg->defs[i]);
	free(reg->defs);
	reg->defs = NULL;
	reg->n = 0;
}

/* Reads a whole regular file of at most max bytes, not following a final
 * symlink. *out is NUL-terminated and owned by the caller. */
static int read_small_file(int dirfd, const char *name, const char *shown, size_t max, char **out, size_t *len,
			   struct gv_err *err)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return gv_err_errno(err, "open %s", shown);
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int rc = gv_err_errno(err, "fstat %s", shown);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return gv_err_set(err, GV_ECONFIG, "%s: not a regular file", shown);
	}
	if ((size_t)st.st_size > max) {
		close(fd);
		return gv_err_set(err, GV_ELIMIT, "%s: larger than %zu bytes", shown, max);
	}
	char *buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return gv_err_errno(err, "malloc");
	}
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = gv_err_errno(err, "read %s", shown);
			free(buf);
			close(fd);
			return rc;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			close(fd);
			return gv_err_set(err, GV_ELIMIT, "%s: larger than %zu bytes", shown, max);
		}
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int lang_def_load_file(struct lang_def *def, const char *path, struct gv_err *err)
{
	char *text;
	size_t len;
	memset(def, 0, sizeof(*def));
	if (read_small_file(AT_FDCWD, path, path, LANG_FILE_MAX, &text, &len, err) < 0)
		return -1;
	int rc = lang_def_parse(def, path, text, len, err);
	free(text);
	return rc;
}

static int cmp_def(const void *a, const void *b)
{
	return strcmp(((const struct lang_def *)a)->id, ((const struct lang_def *)b)->id);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int check_unique(const struct lang_registry *reg, struct gv_err *err)
{
	for (size_t i = 0; i < reg->n; i++) {
		const struct lang_def *a = &reg->defs[i];
		for (size_t j = i + 1; j < reg->n; j++) {
			const struct lang_def *b = &reg->defs[j];
			if (!strcmp(a->id, b->id))
				return gv_err_set(err, GV_ECONFIG, "%s: id '%s' already defined by %s", b->path, b->id,
						  a->path);
			if (a->judge0_id && a->judge0_id == b->judge0_id)
				return gv_err_set(err, GV_ECONFIG, "%s: judge0_id %d already used by %s", b->path,
						  b->judge0_id, a->path);
			for (char **x = a->extensions; *x; x++)
				for (char **y = b->extensions; *y; y++)
					if (!strcmp(*x, *y))
						return gv_err_set(err, GV_ECONFIG, "%s: extension %s already used by %s",
								  b->path, *y, a->path);
		}
	}
	return 0;
}

int lang_registry_load(struct lang_registry *reg, const char *dir, struct gv_err *err)
{
	memset(reg, 0, sizeof(*reg));
	DIR *d = opendir(dir);
	if (!d)
		return gv_err_errno(err, "opendir %s", dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = -1;
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		if (n == LANG_MAX) {
			gv_err_set(err, GV_ELIMIT, "%s: more than %d language files", dir, LANG_MAX);
			goto out;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nn = realloc(names, ncap * sizeof(*nn));
			if (!nn) {
				gv_err_errno(err, "realloc");
				goto out;
			}
			names = nn;
			cap = ncap;
		}
		if (!(names[n] = strdup(e->d_name))) {
			gv_err_errno(err, "strdup");
			goto out;
		}
		n++;
	}
	if (errno) {
		gv_err_errno(err, "readdir %s", dir);
		goto out;
	}
	if (n == 0) {
		gv_err_set(err, GV_ECONFIG, "%s: no language definitions (*.yaml)", dir);
		goto out;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	reg->defs = calloc(n, sizeof(*reg->defs));
	if (!reg->defs) {
		gv_err_errno(err, "calloc");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path)) {
			gv_err_set(err, GV_ELIMIT, "%s/%s: path too long", dir, names[i]);
			goto out;
		}
		char *text;
		size_t len;
		if (read_small_file(dirfd(d), names[i], path, LANG_FILE_MAX, &text, &len, err) < 0)
			goto out;
		int prc = lang_def_parse(&reg->defs[reg->n], path, text, len, err);
		free(text);
		if (prc < 0)
			goto out;
		reg->n++;
	}
	qsort(reg->defs, reg->n, sizeof(*reg->defs), cmp_def);
	if (check_unique(reg, err) < 0)
		goto out;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	if (rc < 0)
		lang_registry_free(reg);
	return rc;
}

/* ---- look-ups ---------------------------------------------------------- */

const struct lang_def *lang_find(const struct lang_registry *reg, const char *id)
{
	if (!reg || !id)
		return NULL;
	for (size_t i = 0; i < reg->n; i++)
		if (!strcmp(reg->defs[i].id, id))
			return &reg->defs[i];
	return NULL;
}

const struct lang_def *lang_find_by_extension(const struct lang_registry *reg, const char *ext)
{
	if (!reg || !ext)
		return NULL;
	if (ext[0] == '.')
		ext++;
	if (!*ext)
		return NULL;
	for (size_t i = 0; i < reg->n; i++)
		for (char **e = reg->defs[i].extensions; *e; e++)
			if (!strcasecmp(*e + 1, ext))
				return &reg->defs[i];
	return NULL;
}

const struct lang_def *lang_find_by_filename(const struct lang_registry *reg, const char *filename)
{
	if (!filename)
		return NULL;
	const char *base = strrchr(filename, '/');
	base = base ? base + 1 : filename;
	const char *dot = strrchr(base, '.');
	if (!dot || dot == base)
		return NULL;
	return lang_find_by_extension(reg, dot);
}

const struct lang_def *lang_by_judge0_id(const struct lang_registry *reg, int judge0_id)
{
	if (!reg || judge0_id <= 0)
		return NULL;
	for (size_t i = 0; i < reg->n; i++)
		if (reg->defs[i].judge0_id == judge0_id)
			return &reg->defs[i];
	return NULL;
}
