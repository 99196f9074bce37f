#!/usr/bin/env bash
# The native API's OpenAPI document (frontend/openapi.json) against a linter
# nobody here wrote: @redocly/cli (pinned in tests/js), its recommended
# rules, 0 errors (warnings are printed). And the document a running
# gavel-frontend serves is that file, byte for byte (it is embedded at
# build time). test_frontend_api.sh calls every documented operation.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
echo "1..2"
. tests/lib/tap.sh
. tests/lib/npm.sh
npm_clients_ready || bail "the npm clients of tests/js could not be installed"

out=$("$ROOT/tests/js/node_modules/.bin/redocly" lint --format=summary frontend/openapi.json 2>&1)
rc=$?
grep -E '^(error|warning) ' <<<"$out" | sed 's/^/# /'
check "@redocly/cli lint frontend/openapi.json: no errors" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -n 20 <<<"$out" | sed 's/^/# /'

tmp=$(mktemp -d /tmp/gavel-openapi.XXXXXX)
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
# No database or Redis is needed to serve the document.
GAVEL_DATABASE_SERVICE_URL=postgres://nobody@127.0.0.1:1/none GAVEL_REDIS_URL=redis://127.0.0.1:1/0 \
	"$BUILD/gavel-frontend" --port 0 --ready-fd 3 3>"$tmp/port" >"$tmp/fe.log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
P=$(head -n1 "$tmp/port")
[ -n "$P" ] || bail "gavel-frontend did not start: $(tail -n5 "$tmp/fe.log")"
curl -s -m 10 -o "$tmp/served.json" "http://127.0.0.1:$P/v1/openapi.json"
check "GET /v1/openapi.json serves frontend/openapi.json byte for byte" cmp -s "$tmp/served.json" frontend/openapi.json
[ "$fails" -eq 0 ]
