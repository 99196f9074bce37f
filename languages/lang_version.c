/* Versions of a language: the clean version extracted from its
 * version_command's output, and the display version built from the
 * definition's "{version}" template. Pure string functions. */
#include "languages/lang.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"

/* Keeps printable ASCII of s[0..n) in out (NUL-terminated, truncated),
 * trimmed of spaces at both ends. */
static void clean_copy(const char *s, size_t n, char *out, size_t outsz)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < outsz; i++)
		if ((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f)
			out[o++] = s[i];
	if (outsz)
		out[o] = '\0';
}

int lang_version_extract(const struct lang_def *def, const char *output, char *out, size_t outsz,
			 struct gv_err *err)
{
	if (outsz)
		out[0] = '\0';
	if (!def->version_regex) {
		const char *s = output;
		while (*s == '\n' || *s == '\r' || *s == ' ')
			s++;
		clean_copy(s, strcspn(s, "\r\n"), out, outsz);
		return 0;
	}
	regex_t re;
	if (regcomp(&re, def->version_regex, REG_EXTENDED) != 0)
		return gv_err_set(err, GV_ECONFIG, "version_regex does not compile");
	regmatch_t m[2];
	int rc = regexec(&re, output, 2, m, 0);
	size_t nsub = re.re_nsub;
	regfree(&re);
	if (rc != 0) {
		char esc[120];
		return gv_err_set(err, GV_ECONFIG, "version output does not match version_regex: %s",
				  gv_log_escape(esc, sizeof(esc), output, strcspn(output, "\n")));
	}
	const regmatch_t *g = nsub >= 1 && m[1].rm_so >= 0 ? &m[1] : &m[0];
	clean_copy(output + g->rm_so, (size_t)(g->rm_eo - g->rm_so), out, outsz);
	if (outsz && !out[0])
		return gv_err_set(err, GV_ECONFIG, "version_regex matched an empty version");
	return 0;
}

void lang_display_version(const struct lang_def *def, const char *probed, char *out, size_t outsz)
{
	if (!outsz)
		return;
	const char *ph = strstr(def->version, "{version}");
	if (!ph) {
		snprintf(out, outsz, "%s", def->version);
		return;
	}
	size_t pre = (size_t)(ph - def->version);
	const char *post = ph + 9;
	if (!probed || !*probed) {
		/* Unknown: "Node.js {version}" shows as "Node.js". */
		while (pre && def->version[pre - 1] == ' ')
			pre--;
		if (pre == 0)
			while (*post == ' ')
				post++;
		probed = "";
	}
	snprintf(out, outsz, "%.*s%s%s", (int)pre, def->version, probed, post);
}
