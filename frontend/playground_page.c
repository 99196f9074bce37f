/* The playground page: three static files embedded in the binary at build
 * time (.incbin, as openapi.c embeds the OpenAPI document), so the server
 * reads nothing at run time and the files are edited as plain HTML,
 * JavaScript and CSS, with no build step. The page talks to the API with
 * relative URLs only, so it works under whichever path serves it.
 *
 * Its security rests on the headers sent here and on the page never
 * parsing program output as markup (app.js sets text only): the CSP allows
 * scripts, styles and connections from this origin alone, no inline script
 * or style, no plugins, no <base>, no framing; so even markup that slipped
 * into the DOM could neither run nor send anything elsewhere. */
#include "frontend/playground_page.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "frontend/server_internal.h"

/* Each file, then its length as a 64-bit value. .incbin resolves the path
 * from the compiler's working directory: the Makefile builds from the
 * repository root, and lists these files as the object's prerequisites. */
#define FE_PG_EMBED(sym, path)                                                                     \
	".global " sym "\n"                                                                        \
	".type " sym ", @object\n"                                                                 \
	".balign 16\n" sym ":\n"                                                                   \
	".incbin \"" path "\"\n"                                                                   \
	"1:\n"                                                                                     \
	".size " sym ", 1b - " sym "\n"                                                            \
	".balign 8\n"                                                                              \
	".global " sym "_len\n"                                                                    \
	".type " sym "_len, @object\n" sym "_len:\n"                                               \
	".quad 1b - " sym "\n"                                                                     \
	".size " sym "_len, 8\n"

__asm__(".section .rodata\n" FE_PG_EMBED("fe_pg_index_html", "frontend/playground/index.html")
		FE_PG_EMBED("fe_pg_app_js", "frontend/playground/app.js")
			FE_PG_EMBED("fe_pg_style_css", "frontend/playground/style.css") ".previous\n");

extern const char fe_pg_index_html[], fe_pg_app_js[], fe_pg_style_css[];
extern const uint64_t fe_pg_index_html_len, fe_pg_app_js_len, fe_pg_style_css_len;

/* No inline script or style anywhere in the page; it fetches only from
 * this origin, shows no images but its own, embeds nothing and cannot be
 * framed (clickjacking a Run button). */
#define FE_PG_CSP                                                                                  \
	"default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; "           \
	"img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "                \
	"frame-ancestors 'none'"

struct pg_file {
	const char *rest;
	const char *ctype;
	const char *data;
	const uint64_t *len;
	char etag[24]; /* "\"" 16 hex digits "\"" */
};

static struct pg_file pg_files[] = {
	{ "", "text/html; charset=utf-8", fe_pg_index_html, &fe_pg_index_html_len, "" },
	{ "static/app.js", "text/javascript; charset=utf-8", fe_pg_app_js, &fe_pg_app_js_len, "" },
	{ "static/style.css", "text/css; charset=utf-8", fe_pg_style_css, &fe_pg_style_css_len, "" },
};

static pthread_once_t pg_etags_once = PTHREAD_ONCE_INIT;

/* ETags from the bytes (64-bit FNV-1a): the same file gets the same tag
 * from every frontend of a deployment running the same build. Written
 * once, before any worker reads them. */
static void pg_etags(void)
{
	for (size_t i = 0; i < sizeof(pg_files) / sizeof(pg_files[0]); i++) {
		uint64_t h = 0xcbf29ce484222325ull;
		for (uint64_t k = 0; k < *pg_files[i].len; k++) {
			h ^= (unsigned char)pg_files[i].data[k];
			h *= 0x100000001b3ull;
		}
		snprintf(pg_files[i].etag, sizeof(pg_files[i].etag), "\"%016llx\"", (unsigned long long)h);
	}
}

/* Whether an If-None-Match value names tag (a list, weak or strong
 * comparison alike, or "*"). */
static bool etag_matches(const char *inm, const char *tag)
{
	if (!inm)
		return false;
	if (strchr(inm, '*'))
		return true;
	return strstr(inm, tag) != NULL;
}

/* The bytes a path may carry into a Location header unescaped. */
static bool location_safe(const char *p)
{
	for (; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '/' || c == '-' || c == '_' || c == '.' || c == '~'))
			return false;
	}
	return true;
}

/* The page without its trailing slash: every relative URL in it would
 * resolve one level up, so send the browser to the path with the slash. */
static void redirect_to_slash(struct fe_req *r, const char *path)
{
	char loc[2 * FE_ROUTE_PARAM_MAX + 32];
	int n = snprintf(loc, sizeof(loc), "%s/", path);
	if (n < 0 || (size_t)n >= sizeof(loc) || !location_safe(path)) {
		fe_reply_error(r, 404, "not_found", "no such page");
		return;
	}
	struct evbuffer *b = evbuffer_new();
	if (!b) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	evbuffer_add_printf(b, "%s\n", loc);
	struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
	evhttp_add_header(h, "Location", loc);
	evhttp_add_header(h, "Cache-Control", "no-cache");
	fe_reply_raw(r, 301, "text/plain; charset=utf-8", b);
	evbuffer_free(b);
}

void fe_playground_page(struct fe_req *r, const char *rest)
{
	const struct pg_file *f = NULL;
	for (size_t i = 0; i < sizeof(pg_files) / sizeof(pg_files[0]); i++)
		if (!strcmp(rest, pg_files[i].rest))
			f = &pg_files[i];
	if (!f) {
		fe_reply_error(r, 404, "not_found", "no such file of the playground page");
		return;
	}
	if (!f->rest[0]) {
		const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(r->req);
		const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
		size_t len = path ? strlen(path) : 0;
		if (len == 0 || path[len - 1] != '/') {
			redirect_to_slash(r, path ? path : "");
			return;
		}
	}
	if (pthread_once(&pg_etags_once, pg_etags) != 0) {
		fe_reply_error(r, 500, "internal", "pthread_once failed");
		return;
	}
	struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
	evhttp_add_header(h, "Content-Security-Policy", FE_PG_CSP);
	evhttp_add_header(h, "Cache-Control", "no-cache");
	evhttp_add_header(h, "ETag", f->etag);
	evhttp_add_header(h, "X-Frame-Options", "DENY");
	evhttp_add_header(h, "Referrer-Policy", "no-referrer");
	struct evbuffer *b = evbuffer_new();
	if (!b) {
		fe_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	const char *inm = evhttp_find_header(evhttp_request_get_input_headers(r->req), "If-None-Match");
	if (etag_matches(inm, f->etag)) {
		fe_reply_raw(r, 304, f->ctype, b);
	} else {
		/* The embedded bytes live as long as the process: no copy. */
		evbuffer_add_reference(b, f->data, (size_t)*f->len, NULL, NULL);
		fe_reply_raw(r, 200, f->ctype, b);
	}
	evbuffer_free(b);
}
