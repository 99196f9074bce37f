/* The node's languages (executor/daemon/daemon_internal.h): at start the
 * supervisor loads the language files, makes the precompiled headers'
 * folder (the warm-up process, warm.c, fills it while the node serves)
 * and probes each toolchain (a language is offered only when its probe
 * passes); at each heartbeat it publishes the versions it found, which is
 * what the frontend lists. */
#include "executor/daemon/daemon_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "languages/lang_pch.h"

int exec_daemon_probe_languages(struct daemon *d, struct gv_err *err)
{
	if (lang_registry_load(&d->langs, d->cfg->languages_dir, err) != 0) {
		gv_err_prefix(err, "languages from %s", d->cfg->languages_dir);
		return -1;
	}
	/* Before the workers start: their engines mount the folder only when
	 * it exists then. Without it a node only loses speed. */
	struct gv_err derr;
	if (d->cfg->pch_dir && *d->cfg->pch_dir && lang_pch_make_dir(&d->langs, d->cfg->pch_dir, &derr) != 0)
		gv_warn(&d->log, "precompiled headers: %s; compiling without them", derr.msg);
	d->offered = calloc(d->langs.n ? d->langs.n : 1, sizeof(*d->offered));
	d->versions = calloc(d->langs.n ? d->langs.n : 1, sizeof(*d->versions));
	if (!d->offered || !d->versions)
		return gv_err_set(err, ENOMEM, "out of memory");
	size_t len = 0;
	for (size_t i = 0; i < d->langs.n; i++) {
		const struct lang_def *l = &d->langs.defs[i];
		char *version = d->versions[i];
		struct gv_err perr;
		if (lang_probe(l, (int)d->cfg->probe_timeout_ms, version, LANG_VERSION_MAX, &perr) != 0) {
			gv_warn(&d->log, "language %s not offered: %s", l->id, perr.msg);
			continue;
		}
		size_t idl = strlen(l->id);
		if (len + idl + 2 > sizeof(d->languages)) {
			gv_warn(&d->log, "language %s not offered: list too long", l->id);
			continue;
		}
		if (len)
			d->languages[len++] = ',';
		memcpy(d->languages + len, l->id, idl + 1);
		len += idl;
		d->offered[i] = true;
		gv_info(&d->log, "language %s: %s %s", l->id, l->name, version);
	}
	if (len == 0)
		return gv_err_set(err, GV_ECONFIG, "no language's toolchain works on this host");
	gv_info(&d->log, "languages offered: %s", d->languages);
	return 0;
}

/* Publishes the probed version of every offered language, living three
 * heartbeats (at least GV_QUEUE_HEARTBEAT_TIMEOUT_MS, after which the
 * frontend counts a node as gone): the frontend lists only languages some
 * live executor offers, with the version it really runs. */
void exec_daemon_publish_languages(struct daemon *d, struct gv_redis *r)
{
	uint64_t ttl = d->cfg->heartbeat_interval_ms * 3;
	if (ttl < GV_QUEUE_HEARTBEAT_TIMEOUT_MS)
		ttl = GV_QUEUE_HEARTBEAT_TIMEOUT_MS;
	for (size_t i = 0; i < d->langs.n; i++) {
		if (!d->offered[i] || !d->versions[i][0])
			continue;
		struct gv_err err;
		if (gv_queue_publish_language(r, d->langs.defs[i].id, d->versions[i],
					      ttl > UINT32_MAX ? UINT32_MAX : (unsigned)ttl, &err) != 0) {
			gv_warn(&d->log, "publishing language %s: %s", d->langs.defs[i].id, err.msg);
			return;
		}
	}
}
