/* The playground page (frontend/playground/: index.html, app.js,
 * style.css), embedded in gavel-frontend and served under a tenant's
 * playground path. Private to frontend/. */
#pragma once

struct fe_req;

/* Answers GET or HEAD of one file of the page. rest is what follows
 * "/playground/{tenant}/" in the path: "" the page, "static/app.js",
 * "static/style.css"; anything else is 404. The page itself asked for
 * without its trailing slash is redirected (301) to the path with one:
 * the page's URLs are all relative to it. Every file goes out with a
 * strict Content-Security-Policy, nosniff, an ETag of its bytes (an
 * If-None-Match naming it gets 304) and Cache-Control: no-cache, so a new
 * binary's page is seen at the next load. rest is borrowed for the call. */
void fe_playground_page(struct fe_req *r, const char *rest);
