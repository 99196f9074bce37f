/* The seccomp allowlists gavel-init puts on the compiler and on the
 * program: a table of syscall names (seccomp_policy.c), compiled once with
 * libseccomp into a BPF program that the child loads right before execve. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <linux/seccomp.h>

#include "common/err.h"

enum init_policy {
	INIT_POLICY_PROGRAM, /* the submitted program: no chmod, rename, link... */
	INIT_POLICY_COMPILE, /* compilers and linkers: also change modes and names */
};

/* A compiled filter; insns owned (init_bpf_free). */
struct init_bpf {
	struct sock_filter *insns;
	unsigned short len;
};

/* Builds the policy. Every libseccomp call is checked; a name in the table
 * that this libseccomp cannot resolve makes this fail (a typo must not
 * silently widen or narrow the policy): gavel-init then runs nothing, and
 * the unit tests that build every policy fail, not the compile. Default action for a syscall not in
 * the table: EPERM. A short "hostile" list (ptrace, mount, unshare, bpf...)
 * kills the process with SIGSYS so the attempt shows in the result. Other
 * architectures (i386, x32 numbers) kill the process. */
int init_seccomp_build(enum init_policy policy, struct init_bpf *out,
		       struct gv_err *err) GV_MUST_CHECK;
/* The same, with socket(AF_INET) allowed when inet (the job record's
 * network:1: the tenant's egress policy granted the sandbox a network). */
int init_seccomp_build_net(enum init_policy policy, bool inet, struct init_bpf *out,
			   struct gv_err *err) GV_MUST_CHECK;

/* What a policy may allow beyond the table. */
struct init_seccomp_opts {
	bool inet;           /* socket(AF_INET): the job record's network:1 */
	bool single_process; /* procs:1: no fork, vfork or clone without
			      * CLONE_THREAD (EAGAIN); threads stay allowed */
	bool toolchain;      /* the program runs toolchains (writable_box,
			      * Jobe's runs): the compile policy's chmod,
			      * rename, link, symlink and utimes too; only for
			      * a run whose work dir is not /box (workcopy.h) */
};
int init_seccomp_build_opts(enum init_policy policy, const struct init_seccomp_opts *opt,
			    struct init_bpf *out, struct gv_err *err) GV_MUST_CHECK;

/* NULL-safe. */
void init_bpf_free(struct init_bpf *bpf);

/* Sets no_new_privs and loads bpf into the calling thread. Only raw system
 * calls: safe in a vfork-style child. Returns 0 or -errno. */
int init_seccomp_apply(const struct init_bpf *bpf);

/* Loads bpf only: the caller inherited no_new_privs (init_no_new_privs in
 * init, once). Without it the kernel refuses the filter (EACCES: the child
 * holds no CAP_SYS_ADMIN), so the program never runs unfiltered. One
 * system call less per run than init_seccomp_apply. Returns 0 or -errno. */
int init_seccomp_load(const struct init_bpf *bpf);

/* Sets no_new_privs on the caller (init: it never execs, every child
 * inherits it and it can never be cleared) and checks that it holds. */
int init_no_new_privs(struct gv_err *err) GV_MUST_CHECK;

/* Writes the policy in libseccomp's readable PFC form to fd (debugging and
 * the probe tests). */
int init_seccomp_dump(enum init_policy policy, int fd, struct gv_err *err) GV_MUST_CHECK;
