/* A program of one or several files from the command line
 * (cli/program_files.h). */
#include "cli/program_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void cli_program_free(struct cli_program *p)
{
	free(p->main_path);
	free(p->main);
	for (size_t i = 0; i < p->n_others; i++) {
		free((char *)p->others[i].name);
		free((void *)p->others[i].data);
	}
	memset(p, 0, sizeof(*p));
}

/* A main file that is saved under its language's own source name
 * (main.cpp) is named only to tell its language, so its name may also hold
 * '+' (sol.c++, as DOMjudge accepts); every name that reaches the sandbox
 * still passes gv_jobspec_file_name_ok. */
static bool renamed_main_name_ok(const char *name)
{
	char plain[GV_JOBSPEC_FILE_NAME_MAX + 1];
	size_t n = strlen(name);
	if (n > GV_JOBSPEC_FILE_NAME_MAX)
		return false;
	for (size_t i = 0; i <= n; i++)
		plain[i] = name[i] == '+' ? '_' : name[i];
	return gv_jobspec_file_name_ok(plain);
}

/* Adds path as the main file (first) or another one. keeps_name: the main
 * file keeps its own name in the sandbox (an instructor test suite's). */
static int add_file(struct cli_program *p, const char *path, bool is_main, bool keeps_name, size_t *total,
		    struct gv_err *err)
{
	const char *name = base_name(path);
	if (is_main && !keeps_name ? !renamed_main_name_ok(name) : !gv_jobspec_file_name_ok(name))
		return gv_err_set(err, GV_EINVAL,
				  "%s: a file name of at most %d letters, digits, '.', '_' or '-'%s (not 'job' nor "
				  "'.gavel...')",
				  path, GV_JOBSPEC_FILE_NAME_MAX, is_main && !keeps_name ? " ('+' too)" : "");
	if (!strcmp(name, base_name(p->main_path ? p->main_path : "")))
		return gv_err_set(err, GV_EINVAL, "%s: two files named '%s'", path, name);
	for (size_t i = 0; i < p->n_others; i++)
		if (!strcmp(p->others[i].name, name))
			return gv_err_set(err, GV_EINVAL, "%s: two files named '%s'", path, name);
	if (!is_main && p->n_others == GV_JOBSPEC_FILES_MAX - 1)
		return gv_err_set(err, GV_ELIMIT, "more than %d files", GV_JOBSPEC_FILES_MAX);
	char *data = NULL;
	size_t len = 0;
	if (cli_read_file(path, CLI_PROGRAM_BYTES_MAX - *total, &data, &len, err) != 0) {
		if (err->code == GV_ELIMIT)
			gv_err_set(err, GV_ELIMIT, "the program's files hold more than %u bytes", CLI_PROGRAM_BYTES_MAX);
		return -1;
	}
	*total += len;
	if (is_main) {
		p->main = data;
		p->main_len = len;
		if (!(p->main_path = strdup(path)))
			return gv_err_set(err, ENOMEM, "out of memory");
		return 0;
	}
	char *copy = strdup(name);
	if (!copy) {
		free(data);
		return gv_err_set(err, ENOMEM, "out of memory");
	}
	p->others[p->n_others++] = (struct exec_file){.name = copy, .data = data, .len = len};
	return 0;
}

/* The folder's file that is named as a language's source (lang_id's
 * only, when given). */
static int folder_main(const struct cli_local *l, const char *dir, char **names, size_t n, const char *lang_id,
		       size_t *main, struct gv_err *err)
{
	size_t found = 0, at = 0;
	for (size_t i = 0; i < n; i++) {
		bool is_main = false;
		for (size_t k = 0; k < l->langs.n && !is_main; k++) {
			const struct lang_def *d = &l->langs.defs[k];
			is_main = (!lang_id || !strcmp(d->id, lang_id)) && d->source && !strcmp(d->source, names[i]);
		}
		if (is_main && found++ == 0)
			at = i;
	}
	if (found == 1) {
		*main = at;
		return 0;
	}
	return gv_err_set(err, GV_EINVAL,
			  "%s: %s file named as a language's source (main.c, main.py, Main.java, ...)%s; or give the "
			  "files, the main one first",
			  dir, found ? "more than one" : "no", lang_id ? " for --lang" : "");
}

static int load_folder(struct cli_program *p, const struct cli_local *l, const char *dir, const char *lang_id,
		       bool any_main, struct gv_err *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return gv_err_errno(err, "open %s", dir);
	char *names[GV_JOBSPEC_FILES_MAX];
	size_t n = 0;
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0)
			rc = gv_err_errno(err, "stat %s", path);
		else if (S_ISDIR(st.st_mode))
			rc = gv_err_set(err, GV_EINVAL, "%s: a folder inside the program's folder (put the files side by side)",
					path);
		else if (!S_ISREG(st.st_mode))
			rc = gv_err_set(err, GV_EINVAL, "%s: not a regular file", path);
		else if (n == GV_JOBSPEC_FILES_MAX)
			rc = gv_err_set(err, GV_ELIMIT, "%s: more than %d files", dir, GV_JOBSPEC_FILES_MAX);
		else if (!(names[n++] = strdup(de->d_name)))
			rc = gv_err_set(err, ENOMEM, "out of memory");
	}
	closedir(d);
	size_t main = 0;
	if (rc == 0 && n == 0)
		rc = gv_err_set(err, GV_EINVAL, "%s: no file", dir);
	if (rc == 0) {
		qsort(names, n, sizeof(*names), by_name);
		rc = folder_main(l, dir, names, n, lang_id, &main, err);
		if (rc != 0 && any_main) {
			main = 0;
			rc = 0;
		}
	}
	size_t total = 0;
	char path[4096];
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[main]);
		rc = add_file(p, path, true, any_main, &total, err);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (i != main)
			rc = add_file(p, path, false, any_main, &total, err);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

int cli_program_load(struct cli_program *p, const struct cli_local *l, char *const *paths, size_t n,
		     const char *lang_id, bool any_main, struct gv_err *err)
{
	memset(p, 0, sizeof(*p));
	struct stat st;
	if (n == 1 && stat(paths[0], &st) == 0 && S_ISDIR(st.st_mode))
		return load_folder(p, l, paths[0], lang_id, any_main, err);
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		if (add_file(p, paths[i], i == 0, any_main, &total, err) != 0)
			return -1;
	return 0;
}
