#!/usr/bin/env bash
# CORS against a real gavel-frontend (frontend/cors.h has the policy):
# preflights on every API route (native, Judge0, Piston) for any origin,
# public routes readable from any origin, a tenant's keys usable only from
# the origins its cors_origins quota lists (else frontend.cors_origins),
# same-origin pages never refused, credentials never allowed, and errors
# before the key is known (401) readable by the page. No executor: a
# submission is stored and queued (201). Needs the harness environment
# (tests/run.sh): GAVEL_DATABASE_URL, GAVEL_FRONTEND_DATABASE_URL,
# GAVEL_REDIS_URL.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
: "${GAVEL_DATABASE_URL:?run under tests/run.sh (needs the harness env)}"
: "${GAVEL_FRONTEND_DATABASE_URL:?}" "${GAVEL_REDIS_URL:?}"
echo "1..16"
. tests/lib/tap.sh
check_detail() { echo "got: ${last_code:-} ${last_body:0:200} | ${last_headers:0:400}"; }
tmp=$(mktemp -d /tmp/gavel-cors-test.XXXXXX)
sfx=$$_$RANDOM
pid=
# No executor runs here: the submissions stay queued. Cancelled at exit, so
# that a later test's scheduler does not re-enqueue them from PostgreSQL
# (the reconciler) and run them on its own executor.
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	psql "$GAVEL_DATABASE_URL" -XAtq -c "UPDATE submissions SET status = 'cancelled', finished_at = now()
		WHERE status IN ('queued', 'running') AND tenant_id IN
		(SELECT id FROM tenants WHERE name IN ('cors_a_$sfx', 'cors_b_$sfx'))" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

"$BUILD/gavel" migrate --dir deploy/sql >"$tmp/migrate.log" 2>&1 || bail "migrate failed: $(tail -n3 "$tmp/migrate.log")"
"$BUILD/gavel" tenant create "cors_a_$sfx" >/dev/null 2>&1 && "$BUILD/gavel" tenant create "cors_b_$sfx" >/dev/null 2>&1 ||
	bail "gavel tenant create failed"
KA=$("$BUILD/gavel" key create --tenant "cors_a_$sfx" 2>/dev/null)
KB=$("$BUILD/gavel" key create --tenant "cors_b_$sfx" 2>/dev/null)
[ -n "$KA" ] && [ -n "$KB" ] || bail "gavel key create failed"
"$BUILD/gavel" tenant update "cors_a_$sfx" --quota cors_origins=https://course.example,http://localhost:8080 \
	>"$tmp/update.log" 2>&1 || bail "tenant update: $(cat "$tmp/update.log")"

# The global default allows one origin, for tenants without a list (B).
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_CORS_ORIGINS=https://default.example \
	env -u GAVEL_DATABASE_URL GAVEL_DATABASE_SERVICE_URL="$GAVEL_FRONTEND_DATABASE_URL" \
	GAVEL_REDIS_URL="${GAVEL_REDIS_URL_FRONTEND:-$GAVEL_REDIS_URL}" \
	"$BUILD/gavel-frontend" --port 0 --ready-fd 3 3>"$tmp/port" >"$tmp/fe.log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
P=$(head -n1 "$tmp/port")
[ -n "$P" ] || bail "gavel-frontend did not start: $(tail -n5 "$tmp/fe.log")"
B=http://127.0.0.1:$P
for _ in $(seq 50); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/health")" = 200 ] && break
	sleep 0.1
done

# req METHOD PATH [curl args...]: sets last_code, last_body, last_headers
# (lower-cased names, one per line).
req() {
	local m=$1 p=$2
	shift 2
	last_body=$(curl -s -m 10 -X "$m" -D "$tmp/h" -o - -w '\n%{http_code}' "$@" "$B$p")
	last_code=${last_body##*$'\n'}
	last_body=${last_body%$'\n'*}
	last_headers=$(tr -d '\r' <"$tmp/h" | sed 's/^\([^:]*\):/\L\1:/')
}
hdr() { sed -n "s/^$1: //p" <<<"$last_headers" | head -n1; }
code_is() { [ "$last_code" = "$1" ]; }
JSON=(-H 'Content-Type: application/json')
SUB='{"language":"python3","source":"print(1)","tests":[{"input":"","expected":"1\n"}]}'

# 1-3: preflights, without a key, on a route of each API.
preflight_ok() { # ORIGIN METHOD
	code_is 204 && [ "$(hdr access-control-allow-origin)" = "$1" ] &&
		grep -q "$2" <<<"$(hdr access-control-allow-methods)" &&
		grep -qi authorization <<<"$(hdr access-control-allow-headers)" &&
		grep -qi x-auth-token <<<"$(hdr access-control-allow-headers)" &&
		[ -n "$(hdr access-control-max-age)" ] && [ -z "$(hdr access-control-allow-credentials)" ]
}
req OPTIONS /v1/submissions -H 'Origin: https://anywhere.example' -H 'Access-Control-Request-Method: POST' \
	-H 'Access-Control-Request-Headers: authorization, content-type'
check "preflight of POST /v1/submissions: 204, the origin, POST, the key headers, no credentials" \
	preflight_ok https://anywhere.example POST
req OPTIONS /submissions/batch -H 'Origin: https://anywhere.example' -H 'Access-Control-Request-Method: POST'
check "preflight of Judge0's POST /submissions/batch" preflight_ok https://anywhere.example POST
req OPTIONS /api/v2/execute -H 'Origin: http://localhost:3000' -H 'Access-Control-Request-Method: POST'
check "preflight of Piston's POST /api/v2/execute" preflight_ok http://localhost:3000 POST
# 4: a plain OPTIONS (no Origin) lists the methods; an unknown path is 404.
req OPTIONS /v1/problems/p1
allow=$(hdr allow)
req OPTIONS /v1/nothing-here -H 'Origin: https://anywhere.example'
check "OPTIONS without Origin: 204 and Allow (GET, PUT, DELETE on /v1/problems/{id}); unknown path 404" \
	eval "[ '$allow' != '' ] && grep -q PUT <<<'$allow' && grep -q DELETE <<<'$allow' && code_is 404"
# 5: an invalid Origin gets no grant.
req OPTIONS /v1/submissions -H 'Origin: null' -H 'Access-Control-Request-Method: POST'
check "Origin: null gets no Access-Control-Allow-Origin" eval 'code_is 204 && [ -z "$(hdr access-control-allow-origin)" ]'

# 6: public routes: any origin may read.
req GET /v1/languages -H 'Origin: https://anywhere.example'
check "GET /v1/languages from any origin: readable (ACAO, Vary: Origin)" \
	eval 'code_is 200 && [ "$(hdr access-control-allow-origin)" = https://anywhere.example ] && grep -qi origin <<<"$(hdr vary)"'

# 7-9: tenant A's own list.
req POST /v1/submissions -H "X-Auth-Token: $KA" "${JSON[@]}" -H 'Origin: https://course.example' --data-binary "$SUB"
check "A's key from an origin A lists: accepted, readable, Location exposed" \
	eval 'code_is 201 && [ "$(hdr access-control-allow-origin)" = https://course.example ] &&
	      grep -qi location <<<"$(hdr access-control-expose-headers)" && [ -z "$(hdr access-control-allow-credentials)" ]'
req POST /v1/submissions -H "X-Auth-Token: $KA" "${JSON[@]}" -H 'Origin: https://default.example' --data-binary "$SUB"
check "A's key from the global default's origin: 403 origin_not_allowed (A's own list replaces the default), the refusal readable by that page (ACAO, nothing exposed)" \
	eval 'code_is 403 && grep -q origin_not_allowed <<<"$last_body" && [ "$(hdr access-control-allow-origin)" = https://default.example ] &&
	      [ -z "$(hdr access-control-expose-headers)" ]'
before=$(psql "$GAVEL_DATABASE_URL" -XAtc "SELECT count(*) FROM submissions s JOIN tenants t ON t.id = s.tenant_id WHERE t.name = 'cors_a_$sfx'")
req POST /submissions -H "X-Auth-Token: $KA" "${JSON[@]}" -H 'Origin: https://evil.example' \
	--data-binary '{"language_id":71,"source_code":"print(1)"}'
after=$(psql "$GAVEL_DATABASE_URL" -XAtc "SELECT count(*) FROM submissions s JOIN tenants t ON t.id = s.tenant_id WHERE t.name = 'cors_a_$sfx'")
check "A's key via Judge0 from an unlisted origin: 403, and nothing was stored" \
	eval 'code_is 403 && [ "$before" = "$after" ]'

# 10-11: tenant B has no list: the global default applies.
req POST /v1/submissions -H "Authorization: Bearer $KB" "${JSON[@]}" -H 'Origin: https://default.example' --data-binary "$SUB"
check "B's key from the default origin: accepted and readable" \
	eval 'code_is 201 && [ "$(hdr access-control-allow-origin)" = https://default.example ]'
req POST /v1/submissions -H "Authorization: Bearer $KB" "${JSON[@]}" -H 'Origin: https://course.example' --data-binary "$SUB"
check "B's key from A's origin: 403 (tenants' lists are their own)" code_is 403

# 12: same origin (the page was served by this frontend) is never refused.
req POST /v1/submissions -H "Authorization: Bearer $KB" "${JSON[@]}" -H "Origin: http://127.0.0.1:$P" --data-binary "$SUB"
check "same-origin POST (Origin = Host): accepted, no CORS headers needed" \
	eval 'code_is 201 && [ -z "$(hdr access-control-allow-origin)" ]'

# 13: no Origin (curl, server-side clients): unchanged.
req POST /v1/submissions -H "X-Auth-Token: $KA" "${JSON[@]}" --data-binary "$SUB"
check "no Origin: accepted, no CORS headers" eval 'code_is 201 && [ -z "$(hdr access-control-allow-origin)" ]'

# 14: a bad key from a page: the 401 is readable, so the page can say why.
req GET /v1/submissions/aaaaaaaaaaaaaaaaaaaaaa -H 'X-Auth-Token: gv_notakey' -H 'Origin: https://course.example'
check "401 before the tenant is known: readable by the page (ACAO)" \
	eval 'code_is 401 && [ "$(hdr access-control-allow-origin)" = https://course.example ]'

# 15: a list that is not valid is refused by the CLI, and the stored one stays.
"$BUILD/gavel" tenant update "cors_a_$sfx" --quota cors_origins=https://course.example/path >"$tmp/bad.log" 2>&1
rc=$?
stored=$(psql "$GAVEL_DATABASE_URL" -XAtc "SELECT array_to_string(q.cors_origins, ',') FROM tenant_quotas q JOIN tenants t ON t.id = q.tenant_id WHERE t.name = 'cors_a_$sfx'")
check "gavel tenant update refuses an origin with a path, keeping the stored list" \
	eval "[ $rc -ne 0 ] && grep -q cors_origins '$tmp/bad.log' && [ '$stored' = 'https://course.example,http://localhost:8080' ]"

# 16: "*" lets any origin use the tenant's keys.
"$BUILD/gavel" tenant update "cors_a_$sfx" --quota 'cors_origins=*' >/dev/null 2>&1
sleep 1.2 # the frontend trusts a looked-up key for auth_cache_ttl (1 s)
req POST /v1/submissions -H "X-Auth-Token: $KA" "${JSON[@]}" -H 'Origin: https://elsewhere.example' --data-binary "$SUB"
check "cors_origins=* : any origin, still no credentials" \
	eval 'code_is 201 && [ "$(hdr access-control-allow-origin)" = https://elsewhere.example ] && [ -z "$(hdr access-control-allow-credentials)" ]'

[ "$fails" -eq 0 ]
