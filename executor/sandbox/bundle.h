/* The OCI bundle of one sandbox: config.json, a skeleton root and a
 * generated minimal /etc, all under one bundle directory the executor owns.
 * The spec is built by a pure function (exec_bundle_config) so that its
 * security properties are unit-tested without runsc; exec_bundle_write puts
 * it and the skeleton on disk. The layout of a bundle directory:
 *
 *   <bundle>/config.json
 *   <bundle>/rootfs/   skeleton root (read-only inside)
 *   <bundle>/etc/      generated /etc (bound read-only at /etc)
 *   <bundle>/box/      per-job work dir, written by the host before create,
 *                      bound read-write at /box
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "executor/sandbox/gpu.h"

/* Everything the spec depends on. Strings are borrowed for the call. */
struct exec_bundle_params {
	const char *hostname;        /* UTS name inside, e.g. "gavel" */
	const char *cgroups_path;    /* "/gavel/<tenant>/<sandbox>" */
	const char *init_path;       /* absolute host path of gavel-init */
	const char *etc_path;        /* absolute host path of the generated /etc */
	const char *box_path;        /* absolute host path of the work dir */
	uint64_t memory_limit_bytes; /* whole sandbox, host memcg; > 0 */
	uint64_t pids_limit;         /* host threads; >= EXEC_BUNDLE_MIN_PIDS */
	uint64_t cpu_quota_us;       /* per cpu_period_us; 0 = no quota */
	uint64_t cpu_period_us;
	uint64_t tmp_size_bytes;     /* tmpfs /tmp; > 0 */
	uint64_t nofile;             /* RLIMIT_NOFILE backstop */
	uint64_t nproc;              /* RLIMIT_NPROC backstop */
	uint64_t fsize_bytes;        /* RLIMIT_FSIZE backstop */
	/* Host paths bound read-only into /etc when non-NULL: what the JVM
	 * needs (/etc/java-17-openjdk, /etc/alternatives). */
	const char *const *etc_binds;
	/* The folders of the host's /usr bound read-only at the same place
	 * (exec_bundle_default_usr_dirs): the toolchains, never all of /usr. */
	const char *const *usr_dirs;
	/* Host folder of precompiled headers (languages/lang_pch.h), bound
	 * read-only at LANG_PCH_MOUNT; NULL: the mount point stays empty. */
	const char *pch_path;
	bool seccomp;                /* emit linux.seccomp (runsc --oci-seccomp) */
	/* GPUs (executor/sandbox/gpu.h): NULL for none; else "0,1", added to
	 * the environment as NVIDIA_VISIBLE_DEVICES (digits and commas
	 * only). */
	const char *gpu_visible;
	/* The device nodes of the assigned GPUs and their control nodes, for
	 * linux.devices and the device cgroup allowlist: only with real GPUs
	 * under runsc --nvproxy, never with a simulated inventory. */
	const struct exec_gpu_node *gpu_nodes;
	size_t n_gpu_nodes;
	/* NULL: a new, empty network namespace (runsc --network=none). Else
	 * the sandbox's own namespace, "/run/netns/<name>" made by
	 * executor/sandbox/netpolicy.c, joined by runsc --network=host. */
	const char *netns_path;
};

/* The uid/gid every compiler and program runs as inside: nobody/nogroup.
 * gavel-init drops them to it before execve. */
#define EXEC_BUNDLE_UID 65534
#define EXEC_BUNDLE_GID 65534
/* gavel-init itself: root of gVisor's user namespace (not of the host)
 * with only the capabilities in exec_bundle_init_caps. */
#define EXEC_BUNDLE_INIT_UID 0
#define EXEC_BUNDLE_INIT_NCAPS 6
extern const char *const exec_bundle_init_caps[EXEC_BUNDLE_INIT_NCAPS];
/* pids.limit counts host threads (~20 per sandboxed process) and reaching it
 * panics the Sentry: it is a backstop only, never the process limit. */
#define EXEC_BUNDLE_MIN_PIDS 1024

/* Builds config.json. Returns a new reference the caller json_decref()s, or
 * NULL with err filled. Pure: reads no files. */
json_t *exec_bundle_config(const struct exec_bundle_params *p, struct gv_err *err) GV_MUST_CHECK;

/* Creates the skeleton root under bundle_fd/"rootfs" and the generated /etc
 * under bundle_fd/"etc" (passwd, group, hosts, nsswitch.conf, a copy of the
 * host's ld.so.cache, and mount points for etc_binds and usr_dirs). bundle_fd is a
 * directory the caller just created and owns. */
int exec_bundle_write_skeleton(int bundle_fd, const char *const *etc_binds,
			       const char *const *usr_dirs, struct gv_err *err) GV_MUST_CHECK;

/* Writes config to bundle_fd/"config.json" (O_EXCL|O_NOFOLLOW). */
int exec_bundle_write_config(int bundle_fd, json_t *config, struct gv_err *err) GV_MUST_CHECK;

#define EXEC_BUNDLE_MAX_ETC_BINDS 4
/* Fills out with the host /etc directories the JVM needs that exist on this
 * host (static strings), NULL-terminated. */
void exec_bundle_default_etc_binds(const char *out[EXEC_BUNDLE_MAX_ETC_BINDS + 1]);

#define EXEC_BUNDLE_MAX_USR_DIRS 8
/* Fills out with those of lang_toolchain_dirs (languages/lang.h) that
 * exist on this host as real folders, NULL-terminated: never /usr/local. */
void exec_bundle_default_usr_dirs(const char *out[EXEC_BUNDLE_MAX_USR_DIRS + 1]);
