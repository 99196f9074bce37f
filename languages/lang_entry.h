/* Entry points: the file name a source is saved under and the name the run
 * step starts, chosen per submission. Most languages use the fixed `source`
 * of their definition; a language with `entry_scan: java` gets a bounded
 * host-side scan of the source for its package and its public (or main)
 * top-level class, so that `public class hello` is saved as hello.java and
 * run as `hello`, and `package a.b;` runs as `a.b.Name`, as Kattis and DMOJ
 * accept them. The scan is a pure function over untrusted bytes: it reads at
 * most LANG_ENTRY_SCAN_MAX bytes, never allocates, and every name it returns
 * is checked to be a plain ASCII Java identifier, so the worst a hostile
 * source can do is pick a name that makes its own compile fail. */
#pragma once

#include <stddef.h>

#include "languages/lang.h"

#define LANG_ENTRY_SCAN_MAX (4u * 1024u * 1024u) /* source bytes the scan reads */
#define LANG_ENTRY_NAME_MAX 128                  /* bytes of a class or package component */
#define LANG_ENTRY_FILE_MAX (LANG_ENTRY_NAME_MAX + 8)
#define LANG_ENTRY_CLASS_MAX 512                 /* bytes of "pkg.sub.Name" */

/* The entry point of one submission. */
struct lang_entry {
	char file[LANG_ENTRY_FILE_MAX];        /* saved as, in /box: "hello.java" */
	char main_class[LANG_ENTRY_CLASS_MAX]; /* {main_class}: "a.b.hello"; the source's stem by default */
	char file_stem[LANG_ENTRY_FILE_MAX];   /* for messages: "hello" */
};

/* What the Java scan found. Empty strings where nothing (valid) was found. */
struct lang_java_scan {
	char package[LANG_ENTRY_CLASS_MAX]; /* "a.b" or "" */
	char cls[LANG_ENTRY_NAME_MAX];      /* the chosen top-level type, or "" */
};

/* Scans Java source text (not NUL-terminated; at most LANG_ENTRY_SCAN_MAX
 * bytes of it are read) for the package declaration and the top-level type
 * to run, skipping comments, string and char literals and text blocks. The
 * type is the first public top-level one; else the first top-level type
 * declaring `void main(`; else the first top-level type. Names that are not
 * plain ASCII identifiers are dropped. Pure. */
void lang_java_scan(const char *src, size_t len, struct lang_java_scan *out);

/* Fills out for a submission of def: the definition's `source` and its stem,
 * or, for `entry_scan: java`, "<Class>.java" and "<package>.<Class>" when
 * the scan found a class. Pure. */
void lang_entry_resolve(const struct lang_def *def, const void *src, size_t len, struct lang_entry *out);
