#!/usr/bin/env bash
# Public playgrounds (frontend/playground.h) against the whole stack:
# gavel-scheduler, one gavel-executor (real runsc) and gavel-frontend on the
# harness's PostgreSQL and Redis, driven over HTTP as anonymous clients:
#
#   a. off by default: everything under /playground/<tenant>/ is 404, the
#      same answer as for a name that is no tenant;
#   b. on: each allowlisted route without a key (Piston runtimes and
#      execute; Judge0 create with wait and base64, GET by token,
#      languages, one language, statuses, about, config_info; native
#      submit, GET, SSE events, languages), by name and by uuid;
#   c. everything else under the prefix is 404 (list, batch, delete,
#      problems, audit, usage, metrics, workers, health), a key there
#      changes nothing, and DELETE is 404, not 405;
#   d. reads: another tenant's submission and the tenant's own keyed ones
#      are 404 under the prefix; with token_capability, the tenant's own are
#      readable by id (not another tenant's); a tenant with only
#      token_capability serves those GETs and nothing else;
#   e. callback_url and problem_id refused (403), nothing stored;
#      playground_max_queued 0 refuses (429); no playground with egress;
#   f. the audit: submission.created and quota.refused with the actor
#      anonymous:127.0.0.1, which the tenant reads with its key;
#   g. the per-address rate limit: a burst gets 429 with Retry-After while
#      the tenant's keyed clients are not limited by it; the tenant's own
#      rate bounds two client addresses together;
#   h. CORS as for the tenant: a listed origin is served, another refused;
#      the preflight grants only the allowlisted methods;
#   i. piston-client 1.0.2 (npm, unchanged) runs Python and C++ with stdin
#      through the playground (tests/js/piston_client_run.mjs);
#   j. disabling the tenant, or turning the playground off, makes it 404
#      within a second.
#
# Needs root (runsc, cgroups), Node.js and the npm clients of tests/js
# (tests/lib/npm.sh). Prints TAP; every process it starts is stopped on exit.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..41"
. tests/lib/tap.sh
check_detail() { echo "last: ${last_code:-} ${last_body:0:400}"; }
say() { printf '# %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid node; do
	command -v "$c" >/dev/null || bail "$c missing"
done
# shellcheck source=tests/lib/npm.sh
. tests/lib/npm.sh
npm_clients_ready || bail "the npm clients of tests/js could not be installed"

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup playground "${GAVEL_PLAYGROUND_KEEP_LOGS:-}"
G=$BUILD/gavel
PN=${TAG}_p # the playground tenant
QN=${TAG}_q # another tenant, keyed only
TN=${TAG}_t # token_capability only
for t in "$PN" "$QN" "$TN"; do
	"$G" tenant create "$t" >>"$TMP/ids" 2>>"$TMP/cli.log" || bail "gavel tenant create: $(cat "$TMP/cli.log")"
done
PID_T=$(grep -P "\t$PN\$" "$TMP/ids" | cut -f1)
KP=$("$G" key create --tenant "$PN" 2>>"$TMP/cli.log")
KQ=$("$G" key create --tenant "$QN" 2>>"$TMP/cli.log")
KT=$("$G" key create --tenant "$TN" 2>>"$TMP/cli.log")
[ -n "$KP" ] && [ -n "$KQ" ] && [ -n "$KT" ] && [ -n "$PID_T" ] || bail "gavel key create: $(cat "$TMP/cli.log")"
# Cancelled at exit: no later test's scheduler may pick up what is left.
cancel_left() {
	sql -c "UPDATE submissions SET status = 'cancelled', finished_at = now() WHERE status IN ('queued', 'running')
		AND tenant_id IN (SELECT id FROM tenants WHERE name IN ('$PN', '$QN', '$TN'))" >/dev/null 2>&1
	stack_cleanup
}
trap cancel_left EXIT
upd() { # TENANT KEY=VALUE...: gavel tenant update, then past the frontend's 1 s cache
	local t=$1
	shift
	local a=() kv
	for kv in "$@"; do a+=(--quota "$kv"); done
	"$G" tenant update "$t" "${a[@]}" >"$TMP/upd.log" 2>&1 || { say "$(cat "$TMP/upd.log")"; return 1; }
	sleep 1.2
}

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	GAVEL_SCHEDULER_NODE_HEARTBEAT_TIMEOUT=10s GAVEL_SCHEDULER_RECONCILE_INTERVAL=5s \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PID_SCHED=$!
PIDS+=("$PID_SCHED")
GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	stack_start_executor executor.log
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=90s GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend

# req METHOD PATH [curl args...]: sets last_code, last_body, last_headers
# (names lower-cased).
req() {
	local m=$1 p=$2
	shift 2
	last_body=$(curl -s -m 120 -X "$m" -D "$TMP/h" -o - -w '\n%{http_code}' "$@" "$B$p")
	last_code=${last_body##*$'\n'}
	last_body=${last_body%$'\n'*}
	last_headers=$(tr -d '\r' <"$TMP/h" 2>/dev/null | sed 's/^\([^:]*\):/\L\1:/')
}
hdr() { sed -n "s/^$1: //p" <<<"$last_headers" | head -n1; }
pj() { # EXPR [ARGS as sys.argv[1:]]
	local e=$1
	shift
	python3 -c "import json,sys,base64,re; d=json.loads(sys.stdin.read()); print($e)" "$@" <<<"$last_body" 2>/dev/null
}
code_is() { [ "$last_code" = "$1" ]; }
err_is() { code_is "$1" && [ "$(pj 'd["error"]["code"]')" = "$2" ]; }
# Judge0's routes answer errors other than 422 as Judge0 does: {"error": "text"}.
j0_err_is() { code_is "$1" && [ "$(pj 'isinstance(d["error"], str) and bool(re.search(sys.argv[1], d["error"]))' "$2")" = True ]; }
eq() { [ "$1" = "$2" ] || { say "got '$1', want '$2'"; return 1; }; }
J=(-H 'Content-Type: application/json')
PG=/playground/$PN

stack_wait_healthy 120 "$PID_EXEC" "$PID_SCHED"
ok "stack up (scheduler, executor, frontend), three tenants made with the CLI"

# ------------------------------------------------ (a) off by default
"$G" tenant show "$PN" >"$TMP/show.json" 2>&1
check "gavel tenant show: playground and token_capability false by default, the budgets listed" \
	python3 -c 'import json,sys; q=json.load(open(sys.argv[1]))["quota"]
assert q["playground"] is False and q["token_capability"] is False, q
assert (q["playground_rps"], q["playground_burst"], q["playground_max_queued"]) == (2, 10, 10), q' "$TMP/show.json"
req GET "$PG/statuses"
off_body=$last_body off_code=$last_code
req GET /playground/no_such_tenant_$TAG/statuses
check "off by default: 404 under the prefix, the same answer as a name that is no tenant's" \
	eval 'eq "$off_code" 404 && code_is 404 && eq "$off_body" "$last_body"'
req POST "$PG/api/v2/execute" "${J[@]}" --data-binary '{"language":"python","version":"*","files":[{"content":"print(1)"}]}'
check "off: Piston execute under the prefix is 404" code_is 404

# ------------------------------------------------ (b) on: each route
# The tenant's own rate, which also bounds its anonymous traffic together,
# high enough for the polls below; (g) lowers it.
upd "$PN" playground=true playground_rps=100 playground_burst=100 requests_per_second=1000 burst=1000 ||
	bail "tenant update failed"
allow_ok=1
for p in /api/v2/runtimes /languages /languages/71 /statuses /about /config_info /v1/languages; do
	req GET "$PG$p"
	if ! code_is 200 || ! pj 'len(d) > 0' | grep -q True; then
		allow_ok=0
		say "GET $PG$p: $last_code ${last_body:0:200}"
	fi
done
check "on: GET runtimes, languages, languages/71, statuses, about, config_info, v1/languages answer 200 without a key" \
	eq "$allow_ok" 1
req GET "/playground/$PID_T/statuses"
check "the tenant's uuid names it too" code_is 200

req POST "$PG/api/v2/execute" -H 'Content-Type: text/plain' \
	--data-binary '{"language":"python","version":"*","files":[{"content":"print(6*7)"}]}'
check "Piston execute without a key: 200, the run's stdout" \
	eval 'code_is 200 && eq "$(pj "d[\"run\"][\"stdout\"]")" 42'
req POST "$PG/submissions?wait=true&base64_encoded=true" "${J[@]}" \
	--data-binary "{\"language_id\":71,\"source_code\":\"$(printf 'print(input()*2)' | base64 -w0)\",\"stdin\":\"$(printf 'ab\n' | base64 -w0)\"}"
check "Judge0 create wait=true base64_encoded=true: 201, Accepted, stdout in base64" \
	eval 'code_is 201 && eq "$(pj "d[\"status\"][\"id\"]")" 3 && eq "$(pj "base64.b64decode(d[\"stdout\"]).decode()")" abab'
req POST "$PG/submissions" "${J[@]}" --data-binary '{"language_id":71,"source_code":"print(5)"}'
J0TOK=$(pj 'd["token"]')
check "Judge0 create without wait: 201 and a token" eval 'code_is 201 && [ -n "$J0TOK" ]'
for _ in $(seq 120); do
	req GET "$PG/submissions/$J0TOK"
	[ "$(pj 'd["status"]["id"] > 2')" = True ] && break
	sleep 0.5
done
check "Judge0 GET of its token under the prefix: 200, finished, stdout" \
	eval 'code_is 200 && eq "$(pj "d[\"status\"][\"id\"]")" 3 && eq "$(pj "d[\"stdout\"]")" 5'
req POST "$PG/v1/submissions?wait=true" "${J[@]}" \
	--data-binary '{"language":"python3","source":"print(int(input())+1)","tests":[{"input":"1\n","expected":"2\n"}]}'
NID=$(pj 'd["id"]')
check "native submit wait=true: 201, verdict AC" eval 'code_is 201 && eq "$(pj "d[\"verdict\"]")" AC'
req GET "$PG/v1/submissions/$NID"
check "native GET of its id: 200, the same submission" eval 'code_is 200 && eq "$(pj "d[\"id\"]")" "$NID"'
curl -s -N -m 20 "$B$PG/v1/submissions/$NID/events" >"$TMP/sse" 2>/dev/null
check "native SSE events under the prefix: the done event" grep -q '^event: done' "$TMP/sse"

# ------------------------------------------------ (c) nothing else
bad=""
while read -r m p; do
	req "$m" "$PG$p" "${J[@]}" --data-binary '{}'
	code_is 404 || bad="$bad $m $p=$last_code"
done <<EOF
GET /submissions
GET /submissions/batch?tokens=$J0TOK
POST /submissions/batch
DELETE /submissions/$J0TOK
GET /v1/audit
GET /v1/usage
GET /v1/problems
POST /v1/problems
GET /v1/health
GET /v1/openapi.json
GET /metrics
GET /workers
GET /playground/$PN/statuses
EOF
check "list, batch, delete, audit, usage, problems, health, openapi, metrics, workers: 404 under the prefix" \
	eval '[ -z "$bad" ] || { say "not 404:$bad"; false; }'
req GET "$PG/v1/audit" -H "X-Auth-Token: $KP"
check "the tenant's own key under the prefix opens nothing more (audit still 404)" code_is 404
req DELETE "$PG/submissions/$J0TOK" -H "X-Auth-Token: $KP"
r1=$last_code
req GET "$PG/submissions/$J0TOK"
check "DELETE of a token under the prefix: 404 (not 405), and the submission is still there" \
	eval 'eq "$r1" 404 && code_is 200'

# ------------------------------------------------ (d) whose submissions
req POST "/submissions?wait=true" -H "X-Auth-Token: $KQ" "${J[@]}" --data-binary '{"language_id":71,"source_code":"print(1)"}'
QTOK=$(pj 'd["token"]')
req POST "/submissions?wait=true" -H "X-Auth-Token: $KP" "${J[@]}" --data-binary '{"language_id":71,"source_code":"print(2)"}'
PTOK=$(pj 'd["token"]')
[ -n "$QTOK" ] && [ -n "$PTOK" ] || bail "keyed submissions failed: $last_code $last_body"
req GET "$PG/submissions/$QTOK"
c1=$last_code
req GET "$PG/v1/submissions/$QTOK"
check "another tenant's submission under this tenant's prefix: 404 (Judge0 and native)" \
	eval 'eq "$c1" 404 && code_is 404'
req GET "$PG/submissions/$PTOK"
c1=$last_code
req GET "$PG/v1/submissions/$PTOK/events"
check "token_capability off: the tenant's own keyed submission is 404 under the prefix (GET, events)" \
	eval 'eq "$c1" 404 && code_is 404'
upd "$PN" token_capability=true || bail "tenant update failed"
req GET "$PG/submissions/$PTOK"
c1=$last_code
req GET "$PG/submissions/$QTOK"
check "token_capability on: the tenant's keyed submission is readable by its token; another tenant's still 404" \
	eval 'eq "$c1" 200 && code_is 404'
upd "$PN" token_capability=false || bail "tenant update failed"
upd "$TN" token_capability=true || bail "tenant update failed"
req POST "/v1/submissions" -H "X-Auth-Token: $KT" "${J[@]}" \
	--data-binary '{"language":"python3","source":"print(3)","tests":[{"input":"","expected":"3\n"}]}'
TID=$(pj 'd["id"]')
req GET "/playground/$TN/v1/submissions/$TID"
c1=$last_code
req GET "/playground/$TN/submissions/$TID"
c2=$last_code
req GET "/playground/$TN/statuses"
c3=$last_code
req POST "/playground/$TN/submissions" "${J[@]}" --data-binary '{"language_id":71,"source_code":"print(1)"}'
check "token_capability only: GET by id works (native, Judge0); statuses and create are 404" \
	eval 'eq "$c1$c2$c3" 200200404 && code_is 404'

# ------------------------------------------------ (e) what anonymous may not do
count_pg() { sql -c "SELECT count(*) FROM submissions s JOIN tenants t ON t.id = s.tenant_id WHERE t.name = '$PN' AND s.playground"; }
before=$(count_pg)
req POST "$PG/submissions" "${J[@]}" --data-binary '{"language_id":71,"source_code":"print(1)","callback_url":"https://hooks.example/x"}'
c1=$last_code
req POST "$PG/v1/submissions" "${J[@]}" --data-binary '{"language":"python3","source":"print(1)","callback_url":"https://hooks.example/x"}'
c2=$last_code
req POST "$PG/v1/submissions" "${J[@]}" --data-binary '{"language":"python3","source":"print(1)","problem_id":"aaaaaaaaaaaaaaaaaaaaaa"}'
check "callback_url (Judge0, native) and problem_id refused with 403; nothing stored" \
	eval 'eq "$c1$c2" 403403 && err_is 403 forbidden && eq "$(count_pg)" "$before"'
upd "$PN" playground_max_queued=0 || bail "tenant update failed"
req POST "$PG/submissions" "${J[@]}" --data-binary '{"language_id":71,"source_code":"print(1)"}'
check "playground_max_queued=0: an anonymous Judge0 submission gets 429 (Judge0's error shape)" j0_err_is 429 'max_queued' 
req POST "/submissions" -H "X-Auth-Token: $KP" "${J[@]}" --data-binary '{"language_id":71,"source_code":"print(1)"}'
check "... while the tenant's keyed clients still submit (201)" code_is 201
upd "$PN" playground_max_queued=10 || bail "tenant update failed"
"$G" tenant update "$PN" --quota 'egress_policy={"mode":"allowlist","allow":["1.1.1.1:443"],"rate_kbit":1000}' \
	>"$TMP/eg.log" 2>&1
rc=$?
check "a playground tenant cannot be granted network egress (the CLI refuses)" \
	eval '[ $rc -ne 0 ] && grep -q playground "$TMP/eg.log"'

# ------------------------------------------------ (f) audit
actors=$(sql -c "SELECT DISTINCT a.actor FROM audit_log a WHERE a.tenant_id = '$PID_T'
	AND a.action = 'submission.created' AND a.object = '$J0TOK'")
check "submission.created of an anonymous submission: actor anonymous:127.0.0.1" eq "$actors" anonymous:127.0.0.1
refused=$(sql -c "SELECT count(*) FROM audit_log a WHERE a.tenant_id = '$PID_T' AND a.action = 'quota.refused'
	AND a.actor = 'anonymous:127.0.0.1' AND a.details->>'limit' = 'max_queued'")
check "quota.refused (max_queued) of the anonymous client: recorded with its actor" eval '[ "$refused" -ge 1 ]'
req GET "/v1/audit?action=submission.created&limit=1000" -H "X-Auth-Token: $KP"
check "the tenant reads the anonymous records with its key (GET /v1/audit)" \
	eval 'code_is 200 && pj "any(r[\"actor\"] == \"anonymous:127.0.0.1\" and r[\"object\"] == \"$J0TOK\" for r in d[\"records\"])" | grep -q True'
"$BUILD/gavel" audit verify --tenant "$PN" >"$TMP/verify.log" 2>&1
check "gavel audit verify: the tenant's chain with the anonymous records is intact" \
	grep -q "chain intact" "$TMP/verify.log"

# ------------------------------------------------ (g) rate limit per address
upd "$PN" playground_rps=1 playground_burst=3 || bail "tenant update failed"
codes=""
for _ in $(seq 10); do
	req GET "$PG/statuses"
	codes="$codes $last_code"
	[ "$last_code" = 429 ] && break
done
check "a burst from one address: 429 after the bucket's 3, with Retry-After and X-RateLimit-Limit 3" \
	eval 'code_is 429 && [ -n "$(hdr retry-after)" ] && eq "$(hdr x-ratelimit-limit)" 3 && j0_err_is 429 "request rate"'
say "codes:$codes"
req GET "/v1/submissions/$NID" -H "X-Auth-Token: $KP"
check "the tenant's keyed requests are not limited by the anonymous bucket (and read the anonymous submission)" \
	code_is 200
sleep 1.1
rl_refused=$(sql -c "SELECT count(*) FROM audit_log a WHERE a.tenant_id = '$PID_T' AND a.action = 'quota.refused'
	AND a.actor = 'anonymous:127.0.0.1' AND a.details->>'limit' = 'playground_rps'")
check "the 429 is audited (quota.refused, limit playground_rps, anonymous actor)" eval '[ "$rl_refused" -ge 1 ]'
# Two client addresses not used above (127.0.0.3 and 127.0.0.4, both
# loopback: their own buckets are full, whatever the burst above left in
# 127.0.0.1's), each with a bucket of 3: the first empties the tenant's 3,
# so the second is refused by the tenant's bucket while its own is still
# full.
upd "$PN" playground_rps=1 playground_burst=3 requests_per_second=1 burst=3 || bail "tenant update failed"
codes=""
for _ in 1 2 3; do
	req GET "$PG/statuses" --interface 127.0.0.3
	codes="$codes $last_code"
done
for _ in 1 2 3; do
	req GET "$PG/statuses" --interface 127.0.0.4
	codes="$codes $last_code"
	[ "$last_code" = 429 ] && break
done
say "codes:$codes"
check "the tenant's own requests_per_second and burst bound all anonymous clients together (429 for a second address)" \
	eval '[ "${codes:0:12}" = " 200 200 200" ] && code_is 429 && grep -q "this playground" <<<"$last_body"'
upd "$PN" requests_per_second=1000 burst=1000 || bail "tenant update failed"

# ------------------------------------------------ (h) CORS
upd "$PN" cors_origins=https://course.example || bail "tenant update failed"
req GET "$PG/statuses" -H 'Origin: https://course.example'
check "CORS: an origin the tenant lists is served, Access-Control-Allow-Origin set" \
	eval 'code_is 200 && eq "$(hdr access-control-allow-origin)" https://course.example'
req POST "$PG/submissions" "${J[@]}" -H 'Origin: https://evil.example' --data-binary '{"language_id":71,"source_code":"print(1)"}'
check "CORS: an origin the tenant does not list gets 403 (Judge0's error shape)" j0_err_is 403 'may not use' 
req OPTIONS "$PG/submissions" -H 'Origin: https://course.example' -H 'Access-Control-Request-Method: POST'
check "preflight under the prefix: 204 granting POST only (no list)" \
	eval 'code_is 204 && eq "$(hdr access-control-allow-methods)" POST'
req OPTIONS "/playground/no_such_tenant_$TAG/submissions" -H 'Origin: https://course.example' -H 'Access-Control-Request-Method: POST'
check "preflight for a name that is no tenant's: 404" code_is 404
upd "$PN" 'cors_origins=*' || bail "tenant update failed"

# ------------------------------------------------ (i) piston-client, unchanged
node tests/js/piston_client_run.mjs "$B$PG" >"$TMP/piston.out" 2>"$TMP/piston.err"
while read -r line; do say "piston-client: ${line:0:300}"; done <"$TMP/piston.out"
[ -s "$TMP/piston.err" ] && say "piston-client stderr: $(head -c 300 "$TMP/piston.err")"
pcall() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["call"] == sys.argv[2]:
        r = d["result"]
        print(eval(sys.argv[3]))' "$TMP/piston.out" "$1" "$2" 2>/dev/null; }
check "piston-client runtimes(): a list with python and c++" \
	eq "$(pcall runtimes 'sorted({x["language"] for x in r} & {"python", "c++"})')" "['c++', 'python']"
check "piston-client execute('python', 'print(\"Hello World!\")'): stdout Hello World!" \
	eq "$(pcall python 'repr(r["run"]["stdout"])')" "'Hello World!\\n'"
check "piston-client execute('c++', code, {stdin}): compiled, reads stdin, stdout 42" \
	eq "$(pcall c++ 'repr((r["run"]["stdout"], r["run"]["code"]))')" "('42\\n', 0)"

# ------------------------------------------------ (j) off again
"$G" tenant disable "$PN" >/dev/null 2>&1
sleep 1.2
req GET "$PG/statuses"
check "a disabled tenant's playground: 404 within a second" code_is 404
"$G" tenant enable "$PN" >/dev/null 2>&1
upd "$PN" playground=false || bail "tenant update failed"
req GET "$PG/submissions/$J0TOK"
c1=$last_code
req GET "$PG/api/v2/runtimes"
check "playground turned off: 404 within a second, even for its own tokens" eval 'eq "$c1" 404 && code_is 404'

[ "$fails" -eq 0 ]
