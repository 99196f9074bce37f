#!/usr/bin/env bash
# The playground page (frontend/playground/, served by gavel-frontend under
# /playground/{tenant}/) against the whole stack: PostgreSQL, Redis,
# gavel-scheduler, one gavel-executor on runsc, gavel-frontend.
#
#   1-6   what the frontend serves: the page, its script and style byte
#         for byte with their types, a strict Content-Security-Policy,
#         nosniff, no-cache and an ETag (304 when it matches), the page
#         without its slash redirected to it, other files 404; and the
#         files themselves: no inline script or style, no absolute URL, no
#         HTML parsing of strings in the script.
#   7-18  Debian's Chromium, headless, driven by puppeteer-core through
#         tests/js/playground_page.mjs, keyboard only: Python 3 typed with
#         Tab indentation and stdin runs to AC with its stdout, the
#         progress streamed over SSE; C that does not compile shows CE and
#         the compiler's message; hostile output and compiler messages
#         stay text (no element, no dialog); the permalink shows the run
#         again; polling takes over when the stream fails; no request
#         carries a key; the CSP blocks injected inline handlers.
#         A screenshot is left in /tmp/gavel-playground-page.png.
#
# The page is used anonymously, on a tenant with its playground on.
# Installs what it needs (root): Chromium (tests/lib/chromium.sh), the
# pinned npm clients (tests/lib/npm.sh). Prints TAP; every process it
# starts is stopped on exit.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SHOT=/tmp/gavel-playground-page.png
NODE_CHECKS=12 # CHECKS of tests/js/playground_page.mjs

echo "1..$((6 + NODE_CHECKS))"
. tests/lib/tap.sh
check_detail() { echo "${last_code:-} | ${last_headers:0:600}"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc, cgroups, installing Chromium)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid; do
	command -v "$c" >/dev/null || bail "$c missing"
done
. tests/lib/npm.sh
. tests/lib/chromium.sh
npm_clients_ready || bail "the npm clients of tests/js could not be installed"
chromium_ready || bail "Chromium could not be installed"

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup playground-page
TENANT=pg_page_$TAG
"$BUILD/gavel" tenant create "$TENANT" >"$TMP/t" 2>"$TMP/cli.log" || bail "gavel tenant create: $(cat "$TMP/cli.log")"
# The page is served only for a tenant whose playground is on, and used
# there as a stranger would: no key.
"$BUILD/gavel" tenant update "$TENANT" --quota playground=true --quota playground_rps=50 --quota playground_burst=50 \
	>>"$TMP/cli.log" 2>&1 || bail "gavel tenant update: $(cat "$TMP/cli.log")"

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PID_SCHED=$!
PIDS+=("$PID_SCHED")
GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	stack_start_executor executor.log
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
PAGE=$B/playground/$TENANT/

# req PATH [curl args...]: GET; sets last_code, last_headers (names
# lower-cased) and writes the body to $TMP/body.
req() {
	local p=$1
	shift
	rm -f "$TMP/body"
	last_code=$(curl -s -m 20 -D "$TMP/h" -o "$TMP/body" -w '%{http_code}' "$@" "$B$p")
	last_headers=$(tr -d '\r' <"$TMP/h" | sed 's/^\([^:]*\):/\L\1:/')
}
hdr() { sed -n "s/^$1: //p" <<<"$last_headers" | head -n1; }

# 1: the page and its headers.
req "/playground/$TENANT/"
csp=$(hdr content-security-policy)
strict_csp() {
	grep -q "default-src 'self'" <<<"$csp" && grep -q "script-src 'self'" <<<"$csp" &&
		grep -q "connect-src 'self'" <<<"$csp" && grep -q "object-src 'none'" <<<"$csp" &&
		grep -q "frame-ancestors 'none'" <<<"$csp" && ! grep -q "unsafe-" <<<"$csp"
}
check "GET /playground/{tenant}/: 200 text/html, the file byte for byte, a strict CSP (self only, no unsafe-*), nosniff, no-cache, an ETag" \
	eval '[ "$last_code" = 200 ] && [ "$(hdr content-type)" = "text/html; charset=utf-8" ] &&
	      cmp -s "$TMP/body" frontend/playground/index.html && strict_csp &&
	      [ "$(hdr x-content-type-options)" = nosniff ] && [ "$(hdr cache-control)" = no-cache ] && [ -n "$(hdr etag)" ]'

# 2: its script and style.
req "/playground/$TENANT/static/app.js"
js_ok=0
[ "$last_code" = 200 ] && [ "$(hdr content-type)" = "text/javascript; charset=utf-8" ] &&
	cmp -s "$TMP/body" frontend/playground/app.js && [ -n "$(hdr content-security-policy)" ] && js_ok=1
etag=$(hdr etag)
req "/playground/$TENANT/static/style.css"
check "static/app.js and static/style.css: 200, their types, byte for byte, with the CSP" \
	eval '[ $js_ok = 1 ] && [ "$last_code" = 200 ] && [ "$(hdr content-type)" = "text/css; charset=utf-8" ] &&
	      cmp -s "$TMP/body" frontend/playground/style.css && [ -n "$(hdr content-security-policy)" ]'

# 3: revalidation.
req "/playground/$TENANT/static/app.js" -H "If-None-Match: $etag"
check "If-None-Match with the script's ETag: 304, no body" eval '[ "$last_code" = 304 ] && [ ! -s "$TMP/body" ]'

# 4: the page without its slash; other files.
req "/playground/$TENANT"
redir=$last_code
loc=$(hdr location)
req "/playground/$TENANT/static/index.html"
c1=$last_code
req "/playground/$TENANT/static/app.js.map"
c2=$last_code
req "/playground/$TENANT/static/..%2fplayground_page.c"
check "the page without its slash: 301 to the path with it; any other file: 404" \
	eval '[ "$redir" = 301 ] && [ "$loc" = "/playground/$TENANT/" ] && [ "$c1" = 404 ] && [ "$c2" = 404 ] &&
	      [ "$last_code" = 404 ]'

# 5-6: the files themselves.
html_clean() {
	local f=frontend/playground/index.html
	# every <script> has a src and no content; no style element or
	# attribute; no on*= handler; no URL that leaves the page's own path.
	[ "$(grep -Eo '<script[^>]*>' "$f" | grep -vc ' src=')" = 0 ] && ! grep -Eq '<script[^>]*>[^<]' "$f" &&
		! grep -Eiq '<style|[[:space:]]style=|[[:space:]]on[a-z]+=' "$f" &&
		! grep -Eiq '(src|href|action)="(/|[a-z]+:)' "$f"
}
check "index.html: no inline script, style or handler, only relative URLs" html_clean
js_clean() {
	local f=frontend/playground/app.js
	! grep -Eq 'innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function' "$f" &&
		! grep -Eq "fetch\\(['\"\`]/|['\"\`]https?://" "$f"
}
check "app.js: no HTML parsing of strings (innerHTML and kin), no eval, no absolute URL" js_clean

# 7-18: the browser.
stack_wait_healthy 120 "$PID_EXEC" "$PID_SCHED"
# Languages are offered once the executor has probed them.
avail=""
for _ in $(seq 240); do
	avail=$(curl -s -m 5 "$B/v1/languages" | python3 -c '
import json, sys
print(" ".join(sorted(l["id"] for l in json.load(sys.stdin) if l.get("available"))))' 2>/dev/null)
	grep -qw c <<<"$avail" && grep -qw python3 <<<"$avail" && break
	sleep 0.5
done
grep -qw c <<<"$avail" && grep -qw python3 <<<"$avail" || bail "C and Python 3 not available: '$avail'"

# browse PAGE_URL SCREENSHOT [KEY]: the NODE_CHECKS browser checks, with
# the key typed into the page's key field when one is given.
browse() {
	rm -f "$2"
	node tests/js/playground_page.mjs "$1" $((n + 1)) "$2" "${3:-}" 2>"$TMP/node.err"
	local rc=$?
	n=$((n + NODE_CHECKS))
	if [ $rc -ne 0 ]; then
		fails=$((fails + 1))
		sed 's/^/# /' "$TMP/node.err" | tail -n 20
		tail -n 20 "$TMP/frontend.log" | sed 's/^/# frontend: /'
	fi
}
browse "$PAGE" "$SHOT"
[ "$fails" -eq 0 ]
