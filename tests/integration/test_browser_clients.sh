#!/usr/bin/env bash
# Real clients that cannot be given a key header, unchanged, and Gavel
# behind a reverse proxy (issue 31, parts 3 and 4), against the whole
# stack: gavel-scheduler, one gavel-executor (real runsc), two
# gavel-frontends (one trusting 127.0.0.2 as a proxy) on the harness's
# PostgreSQL and Redis.
#
#   a. browser_clients (a tenant setting, off by default): the key in the
#      query string (?X-Auth-Token=, ?api_key=) for writes and reads, a
#      body over the keyless limit included; refused with a tenant that
#      has the setting off; GET of a submission at the root paths without
#      a key (Judge0, native), and for nothing else (another tenant's
#      submission, an unknown token, a wrong key: 401);
#   b. compiler options as clients send them (Judge0 IDE's C++ default),
#      -fsanitize refused;
#   c. the playground at its default playground_rps (2): a page polling
#      its result every 100 ms meets no 429 (reads have their own budget);
#   d. origins: a present but invalid or unlisted Origin is refused (403)
#      by the playground: null, malformed, another case, a trailing slash,
#      file://; nothing stored; the refusal readable by the page (ACAO);
#   e. the proxy rule: from the trusted proxy, X-Forwarded-For names the
#      client (its own rate-limit bucket, the audit's actor); from any
#      other peer the header is ignored; the proxy's idle connections are
#      not capped per address, its clients' requests are;
#   e'. the PROXY protocol v1 from a trusted TCP balancer: the line names
#      the client (the audit's actor, the per-address connection cap from
#      accept), is required from the balancer and ignored from anyone else;
#   f. Debian's Chromium (puppeteer-core) with Judge0 IDE's and Judge0's
#      dummy client's request patterns from another origin
#      (tests/js/judge0_pages.mjs).
#
# Needs root (runsc, cgroups), Node.js, the npm clients of tests/js and
# Chromium (installed when missing), Debian's libjs-jquery (the same).
# Prints TAP; every process it starts is stopped on exit.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
NODE_CHECKS=8 # CHECKS of tests/js/judge0_pages.mjs

echo "1..$((38 + NODE_CHECKS))"
. tests/lib/tap.sh
check_detail() { echo "last: ${last_code:-} ${last_body:0:400} | $(tr '\n' ' ' <<<"${last_headers:-}" | cut -c1-300)"; }
say() { printf '# %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid node; do
	command -v "$c" >/dev/null || bail "$c missing"
done
. tests/lib/npm.sh
. tests/lib/chromium.sh
npm_clients_ready || bail "the npm clients of tests/js could not be installed"
chromium_ready || bail "Chromium could not be installed"
if [ ! -f /usr/share/javascript/jquery/jquery.min.js ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q libjs-jquery >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libjs-jquery >/dev/null 2>&1; } ||
		bail "libjs-jquery could not be installed"
fi

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup browser-clients
G="$BUILD/gavel"
upd() { local t=$1; shift; local a=(); for kv in "$@"; do a+=(--quota "$kv"); done; "$G" tenant update "$t" "${a[@]}" >>"$TMP/cli.log" 2>&1; }

# O: opted in (browser_clients), its pages at the Chromium test's origin.
# N: the same without the setting. Q: a public playground.
stack_tenant "bc_o_$TAG"
TO=$TID KO=$KEY
stack_tenant "bc_n_$TAG"
TN=$TID KN=$KEY
stack_tenant "bc_q_$TAG"
TQ=$TID
QN=bc_q_$TAG

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PID_SCHED=$!
PIDS+=("$PID_SCHED")
GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	stack_start_executor executor.log
# The proxied frontend: 127.0.0.2 is its reverse proxy, at most 2
# connections per client address.
rm -f "$TMP/port"
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" GAVEL_FRONTEND_TRUSTED_PROXIES=127.0.0.2 \
	GAVEL_FRONTEND_MAX_CONNECTIONS_PER_ADDRESS=2 stack_start_frontend
BP=$B
# A frontend behind a TCP load balancer (127.0.0.9) speaking the PROXY
# protocol v1.
rm -f "$TMP/port"
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" GAVEL_FRONTEND_TRUSTED_PROXIES=127.0.0.9 \
	GAVEL_FRONTEND_PROXY_PROTOCOL=true GAVEL_FRONTEND_MAX_CONNECTIONS_PER_ADDRESS=2 stack_start_frontend
BPP=$B
rm -f "$TMP/port"
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
stack_wait_healthy 120 "$PID_EXEC" "$PID_SCHED"

# req METHOD URL [curl args...]: sets last_code, last_body, last_headers
# (lower-cased names).
req() {
	local m=$1 u=$2
	shift 2
	last_body=$(curl -s -m 30 -X "$m" -D "$TMP/h" -o - -w '\n%{http_code}' "$@" "$u")
	last_code=${last_body##*$'\n'}
	last_body=${last_body%$'\n'*}
	last_headers=$(tr -d '\r' <"$TMP/h" 2>/dev/null | sed 's/^\([^:]*\):/\L\1:/')
}
hdr() { sed -n "s/^$1: //p" <<<"$last_headers" | head -n1; }
code_is() { [ "$last_code" = "$1" ]; }
jq_() { python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)" <<<"$last_body" 2>/dev/null; }
JSON=(-H 'Content-Type: application/json')
PY='{"language_id":71,"source_code":"print(input())","stdin":"hi"}'
count_subs() { sql -c "SELECT count(*) FROM submissions WHERE tenant_id = '$1'"; }

# ------------------------------------------------ (a) browser_clients
upd "bc_o_$TAG" browser_clients=true || bail "tenant update failed"
"$G" tenant show "bc_o_$TAG" >"$TMP/show.txt" 2>&1
audited=$(sql -c "SELECT count(*) FROM audit_log WHERE tenant_id = '$TO' AND action = 'quota.changed'
	AND details::text LIKE '%browser_clients%'")
check "browser_clients is off by default and its change is audited (quota.changed)" \
	eval '[ "$(sql -c "SELECT browser_clients FROM tenant_quotas WHERE tenant_id = '"'$TN'"'")" = f ] && [ "$audited" -ge 1 ]'

req POST "$B/submissions?X-Auth-Token=$KO" "${JSON[@]}" --data-binary "$PY"
TOK=$(jq_ 'd["token"]')
check "opted in: POST /submissions?X-Auth-Token=KEY (Judge0's dummy client) is 201 with a token" \
	eval 'code_is 201 && [ -n "$TOK" ]'
req GET "$B/submissions/$TOK?X-Auth-Token=$KO"
check "opted in: GET /submissions/{token}?X-Auth-Token=KEY is 200" code_is 200
req GET "$B/submissions/$TOK?api_key=$KO&fields=token,status"
check "opted in: ?api_key= (what allow_query_key covers) works on the same read" eval 'code_is 200 && [ "$(jq_ "d[\"token\"]")" = "$TOK" ]'
big=$(python3 -c 'import json; print(json.dumps({"language_id":71,"source_code":"# "+"x"*20000+"\nprint(1)"}))')
req POST "$B/submissions?X-Auth-Token=$KO" "${JSON[@]}" --data-binary "$big"
check "opted in: a 20 kB body with the key in the query is read (over the 16 kB keyless limit): 201" code_is 201
before=$(count_subs "$TN")
req POST "$B/submissions?X-Auth-Token=$KN" "${JSON[@]}" --data-binary "$PY"
check "setting off: POST /submissions?X-Auth-Token=KEY is 401, naming browser_clients, nothing stored" \
	eval 'code_is 401 && grep -q browser_clients <<<"$last_body" && [ "$(count_subs "$TN")" = "$before" ]'
req POST "$B/submissions?X-Auth-Token=$KN" "${JSON[@]}" --data-binary "$big"
check "setting off: a 20 kB body with the key in the query is not read (413 or 401)" eval 'code_is 413 || code_is 401'

# Keyless reads of one submission at the root paths.
req POST "$B/submissions?wait=true" -H "X-Auth-Token: $KO" "${JSON[@]}" --data-binary "$PY"
TOK2=$(jq_ 'd["token"]')
req GET "$B/submissions/$TOK2"
check "opted in: GET /submissions/{token} without any key is 200, the submission's own" \
	eval 'code_is 200 && [ "$(jq_ "d[\"token\"]")" = "$TOK2" ]'
req GET "$B/v1/submissions/$TOK2"
check "opted in: the native GET /v1/submissions/{id} without a key is 200 too" code_is 200
req POST "$B/submissions" -H "X-Auth-Token: $KN" "${JSON[@]}" --data-binary "$PY"
TOKN=$(jq_ 'd["token"]')
req GET "$B/submissions/$TOKN"
c1=$last_code
b1=$last_body
req GET "$B/submissions/AAAAAAAAAAAAAAAAAAAAAA"
c2=$last_code
b2=$last_body
req GET "$B/submissions/$TOK2" -H "X-Auth-Token: gv_notakey"
check "a token of a tenant without the setting and an unknown token: the same 401 (no token oracle); a wrong key with a good token: 401" \
	eval '[ "$c1" = 401 ] && [ "$c2" = 401 ] && [ "$b1" = "$b2" ] && code_is 401'
req DELETE "$B/submissions/$TOK2"
check "a token admits only reads: DELETE /submissions/{token} without a key is 401" code_is 401
req GET "$B/submissions?X-Auth-Token=" 
check "an empty query key is no key: 401" code_is 401

# ------------------------------------------------ (b) compiler options
IDE_OPTS='-O3 --std=c++17 -Wall -Wextra -Wold-style-cast -Wuseless-cast -Wnull-dereference -Werror -Wfatal-errors -pedantic -pedantic-errors'
CPP='#include <iostream>\nint main() { std::cout << 42 << std::endl; return 0; }\n'
req POST "$B/submissions?wait=true" -H "X-Auth-Token: $KO" "${JSON[@]}" \
	--data-binary "{\"language_id\":54,\"source_code\":\"$CPP\",\"compiler_options\":\"$IDE_OPTS\"}"
check "Judge0 IDE's default C++ compiler options are accepted and compile (Accepted, 42)" \
	eval 'code_is 201 && [ "$(jq_ "d[\"status\"][\"id\"]")" = 3 ] && [ "$(jq_ "d[\"stdout\"].strip()")" = 42 ]'
req POST "$B/submissions" -H "X-Auth-Token: $KO" "${JSON[@]}" \
	--data-binary "{\"language_id\":54,\"source_code\":\"$CPP\",\"compiler_options\":\"-fsanitize=address\"}"
c1=$last_code
req POST "$B/submissions" -H "X-Auth-Token: $KO" "${JSON[@]}" \
	--data-binary "{\"language_id\":54,\"source_code\":\"$CPP\",\"compiler_options\":\"-Wl,-rpath,/tmp\"}"
check "-fsanitize=address and -Wl,... are still refused (422)" eval '[ "$c1" = 422 ] && code_is 422'

# ------------------------------------------------ (c) playground polling
upd "$QN" playground=true cors_origins=https://ide.example || bail "tenant update failed"
sleep 1.1
PG=$B/playground/$QN
req POST "$PG/submissions?base64_encoded=false&wait=false" "${JSON[@]}" --data-binary "$PY"
QT=$(jq_ 'd["token"]')
codes=""
for _ in $(seq 30); do
	req GET "$PG/submissions/$QT?base64_encoded=true"
	codes="$codes $last_code"
	sleep 0.1
done
check "playground at its defaults (playground_rps 2): 30 polls of the result at 100 ms meet no 429" \
	eval '[ -n "$QT" ] && ! grep -q 429 <<<"$codes" && ! grep -qv "^\( 200\)*$" <<<"$codes"'
say "poll codes:$codes"
req GET "$PG/submissions/$QT" 
check "the read's own budget is named in its X-RateLimit-Limit (2 x playground_read_rps: 40)" eval '[ "$(hdr x-ratelimit-limit)" = 40 ]'
for _ in $(seq 30); do
	req GET "$PG/statuses"
	[ "$last_code" = 429 ] && break
done
check "other anonymous requests still spend playground_rps (2, burst 10): a burst reaches 429" code_is 429
sleep 1.1

# ------------------------------------------------ (d) origins
before=$(count_subs "$TQ")
for o in 'null' 'not an origin' 'HTTPS://EVIL.EXAMPLE' 'https://ide.example/' 'file://' 'https://ide.example/path' 'HTTPS://IDE.EXAMPLE'; do
	req POST "$PG/submissions" "${JSON[@]}" -H "Origin: $o" --data-binary "$PY"
	check "playground: Origin '$o' is refused (403, Judge0's error naming the Origin), not taken for no origin" \
		eval 'code_is 403 && grep -q "request.s Origin" <<<"$last_body"'
done
check "none of the refused origins stored a submission" eval '[ "$(count_subs "$TQ")" = "$before" ]'
req POST "$PG/submissions" "${JSON[@]}" -H 'Origin: null' --data-binary "$PY"
check "the refusal of Origin: null is readable by the page: Access-Control-Allow-Origin: null" \
	eval 'code_is 403 && [ "$(hdr access-control-allow-origin)" = null ]'
req POST "$PG/submissions" "${JSON[@]}" -H 'Origin: https://evil.example' --data-binary "$PY"
check "an unlisted origin: 403 with Access-Control-Allow-Origin: that origin (the page can read why)" \
	eval 'code_is 403 && [ "$(hdr access-control-allow-origin)" = https://evil.example ]'
req POST "$PG/submissions" "${JSON[@]}" -H 'Origin: https://ide.example' --data-binary "$PY"
check "the listed origin https://ide.example: 201" eval 'code_is 201 || code_is 429'

# ------------------------------------------------ (e) the proxy rule
upd "$QN" playground_rps=1 playground_burst=1 || bail "tenant update failed"
sleep 1.1
st() { req GET "$1/playground/$QN/statuses" "${@:2}"; }
# From the trusted proxy (127.0.0.2): each forwarded client its own bucket.
st "$BP" --interface 127.0.0.2 -H 'X-Forwarded-For: 198.51.100.7'
a1=$last_code
st "$BP" --interface 127.0.0.2 -H 'X-Forwarded-For: 198.51.100.7'
a2=$last_code
st "$BP" --interface 127.0.0.2 -H 'X-Forwarded-For: 6.6.6.6, 198.51.100.8'
check "through the trusted proxy: one forwarded client's bucket empties (200, 429), another client's is its own (200)" \
	eval '[ "$a1" = 200 ] && [ "$a2" = 429 ] && code_is 200'
# From any other peer, X-Forwarded-For is ignored: one peer, one bucket.
st "$B" --interface 127.0.0.5 -H 'X-Forwarded-For: 198.51.100.20'
a1=$last_code
st "$B" --interface 127.0.0.5 -H 'X-Forwarded-For: 198.51.100.21'
check "from an untrusted peer a spoofed X-Forwarded-For is ignored: the second client it names shares the peer's bucket (429)" \
	eval '[ "$a1" = 200 ] && code_is 429'
st "$BP" --interface 127.0.0.6 -H 'X-Forwarded-For: 198.51.100.30'
a1=$last_code
st "$BP" --interface 127.0.0.6 -H 'X-Forwarded-For: 198.51.100.31'
check "the proxied frontend ignores it too from a peer that is not its proxy (127.0.0.6: 429)" \
	eval '[ "$a1" = 200 ] && code_is 429'
# The audit's actor.
upd "$QN" playground_rps=50 playground_burst=50 || bail "tenant update failed"
sleep 1.1
req POST "$BP/playground/$QN/submissions" --interface 127.0.0.2 -H 'X-Forwarded-For: 203.0.113.44' "${JSON[@]}" --data-binary "$PY"
S1=$(jq_ 'd["token"]')
req POST "$B/playground/$QN/submissions" --interface 127.0.0.7 -H 'X-Forwarded-For: 203.0.113.45' "${JSON[@]}" --data-binary "$PY"
S2=$(jq_ 'd["token"]')
sleep 1
act1=$(sql -c "SELECT actor FROM audit_log WHERE tenant_id = '$TQ' AND action = 'submission.created' AND object = '$S1'")
act2=$(sql -c "SELECT actor FROM audit_log WHERE tenant_id = '$TQ' AND action = 'submission.created' AND object = '$S2'")
check "the audit names the forwarded client through the proxy (anonymous:203.0.113.44), the peer otherwise (anonymous:127.0.0.7)" \
	eval '[ "$act1" = anonymous:203.0.113.44 ] && [ "$act2" = anonymous:127.0.0.7 ]'
say "actors: '$act1' '$act2'"
# Connections: the proxy's own are not capped per address (2 here), any
# other peer's are. idle_then_get SOURCE: 3 keep-alive connections from
# SOURCE (each answered once), then a GET /v1/health from it; prints its
# status line.
idle_then_get() {
	python3 - "$1" "${BP##*:}" <<'PYEOF'
import socket, sys
src, port = sys.argv[1], int(sys.argv[2])
idle = []
for _ in range(3):
    # Answered once each (keep-alive), so that the server has counted
    # them before the fourth comes.
    s = socket.socket()
    s.settimeout(20)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    got = b""
    try:
        while b"\r\n\r\n" not in got:
            b = s.recv(4096)
            if not b:
                break
            got += b
    except OSError:
        pass
    idle.append(s)
s = socket.socket()
s.settimeout(20)
s.bind((src, 0))
s.connect(("127.0.0.1", port))
s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = b""
try:
    while True:
        b = s.recv(4096)
        if not b:
            break
        data += b
except OSError:
    pass
print(data.split(b"\r\n", 1)[0].decode(errors="replace"), "|", b"too_many_connections" in data)
PYEOF
}
from_proxy=$(idle_then_get 127.0.0.2)
from_other=$(idle_then_get 127.0.0.8)
check "three idle connections from the trusted proxy and a fourth is served; from another peer the fourth is refused (503, max_connections_per_address 2)" \
	eval 'grep -q "False$" <<<"$from_proxy" && ! grep -q " 503 " <<<"$from_proxy" && grep -q "True$" <<<"$from_other"'
say "proxy: $from_proxy; other: $from_other"
# ... its clients' requests are: two held (wait=true, a 6 s program) for
# one client, a third for it is 503, another client's is served.
SLOW='{"language_id":71,"source_code":"import time\ntime.sleep(6)\nprint(1)","wall_time_limit":15,"cpu_time_limit":2}'
held=()
for i in 1 2; do
	curl -s -m 60 -o "$TMP/held$i" -w '%{http_code}' --interface 127.0.0.2 -H 'X-Forwarded-For: 192.0.2.50' \
		-H "X-Auth-Token: $KO" "${JSON[@]}" --data-binary "$SLOW" "$BP/submissions?wait=true" >"$TMP/held$i.code" &
	held+=($!)
done
sleep 2
req POST "$BP/submissions" --interface 127.0.0.2 -H 'X-Forwarded-For: 192.0.2.50' -H "X-Auth-Token: $KO" "${JSON[@]}" --data-binary "$PY"
third=$last_code
req POST "$BP/submissions" --interface 127.0.0.2 -H 'X-Forwarded-For: 192.0.2.51' -H "X-Auth-Token: $KO" "${JSON[@]}" --data-binary "$PY"
check "a forwarded client holding 2 requests (its cap) gets 503 for a third; another client through the same proxy is served (201)" \
	eval '[ "$third" = 503 ] && code_is 201'
say "third: $third, other: $last_code"
wait "${held[@]}"

# ------------------------------------------------ (e') PROXY protocol v1
# raw SOURCE PORT HOLD LINE REQUEST: HOLD connections from SOURCE each
# sending LINE and one keep-alive request, kept open, then one sending LINE and REQUEST (\r\n escapes); prints
# the last one's status line and whether it says too_many_connections.
raw() {
	python3 - "$@" <<'PYEOF'
import socket, sys
src, port, hold, line, req = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
line = line.replace("\\r\\n", "\r\n").encode()
req = req.replace("\\r\\n", "\r\n").encode()
idle = []
for _ in range(hold):
    # Each held connection is answered once (a keep-alive request), so
    # that the server has read its line before the next one comes.
    s = socket.socket()
    s.settimeout(20)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(line + b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    got = b""
    while b"\r\n\r\n" not in got:
        b = s.recv(4096)
        if not b:
            break
        got += b
    idle.append(s)
s = socket.socket()
s.settimeout(20)
s.bind((src, 0))
s.connect(("127.0.0.1", port))
s.sendall(line + req)
data = b""
try:
    while b"\r\n\r\n" not in data or len(data) < 2000:
        b = s.recv(4096)
        if not b:
            break
        data += b
except OSError:
    pass
print(data.split(b"\r\n", 1)[0].decode(errors="replace"), "|", b"too_many_connections" in data, "|",
      data.split(b"\r\n\r\n", 1)[-1][:300].decode(errors="replace"))
PYEOF
}
PPORT=${BPP##*:}
HEALTH='GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
SUBMIT="POST /playground/$QN/submissions HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: ${#PY}\\r\\nConnection: close\\r\\n\\r\\n$PY"
out=$(raw 127.0.0.9 "$PPORT" 0 'PROXY TCP4 198.51.100.77 127.0.0.1 5555 80\r\n' "$SUBMIT")
S3=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1].split(" | ", 2)[2]).get("token", ""))' "$out" 2>/dev/null)
sleep 1
act3=$(sql -c "SELECT actor FROM audit_log WHERE tenant_id = '$TQ' AND action = 'submission.created' AND object = '$S3'")
check "PROXY TCP4 from the trusted balancer: the submission is the named client's (anonymous:198.51.100.77)" \
	eval '[ -n "$S3" ] && [ "$act3" = anonymous:198.51.100.77 ]'
say "proxy protocol: $out | actor '$act3'"
out=$(raw 127.0.0.9 "$PPORT" 0 '' "$HEALTH")
check "the trusted balancer's connection without a PROXY line: 400, closed" eval 'grep -q "^HTTP/1.1 400" <<<"$out"'
say "no line: $out"
out=$(raw 127.0.0.10 "$PPORT" 0 'PROXY TCP4 198.51.100.78 127.0.0.1 5555 80\r\n' "$HEALTH")
check "a PROXY line from a peer that is no trusted balancer is not believed (not served)" eval '! grep -q "^HTTP/1.1 200" <<<"$out"'
say "untrusted line: $out"
over=$(raw 127.0.0.9 "$PPORT" 2 'PROXY TCP4 198.51.100.88 127.0.0.1 5555 80\r\n' "$HEALTH")
other=$(raw 127.0.0.9 "$PPORT" 1 'PROXY TCP4 198.51.100.89 127.0.0.1 5555 80\r\n' "$HEALTH")
check "the named client's connections count from accept: a third while it holds 2 is refused (503), another client with 2 is served" \
	eval 'grep -q "True |" <<<"$over" && grep -q "^HTTP/1.1 200" <<<"$other"'
say "over: $over; other: $other"

# ------------------------------------------------ (f) Chromium
PAGES=$TMP/pages
mkdir -p "$PAGES"
cp tests/js/judge0_pages/ide.html tests/js/judge0_pages/dummy.html "$PAGES/"
cp /usr/share/javascript/jquery/jquery.min.js "$PAGES/"
PP=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$PP" --bind 127.0.0.1 --directory "$PAGES" >"$TMP/pages.log" 2>&1 &
PID_PAGES=$!
PIDS+=("$PID_PAGES")
for _ in $(seq 50); do
	curl -s -o /dev/null "http://127.0.0.1:$PP/ide.html" && break
	sleep 0.1
done
[ -n "$PP" ] || bail "the pages' server did not start: $(cat "$TMP/pages.log")"
# The pages' origin is another than the API's: the tenant lists it.
upd "bc_o_$TAG" "cors_origins=http://localhost:$PP" || bail "tenant update failed"
sleep 1.1
node tests/js/judge0_pages.mjs "http://localhost:$PP" "$B" "$KO" $((n + 1)) 2>"$TMP/node.err"
rc=$?
n=$((n + NODE_CHECKS))
if [ $rc -ne 0 ]; then
	fails=$((fails + 1))
	sed 's/^/# /' "$TMP/node.err" | tail -n 20
	tail -n 20 "$TMP/frontend.log" | sed 's/^/# frontend: /'
fi
[ "$fails" -eq 0 ]
