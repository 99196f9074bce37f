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
#      memory stays bounded.
# Each bound is printed. Needs root. TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..9"
. tests/lib/tap.sh
say() { echo "# $*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
# python3-websocket comes with the Jupyter clients' packages.
. tests/lib/jupyter.sh
jupyter_clients_ready || bail "the Jupyter clients (python3-websocket) cannot be installed"
/usr/bin/python3 -c 'import websocket' 2>/dev/null || bail "python3-websocket missing"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null || bail "python3-ipykernel missing (deploy/deps.sh)"
. tests/lib/stack.sh
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
