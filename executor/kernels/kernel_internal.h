/* What kernel.c shares with kernel_image.c and nobody else: the job a
 * kernel's sandbox runs, and a kernel started ahead made from a session
 * opened elsewhere. Not for use outside executor/kernels/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor/kernels/kernel.h"
#include "executor/sandbox/session.h"
#include "executor/sandbox/session_stream.h"

/* The bridge in an interactive job with the kernel's limits: memory from
 * spec, wall and CPU wall_ms. Points into itself: do not copy. */
struct exec_kernel_sandbox_job {
	const char *argv[4];
	struct exec_file files[1];
	struct exec_job job;
};
void exec_kernel_sandbox_job(struct exec_kernel_sandbox_job *kj, const char *bridge, size_t bridge_len,
			     const struct exec_kernel_spec *spec, uint64_t wall_ms);

/* *out: a kernel started ahead that owns s and st (-1 when out of
 * memory: both are closed). restored: from an image, answering once the
 * bridge says `ready` again (the `restored` command). */
int exec_kernel_warm_wrap(struct exec_session *s, struct exec_stream *st, bool restored, struct exec_kernel_warm **out,
			  struct gv_err *err) GV_MUST_CHECK;
struct exec_session *exec_kernel_warm_session(struct exec_kernel_warm *w);
struct exec_stream *exec_kernel_warm_stream(struct exec_kernel_warm *w);
