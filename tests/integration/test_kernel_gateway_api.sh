#!/usr/bin/env bash
# Jupyter's kernel gateway API of gavel-frontend (frontend/kernels.c,
# frontend/kernel_channels.c; executor/kernels/README.md has the design),
# against the real stack without an executor: PostgreSQL, Redis, the
# frontend as its own database role and Redis user. The kernels stay
# queued, or are set running by hand, and the kernel is played by the
# test: it reads gavel:kin:<kid> (BLPOP) and writes gavel:kout:<kid>
# (PUBLISH) with redis-cli. Checks the REST shapes Jupyter's clients
# validate, auth (Authorization: token, ?token= on the channels only,
# another tenant's kernel 404), the kernel budgets (max_kernels and
# kernels_per_minute: 403, audited), the row and its audit record, delete,
# interrupt and restart of a queued and of a running kernel, and the
# WebSockets with the `ws` npm client (tests/js/kernel_ws_client.mjs): both
# framings, client messages as kin elements, kout messages to the right
# connections, and the refusals (1007, 1008, 1009, 404 before upgrading).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
. tests/lib/tap.sh
. tests/lib/npm.sh
. tests/lib/stack.sh
echo "1..47"
npm_clients_ready || bail "the npm clients of tests/js could not be installed"
command -v node >/dev/null || bail "node is missing"

stack_setup kernelgw
sfx=$$_$RANDOM
TA=kgw_a_$sfx TB=kgw_b_$sfx TC=kgw_c_$sfx
cleanup_rows() {
	sql -c "UPDATE submissions SET status = 'cancelled', finished_at = now() WHERE status IN ('queued', 'running')
		AND tenant_id IN (SELECT id FROM tenants WHERE name IN ('$TA', '$TB', '$TC'))" >/dev/null 2>&1
}
trap 'cleanup_rows; stack_cleanup' EXIT

for t in "$TA" "$TB" "$TC"; do
	"$BUILD/gavel" tenant create "$t" >/dev/null 2>&1 || bail "gavel tenant create $t failed"
done
KA=$("$BUILD/gavel" key create --tenant "$TA" 2>/dev/null)
KB=$("$BUILD/gavel" key create --tenant "$TB" 2>/dev/null)
KC=$("$BUILD/gavel" key create --tenant "$TC" 2>/dev/null)
[ -n "$KA" ] && [ -n "$KB" ] && [ -n "$KC" ] || bail "gavel key create failed"
"$BUILD/gavel" tenant update "$TC" --quota allowed_languages=cpp >/dev/null 2>&1 || bail "tenant update failed"
TIDA=$(sql -c "SELECT id FROM tenants WHERE name = '$TA'")
sql -c "UPDATE tenant_quotas SET max_kernels = 2, kernels_per_minute = 100, kernel_idle_s = 600,
	kernel_lifetime_s = 7200, kernel_memory_mb = 512, kernel_cpu_pct = 50 WHERE tenant_id = '$TIDA'" >/dev/null ||
	bail "kernel quota update failed"
sql -c "UPDATE tenant_quotas SET kernels_per_minute = 1 WHERE tenant_id = (SELECT id FROM tenants WHERE name = '$TB')" \
	>/dev/null || bail "kernel quota update failed"

GAVEL_FRONTEND_THREADS=1 stack_start_frontend
for _ in $(seq 50); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/languages")" = 200 ] && break
	sleep 0.1
done

# req METHOD PATH [curl args...]: last_code, last_body, last_headers.
req() {
	local m=$1 p=$2
	shift 2
	last_body=$(curl -s -m 40 -X "$m" -D "$TMP/h" -o - -w '\n%{http_code}' "$@" "$B$p")
	last_code=${last_body##*$'\n'}
	last_body=${last_body%$'\n'*}
	last_headers=$(tr -d '\r' <"$TMP/h" | sed 's/^\([^:]*\):/\L\1:/')
}
hdr() { sed -n "s/^$1: //p" <<<"$last_headers" | head -n1; }
check_detail() { echo "got: ${last_code:-} ${last_body:0:300}"; }
# py EXPR: evaluates a Python expression over j (last_body as JSON).
py() { python3 -c "import json,sys,re; j=json.loads(sys.argv[1]); sys.exit(0 if ($1) else 1)" "$last_body" 2>/dev/null; }
TOK=(-H "Authorization: token $KA")
MODEL='set(j)=={"id","name","last_activity","execution_state","connections"} and re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", j["id"]) and j["name"]=="python3" and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", j["last_activity"]) and isinstance(j["connections"], int)'

# 1-4: kernel specs.
req GET /api/kernelspecs "${TOK[@]}"
check "GET /api/kernelspecs (Authorization: token): python3 with every field @jupyterlab/services reads" py \
	'j["default"]=="python3" and set(j["kernelspecs"])=={"python3"} and j["kernelspecs"]["python3"]["name"]=="python3" and set(j["kernelspecs"]["python3"]["spec"])=={"argv","env","display_name","language","interrupt_mode","metadata"} and j["kernelspecs"]["python3"]["spec"]["language"]=="python" and j["kernelspecs"]["python3"]["resources"]=={}'
req GET /api/kernelspecs/python3 -H "X-Auth-Token: $KA"
s1=$last_code
req GET /api/kernelspecs/python4 "${TOK[@]}"
check "GET /api/kernelspecs/python3 200; python4: 404 in Jupyter's error shape" \
	eval '[ "$s1" = 200 ] && [ "$last_code" = 404 ] && py "j==dict(message=\"Kernel spec python4 not found\", reason=None)"'
req GET /api/kernels
check "no key: 401, {message, reason}" eval '[ "$last_code" = 401 ] && py "set(j)=={\"message\",\"reason\"}"'
req GET /api/kernelspecs -H "Authorization: token $KC"
c1=$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["kernelspecs"]))' <<<"$last_body")
req POST /api/kernels -H "Authorization: token $KC"
check "a tenant without python3 in allowed_languages: no kernel spec, POST 404" \
	eval '[ "$c1" = 0 ] && [ "$last_code" = 404 ] && py "j[\"message\"]==\"No such kernel named python3\""'

# 5-10: creation.
req POST /api/kernels "${TOK[@]}" -H 'Content-Type: text/plain' --data-binary '{"name":"python3","env":{"SECRET":"x"}}'
K1=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("id",""))' <<<"$last_body" 2>/dev/null)
check "POST /api/kernels (text/plain, env): 201, Location, the model, starting" \
	eval '[ "$last_code" = 201 ] && [ "$(hdr location)" = "/api/kernels/$K1" ] && py "$MODEL and j[\"execution_state\"]==\"starting\" and j[\"connections\"]==0"'
row=$(sql -c "SELECT kind, language, status, octet_length(source), request::text, api IS NULL FROM submissions WHERE id = '$K1' AND tenant_id = '$TIDA'")
check "the row: kind kernel, python3, queued, no source, no api, the tenant's kernel limits copied" python3 -c '
import json, sys
kind, lang, status, src, req, noapi = sys.argv[1].split("|")
r = json.loads(req)
sys.exit(0 if kind == "kernel" and lang == "python3" and status == "queued" and src == "0" and noapi == "t" and
	 r == {"kind": "kernel", "kernel": {"name": "python3", "lifetime_s": 7200, "idle_s": 600, "memory_mb": 512, "cpu_pct": 50}} else 1)' "$row"
aud=$(sql -c "SELECT actor || ' ' || details::text FROM audit_log WHERE tenant_id = '$TIDA' AND action = 'kernel.created' AND object = '$K1'")
check "audit: kernel.created by the key, with the kernel's limits" \
	eval 'grep -q "^key:" <<<"$aud" && grep -q "\"api\": \"jupyter\"" <<<"$aud" && grep -q "\"idle_s\": 600" <<<"$aud"'
check "enqueued like a submission (gavel:tq:<tenant>)" eval 'rc LRANGE "gavel:tq:$TIDA" 0 -1 | grep -qx "$K1"'
req POST /api/kernels "${TOK[@]}"
K2=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("id",""))' <<<"$last_body" 2>/dev/null)
check "POST /api/kernels with no body: the default spec" eval '[ "$last_code" = 201 ] && py "$MODEL"'
req GET "/api/kernels?_=1700000000000" "${TOK[@]}"
check "GET /api/kernels (a cache buster ignored): both kernels, as models" \
	py "len(j)==2 and all(($MODEL) for j in j) and {k['id'] for k in j}=={'$K1','$K2'}"

# 11-16: one kernel; other tenants; quotas.
req GET "/api/kernels/$K1" "${TOK[@]}"
check "GET /api/kernels/<id>: the model" py "$MODEL and j['id']=='$K1'"
req GET "/api/kernels/$K1" -H "Authorization: token $KB"
check "another tenant's kernel: 404 Kernel does not exist" py "j=={'message':'Kernel does not exist: $K1','reason':None}"
req GET /api/kernels/not-a-kernel "${TOK[@]}"
check "an id that is no kernel id: 404" eval '[ "$last_code" = 404 ]'
req GET "/v1/submissions/$K1" -H "X-Auth-Token: $KA"
s1=$last_code
req GET "/submissions/$K1" -H "X-Auth-Token: $KA"
s2=$last_code
req GET "/submissions?per_page=100" -H "X-Auth-Token: $KA"
check "a kernel is no submission of the other APIs (native, Judge0 GET and list)" \
	eval '[ "$s1" = 404 ] && [ "$s2" = 404 ] && ! grep -q "$K1" <<<"$last_body"'
req POST /api/kernels "${TOK[@]}"
n3=$(sql -c "SELECT count(*) FROM audit_log WHERE tenant_id = '$TIDA' AND action = 'quota.refused' AND details->>'limit' = 'max_kernels'")
check "max_kernels (2) reached: 403, quota.refused audited" eval '[ "$last_code" = 403 ] && py "\"max_kernels\" in j[\"message\"]" && [ "${n3:-0}" -ge 1 ]'
req POST /api/kernels -H "Authorization: token $KB"
b1=$last_code
req POST /api/kernels -H "Authorization: token $KB"
check "kernels_per_minute (1): the second creation in a minute is 403" \
	eval '[ "$b1" = 201 ] && [ "$last_code" = 403 ] && py "\"kernels_per_minute\" in j[\"message\"]"'

# 17-18: interrupt and restart of a queued kernel.
req POST "/api/kernels/$K1/interrupt" "${TOK[@]}"
s1=$last_code
req POST "/api/kernels/$K1/restart" "${TOK[@]}"
check "a queued kernel: interrupt 204, restart 200 with the model" eval '[ "$s1" = 204 ] && [ "$last_code" = 200 ] && py "$MODEL"'
req POST "/api/kernels/$K1/restart" -H "Authorization: token $KB"
check "another tenant's restart: 404" eval '[ "$last_code" = 404 ]'

# 19-42: the WebSockets (23 checks from the node client).
req GET "/api/kernels/$K1/channels" "${TOK[@]}"
check "channels without a WebSocket handshake: 400" eval '[ "$last_code" = 400 ]'
# The test plays a running kernel, which has its model in Redis (the
# executor keeps it while the kernel lives; without it, and with its list
# empty, a close or ping is for an ended kernel and dropped).
rc HSET "gavel:kstate:$K1" execution_state idle connections 0 >/dev/null
BASE=$B KEY_A=$KA KEY_B=$KB KID=$K1 KID2=$K2 ROOT=$ROOT node tests/js/kernel_ws_client.mjs >"$TMP/ws.out" 2>&1
rc DEL "gavel:kstate:$K1" >/dev/null
nws=0
while IFS= read -r line; do
	case "$line" in
	"PASS "*) ok "ws: ${line#PASS }"; nws=$((nws + 1)) ;;
	"FAIL "*) notok "ws: ${line#FAIL }"; nws=$((nws + 1)) ;;
	*) echo "# $line" ;;
	esac
done <"$TMP/ws.out"
for ((; nws < 23; nws++)); do notok "ws: a check the client did not report"; done

# 43: delete a queued kernel.
req DELETE "/api/kernels/$K1" "${TOK[@]}"
d1=$last_code
req GET "/api/kernels/$K1" "${TOK[@]}"
res=$(sql -c "SELECT status, result->'kernel'->>'reason' FROM submissions WHERE id = '$K1'")
check "DELETE of a queued kernel: 204, then 404; the row done, reason client" \
	eval '[ "$d1" = 204 ] && [ "$last_code" = 404 ] && [ "$res" = "done|client" ]'

# 44-47: a running kernel (set by hand; the test answers as its executor).
sql -c "UPDATE submissions SET status = 'running' WHERE id = '$K2'" >/dev/null
rc DEL "gavel:kin:$K2" >/dev/null
rc HSET "gavel:kstate:$K2" execution_state idle last_activity_ms 1700000000000 connections 2 >/dev/null
req GET "/api/kernels/$K2" "${TOK[@]}"
check "a running kernel's model joins gavel:kstate (idle, its last activity, 2 connections)" \
	py "$MODEL and j['execution_state']=='idle' and j['connections']==2 and j['last_activity']=='2023-11-14T22:13:20.000000Z'"
req POST "/api/kernels/$K2/interrupt" "${TOK[@]}"
el=$(rc BLPOP "gavel:kin:$K2" 5 | tail -n +2)
check "interrupt of a running kernel: 204 and interrupt pushed" eval '[ "$last_code" = 204 ] && [ "$el" = interrupt ]'
numsub() { rc PUBSUB NUMSUB "gavel:kout:$K2" | tail -n1; }
curl -s -m 40 -o "$TMP/restart.body" -w '%{http_code}' -X POST "${TOK[@]}" "$B/api/kernels/$K2/restart" >"$TMP/restart.code" &
cpid=$!
el=$(rc BLPOP "gavel:kin:$K2" 10 | tail -n +2)
for _ in $(seq 50); do [ "$(numsub)" -ge 1 ] && break; sleep 0.1; done
printf 'restarted\n' | rc -x PUBLISH "gavel:kout:$K2" >/dev/null
wait $cpid
check "restart of a running kernel: restart pushed, 200 with the model once restarted is published" \
	eval '[ "$el" = restart ] && [ "$(cat "$TMP/restart.code")" = 200 ]'
curl -s -m 40 -o /dev/null -w '%{http_code}' -X DELETE "${TOK[@]}" "$B/api/kernels/$K2" >"$TMP/delete.code" &
cpid=$!
el=$(rc BLPOP "gavel:kin:$K2" 10 | tail -n +2)
for _ in $(seq 50); do [ "$(numsub)" -ge 1 ] && break; sleep 0.1; done
t0=$SECONDS
printf 'gone client\n' | rc -x PUBLISH "gavel:kout:$K2" >/dev/null
wait $cpid
check "DELETE of a running kernel: stop client pushed, 204 when it is gone" \
	eval '[ "$el" = "stop client" ] && [ "$(cat "$TMP/delete.code")" = 204 ] && [ $((SECONDS - t0)) -lt 8 ]'
[ "$fails" -eq 0 ]
