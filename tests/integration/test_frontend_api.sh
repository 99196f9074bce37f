#!/usr/bin/env bash
# gavel-frontend against the harness's PostgreSQL and Redis: auth, errors,
# limits, tenant isolation, the native, Judge0 and Piston APIs, the OpenAPI
# document's routes, and the enqueue in Redis (or a verdict when an
# executor and scheduler run). TAP output; the frontend is stopped on exit.
set -u
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/redis.sh
. tests/lib/redis.sh
BUILD=${BUILD:-build}
: "${GAVEL_DATABASE_URL:?run under tests/run.sh (needs the harness env)}"
: "${GAVEL_FRONTEND_DATABASE_URL:?}" "${GAVEL_REDIS_URL:?}"
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "# $2"; }
check() { # name condition-command...
	local name=$1; shift
	if "$@"; then ok "$name"; else notok "$name" "got: ${last_code:-} ${last_body:0:300}"; fi
}
echo "1..65"
tmp=$(mktemp -d /tmp/gavel-fe-test.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

"$BUILD/gavel" migrate --dir deploy/sql >"$tmp/migrate.log" 2>&1 || { echo "Bail out! migrate failed: $(tail -n3 "$tmp/migrate.log")"; exit 1; }
sfx=$$_$RANDOM
"$BUILD/gavel" tenant create "fe_a_$sfx" >/dev/null 2>&1 && "$BUILD/gavel" tenant create "fe_b_$sfx" >/dev/null 2>&1 ||
	{ echo "Bail out! gavel tenant create failed"; exit 1; }
KA=$("$BUILD/gavel" key create --tenant "fe_a_$sfx" 2>/dev/null)
KB=$("$BUILD/gavel" key create --tenant "fe_b_$sfx" 2>/dev/null)
[ -n "$KA" ] && [ -n "$KB" ] || { echo "Bail out! gavel key create failed"; exit 1; }

# /metrics lists tenant ids: on the API port only with this token.
MT=mt_$sfx
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_MAX_BODY_SIZE=64k GAVEL_FRONTEND_WAIT_TIMEOUT=2s \
	GAVEL_FRONTEND_METRICS_TOKEN=$MT \
	env -u GAVEL_DATABASE_URL GAVEL_DATABASE_SERVICE_URL="$GAVEL_FRONTEND_DATABASE_URL" \
		GAVEL_REDIS_URL="${GAVEL_REDIS_URL_FRONTEND:-$GAVEL_REDIS_URL}" \
	"$BUILD/gavel-frontend" --port 0 --ready-fd 3 3>"$tmp/port" >"$tmp/fe.log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
P=$(head -n1 "$tmp/port")
[ -n "$P" ] || { echo "Bail out! gavel-frontend did not start: $(tail -n5 "$tmp/fe.log")"; exit 1; }
B=http://127.0.0.1:$P
# wait until both backends are connected
for _ in $(seq 50); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/health")" = 200 ] && break
	sleep 0.1
done

# req METHOD PATH [curl args...]: sets last_code and last_body
req() {
	local m=$1 p=$2; shift 2
	last_body=$(curl -s -m 10 -X "$m" -o - -w '\n%{http_code}' "$@" "$B$p")
	last_code=${last_body##*$'\n'}
	last_body=${last_body%$'\n'*}
}
code_is() { [ "$last_code" = "$1" ]; }
body_has() { grep -q -- "$1" <<<"$last_body"; }
jq_() { python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)" <<<"$last_body" 2>/dev/null; }
err_is() { code_is "$1" && [ "$(jq_ 'd["error"]["code"]')" = "$2" ]; }
A=(-H "X-Auth-Token: $KA")
Bk=(-H "Authorization: Bearer $KB")

req GET /v1/submissions/aaaaaaaaaaaaaaaaaaaaaa
check "no key -> 401 with an error object" err_is 401 unauthorized
req GET /v1/submissions/aaaaaaaaaaaaaaaaaaaaaa -H "X-Auth-Token: gv_notakey"
check "malformed key -> 401" err_is 401 unauthorized
req GET /v1/submissions/aaaaaaaaaaaaaaaaaaaaaa -H "X-Auth-Token: gv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
check "unknown key -> 401" err_is 401 unauthorized
req POST /v1/submissions "${A[@]}" -d '{"language": "python3", "source": '
check "malformed JSON -> 400 invalid_json" err_is 400 invalid_json
check "malformed JSON message says where" body_has "line"
head -c 70000 /dev/zero | tr '\0' 'x' >"$tmp/big"
req POST /v1/submissions "${A[@]}" --data-binary @"$tmp/big"
check "oversized body -> 413" code_is 413
# Parsing edges an attacker leans on (issue: hardening).
req GET "/v1/submissions/aaaaaaaaaaaaaaaaaaaaaa?api_key=${KA}%00junk"
check "a query key followed by %00 and junk -> 400, not authenticated" err_is 400 invalid_request
# raw_status HEAD_PY_BYTES...: sends the heads (Python bytes literals)
# on one connection and prints the status code of each answer.
raw_status() {
	python3 - "$P" "$@" <<-'PY'
	import ast, re, socket, sys
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
	s.sendall(b"".join(ast.literal_eval(a) for a in sys.argv[2:]))
	got = b""
	try:
	    while True:
	        d = s.recv(65536)
	        if not d:
	            break
	        got += d
	except socket.timeout:
	    pass
	print(" ".join(m.decode() for m in re.findall(rb"HTTP/1\.1 (\d{3})", got)))
	PY
}
got=$(raw_status "b'GET /v1/submissions/aaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\\r\\nHost: x\\r\\nX-Auth-Token: $KA\\x00junk\\r\\n\\r\\n'")
check "a header key followed by a NUL and junk -> 400, not authenticated (got $got)" [ "$got" = 400 ]
got=$(raw_status "b'GET /v1/health HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'" \
	"b'GET /v1/submissions/aaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\\r\\nHost: x\\r\\nX-Auth-Token: $KA\\x00junk\\r\\n\\r\\n'")
check "the same pipelined behind another request -> 400 (got $got)" [ "$got" = "200 400" ]
# API keys in the query string: only the SSE stream takes one, only for a
# tenant that allows it (allow_query_key, off by default).
req GET "/v1/submissions/aaaaaaaaaaaaaaaaaaaaaa?api_key=$KA"
check "a query key on a route other than the SSE stream -> 401" err_is 401 unauthorized
req GET "/v1/submissions/aaaaaaaaaaaaaaaaaaaaaa/events?api_key=$KA"
check "a query key on the SSE stream of a tenant that does not allow it -> 401" err_is 401 unauthorized
"$BUILD/gavel" tenant update "fe_a_$sfx" --quota allow_query_key=true >/dev/null 2>&1
sleep 1.1 # the frontends' key cache holds a quota for at most 1 s
req GET "/v1/submissions/aaaaaaaaaaaaaaaaaaaaaa/events?api_key=$KA"
check "... and once the tenant allows it, the key is taken (404: no such submission)" err_is 404 not_found
req POST "/v1/submissions?api_key=$KA" -d '{"language":"python3","source":"x"}'
check "... but never on another route, whatever the tenant allows -> 401" err_is 401 unauthorized
"$BUILD/gavel" tenant update "fe_a_$sfx" --quota allow_query_key=false >/dev/null 2>&1
req POST /v1/submissions "${A[@]}" -H 'Content-Length: 35' -H 'Content-Length: 5' \
	--data-binary '{"language":"python3","source":"x"}'
check "two Content-Length headers -> 400" err_is 400 invalid_request
for u in gopher://127.0.0.1:70/x file:///etc/passwd 'http://' 'http://a b/'; do
	req POST /v1/submissions "${A[@]}" -d "{\"language\":\"python3\",\"source\":\"x\",\"callback_url\":\"$u\"}"
	err_is 400 invalid_request || break
done
check "callback_url other than http(s) with a host -> 400 at submit ($u)" err_is 400 invalid_request
req GET "/submissions?page=99999999999999999999&per_page=-99999999999999999999" "${A[@]}"
check "Judge0 list: page past long's range is clamped (no current_page -1)" \
	[ "$last_code:$(jq_ 'd["meta"]["current_page"] >= 1')" = "200:True" ]
req POST /v1/submissions "${A[@]}" -d '{"language":"cobol","source":"x"}'
check "unknown language -> 422 unknown_language" err_is 422 unknown_language
req POST /v1/submissions "${A[@]}" -d '{"language":"python3","source":"x","stdn":"1"}'
check "unknown field -> 400 naming it" body_has "stdn"
req POST /v1/submissions "${A[@]}" -d '{"language":"python3","source":"x","limits":{"time_ms":999999}}'
check "limit above the language maximum -> 422" err_is 422 limit_exceeded
req DELETE /v1/languages
check "wrong method -> 405 JSON" err_is 405 method_not_allowed
req GET /nope
check "unknown route -> 404 JSON" err_is 404 not_found

req POST /v1/submissions "${A[@]}" -d '{"language":"python3","source":"print(int(input())*2)","tests":[{"input":"2\n","expected":"4\n"}]}'
check "native create -> 201 queued" code_is 201
SID=$(jq_ 'd["id"]')
check "id is >= 128 bits of base64url" grep -Eq '^[A-Za-z0-9_-]{22,}$' <<<"$SID"
req GET "/v1/submissions/$SID" "${A[@]}"
check "native get by owner -> 200" code_is 200
check "native get shows status" body_has '"status"'
req GET "/v1/submissions/$SID" "${Bk[@]}"
other_body=$last_body
req GET /v1/submissions/AAAAAAAAAAAAAAAAAAAAAA "${Bk[@]}"
check "another tenant's id -> 404 exactly as a missing one" [ "$last_code:$last_body" = "404:$other_body" ]
tid=$(psql "$GAVEL_DATABASE_URL" -XAtc "SELECT tenant_id FROM submissions WHERE id = '$SID'")
if grep -qx "$SID" <(redis_cli "$GAVEL_REDIS_URL" LRANGE "gavel:tq:$tid" 0 -1); then
	ok "queued in Redis (gavel:tq:<tenant>)"
else
	# Seen once in CI: say whether the enqueue failed or something (a
	# scheduler another test left running) took it.
	notok "queued in Redis (gavel:tq:<tenant>)" \
		"tq holds $(redis_cli "$GAVEL_REDIS_URL" LLEN "gavel:tq:$tid"); frontend: $(grep -m1 'enqueue' "$tmp/fe.log"); schedulers: $(pgrep -c gavel-scheduler); redis: $(redis_cli "$GAVEL_REDIS_URL" INFO memory | grep -m1 '^used_memory_human' | tr -d '\r')"
fi
check "tenant in gavel:backlog" grep -qx "$tid" <(redis_cli "$GAVEL_REDIS_URL" SMEMBERS gavel:backlog)
check "request stored as a job spec" grep -q '"tests"' <(psql "$GAVEL_DATABASE_URL" -XAtc "SELECT request::text FROM submissions WHERE id = '$SID'")

req POST "/v1/submissions?wait=true" "${A[@]}" -d '{"language":"python3","source":"print(1)"}'
if [ -x "$BUILD/gavel-executor" ] && [ -x "$BUILD/gavel-scheduler" ] && [ -n "${GAVEL_FE_FULL:-}" ]; then
	check "wait=true -> finished result" code_is 201
else
	check "wait=true without executors -> 202 after the bounded wait" code_is 202
fi

# Judge0
req POST "/submissions?base64_encoded=false&wait=false" "${A[@]}" -d '{"language_id":"71","source_code":"print(input())","stdin":"hi","expected_output":null,"cpu_time_limit":"1.5"}'
check "judge0 create with numbers as strings and nulls -> 201 token" code_is 201
T1=$(jq_ 'd["token"]')
req GET "/submissions/$T1" "${A[@]}"
check "judge0 get: default fields, In Queue" [ "$(jq_ 'd["status"]["id"], sorted(d.keys())')" = "1 ['compile_output', 'memory', 'message', 'status', 'stderr', 'stdout', 'time', 'token']" ]
req GET "/submissions/$T1?fields=token,stdin,source_code,cpu_time_limit&base64_encoded=true" "${A[@]}"
check "judge0 fields + base64 out" [ "$(jq_ 'd["stdin"], d["source_code"], d["cpu_time_limit"]')" = "aGk= cHJpbnQoaW5wdXQoKSk= 1.5" ]
req POST "/submissions?base64_encoded=true" "${A[@]}" -d '{"language_id":71,"source_code":"cHJpbnQoMSk=","stdin":"Mg=="}'
check "judge0 base64 in -> 201" code_is 201
T2=$(jq_ 'd["token"]')
req GET "/submissions/$T2?fields=source_code" "${A[@]}"
check "judge0 base64 decoded on the way in" [ "$(jq_ 'd["source_code"]')" = "print(1)" ]
# Any bytes in (NUL, 0xff): kept exactly, in the spec's _b64 forms.
req POST "/submissions?base64_encoded=true" "${A[@]}" -d '{"language_id":71,"source_code":"cHJpbnQoMSk=","stdin":"AP8KAA==","expected_output":"/wA="}'
check "judge0 base64 stdin and expected_output with NUL and 0xff -> 201" code_is 201
TBY=$(jq_ 'd["token"]')
req GET "/submissions/$TBY?base64_encoded=true&fields=stdin,expected_output" "${A[@]}"
check "judge0 the same bytes back, exactly" [ "$(jq_ 'd["stdin"], d["expected_output"]')" = "AP8KAA== /wA=" ]
req POST /v1/submissions "${A[@]}" -d '{"language":"python3","source":"x","stdin_b64":"AP8K"}'
check "native stdin_b64 -> 201, stored as stdin_b64" \
	[ "$last_code $(psql "$GAVEL_DATABASE_URL" -XAtc "SELECT request->>'stdin_b64' FROM submissions WHERE id = '$(jq_ 'd["id"]')'")" = "201 AP8K" ]
req POST /v1/submissions "${A[@]}" -d '{"language":"python3","source":"x","stdin":"a","stdin_b64":"AP8K"}'
check "native stdin and stdin_b64 together -> 400" err_is 400 invalid_request
req POST /submissions "${A[@]}" -d '{"language_id":9999,"source_code":"x"}'
check "judge0 unknown language_id -> 422 in Judge0's per-field shape" \
	[ "$last_code $(jq_ 'list(d), d["language_id"]')" = "422 ['language_id'] [\"language with id 9999 doesn't exist\"]" ]
req GET /submissions/AAAAAAAAAAAAAAAAAAAAAA "${A[@]}"
check "judge0 unknown token -> 404 {\"error\": ...} as Judge0" [ "$last_code $(jq_ 'list(d), isinstance(d["error"], str)')" = "404 ['error'] True" ]
req GET /submissions/AAAAAAAAAAAAAAAAAAAAAA
check "judge0 without a key -> 401 {\"error\": ...}" [ "$last_code $(jq_ 'list(d), isinstance(d["error"], str)')" = "401 ['error'] True" ]
req POST /submissions/batch "${A[@]}" -d '{"submissions":[{"language_id":71,"source_code":"print(1)"},{"language_id":9999,"source_code":"x"}]}'
check "judge0 batch create: token, and the invalid item's errors per field in its place" [ "$(jq_ '"token" in d[0], list(d[1])')" = "True ['language_id']" ]
TB=$(jq_ 'd[0]["token"]')
# config_info advertises what submit takes: without a key the least
# language maximum, with one the tenant's ceilings too (the defaults: 10 s
# CPU, 20 s wall, 512 MB, 1024 KB output).
req GET /config_info
check "judge0 config_info without a key: the languages' least maxima" \
	[ "$(jq_ 'd["max_cpu_time_limit"], d["max_wall_time_limit"], d["max_memory_limit"], d["max_max_file_size"]')" = "20.0 60.0 2097152 262144" ]
req GET /config_info "${A[@]}"
check "judge0 config_info with a key: the tenant's ceilings" \
	[ "$(jq_ 'd["max_cpu_time_limit"], d["max_wall_time_limit"], d["max_memory_limit"], d["max_max_file_size"]')" = "10.0 20.0 524288 1024" ]
cfg=$last_body
j0_limits_body() { # config_info JSON, field to raise ("" none), step
	python3 - "$@" <<-'PY'
		import json, sys
		c, field, step = json.loads(sys.argv[1]), sys.argv[2], float(sys.argv[3])
		b = {"language_id": 71, "source_code": "print(1)"}
		for f, m in (("cpu_time_limit", "max_cpu_time_limit"), ("wall_time_limit", "max_wall_time_limit"),
		             ("memory_limit", "max_memory_limit"), ("max_file_size", "max_max_file_size"),
		             ("max_processes_and_or_threads", "max_max_processes_and_or_threads"),
		             ("cpu_extra_time", "max_cpu_extra_time"), ("number_of_runs", "max_number_of_runs")):
		    b[f] = c[m] + (step if f == field else 0)
		    if isinstance(c[m], int) and f == field:
		        b[f] = int(b[f])
		print(json.dumps(b))
	PY
}
req POST /submissions "${A[@]}" -d "$(j0_limits_body "$cfg" "" 0)"
check "judge0 every config_info maximum at once -> 201" code_is 201
bad_limits=
for fs in cpu_time_limit:0.001 wall_time_limit:0.001 memory_limit:1 max_file_size:1 max_processes_and_or_threads:1 \
	cpu_extra_time:0.001 number_of_runs:1; do
	f=${fs%%:*}
	req POST /submissions "${A[@]}" -d "$(j0_limits_body "$cfg" "$f" "${fs#*:}")"
	[ "$last_code $(jq_ 'list(d), d[list(d)[0]][0].startswith("must be less than or equal to ")')" = "422 ['$f'] True" ] ||
		bad_limits="$bad_limits $f:$last_code:${last_body:0:120}"
done
check "judge0 each maximum + one step -> 422 naming that field, never lowered${bad_limits:+ (got$bad_limits)}" [ -z "$bad_limits" ]
# /workers in sandbox slots: available = idle + working + paused, from the
# executors' heartbeats (a live node and one whose heartbeat is an hour old).
now=$(redis_cli "$GAVEL_REDIS_URL" TIME | head -n1)
req GET /workers
w0=$last_body
redis_cli "$GAVEL_REDIS_URL" SADD gavel:executors "fe-live-$sfx" "fe-stale-$sfx" >/dev/null
redis_cli "$GAVEL_REDIS_URL" HSET "gavel:exec:fe-live-$sfx" capacity 3 burst 1 running 2 heartbeat_ms "${now}000" >/dev/null
redis_cli "$GAVEL_REDIS_URL" HSET "gavel:exec:fe-stale-$sfx" capacity 4 burst 1 running 1 heartbeat_ms "$((now - 3600))000" >/dev/null
req GET /workers
redis_cli "$GAVEL_REDIS_URL" SREM gavel:executors "fe-live-$sfx" "fe-stale-$sfx" >/dev/null
redis_cli "$GAVEL_REDIS_URL" DEL "gavel:exec:fe-live-$sfx" "gavel:exec:fe-stale-$sfx" >/dev/null
w_sums=$(python3 - "$w0" "$last_body" <<-'PY'
	import json, sys
	a, b = (json.loads(x)[0] for x in sys.argv[1:3])
	keys = ["queue", "size", "available", "idle", "working", "paused", "failed"]
	adds = all(w["available"] == w["idle"] + w["working"] + w["paused"] for w in (a, b))
	delta = [b[k] - a[k] for k in ("available", "idle", "working", "paused")]
	print(sorted(b) == sorted(keys), adds, b["size"] >= 1, delta)
	PY
)
check "judge0 /workers adds up: available = idle + working + paused (+4 live slots, 2 working, +5 paused)" \
	[ "$w_sums" = "True True True [9, 2, 2, 5]" ]
req GET "/submissions/batch?tokens=$TB,$T1,AAAAAAAAAAAAAAAAAAAAAA&fields=token" "${A[@]}"
check "judge0 batch get in order, null for missing" [ "$(jq_ '[s and s["token"] for s in d["submissions"]]')" = "['$TB', '$T1', None]" ]
req GET "/submissions/batch?tokens=$TB&fields=token" "${Bk[@]}"
check "judge0 batch get: another tenant's token is null" [ "$(jq_ 'd["submissions"]')" = "[None]" ]
req GET /statuses
check "judge0 statuses 1..14" [ "$(jq_ 'len(d), d[2]["description"], d[10]["description"]')" = "14 Accepted Runtime Error (NZEC)" ]
# Executors publish the versions they probed at each heartbeat
# (gavel:lang:<id>, common/queue.h); none runs here, so publish as one
# would, without javascript (nor what other tests' executors published
# in this Redis): those must then not be listed.
for key in $(redis_cli "$GAVEL_REDIS_URL" KEYS 'gavel:lang:*'); do
	redis_cli "$GAVEL_REDIS_URL" DEL "$key" >/dev/null
done
for lv in c=12.2.0 cpp=12.2.0 cpp14=12.2.0 cpp20=12.2.0 go=1.19.8 java=17.0.15 pascal=3.2.2 python3=3.11.2 rust=1.63.0; do
	redis_cli "$GAVEL_REDIS_URL" SET "gavel:lang:${lv%%=*}" "${lv#*=}" PX 120000 >/dev/null
done
req GET /languages
check "judge0 languages: Judge0 ids of the languages executors offer" [ "$(jq_ 'sorted(l["id"] for l in d)')" = "[50, 54, 60, 62, 67, 71, 73]" ]
req GET /languages/71
check "judge0 language 71 is Python with the probed version" [ "$(jq_ 'd["name"]')" = "Python 3 (CPython 3.11.2)" ]
req GET /languages/63
check "judge0 language no executor offers -> 404" code_is 404
req GET /v1/languages
check "native languages: probed version, javascript marked unavailable" [ "$(jq_ '[(l["version"], l["available"]) for l in d if l["id"] in ("python3", "javascript")]')" = "[(None, False), ('3.11.2', True)]" ]
req GET /about
check "judge0 about 1.13.1" body_has '"1.13.1"'
req GET /config_info
check "judge0 config_info" body_has max_submission_batch_size
req DELETE "/submissions/$T1" "${A[@]}"
check "judge0 delete of a queued submission -> 400" code_is 400

# Piston
req GET /api/v2/runtimes
check "piston runtimes list python with aliases" [ "$(jq_ '[r["aliases"] for r in d if r["language"]=="python"][0][:2]')" = "['py', 'py3']" ]
check "piston runtimes: probed versions, nothing no executor offers" [ "$(jq_ '[r["version"] for r in d if r["language"] in ("python", "javascript")]')" = "['3.11.2']" ]
req POST /api/v2/execute "${A[@]}" -H 'Content-Type: text/plain' -d '{"language":"py","version":"3.x","files":[{"content":"print(1)"}]}'
check "piston execute accepts text/plain JSON (504 or 200 without executors)" [ "$last_code" = 504 ] || [ "$last_code" = 200 ]
req POST /api/v2/execute "${A[@]}" -d '{"language":"py","version":"9","files":[{"content":"x"}]}'
check "piston unknown version -> 400 with message" [ "$last_code:$(jq_ 'd["message"]')" = "400:py-9 runtime is unknown" ]

# OpenAPI: every documented path answers one of its documented statuses.
req GET /v1/openapi.json
printf "%s" "$last_body" >"$tmp/openapi.json"; python3 - "$tmp/openapi.json" "$B" "$KA" "$SID" "$MT" >"$tmp/openapi.out" 2>&1 <<'PY'
#!/usr/bin/env python3
"""Walks the OpenAPI document served by gavel-frontend and calls each
documented operation once (with the tenant key, a real submission id for
{id}, and a minimal valid body for POST, the metrics token for /metrics);
fails when the status answered is not one the document lists for that
operation. Used by test_frontend_api.sh."""
import json, sys, urllib.request, urllib.error

doc = json.load(open(sys.argv[1]))
base, key, sid, mtoken = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
bad = 0
for path, ops in doc["paths"].items():
    for method, op in ops.items():
        if method not in ("get", "put", "post", "delete", "patch", "head", "options"):
            continue  # the path's own "parameters", "summary"...
        url = base + path.replace("{id}", sid)
        data = None
        if method == "post":
            data = json.dumps({"language": "python3", "source": "print(1)"}).encode()
        headers = {"X-Auth-Token": key, "Content-Type": "application/json"}
        if path == "/metrics":
            headers["Authorization"] = "Bearer " + mtoken
        req = urllib.request.Request(url, data=data, method=method.upper(), headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                code = r.status
                if path.endswith("/events"):
                    r.read(1)
        except urllib.error.HTTPError as e:
            code = e.code
        except Exception as e:  # a stream still open is an answer too
            code = 200 if path.endswith("/events") else -1
        if str(code) not in op["responses"]:
            print(f"{method.upper()} {path}: {code} not in {sorted(op['responses'])}")
            bad += 1
sys.exit(1 if bad else 0)
PY
ok_doc=$?
check "openapi: each documented route answers as documented" [ $ok_doc -eq 0 ]
[ $ok_doc -eq 0 ] || sed 's/^/# /' "$tmp/openapi.out"
req GET /metrics
check "metrics without the metrics token -> 401, no tenant ids" bash -c '[ "$1" = 401 ] && ! grep -q gavel_queue_depth <<<"$2"' _ "$last_code" "$last_body"
req GET /metrics -H "Authorization: Bearer $MT"
check "metrics in Prometheus text" body_has "gavel_http_requests_total"

echo "# frontend log tail:"; tail -n 5 "$tmp/fe.log" | sed 's/^/# /'
[ $fails -eq 0 ]
