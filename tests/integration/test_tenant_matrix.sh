#!/usr/bin/env bash
# The cross-tenant matrix: tenant A creates submissions (native and Judge0)
# carrying a marker in their source and stdin; then every endpoint that can
# name or list a submission is asked with tenant B's key. Each must answer
# 404 (or 403, or an empty/`null` slot where the API's shape requires one)
# and never return a byte of A's data: neither the marker nor A's ids.
# Against the harness's PostgreSQL and Redis and a real gavel-frontend (no
# executor: queued submissions are enough). TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
: "${GAVEL_DATABASE_URL:?run under tests/run.sh (needs the harness env)}"
: "${GAVEL_FRONTEND_DATABASE_URL:?}" "${GAVEL_REDIS_URL:?}"
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "# $2"; }
tmp=$(mktemp -d /tmp/gavel-matrix-test.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

G=$BUILD/gavel
"$G" migrate --dir deploy/sql >"$tmp/migrate.log" 2>&1 || { echo "Bail out! migrate failed"; exit 1; }
sfx=$$_$RANDOM
TA=mx_a_$sfx TB=mx_b_$sfx
"$G" tenant create "$TA" >/dev/null 2>&1 && "$G" tenant create "$TB" >/dev/null 2>&1 ||
	{ echo "Bail out! tenant create failed"; exit 1; }
KA=$("$G" key create --tenant "$TA" 2>/dev/null)
KB=$("$G" key create --tenant "$TB" 2>/dev/null)
[ -n "$KA" ] && [ -n "$KB" ] || { echo "Bail out! key create failed"; exit 1; }

GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=1s \
	env -u GAVEL_DATABASE_URL GAVEL_DATABASE_SERVICE_URL="$GAVEL_FRONTEND_DATABASE_URL" \
		GAVEL_REDIS_URL="${GAVEL_REDIS_URL_FRONTEND:-$GAVEL_REDIS_URL}" \
		"$BUILD/gavel-frontend" --port 0 --ready-fd 3 3>"$tmp/port" >"$tmp/fe.log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
P=$(head -n1 "$tmp/port")
[ -n "$P" ] || { echo "Bail out! gavel-frontend did not start: $(tail -n5 "$tmp/fe.log")"; exit 1; }
B=http://127.0.0.1:$P
for _ in $(seq 50); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/health")" != 000 ] && break
	sleep 0.1
done

MARK=matrixsecret$RANDOM$RANDOM
json() { python3 -c "import json,sys; print(json.dumps(sys.argv[1]))" "$1"; }
# A's submissions: native with tests, native plain, Judge0 single, Judge0 batch.
body_native="{\"language\":\"python3\",\"source\":$(json "print('$MARK')"),\"stdin\":$(json "$MARK")}"
NID=$(curl -s -X POST -H "X-Auth-Token: $KA" -d "$body_native" "$B/v1/submissions" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
J0=$(curl -s -X POST -H "X-Auth-Token: $KA" -H 'Content-Type: application/json' \
	-d "{\"language_id\":71,\"source_code\":$(json "print('$MARK')"),\"stdin\":$(json "$MARK")}" \
	"$B/submissions?base64_encoded=false" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
J0B=$(curl -s -X POST -H "X-Auth-Token: $KA" -H 'Content-Type: application/json' \
	-d "{\"submissions\":[{\"language_id\":71,\"source_code\":$(json "print('$MARK')")}]}" \
	"$B/submissions/batch?base64_encoded=false" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["token"])')
if [ -z "$NID" ] || [ -z "$J0" ] || [ -z "$J0B" ]; then
	echo "Bail out! tenant A's submissions were not created"
	exit 1
fi
# A sees its own (the control: the marker is there to be leaked).
own=$(curl -s -H "X-Auth-Token: $KA" "$B/submissions/$J0?base64_encoded=false&fields=source_code")

# method path allowed-codes [empty-json-ok]
cases=(
	"GET /v1/submissions/$NID 404"
	"GET /v1/submissions/$J0 404"
	"GET /v1/submissions/$NID/events 404"
	"GET /submissions/$J0?base64_encoded=false&fields=* 404"
	"GET /submissions/$NID?base64_encoded=true 404"
	"DELETE /submissions/$J0B 404"
	"GET /submissions/batch?tokens=$J0,$J0B,$NID&base64_encoded=false&fields=* 200"
	"GET /submissions?base64_encoded=false&fields=* 200"
	"GET /v1/audit?limit=1000 200"
	"GET /v1/usage 200"
)
echo "1..$((${#cases[@]} * 2 + 2))"
if grep -q "$MARK" <<<"$own"; then ok "tenant A reads its own source (control)"; else notok "tenant A reads its own source (control)" "${own:0:300}"; fi
for c in "${cases[@]}"; do
	read -r method path want <<<"$c"
	out=$(curl -s -m 5 -X "$method" -H "X-Auth-Token: $KB" -o "$tmp/body" -w '%{http_code}' "$B$path")
	if [ "$out" = "$want" ] || { [ "$want" = 404 ] && [ "$out" = 403 ]; }; then
		ok "tenant B: $method ${path%%\?*} answers $out"
	else
		notok "tenant B: $method ${path%%\?*} answers $want" "got $out: $(head -c 300 "$tmp/body")"
	fi
	if grep -qE "$MARK|$NID|$J0|$J0B" "$tmp/body"; then
		notok "tenant B: $method ${path%%\?*} returns none of A's data" "$(head -c 300 "$tmp/body")"
	else
		ok "tenant B: $method ${path%%\?*} returns none of A's data"
	fi
done
# A's submissions survived B's DELETE attempt.
left=$(psql "$GAVEL_DATABASE_URL" -XAtq -c "SELECT count(*) FROM submissions s JOIN tenants t ON t.id = s.tenant_id WHERE t.name = '$TA'")
if [ "$left" = 3 ]; then ok "tenant A still has its 3 submissions"; else notok "tenant A still has its 3 submissions" "count $left"; fi
[ "$fails" -eq 0 ]
