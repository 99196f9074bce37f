#!/usr/bin/env bash
# A device query inside a sandbox on a real GPU (executor/sandbox/gpu.h): an
# executor declaring GPU 0 under runsc --nvproxy runs a 1-GPU job whose
# program lists the GPUs it can see with nvidia-smi; it must see exactly
# one, the one in NVIDIA_VISIBLE_DEVICES and in its audit record.
#
# Skipped, saying why, where there is no NVIDIA GPU (/dev/nvidia0 and
# /dev/nvidiactl), no nvidia-smi, or a runsc without its GPU proxy (Debian's
# runsc 0.0~20221219 has none: `runsc flags` lists no -nvproxy). Needs
# root. TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

skip() { echo "1..1"; echo "ok 1 # SKIP $*"; exit 0; }
bail() { echo "Bail out! $*"; exit 1; }

[ -c /dev/nvidia0 ] && [ -c /dev/nvidiactl ] || skip "no NVIDIA GPU on this machine (/dev/nvidia0, /dev/nvidiactl)"
command -v nvidia-smi >/dev/null || skip "no nvidia-smi on this machine"
command -v runsc >/dev/null || skip "no runsc"
runsc flags 2>/dev/null | grep -qE '^ +--?nvproxy( |$)' ||
	skip "the installed runsc has no GPU proxy (runsc flags lists no -nvproxy)"
[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done

echo "1..3"
n=0
check() {
	local d=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else echo "not ok $n - $d"; fi
}

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup gpu-real
TID=$(sql -c "INSERT INTO tenants (name) VALUES ('gpu-real-$$') RETURNING id" | head -n1)
[ -n "$TID" ] || bail "no tenant"
rc HSET "gavel:tenantcfg:$TID" weight 1 max_running 2 max_gpus 1 >/dev/null

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
NODE=gpu-$TAG
GAVEL_EXECUTOR_NODE_NAME=$NODE GAVEL_EXECUTOR_MAX_PARALLEL=1 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=500ms \
	GAVEL_EXECUTOR_RUNSC_ROOT=$RUNSC_ROOT GAVEL_EXECUTOR_WORK_ROOT=$WORK_ROOT \
	GAVEL_EXECUTOR_CGROUP_PARENT=$CG_PARENT GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" \
	GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" GAVEL_EXECUTOR_GPUS=0 \
	"${STACK_AS_EXECUTOR[@]}" setsid "$BUILD/gavel-executor" >>"$TMP/executor.log" 2>&1 </dev/null &
PID_EXEC=$!
PIDS+=("$PID_EXEC")
for i in $(seq 600); do
	kill -0 "$PID_EXEC" 2>/dev/null || bail "the executor exited: $(tail -n 3 "$TMP/executor.log")"
	[ "$(rc SISMEMBER gavel:executors "$NODE")" = 1 ] && break
	[ "$i" = 600 ] && bail "the executor did not register"
	sleep 0.2
done

SID=gpureal$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
REQ=$(python3 -c 'import json; print(json.dumps({"language": "python3", "gpus": 1, "return_output": True,
	"files": [{"name": "main.py", "content": "import os, subprocess\nprint(\"VISIBLE=\" + os.environ.get(\"NVIDIA_VISIBLE_DEVICES\", \"\"))\nprint(subprocess.run([\"nvidia-smi\", \"-L\"], capture_output=True, text=True).stdout)\n"}]}))')
sql -c "INSERT INTO submissions (id, tenant_id, language, source, request)
	VALUES ('$SID', '$TID', 'python3', '', \$j\$$REQ\$j\$::jsonb)" >/dev/null || bail "insert failed"
rc RPUSH "gavel:tq:$TID" "$SID" >/dev/null
rc SADD gavel:backlog "$TID" >/dev/null
for _ in $(seq 600); do
	[ "$(sql -c "SELECT status FROM submissions WHERE id = '$SID'")" = done ] && break
	sleep 0.2
done
OUT=$(sql -c "SELECT result->>'stdout' FROM submissions WHERE id = '$SID'")
check "the GPU job ran (AC)" test "$(sql -c "SELECT verdict FROM submissions WHERE id = '$SID'")" = AC
check "nvidia-smi inside sees exactly one GPU" test "$(grep -c '^GPU ' <<<"$OUT")" = 1
AUD=$(sql -c "SELECT details->'gpus' FROM audit_log WHERE object = '$SID' AND action = 'sandbox.finished'")
check "NVIDIA_VISIBLE_DEVICES and the audit record name device 0" \
	test "$(grep -c '^VISIBLE=0$' <<<"$OUT")/$AUD" = "1/[0]"
exit 0
