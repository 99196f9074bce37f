/* A writable copy of the work dir for a job whose one run may write beside
 * its files (the job record's `writable_box`: Jobe's runs, where a
 * CodeRunner template writes the student's answer, compiles it and runs
 * the result). /box itself stays locked, and closed for the run; the copy lives in
 * the sandbox's /tmp, a size-capped tmpfs charged to the sandbox's memory
 * cgroup, which gavel-init empties after each run. */
#pragma once

#include "common/err.h"

/* The copy's path, the run's working directory. */
#define INIT_WORKCOPY_DIR "/tmp/gv-work"

/* Copies the tree at src_dfd (regular files and folders only; links and
 * anything else are skipped, never followed) into a fresh
 * INIT_WORKCOPY_DIR under tmp_dfd (/tmp), writable by the program: files
 * 0666 or 0777 as their execute bits say, folders 0777 (the sandbox holds
 * no other user), at most 16 levels deep; then closes the source folder
 * to the program (mode 0700, owned by init: else an error), since the
 * run may change modes and the compile's output in it is the program's. */
int init_workcopy_make(int src_dfd, int tmp_dfd, struct gv_err *err) GV_MUST_CHECK;
