/* The node's images of warmed kernel templates (executor/kernels/
 * kernel_image.h), shared by its workers: one per kernel memory budget,
 * made by an idle worker when a budget is wanted and has none (or only
 * one older than IMAGE_REMAKE_MS), and restored by any worker for a
 * kernel of that budget, for any tenant, instead of a fresh start.
 *
 * Under <work_root>/<node>/kernel-images (root's, 0700): "<mb>-<made>"
 * (<made>: CLOCK_MONOTONIC ms, one boot: the folder is emptied when the
 * executor starts, so an image never outlives the binaries, bridge and
 * /usr it was made with by more than IMAGE_REMAKE_MS); ".new-<mb>-w<k>"
 * while worker k makes one (renamed when checked); "<mb>.lock", flock()ed
 * by the maker, so that workers never make the same one twice at once.
 *
 * gavel-init's clock in a clone goes on from the template's start (its
 * time as an image included), and its limit is the longest lifetime: an
 * image is used only for a kernel that can live its whole lifetime before
 * that limit (kernel_images_find). */
#include "executor/daemon/daemon_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "executor/kernels/kernel_image.h"
#include "executor/sandbox/cpu_ceiling.h"

#define IMAGE_REMAKE_MS (3600 * 1000)
#define IMAGE_MARGIN_MS (10 * 60 * 1000)
#define IMAGE_WAIT_MS 120000
#define IMAGE_RETRY_MS (5 * 60 * 1000)

static int images_dir(const struct daemon *d, char *out, size_t n)
{
	int r = snprintf(out, n, "%s/%s/kernel-images", d->cfg->work_root, d->node);
	return r > 0 && (size_t)r < n ? 0 : -1;
}

int kernel_images_reset(const struct daemon *d, struct gv_err *err)
{
	char dir[4096];
	if (images_dir(d, dir, sizeof(dir)) != 0)
		return gv_err_set(err, GV_ELIMIT, "kernel images: work root path too long");
	if (gv_remove_tree_at(AT_FDCWD, dir, err) != 0 || gv_mkdir_parents(dir, err) != 0)
		return -1;
	return 0;
}

/* The newest image of memory_mb: its folder in out and when it was made;
 * false when there is none. */
static bool newest(const struct daemon *d, uint32_t memory_mb, char *out, size_t n, int64_t *made)
{
	char dir[4096];
	if (images_dir(d, dir, sizeof(dir)) != 0)
		return false;
	DIR *dd = opendir(dir);
	if (!dd)
		return false;
	struct dirent *de;
	int64_t best = -1;
	while ((de = readdir(dd)) != NULL) {
		unsigned mb;
		long long t;
		char tail;
		if (sscanf(de->d_name, "%u-%lld%c", &mb, &t, &tail) != 2 || mb != memory_mb || t <= best)
			continue;
		best = t;
		snprintf(out, n, "%s/%s", dir, de->d_name);
	}
	closedir(dd);
	*made = best;
	return best >= 0;
}

/* Whether memory_mb has an image made within IMAGE_REMAKE_MS. */
static bool fresh_image(const struct daemon *d, uint32_t memory_mb)
{
	char path[4400];
	int64_t made;
	return newest(d, memory_mb, path, sizeof(path), &made) &&
	       (int64_t)exec_daemon_mono_ms() - made < IMAGE_REMAKE_MS;
}

/* The image for kernels of memory_mb that a kernel living lives_ms more
 * may use (its folder in out). */
static bool find_usable(const struct worker *w, uint32_t memory_mb, uint64_t lives_ms, char *out, size_t n)
{
	int64_t made;
	if (!w->d->cfg->kernel_images || !newest(w->d, memory_mb, out, n, &made))
		return false;
	int64_t age = (int64_t)exec_daemon_mono_ms() - made;
	return age + (int64_t)lives_ms + IMAGE_MARGIN_MS <= (int64_t)EXEC_KERNEL_IMAGE_LIMIT_MS;
}

bool kernel_images_find(const struct worker *w, const struct exec_kernel_spec *spec, uint64_t waits_ms,
			char image[KERNEL_IMAGE_PATH_MAX])
{
	uint64_t lives = (uint64_t)spec->lifetime_s * 1000 + waits_ms;
	return !(spec->egress && spec->egress->grants) &&
	       find_usable(w, spec->memory_mb, lives, image, KERNEL_IMAGE_PATH_MAX);
}

struct exec_kernel_warm *kernel_images_restore_from(struct worker *w, const struct exec_kernel_spec *spec,
						    const char *image)
{
	struct exec_kernel_warm *warm = NULL;
	struct gv_err err;
	if (exec_kernel_image_restore(&w->engine, w->bridge, w->bridge_len, spec, image, &warm, &err) != 0) {
		gv_warn(&w->d->log, "worker %d: restoring a kernel from %s: %s; starting it fresh", w->index, image,
			err.msg);
		return NULL;
	}
	return warm;
}

struct exec_kernel_warm *kernel_images_restore(struct worker *w, const struct exec_kernel_spec *spec,
					       uint64_t waits_ms)
{
	char image[KERNEL_IMAGE_PATH_MAX];
	return kernel_images_find(w, spec, waits_ms, image) ? kernel_images_restore_from(w, spec, image) : NULL;
}

/* Removes the images of memory_mb older than keep_made. */
static void remove_older(const struct daemon *d, uint32_t memory_mb, int64_t keep_made)
{
	char dir[4096];
	if (images_dir(d, dir, sizeof(dir)) != 0)
		return;
	DIR *dd = opendir(dir);
	if (!dd)
		return;
	struct dirent *de;
	while ((de = readdir(dd)) != NULL) {
		unsigned mb;
		long long t;
		char tail;
		if (sscanf(de->d_name, "%u-%lld%c", &mb, &t, &tail) != 2 || mb != memory_mb || t >= keep_made)
			continue;
		char p[4400];
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		/* A restore that opened it already keeps its file. */
		exec_kernel_image_remove(p);
	}
	closedir(dd);
}

/* Makes the image of memory_mb under its lock; false when another worker
 * holds the lock or the node's start gate is full. */
static bool make(struct worker *w, uint32_t memory_mb)
{
	const struct daemon *d = w->d;
	char dir[4096], lock[4200], tmp[4200], final[4200];
	if (images_dir(d, dir, sizeof(dir)) != 0)
		return false;
	snprintf(lock, sizeof(lock), "%s/%u.lock", dir, memory_mb);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	bool done = false;
	if (fresh_image(d, memory_mb)) {
		done = true; /* made meanwhile */
	} else if (d->cfg->kernel_memory_mb <= 0 ||
		   exec_gate_take(w, EXEC_GATE_START, exec_daemon_start_places(d->cfg), 0)) {
		snprintf(tmp, sizeof(tmp), "%s/.new-%u-w%d", dir, memory_mb, w->index);
		exec_kernel_image_remove(tmp);
		uint64_t t0 = exec_daemon_mono_ms();
		struct gv_err err;
		/* Under a kernel node's ceiling, no quota above it (cgroup v1
		 * refuses one). */
		uint32_t cpu = d->cfg->kernel_memory_mb > 0
				       ? exec_cpu_ceiling_clamp(0, (unsigned)d->cfg->kernel_cpu_ceiling_pct)
				       : 0;
		if (exec_kernel_image_make(&w->engine, w->bridge, w->bridge_len, memory_mb, cpu, tmp, IMAGE_WAIT_MS,
					   &err) != 0) {
			gv_warn(&d->log, "worker %d: making the kernel image for %u MB: %s; kernels of that budget start fresh",
				w->index, memory_mb, err.msg);
			w->image_retry_ms = (int64_t)t0 + IMAGE_RETRY_MS;
		} else {
			int64_t made = (int64_t)exec_daemon_mono_ms();
			snprintf(final, sizeof(final), "%s/%u-%" PRId64, dir, memory_mb, made);
			if (rename(tmp, final) != 0) {
				gv_warn(&d->log, "worker %d: rename %s: %s", w->index, tmp, strerror(errno));
				exec_kernel_image_remove(tmp);
			} else {
				remove_older(d, memory_mb, made);
				gv_info(&d->log, "worker %d: kernel image for %u MB made and checked in %" PRIu64 " ms",
					w->index, memory_mb, exec_daemon_mono_ms() - t0);
				done = true;
			}
		}
		if (d->cfg->kernel_memory_mb > 0)
			exec_gate_give(w, EXEC_GATE_START);
	}
	flock(fd, LOCK_UN);
	close(fd);
	return done;
}

bool kernel_images_tick(struct worker *w, const uint32_t *wanted_mb, size_t n)
{
	if (!w->d->cfg->kernel_images || !w->bridge || (int64_t)exec_daemon_mono_ms() < w->image_retry_ms)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!fresh_image(w->d, wanted_mb[i]))
			return make(w, wanted_mb[i]);
	return false;
}
