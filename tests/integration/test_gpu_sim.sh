#!/usr/bin/env bash
# GPUs end to end on a machine without any, against real PostgreSQL, Redis
# and runsc (executor/sandbox/gpu.h):
#
#   1. an executor declaring a real GPU refuses to start, naming runsc's
#      missing GPU proxy (--nvproxy), and never registers;
#   2. with a simulated inventory of 2 devices (executor.gpu_simulated, a
#      test setting): a job asking for 1 is placed and gets exactly one
#      device id, seen inside the sandbox as NVIDIA_VISIBLE_DEVICES (the
#      program prints its environment) and in its audit records; a job
#      without GPUs sees no such variable;
#   3. three concurrent 1-GPU jobs of a tenant whose quota is 2 run at most
#      two at a time (started/finished times from PostgreSQL), and the
#      tenant's job without GPUs queued behind them does not wait for them;
#   4. a tenant with quota 1 runs its two 1-GPU jobs one after the other
#      although the node has two free: the quota, not the node, decides;
#   5. 3 GPUs are refused at submit time with 422: over the tenant's quota,
#      and (for a tenant allowed 4) over the largest node;
#   6. GPU seconds appear in usage (GET /v1/usage, `gavel usage`).
#
# The device query inside a sandbox on a real GPU is test_gpu_real.sh
# (skipped where there is no GPU or no runsc --nvproxy). Needs root. TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..17"
. tests/lib/tap.sh
say() { echo "# $*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3; do command -v $c >/dev/null || bail "$c missing"; done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup gpu-sim

exec_env() { # node gpus simulated: the environment of one executor
	echo GAVEL_EXECUTOR_NODE_NAME="$1" GAVEL_EXECUTOR_MAX_PARALLEL=3 GAVEL_EXECUTOR_BURST_SLOTS=1 \
		GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=500ms GAVEL_EXECUTOR_RUNSC_ROOT="$RUNSC_ROOT" \
		GAVEL_EXECUTOR_WORK_ROOT="$WORK_ROOT" GAVEL_EXECUTOR_CGROUP_PARENT="$CG_PARENT" \
		GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" \
		GAVEL_EXECUTOR_GPUS="$2" GAVEL_EXECUTOR_GPU_SIMULATED="$3"
}
export GAVEL_LOG_LEVEL=info

# ---- 1. a real GPU declaration without runsc's GPU proxy ----
if runsc flags 2>/dev/null | grep -qE '^ +--?nvproxy( |$)'; then
	ok "# SKIP this runsc has --nvproxy: the refusal cannot be shown here"
	ok "# SKIP as above"
else
	# shellcheck disable=SC2046
	"${STACK_AS_EXECUTOR[@]}" env $(exec_env "real-$TAG" 0 false) timeout 60 "$BUILD/gavel-executor" >"$TMP/real.log" 2>&1 </dev/null
	st=$?
	check "an executor declaring GPU 0 without runsc --nvproxy exits with an error (status $st)" \
		test "$st" -ne 0 -a "$st" -ne 124
	if grep -q -- '--nvproxy' "$TMP/real.log" && grep -qi 'refusing to start' "$TMP/real.log" &&
		[ "$(rc SISMEMBER gavel:executors "real-$TAG")" = 0 ]; then
		ok "its message names the missing runsc feature (--nvproxy); it never registered"
	else
		notok "its message names the missing runsc feature (--nvproxy); it never registered"
		sed 's/^/# /' "$TMP/real.log" | tail -n 5
	fi
fi

# ---- the stack: scheduler, one simulated 2-GPU node, frontend ----
mk_tenant() { # name max_gpus -> "id key"
	"$BUILD/gavel" tenant create "$1" >"$TMP/t.$1" 2>>"$TMP/cli.log" || bail "tenant create: $(cat "$TMP/cli.log")"
	"$BUILD/gavel" tenant update "$1" --quota max_gpus="$2" --quota max_running=8 --quota requests_per_second=1000 \
		--quota burst=1000 >/dev/null 2>>"$TMP/cli.log" || bail "tenant update: $(cat "$TMP/cli.log")"
	echo "$(cut -f1 "$TMP/t.$1") $("$BUILD/gavel" key create --tenant "$1" 2>>"$TMP/cli.log")"
}
read -r TG KG < <(mk_tenant "${TAG}_g" 2)
read -r TQ KQ < <(mk_tenant "${TAG}_q" 1)
read -r TW KW < <(mk_tenant "${TAG}_w" 4)
[ -n "$KG" ] && [ -n "$KQ" ] && [ -n "$KW" ] || bail "tenants: $(cat "$TMP/cli.log")"

GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms GAVEL_SCHEDULER_NODE_HEARTBEAT_TIMEOUT=10s \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
NODE=sim-$TAG
# shellcheck disable=SC2046
"${STACK_AS_EXECUTOR[@]}" env $(exec_env "$NODE" 0,1 true) setsid "$BUILD/gavel-executor" >>"$TMP/executor.log" 2>&1 </dev/null &
PID_EXEC=$!
PIDS+=("$PID_EXEC")
GAVEL_FRONTEND_THREADS=1 GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend
API=$B
for i in $(seq 600); do
	kill -0 "$PID_EXEC" 2>/dev/null || { tail -n 20 "$TMP/executor.log" | sed 's/^/# /'; bail "the executor exited"; }
	[ "$(rc SISMEMBER gavel:executors "$NODE")" = 1 ] && break
	[ "$i" = 600 ] && bail "the executor did not register"
	sleep 0.2
done
if [ "$(rc HGET "gavel:exec:$NODE" gpus)" = 2 ] && grep -q 'SIMULATED GPU inventory' "$TMP/executor.log"; then
	ok "the simulated node registers 2 GPUs and says loudly that they are simulated"
else
	notok "the simulated node registers 2 GPUs and says loudly that they are simulated"
fi

# post KEY GPUS SLEEP_S -> submission id (empty on failure; the code in $TMP/code)
post() {
	local body
	# limits: a program idle for its whole time limit is TLE; the sleep
	# that holds the GPUs stays under it.
	body=$(python3 -c 'import json,sys; print(json.dumps({"language": "python3", "gpus": int(sys.argv[1]),
		"limits": {"time_ms": 8000, "wall_ms": 20000},
		"source": "import os, time\nfor k in sorted(os.environ): print(k + \"=\" + os.environ[k])\ntime.sleep(%s)\n" % sys.argv[2]}))' "$2" "$3")
	curl -s -o "$TMP/resp" -w '%{http_code}' -X POST "$API/v1/submissions" -H "X-Auth-Token: $1" \
		-H 'Content-Type: application/json' -d "$body" >"$TMP/code"
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("id") or "")' "$TMP/resp" 2>/dev/null
}
done_all() { # ids...
	local ids
	ids=$(printf "'%s'," "$@")
	[ "$(sql -c "SELECT count(*) FROM submissions WHERE id IN (${ids%,}) AND status = 'done'")" = $# ]
}
wait_done() { # seconds ids...
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 5; i++)); do
		done_all "$@" && return 0
		sleep 0.2
	done
	return 1
}
field() { # id SQL-expression over submissions s
	sql -c "SELECT $2 FROM submissions s WHERE id = '$1'"
}

# ---- 2. one GPU of two ----
S1=$(post "$KG" 1 0)
S0=$(post "$KG" 0 0)
[ -n "$S1" ] && [ -n "$S0" ] || bail "POST failed: $(cat "$TMP/resp")"
wait_done 120 "$S1" "$S0" || bail "the first jobs did not finish: $(tail -n 5 "$TMP/executor.log")"
check "a job asking for 1 GPU of 2 runs (AC)" test "$(field "$S1" verdict)" = AC
OUT1=$(field "$S1" "result->>'stdout'")
ENV_GPU=$(printf '%s\n' "$OUT1" | sed -n 's/^NVIDIA_VISIBLE_DEVICES=//p')
check "inside, NVIDIA_VISIBLE_DEVICES is exactly one id of the node's ('$ENV_GPU')" \
	bash -c "[[ '$ENV_GPU' =~ ^[01]$ ]]"
check "the rest of its environment is PATH, LANG and HOME only" \
	test "$(printf '%s\n' "$OUT1" | cut -d= -f1 | grep -E '^[A-Z_]+$' | sort | tr '\n' ' ')" = \
	"HOME LANG NVIDIA_VISIBLE_DEVICES PATH "
check "a job without GPUs sees no NVIDIA_VISIBLE_DEVICES" \
	bash -c "! grep -q NVIDIA <<<\"\$1\"" _ "$(field "$S0" "result->>'stdout'")"
AUD=$(sql -c "SELECT string_agg(action || '=' || (details->'gpus')::text, ' ' ORDER BY seq) FROM audit_log
	WHERE tenant_id = '$TG' AND object = '$S1' AND action LIKE 'sandbox.%'")
check "its audit records carry the same id ($AUD)" \
	test "$AUD" = "sandbox.started=[$ENV_GPU] sandbox.finished=[$ENV_GPU]"

# ---- 3. quota 2: three concurrent 1-GPU jobs, then one without GPUs ----
G=()
# 6 s each: the job without GPUs must be posted, scheduled and started
# before the first of them ends (with 3 s a loaded CI machine once missed).
for _ in 1 2 3; do G+=("$(post "$KG" 1 6)"); done
PLAIN=$(post "$KG" 0 0)
wait_done 180 "${G[@]}" "$PLAIN" || bail "the quota jobs did not finish: $(tail -n 5 "$TMP/scheduler.log")"
ids=$(printf "'%s'," "${G[@]}")
# The most GPU jobs running at one instant: at each start, those started
# and not yet finished.
PEAK=$(sql -c "SELECT max((SELECT count(*) FROM submissions b WHERE b.id IN (${ids%,})
	AND b.started_at <= a.started_at AND b.finished_at > a.started_at)) FROM submissions a WHERE a.id IN (${ids%,})")
check "three 1-GPU jobs of a tenant with max_gpus 2 run at most two at a time (peak $PEAK)" test "$PEAK" = 2
check "all three ran (AC)" test "$(sql -c "SELECT count(*) FROM submissions WHERE id IN (${ids%,}) AND verdict = 'AC'")" = 3
LAST_GPU_START=$(sql -c "SELECT max(started_at) FROM submissions WHERE id IN (${ids%,})")
say "GPU jobs created, started, finished: $(sql -c "SELECT string_agg(to_char(created_at, 'MI:SS.MS') || ' ' || to_char(started_at, 'MI:SS.MS') || ' ' || to_char(finished_at, 'MI:SS.MS'), ', ' ORDER BY created_at) FROM submissions WHERE id IN (${ids%,})"); the job without: $(sql -c "SELECT to_char(created_at, 'MI:SS.MS') || ' ' || to_char(started_at, 'MI:SS.MS') FROM submissions WHERE id = '$PLAIN'")"
check "the tenant's job without GPUs, queued after them, started before the third GPU job" \
	test "$(sql -c "SELECT started_at < '$LAST_GPU_START' FROM submissions WHERE id = '$PLAIN'")" = t

# ---- 4. quota 1 on a node with 2 free ----
Q=("$(post "$KQ" 1 2)" "$(post "$KQ" 1 2)")
wait_done 120 "${Q[@]}" || bail "the quota-1 jobs did not finish"
check "a tenant with max_gpus 1 runs its two 1-GPU jobs one after the other" \
	test "$(sql -c "SELECT (SELECT max(started_at) FROM submissions WHERE id IN ('${Q[0]}','${Q[1]}'))
		>= (SELECT min(finished_at) FROM submissions WHERE id IN ('${Q[0]}','${Q[1]}'))")" = t

# ---- 5. refused at submit time ----
X=$(post "$KG" 3 0)
check "3 GPUs over a quota of 2: 422 at submit ($(cat "$TMP/code"))" test "$(cat "$TMP/code")" = 422 -a -z "$X"
grep -q max_gpus "$TMP/resp" || say "response: $(cat "$TMP/resp")"
X=$(post "$KW" 3 0)
check "3 GPUs within a quota of 4 but over the largest node (2): 422 at submit ($(cat "$TMP/code"))" \
	test "$(cat "$TMP/code")" = 422 -a -z "$X"
grep -q 'largest executor node' "$TMP/resp" || say "response: $(cat "$TMP/resp")"
check "nothing was stored for the refused jobs" \
	test "$(sql -c "SELECT count(*) FROM submissions WHERE tenant_id IN ('$TG', '$TW') AND (request->>'gpus')::int = 3")" = 0

# ---- 6. GPU seconds in usage ----
GPU_MS=$(curl -s "$API/v1/usage" -H "X-Auth-Token: $KG" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["gpu_ms"])' 2>/dev/null)
# Four 1-GPU jobs, three of them sleeping 3 s: at least 9 GPU seconds.
check "GET /v1/usage counts the tenant's GPU time (${GPU_MS:-none} ms >= 9000)" test "${GPU_MS:-0}" -ge 9000
CLI_S=$("$BUILD/gavel" usage --tenant "${TAG}_g" --json 2>/dev/null |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(int(sum(r["gpu_seconds"] for r in (d if isinstance(d, list) else d.get("rows", [d])))))' 2>/dev/null)
check "gavel usage shows the same GPU seconds (${CLI_S:-none} s)" test "${CLI_S:-0}" -ge 9

exit 0
