/* Templates of notebook kernels saved as runsc images, and kernels
 * restored from them (executor/kernels/kernel_image.h). */
#include "executor/kernels/kernel_image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "executor/kernels/kernel_internal.h"

#define STEP_MS 20
/* After `ready` the bridge says `state idle` at once: what it writes
 * after the host stopped reading would be lost in the image. */
#define SETTLE_MS 300

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_step(void)
{
	struct timespec ts = {0, STEP_MS * 1000000L};
	nanosleep(&ts, NULL);
}

/* Steps w until it answers (1), dies (-1) or wait_ms pass (-1). */
static int wait_ready(struct exec_kernel_warm *w, uint64_t wait_ms, struct gv_err *err)
{
	int64_t until = mono_ms() + (int64_t)wait_ms;
	for (;;) {
		int r = exec_kernel_warm_step(w, err);
		if (r != 0)
			return r < 0 ? -1 : 0;
		if (mono_ms() >= until)
			return gv_err_set(err, ETIMEDOUT, "the kernel did not answer within %llu ms",
					  (unsigned long long)wait_ms);
		sleep_step();
	}
}

void exec_kernel_image_remove(const char *image_dir)
{
	DIR *d = opendir(image_dir);
	if (d) {
		int dfd = dirfd(d);
		struct dirent *de;
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				unlinkat(dfd, de->d_name, 0);
		closedir(d);
	}
	rmdir(image_dir);
}

static void template_spec(struct exec_kernel_spec *spec, uint32_t memory_mb)
{
	*spec = (struct exec_kernel_spec){.tenant = EXEC_KERNEL_IMAGE_TENANT,
					  .lifetime_s = EXEC_KERNEL_IMAGE_LIMIT_MS / 1000,
					  .memory_mb = memory_mb};
}

int exec_kernel_image_restore(struct exec_engine *e, const char *bridge, size_t bridge_len,
			      const struct exec_kernel_spec *spec, const char *image_dir,
			      struct exec_kernel_warm **out, struct gv_err *err)
{
	*out = NULL;
	if (!bridge)
		return gv_err_set(err, GV_ECONFIG, "the kernel bridge could not be read when the worker started");
	if (spec->egress && spec->egress->grants)
		return gv_err_set(err, GV_EINVAL, "a kernel with a network is never restored from an image");
	struct exec_kernel_spec as_made;
	template_spec(&as_made, spec->memory_mb);
	as_made.tenant = spec->tenant;
	as_made.cpu_pct = spec->cpu_pct;
	struct exec_kernel_sandbox_job kj;
	exec_kernel_sandbox_job(&kj, bridge, bridge_len, &as_made, EXEC_KERNEL_IMAGE_LIMIT_MS);
	struct exec_session *s = NULL;
	struct exec_stream *st = NULL;
	if (exec_session_restore(e, &kj.job, image_dir, &s, err) != 0)
		return -1;
	/* Nothing reaches the kernel before the reseed: the adopting relay
	 * writes clients' messages behind this command. */
	if (exec_stream_resume(s, &st, err) != 0 || exec_stream_write(st, "restored\n", 9, err) != 0) {
		exec_stream_free(st);
		exec_session_close(s);
		return -1;
	}
	return exec_kernel_warm_wrap(s, st, true, out, err);
}

int exec_kernel_image_make(struct exec_engine *e, const char *bridge, size_t bridge_len, uint32_t memory_mb,
			   uint32_t cpu_pct, const char *image_dir, uint64_t wait_ms, struct gv_err *err)
{
	struct exec_kernel_spec spec;
	template_spec(&spec, memory_mb);
	spec.cpu_pct = cpu_pct;
	struct exec_kernel_warm *w = NULL;
	if (exec_kernel_warm_start(e, bridge, bridge_len, &spec, 0, &w, err) != 0)
		return -1;
	if (wait_ready(w, wait_ms, err) != 0) {
		gv_err_prefix(err, "kernel template");
		exec_kernel_warm_free(w);
		return -1;
	}
	int64_t settle = mono_ms() + SETTLE_MS;
	while (mono_ms() < settle) {
		if (exec_kernel_warm_step(w, err) < 0) {
			exec_kernel_warm_free(w);
			return -1;
		}
		sleep_step();
	}
	if (mkdir(image_dir, 0700) != 0) {
		gv_err_errno(err, "mkdir %s", image_dir);
		exec_kernel_warm_free(w);
		return -1;
	}
	int rc = exec_session_checkpoint(exec_kernel_warm_session(w), image_dir, err);
	exec_kernel_warm_free(w);
	if (rc != 0) {
		gv_err_prefix(err, "kernel template: checkpoint");
		exec_kernel_image_remove(image_dir);
		return -1;
	}
	/* A save that "worked" is proven only by a clone that answers. */
	struct exec_kernel_warm *check = NULL;
	if (exec_kernel_image_restore(e, bridge, bridge_len, &spec, image_dir, &check, err) != 0 ||
	    wait_ready(check, wait_ms, err) != 0) {
		gv_err_prefix(err, "kernel template: its image does not restore");
		exec_kernel_warm_free(check);
		exec_kernel_image_remove(image_dir);
		return -1;
	}
	exec_kernel_warm_free(check);
	return 0;
}
