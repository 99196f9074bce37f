/* Kernels restored from a template's image instead of started fresh.
 *
 * A fresh kernel costs a new gVisor sandbox plus Python importing
 * ipykernel under the Sentry: 3.5 to 6 s of a CPU. A template is one
 * sandbox of the kernel job (the bridge and an idle ipykernel, for one
 * memory budget) started once, saved with `runsc checkpoint` when it
 * answers, and then destroyed; each kernel is then a new sandbox made
 * from that image with `runsc restore` (under a second), with its own id,
 * host uid, cgroup (its tenant's memory, CPU quota and parent), /box and
 * pipes.
 *
 * Security argument:
 * - The template never runs a tenant's code and never sees a client's
 *   message: it is made under a tenant name of its own
 *   (EXEC_KERNEL_IMAGE_TENANT), from the bridge and Debian's ipykernel
 *   only, so its image holds nothing of any tenant. One image serves every
 *   tenant of a node; each restore is a new sandbox for one kernel,
 *   destroyed with it, as every kernel's is.
 * - Clones of one image share its userspace state, random generators
 *   included: the bridge reseeds Python's and numpy's generators from the
 *   new sandbox's os.urandom before it says `ready` (the `restored`
 *   command), and no client's message reaches the kernel before that.
 *   The bridge's HMAC key and ZMQ paths are the same in every clone; they
 *   guard nothing across sandboxes (each clone's sockets are in its own
 *   /tmp, and its kernel code runs as the bridge's uid anyway).
 * - The image is root's (0700 folders under the node's work root) and
 *   read only by runsc; a failed make or check leaves none behind, and the
 *   node then starts kernels fresh (the kernel still runs, slower).
 * - Restored, gavel-init does not lock /box again (it did in the
 *   template): the session locks the new /box on the host
 *   (exec_session_restore). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "executor/kernels/kernel.h"
#include "executor/sandbox/engine.h"

#define EXEC_KERNEL_IMAGE_TENANT "gavel-kernel-image"
/* The template's wall and CPU limit (gavel-init's count, which goes on
 * in its clones): the longest kernel lifetime. */
#define EXEC_KERNEL_IMAGE_LIMIT_MS 43200000u

/* Starts a template for kernels of memory_mb in a fresh sandbox (CPU
 * quota cpu_pct, 0: the engine's), waits
 * (at most wait_ms) for it to answer, saves it into image_dir (made here,
 * 0700; it must not exist) and checks the image with one restore that
 * must answer too. 0: image_dir holds the image; -1 (err): nothing is
 * left in image_dir. */
int exec_kernel_image_make(struct exec_engine *e, const char *bridge, size_t bridge_len, uint32_t memory_mb,
			   uint32_t cpu_pct, const char *image_dir, uint64_t wait_ms, struct gv_err *err) GV_MUST_CHECK;

/* A kernel for spec (no network; spec->memory_mb the image's) restored
 * from image_dir, as a kernel started ahead (kernel.h) that answers once
 * its generators are reseeded (exec_kernel_warm_step says 1). */
int exec_kernel_image_restore(struct exec_engine *e, const char *bridge, size_t bridge_len,
			      const struct exec_kernel_spec *spec, const char *image_dir,
			      struct exec_kernel_warm **out, struct gv_err *err) GV_MUST_CHECK;

/* Removes an image folder and what it holds (files only); best effort. */
void exec_kernel_image_remove(const char *image_dir);
