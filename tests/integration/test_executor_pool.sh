#!/usr/bin/env bash
# The executor's pool of sandboxes created ahead of demand
# (executor/sandbox/pool.h, executor.pool_size) in the running service: with one
# worker and a pool of one, Python submissions of one tenant end AC with
# their own output and the worker's log counts pool hits; while idle the
# worker holds exactly one created sandbox; a graceful stop destroys it
# (no container, no work dir left); a finished job's sandbox is deleted
# before the pool creates the next one, so it is no longer listed (in any
# state) 2 s after the job's answer; after a kill -9 of the executor a new
# one with executor.pool_size = 0 sweeps what was left and still judges.
#
# Uses the harness's PostgreSQL and Redis when set (tests/run.sh), else
# starts its own (tests/lib/stack.sh). Needs root (runsc, cgroups). TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..10"
. tests/lib/tap.sh

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid runsc; do command -v "$c" >/dev/null || bail "$c missing"; done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup pool
TN=${TAG}_t
"$BUILD/gavel" tenant create "$TN" >/dev/null 2>"$TMP/cli.log" || bail "tenant create: $(cat "$TMP/cli.log")"
K=$("$BUILD/gavel" key create --tenant "$TN" 2>>"$TMP/cli.log") || bail "key create: $(cat "$TMP/cli.log")"

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	GAVEL_SCHEDULER_NODE_HEARTBEAT_TIMEOUT=5s \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
NODE=node-$TAG
W0=$RUNSC_ROOT/$NODE/w0
start_executor() { # pool_size
	GAVEL_EXECUTOR_NODE_NAME=$NODE GAVEL_EXECUTOR_MAX_PARALLEL=1 GAVEL_EXECUTOR_BURST_SLOTS=0 \
		GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s GAVEL_EXECUTOR_POOL_SIZE=$1 \
		stack_start_executor executor.log
}
start_executor 1
GAVEL_FRONTEND_THREADS=1 GAVEL_FRONTEND_WAIT_TIMEOUT=60s GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend

wait_node() { # the executor registered (SISMEMBER gavel:executors)
	for _ in $(seq 300); do
		[ "$(rc SISMEMBER gavel:executors "$NODE")" = 1 ] && return 0
		kill -0 "$PID_EXEC" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# submit TAG: a Python program printing TAG and what /box holds; prints
# "verdict|stdout" of the finished result.
submit() {
	local src body
	src="import os\\nprint('$1', sorted(os.listdir('/box')))"
	body=$(printf '{"language":"python3","source":"%s"}' "$src")
	curl -s -m 90 -X POST "$B/v1/submissions?wait=true" -H "X-Auth-Token: $K" \
		-H 'Content-Type: application/json' -d "$body" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print("%s|%s" % (d.get("verdict"), ((d.get("result") or {}).get("stdout") or "").strip()))' 2>/dev/null
}
containers() { runsc --root "$W0" list --quiet 2>/dev/null | grep -c .; }
listing() { runsc --root "$W0" list 2>/dev/null | awk 'NR > 1 {print $1, $3}' | tr '\n' ';'; }
# The worker holds exactly one sandbox, the pool's, in state created.
one_created() { [ "$(runsc --root "$W0" list 2>/dev/null | awk 'NR > 1 {print $3}' | tr '\n' ' ')" = "created " ]; }
# No sandbox but the pool's (being created or created) is listed: the
# finished job's own is gone, in any state.
only_pool() { ! runsc --root "$W0" list 2>/dev/null | awk 'NR > 1 && $3 != "created" && $3 != "creating"' | grep -q .; }
ms() { echo $(($(date +%s%N) / 1000000)); }
work_dirs() { find "$WORK_ROOT" -mindepth 3 -maxdepth 3 -name 'gv-*' 2>/dev/null | grep -c .; }

wait_node || bail "the executor did not register: $(tail -n5 "$TMP/executor.log")"
# What /box holds for a Python job: its source, the job record and what
# the compile step (py_compile) made; nothing of another job.
BOX="['__pycache__', 'job', 'main.py']"
good=1
out=""
for i in 1 2 3 4; do
	r=$(submit "job$i")
	out="$out $r"
	[ "$r" = "AC|job$i $BOX" ] || good=0
done
if [ $good = 1 ]; then ok "4 jobs through the pool: AC, each with its own output and files"; else notok "4 jobs through the pool" "$out"; fi
for _ in $(seq 300); do one_created && break; sleep 0.1; done
if one_created; then ok "idle worker holds one created sandbox"; else notok "idle worker holds one created sandbox" "$(listing)"; fi

kill -TERM -- "-$PID_EXEC"
for _ in $(seq 150); do kill -0 "$PID_EXEC" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$PID_EXEC" 2>/dev/null; then notok "executor stops on SIGTERM"; else ok "executor stops on SIGTERM"; fi
hits=$(sed -n 's/.*worker 0: pool hits \([0-9]*\),.*/\1/p' "$TMP/executor.log" | tail -n1)
if [ "${hits:-0}" -ge 2 ]; then ok "pool hits logged: $hits of 4 jobs"; else notok "pool hits >= 2" "$(grep 'pool' "$TMP/executor.log" | tail -n3)"; fi
if [ "$(containers)" = 0 ] && [ "$(work_dirs)" = 0 ]; then
	ok "stop destroyed the pooled sandbox: no container, no work dir"
else
	notok "stop destroyed the pooled sandbox" "containers $(containers), work dirs $(work_dirs)"
fi

# A crash with a filled pool, then a node without a pool.
start_executor 1
wait_node || bail "the executor did not restart: $(tail -n5 "$TMP/executor.log")"
r=$(submit crash)
# The finished job's sandbox is deleted before the pool creates the next
# one (executor/sandbox/pool.h): within 2 s of the answer it is no longer
# listed.
t_done=$(ms)
while ! only_pool && [ $(($(ms) - t_done)) -lt 2000 ]; do sleep 0.05; done
if only_pool; then
	ok "the finished sandbox is gone $(($(ms) - t_done)) ms after the job's answer"
else
	notok "the finished sandbox is gone within 2 s of the job's answer" "$(listing)"
fi
for _ in $(seq 300); do one_created && break; sleep 0.1; done
if one_created; then ok "pool refilled before the crash ($r)"; else notok "pool refilled before the crash" "$r; $(listing)"; fi
{
	kill -KILL -- "-$PID_EXEC"
	wait "$PID_EXEC"
} 2>/dev/null
rc DEL gavel:executors >/dev/null
start_executor 0
wait_node || bail "the executor did not start after the crash: $(tail -n5 "$TMP/executor.log")"
r=$(submit nopool)
if [ "$r" = "AC|nopool $BOX" ]; then ok "pool_size 0: job AC"; else notok "pool_size 0: job AC" "$r"; fi
sleep 1.5
if [ "$(containers)" = 0 ]; then ok "the crashed executor's pooled sandbox was swept"; else notok "swept after the crash" "$(containers)"; fi
if grep -q "worker 0: pool hits" "$TMP/executor.log" && [ "$(grep -c 'pool: ' "$TMP/executor.log")" = 0 ]; then
	ok "no pool failures logged"
else
	notok "no pool failures logged" "$(grep 'pool: ' "$TMP/executor.log" | tail -n3)"
fi
