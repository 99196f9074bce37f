/* libFuzzer target for the code under languages/ that reads bytes: a
 * language definition file (lang_def_parse; the name it is given follows
 * the input's `id:` line, so that the id check does not stop every input
 * before the rest of the schema), and the Java entry scan of a submitted
 * source (lang_java_scan), fed the same bytes. Checks beyond "does not
 * crash": a definition that loads builds a job for a source with its
 * default limits (exec_lang_job_build: its argv templates expand), and the
 * scan only returns plain Java identifiers. */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/judge/judge.h"
#include "languages/lang.h"
#include "languages/lang_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz: invariant broken: %s: %s\n", what, detail ? detail : "");
	abort();
}

/* "<id>.yaml" from the first line "id: <id>" (up to LANG_ID_MAX bytes of
 * [a-z0-9_+.-]), else "x.yaml". */
static void file_name(const char *s, size_t len, char *out, size_t outsz)
{
	const char *id = "x";
	char buf[LANG_ID_MAX + 1];
	for (size_t i = 0; i + 3 < len; i++) {
		if ((i == 0 || s[i - 1] == '\n') && !memcmp(s + i, "id:", 3)) {
			size_t p = i + 3, n = 0;
			while (p < len && (s[p] == ' ' || s[p] == '"'))
				p++;
			while (p < len && n < LANG_ID_MAX && (islower((unsigned char)s[p]) || isdigit((unsigned char)s[p]) ||
							      strchr("_+.-", s[p])) && s[p])
				buf[n++] = s[p++];
			buf[n] = '\0';
			if (n)
				id = buf;
			break;
		}
	}
	snprintf(out, outsz, "%s.yaml", id);
}

/* A plain ASCII Java identifier without '$' (it names a file in the
 * sandbox: [A-Za-z0-9._-]); dotted ones for a package. */
static bool java_name_ok(const char *s, size_t cap, bool dotted)
{
	if (!memchr(s, '\0', cap))
		return false;
	if (!*s)
		return true;
	bool start = true;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (dotted && c == '.' && !start) {
			start = true;
			continue;
		}
		if (!(isalpha(c) || c == '_' || (!start && isdigit(c))))
			return false;
		start = false;
	}
	return !start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;

	struct lang_java_scan js;
	lang_java_scan(text, size, &js);
	if (!java_name_ok(js.package, sizeof(js.package), true) || !java_name_ok(js.cls, sizeof(js.cls), false))
		fail("lang_java_scan returned a name that is not an identifier", js.cls);

	char name[LANG_ID_MAX + 8];
	file_name(text, size, name, sizeof(name));
	struct lang_def def;
	struct gv_err err;
	if (lang_def_parse(&def, name, text, size, &err) == 0) {
		struct exec_lang_job lj;
		if (exec_lang_job_build(&lj, &def, "fuzz", text, size, NULL, &err) != 0)
			fail("a definition that loads builds no job", err.msg);
		if (!lj.source_name[0] || strchr(lj.source_name, '/'))
			fail("source name", lj.source_name);
		exec_lang_job_free(&lj);
		char out[LANG_STR_MAX];
		lang_display_version(&def, "1.2.3", out, sizeof(out));
		lang_display_version(&def, NULL, out, sizeof(out));
		char v[LANG_VERSION_MAX];
		if (lang_version_extract(&def, "Version 1.2.3 (build 4)\nsecond line\n", v, sizeof(v), &err) == 0 &&
		    !memchr(v, '\0', sizeof(v)))
			fail("lang_version_extract", "unterminated");
	}
	lang_def_clear(&def);
	return 0;
}
