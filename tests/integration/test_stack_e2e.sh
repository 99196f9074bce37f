#!/usr/bin/env bash
# The whole service end to end, as a client sees it: gavel migrate, two
# tenants and keys made with the CLI, then gavel-scheduler, one
# gavel-executor (real runsc) and gavel-frontend against the harness's
# PostgreSQL and Redis, driven only over HTTP with curl:
#
#   a. native POST /v1/submissions?wait=true in C, Python and Java: AC, WA,
#      TLE, CE with per-test results; GET by id; another tenant gets 404;
#   b. SSE /v1/submissions/{id}/events: queued -> compiling/running -> done;
#   c. a Judge0 client: create wait=false and poll, batch create and batch
#      get with base64 on and off, fields=, Judge0's status ids;
#      additional_files (a zip unpacked inside the sandbox before the
#      compile step: used, locked for the run, refused archives a CE);
#      programs of several files (native "files" in C, C++, Java and Go;
#      Judge0 archives with a C library and a Java package): compiled and
#      linked together;
#      a course's grades: 30 students' labelled submissions, the grades
#      of their assignment as CSV (latest) and JSON (best), as expected;
#   d. a Piston client: runtimes, execute with Content-Type text/plain;
#   e. 30 submissions from both tenants at once: each ends with exactly one
#      result and one sandbox.finished audit record (checked in PostgreSQL);
#   f. rate limit set with `gavel tenant update`: a burst gets 429 with
#      Retry-After and X-RateLimit-* headers;
#   g. bad and hostile input (400, 413, 422, odd Judge0/Piston/SSE requests);
#      the frontend pid must be alive after every group of requests.
#
# Uses GAVEL_DATABASE_URL / GAVEL_<DAEMON>_DATABASE_URL / GAVEL_REDIS_URL from
# tests/lib/services.sh when set (tests/run.sh), else starts its own. Needs
# root (runsc, cgroups). Prints TAP. Every process it starts is stopped on
# exit, and its temporary folders and cgroups are removed.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
# GAVEL_E2E_FRONTEND: another gavel-frontend binary (an ASan build).
FRONTEND_BIN=${GAVEL_E2E_FRONTEND:-$BUILD/gavel-frontend}

echo "1..101"
. tests/lib/tap.sh
T_START=$(date +%s)
# A failed check prints the last HTTP answer.
check_detail() { echo "last: ${last_code:-} ${last_body:-}"; }
say() { printf '# %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
[ -x "$FRONTEND_BIN" ] || bail "$FRONTEND_BIN is not built"
for c in psql redis-cli curl python3 setsid; do
	command -v "$c" >/dev/null || bail "$c missing"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup e2e "${GAVEL_E2E_KEEP_LOGS:-}"
TA_NAME=${TAG}_a
TB_NAME=${TAG}_b
"$BUILD/gavel" tenant create "$TA_NAME" >"$TMP/ta" 2>"$TMP/cli.log" &&
	"$BUILD/gavel" tenant create "$TB_NAME" >"$TMP/tb" 2>>"$TMP/cli.log" || bail "gavel tenant create: $(cat "$TMP/cli.log")"
TA=$(cut -f1 "$TMP/ta")
TB=$(cut -f1 "$TMP/tb")
KA=$("$BUILD/gavel" key create --tenant "$TA_NAME" 2>>"$TMP/cli.log")
KB=$("$BUILD/gavel" key create --tenant "$TB_NAME" 2>>"$TMP/cli.log")
[ -n "$KA" ] && [ -n "$KB" ] && [ -n "$TA" ] && [ -n "$TB" ] || bail "gavel key create: $(cat "$TMP/cli.log")"
ok "migrate, two tenants and their keys made with the CLI"

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	GAVEL_SCHEDULER_NODE_HEARTBEAT_TIMEOUT=10s GAVEL_SCHEDULER_RECONCILE_INTERVAL=5s \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PID_SCHED=$!
PIDS+=("$PID_SCHED")
NODE=node-$TAG
GAVEL_EXECUTOR_NODE_NAME=$NODE GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_BURST_SLOTS=1 \
	GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s stack_start_executor executor.log
# /metrics lists tenant ids: on the API port only with this token.
MT=mt_$$_$RANDOM
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_MAX_BODY_SIZE=64k GAVEL_FRONTEND_WAIT_TIMEOUT=90s \
	GAVEL_FRONTEND_MAX_ADDITIONAL_FILES_SIZE=16k \
	GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" GAVEL_FRONTEND_METRICS_TOKEN=$MT \
	stack_start_frontend "$FRONTEND_BIN"

fe_alive() { # the frontend process still runs (no crash)
	local st
	st=$(sed 's/.*) //' "/proc/$PID_FE/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st:0:1}" != Z ]
}
check_alive() { # group-name
	if fe_alive; then
		ok "frontend still alive after $1"
	else
		notok "frontend still alive after $1" "$(tail -n 15 "$TMP/frontend.log" | tr '\n' '|')"
		bail "gavel-frontend died"
	fi
}

# req METHOD PATH [curl args...]: sets last_code, last_body, last_headers.
req() {
	local m=$1 p=$2
	shift 2
	last_body=$(curl -s -m 120 -X "$m" -D "$TMP/h" -o - -w '\n%{http_code}' "$@" "$B$p")
	last_code=${last_body##*$'\n'}
	last_body=${last_body%$'\n'*}
	last_headers=$(tr -d '\r' <"$TMP/h" 2>/dev/null)
}
# pj EXPR: evaluates a Python expression over d = the last body as JSON.
pj() { python3 -c "import json,sys,base64; d=json.loads(sys.stdin.read()); print($1)" <<<"$last_body" 2>/dev/null; }
code_is() { [ "$last_code" = "$1" ]; }
eq() { [ "$1" = "$2" ] || { say "got '$1', want '$2'"; return 1; }; }
A=(-H "X-Auth-Token: $KA")
Bk=(-H "Authorization: Bearer $KB")
J=(-H 'Content-Type: application/json')

stack_wait_healthy 120 "$PID_EXEC" "$PID_SCHED"
ok "stack up, /v1/health ok with an executor alive in $(($(date +%s) - T_START)) s"
req GET /v1/health
# The executor's slots as it registered them: 2 regular (max_parallel), 1 burst.
slots=$(pj '"%d %d %d %d" % (d["executors"]["alive"], d["executors"]["capacity"], d["executors"]["burst"], d["executors"]["running"])')
req GET /metrics -H "Authorization: Bearer $MT"
mslots=$(grep -E '^gavel_executor_(slots\{state="capacity"\}|burst_slots) ' <<<"$last_body" | awk '{print $2}' | tr '\n' ' ')
check "health and metrics report the executor's regular and burst slots" eq "$slots|$mslots" "1 2 1 0|2 1 "

# ------------------------------------------ (a) native API, wait=true

C_SUM='#include <stdio.h>
int main(void){long a,b;if(scanf("%ld %ld",&a,&b)!=2)return 1;printf("%ld\n",a+b);return 0;}'
C_WRONG='#include <stdio.h>
int main(void){puts("42");return 0;}'
PY_SUM='a, b = map(int, input().split())
print(a + b)'
JAVA_SUM='import java.util.Scanner;
public class Main { public static void main(String[] a) { Scanner s = new Scanner(System.in);
long x = s.nextLong(), y = s.nextLong(); System.out.println(x + y); } }'
# A program whose output no text field can hold as is.
BYTES_PY='import sys
sys.stdout.buffer.write(b"a\x00b\xff\xfe\nline2\r\n\x1b[0m")
sys.stderr.buffer.write(b"\xc3")'
# jbody KEY=VALUE...: a JSON object of strings (numbers when they look so).
jbody() {
	python3 - "$@" <<-'PY'
		import json, sys
		d = {}
		for a in sys.argv[1:]:
		    k, v = a.split("=", 1)
		    d[k] = int(v) if v.isdigit() else v
		print(json.dumps(d))
	PY
}
# body LANG SOURCE [EXTRA_JSON_FIELDS]: a native request with two tests.
body() {
	python3 - "$1" "$2" "${3:-}" <<-'PY'
		import json, sys
		d = {"language": sys.argv[1], "source": sys.argv[2],
		     "tests": [{"input": "1 2\n", "expected": "3\n"}, {"input": "20 22\n", "expected": "42\n"}]}
		if sys.argv[3]:
		    d.update(json.loads(sys.argv[3]))
		print(json.dumps(d))
	PY
}
# native_case NAME LANG SOURCE WANT_VERDICT WANT_TEST_VERDICTS [EXTRA]
native_case() {
	local name=$1 lang=$2 src=$3 want=$4 wtests=$5 extra=${6:-} t0
	t0=$(date +%s.%N)
	req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" --data-binary "$(body "$lang" "$src" "$extra")"
	local took
	took=$(python3 -c "import time; print('%.1f' % (time.time() - $t0))")
	local got
	got=$(pj 'd["status"], d["verdict"], [t["verdict"] for t in (d["result"] or {}).get("tests") or []]')
	if code_is 201 && [ "$got" = "done $want $wtests" ]; then
		ok "native wait=true: $name -> $want, per-test $wtests (${took} s)"
	else
		notok "native wait=true: $name -> $want, per-test $wtests" "got $last_code: $got; ${last_body:0:400}"
	fi
}
native_case "C sum" c "$C_SUM" AC "['AC', 'AC']"
SID_C=$(pj 'd["id"]')
check "per-test results carry time and memory" eq "$(pj 'all(isinstance(t["time_ms"], int) and t["memory_kb"] > 0 for t in d["result"]["tests"])')" True
# Every test runs; the verdict is the first test's that is not AC.
native_case "C wrong answer" c "$C_WRONG" WA "['WA', 'AC']"
native_case "Python sum" python3 "$PY_SUM" AC "['AC', 'AC']"
native_case "Python endless loop" python3 'while True: pass' TLE "['TLE', 'TLE']" '{"limits":{"time_ms":300}}'
native_case "C syntax error" c 'int main( {' CE "['SKIPPED', 'SKIPPED']"
check "CE carries the compiler's output" eq "$(pj '"error" in d["result"]["compile_output"]')" True
native_case "Java sum" java "$JAVA_SUM" AC "['AC', 'AC']"

req GET "/v1/submissions/$SID_C" "${A[@]}"
check "GET /v1/submissions/{id} by its owner: done, AC, 2 tests" eq "$(pj 'd["id"] == "'"$SID_C"'", d["status"], d["verdict"], len(d["result"]["tests"])')" "True done AC 2"
req GET "/v1/submissions/$SID_C" "${Bk[@]}"
foreign="$last_code:$last_body"
req GET /v1/submissions/AAAAAAAAAAAAAAAAAAAAAA "${Bk[@]}"
check "the other tenant gets 404 for it, exactly as for a missing id" eq "$foreign" "404:$last_body"
req GET "/v1/submissions/$SID_C/events" "${Bk[@]}"
check "the other tenant gets 404 for its event stream" code_is 404
check_alive "the native API group"

# ------------------------------------------------------- (b) SSE events

# Two slow jobs fill the executor's two slots first, so the watched one is
# still queued when the stream opens (their time limit is above their sleep:
# a program idle for its whole limit is TLE). 4 s: with 2 s and a slow
# python3 on PATH, the stream once opened after the watched job was done.
for _ in 1 2; do
	req POST /v1/submissions "${A[@]}" "${J[@]}" -d '{"language":"python3","source":"import time\ntime.sleep(4)","stdin":"","limits":{"time_ms":8000,"wall_ms":15000}}'
done
req POST /v1/submissions "${A[@]}" "${J[@]}" --data-binary "$(body c "$C_SUM")"
SID_SSE=$(pj 'd["id"]')
check "native create without wait -> 201 queued" eq "$last_code $(pj 'd["status"]')" "201 queued"
timeout 60 curl -s -N -m 60 "${A[@]}" "$B/v1/submissions/$SID_SSE/events" >"$TMP/sse.txt" 2>/dev/null
events=$(sed -n 's/^event: //p' "$TMP/sse.txt" | tr '\n' ' ')
say "SSE events: $events"
sse_order_ok() {
	python3 - "$TMP/sse.txt" <<-'PY'
		import json, sys
		ev = []
		name = None
		for line in open(sys.argv[1]):
		    line = line.rstrip("\n")
		    if line.startswith("event: "):
		        name = line[7:]
		    elif line.startswith("data: ") and name:
		        ev.append((name, json.loads(line[6:])))
		        name = None
		names = [e[0] for e in ev]
		ok = (len(names) >= 3 and names[0] == "queued" and names[-1] == "done"
		      and any(x in ("compiling", "running") for x in names[1:-1])
		      and all(x in ("queued", "compiling", "running") for x in names[:-1])
		      and names.index("done") == len(names) - 1)
		# running events of a judged job say which test of how many
		runs = [e[1] for e in ev if e[0] == "running" and "of" in e[1]]
		ok = ok and all(r["of"] == 2 and 1 <= r["test"] <= 2 for r in runs)
		done = ev[-1][1] if ev else {}
		ok = ok and done.get("status") == "done" and done.get("verdict") == "AC"
		sys.exit(0 if ok else 1)
	PY
}
check "SSE: queued -> compiling/running (test k of 2) -> done with the verdict, then the stream ends" sse_order_ok
# A stream opened on a finished submission sends done at once and ends.
timeout 20 curl -s -N -m 20 "${A[@]}" "$B/v1/submissions/$SID_C/events" >"$TMP/sse2.txt" 2>/dev/null
check "SSE on a finished submission: one done event, stream closed" eq "$(sed -n 's/^event: //p' "$TMP/sse2.txt" | tr '\n' ' ')" "done "
# Clients that hang up in the middle of a stream.
req POST /v1/submissions "${A[@]}" "${J[@]}" --data-binary "$(body python3 'import time; time.sleep(1); print(3)')"
SID_SSE2=$(pj 'd["id"]')
for _ in 1 2 3; do timeout 1 curl -s -N -m 1 "${A[@]}" "$B/v1/submissions/$SID_SSE2/events" >/dev/null 2>&1; done
req GET "/v1/submissions/$SID_SSE2?wait=true" "${A[@]}"
check_alive "the SSE group (including clients that hang up)"

# --------------------------------------------------------- (c) Judge0

req POST "/submissions?base64_encoded=false&wait=false" "${A[@]}" "${J[@]}" \
	-d '{"language_id": 71, "source_code": "print(input()[::-1])", "stdin": "gavel", "expected_output": "levag"}'
check "judge0 create wait=false -> 201 with a token only" eq "$last_code $(pj 'sorted(d.keys())')" "201 ['token']"
TOK=$(pj 'd["token"]')
polls=0
status_id=0
for polls in $(seq 1 300); do
	req GET "/submissions/$TOK?base64_encoded=false" "${A[@]}"
	status_id=$(pj 'd["status"]["id"]')
	[ -n "$status_id" ] && [ "$status_id" -ge 3 ] && break
	sleep 0.3
done
check "judge0 poll until status id >= 3: Accepted after $polls polls" eq "$(pj 'd["status"]["id"], d["status"]["description"], repr(d["stdout"])')" "3 Accepted 'levag\n'"
check "judge0 default fields and Judge0's time/memory formats" eq "$(pj 'sorted(d.keys()), isinstance(d["time"], str) and "." in d["time"], isinstance(d["memory"], int)')" \
	"['compile_output', 'memory', 'message', 'status', 'stderr', 'stdout', 'time', 'token'] True True"
req GET "/submissions/$TOK?fields=token,status_id,stdout,language_id,source_code" "${A[@]}"
check "judge0 fields= selects exactly those" eq "$(pj 'sorted(d.keys()), d["status_id"], d["language_id"], d["source_code"]')" \
	"['language_id', 'source_code', 'status_id', 'stdout', 'token'] 3 71 print(input()[::-1])"
b64() { printf '%s' "$1" | base64 -w0; }
BATCH=$(python3 - "$(b64 "$C_SUM")" "$(b64 "$C_WRONG")" "$(b64 'int main( {')" "$(b64 'import sys; sys.exit(3)')" "$(b64 '1 2')" "$(b64 '3')" <<-'PY'
	import json, sys
	s, w, ce, re_, inp, exp = sys.argv[1:]
	print(json.dumps({"submissions": [
	    {"language_id": 50, "source_code": s, "stdin": inp, "expected_output": exp},
	    {"language_id": "50", "source_code": w, "stdin": inp, "expected_output": exp},
	    {"language_id": 50, "source_code": ce},
	    {"language_id": 71, "source_code": re_, "stdin": None},
	]}))
PY
)
req POST "/submissions/batch?base64_encoded=true" "${A[@]}" "${J[@]}" --data-binary "$BATCH"
check "judge0 batch create (base64) -> 201, four tokens" eq "$last_code $(pj 'sum(1 for x in d if "token" in x)')" "201 4"
TOKS=$(pj '",".join(x["token"] for x in d)')
for _ in $(seq 1 300); do
	req GET "/submissions/batch?tokens=$TOKS&base64_encoded=true&fields=token,status,stdout,compile_output" "${A[@]}"
	[ "$(pj 'all(s["status"]["id"] >= 3 for s in d["submissions"])')" = True ] && break
	sleep 0.5
done
check "judge0 batch get: AC, WA, CE, NZEC in order, as Judge0 numbers them" \
	eq "$(pj '[(s["status"]["id"], s["status"]["description"]) for s in d["submissions"]]')" \
	"[(3, 'Accepted'), (4, 'Wrong Answer'), (6, 'Compilation Error'), (11, 'Runtime Error (NZEC)')]"
check "judge0 batch get base64: stdout and compile_output encoded" \
	eq "$(pj 'base64.b64decode(d["submissions"][0]["stdout"]).decode(), b"error" in base64.b64decode(d["submissions"][2]["compile_output"])')" "3
 True"
CE_TOK=$(cut -d, -f3 <<<"$TOKS")
req GET "/submissions/$CE_TOK?fields=*" "${A[@]}"
check "judge0 fields=* of a compilation error: status_id 6 among the fields, time and memory null (nothing ran)" \
	eq "$(pj 'd["status_id"], d["time"], d["wall_time"], d["memory"]')" "6 None None None"
req GET "/submissions/batch?tokens=$TOKS,AAAAAAAAAAAAAAAAAAAAAA&base64_encoded=false&fields=token,stdout,status_id" "${A[@]}"
check "judge0 batch get plain: text as is, null for an unknown token" \
	eq "$(pj 'repr(d["submissions"][0]["stdout"]), d["submissions"][1]["status_id"], d["submissions"][4], sorted(d["submissions"][0])')" \
	"'3\n' 4 None ['status_id', 'stdout', 'token']"
req GET "/submissions/batch?tokens=$TOKS&fields=token" "${Bk[@]}"
check "judge0 batch get with the other tenant's key: all null" eq "$(pj 'd["submissions"]')" "[None, None, None, None]"
req GET "/submissions/$TOK" "${Bk[@]}"
check "judge0 get with the other tenant's key -> 404" code_is 404
req POST "/submissions?base64_encoded=true&wait=true" "${A[@]}" "${J[@]}" -d "{\"language_id\":71,\"source_code\":\"$(b64 'print(input()*2)')\",\"stdin\":\"$(b64 'ab')\"}"
check "judge0 create wait=true base64 -> finished result" eq "$last_code $(pj 'd["status"]["id"], base64.b64decode(d["stdout"]).decode().strip()')" "201 3 abab"
req POST "/submissions?base64_encoded=false&wait=true" "${A[@]}" "${J[@]}" --data-binary "$(jbody language_id=71 source_code="$BYTES_PY")"
TOKB=$(pj 'd["token"]')
check "judge0 wait=true, output with NUL and invalid UTF-8, plain -> 201 Accepted" eq "$last_code $(pj 'd["status"]["id"]')" "201 3"
req GET "/submissions/$TOKB?base64_encoded=true&fields=*" "${A[@]}"
# jsonb cannot hold NUL: the result keeps the exact bytes in base64 twins
# (stdout_b64), which base64_encoded=true returns.
check "judge0 the same with base64 and fields=*: the exact bytes, NUL and invalid UTF-8 included" eq "$last_code $(pj 'base64.b64decode(d["stdout"]) == b"a\x00b\xff\xfe\nline2\r\n\x1b[0m", base64.b64decode(d["stderr"]) == b"\xc3", len(d) > 30')" "200 True True True"
# Bytes in, bytes out: stdin and expected_output with NUL and 0xff, echoed.
ECHO_PY='import sys
d = sys.stdin.buffer.read()
sys.stdout.buffer.write(d)
sys.stderr.buffer.write(d[::-1])'
RAW_B64=$(printf '\000\377\376 A\000\n' | base64 -w0)
REV_B64=$(printf '\n\000A \376\377\000' | base64 -w0)
req POST "/submissions?base64_encoded=true&wait=true&fields=status_id,stdout,stderr" "${A[@]}" "${J[@]}" \
	-d "{\"language_id\":71,\"source_code\":\"$(b64 "$ECHO_PY")\",\"stdin\":\"$RAW_B64\"}"
j0_run="$last_code $(pj 'd["status_id"], d["stdout"], d["stderr"]')"
# A judged one (expected_output) carries no stderr yet: the tests' stderr
# is not kept in the result.
req POST "/submissions?base64_encoded=true&wait=true&fields=status_id,stdout" "${A[@]}" "${J[@]}" \
	-d "{\"language_id\":71,\"source_code\":\"$(b64 "$ECHO_PY")\",\"stdin\":\"$RAW_B64\",\"expected_output\":\"$RAW_B64\"}"
check "judge0 base64 stdin (and expected_output) with NUL and 0xff: stdout and stderr byte for byte, Accepted when compared" \
	eq "$j0_run|$last_code $(pj 'd["status_id"], d["stdout"]')" "201 3 $RAW_B64 $REV_B64|201 3 $RAW_B64"
req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" \
	--data-binary "$(python3 -c 'import json,sys; print(json.dumps({"language":"python3","source":sys.argv[1],"stdin_b64":sys.argv[2]}))' "$ECHO_PY" "$RAW_B64")"
check "native stdin_b64 with NUL and 0xff: result stdout_b64 and stderr_b64 byte for byte" \
	eq "$last_code $(pj 'd["verdict"], d["result"]["stdout_b64"], d["result"]["stderr_b64"]')" "201 AC $RAW_B64 $REV_B64"
req GET /statuses
check "judge0 /statuses: 14 ids with Judge0's descriptions" eq "$(pj '[s["id"] for s in d] == list(range(1, 15)), d[4]["description"], d[12]["description"]')" "True Time Limit Exceeded Internal Error"
req DELETE "/submissions/$TOK" "${A[@]}"
check "judge0 DELETE of a finished submission -> 200 with it" eq "$last_code $(pj 'd["token"]')" "200 $TOK"
req GET "/submissions/$TOK" "${A[@]}"
check "judge0 deleted submission -> 404" code_is 404
check_alive "the Judge0 group"

# ------------------------------------- (c2) Judge0 additional_files

# jreq KEY=JSON...: a JSON object whose values are JSON texts.
jreq() {
	python3 - "$@" <<-'PY'
		import json, sys
		print(json.dumps({k: json.loads(v) for k, v in (a.split("=", 1) for a in sys.argv[1:])}))
	PY
}
js() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
# mkzip NAME=CONTENT...: a zip of those entries (names as given, "../"
# included), in base64.
mkzip() {
	python3 - "$@" <<-'PY'
		import base64, io, sys, zipfile
		buf = io.BytesIO()
		with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
		    for a in sys.argv[1:]:
		        name, data = a.split("=", 1)
		        z.writestr(zipfile.ZipInfo(name), data)
		print(base64.b64encode(buf.getvalue()).decode())
	PY
}
# A module and a data file in folders of the zip; the run may read them but
# not write there (gavel-init locks /box, subfolders included, before it).
PY_FILES='import lib.helper
a, b = map(int, open("data/input.txt").read().split())
try:
    open("data/new.txt", "w").write("x")
    print("WRITABLE")
except OSError:
    print("locked")
print(a * b + lib.helper.K)'
ZIP_PY=$(mkzip 'data/input.txt=6 7
' 'lib/__init__.py=' 'lib/helper.py=K = 100
')
req POST "/submissions?base64_encoded=false&wait=true&fields=status_id,stdout,compile_output" "${A[@]}" "${J[@]}" \
	--data-binary "$(jreq language_id=71 source_code="$(js "$PY_FILES")" additional_files="$(js "$ZIP_PY")")"
check "judge0 additional_files, Python: a module and data/input.txt from the zip, Accepted; the folders locked for the run" \
	eq "$last_code $(pj 'd["status_id"], repr(d["stdout"])')" "201 3 'locked\n142\n'"
C_INC='#include <stdio.h>
#include "inc/answer.h"
int main(void) { printf("%d\n", ANSWER); return 0; }'
req POST "/submissions?base64_encoded=true&wait=true&fields=status_id,stdout" "${A[@]}" "${J[@]}" \
	--data-binary "$(jreq language_id=50 source_code="$(js "$(b64 "$C_INC")")" \
		additional_files="$(js "$(mkzip 'inc/answer.h=#define ANSWER 42')")")"
check "judge0 additional_files, C: a header from the zip compiles (base64_encoded=true leaves the zip as it is)" \
	eq "$last_code $(pj 'd["status_id"], base64.b64decode(d["stdout"]).decode()')" "201 3 42"
req POST "/submissions?wait=true&fields=status_id,compile_output,stdout" "${A[@]}" "${J[@]}" \
	--data-binary "$(jreq language_id=71 source_code='"print(1)"' additional_files="$(js "$(mkzip 'ok.txt=1' '../evil=x')")")"
evil=$(find "$WORK_ROOT" -name evil 2>/dev/null | head -n 3)
check "judge0 additional_files with '../evil': a compilation error naming the entry, nothing written" \
	eq "$last_code $(pj 'd["status_id"], "'"'"'../evil'"'"'" in d["compile_output"], "leaves" in d["compile_output"], d["stdout"]')|$evil" "201 6 True True None|"
req POST "/submissions?wait=true&fields=status_id,compile_output" "${A[@]}" "${J[@]}" \
	--data-binary "$(jreq language_id=71 source_code='"print(1)"' additional_files="$(js "$(mkzip 'main.py=import os')")")"
check "judge0 additional_files naming the main source: a compilation error, the source is not replaced" \
	eq "$last_code $(pj 'd["status_id"], "'"'"'main.py'"'"'" in d["compile_output"], "clashes" in d["compile_output"]')" "201 6 True True"
BIG_ZIP=$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(20000)).decode())')
req POST "/submissions?wait=true" "${A[@]}" "${J[@]}" \
	--data-binary "$(jreq language_id=71 source_code='"print(1)"' additional_files="$(js "$BIG_ZIP")")"
check "judge0 additional_files over frontend.max_additional_files_size -> 422 naming the field" \
	eq "$last_code $(pj '"additional_files" in d, "16384" in str(d)')" "422 True True"
check_alive "the additional_files group"

# ------------------------------------- (c3) programs of several files
# Each language builds its other files with the main one ("{sources}" in
# its compile command): every .c / .cpp compiled and linked, Java's and
# Go's files of the program compiled together; from "files" (names known
# on the host) and from an archive (named inside the sandbox once
# unpacked, folders included).
# mbody LANG NAME=CONTENT...: a native request of those files, first the
# main one, with the two sum tests.
mbody() {
	python3 - "$@" <<-'PY'
		import json, sys
		files = [dict(zip(("name", "content"), a.split("=", 1))) for a in sys.argv[2:]]
		print(json.dumps({"language": sys.argv[1], "files": files,
		                  "tests": [{"input": "1 2\n", "expected": "3\n"}, {"input": "20 22\n", "expected": "42\n"}]}))
	PY
}
multi_case() { # title lang files...
	local title=$1
	shift
	req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" --data-binary "$(mbody "$@")"
	check "native, several files: $title -> AC on both tests" \
		eq "$last_code $(pj 'd["verdict"], [t["verdict"] for t in d["result"]["tests"]], (d["result"].get("compile_output") or "")[:200]')" \
		"201 AC ['AC', 'AC'] "
}
multi_case "C, main.c with sum.c and sum.h" c 'main.c=#include <stdio.h>
#include "sum.h"
int main(void) { long a, b; if (scanf("%ld %ld", &a, &b) != 2) return 1; printf("%ld\n", sum(a, b)); return 0; }' \
	'sum.c=#include "sum.h"
long sum(long a, long b) { return a + b; }' 'sum.h=long sum(long a, long b);'
multi_case "C++, main.cpp with sum.cpp" cpp 'main.cpp=#include <iostream>
long sum(long, long);
int main() { long a, b; std::cin >> a >> b; std::cout << sum(a, b) << "\n"; }' \
	'sum.cpp=long sum(long a, long b) { return a + b; }'
multi_case "Java, Main.java with Sum.java" java 'Main.java=import java.util.Scanner;
public class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in);
System.out.println(Sum.of(s.nextLong(), s.nextLong())); } }' \
	'Sum.java=class Sum { static long of(long a, long b) { return a + b; } }'
multi_case "Go, main.go with sum.go" go 'main.go=package main
import "fmt"
func main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(sum(a, b)) }' \
	'sum.go=package main
func sum(a, b int64) int64 { return a + b }'
C_LIB='#include <stdio.h>
#include "lib/sum.h"
int main(void) { printf("%ld\n", sum(20, 22)); return 0; }'
req POST "/submissions?base64_encoded=false&wait=true&fields=status_id,stdout,compile_output" "${A[@]}" "${J[@]}" \
	--data-binary "$(jreq language_id=50 source_code="$(js "$C_LIB")" \
		additional_files="$(js "$(mkzip 'lib/sum.h=long sum(long a, long b);' 'lib/sum.c=#include "sum.h"
long sum(long a, long b) { return a + b; }')")")"
check "judge0 additional_files, C: lib/sum.c from the zip is compiled and linked with main.c" \
	eq "$last_code $(pj 'd["status_id"], d["stdout"], (d["compile_output"] or "")[:200]')" "201 3 42
 "
J_PKG='import com.acme.Sum;
public class Main { public static void main(String[] a) { System.out.println(Sum.of(20, 22)); } }'
req POST "/submissions?base64_encoded=false&wait=true&fields=status_id,stdout,compile_output" "${A[@]}" "${J[@]}" \
	--data-binary "$(jreq language_id=62 source_code="$(js "$J_PKG")" \
		additional_files="$(js "$(mkzip 'com/acme/Sum.java=package com.acme;
public class Sum { public static long of(long a, long b) { return a + b; } }')")")"
check "judge0 additional_files, Java: the package com.acme from the zip is compiled with Main" \
	eq "$last_code $(pj 'd["status_id"], d["stdout"], (d["compile_output"] or "")[:200]')" "201 3 42
 "
check_alive "the several-files group"

# ------------------------------------- (c4) a course's grades
# 30 students labelled on their submissions for assignment "hw1": s01-s10
# pass both tests (score 1), s11-s20 one (0.5), s21-s30 none (0); s01-s05
# then submit again, failing both. Latest: s01-s05 get 0; best: 1.
gbody() { # student assignment source
	python3 -c 'import json,sys; print(json.dumps({"language": "python3", "source": sys.argv[3], "student": sys.argv[1],
"assignment": sys.argv[2], "tests": [{"input": "1 2\n", "expected": "3\n"}, {"input": "20 22\n", "expected": "42\n"}]}))' "$@"
}
PASS_ALL='print(sum(map(int, input().split())))'
# A class submits at once: tenant a's rate limit is raised for it.
"$BUILD/gavel" tenant update "$TA_NAME" --quota requests_per_second=1000 --quota burst=1000 >>"$TMP/cli.log" 2>&1 ||
	bail "tenant update: $(tail -n 3 "$TMP/cli.log")"
GRADE_IDS=()
GRADE_POSTS=""
for i in $(seq -w 1 30); do
	if [ "$i" -le 10 ]; then src=$PASS_ALL; elif [ "$i" -le 20 ]; then src='print(3)'; else src='print(0)'; fi
	req POST /v1/submissions "${A[@]}" "${J[@]}" --data-binary "$(gbody "s$i" hw1 "$src")"
	GRADE_POSTS+="$last_code "
	GRADE_IDS+=("$(pj 'd["id"]')")
done
for i in 1 2 3 4 5; do
	req POST /v1/submissions "${A[@]}" "${J[@]}" --data-binary "$(gbody "s0$i" hw1 'print(0)')"
	GRADE_POSTS+="$last_code "
	GRADE_IDS+=("$(pj 'd["id"]')")
done
req POST /v1/submissions "${A[@]}" "${J[@]}" --data-binary "$(gbody "Ada, \"the\" first" "Week 2" "$PASS_ALL")"
GRADE_IDS+=("$(pj 'd["id"]')")
GRADE_POSTS+="$last_code "
# A label a spreadsheet would run as a formula.
req POST /v1/submissions "${A[@]}" "${J[@]}" --data-binary "$(gbody '=HYPERLINK("x")' "Week 2" 'print(0)')"
GRADE_IDS+=("$(pj 'd["id"]')")
GRADE_POSTS+="$last_code"
[ "$GRADE_POSTS" = "$(printf '201 %.0s' $(seq 36))201" ] || say "grades: POSTs answered $GRADE_POSTS"
# Every one finished (polled: a GET does not wait).
for id in "${GRADE_IDS[@]}"; do
	for _ in $(seq 240); do
		req GET "/v1/submissions/$id" "${A[@]}"
		[ "$(pj 'd["status"]')" = done ] && break
		sleep 0.5
	done
done
want=$(for i in $(seq -w 1 30); do
	if [ "$i" -le 5 ]; then s=0; elif [ "$i" -le 10 ]; then s=1; elif [ "$i" -le 20 ]; then s=0.5; else s=0; fi
	echo "s$i,$s"; done)
req GET "/v1/assignments/hw1/grades?format=csv" "${A[@]}"
got=$(tr -d '\r' <<<"$last_body" | awk -F, 'NR > 1 && NF > 1 { printf "%s,%g\n", $1, $2 }')
check "grades of hw1 as CSV, latest submission per student: 30 students, each as the fixtures expect" \
	eq "$last_code $(head -n1 <<<"$last_body" | tr -d '\r')|$got" "200 student,score,verdict,submission,submitted_at,submissions|$want"
req GET "/v1/assignments/hw1/grades?rule=best" "${A[@]}"
check "grades of hw1, best per student (JSON): s01-s05 keep their 1, each with 2 submissions" \
	eq "$last_code $(pj '[(s["student"], s["score"], s["submissions"]) for s in d["students"][:6]], len(d["students"])')" \
	"200 [('s01', 1.0, 2), ('s02', 1.0, 2), ('s03', 1.0, 2), ('s04', 1.0, 2), ('s05', 1.0, 2), ('s06', 1.0, 1)] 30"
req GET "/v1/grades?assignment=Week%202" "${A[@]}" -H 'Accept: text/csv'
check "any assignment label through ?assignment=, CSV by Accept: the student label quoted" \
	eq "$last_code $(tr -d '\r' <<<"$last_body" | grep '^"Ada' | cut -d, -f1-3)" '200 "Ada, ""the"" first",1'
check "a student label starting with = is quoted and prefixed in the CSV, never a bare formula" \
	eq "$(tr -d '\r' <<<"$last_body" | grep -c '^=')|$(tr -d '\r' <<<"$last_body" | grep -F '"'"'"'=HYPERLINK(""x"")"' | cut -d, -f1-2)" \
	"0|\"'=HYPERLINK(\"\"x\"\")\",0"
labels=$(sql -c "SELECT details->>'student', details->>'assignment' FROM audit_log WHERE action = 'submission.created'
	AND object = '${GRADE_IDS[0]}'")
check "the audit says who submitted for what (submission.created: student and assignment)" eq "$labels" "s01|hw1"
req GET "/v1/assignments/hw1/grades" "${Bk[@]}"
check "another tenant sees no grades of hw1" eq "$last_code $(pj 'd["students"]')" "200 []"
req POST /v1/submissions "${A[@]}" "${J[@]}" --data-binary "$(gbody "$(printf 'bad\tname')" hw1 "$PASS_ALL")"
check "a student label with a control character -> 400 naming the field" eq "$last_code $(pj '"student" in d["error"]["message"]')" "400 True"
req GET "/v1/grades?assignment=hw1&rule=worst" "${A[@]}"
check "grades with an unknown rule -> 400" code_is 400
check_alive "the grades group"

# --------------------------------------------------------- (d) Piston

req GET /api/v2/runtimes
check "piston runtimes: python, c, java with versions" eq "$(pj 'sorted(r["language"] for r in d if r["language"] in ("python", "c", "java")), all(r["version"].count(".") == 2 for r in d)')" "['c', 'java', 'python'] True"
req POST /api/v2/execute "${A[@]}" -H 'Content-Type: text/plain' \
	-d '{"language":"python","version":"3.x","files":[{"name":"main.py","content":"import sys\nprint(sys.stdin.read().upper())"}],"stdin":"piston"}'
check "piston execute (text/plain): run.stdout, code 0, no compile stage for Python (as Piston)" eq "$last_code $(pj 'repr(d["run"]["stdout"]), d["run"]["code"], d["language"], "compile" in d')" "200 'PISTON\n' 0 python False"
req POST /api/v2/execute "${A[@]}" -H 'Content-Type: text/plain' \
	-d "$(python3 -c 'import json,sys; print(json.dumps({"language":"gcc","version":"*","files":[{"content":sys.argv[1]}],"stdin":"2 3"}))' "$C_SUM")"
check "piston execute C: compile stage and run.stdout" eq "$last_code $(pj 'd["compile"]["code"], repr(d["run"]["stdout"]), d["run"]["signal"]')" "200 0 '5\n' None"
req POST /api/v2/execute "${A[@]}" -H 'Content-Type: text/plain' -d '{"language":"c","version":"*","files":[{"content":"int main( {"}]}'
check "piston execute C with a syntax error: compile.code 1, compile.stderr, no run stage (as Piston)" eq "$last_code $(pj 'd["compile"]["code"], "error" in d["compile"]["stderr"], d["compile"]["status"], "run" in d')" "200 1 True RE False"
req POST /api/v2/execute "${A[@]}" -H 'Content-Type: text/plain' -d '{"language":"python","version":"*","files":[{"content":"print(("}]}'
check "piston execute Python with a syntax error: the run fails (code 1, SyntaxError on stderr), no compile stage" eq "$last_code $(pj 'd["run"]["code"], "SyntaxError" in d["run"]["stderr"], d["run"]["status"], "compile" in d')" "200 1 True RE False"
req POST /api/v2/execute "${A[@]}" -H 'Content-Type: text/plain' -d '{"language":"py","version":"*","files":[{"content":"import os\nos.kill(os.getpid(), 11)"}]}'
check "piston execute killed by a signal: run.signal SIGSEGV, code null" eq "$last_code $(pj 'd["run"]["signal"], d["run"]["code"]')" "200 SIGSEGV None"
req POST /api/v2/execute "${A[@]}" -H 'Content-Type: text/plain' -d '{"language":"py","version":"*","run_timeout":500,"files":[{"content":"while True: pass"}]}'
check "piston execute over run_timeout: status TO" eq "$last_code $(pj 'd["run"]["status"]')" "200 TO"
req POST /api/v2/execute "${A[@]}" -H 'Content-Type: text/plain' --data-binary "$(python3 -c 'import json,sys; print(json.dumps({"language":"py","version":"*","files":[{"content":sys.argv[1]}]}))' "$BYTES_PY")"
check "piston execute with NUL and invalid UTF-8 in the output -> 200 JSON" eq "$last_code $(pj 'd["run"]["stdout"].startswith("a")')" "200 True"
check_alive "the Piston group"

# ------------- (d2) what a run adds to its commands (frontend/api_words.c)

PY_ARGV='import sys
print(sys.argv[1:])'
req POST /api/v2/execute "${A[@]}" "${J[@]}" --data-binary "$(jreq language='"python"' version='"*"' \
	files="[{\"content\": $(js "$PY_ARGV")}]" args='["1", "two words", ""]')"
check "piston execute with args: the program's argv after its command" eq "$last_code $(pj 'd["run"]["stdout"]')" "200 ['1', 'two words', '']"
C_CMDS='#include <stdio.h>
int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	for (int i = 1; i < argc; i++) printf("[%s]", argv[i]);
#ifdef ONLINE_JUDGE
	printf(" oj");
#endif
	printf("\no1\n"); fprintf(stderr, "e1\n"); printf("o2\n"); return 0; }'
req POST "/submissions?wait=true&fields=stdout,stderr,status_id" "${A[@]}" "${J[@]}" --data-binary "$(jreq language_id=50 \
	source_code="$(js "$C_CMDS")" command_line_arguments="$(js "a 'b c' \"\$HOME\"")" \
	compiler_options='"-O0 -DONLINE_JUDGE"' redirect_stderr_to_stdout=true)"
check "judge0 command_line_arguments split as sh does (nothing expanded), compiler_options, stderr into stdout in order" \
	eq "$last_code $(pj 'd["status_id"], repr(d["stdout"]), d["stderr"]')" "201 3 '[a][b c][\$HOME] oj\no1\ne1\no2\n' None"
req POST "/submissions?wait=true&fields=stdout,stderr,status_id" "${A[@]}" "${J[@]}" --data-binary "$(jreq language_id=50 \
	source_code="$(js "$C_CMDS")")"
check "judge0 without them: no arguments, no macro, stderr apart" eq "$last_code $(pj 'd["status_id"], repr(d["stdout"]), d["stderr"]')" "201 3 '\no1\no2\n' e1"
req POST "/submissions?wait=true" "${A[@]}" "${J[@]}" --data-binary "$(jreq language_id=50 source_code='"int main(void){return 0;}"' \
	compiler_options='"-fplugin=/tmp/x.so"')"
check "judge0 compiler_options outside the language's allowlist -> 422" eq "$last_code $(pj '"-fplugin" in str(d)')" "422 True"
C_DEEP='#include <string.h>
static int down(int n) { volatile char pad[1024]; memset((char *)pad, n, sizeof pad); return n ? down(n - 1) + pad[7] : 0; }
int main(void) { return down(16384) == -1; }'
req POST "/submissions?wait=true&fields=status_id,exit_signal" "${A[@]}" "${J[@]}" --data-binary "$(jreq language_id=50 \
	source_code="$(js "$C_DEEP")" stack_limit=8000)"
check "judge0 stack_limit 8000 KB: a 16 MiB recursion is a runtime error (SIGSEGV)" eq "$last_code $(pj 'd["status_id"], d["exit_signal"]')" "201 7 11"
req POST "/submissions?wait=true&fields=status_id" "${A[@]}" "${J[@]}" --data-binary "$(jreq language_id=50 source_code="$(js "$C_DEEP")")"
check "judge0 without stack_limit: the stack may use the memory limit, the recursion is accepted" eq "$last_code $(pj 'd["status_id"]')" "201 3"
req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" --data-binary "$(jreq language='"python3"' source="$(js "$PY_ARGV")" args='["x"]')"
check "native args" eq "$last_code $(pj 'd["result"]["stdout"]')" "201 ['x']"
req POST "/submissions?wait=true&fields=stdout,stderr,status_id" "${A[@]}" "${J[@]}" --data-binary "$(jreq language_id=71 \
	source_code='"import sys\nprint(1)\nsys.stderr.write(\"warn\\n\")"' expected_output='"1"')"
check "judge0 with expected_output: the judged test's stdout and stderr" eq "$last_code $(pj 'd["status_id"], repr(d["stdout"]), repr(d["stderr"])')" "201 3 '1\n' 'warn\n'"
PY_ORDER='import sys, time
print("o1", flush=True); time.sleep(0.05)
sys.stderr.write("e1\n"); sys.stderr.flush(); time.sleep(0.05)
print("o2", flush=True)'
req POST /api/v2/execute "${A[@]}" "${J[@]}" --data-binary "$(jreq language='"python"' version='"*"' files="[{\"content\": $(js "$PY_ORDER")}]")"
check "piston run.output: stdout and stderr in the order written" eq "$last_code $(pj 'repr(d["run"]["output"]), repr(d["run"]["stdout"])')" "200 'o1\ne1\no2\n' 'o1\no2\n'"
check_alive "the commands group"

# -------------------------------------- (e) 30 submissions in parallel

mkdir -p "$TMP/par"
par_submit() { # index
	local i=$1 key=$KA lang=python3 src=$PY_SUM want=AC
	[ $((i % 2)) -eq 1 ] && key=$KB
	case $((i % 5)) in
	1) src='print(0)' want=WA ;;
	2) lang=c src=$C_SUM ;;
	3) lang=c src='int main( {' want=CE ;;
	esac
	curl -s -m 60 -o "$TMP/par/$i.json" -w '%{http_code}' -H "X-Auth-Token: $key" "${J[@]}" \
		--data-binary "$(body "$lang" "$src")" "$B/v1/submissions" >"$TMP/par/$i.code"
	echo "$want" >"$TMP/par/$i.want"
}
t0=$(date +%s)
# (wait with pids: the daemons are children of this shell too)
jobs_=()
for i in $(seq 0 29); do
	par_submit "$i" &
	jobs_+=($!)
done
wait "${jobs_[@]}"
created=0
declare -A PWANT=()
for i in $(seq 0 29); do
	if [ "$(cat "$TMP/par/$i.code")" = 201 ]; then
		created=$((created + 1))
		id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$TMP/par/$i.json")
		PWANT[$id]=$(cat "$TMP/par/$i.want")
	fi
done
check "30 parallel creates from two tenants -> 30 x 201" eq "$created" 30
ids_sql=$(printf "'%s'," "${!PWANT[@]}")
ids_sql=${ids_sql%,}
pending=-1
for _ in $(seq 1 300); do
	pending=$(sql -c "SELECT count(*) FROM submissions WHERE id IN ($ids_sql) AND status <> 'done'")
	[ "$pending" = 0 ] && break
	sleep 0.5
done
check "all 30 finished ($(($(date +%s) - t0)) s)" eq "$pending" 0
# audit COUNT ACTION: the per-submission count of one audit action.
aud() { printf "(SELECT count(*) FROM audit_log a WHERE a.tenant_id = s.tenant_id AND a.object = s.id AND a.action = '%s')" "$1"; }
par_verify() {
	local bad=0 id v created started finished rows=0
	while IFS='|' read -r id v created started finished; do
		rows=$((rows + 1))
		if [ "$v" != "${PWANT[$id]}" ] || [ "$created" != 1 ] || [ "$started" -lt 1 ] || [ "$finished" != 1 ]; then
			say "$id: verdict $v (want ${PWANT[$id]}), audit: created $created, started $started, finished $finished"
			bad=1
		fi
	done < <(sql -c "SELECT s.id, s.verdict, $(aud submission.created), $(aud sandbox.started),
		$(aud sandbox.finished) FROM submissions s WHERE s.id IN ($ids_sql)")
	[ $rows -eq 30 ] || { say "rows: $rows of 30"; bad=1; }
	return $bad
}
check "each: the expected verdict; audit: one submission.created, sandbox.started, one sandbox.finished" par_verify
check "both tenants own their 15" eq "$(sql -c "SELECT string_agg(c::text, ',' ORDER BY c) FROM (SELECT count(*) c FROM submissions WHERE id IN ($ids_sql) GROUP BY tenant_id) x")" "15,15"
check "queues drained, nothing in flight" eq "$(rc EVAL "return #redis.call('KEYS','gavel:tq:*') + redis.call('LLEN','gavel:inflight:$NODE') + redis.call('LLEN','gavel:nq:$NODE') + redis.call('HLEN','gavel:attempts')" 0)" 0
check_alive "the parallel group"

# ----------------------------------------------------- (f) rate limit

"$BUILD/gavel" tenant update "$TB_NAME" --quota requests_per_second=5 --quota burst=5 >"$TMP/update.log" 2>&1
check "gavel tenant update --quota requests_per_second=5 --quota burst=5" eq "$?" 0
sleep 1.2 # the frontends' key cache holds a quota for at most 1 s
mkdir -p "$TMP/rl"
# 30 requests from 6 threads on kept-alive connections: one curl process
# per request took seconds on a loaded 2-core machine, long enough for the
# bucket to refill. Each answer's status and headers go to rl/N.code, N.h.
python3 - "$B" "$KB" "$TMP/rl" <<'PY'
import http.client, sys, threading, urllib.parse
base, key, out = sys.argv[1], sys.argv[2], sys.argv[3]
u = urllib.parse.urlsplit(base)
todo, lock = iter(range(1, 31)), threading.Lock()
def worker():
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
    while True:
        with lock:
            i = next(todo, None)
        if i is None:
            return
        code, head = 0, ""
        try:
            c.request("GET", "/v1/submissions/AAAAAAAAAAAAAAAAAAAAAA", headers={"Authorization": "Bearer " + key})
            r = c.getresponse()
            r.read()
            code, head = r.status, "".join("%s: %s\r\n" % kv for kv in r.getheaders())
        except (OSError, http.client.HTTPException):
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
        with open("%s/%d.code" % (out, i), "w") as f:
            f.write("%d\n" % code)
        with open("%s/%d.h" % (out, i), "w") as f:
            f.write(head)
threads = [threading.Thread(target=worker) for _ in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
PY
n429=$(cat "$TMP/rl"/*.code | grep -c '^429$')
n404=$(cat "$TMP/rl"/*.code | grep -c '^404$')
say "burst of 30 at 5/s (burst 5): $n404 passed, $n429 refused"
check "a burst over the limit: some 429, the bucket's worth pass" bash -c "[ $n429 -ge 15 ] && [ $n404 -ge 4 ] && [ $((n404 + n429)) -eq 30 ]"
rl_headers_ok() {
	local f
	for f in "$TMP"/rl/*.code; do
		[ "$(cat "$f")" = 429 ] || continue
		local h=${f%.code}.h
		tr -d '\r' <"$h" | grep -qi '^Retry-After: [1-9][0-9]*$' &&
			tr -d '\r' <"$h" | grep -qi '^X-RateLimit-Limit: 5$' &&
			tr -d '\r' <"$h" | grep -qi '^X-RateLimit-Remaining: 0$' &&
			tr -d '\r' <"$h" | grep -qi '^X-RateLimit-Reset: [0-9][0-9]*$' || { sed 's/^/# /' "$h"; return 1; }
	done
	return 0
}
check "every 429 has Retry-After and X-RateLimit-Limit/Remaining/Reset" rl_headers_ok
req GET /v1/submissions/AAAAAAAAAAAAAAAAAAAAAA "${A[@]}"
check "the other tenant is not limited by it" code_is 404
"$BUILD/gavel" tenant update "$TB_NAME" --quota requests_per_second=20 --quota burst=40 >>"$TMP/update.log" 2>&1
check_alive "the rate-limit group"

# --------------------------------------------------- (g) bad input

req POST /v1/submissions "${A[@]}" "${J[@]}" -d '{"language": "python3", "source": '
check "malformed JSON -> 400 invalid_json" eq "$last_code $(pj 'd["error"]["code"]')" "400 invalid_json"
head -c 100000 /dev/zero | tr '\0' 'x' >"$TMP/big"
req POST /v1/submissions "${A[@]}" "${J[@]}" --data-binary @"$TMP/big"
check "oversized body -> 413" code_is 413
head -c 1000000 /dev/zero | tr '\0' 'x' >"$TMP/huge"
req POST /v1/submissions "${A[@]}" "${J[@]}" --data-binary @"$TMP/huge"
check "body far over the limit -> 413 or closed, never a crash" bash -c "[ '$last_code' = 413 ] || [ '$last_code' = 000 ]"
req POST /v1/submissions "${A[@]}" "${J[@]}" -d '{"language":"cobol","source":"x"}'
check "unknown language -> 422 unknown_language" eq "$last_code $(pj 'd["error"]["code"]')" "422 unknown_language"
# Odd requests each API must survive: each answers its status class.
odd=0
odd_req() { # expected-status-class method path body [content-type]
	req "$2" "$3" "${A[@]}" -H "Content-Type: ${5:-application/json}" --data-binary "$4"
	if [ "${last_code:0:1}" != "$1" ]; then
		say "$2 $3 ${4:0:80}: $last_code ${last_body:0:200}"
		odd=$((odd + 1))
	fi
}
odd_req 4 POST /v1/submissions '[]'
odd_req 4 POST /v1/submissions '"x"'
odd_req 4 POST /v1/submissions '{"language":"c","files":[{"name":"../x","content":"a"},{"name":"../x","content":"b"}]}'
odd_req 4 POST /v1/submissions '{"language":"c","source":"a","tests":[{"input":1}]}'
odd_req 4 POST /v1/submissions '{"language":"c","source":"a\u0000b"}'
odd_req 4 POST /v1/submissions '{"language":"c","source":"x","limits":{"time_ms":-1}}'
odd_req 4 POST /v1/submissions '{"language":"c","source":"x","checker":{"mode":"tokens","flags":"nonsense"}}'
odd_req 4 POST /v1/submissions '{"language":"c","source":"x","stdin":"1","tests":[{"input":"","expected":""}]}'
odd_req 4 POST /submissions '{"language_id":"abc","source_code":"x"}'
odd_req 4 POST /submissions '{"language_id":1e308,"source_code":"x"}'
odd_req 4 POST '/submissions?base64_encoded=true' '{"language_id":71,"source_code":"!!!"}'
odd_req 4 POST /submissions '{"language_id":71,"source_code":"x","cpu_time_limit":"NaN"}'
odd_req 4 POST /submissions '{"language_id":71,"source_code":"x","memory_limit":1e300}'
odd_req 4 POST /submissions/batch '{"submissions":[]}'
odd_req 4 POST /submissions/batch '{"submissions":[1,2,3]}'
odd_req 4 POST /submissions/batch "{\"submissions\":[$(printf '{"language_id":71,"source_code":"x"},%.0s' $(seq 1 30)){}]}"
odd_req 2 GET '/submissions/batch?tokens=,,,,' ''
odd_req 4 GET "/submissions/batch?tokens=$(printf 'A,%.0s' $(seq 1 40))" ''
odd_req 4 GET '/submissions/x?fields=nope' ''
odd_req 2 GET '/submissions?fields=token,&page=-5&per_page=100000' ''
odd_req 2 GET '/submissions?page=99999999999999999999' ''
odd_req 4 POST /api/v2/execute '{"language":"py","version":">=3 <2","files":[{"content":"x"}]}' text/plain
odd_req 4 POST /api/v2/execute '{"language":"py","version":"^","files":[{"content":"x"}]}' text/plain
odd_req 4 POST /api/v2/execute '{"language":"py","version":"1 - ","files":[{"content":"x"}]}' text/plain
odd_req 4 POST /api/v2/execute '{"language":"py","files":"x"}' text/plain
odd_req 4 POST /api/v2/execute '{"language":"py","files":[{"content":"zz","encoding":"hex"}]}' text/plain
odd_req 4 POST /api/v2/execute '{"language":"py","files":[{"content":"%%%","encoding":"base64"}]}' text/plain
odd_req 4 POST /api/v2/execute '{"language":"py","files":[{"content":"x"},{"content":"y"}]}' text/plain
odd_req 4 POST /api/v2/execute '{"language":"py","files":[{"content":"x"}],"args":[1]}' text/plain
odd_req 4 POST /api/v2/execute '{"language":"py","files":[{"content":"x"}],"args":"a b"}' text/plain
odd_req 4 POST /api/v2/execute '{"language":"py","files":[{"content":"x"}],"run_timeout":"x"}' text/plain
odd_req 4 GET /v1/submissions/%00 ''
odd_req 4 GET "/v1/submissions/$(printf 'A%.0s' $(seq 1 200))" ''
odd_req 4 GET "/v1/submissions/$(printf 'A%.0s' $(seq 1 200))/events" ''
odd_req 4 GET '/v1/submissions/AAAAAAAAAAAAAAAAAAAAAA?x=%zz' ''
odd_req 4 DELETE "/submissions/$SID_C?fields=bogus" ''
check "odd requests to every API answer 4xx" eq "$odd" 0
check_alive "the odd-request group"
# Raw protocol abuse: bad request lines, huge headers, slow and cut bodies.
python3 - "$P" <<-'PY' >"$TMP/raw.log" 2>&1
	import socket, sys, time
	port = int(sys.argv[1])
	def send(data, read=True):
	    s = socket.create_connection(("127.0.0.1", port), timeout=5)
	    try:
	        s.sendall(data)
	        if read:
	            try:
	                s.recv(4096)
	            except Exception:
	                pass
	    finally:
	        s.close()
	send(b"GARBAGE\r\n\r\n")
	send(b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"a" * 40000 + b"\r\n\r\n")
	send(b"POST /v1/submissions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"lang", read=False)
	send(b"POST /v1/submissions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", read=True)
	send(b"GET /v1/submissions/AAAAAAAAAAAAAAAAAAAAAA/events HTTP/1.1\r\nHost: x\r\nX-Auth-Token: nope\r\n\r\n")
	send(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n" * 50, read=False)
	print("raw done")
PY
check "raw protocol abuse (bad request line, 40 KB header, cut bodies, pipelining)" grep -q "raw done" "$TMP/raw.log"
check_alive "raw protocol abuse"
req GET /v1/health
check "the frontend still answers afterwards: /v1/health 200" code_is 200
req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" --data-binary "$(body python3 "$PY_SUM")"
check "and still judges: one more AC" eq "$last_code $(pj 'd["verdict"]')" "201 AC"

say "frontend log (warnings and errors):"
grep -E ' (warn|error|ERROR)' "$TMP/frontend.log" | head -n 10 | sed 's/^/#   /'
say "total $(($(date +%s) - T_START)) s"
[ $n -eq 85 ] || say "planned 85, ran $n"
[ $fails -eq 0 ]
