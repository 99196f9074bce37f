/* The data/ tree: test groups (folders below data/sample and data/secret,
 * each with its testdata.yaml over what it inherits) and test cases (*.in
 * with a matching *.ans, a symlink allowed only as problem_fs.c resolves
 * it), sorted by name; then the effective validator flags, the 2023-07
 * maximum score inference and the flat judging order. */
#include "executor/judge/problem.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/judge/problem_internal.h"

struct loader {
	struct exec_problem *p;
	size_t ncases;
};

/* The package-relative path of a test file: itself, or its symlink's
 * target. st is its lstat. */
static int file_path(struct exec_problem *p, int dirfd, const char *dir_rel, const char *name,
		     const struct stat *st, char **out, struct gv_err *err)
{
	if (S_ISLNK(st->st_mode))
		return exec_problem_resolve_link(p, dirfd, dir_rel, name, out, err);
	if (!S_ISREG(st->st_mode))
		return gv_err_set(err, GV_EINVAL, "%s/%s: not a regular file", dir_rel, name);
	/* Refused here, not when the judge opens it after the program ran
	 * (an IE). The path is shown cut: whole, it would fill the message. */
	size_t len = strlen(dir_rel) + 1 + strlen(name);
	if (len > EXEC_PROBLEM_REL_MAX)
		return gv_err_set(err, GV_EINVAL, "%.80s.../%.80s: a path of %zu bytes in the package (at most %d)",
				  dir_rel, name, len, EXEC_PROBLEM_REL_MAX);
	char buf[EXEC_PROBLEM_REL_MAX + 1];
	size_t dl = strlen(dir_rel);
	memcpy(buf, dir_rel, dl);
	buf[dl] = '/';
	memcpy(buf + dl + 1, name, len - dl); /* with its NUL */
	*out = exec_problem_strdup(buf, err);
	return *out ? 0 : -1;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct exec_problem_node *)a)->name, ((const struct exec_problem_node *)b)->name);
}

static int push_child(struct exec_problem_node *g, size_t *cap, struct exec_problem_node **out, struct gv_err *err)
{
	if (g->nchildren == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct exec_problem_node *nc = realloc(g->children, ncap * sizeof(*nc));
		if (!nc)
			return gv_err_errno(err, "realloc");
		g->children = nc;
		*cap = ncap;
	}
	*out = &g->children[g->nchildren++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

/* One folder of data/ being read into its group. */
struct folder {
	int fd;
	const char *rel; /* package-relative */
	int depth;       /* 0: data/ itself */
	char **names;    /* its entries, sorted */
	size_t n;
	size_t cap; /* of the group's children */
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* Subfolder nm of group g: a subgroup with g's settings, read once g's
 * children are final. Only data/sample and data/secret are judged. */
static int add_subgroup(struct exec_problem *p, struct exec_problem_node *g, struct folder *f, const char *nm,
			struct gv_err *err)
{
	if (f->depth == 0 && strcmp(nm, "sample") != 0 && strcmp(nm, "secret") != 0) {
		exec_problem_warn(p, "data/%s: only data/sample and data/secret are judged; skipped", nm);
		return 0;
	}
	if (f->depth + 1 > EXEC_PROBLEM_MAX_DEPTH)
		return gv_err_set(err, GV_ELIMIT, "%s/%s: groups nested deeper than %d", f->rel, nm,
				  EXEC_PROBLEM_MAX_DEPTH);
	struct exec_problem_node *c;
	if (push_child(g, &f->cap, &c, err) < 0)
		return -1;
	c->kind = EXEC_PROBLEM_GROUP;
	char child_name[EXEC_PROBLEM_REL_MAX + EXEC_PROBLEM_NAME_MAX + 2];
	snprintf(child_name, sizeof(child_name), "%s%s%s", g->name, *g->name ? "/" : "", nm);
	if (!(c->name = exec_problem_strdup(child_name, err)) ||
	    exec_problem_grading_copy(&c->grading, &g->grading, err) < 0)
		return -1;
	c->is_sample = g->is_sample || (f->depth == 0 && !strcmp(nm, "sample"));
	return 0;
}

/* A file that is not a test input (.ans, .desc, .hint, .png,
 * testdata.yaml, ...): an answer without its input is worth a warning. */
static void note_stray_answer(struct exec_problem *p, const struct folder *f, const char *nm)
{
	if (!ends_with(nm, ".ans"))
		return;
	char in[EXEC_PROBLEM_NAME_MAX + 8];
	snprintf(in, sizeof(in), "%.*s.in", (int)(strlen(nm) - 4), nm);
	if (!bsearch(&(const char *){in}, f->names, f->n, sizeof(*f->names), exec_problem_cmp_cstr))
		exec_problem_warn(p, "%s/%s: answer without input; skipped", f->rel, nm);
}

/* Test input nm (st its lstat) of group g and its .ans: a case. Without
 * the .ans, or directly in data/, it is skipped with a warning. */
static int add_case(struct loader *L, struct exec_problem_node *g, struct folder *f, const char *nm,
		    const struct stat *st, struct gv_err *err)
{
	struct exec_problem *p = L->p;
	if (f->depth == 0) {
		exec_problem_warn(p, "data/%s: test cases must be in data/sample or data/secret; skipped", nm);
		return 0;
	}
	char ans[EXEC_PROBLEM_NAME_MAX + 8];
	snprintf(ans, sizeof(ans), "%.*s.ans", (int)(strlen(nm) - 3), nm);
	struct stat ast;
	if (strlen(nm) - 3 + 4 > EXEC_PROBLEM_NAME_MAX || fstatat(f->fd, ans, &ast, AT_SYMLINK_NOFOLLOW) < 0) {
		exec_problem_warn(p, "%s/%s: no matching .ans; skipped", f->rel, nm);
		return 0;
	}
	if (L->ncases == EXEC_PROBLEM_MAX_CASES)
		return gv_err_set(err, GV_ELIMIT, "more than %d test cases", EXEC_PROBLEM_MAX_CASES);
	struct exec_problem_node *c;
	if (push_child(g, &f->cap, &c, err) < 0)
		return -1;
	c->kind = EXEC_PROBLEM_CASE;
	char child_name[EXEC_PROBLEM_REL_MAX + EXEC_PROBLEM_NAME_MAX + 2];
	snprintf(child_name, sizeof(child_name), "%s/%.*s", g->name, (int)(strlen(nm) - 3), nm);
	if (!(c->name = exec_problem_strdup(child_name, err)))
		return -1;
	c->is_sample = g->is_sample;
	if (file_path(p, f->fd, f->rel, nm, st, &c->in_path, err) < 0 ||
	    file_path(p, f->fd, f->rel, ans, &ast, &c->ans_path, err) < 0)
		return -1;
	L->ncases++;
	return 0;
}

static int add_entry(struct loader *L, struct exec_problem_node *g, struct folder *f, const char *nm,
		     struct gv_err *err)
{
	struct exec_problem *p = L->p;
	struct stat st;
	if (!exec_problem_good_name(nm)) {
		exec_problem_warn(p, "%s: odd file name skipped", f->rel);
		return 0;
	}
	if (fstatat(f->fd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return gv_err_errno(err, "stat %s/%s", f->rel, nm);
	if (S_ISDIR(st.st_mode))
		return add_subgroup(p, g, f, nm, err);
	if (!ends_with(nm, ".in")) {
		note_stray_answer(p, f, nm);
		return 0;
	}
	return add_case(L, g, f, nm, &st, err);
}

static int load_group(struct loader *L, struct exec_problem_node *g, int dirfd, const char *dir_rel, int depth,
		      struct gv_err *err);

/* g's children are final (sorted): their parent pointers, and each
 * subgroup read from its own folder. */
static int load_subgroups(struct loader *L, struct exec_problem_node *g, int dirfd, const char *dir_rel, int depth,
			  struct gv_err *err)
{
	for (size_t i = 0; i < g->nchildren; i++) {
		struct exec_problem_node *c = &g->children[i];
		c->parent = g;
		if (c->kind != EXEC_PROBLEM_GROUP)
			continue;
		const char *base = strrchr(c->name, '/');
		base = base ? base + 1 : c->name;
		int sub = openat(dirfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			return gv_err_errno(err, "open %s/%s", dir_rel, base);
		char sub_rel[EXEC_PROBLEM_REL_MAX + EXEC_PROBLEM_NAME_MAX + 2];
		snprintf(sub_rel, sizeof(sub_rel), "%s/%s", dir_rel, base);
		int lrc = strlen(sub_rel) > EXEC_PROBLEM_REL_MAX
				  ? gv_err_set(err, GV_ELIMIT, "%s: path too long", sub_rel)
				  : load_group(L, c, sub, sub_rel, depth + 1, err);
		close(sub);
		if (lrc < 0)
			return -1;
	}
	return 0;
}

/* Loads group g from folder dirfd (package path dir_rel, name relative to
 * data/ in g->name). g->grading holds the inherited settings. */
static int load_group(struct loader *L, struct exec_problem_node *g, int dirfd, const char *dir_rel, int depth,
		      struct gv_err *err)
{
	if (exec_problem_load_testdata(L->p, dir_rel, &g->grading, err) < 0)
		return -1;
	struct folder f = {.fd = dirfd, .rel = dir_rel, .depth = depth};
	if (exec_problem_list_dir(dirfd, dir_rel, &f.names, &f.n, err) < 0)
		return -1;
	int rc = -1;
	for (size_t i = 0; i < f.n; i++)
		if (add_entry(L, g, &f, f.names[i], err) < 0)
			goto out;
	if (g->nchildren)
		qsort(g->children, g->nchildren, sizeof(*g->children), cmp_node);
	rc = load_subgroups(L, g, dirfd, dir_rel, depth, err);
out:
	exec_problem_free_names(f.names, f.n);
	return rc;
}

static int join_flags(const char *a, const char *b, char **out, struct gv_err *err)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *s = malloc(n);
	if (!s)
		return gv_err_errno(err, "malloc");
	snprintf(s, n, "%s%s%s", a, *a && *b ? " " : "", b);
	free(*out);
	*out = s;
	return 0;
}

/* Effective output validator flags: the problem's, then the group's. */
static int finish_flags(struct exec_problem *p, struct exec_problem_node *g, struct gv_err *err)
{
	if (join_flags(p->validator_flags, g->grading.output_validator_flags, &g->grading.output_validator_flags,
		       err) < 0)
		return -1;
	for (size_t i = 0; i < g->nchildren; i++)
		if (g->children[i].kind == EXEC_PROBLEM_GROUP && finish_flags(p, &g->children[i], err) < 0)
			return -1;
	return 0;
}

static void collect_cases(struct exec_problem *p, struct exec_problem_node *g)
{
	for (size_t i = 0; i < g->nchildren; i++) {
		struct exec_problem_node *c = &g->children[i];
		if (c->kind == EXEC_PROBLEM_CASE) {
			c->index = p->ncases;
			p->cases[p->ncases++] = c;
		} else {
			collect_cases(p, c);
		}
	}
}

/* 2023-07 scoring (the spec's "maximum score inference"): data/secret
 * aggregates by sum and is worth 100 unless its scoring says otherwise,
 * its subgroups are pass-fail unless theirs do; in a sum group, children
 * without a score share what the others leave, (M - S) / (A + T); in a min
 * group each is worth M. An accepted case scores its share (or what its
 * validator reports), a rejected one 0. max: what the parent gave this
 * group, NAN when it gave nothing. */
static int infer_scores(struct exec_problem *p, struct exec_problem_node *g, double max, bool secret,
			struct gv_err *err)
{
	struct exec_problem_grading *gr = &g->grading;
	if (!gr->aggregation_set)
		gr->aggregation = secret ? EXEC_PROBLEM_AGG_SUM : EXEC_PROBLEM_AGG_PASS_FAIL;
	double m = !isnan(gr->max_score) ? gr->max_score : !isnan(max) ? max : secret ? 100 : NAN;
	if (isnan(m))
		return gv_err_set(err, GV_EINVAL, "data/%s: no maximum score (scoring.score)", g->name);
	if (!secret && isinf(m) && g->parent && isfinite(g->parent->grading.max_score))
		return gv_err_set(err, GV_EINVAL, "data/%s: unbounded score below a bounded group", g->name);
	gr->max_score = m;
	gr->reject_score = 0;
	double share = m;
	if (gr->aggregation == EXEC_PROBLEM_AGG_PASS_FAIL) {
		if (isinf(m))
			return gv_err_set(err, GV_EINVAL, "data/%s: a pass-fail group needs a bounded score", g->name);
		/* Its children's scores do not count; its subgroups are pass-fail. */
	} else if (gr->aggregation == EXEC_PROBLEM_AGG_SUM && isfinite(m)) {
		double given = 0;
		size_t open = 0;
		for (size_t i = 0; i < g->nchildren; i++) {
			const struct exec_problem_node *c = &g->children[i];
			if (c->kind == EXEC_PROBLEM_GROUP && c->grading.scoring_set && !isnan(c->grading.max_score))
				given += c->grading.max_score;
			else
				open++;
		}
		if (given > m)
			return gv_err_set(err, GV_EINVAL, "data/%s: its subgroups' scores (%g) exceed its score %g",
					  g->name, given, m);
		share = open ? (m - given) / (double)open : 0;
	}
	gr->accept_score = isfinite(share) ? share : 0;
	for (size_t i = 0; i < g->nchildren; i++) {
		struct exec_problem_node *c = &g->children[i];
		if (c->kind == EXEC_PROBLEM_GROUP && infer_scores(p, c, share, false, err) < 0)
			return -1;
	}
	return 0;
}


/* data/: the root group with the format's defaults, the tree below it,
 * then what needs all of it: the effective flags, the 2023-07 scores and
 * the judging order. */
int exec_problem_load_data(struct exec_problem *p, struct gv_err *err)
{
	struct exec_problem_node *root = &p->root;
	root->kind = EXEC_PROBLEM_GROUP;
	if (!(root->name = exec_problem_strdup("", err)))
		return -1;
	if (exec_problem_grading_default(&root->grading, err) < 0)
		return -1;
	bool scored_2023 = p->format == EXEC_PROBLEM_FORMAT_2023_07 && p->type == EXEC_PROBLEM_SCORING;
	/* 2023-07 has no on_reject: every group of a scoring problem is scored. */
	if (scored_2023)
		root->grading.on_reject = EXEC_PROBLEM_GRADE;
	int data = exec_problem_open_rel(p->dirfd, "data", O_PATH | O_DIRECTORY, err);
	if (data < 0) {
		gv_err_prefix(err, "problem package %s", p->dir);
		return -1;
	}
	struct loader L = {p, 0};
	int lrc = load_group(&L, root, data, "data", 0, err);
	close(data);
	if (lrc < 0)
		return -1;
	if (L.ncases == 0)
		return gv_err_set(err, GV_EINVAL, "no test cases (data/sample/*.in and data/secret/*.in with .ans)");
	if (finish_flags(p, root, err) < 0)
		return -1;
	if (scored_2023)
		for (size_t i = 0; i < root->nchildren; i++)
			if (root->children[i].kind == EXEC_PROBLEM_GROUP && !strcmp(root->children[i].name, "secret") &&
			    infer_scores(p, &root->children[i], NAN, true, err) < 0)
				return -1;
	p->cases = calloc(L.ncases, sizeof(*p->cases));
	if (!p->cases)
		return gv_err_errno(err, "calloc");
	collect_cases(p, root);
	return 0;
}
