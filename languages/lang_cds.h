/* Class-data archives for JVM compilers, built ahead by the trusted side,
 * used by the compiler inside the sandbox.
 *
 * javac is a Java program: inside gVisor most of a small compile is the
 * JVM loading and verifying javac's own classes (jdk.compiler), which the
 * JDK's default archive does not hold. A language names an archive
 * (`compile_class_archive: javac.jsa`) and has
 * `-J-XX:SharedArchiveFile=/pch/<id>/<name>` in its compile argv. The node
 * dumps it (-XX:ArchiveClassesAtExit) from one javac run of a fixed,
 * trusted source (no submission byte is involved) with the JVM options of
 * the language's compile argv, into the folder the engine mounts read-only
 * at /pch (languages/lang_pch.h). The JVM checks that the archive was made
 * by the same JVM from the same runtime image and otherwise ignores it
 * silently, so a missing, stale or foreign archive only costs speed, and the
 * classes javac compiles are the same either way. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "languages/lang.h"

/* True when def names a class archive and its compile argv points the JVM
 * at it under LANG_PCH_MOUNT. */
bool lang_cds_wanted(const struct lang_def *def);

/* Builds dir_fd/<id>/<archive> (dir is dir_fd's path, for messages and
 * the JVM's argv) unless its stamp names the same JDK (its runtime image
 * and VM library, by size, time and inode) and options.
 * 1 built, 0 up to date, -1 failed with the reason in why. The caller
 * holds the folder's build lock. */
int lang_cds_prepare_one(const struct lang_def *def, const char *dir, int dir_fd, char *why, size_t whysz);
