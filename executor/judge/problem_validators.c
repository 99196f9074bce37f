/* A package's output validators (output_validator/ in 2023-07,
 * output_validators/ in the legacy format): which programs there are and
 * their source files, named to a language when a registry is given. They
 * are built and run later, in a sandbox, by whoever judges. */
#include "executor/judge/problem.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/judge/problem_internal.h"
#include "languages/lang.h"

#define VALIDATOR_FILES_MAX 256
#define VALIDATORS_MAX 16

static int add_validator(struct exec_problem *p, const char *name, const char *dir, char **files, size_t nfiles,
			 const struct exec_problem_opts *opts, struct gv_err *err)
{
	if (p->nvalidators == VALIDATORS_MAX)
		return gv_err_set(err, GV_ELIMIT, "more than %d output validators", VALIDATORS_MAX);
	struct exec_problem_validator *nv = realloc(p->validators, (p->nvalidators + 1) * sizeof(*nv));
	if (!nv)
		return gv_err_errno(err, "realloc");
	p->validators = nv;
	struct exec_problem_validator *v = &nv[p->nvalidators];
	memset(v, 0, sizeof(*v));
	v->files = calloc(nfiles + 1, sizeof(char *));
	if (!v->files)
		return gv_err_errno(err, "calloc");
	p->nvalidators++;
	if (!(v->name = exec_problem_strdup(name, err)) || !(v->dir = exec_problem_strdup(dir, err)))
		return -1;
	for (size_t i = 0; i < nfiles; i++) {
		if (!(v->files[i] = exec_problem_strdup(files[i], err)))
			return -1;
		if (!v->lang_id && opts && opts->langs) {
			const struct lang_def *d = lang_find_by_filename(opts->langs, files[i]);
			if (d)
				v->lang_id = d->id;
		}
	}
	return 0;
}

/* Regular files of folder rel (symlinks and subfolders are warned about). */
static int validator_folder(struct exec_problem *p, const char *rel, const char *name,
			    const struct exec_problem_opts *opts, struct gv_err *err)
{
	int fd = exec_problem_open_rel(p->dirfd, rel, O_PATH | O_DIRECTORY, err);
	if (fd < 0)
		return -1;
	char **names;
	size_t n;
	int rc = exec_problem_list_dir(fd, rel, &names, &n, err);
	if (rc < 0) {
		close(fd);
		return -1;
	}
	char **files = calloc(n + 1, sizeof(char *));
	size_t nf = 0;
	if (!files) {
		rc = gv_err_errno(err, "calloc");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (!exec_problem_good_name(names[i]) || fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode)) {
			exec_problem_warn(p, "%s/%s: not a regular file; left out of the validator", rel,
					  exec_problem_good_name(names[i]) ? names[i] : "?");
			continue;
		}
		if (nf == VALIDATOR_FILES_MAX) {
			rc = gv_err_set(err, GV_ELIMIT, "%s: more than %d files", rel, VALIDATOR_FILES_MAX);
			goto out;
		}
		files[nf++] = names[i];
	}
	if (nf == 0)
		rc = gv_err_set(err, GV_EINVAL, "%s: no source files", rel);
	else
		rc = add_validator(p, name, rel, files, nf, opts, err);
out:
	free(files);
	exec_problem_free_names(names, n);
	close(fd);
	return rc;
}

/* Whether folder rel holds at least one regular file directly. */
static int has_regular_file(struct exec_problem *p, const char *rel, bool *yes, struct gv_err *err)
{
	*yes = false;
	int fd = exec_problem_open_rel(p->dirfd, rel, O_PATH | O_DIRECTORY, err);
	if (fd < 0)
		return -1;
	char **names;
	size_t n;
	int rc = exec_problem_list_dir(fd, rel, &names, &n, err);
	for (size_t i = 0; rc == 0 && i < n && !*yes; i++) {
		struct stat st;
		*yes = exec_problem_good_name(names[i]) && fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		       S_ISREG(st.st_mode);
	}
	if (rc == 0)
		exec_problem_free_names(names, n);
	close(fd);
	return rc;
}

/* Every entry of folder top is one program: a folder of sources, or a
 * single source file named by its stem. */
static int validators_in(struct exec_problem *p, const char *top, const struct exec_problem_opts *opts,
			 struct gv_err *err)
{
	int fd = exec_problem_open_rel(p->dirfd, top, O_PATH | O_DIRECTORY, err);
	if (fd < 0)
		return -1;
	char **names;
	size_t n;
	if (exec_problem_list_dir(fd, top, &names, &n, err) < 0) {
		close(fd);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *nm = names[i];
		char rel[EXEC_PROBLEM_REL_MAX];
		struct stat st;
		if (!exec_problem_good_name(nm) || fstatat(fd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			exec_problem_warn(p, "%s: odd entry skipped", top);
			continue;
		}
		snprintf(rel, sizeof(rel), "%s/%s", top, nm);
		if (S_ISDIR(st.st_mode)) {
			rc = validator_folder(p, rel, nm, opts, err);
		} else if (S_ISREG(st.st_mode)) {
			char stem[EXEC_PROBLEM_NAME_MAX + 1];
			snprintf(stem, sizeof(stem), "%s", nm);
			char *dot = strrchr(stem, '.');
			if (dot && dot != stem)
				*dot = '\0';
			char *one[] = {(char *)nm, NULL};
			rc = add_validator(p, stem, top, one, 1, opts, err);
		} else {
			exec_problem_warn(p, "%s: not a file or folder; skipped", rel);
		}
	}
	exec_problem_free_names(names, n);
	close(fd);
	return rc;
}

/* output_validator/ (2023-07): the program's own sources, or, as
 * problemtools' examples have it, one folder per program below it.
 * output_validators/ (legacy): one program per entry. */
int exec_problem_load_validators(struct exec_problem *p, const struct exec_problem_opts *opts, struct gv_err *err)
{
	struct stat st;
	if (fstatat(p->dirfd, "output_validator", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		bool flat;
		if (has_regular_file(p, "output_validator", &flat, err) < 0)
			return -1;
		if (flat ? validator_folder(p, "output_validator", "output_validator", opts, err) < 0
			 : validators_in(p, "output_validator", opts, err) < 0)
			return -1;
	}
	if (fstatat(p->dirfd, "output_validators", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
		return validators_in(p, "output_validators", opts, err);
	return 0;
}
