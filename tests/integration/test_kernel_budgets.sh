#!/usr/bin/env bash
# What one tenant's kernel channels can make the shared parts hold
# (executor/kernels/README.md, "Redis"; frontend/wsbudget.h), with real
# PostgreSQL, Redis, runsc and hostile WebSocket clients
# (tests/kernels/ws_attack.py):
#
#   1. a WebSocket to a queued kernel (no executor yet) that sends 20 MiB:
#      nothing reaches Redis, the frontend does not grow by it;
#   2. cancelling the queued kernel leaves no list or count in Redis;
#   3. the ninth WebSocket on one kernel is refused (websockets_per_kernel);
#   4. with the kernel running: a message in 5000 fragments ends that
#      client, not the frontend;
#   5. a client that never reads while its kernel prints 32 MiB is dropped
#      at its tenant's WebSocket share (2 MiB here), and the frontend's
#      memory stays bounded;
#   6. revoking the key of an open WebSocket closes it within 30 s (1008);
#   7. `gavel tenant disable` stops the tenant's running kernel (reason
#      tenant_disabled) and finishes its queued one, both audited.
# Each bound is printed. Needs root. TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..15"
. tests/lib/tap.sh
say() { echo "# $*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
# python3-websocket comes with the Jupyter clients' packages.
. tests/lib/jupyter.sh
jupyter_clients_ready || bail "the Jupyter clients (python3-websocket) cannot be installed"
/usr/bin/python3 -c 'import websocket' 2>/dev/null || bail "python3-websocket missing"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null || bail "python3-ipykernel missing (deploy/deps.sh)"
. tests/lib/stack.sh
# Under AddressSanitizer (make asan) freed memory waits in a quarantine
# (256 MiB by default) that counts in the RSS measured below: keep it
# small, so that the bounds measure the frontend's buffers.
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=1:thread_local_quarantine_size_kb=64"
stack_setup kbudget

stack_tenant "${TAG}_k" --quota requests_per_second=1000 --quota burst=1000 --quota max_kernels=4 --quota max_running=4
GAVEL_FRONTEND_WEBSOCKET_MEMORY_PER_TENANT=2m GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
wait_for 20 curl -sf -o /dev/null -H "Authorization: token $KEY" "$B/api/kernelspecs" || bail "frontend not answering"

new_kernel() {
	curl -s -X POST -H "Authorization: token $KEY" -H 'Content-Type: application/json' \
		--data '{"name":"python3"}' "$B/api/kernels" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$PID_FE/status"; }
redis_mem() { rc INFO memory | tr -d '\r' | awk -F: '/^used_memory:/ {print $2}'; }
attack() { timeout 120 /usr/bin/python3 tests/kernels/ws_attack.py "$B" "$KEY" "$@" 2>>"$TMP/attack.err"; }

# ---- 1-2. a queued kernel ----
K1=$(new_kernel)
[ -n "$K1" ] || bail "no kernel created"
rss0=$(rss_kb)
mem0=$(redis_mem)
out=$(attack "$K1" flood)
rss1=$(rss_kb)
mem1=$(redis_mem)
say "flood of a queued kernel: client $out of 20 MiB; frontend RSS $rss0 -> $rss1 KB; Redis used_memory $mem0 -> $mem1"
check "nothing is pushed to Redis for a queued kernel (no gavel:kin list)" test "$(rc EXISTS "gavel:kin:$K1")" = 0
check "Redis grew by less than 1 MiB ($((mem1 - mem0)) bytes)" test $((mem1 - mem0)) -lt 1048576
check "the frontend grew by less than 8 MiB ($((rss1 - rss0)) KB)" test $((rss1 - rss0)) -lt 8192
st=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: token $KEY" "$B/api/kernels/$K1")
left=$(rc --scan --pattern "gavel:kin*" | wc -l)
check "a cancelled queued kernel leaves no list or count in Redis (DELETE $st, $left keys)" test "$st" = 204 -a "$left" = 0

# ---- 3. connections per kernel ----
K2=$(new_kernel)
codes=$(attack "$K2" conns)
say "nine WebSockets on one kernel: $codes"
check "eight WebSockets on one kernel are taken, the ninth is refused with 503" \
	test "$codes" = "101 101 101 101 101 101 101 101 503"
curl -s -o /dev/null -X DELETE -H "Authorization: token $KEY" "$B/api/kernels/$K2"

# ---- 4-5. a running kernel ----
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
GAVEL_EXECUTOR_NODE_NAME=kb-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_KERNEL_POOL=0 \
	stack_start_executor executor.log
stack_wait_healthy 120 "$PID_EXEC" "$PID_FE"
K3=$(new_kernel)
running() { [ "$(rc EXISTS "gavel:kstate:$1")" = 1 ]; }
wait_for 90 running "$K3" || say "kernel $K3 did not start in 90 s"
out=$(attack "$K3" frags)
alive=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: token $KEY" "$B/api/kernels/$K3")
check "a message in 5000 fragments ends its client ($out), the frontend serves on ($alive)" \
	test "$out" = dropped -a "$alive" = 200
rss0=$(rss_kb)
out=$(attack "$K3" noread)
rss1=$(rss_kb)
say "a client that never reads 32 MiB of output: $out; frontend RSS $rss0 -> $rss1 KB"
check "a client that never reads is dropped at its tenant's WebSocket share ($out)" test "$out" = dropped
check "the frontend grew by less than 16 MiB ($((rss1 - rss0)) KB)" test $((rss1 - rss0)) -lt 16384
grep -q "past the WebSocket memory budget" "$TMP/frontend.log"
check "the frontend says why it dropped the client" test $? = 0
curl -s -o /dev/null -X DELETE -H "Authorization: token $KEY" "$B/api/kernels/$K3"

# hold KID TOKEN OUT: a WebSocket held open in the background; OUT gets
# "live" once its kernel answers, then "closed CODE T". Waits for "live".
hold() {
	timeout 200 /usr/bin/python3 tests/kernels/ws_attack.py "$B" "$2" "$1" hold >"$3" 2>>"$TMP/attack.err" &
	wait_for 100 grep -q '^live' "$3"
}
# seconds_since T0 LINE: LINE's last word (a Unix time) minus T0.
seconds_since() { /usr/bin/python3 -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "${2##* }" 2>/dev/null; }
closed_1008_within() { # line seconds limit
	/usr/bin/python3 -c 'import sys; sys.exit(0 if sys.argv[1].startswith("closed 1008 ") and float(sys.argv[2]) <= float(sys.argv[3]) else 1)' "$@"
}

# ---- 6. a revoked key ----
KEY_K=$KEY
KEY2=$("$BUILD/gavel" key create --tenant "${TAG}_k" --label revoked 2>>"$TMP/cli.log")
KEY2_ID=$("$BUILD/gavel" key list --tenant "${TAG}_k" 2>>"$TMP/cli.log" | awk '/revoked/ {print $1; exit}')
KEY=$KEY2 K4=$(new_kernel)
hold "$K4" "$KEY2" "$TMP/hold4" || say "kernel $K4 never answered: $(cat "$TMP/hold4")"
t0=$(date +%s.%N)
"$BUILD/gavel" key revoke "$KEY2_ID" >>"$TMP/cli.log" 2>&1 || say "key revoke failed: $(tail -n2 "$TMP/cli.log")"
wait_for 45 grep -qE '^(closed|open)' "$TMP/hold4"
res=$(tail -n1 "$TMP/hold4")
took=$(seconds_since "$t0" "$res")
say "revoked key: the WebSocket: $(tr '\n' ' ' <"$TMP/hold4")(${took:-?} s after the revoke)"
check "a revoked key's open WebSocket is closed with 1008 within 30 s (${took:-never} s)" \
	closed_1008_within "$res" "${took:-99}" 30
KEY=$KEY_K
curl -s -o /dev/null -X DELETE -H "Authorization: token $KEY" "$B/api/kernels/$K4"

# ---- 7. a disabled tenant ----
stack_tenant "${TAG}_d" --quota requests_per_second=1000 --quota burst=1000 --quota max_kernels=4 --quota max_running=1
TID_D=$TID
KEY_D=$KEY
D1=$(new_kernel)
hold "$D1" "$KEY_D" "$TMP/holdD" || say "kernel $D1 never answered: $(cat "$TMP/holdD")"
D2=$(new_kernel) # queued: the tenant runs one at a time
KEY=$KEY_K
t0=$(date +%s.%N)
"$BUILD/gavel" tenant disable "${TAG}_d" >"$TMP/disable.out" 2>&1
say "gavel tenant disable: $(tr '\n' ' ' <"$TMP/disable.out")"
ended() { [ "$(sql -c "SELECT status FROM submissions WHERE id = '$1'")" = done ]; }
wait_for 30 ended "$D1"
reason1=$(sql -c "SELECT result->'kernel'->>'reason' FROM submissions WHERE id = '$D1'")
reason2=$(sql -c "SELECT status || ' ' || coalesce(result->'kernel'->>'reason', '') FROM submissions WHERE id = '$D2'")
wait_for 10 grep -qE '^(closed|open)' "$TMP/holdD"
took=$(seconds_since "$t0" "$(tail -n1 "$TMP/holdD")")
say "disabled tenant: running kernel: ${reason1:-not ended}; queued kernel: $reason2; its WebSocket: $(tail -n1 "$TMP/holdD") (${took:-?} s)"
check "tenant disable stops its running kernel (reason: ${reason1:-none})" test "$reason1" = tenant_disabled
check "tenant disable finishes its queued kernel ($reason2)" test "$reason2" = "done tenant_disabled"
check "the running kernel's WebSocket is closed within 30 s (${took:-never} s)" \
	/usr/bin/python3 -c 'import sys; sys.exit(0 if sys.argv[1].startswith("closed ") and float(sys.argv[2]) <= 30 else 1)' \
	"$(tail -n1 "$TMP/holdD")" "${took:-99}"
stops() { sql -c "SELECT count(*) FROM audit_log WHERE tenant_id = '$TID_D' AND action = 'kernel.stopped' AND details->>'reason' = 'tenant_disabled'"; }
both_stopped() { [ "$(stops)" -ge 2 ]; }
wait_for 20 both_stopped
nstop=$(stops)
check "both ends are in the tenant's audit log as kernel.stopped, reason tenant_disabled ($nstop)" test "$nstop" -ge 2
left=$(rc --scan --pattern "gavel:kin*" | wc -l)
check "no kernel list or count is left in Redis ($left keys)" test "$left" = 0
