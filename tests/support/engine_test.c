/* Engine set-up shared by the sandbox integration tests (see
 * engine_test.h). */
#include "tests/support/engine_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define RUNSC "/usr/bin/runsc"

bool test_engine_can_run(const char *const *tools, char init_path[PATH_MAX], char *why, size_t why_size)
{
	char rel[PATH_MAX];
	const char *init = getenv("GAVEL_INIT");
	if (!init || !*init) {
		const char *b = getenv("BUILD");
		snprintf(rel, sizeof(rel), "%s/gavel-init", b && *b ? b : "build");
		init = rel;
	}
	if (geteuid() != 0)
		return snprintf(why, why_size, "not root"), false;
	if (access(RUNSC, X_OK) != 0)
		return snprintf(why, why_size, "no %s", RUNSC), false;
	for (size_t i = 0; tools && tools[i]; i++)
		if (access(tools[i], X_OK) != 0)
			return snprintf(why, why_size, "no %s (deploy/deps.sh installs it)", tools[i]), false;
	if (!realpath(init, init_path))
		return snprintf(why, why_size, "no gavel-init at %.200s (set GAVEL_INIT)", init), false;
	return true;
}

void test_engine_roots_name(struct test_engine_roots *roots, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	snprintf(roots->runsc_root, sizeof(roots->runsc_root), "/run/%s", name);
	snprintf(roots->work_root, sizeof(roots->work_root), "/var/tmp/%s", name);
	snprintf(roots->parent, sizeof(roots->parent), "%s", name);
}

struct exec_engine_config test_engine_config(const struct test_engine_roots *roots, const char *init_path)
{
	return (struct exec_engine_config){
		.runsc_path = RUNSC,
		.runsc_root = roots->runsc_root,
		.work_root = roots->work_root,
		.init_path = init_path,
		.cgroup_parent = roots->parent,
	};
}

void test_engine_remove(struct exec_engine *e, const struct test_engine_roots *roots, const char *tenant)
{
	struct gv_err err;
	/* fini first: it finishes the tear-down of closed sessions, whose
	 * cgroups live under the parent. */
	struct exec_cgroup cg = e->cg;
	exec_engine_fini(e);
	if (cg.ops) {
		if (tenant) {
			char rel[192];
			snprintf(rel, sizeof(rel), "%s/%s", roots->parent, tenant);
			(void)cg.ops->remove(&cg, rel, &err);
		}
		(void)cg.ops->remove(&cg, roots->parent, &err);
	}
	rmdir(roots->work_root);
	/* runsc's own state root: empty once every container was deleted. */
	rmdir(roots->runsc_root);
}

void test_engine_require_ready(bool ready, const char *what)
{
	if (ready)
		return;
	const char *allow = getenv("GAVEL_ALLOW_SKIP");
	if (allow && strcmp(allow, "1") == 0)
		skip();
	fail_msg("%s cannot run (see the '# cannot run' line); GAVEL_ALLOW_SKIP=1 skips", what);
}
