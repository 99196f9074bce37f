/* Entry points of submissions (languages/lang_entry.h): the Java scan and
 * the choice of saved file name and main class. The scanner is a small
 * lexer over untrusted bytes: every read is bounded by the length, nothing
 * is allocated, and names are copied only into fixed buffers after their
 * length and characters were checked. */
#include "languages/lang_entry.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}

static bool ident_char(unsigned char c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

/* A plain ASCII Java identifier that also makes a file name the sandbox
 * accepts ([A-Za-z0-9._-]): no '$', no non-ASCII letters. */
static bool ascii_ident(const char *s, size_t n)
{
	if (n == 0 || n >= LANG_ENTRY_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80 || s[i] == '$' || !ident_char((unsigned char)s[i]))
			return false;
	return true;
}

static bool tok_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* One remembered top-level type. */
struct jtype {
	const char *name;
	size_t len;
	bool pub, has_main;
};

enum jstate {
	J_FREE,      /* between declarations at depth 0 */
	J_PACKAGE,   /* after `package`, collecting the name until ';' */
	J_SKIP_STMT, /* after `import`, until ';' */
	J_TYPE_NAME, /* after class/interface/enum/record: the next identifier names it */
	J_HEADER,    /* after the name, until the body's '{' */
	J_ANNOT,     /* after '@': the next identifier is the annotation's name */
};

/* Skips a comment or literal starting at s[i]; returns the index after it,
 * or i when s[i] starts none. */
static size_t skip_trivia(const char *s, size_t n, size_t i)
{
	if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
		while (i < n && s[i] != '\n')
			i++;
		return i;
	}
	if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
		for (i += 2; i < n; i++)
			if (s[i] == '*' && i + 1 < n && s[i + 1] == '/')
				return i + 2;
		return n;
	}
	if (s[i] == '"' && i + 2 < n && s[i + 1] == '"' && s[i + 2] == '"') {
		for (i += 3; i < n; i++) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"' && i + 2 < n && s[i + 1] == '"' && s[i + 2] == '"')
				return i + 3;
		}
		return n;
	}
	if (s[i] == '"' || s[i] == '\'') {
		char q = s[i];
		for (i++; i < n; i++) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == q || s[i] == '\n')
				return i + 1;
		}
		return n;
	}
	return i;
}

/* The scanner's state between tokens. */
struct jscan {
	struct jtype first_pub, first_main, first; /* candidates, in source order */
	struct jtype cur; /* the top-level type whose body we are in */
	bool pub;         /* `public` seen in the current declaration */
	enum jstate st;
	unsigned depth, parens;
	/* The last two tokens at depth 1, for `void main (`. */
	const char *t1, *t2;
	size_t l1, l2;
	char pkg[LANG_ENTRY_CLASS_MAX];
	size_t pkglen;
	bool pkg_ok;
};

/* cur is complete (or the scan ended inside it): remember it where it is
 * the first of its kind. */
static void jscan_keep_type(struct jscan *s)
{
	if (s->cur.pub && !s->first_pub.name)
		s->first_pub = s->cur;
	if (s->cur.has_main && !s->first_main.name)
		s->first_main = s->cur;
	if (!s->first.name)
		s->first = s->cur;
}

/* An identifier or keyword w[0..wl). */
static void jscan_word(struct jscan *s, const char *w, size_t wl)
{
	if (s->depth == 1 && s->parens == 0) {
		s->t2 = s->t1, s->l2 = s->l1;
		s->t1 = w, s->l1 = wl;
	}
	if (s->depth != 0 || s->parens != 0)
		return;
	switch (s->st) {
	case J_PACKAGE:
		if (!ascii_ident(w, wl) || s->pkglen + wl + 1 >= sizeof(s->pkg)) {
			s->pkg_ok = false;
		} else {
			memcpy(s->pkg + s->pkglen, w, wl);
			s->pkglen += wl;
			s->pkg[s->pkglen] = '\0';
		}
		break;
	case J_SKIP_STMT:
	case J_HEADER:
		break;
	case J_ANNOT:
		s->st = tok_is(w, wl, "interface") ? J_TYPE_NAME : J_FREE;
		break;
	case J_TYPE_NAME:
		s->cur = (struct jtype){ .name = w, .len = wl, .pub = s->pub };
		s->st = J_HEADER;
		break;
	case J_FREE:
		if (tok_is(w, wl, "package") && s->pkglen == 0)
			s->st = J_PACKAGE;
		else if (tok_is(w, wl, "import"))
			s->st = J_SKIP_STMT;
		else if (tok_is(w, wl, "public"))
			s->pub = true;
		else if (tok_is(w, wl, "class") || tok_is(w, wl, "interface") || tok_is(w, wl, "enum") ||
			 tok_is(w, wl, "record"))
			s->st = J_TYPE_NAME;
		break;
	}
}

/* Any other character c: brackets, ';', '.', '@', spaces. */
static void jscan_punct(struct jscan *s, unsigned char c)
{
	bool top = s->depth == 0 && s->parens == 0;
	if (s->depth == 1 && s->parens == 0 && c == '(' && s->t1 && s->t2 && tok_is(s->t1, s->l1, "main") &&
	    tok_is(s->t2, s->l2, "void"))
		s->cur.has_main = true;
	if (s->depth == 1 && !(c == ' ' || c == '\t' || c == '\n' || c == '\r'))
		s->t1 = s->t2 = NULL;
	switch (c) {
	case '{':
		if (top && s->st == J_HEADER)
			s->st = J_FREE; /* entering cur's body */
		s->depth++;
		break;
	case '}':
		if (s->depth > 0)
			s->depth--;
		if (s->depth == 0 && s->parens == 0 && s->cur.name) {
			jscan_keep_type(s);
			s->cur = (struct jtype){ 0 };
			s->pub = false;
			s->st = J_FREE;
		}
		break;
	case '(':
		if (s->depth == 0)
			s->parens++;
		break;
	case ')':
		if (s->depth == 0 && s->parens > 0)
			s->parens--;
		break;
	case ';':
		if (top) {
			s->st = J_FREE;
			s->pub = false;
		}
		break;
	case '.':
		if (top && s->st == J_PACKAGE && s->pkglen + 1 < sizeof(s->pkg)) {
			s->pkg[s->pkglen++] = '.';
			s->pkg[s->pkglen] = '\0';
		}
		break;
	case '@':
		if (top && s->st == J_FREE)
			s->st = J_ANNOT;
		break;
	default:
		break;
	}
}

void lang_java_scan(const char *src, size_t len, struct lang_java_scan *out)
{
	memset(out, 0, sizeof(*out));
	size_t n = len < LANG_ENTRY_SCAN_MAX ? len : LANG_ENTRY_SCAN_MAX;
	struct jscan s = { .st = J_FREE, .pkg_ok = true };

	for (size_t i = 0; i < n;) {
		size_t j = skip_trivia(src, n, i);
		if (j != i) {
			if (s.depth == 1)
				s.t1 = s.t2 = NULL; /* a literal is a token: `void "x" main(` is no main */
			i = j;
			continue;
		}
		unsigned char c = (unsigned char)src[i];
		if (ident_start(c)) {
			size_t b = i;
			while (i < n && ident_char((unsigned char)src[i]))
				i++;
			jscan_word(&s, src + b, i - b);
			continue;
		}
		i++;
		jscan_punct(&s, c);
	}
	/* A type whose body the bounded scan did not finish still counts. */
	if (s.cur.name)
		jscan_keep_type(&s);
	const struct jtype *pick = s.first_pub.name ? &s.first_pub : s.first_main.name ? &s.first_main : &s.first;
	if (pick->name && ascii_ident(pick->name, pick->len)) {
		memcpy(out->cls, pick->name, pick->len);
		out->cls[pick->len] = '\0';
	}
	/* A package name must be whole identifiers joined by single dots. */
	if (s.pkg_ok && s.pkglen > 0 && s.pkg[0] != '.' && s.pkg[s.pkglen - 1] != '.' && !strstr(s.pkg, ".."))
		memcpy(out->package, s.pkg, s.pkglen + 1);
}

void lang_entry_resolve(const struct lang_def *def, const void *src, size_t len, struct lang_entry *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->file, sizeof(out->file), "%s", def->source);
	const char *dot = strrchr(def->source, '.');
	size_t stem = dot && dot != def->source ? (size_t)(dot - def->source) : strlen(def->source);
	if (stem >= sizeof(out->file_stem))
		stem = sizeof(out->file_stem) - 1;
	memcpy(out->file_stem, def->source, stem);
	out->file_stem[stem] = '\0';
	snprintf(out->main_class, sizeof(out->main_class), "%s", out->file_stem);
	if (def->entry_scan != LANG_ENTRY_SCAN_JAVA || !src)
		return;
	struct lang_java_scan js;
	lang_java_scan(src, len, &js);
	if (js.cls[0]) {
		snprintf(out->file, sizeof(out->file), "%s.java", js.cls);
		snprintf(out->file_stem, sizeof(out->file_stem), "%s", js.cls);
		snprintf(out->main_class, sizeof(out->main_class), "%s", js.cls);
	}
	size_t pl = strlen(js.package), sl = strlen(out->file_stem);
	if (pl && pl + 1 + sl < sizeof(out->main_class)) {
		memcpy(out->main_class, js.package, pl);
		out->main_class[pl] = '.';
		memcpy(out->main_class + pl + 1, out->file_stem, sl + 1);
	}
}
